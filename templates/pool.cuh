//===- templates/pool.cuh - max and average pooling, 1-, 2- and 3-D ----------------===//
//
// Input [N, C, in...] in slot 0, output [N, C, out...] in slot cfg::kOutSlot, spatial sizes
// given as three entries with the real dims last (a 2-D pool has kIn = {1, H, W}, kernel 1,
// stride 1 and padding 0 in the first entry). One thread per output element, consecutive
// threads on consecutive outputs of a row. ceil_mode is already folded into kOut.
//
// Semantics are PyTorch's: max pooling skips padded positions, honours dilation and
// propagates NaN; average pooling clips the window at the padded border (in + padding), counts
// the padded positions in the divisor when kCountIncludePad, and otherwise divides by the
// number of real input elements in the window.
//
// Expects in namespace cfg: kMax, kN, kC, kIn[3], kOut[3], kKernel[3], kStride[3], kPad[3],
// kDil[3], kCountIncludePad, kThreads, kOutSlot; and structs Load (each input element, flat
// input index) and Post (each result, flat output index).
//
//===--------------------------------------------------------------------------------===//

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using sinter::i64;
  constexpr i64 kOutPlane = cfg::kOut[0] * cfg::kOut[1] * cfg::kOut[2];
  constexpr i64 kInPlane = cfg::kIn[0] * cfg::kIn[1] * cfg::kIn[2];
  constexpr i64 kTotal = cfg::kN * cfg::kC * kOutPlane;
  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  float *out = sinter::slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  for (i64 idx = i64(blockIdx.x) * cfg::kThreads + threadIdx.x; idx < kTotal;
       idx += i64(gridDim.x) * cfg::kThreads) {
    const i64 plane = idx / kOutPlane;
    i64 rest = idx % kOutPlane;
    const i64 o2 = rest % cfg::kOut[2];
    rest /= cfg::kOut[2];
    const i64 o1 = rest % cfg::kOut[1];
    const i64 o0 = rest / cfg::kOut[1];
    const i64 o[3] = {o0, o1, o2};
    const i64 inBase = plane * kInPlane;
    float result;
    if constexpr (cfg::kMax) {
      i64 lo[3];
#pragma unroll
      for (int d = 0; d < 3; ++d)
        lo[d] = o[d] * cfg::kStride[d] - cfg::kPad[d];
      float m = -sinter::kInf;
      for (i64 k0 = 0; k0 < cfg::kKernel[0]; ++k0) {
        const i64 p0 = lo[0] + k0 * cfg::kDil[0];
        if (p0 < 0 || p0 >= cfg::kIn[0])
          continue;
        for (i64 k1 = 0; k1 < cfg::kKernel[1]; ++k1) {
          const i64 p1 = lo[1] + k1 * cfg::kDil[1];
          if (p1 < 0 || p1 >= cfg::kIn[1])
            continue;
          const i64 row = inBase + (p0 * cfg::kIn[1] + p1) * cfg::kIn[2];
          for (i64 k2 = 0; k2 < cfg::kKernel[2]; ++k2) {
            const i64 p2 = lo[2] + k2 * cfg::kDil[2];
            if (p2 < 0 || p2 >= cfg::kIn[2])
              continue;
            const float v = load(__ldg(x + row + p2), row + p2, b);
            if (v > m || v != v)
              m = v;
          }
        }
      }
      result = m;
    } else {
      i64 lo[3], hi[3];
      i64 windowSize = 1, realSize = 1;
#pragma unroll
      for (int d = 0; d < 3; ++d) {
        lo[d] = o[d] * cfg::kStride[d] - cfg::kPad[d];
        hi[d] = lo[d] + cfg::kKernel[d];
        if (hi[d] > cfg::kIn[d] + cfg::kPad[d])
          hi[d] = cfg::kIn[d] + cfg::kPad[d];
        windowSize *= hi[d] - lo[d];
        if (lo[d] < 0)
          lo[d] = 0;
        if (hi[d] > cfg::kIn[d])
          hi[d] = cfg::kIn[d];
        realSize *= hi[d] - lo[d];
      }
      float sum = 0.f;
      for (i64 p0 = lo[0]; p0 < hi[0]; ++p0)
        for (i64 p1 = lo[1]; p1 < hi[1]; ++p1) {
          const i64 row = inBase + (p0 * cfg::kIn[1] + p1) * cfg::kIn[2];
          for (i64 p2 = lo[2]; p2 < hi[2]; ++p2)
            sum += load(__ldg(x + row + p2), row + p2, b);
        }
      result = sum / float(cfg::kCountIncludePad ? windowSize : realSize);
    }
    out[idx] = post(result, idx, b);
  }
}
