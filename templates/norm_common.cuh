//===- templates/norm_common.cuh - group moments from per-(n, c) sums ---------------===//
//
// Shared by the kernels that finish a fused group norm (norm_apply.cuh,
// norm_scale_shift.cuh, norm_reduce.cuh). An anchor's epilogue has left, per (n, c), the sum
// and the sum of squares over the L elements of the plane (double2 per (n, c) in slot 4).
// The moments of group g of sample n follow in double: mean = S / cnt, var = Q / cnt - mean^2
// (clamped at 0 against rounding), rstd = 1 / sqrt(var + eps), cnt = (C / groups) * L.
// The prologue defines cfg::kC, kGroups, kCG (= C / groups), kL, kEps (double), kAffine.
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "common.cuh"

namespace sinter {
namespace norm {

struct Moments {
  double mean, rstd;
};

/// (A multiply by 1 / cnt and rsqrt, not a division and 1 / sqrt: each of those is a
/// subroutine of a few dozen dependent instructions in double, and conv_mma's in-kernel norm
/// makes these moments on its blocks' critical path once a unit.)
__device__ __forceinline__ Moments finishMoments(double s, double q) {
  constexpr double kInvCnt = 1.0 / (double(cfg::kCG) * double(cfg::kL));
  const double mean = s * kInvCnt;
  double var = q * kInvCnt - mean * mean;
  var = var > 0 ? var : 0;
  return {mean, rsqrt(var + cfg::kEps)};
}

/// Moments of (n, g), computed by one thread. kFromL2: read the sums from L2, as conv_mma's
/// in-kernel norm must (other blocks of the same kernel have just added them, and a line of
/// them may sit stale in this SM's L1 from a neighbouring (n, g)).
template <bool kFromL2 = false>
__device__ __forceinline__ Moments groupMoments(const double *stats, int n, int g) {
  double s = 0, q = 0;
  const double *p = stats + ((i64)n * cfg::kC + (i64)g * cfg::kCG) * 2;
  for (int k = 0; k < cfg::kCG; ++k) {
    if constexpr (kFromL2)
      s += __ldcg(p + 2 * k), q += __ldcg(p + 2 * k + 1);
    else
      s += p[2 * k], q += p[2 * k + 1];
  }
  return finishMoments(s, q);
}

/// Moments of (n, g), computed by a whole warp (all 32 lanes must call); every lane gets them.
__device__ __forceinline__ Moments groupMomentsWarp(const double *stats, int n, int g) {
  double s = 0, q = 0;
  const double *p = stats + ((i64)n * cfg::kC + (i64)g * cfg::kCG) * 2;
  for (int k = threadIdx.x % 32; k < cfg::kCG; k += 32)
    s += p[2 * k], q += p[2 * k + 1];
  return finishMoments(warpSum(s), warpSum(q));
}

/// Moments of the group of channel c of sample n, where each of the group's kCG channels is
/// held by one of kCG consecutive lanes of a warp, aligned to kCG (a power of two, at most
/// 32; `lanes` = the mask of the lanes taking part): each lane reads its channel's sums from
/// L2 (kFromL2, as groupMoments) and the group's are added across its lanes.
template <bool kFromL2 = false, int kCG = cfg::kCG>
__device__ __forceinline__ Moments groupMomentsLanes(const double *stats, int n, int c,
                                                     unsigned lanes) {
  // (kCG a parameter: the check then holds only where the function is used.)
  static_assert(kCG <= 32 && (kCG & (kCG - 1)) == 0, "kCG must be a power of two");
  const double *p = stats + ((i64)n * cfg::kC + c) * 2;
  double s = kFromL2 ? __ldcg(p) : p[0], q = kFromL2 ? __ldcg(p + 1) : p[1];
#pragma unroll
  for (int m = 1; m < kCG; m *= 2) {
    s += __shfl_xor_sync(lanes, s, m);
    q += __shfl_xor_sync(lanes, q, m);
  }
  return finishMoments(s, q);
}

/// gamma[c] and beta[c], or 1 and 0 without affine parameters.
__device__ __forceinline__ void affineParams(const Buffers &b, int c, double &gamma,
                                             double &beta) {
  if constexpr (cfg::kAffine) {
    gamma = slot<const float>(b, 6)[c];
    beta = slot<const float>(b, 7)[c];
  } else {
    gamma = 1, beta = 0;
  }
}

/// The affine map normalised = v * scale + shift for gamma, beta and moments m.
__device__ __forceinline__ float2 scaleShift(double gamma, double beta, Moments m) {
  const double scale = gamma * m.rstd;
  return make_float2(float(scale), float(beta - m.mean * scale));
}

/// The affine map of channel c with moments m.
__device__ __forceinline__ float2 scaleShift(const Buffers &b, int c, Moments m) {
  double gamma, beta;
  affineParams(b, c, gamma, beta);
  return scaleShift(gamma, beta, m);
}

/// post(v * ss.x + ss.y) for the four elements of v, at plane indices s .. s + 3.
template <class Post>
__device__ __forceinline__ float4 normalize4(const Post &post, float4 v, float2 ss, int n, int c,
                                             i64 s, const Buffers &b) {
  return make_float4(post(fmaf(v.x, ss.x, ss.y), n, c, s, b),
                     post(fmaf(v.y, ss.x, ss.y), n, c, s + 1, b),
                     post(fmaf(v.z, ss.x, ss.y), n, c, s + 2, b),
                     post(fmaf(v.w, ss.x, ss.y), n, c, s + 3, b));
}

} // namespace norm
} // namespace sinter
