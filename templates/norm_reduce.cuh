//===- templates/norm_reduce.cuh - mean or sum of a normalised tensor from its sums --===//
//
// The mean over the L positions of channel c of a group-normalised tensor is
// m[n,c] = gamma[c] * (S[n,c] / L - mean[n,g]) * rstd[n,g] + beta[c]: it needs only the
// per-(n, c) sums, so the normalised tensor is never formed (mean(group_norm(conv(x))) of
// the S1 workload). Per channel: out[n*C + c] = m (kMean) or m * L. Over channels too
// (kOverChannels): out[n] = mean over c of m (kMean) or L * the sum over c. One block per n;
// the sum over channels is reduced in double.
// Slots: 3 out (float), 4 stats, 6 gamma, 7 beta.
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
    const sinter::norm::Moments mo = sinter::norm::groupMoments(stats, n, c / kCG);
    double gamma, beta;
    sinter::norm::affineParams(b, c, gamma, beta);
    const double s = stats[((i64)n * kC + c) * 2];
    const double m = gamma * (s / double(kL) - mo.mean) * mo.rstd + beta;
    if constexpr (kOverChannels)
      total += m;
    else
      out[(i64)n * kC + c] = float(kMean ? m : m * double(kL));
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
      out[n] = float(kMean ? all / double(kC) : all * double(kL));
    }
  }
}
