//===- templates/norm_apply.cuh - normalise a tensor from its group statistics ------===//
//
// y[n,c,l] = Post(x[n,c,l] * scale[n,c] + shift[n,c]) where scale and shift are the group
// norm's affine map of (n, c), derived from the statistics in slot 4 as each block starts (no
// finalize launch). Memory-bound: one read and one write per element, with 16-byte accesses
// when planes are a multiple of 4 floats. Two shapes of work:
//  - kMode 0 (large planes): block (x, y, z) = (chunk of the plane, c, n); each warp derives
//    the plane's map, each thread keeps kUnroll independent vectors in flight;
//  - kMode 1 (small planes, down to a single element): a block takes kPlanes consecutive
//    (n, c) planes, its first threads derive their maps into shared memory, then all threads
//    stride over the planes' elements, so no block is left with less than a warp of work.
// Slots: 0 x, 3 y (may be x), 4 stats, 6 gamma, 7 beta, 8..15 for Post.
// The prologue defines the norm_common.cuh constants, kMode, kThreads, kUnroll, kVec (1 or 4),
// kPlanes and `struct Post` (anchor-epilogue form, s = index within the plane).
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "norm_common.cuh"

namespace sinter::norm {

/// kMode 1: planes [blockIdx.x * kPlanes, + kPlanes) of the flattened (n, c) index.
__device__ __forceinline__ void applyPlanes(const Buffers &b) {
  using namespace cfg;
  constexpr i64 kTotal = i64(kN) * kC * kL;
  __shared__ float2 maps[kPlanes];
  const i64 p0 = i64(blockIdx.x) * kPlanes;
  for (int t = threadIdx.x; t < kPlanes; t += kThreads) {
    const i64 p = p0 + t;
    if (p < i64(kN) * kC) {
      const int n = int(p / kC), c = int(p % kC);
      maps[t] = scaleShift(b, c, groupMoments(slot<const double>(b, 4), n, c / kCG));
    }
  }
  __syncthreads();
  const cfg::Post post;
  const float *x = slot<const float>(b, 0);
  float *y = slot<float>(b, 3);
  const i64 e0 = p0 * kL;
  for (i64 e = i64(threadIdx.x) * kVec; e < i64(kPlanes) * kL; e += i64(kThreads) * kVec) {
    const i64 i = e0 + e;
    if (i >= kTotal)
      break;
    const int t = int(e / kL);
    const i64 p = p0 + t, s = e % kL;
    const int n = int(p / kC), c = int(p % kC);
    const float2 ss = maps[t];
    if constexpr (kVec == 4) {
      const float4 v = __ldg(reinterpret_cast<const float4 *>(x + i));
      *reinterpret_cast<float4 *>(y + i) = normalize4(post, v, ss, n, c, s, b);
    } else {
      y[i] = post(fmaf(__ldg(x + i), ss.x, ss.y), n, c, s, b);
    }
  }
}

} // namespace sinter::norm

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace cfg;
  using sinter::i64;
  if constexpr (kMode == 1) {
    sinter::norm::applyPlanes(b);
    return;
  }
  const int n = blockIdx.z, c = blockIdx.y;
  const sinter::norm::Moments m =
      sinter::norm::groupMomentsWarp(sinter::slot<const double>(b, 4), n, c / kCG);
  const float2 ss = sinter::norm::scaleShift(b, c, m);
  const cfg::Post post;
  const i64 plane = ((i64)n * kC + c) * kL;
  const float *x = sinter::slot<const float>(b, 0) + plane;
  float *y = sinter::slot<float>(b, 3) + plane;
  constexpr i64 kVecs = kL / kVec;
  const i64 first = (i64)blockIdx.x * kThreads * kUnroll + threadIdx.x;
  if constexpr (kVec == 4) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 i = first + (i64)u * kThreads;
      if (i < kVecs)
        v[u] = __ldg(reinterpret_cast<const float4 *>(x) + i);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 i = first + (i64)u * kThreads;
      if (i < kVecs)
        reinterpret_cast<float4 *>(y)[i] = sinter::norm::normalize4(post, v[u], ss, n, c, 4 * i, b);
    }
  } else {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 i = first + (i64)u * kThreads;
      if (i < kVecs)
        v[u] = __ldg(x + i);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const i64 i = first + (i64)u * kThreads;
      if (i < kVecs)
        y[i] = post(fmaf(v[u], ss.x, ss.y), n, c, i, b);
    }
  }
}
