//===- templates/norm_apply.cuh - normalise a tensor from its group statistics ------===//
//
// y[n,c,l] = Post(x[n,c,l] * scale[n,c] + shift[n,c]) where scale and shift are the group
// norm's affine map of (n, c), derived by each warp from the statistics in slot 4 as the
// block starts (no finalize launch). Memory-bound: one read and one write per element, with
// 16-byte accesses when planes are a multiple of 4 floats, kUnroll independent vectors per
// thread in flight. Block (x, y, z) = (chunk of the plane, c, n).
// Slots: 0 x, 3 y (may be x), 4 stats, 6 gamma, 7 beta, 8..15 for Post.
// The prologue defines the norm_common.cuh constants, kThreads, kUnroll, kVec (1 or 4) and
// `struct Post` (anchor-epilogue form, s = index within the plane).
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "norm_common.cuh"

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace cfg;
  using sinter::i64;
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
      if (i < kVecs) {
        float4 o;
        o.x = post(fmaf(v[u].x, ss.x, ss.y), n, c, 4 * i, b);
        o.y = post(fmaf(v[u].y, ss.x, ss.y), n, c, 4 * i + 1, b);
        o.z = post(fmaf(v[u].z, ss.x, ss.y), n, c, 4 * i + 2, b);
        o.w = post(fmaf(v[u].w, ss.x, ss.y), n, c, 4 * i + 3, b);
        reinterpret_cast<float4 *>(y)[i] = o;
      }
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
