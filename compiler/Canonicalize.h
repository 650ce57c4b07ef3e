//===- compiler/Canonicalize.h - normalising a graph before fusion -----------------===//
#pragma once

#include "ir/Graph.h"

namespace sinter {

/// Rewrites `graph` (verified) into the form fusion expects, keeping its meaning and every
/// argument and result name:
///  - dropout is the identity at inference: its uses read its operand instead (a returned
///    dropout stays, as a view);
///  - formulas written op by op become the catalog op that computes them (gelu, silu,
///    mish, hardswish, softplus with beta, rsqrt, logsumexp; x * 1 and x + 0 drop out),
///    as compiler/Recompose.h lists;
///  - reshapes and flattens move below the elementwise ops and reductions that follow them
///    where those can work on the unviewed tensor (compiler/SinkViews.h);
///  - chains of scalar add/sub (or mul/div) on one value fold into one op, e.g.
///    mul(mul(%x, 2), 3) -> mul(%x, 6), when the inner result has no other use;
///  - ops whose results are never used (and are not returned) are removed.
/// Returns true when something changed.
bool canonicalize(Graph &graph);

} // namespace sinter
