//===- tests/kernels_tc/Nvrtc.h - compiling a generated source in a test -----------===//
//
// The tensor-core tests compile every emitted source with NVRTC, the embedded templates as
// its only headers, as the runtime does; a warning counts as a failure.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "templates/Templates.h"

#include <nvrtc.h>

#include <string>
#include <vector>

namespace sinter::tc_test {

/// Compiles `source` for `arch` with the embedded templates as headers; returns the log on
/// failure or when it is not empty (warnings), an empty string on success.
inline std::string nvrtcCompile(const std::string &source, const std::string &arch) {
  std::vector<std::string> names, texts;
  for (const TemplateFile &t : templateFiles()) {
    names.push_back(t.name.str());
    texts.push_back(t.text.str());
  }
  std::vector<const char *> nameP, textP;
  for (size_t i = 0; i < names.size(); ++i) {
    nameP.push_back(names[i].c_str());
    textP.push_back(texts[i].c_str());
  }
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "kernel.cu", int(names.size()), textP.data(),
                         nameP.data()) != NVRTC_SUCCESS)
    return "nvrtcCreateProgram failed";
  std::string archOpt = "--gpu-architecture=" + arch;
  const char *opts[] = {archOpt.c_str(), "-std=c++17", "-default-device"};
  nvrtcResult r = nvrtcCompileProgram(prog, 3, opts);
  std::string log;
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  log.resize(logSize);
  nvrtcGetProgramLog(prog, log.data());
  size_t cubinSize = 0;
  if (r == NVRTC_SUCCESS)
    nvrtcGetCUBINSize(prog, &cubinSize);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS)
    return "compile failed: " + log;
  if (cubinSize == 0)
    return "no cubin";
  // A warning is a finding too (the log holds at least its terminating zero).
  if (log.find_first_not_of(std::string(" \n\0", 3)) != std::string::npos)
    return "compiled with a log: " + log;
  return {};
}

} // namespace sinter::tc_test
