//===- runtime/Bundle.h - compiled graphs on disk (sinterc compile) ----------------===//
//
// A bundle is a directory with manifest.json and one `<kernel>.cubin` per kernel (and the
// `.cu` with keepSource). The manifest holds the whole ExecutablePlan (graph signature,
// buffers, kernels in launch order with launch configurations, steps), the arch, precision,
// NVRTC and sinter versions, cache keys and each cubin's SHA-256, so that
// Executable::load runs it without NVRTC. Reading is strict: a bundle for another arch, of
// another format or sinter version, with a missing or corrupt cubin, or with a malformed
// manifest is refused with a message naming the directory or file.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "runtime/Nvrtc.h"
#include "runtime/Plan.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace sinter {

/// The manifest layout version this sinter writes and reads.
constexpr int kBundleFormatVersion = 1;

/// The sinter version recorded in (and required of) bundles.
llvm::StringRef bundleSinterVersion();

/// Writes `plan` and its cubins (parallel to plan.kernels) into `dir` (created if needed).
/// With keepSource, each kernel's CUDA source is written beside its cubin.
llvm::Error writeBundle(llvm::StringRef dir, const ExecutablePlan &plan,
                        llvm::ArrayRef<CompiledKernel> cubins, bool keepSource);

struct Bundle {
  ExecutablePlan plan;
  std::vector<CompiledKernel> cubins; ///< parallel to plan.kernels
  std::string nvrtcVersion, sinterVersion;
};

/// Reads a bundle for a GPU of arch `currentArch` (e.g. "sm_90a"), checking everything that
/// Executable::load relies on. Needs no GPU.
llvm::Expected<Bundle> readBundle(llvm::StringRef dir, llvm::StringRef currentArch);

} // namespace sinter
