//===- compiler/Jit.h - sinter's entry point: graph in, runnable kernels out -------===//
//
// The C++ API in two calls. compileGraph runs the pipeline (compiler/Pipeline.h) and
// compiles every kernel with NVRTC through the on-disk kernel cache; it needs no GPU, so it
// also serves offline compilation. jit does the same and loads the result on the GPU:
//
//   GraphBuilder b("convt3d_relu_gn");  ...  llvm::Expected<Graph> g = b.build();
//   auto exe = sinter::jit(*g, {});          // fused, shape-specialised, cached kernels
//   exe.get()->run(bindings, stream);        // or runHost(tensors)
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Pipeline.h"
#include "runtime/Executable.h"
#include "runtime/Nvrtc.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace sinter {

struct JitOptions {
  /// NVRTC target; empty: the GPU's ("sm_90a" on Hopper), or sm_90a when there is no GPU.
  std::string arch;
  Precision precision = Precision::Auto;
  /// Use the kernel cache (SINTER_CACHE=off turns it off too).
  bool useCache = true;
  /// The cache directory; empty: $SINTER_CACHE_DIR, $XDG_CACHE_HOME/sinter, ~/.cache/sinter.
  std::string cacheDir;
  /// NVRTC threads; 0: one per hardware thread.
  unsigned threads = 0;
  /// Called once per kernel compiled or found in the cache.
  ProgressFn progress;
  /// Log passes and IR (also SINTER_DEBUG=1).
  bool debug = false;
  /// Finish every conv's group norm in the conv_mma kernel wherever it can, also where the
  /// planner would not for speed (small (n, group)s): for tests of that kernel on small
  /// graphs.
  bool normInKernelWherePossible = false;
};

/// A graph compiled down to cubins.
struct CompiledGraph {
  PipelineResult pipeline;             ///< graph, fusion groups, plan with kernel sources
  std::vector<CompiledKernel> kernels; ///< parallel to pipeline.plan.plan.kernels
  double compileSeconds = 0;           ///< wall time of the NVRTC stage (cache hits included)
};

/// The target arch `options` asks for (resolving an empty arch as JitOptions says).
std::string resolveArch(const JitOptions &options);

/// Runs the pipeline on a verified graph and compiles every kernel. No GPU needed.
llvm::Expected<CompiledGraph> compileGraph(const Graph &graph, const JitOptions &options);

/// compileGraph, then loads the kernels on the GPU.
llvm::Expected<std::unique_ptr<Executable>> jit(const Graph &graph, const JitOptions &options);

} // namespace sinter
