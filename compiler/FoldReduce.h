//===- compiler/FoldReduce.h - sums over a product's features, taken into its weight --===//
#pragma once

#include "ir/Graph.h"

namespace sinter {

/// Rewrites `graph` (verified) so that a sum or mean over the last dim of a linear layer's or
/// a matmul's output, reached through per-feature affine ops only (mul, div, add, sub by
/// numbers or by tensors that vary along that dim alone, neg), becomes a product with one
/// output feature: for y = x W^T + b and the chain y' = a * y + d (a, d per feature),
///   sum_n y'[..., n] = x . (sum_n a_n W[n, :]) + sum_n (a_n b_n + d_n),
/// so the [M, N] product is never formed: the weight's feature sum (a reduction over W) and
/// an [M, 1] product replace it. A matmul by a 2-D B [K, N] sums each row of B instead.
/// Only values used once (and not returned) between the product and the reduction are
/// folded. A transposed convolution without padding (one group) followed by per-channel
/// affine ops and a sum or mean over all its spatial dims folds the same way: every input
/// element meets every tap inside the output, so each output is
///   sum_ci (the input plane's sum) * (sum of the taps of W[ci, co]) + L * bias[co].
/// Only where it pays (unless `always`): the [M, N] product, at about 100
/// TFLOP/s, must outlast the launches of the small kernels that replace it (about 3 us
/// each). The new ops take the reduction's place and its result's uses; the old ones are
/// left unused for the caller to remove. Returns true when something changed.
bool foldFeatureReductions(Graph &graph, bool always = false);

} // namespace sinter
