//===- templates/channel_stats.cuh - per-(n, c) sum and sum of squares -------------===//
//
// The statistics pass of a standalone group / instance norm: for x [N, C, L] in slot 0 it adds,
// per (n, c) plane, the sum and the sum of squares of Load(x) into slot 4 (double[N * C * 2],
// {sum, sum of squares} per plane, zeroed by the planner before the launch). The normalise
// kernel (norm_apply) turns them into mean and variance. Doubles keep the variance
// E[x^2] - E[x]^2 free of cancellation for any plane size.
//
// Grid: (N * C, kSplit); block y-index s covers elements [s * kChunk, (s + 1) * kChunk) of the
// plane, its threads stride through them (four at a time with 16-byte loads when kVec4), fold
// in double, combine across the block and add to the plane's two totals atomically.
//
// Expects in namespace cfg: kN, kC, kL, kSplit, kChunk (a multiple of 4 when kVec4), kVec4,
// kThreads; and struct Load (each element, flat index).
//
//===--------------------------------------------------------------------------------===//

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using sinter::i64;
  static_assert(cfg::kSplit * cfg::kChunk >= cfg::kL, "the chunks cover the plane");
  static_assert(cfg::kN * cfg::kC >= 1, "at least one plane");
  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  double *stats = sinter::slot<double>(b, 4);
  const Load load{};
  const i64 plane = blockIdx.x;
  const i64 base = plane * cfg::kL;
  const i64 l0 = i64(blockIdx.y) * cfg::kChunk;
  const i64 l1 = l0 + cfg::kChunk < cfg::kL ? l0 + cfg::kChunk : cfg::kL;
  double sum = 0, sumSq = 0;
  static_assert(!cfg::kVec4 || (cfg::kL % 4 == 0 && cfg::kChunk % 4 == 0),
                "16-byte loads need aligned planes");
  if constexpr (cfg::kVec4) {
    for (i64 l = l0 + 4 * i64(threadIdx.x); l < l1; l += 4 * cfg::kThreads) {
      const float4 q = __ldg(reinterpret_cast<const float4 *>(x + base + l));
      const float v[4] = {load(q.x, base + l, b), load(q.y, base + l + 1, b),
                          load(q.z, base + l + 2, b), load(q.w, base + l + 3, b)};
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        sum += v[k];
        sumSq += double(v[k]) * v[k];
      }
    }
  } else {
    for (i64 l = l0 + threadIdx.x; l < l1; l += cfg::kThreads) {
      const float v = load(__ldg(x + base + l), base + l, b);
      sum += v;
      sumSq += double(v) * v;
    }
  }
  sum = sinter::warpSum(sum);
  sumSq = sinter::warpSum(sumSq);
  constexpr int kWarps = cfg::kThreads / 32;
  __shared__ double partial[kWarps][2];
  if (threadIdx.x % 32 == 0) {
    partial[threadIdx.x / 32][0] = sum;
    partial[threadIdx.x / 32][1] = sumSq;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kWarps; ++w) {
      sum += partial[w][0];
      sumSq += partial[w][1];
    }
    atomicAdd(&stats[plane * 2], sum);
    atomicAdd(&stats[plane * 2 + 1], sumSq);
  }
}
