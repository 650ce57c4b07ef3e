//===- templates/row_apply.cuh - normalise long rows from their statistics ---------===//
//
// The second kernel of a normalisation whose rows are too long for one team's registers (or
// too few to fill the GPU one team each): channel_stats.cuh has left, per row, the sum and the
// sum of squares in double (slot 4, double2 per row). x (slot 0) is viewed as [kRows, kWidth];
// each block takes kChunk consecutive elements of one row (block index = row * kChunks +
// chunk), derives the row's mean and rstd from the two sums in double as it starts, and writes
// Post((x - mean) * rstd * gamma[a] + beta[a]) to slot kOutSlot with the affine index a of
// row_norm.cuh. One read and one write per element, 16-byte accesses when kVec == 4.
//
// Expects in namespace cfg: kRows, kWidth, kChunks, kChunk (a multiple of kVec), kThreads,
// kVec (1 or 4), kAffine, kAffineGroups, kAffineDiv, kEps (double), kOutSlot; and structs
// Load (each input element, flat index: the same as the statistics pass used) and Post (each
// result, flat index).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "common.cuh"

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using sinter::i64;
  static_assert(cfg::kChunks * cfg::kChunk >= cfg::kWidth, "the chunks cover the row");
  static_assert(cfg::kChunk % cfg::kVec == 0 && cfg::kWidth % cfg::kVec == 0, "whole vectors");
  const i64 row = i64(blockIdx.x) / cfg::kChunks;
  const i64 w0 = (i64(blockIdx.x) % cfg::kChunks) * cfg::kChunk;
  const i64 w1 = w0 + cfg::kChunk < cfg::kWidth ? w0 + cfg::kChunk : cfg::kWidth;
  const double *stats = sinter::slot<const double>(b, 4) + 2 * row;
  const double mean = stats[0] / double(cfg::kWidth);
  double var = stats[1] / double(cfg::kWidth) - mean * mean;
  var = var > 0 ? var : 0;
  const float rstd = float(1.0 / sqrt(var + cfg::kEps));
  const float meanF = float(mean);
  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  const float *__restrict__ gamma = sinter::slot<const float>(b, 6);
  const float *__restrict__ beta = sinter::slot<const float>(b, 7);
  float *out = sinter::slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  const i64 base = row * cfg::kWidth;
  const i64 affineBase = (row % cfg::kAffineGroups) * cfg::kWidth;
  for (i64 w = w0 + i64(threadIdx.x) * cfg::kVec; w < w1; w += i64(cfg::kThreads) * cfg::kVec) {
    float v[cfg::kVec];
    if constexpr (cfg::kVec == 4) {
      const float4 q = __ldg(reinterpret_cast<const float4 *>(x + base + w));
      v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else {
      v[0] = __ldg(x + base + w);
    }
#pragma unroll
    for (int e = 0; e < cfg::kVec; ++e) {
      // (x - mean) * rstd, not x * rstd - mean * rstd: a large mean would cancel.
      float t = (load(v[e], base + w + e, b) - meanF) * rstd;
      if constexpr (cfg::kAffine) {
        const i64 a = (affineBase + w + e) / cfg::kAffineDiv;
        t = fmaf(t, __ldg(gamma + a), __ldg(beta + a));
      }
      v[e] = post(t, base + w + e, b);
    }
    if constexpr (cfg::kVec == 4)
      *reinterpret_cast<float4 *>(out + base + w) = make_float4(v[0], v[1], v[2], v[3]);
    else
      out[base + w] = v[0];
  }
}
