//===- templates/reduce.cuh - sum / mean / max / min / logsumexp over a set of dims ---===//
//
// Reduces the input in slot 0 over any set of its dims into slot cfg::kOutSlot. The emitter
// has already merged adjacent dims of the same kind, so the input is described as "kept"
// groups (which index the outputs) and "reduced" groups (which index the elements folded into
// each output), each a size and an input stride; an output index o and a reduced index r give
// the input element keptOffset(o) + redOffset(r). Two shapes of work:
//
//  - kMode 0, the reduced dims include the innermost one: a team of kTeam threads (a part of a
//    warp, a warp or a whole block) owns one output and strides over r, so the team reads
//    consecutive addresses; the team then combines its lanes with shuffles (and shared memory
//    when kTeam > 32).
//  - kMode 1, the innermost dim is kept: the 32 lanes of a warp own 32 consecutive outputs
//    (consecutive addresses) and loop over r; kRows warps of a block split r and combine
//    through shared memory; a block holds kCols such groups of 32 outputs. This is the sum over
//    dim 0 of a [4096, 4096] matrix, or over the channels of [N, C, H, W].
//
// When there are too few outputs to fill the GPU, gridDim.y = kSplit blocks share each output's
// r range: every block stores its partial state in the workspace (slot kWorkSlot, zeroed before
// the first launch), and the last block to finish an output, found with an atomic counter,
// combines the partials in a fixed order and resets the counter for the next launch. Sums use
// Kahan compensation in every lane and when combining, so a 1e7-element fp32 sum stays within
// about 1e-6 of the float64 result; logsumexp keeps a running (max, sum of exp(x - max)).
// Max and min propagate NaN as torch.amax/amin do.
//
// The reduced tensor need not be in memory: the generated Element functor gives the value of
// each element from its flat index, either a load from slot 0 or, when the reduction reads a
// pool's result, that element's pooling window over slot 0 (pool_window.cuh), so that the
// pooled tensor is never written.
//
// Expects in namespace cfg: kKind (0 sum, 1 mean, 2 max, 3 min, 4 logsumexp), kNumOut, kR,
// kKeptRank, kKeptSize[], kKeptStride[], kRedRank, kRedSize[], kRedStride[], kMode, kThreads,
// kTeam (mode 0), kRows and kCols (mode 1), kSplit, kChunk, kOutSlot, kWorkSlot, kSmallIndex (every
// input offset fits 32 bits); and structs Element (the value of each reduced element, flat index),
// Load (applied to it, flat index) and Post (each result, flat output index).
//
//===--------------------------------------------------------------------------------===//

namespace sinter::reduce {

enum : int { kSum = 0, kMean = 1, kMax = 2, kMin = 3, kLogSumExp = 4 };

template <bool Small> struct IndexType { using T = long long; };
template <> struct IndexType<true> { using T = unsigned; };
using Index = typename IndexType<cfg::kSmallIndex>::T;

/// The partial state of one output: sum and Kahan compensation (sum, mean), the running
/// extreme (max, min), or the running max and sum of exp(x - max) (logsumexp).
struct Acc {
  float a, c;
};

__device__ __forceinline__ Acc init() {
  if constexpr (cfg::kKind == kMax || cfg::kKind == kLogSumExp)
    return {-kInf, 0.f};
  else if constexpr (cfg::kKind == kMin)
    return {kInf, 0.f};
  else
    return {0.f, 0.f};
}

__device__ __forceinline__ void add(Acc &s, float x) {
  if constexpr (cfg::kKind == kSum || cfg::kKind == kMean) {
    const float y = x - s.c;
    const float t = s.a + y;
    // An infinite or NaN running sum has no meaningful compensation; keeping one would turn
    // inf into NaN on the next step.
    s.c = fabsf(t) < kInf ? (t - s.a) - y : 0.f;
    s.a = t;
  } else if constexpr (cfg::kKind == kMax) {
    if (x > s.a || x != x)
      s.a = x;
  } else if constexpr (cfg::kKind == kMin) {
    if (x < s.a || x != x)
      s.a = x;
  } else {
    if (x > s.a) {
      s.c = s.c * expf(s.a - x) + 1.f;
      s.a = x;
    } else if (x == s.a) {
      s.c += 1.f; // also covers x == +inf == s.a, where exp(x - s.a) would be NaN
    } else if (x != -kInf) {
      s.c += expf(x - s.a);
    }
  }
}

__device__ __forceinline__ void merge(Acc &s, Acc o) {
  if constexpr (cfg::kKind == kSum || cfg::kKind == kMean) {
    add(s, o.a - o.c);
  } else if constexpr (cfg::kKind == kMax || cfg::kKind == kMin) {
    add(s, o.a);
  } else {
    const float m = fmaxf(s.a, o.a);
    if (m == -kInf)
      return;
    s.c = (s.a == m ? s.c : s.c * expf(s.a - m)) + (o.a == m ? o.c : o.c * expf(o.a - m));
    s.a = m;
  }
}

__device__ __forceinline__ float finalize(Acc s) {
  if constexpr (cfg::kKind == kSum)
    return s.a - s.c;
  else if constexpr (cfg::kKind == kMean)
    return (s.a - s.c) / float(cfg::kR);
  else if constexpr (cfg::kKind == kMax || cfg::kKind == kMin)
    return s.a;
  else
    return s.a + logf(s.c);
}

/// Combines the states of `width` consecutive lanes (a power of two up to 32); every one of
/// those lanes ends with the combined state.
template <int Width> __device__ __forceinline__ void laneReduce(Acc &s) {
#pragma unroll
  for (int o = Width / 2; o > 0; o >>= 1) {
    Acc other;
    other.a = __shfl_xor_sync(0xffffffffu, s.a, o);
    other.c = __shfl_xor_sync(0xffffffffu, s.c, o);
    merge(s, other);
  }
}

__device__ __forceinline__ Index keptOffset(Index o) {
  Index off = 0;
#pragma unroll
  for (int d = cfg::kKeptRank - 1; d >= 0; --d) {
    off += (o % Index(cfg::kKeptSize[d])) * Index(cfg::kKeptStride[d]);
    o /= Index(cfg::kKeptSize[d]);
  }
  return off;
}

__device__ __forceinline__ Index redOffset(Index r) {
  Index off = 0;
#pragma unroll
  for (int d = cfg::kRedRank - 1; d >= 0; --d) {
    off += (r % Index(cfg::kRedSize[d])) * Index(cfg::kRedStride[d]);
    r /= Index(cfg::kRedSize[d]);
  }
  return off;
}

/// Folds elements [r0, r1) of the output at input offset `base`: lane `lane` of `lanes`.
__device__ __forceinline__ void accumulate(Acc &s, const Buffers &b, Index base, long long r0,
                                           long long r1, int lane, int lanes) {
  const float *__restrict__ x = slot<const float>(b, 0);
  const Element element{};
  const Load load{};
  long long r = r0 + lane;
  // Four loads in flight before the (serial, compensated) adds that use them.
  for (; r + 3 * lanes < r1; r += 4 * lanes) {
    Index idx[4];
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      idx[k] = base + redOffset(Index(r + k * lanes));
      v[k] = element(x, i64(idx[k]), b);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k)
      add(s, load(v[k], i64(idx[k]), b));
  }
  for (; r < r1; r += lanes) {
    const Index idx = base + redOffset(Index(r));
    add(s, load(element(x, i64(idx), b), i64(idx), b));
  }
}

