//===- compiler/Plan.h - from fusion groups to kernels, buffers and launches -------===//
//
// The plan pass picks, for every fusion group, the template(s) that compute it and their
// configuration for the baked shapes, generates their sources through the emitters of
// compiler/kernels/, and lays out memory: one buffer per graph argument and result, one
// workspace buffer per value that crosses a group boundary, plus the statistics and scratch
// buffers the kernels need. The result is an ExecutablePlan (runtime/Plan.h) with its
// kernel sources, ready for NVRTC.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Fusion.h"
#include "compiler/KernelSource.h"
#include "ir/Graph.h"
#include "runtime/Plan.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace sinter {

struct PlanOptions {
  Precision precision = Precision::Auto;
  std::string arch = "sm_90a";
  /// Finish every conv's group norm in the conv_mma kernel wherever it can, also where the
  /// planner would not for speed (small (n, group)s): for tests of that kernel on small
  /// graphs.
  bool normInKernelWherePossible = false;
};

/// One kernel of the plan with what `sinterc explain` tells about it.
struct PlannedKernel {
  KernelSource source;
  int group = -1;       ///< index into FusionResult::groups
  std::string role;     ///< e.g. "anchor + statistics", "normalise"
  MathMode math = MathMode::Ffma;
};

/// Why the planner put a group's anchor on the engine it did (`explain --why`).
struct EngineChoice {
  int group = -1;
  std::string why;
};

struct PlanResult {
  ExecutablePlan plan;                 ///< buffers, kernels in launch order, steps
  std::vector<PlannedKernel> kernels;  ///< parallel to plan.kernels
  std::vector<EngineChoice> engines;   ///< one per convolution anchor group
};

/// Plans every group of `fusion` (from fuse() on `graph`). Fails with a one-line error
/// naming the op when a group cannot be served (e.g. a dtype other than f32).
llvm::Expected<PlanResult> planGraph(const Graph &graph, const FusionResult &fusion,
                                     const PlanOptions &options);

/// Whether the planner's kernel for conv anchor `anchor` (a conv or conv_transpose) runs,
/// after its epilogue, the `tail` ops itself: a softmax or log_softmax over the channels and
/// then a max_pool or avg_pool whose windows tile its input (either may be null) where the
/// convolution runs on conv_direct in FFMA and the tails fit a thread's registers
/// (ConvChannelSoftmax, ConvPoolTail); or a reduction over the channels where it runs on
/// conv_igemm's wgmma engine with every channel in one tile (ConvChannelReduce). The fuse pass
/// asks this (FuseOptions::anchorRunsTail); `why` says why not.
bool convRunsTail(const Graph &graph, const Op &anchor, const ConvTailOps &tail,
                  const PlanOptions &options, std::string &why);

/// The relative L2 error a plan's results may show against the float64 reference
/// (ARCHITECTURE.md, "Precision"): 1e-5 when every kernel is fp32-accurate (FFMA or
/// 3xTF32), 2e-3 when one multiplies in single TF32.
double referenceTolerance(const PlanResult &plan);

/// "auto", "fp32" or "tf32".
llvm::StringRef precisionName(Precision p);
std::optional<Precision> parsePrecision(llvm::StringRef name);

} // namespace sinter
