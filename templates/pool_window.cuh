//===- templates/pool_window.cuh - one max or average pooling window ---------------===//
//
// The value of one pooled output element, computed from its window of the input. pool.cuh
// runs it once per output and stores the result; reduce.cuh and row_norm.cuh run it for each
// element they read when a reduction or a norm takes a pool's result directly (the pooled
// tensor then never reaches memory). Each pooled element is computed exactly once either way.
//
// Semantics are PyTorch's: max pooling skips padded positions, honours dilation and
// propagates NaN; average pooling clips the window at the padded border (in + padding), counts
// the padded positions in the divisor when kCountIncludePad, and otherwise divides by the
// number of real input elements in the window.
//
// Expects in namespace cfg: kMax, kIn[3], kOut[3], kKernel[3], kStride[3], kPad[3], kDil[3],
// kCountIncludePad, with the spatial sizes given as three entries with the real dims last (a
// 2-D pool has kIn = {1, H, W}, kernel 1, stride 1 and padding 0 in the first entry).
//
//===--------------------------------------------------------------------------------===//
#pragma once

namespace sinter::pool {

constexpr i64 kOutPlane = cfg::kOut[0] * cfg::kOut[1] * cfg::kOut[2];
constexpr i64 kInPlane = cfg::kIn[0] * cfg::kIn[1] * cfg::kIn[2];

/// Output element `idx` (flat over [N, C, out...]) of pooling x (flat over [N, C, in...]);
/// `load` is applied to each input element with its flat input index.
template <class Load>
__device__ __forceinline__ float window(const float *__restrict__ x, i64 idx, const Load &load,
                                        const Buffers &b) {
  const i64 plane = idx / kOutPlane;
  i64 rest = idx % kOutPlane;
  const i64 o2 = rest % cfg::kOut[2];
  rest /= cfg::kOut[2];
  const i64 o1 = rest % cfg::kOut[1];
  const i64 o0 = rest / cfg::kOut[1];
  const i64 o[3] = {o0, o1, o2};
  const i64 inBase = plane * kInPlane;
  if constexpr (cfg::kMax) {
    i64 lo[3];
#pragma unroll
    for (int d = 0; d < 3; ++d)
      lo[d] = o[d] * cfg::kStride[d] - cfg::kPad[d];
    float m = -kInf;
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
    return m;
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
    return sum / float(cfg::kCountIncludePad ? windowSize : realSize);
  }
}

} // namespace sinter::pool