/// Writes the result of output `o` from this block's state `s`; with kSplit > 1 the last block
/// to arrive combines every block's partial state first.
__device__ __forceinline__ void finish(const Buffers &b, long long o, Acc s) {
  float *out = slot<float>(b, cfg::kOutSlot);
  const Post post{};
  if constexpr (cfg::kSplit == 1) {
    out[o] = post(finalize(s), i64(o), b);
  } else {
    Acc *part = slot<Acc>(b, cfg::kWorkSlot);
    unsigned *count = reinterpret_cast<unsigned *>(part + cfg::kNumOut * cfg::kSplit);
    part[o * cfg::kSplit + blockIdx.y] = s;
    __threadfence(); // the partial is visible before the counter says so
    const unsigned arrived = atomicAdd(&count[o], 1u);
    if (arrived != cfg::kSplit - 1)
      return;
    __threadfence();
    Acc total = init();
    for (int k = 0; k < cfg::kSplit; ++k) {
      // L2 loads: the partials were written by other multiprocessors.
      Acc p;
      p.a = __ldcg(&part[o * cfg::kSplit + k].a);
      p.c = __ldcg(&part[o * cfg::kSplit + k].c);
      merge(total, p);
    }
    count[o] = 0;
    out[o] = post(finalize(total), i64(o), b);
  }
}

} // namespace sinter::reduce

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace sinter::reduce;
  static_assert(cfg::kMode != 0 || cfg::kTeam <= 32 || cfg::kThreads == cfg::kTeam,
                "a team wider than a warp owns its block");
  static_assert(cfg::kMode != 1 || cfg::kThreads == 32 * cfg::kRows * cfg::kCols,
                "one warp per row and column group");
  static_assert(cfg::kSplit * cfg::kChunk >= cfg::kR, "the chunks cover the reduced range");
  const long long r0 = (long long)blockIdx.y * cfg::kChunk;
  const long long r1 = r0 + cfg::kChunk < cfg::kR ? r0 + cfg::kChunk : cfg::kR;
  Acc s = init();
  if constexpr (cfg::kMode == 0) {
    constexpr int kTeams = cfg::kThreads / cfg::kTeam;
    const int lane = threadIdx.x % cfg::kTeam;
    const long long o = (long long)blockIdx.x * kTeams + threadIdx.x / cfg::kTeam;
    const bool active = o < cfg::kNumOut;
    if (active)
      accumulate(s, b, keptOffset(Index(o)), r0, r1, lane, cfg::kTeam);
    // Every lane takes part in the shuffles, active or not.
    laneReduce<(cfg::kTeam < 32 ? cfg::kTeam : 32)>(s);
    if constexpr (cfg::kTeam > 32) {
      constexpr int kWarps = cfg::kThreads / 32;
      __shared__ Acc warpState[kWarps];
      if (threadIdx.x % 32 == 0)
        warpState[threadIdx.x / 32] = s;
      __syncthreads();
      if (threadIdx.x >= 32)
        return;
      s = threadIdx.x < kWarps ? warpState[threadIdx.x] : init();
      laneReduce<32>(s);
    }
    if (lane == 0 && active)
      finish(b, o, s);
  } else {
    const int tx = threadIdx.x % 32, ty = (threadIdx.x / 32) % cfg::kRows;
    const int col = threadIdx.x / (32 * cfg::kRows);
    const long long o = ((long long)blockIdx.x * cfg::kCols + col) * 32 + tx;
    const bool active = o < cfg::kNumOut;
    if (active)
      accumulate(s, b, keptOffset(Index(o)), r0, r1, ty, cfg::kRows);
    if constexpr (cfg::kRows > 1) {
      __shared__ Acc rowState[cfg::kCols][cfg::kRows][32];
      rowState[col][ty][tx] = s;
      __syncthreads();
      if (ty != 0)
        return;
      // A fixed order, so the result does not depend on timing.
      for (int k = 1; k < cfg::kRows; ++k)
        merge(s, rowState[col][k][tx]);
    }
    if (active)
      finish(b, o, s);
  }
}
