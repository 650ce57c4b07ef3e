//===- ir/Random.h - deterministic random bindings for a graph ---------------------===//
//
// Tests, `sinterc run` and `sinterc check` need data that exercises a graph: the same for a
// given seed on every machine, and scaled so outputs stay O(1) at any size. Each argument
// gets its own stream, derived from the seed and the argument's name (adding an argument
// does not change the others), and a distribution chosen from the op that consumes it:
// weights and biases ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) as PyTorch initialises them, norm
// gamma ~ U(0.5, 1.5), beta ~ U(-0.5, 0.5), batch_norm running mean ~ U(-0.5, 0.5) and
// running var ~ U(0.5, 1.5), arguments of log/sqrt/rsqrt ~ U(0.5, 2), other inputs ~ N(0, 1),
// other params ~ U(-1, 1). No tensor is all zeros, so a test that forgets gamma and beta or
// a bias still compares something.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Tensor.h"

#include <cstdint>

namespace sinter {

/// Random tensors for every argument (inputs and params) of `g`, keyed by name.
TensorMap randomBindings(const Graph &g, uint64_t seed);

/// Like randomBindings, restricted to the inputs (`params = false`) or the params (`true`).
TensorMap randomBindings(const Graph &g, uint64_t seed, bool params);

} // namespace sinter
