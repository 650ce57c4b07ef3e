//===- compiler/Jit.cpp - sinter's entry point --------------------------------------===//
#include "compiler/Jit.h"

#include "compiler/Version.h"
#include "runtime/KernelCache.h"

#include <chrono>

namespace sinter {

std::string resolveArch(const JitOptions &options) {
  if (!options.arch.empty())
    return options.arch;
  if (gpuAvailable())
    if (auto ctx = gpu())
      return ctx->info.arch;
  return "sm_90a";
}

llvm::Expected<CompiledGraph> compileGraph(const Graph &graph, const JitOptions &options) {
  std::string arch = resolveArch(options);
  auto pipeline = runPipeline(
      graph, {options.precision, arch, options.debug, options.normInKernelWherePossible});
  if (!pipeline)
    return pipeline.takeError();

  std::unique_ptr<KernelCache> cache;
  if (options.useCache) {
    auto opened = options.cacheDir.empty() ? KernelCache::openDefault()
                                           : KernelCache::open(options.cacheDir);
    if (!opened)
      return opened.takeError();
    cache = std::move(*opened);
  }

  CompiledGraph out;
  std::vector<KernelSource> sources;
  CompileLabels labels;
  labels.graphName = graph.name;
  for (const PlannedKernel &k : pipeline->plan.kernels) {
    sources.push_back(k.source);
    labels.groups.push_back(pipeline->fusion.groups[k.group].pattern);
  }
  CompileOptions copts;
  copts.arch = arch;
  copts.codegenVersion = kCodegenVersion.str();
  auto start = std::chrono::steady_clock::now();
  auto compiled = compileAll(sources, copts, cache.get(), options.threads, labels,
                             options.progress);
  if (!compiled)
    return compiled.takeError();
  out.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.kernels = std::move(*compiled);
  for (size_t i = 0; i < out.kernels.size(); ++i)
    pipeline->plan.plan.kernels[i].cacheKey = out.kernels[i].cacheKey;
  out.pipeline = std::move(*pipeline);
  return out;
}

llvm::Expected<std::unique_ptr<Executable>> jit(const Graph &graph, const JitOptions &options) {
  auto compiled = compileGraph(graph, options);
  if (!compiled)
    return compiled.takeError();
  return Executable::create(compiled->pipeline.plan.plan, std::move(compiled->kernels));
}

} // namespace sinter
