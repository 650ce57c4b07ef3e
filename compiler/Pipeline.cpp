//===- compiler/Pipeline.cpp - the compiler's passes, in order ---------------------===//
//
// The pipeline reads as the list of passes it runs. Each pass is timed; with debug logging
// on, the IR is dumped after a pass only when the pass changed it, and in debug builds the
// verifier re-checks the graph between passes.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Pipeline.h"

#include "compiler/Canonicalize.h"
#include "ir/Error.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

namespace sinter {
namespace {

bool debugFromEnv() {
  const char *v = std::getenv("SINTER_DEBUG");
  return v && *v && std::string(v) != "0";
}

/// Times `body` as pass `name`; `body` returns whether it changed anything.
template <class Fn> llvm::Error runPass(PipelineResult &r, bool debug, const char *name, Fn body) {
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<bool> changed = body();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count();
  if (!changed)
    return changed.takeError();
  r.passes.push_back({name, ms, *changed});
  if (debug)
    spdlog::info("pass {:<13} {:8.3f} ms{}", name, ms, *changed ? " (changed)" : "");
  return llvm::Error::success();
}

std::string describeGroups(const Graph &g, const FusionResult &f) {
  std::string s;
  for (size_t i = 0; i < f.groups.size(); ++i) {
    s += "  group " + std::to_string(i) + " [" + f.groups[i].pattern + "]:";
    for (int op : f.groups[i].ops())
      s += " %" + g.values[g.ops[op].result].name + "=" + g.ops[op].name().str();
    s += "\n";
  }
  return s;
}

} // namespace

llvm::Expected<PipelineResult> runPipeline(const Graph &input, const PipelineOptions &options) {
  bool debug = options.debug || debugFromEnv();
  PipelineResult r;
  r.graph = input;

  if (auto err = runPass(r, debug, "canonicalize", [&]() -> llvm::Expected<bool> {
        bool changed = canonicalize(r.graph);
        if (debug && changed)
          spdlog::info("after canonicalize:\n{}", printGraph(r.graph));
#ifndef NDEBUG
        if (auto err = verifyGraph(r.graph))
          return withContext(std::move(err), "canonicalize broke the graph");
#endif
        return changed;
      }))
    return err;

  if (auto err = runPass(r, debug, "fuse", [&]() -> llvm::Expected<bool> {
        PlanOptions planOptions{options.precision, options.arch, options.normInKernelWherePossible};
        FuseOptions fuseOptions;
        fuseOptions.anchorRunsTail = [planOptions](const Graph &g, const Op &anchor,
                                                   const ConvTailOps &tail, std::string &why) {
          return convRunsTail(g, anchor, tail, planOptions, why);
        };
        r.fusion = fuse(r.graph, fuseOptions);
        if (debug)
          spdlog::info("fusion groups:\n{}", describeGroups(r.graph, r.fusion));
        return true;
      }))
    return err;

  if (auto err = runPass(r, debug, "plan+codegen", [&]() -> llvm::Expected<bool> {
        auto plan = planGraph(r.graph, r.fusion,
                              {options.precision, options.arch, options.normInKernelWherePossible});
        if (!plan)
          return plan.takeError();
        r.plan = std::move(*plan);
        if (debug)
          for (const PlannedKernel &k : r.plan.kernels)
            spdlog::info("kernel {} ({}, {}): {}", k.source.name, k.source.templateName,
                         k.source.tileConfig, k.role);
        return true;
      }))
    return err;

  return r;
}

} // namespace sinter
