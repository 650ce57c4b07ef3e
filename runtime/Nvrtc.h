//===- runtime/Nvrtc.h - compiling generated kernels to cubins with NVRTC ----------===//
//
// A generated kernel (compiler/KernelSource.h) is compiled straight to a cubin for one
// arch; no GPU is needed. Every embedded template (templates/Templates.h) is handed to NVRTC
// as a named header, so `#include "conv_direct.cuh"` resolves with no file on disk. ptxas
// runs verbose and its resource report (registers, shared memory, spills, stack frame) is
// parsed into the result, for `sinter-cache show` and `sinterc explain`. compileAll compiles
// the kernels of a graph on several threads, going through the kernel cache.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <vector>

namespace sinter {

class KernelCache;

struct CompileOptions {
  std::string arch = "sm_90a";
  std::vector<std::string> extraFlags; ///< appended to sinter's own NVRTC options
  /// The code generator's version (compiler/Codegen.h). Not passed to NVRTC; it enters the
  /// cache key so that a changed generator never reuses an old cubin.
  std::string codegenVersion;
};

/// What ptxas reported for the kernel (-1 where the report said nothing).
struct ResourceUsage {
  int registers = -1;
  int sharedBytes = -1; ///< static shared memory ("smem")
  int spillStoreBytes = -1;
  int spillLoadBytes = -1;
  int stackFrameBytes = -1; ///< local memory per thread
};

struct CompiledKernel {
  std::string name; ///< the kernel symbol
  std::string templateName;
  std::string arch;
  LaunchConfig launch;
  std::string cubin;  ///< the binary image handed to cuModuleLoadData
  std::string source; ///< the CUDA source it came from (empty for bundles without it)
  std::string log;    ///< NVRTC's program log (ptxas report included)
  ResourceUsage resources;
  double compileSeconds = 0; ///< NVRTC time when it was compiled (also for a cache hit)
  std::string cacheKey;      ///< empty when compiled without a cache key
  bool cacheHit = false;
};

/// NVRTC's version, "13.0".
std::string nvrtcVersion();

/// The exact option list sinter passes to NVRTC for `o` (also part of the cache key).
std::vector<std::string> nvrtcOptions(const CompileOptions &o);

/// Parses ptxas' verbose report out of an NVRTC log, for the entry `kernelName`.
ResourceUsage parseResourceReport(llvm::StringRef log, llvm::StringRef kernelName);

/// Compiles one kernel. A compile error gives an error whose first line is
/// `nvrtc: compiling '<name>' for <arch> failed:` followed by the program log.
llvm::Expected<CompiledKernel> compileWithNvrtc(const KernelSource &k, const CompileOptions &o);

/// How many kernels this process has compiled with NVRTC so far (tests use it to prove that
/// a path, e.g. Executable::load of a bundle, never compiles).
uint64_t nvrtcCompileCount();

/// One line of progress: a kernel finished (from the cache or NVRTC).
struct CompileProgress {
  std::string kernelName;
  bool cacheHit = false;
  double seconds = 0; ///< NVRTC seconds (0 for a hit)
  size_t done = 0, total = 0;
};
using ProgressFn = std::function<void(const CompileProgress &)>;

/// Labels stored with cache entries (for `sinter-cache ls`); they never enter the key.
struct CompileLabels {
  std::string graphName;
  std::vector<std::string> groups; ///< fusion group per kernel, parallel to the kernels (or empty)
};

/// Compiles `kernels` on up to `threads` threads (0: hardware concurrency), looking each up
/// in `cache` first (nullptr: no cache) and storing what was compiled. Results come back in
/// the order of `kernels`. The first failure is returned (the other kernels still finish).
/// `progress` is called under a lock, once per kernel.
llvm::Expected<std::vector<CompiledKernel>>
compileAll(llvm::ArrayRef<KernelSource> kernels, const CompileOptions &o, KernelCache *cache,
           unsigned threads, const CompileLabels &labels = {}, const ProgressFn &progress = {});

} // namespace sinter
