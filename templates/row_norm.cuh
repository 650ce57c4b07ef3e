//===- templates/row_norm.cuh - normalise rows held in registers -------------------===//
//
// One kernel for every standalone normalisation whose rows fit in a team's registers: layer
// norm over the innermost dims, and group / instance norm, whose (n, group) slice is one
// contiguous row of (C / groups) * L elements. x (slot 0) is viewed as [kRows, kWidth]. A team
// of kTeam threads owns a row: it loads the whole row once (16-byte loads when kVec == 4),
// keeps it in registers, takes the mean, then the biased variance around that mean (two
// passes over registers, no E[x^2] - E[x]^2 cancellation), and writes
// Post((x - mean) * rstd * gamma[a] + beta[a]) to slot kOutSlot. Element w of row r has the
// affine index a = ((r % kAffineGroups) * kWidth + w) / kAffineDiv: w itself for a layer norm,
// the channel for a group norm of [N, C, L] (kAffineGroups = groups, kAffineDiv = L).
// Memory traffic is one read and one write of the tensor: the bound of the operation.
// With kPooled, the rows are a pool's result that never reached memory: the generated Element
// functor computes each element from its window (pool_window.cuh) as the row is loaded.
//
// Teams narrower than a warp share their warp (several rows per warp); a team of more than 32
// threads owns its block and combines its warps through shared memory.
//
// Expects in namespace cfg: kRows, kWidth, kTeam, kThreads, kVec (1 or 4), kPer (vectors per
// thread), kAffine, kAffineGroups, kAffineDiv, kEps (float), kOutSlot, kPooled; and structs
// Element (the value of each input element, flat index), Load (applied to it) and Post (each
// result, flat index).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "common.cuh"

namespace sinter::rownorm {

/// Sum over the calling thread's team; every thread of the block calls it, and every lane of
/// the team gets the result.
__device__ __forceinline__ float teamSum(float v) {
  constexpr int kWidth = cfg::kTeam < 32 ? cfg::kTeam : 32;
#pragma unroll
  for (int o = kWidth / 2; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if constexpr (cfg::kTeam > 32) {
    constexpr int kWarps = cfg::kThreads / 32;
    __shared__ float warpSums[kWarps];
    __syncthreads(); // the previous call's readers are done with warpSums
    if (threadIdx.x % 32 == 0)
      warpSums[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w)
      v += warpSums[w];
  }
  return v;
}

} // namespace sinter::rownorm

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace sinter::rownorm;
  using sinter::i64;
  static_assert(cfg::kTeam <= 32 || cfg::kThreads == cfg::kTeam,
                "a team wider than a warp owns its block");
  static_assert(cfg::kWidth % cfg::kVec == 0, "whole vectors per row");
  constexpr int kTeams = cfg::kThreads / cfg::kTeam;
  constexpr i64 kVecs = cfg::kWidth / cfg::kVec;
  static_assert(cfg::kPer * cfg::kTeam >= kVecs, "the team's registers hold the row");
  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  float *out = sinter::slot<float>(b, cfg::kOutSlot);
  const Element element{};
  const Load load{};
  const Post post{};
  const int lane = threadIdx.x % cfg::kTeam;
  const i64 row = i64(blockIdx.x) * kTeams + threadIdx.x / cfg::kTeam;
  const bool active = row < cfg::kRows;
  const i64 base = row * cfg::kWidth;

  float v[cfg::kPer][cfg::kVec];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < cfg::kPer; ++k) {
    const i64 j = lane + i64(k) * cfg::kTeam;
    if (active && j < kVecs) {
      const i64 i = base + j * cfg::kVec;
      if constexpr (cfg::kVec == 4 && !cfg::kPooled) {
        const float4 q = __ldg(reinterpret_cast<const float4 *>(x + i));
        v[k][0] = q.x, v[k][1] = q.y, v[k][2] = q.z, v[k][3] = q.w;
      } else {
#pragma unroll
        for (int e = 0; e < cfg::kVec; ++e)
          v[k][e] = element(x, i + e, b);
      }
#pragma unroll
      for (int e = 0; e < cfg::kVec; ++e) {
        v[k][e] = load(v[k][e], i + e, b);
        sum += v[k][e];
      }
    }
  }
  const float mean = teamSum(sum) / float(cfg::kWidth);
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < cfg::kPer; ++k) {
    const i64 j = lane + i64(k) * cfg::kTeam;
    if (active && j < kVecs)
#pragma unroll
      for (int e = 0; e < cfg::kVec; ++e) {
        const float d = v[k][e] - mean;
        sq += d * d;
      }
  }
  const float rstd = 1.f / sqrtf(teamSum(sq) / float(cfg::kWidth) + cfg::kEps);
  if (!active)
    return;
  const float *__restrict__ gamma = sinter::slot<const float>(b, 6);
  const float *__restrict__ beta = sinter::slot<const float>(b, 7);
  const i64 affineBase = (row % cfg::kAffineGroups) * cfg::kWidth;
#pragma unroll
  for (int k = 0; k < cfg::kPer; ++k) {
    const i64 j = lane + i64(k) * cfg::kTeam;
    if (j >= kVecs)
      continue;
    const i64 i = base + j * cfg::kVec;
    float y[cfg::kVec];
#pragma unroll
    for (int e = 0; e < cfg::kVec; ++e) {
      float t = (v[k][e] - mean) * rstd;
      if constexpr (cfg::kAffine) {
        const i64 a = (affineBase + j * cfg::kVec + e) / cfg::kAffineDiv;
        t = fmaf(t, __ldg(gamma + a), __ldg(beta + a));
      }
      y[e] = post(t, i + e, b);
    }
    if constexpr (cfg::kVec == 4)
      *reinterpret_cast<float4 *>(out + i) = make_float4(y[0], y[1], y[2], y[3]);
    else
      out[i] = y[0];
  }
}
