//===- compiler/Explain.h - the fusion plan as text and as Graphviz ------------------===//
//
// What `sinterc explain` prints, as library code so that tests can call it. renderExplain
// turns a pipeline result into a readable report: every fusion group with its pattern and
// ops, then a table of kernels in launch order (template, tile configuration, math mode,
// bytes moved, FLOPs and the roofline floor on the target from compiler/Roofline.h), the
// baked shapes of each kernel, and totals (an op imported from a model names its nodes); with `why` also every pattern that was tried at
// an anchor and did not apply, with the reason. renderDot writes the canonicalized graph as
// a Graphviz digraph whose clusters are the fusion groups.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Pipeline.h"

#include <string>

namespace sinter {

struct ExplainOptions {
  std::string arch = "sm_90a"; ///< the target whose roofline floor is shown
  std::string precision = "auto";
  bool why = false; ///< list why each convolution runs on its engine, and the rejected patterns
};

/// The report `sinterc explain` prints.
std::string renderExplain(const PipelineResult &result, const ExplainOptions &options);

/// The canonicalized graph as a Graphviz digraph, one cluster per fusion group.
std::string renderDot(const PipelineResult &result);

/// A short summary of what `op` computes on which shapes, e.g.
/// "linear f32[1024,8192] x f32[8192,8192] -> f32[1024,8192]".
std::string opShapeSummary(const Graph &graph, const Op &op);

} // namespace sinter
