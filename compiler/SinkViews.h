//===- compiler/SinkViews.h - views moved below the ops that follow them -----------===//
#pragma once

#include "ir/Graph.h"

#include <string>

namespace sinter {

/// Rewrites `graph` (verified) so that reshapes and flattens stand between fewer ops. Fusion
/// groups stop at a view (it stands alone), so `softmax -> reshape -> mul` ran the mul as a
/// kernel of its own, reading and writing the whole tensor once more. A view of `a` (a value
/// an op computes for the view alone) used by one op moves below that op when the op can work
/// on `a` itself:
///  - an elementwise op whose result has the view's shape, when each of its other tensor
///    operands, viewed the same way, broadcasts over `a` (per block of dims whose sizes the
///    two shapes share: the operand is constant over the block or spans all of it); such an
///    operand is reshaped to its shape in `a`'s terms (a view: no copy), a full-size one only
///    where it is in memory anyway (an argument, or used elsewhere), so that its view never
///    sinks in turn;
///  - a reduction (sum, mean, max, min, logsumexp) whose reduced dims are whole blocks: it
///    reduces `a`'s dims of those blocks instead;
///  - a softmax or log_softmax along a dim that is a block of its own in both shapes: it runs
///    along that dim of `a` (x.view(N, C, H * W).softmax(1) is a softmax over x's channels).
/// The op keeps its attributes but gets a new result (named after the old one); a reshape
/// placed after it takes the old result's name, type and uses, so results and their names
/// are unchanged. Repeated until nothing moves, so a view sinks through a chain. The old
/// view is removed, its value left without a definition for the caller to drop (canonicalize
/// does). Returns true when something changed.
bool sinkViews(Graph &graph);

/// Why the view (reshape or flatten) defined by op `viewOp` of `graph` does not move below
/// the op after it, in a phrase such as "%t f32[1,2] varies within a block of dims that the
/// view regroups", for `sinterc explain --why`; "it could move" where sinkViews would move it.
std::string whyViewStays(const Graph &graph, int viewOp);

} // namespace sinter
