//===- compiler/Recompose.h - decomposed activations re-formed into catalog ops ------===//
#pragma once

#include "ir/Graph.h"

namespace sinter {

/// Rewrites `graph` (verified) so that formulas spelled out op by op become the catalog op
/// that computes them, as exporters and hand-written graphs spell them:
///  - gelu from 0.5 * x * (1 + erf(x / sqrt(2))) and from its tanh approximation
///    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), factors in any order;
///  - silu from x * sigmoid(x), mish from x * tanh(softplus(x)), hardswish from
///    x * hardsigmoid(x) and from x * clamp(x + 3, 0, 6) / 6;
///  - softplus with beta from softplus(x * beta) / beta, rsqrt from 1 / sqrt(x);
///  - logsumexp from log(sum(exp(x - max(x)))) + max(x) (max kept or squeezed) and from
///    log(sum(exp(x)));
///  - x * 1, x / 1, x + 0 and x - 0 drop out.
/// Only intermediate values used once (and not returned) are absorbed; the re-formed op
/// takes the place, result name and origins of the formula's last op. Returns true when
/// something changed; ops left unused are for the caller to remove.
bool recompose(Graph &graph);

} // namespace sinter
