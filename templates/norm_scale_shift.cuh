//===- templates/norm_scale_shift.cuh - per-(n, c) affine map of a group norm -------===//
//
// Writes float2 {scale, shift} per (n, c) into slot 5 so that an anchor that recomputes its
// output can normalise it in its own epilogue: normalised = v * scale + shift. One thread per
// (n, c); the group moments come from the statistics in slot 4 (norm_common.cuh).
// Slots: 4 stats, 5 scale/shift (float2[N * C]), 6 gamma, 7 beta.
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "norm_common.cuh"

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace cfg;
  const sinter::i64 e = (sinter::i64)blockIdx.x * kThreads + threadIdx.x;
  if (e >= (sinter::i64)kN * kC)
    return;
  const int n = (int)(e / kC), c = (int)(e % kC);
  const sinter::norm::Moments m =
      sinter::norm::groupMoments(sinter::slot<const double>(b, 4), n, c / kCG);
  sinter::slot<float2>(b, 5)[e] = sinter::norm::scaleShift(b, c, m);
}
