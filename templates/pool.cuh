//===- templates/pool.cuh - max and average pooling, 1-, 2- and 3-D ----------------===//
//
// Input [N, C, in...] in slot 0, output [N, C, out...] in slot cfg::kOutSlot. One thread per
// output element, consecutive threads on consecutive outputs of a row; the window itself is
// pool_window.cuh's (PyTorch's semantics, ceil_mode already folded into kOut).
//
// Expects in namespace cfg: what pool_window.cuh expects, and kN, kC, kThreads, kOutSlot; and
// structs Load (each input element, flat input index) and Post (each result, flat output
// index).
//
//===--------------------------------------------------------------------------------===//
#include "pool_window.cuh"

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using sinter::i64;
  constexpr i64 kTotal = cfg::kN * cfg::kC * sinter::pool::kOutPlane;
  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  float *out = sinter::slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  for (i64 idx = i64(blockIdx.x) * cfg::kThreads + threadIdx.x; idx < kTotal;
       idx += i64(gridDim.x) * cfg::kThreads)
    out[idx] = post(sinter::pool::window(x, idx, load, b), idx, b);
}
