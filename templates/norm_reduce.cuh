//===- templates/norm_reduce.cuh - per-plane means or sums from per-(n, c) sums -----===//
//
// kNormalised: the mean over the L positions of channel c of a group-normalised tensor is
// m[n,c] = gamma[c] * (S[n,c] / L - mean[n,g]) * rstd[n,g] + beta[c]: it needs only the
// per-(n, c) sums, so the normalised tensor is never formed (mean(group_norm(conv(x))) of
// the S1 workload). Otherwise m[n,c] = S[n,c] / L, the plain mean of the values whose sums an
// anchor's epilogue gathered (a conv's y reduced over its planes, y never stored).
// Per channel: out[n*C + c] = Post(m) (kMean) or Post(m * L). Over channels too
// (kOverChannels): out[n] = Post(mean over c of m) (kMean) or Post(L * the sum over c). Post
// is a flat functor at the output's index. One block per n; the sum over channels is reduced
// in double.
// Slots: 3 out (float), 4 stats, 6 gamma, 7 beta (kNormalised), 8.. Post's tensors.
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "norm_common.cuh"

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace cfg;
  using sinter::i64;
  const int n = blockIdx.x;
  const double *stats = sinter::slot<const double>(b, 4);
  float *out = sinter::slot<float>(b, 3);
  double total = 0;
  for (int c = threadIdx.x; c < kC; c += kThreads) {
    const double s = stats[((i64)n * kC + c) * 2];
    double m = s / double(kL);
    if constexpr (kNormalised) {
      const sinter::norm::Moments mo = sinter::norm::groupMoments(stats, n, c / kCG);
      double gamma, beta;
      sinter::norm::affineParams(b, c, gamma, beta);
      m = gamma * (m - mo.mean) * mo.rstd + beta;
    }
    if constexpr (kOverChannels) {
      total += m;
    } else {
      const i64 i = (i64)n * kC + c;
      out[i] = Post()(float(kMean ? m : m * double(kL)), i, b);
    }
  }
  if constexpr (kOverChannels) {
    constexpr int kWarps = kThreads / 32;
    __shared__ double part[kWarps];
    total = sinter::warpSum(total);
    if (threadIdx.x % 32 == 0)
      part[threadIdx.x / 32] = total;
    __syncthreads();
    if (threadIdx.x == 0) {
      double all = 0;
      for (int k = 0; k < kWarps; ++k)
        all += part[k];
      out[n] = Post()(float(kMean ? all / double(kC) : all * double(kL)), n, b);
    }
  }
}
