//===- compiler/Pipeline.h - the compiler's passes, in order -----------------------===//
//
// canonicalize -> fuse -> plan + codegen -> (compile, in compiler/Jit.h). Everything up to
// codegen is pure computation on the host: no GPU, no NVRTC.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Fusion.h"
#include "compiler/Plan.h"
#include "ir/Graph.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace sinter {

struct PipelineOptions {
  Precision precision = Precision::Auto;
  std::string arch = "sm_90a";
  /// Log each pass (with its time) and the IR after each pass that changed it; also on when
  /// the environment sets SINTER_DEBUG=1.
  bool debug = false;
  /// Finish every conv's group norm in the conv_mma kernel wherever it can, also where the
  /// planner would not for speed (small (n, group)s): for tests of that kernel on small
  /// graphs.
  bool normInKernelWherePossible = false;
};

/// What one pass did.
struct PassRecord {
  std::string name;
  double milliseconds = 0;
  bool changed = false;
};

struct PipelineResult {
  Graph graph;         ///< after canonicalization
  FusionResult fusion; ///< groups over `graph`
  PlanResult plan;     ///< kernels (with sources), buffers and steps
  std::vector<PassRecord> passes;
};

/// Runs the passes on a verified graph.
llvm::Expected<PipelineResult> runPipeline(const Graph &graph, const PipelineOptions &options);

} // namespace sinter
