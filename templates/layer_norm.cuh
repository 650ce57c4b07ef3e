//===- templates/layer_norm.cuh - standalone layer norm over rows -------------------===//
//
// x (slot 0) is viewed as [kRows, kL] (kL = the product of normalized_shape); each row is
// normalised with its own mean and biased variance, eps inside the square root, then scaled by
// gamma (slot 6) and shifted by beta (slot 7), both [kL], when kAffine; Post is applied to each
// result, written to slot cfg::kOutSlot. A team of kTeam threads owns a row: one pass for the
// mean, a second for the variance around it (no E[x^2] - E[x]^2 cancellation), a third writes.
// When the block's rows fit in shared memory (kCache) the first pass stages Load(x) there and
// the later passes read it back instead of going to global memory again.
//
// Expects in namespace cfg: kRows, kL, kEps, kAffine, kTeam, kThreads, kCache, kOutSlot; and
// structs Load (each input element, flat index) and Post (each result, flat index).
//
//===--------------------------------------------------------------------------------===//

namespace sinter::layernorm {

/// Sum over the team of the calling thread (every thread of the block calls it; all lanes of
/// the team get the result).
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
    for (int w = 0; w < kWarps; ++w)
      v += warpSums[w];
  }
  return v;
}

} // namespace sinter::layernorm

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace sinter::layernorm;
  using sinter::i64;
  constexpr int kTeams = cfg::kThreads / cfg::kTeam;
  static_assert(cfg::kTeam <= 32 || kTeams == 1, "a team wider than a warp owns its block");
  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  const float *__restrict__ gamma = sinter::slot<const float>(b, 6);
  const float *__restrict__ beta = sinter::slot<const float>(b, 7);
  float *out = sinter::slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  const int team = threadIdx.x / cfg::kTeam, lane = threadIdx.x % cfg::kTeam;
  const i64 row = i64(blockIdx.x) * kTeams + team;
  const bool active = row < cfg::kRows;
  const i64 base = row * cfg::kL;
  __shared__ float cache[cfg::kCache ? kTeams * cfg::kL : 1];
  float *mine = cache + (cfg::kCache ? team * cfg::kL : 0);
  auto value = [&](i64 l) {
    if constexpr (cfg::kCache)
      return mine[l];
    else
      return load(__ldg(x + base + l), base + l, b);
  };

  float sum = 0.f;
  if (active)
    for (i64 l = lane; l < cfg::kL; l += cfg::kTeam) {
      const float v = load(__ldg(x + base + l), base + l, b);
      if constexpr (cfg::kCache)
        mine[l] = v;
      sum += v;
    }
  const float mean = teamSum(sum) / float(cfg::kL);
  // Each lane reads back only what it staged itself, so no barrier is needed for the cache.
  float sq = 0.f;
  if (active)
    for (i64 l = lane; l < cfg::kL; l += cfg::kTeam) {
      const float d = value(l) - mean;
      sq += d * d;
    }
  const float rstd = 1.f / sqrtf(teamSum(sq) / float(cfg::kL) + cfg::kEps);
  if (!active)
    return;
  for (i64 l = lane; l < cfg::kL; l += cfg::kTeam) {
    float y = (value(l) - mean) * rstd;
    if constexpr (cfg::kAffine)
      y = y * __ldg(gamma + l) + __ldg(beta + l);
    out[base + l] = post(y, base + l, b);
  }
}
