//===- tests/kernels_generic/NvrtcCompile.h - NVRTC for the generic kernel tests -----===//
//
// Compiles one generated kernel source with NVRTC, every embedded template (templates/
// Templates.h) offered as an include, the way the pipeline does; returns the log and, for a
// real architecture, the cubin. Used by the CPU test and by generic_device_cases.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace sinter::testing {

struct NvrtcOutput {
  bool ok = false;
  std::string log;
  std::vector<char> cubin;
};

/// Compiles `source` for `arch` (e.g. "sm_90a") with -std=c++17.
NvrtcOutput compileWithNvrtc(const std::string &source, llvm::StringRef programName,
                             llvm::StringRef arch);

} // namespace sinter::testing
