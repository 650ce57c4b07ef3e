//===- templates/softmax.cuh - softmax and log_softmax along one dim ---------------===//
//
// The input (slot 0) is viewed as [kOuter, kD, kInner], softmax taken along kD, the result
// written to slot cfg::kOutSlot with the same layout. Each line is done in two passes: a first
// pass keeps a running (max, sum of exp(x - max)) so that no exponential overflows (the usual
// stable form, in one read), a second pass writes exp(x - max) / sum, or x - max - log(sum) for
// log_softmax. Two shapes of work, as in reduce.cuh:
//
//  - kMode 0 (kInner == 1, lines are contiguous rows): a team of kTeam threads owns a row and
//    strides along it, combining its lanes with shuffles (and shared memory when kTeam > 32).
//  - kMode 1 (kInner > 1): the 32 lanes of a warp own 32 consecutive (outer, inner) lines, so
//    each step along kD reads 32 consecutive addresses; kRows warps split kD and combine their
//    states through shared memory.
//
// Expects in namespace cfg: kOuter, kD, kInner, kLog, kMode, kThreads, kTeam (mode 0), kRows
// (mode 1), kOutSlot; and structs Load (each input element, flat index; it is called in both
// passes, so it must be a pure function) and Post (each result, flat index).
//
//===--------------------------------------------------------------------------------===//

namespace sinter::softmax {

/// Running max and sum of exp(x - max) of part of a line.
struct State {
  float m, s;
};

__device__ __forceinline__ void add(State &st, float x) {
  if (x > st.m) {
    st.s = st.s * expf(st.m - x) + 1.f;
    st.m = x;
  } else if (x == st.m) {
    st.s += 1.f;
  } else if (x != -kInf) {
    st.s += expf(x - st.m); // NaN input gives a NaN sum, as torch gives NaN
  }
}

__device__ __forceinline__ void merge(State &st, State o) {
  const float m = fmaxf(st.m, o.m);
  if (m == -kInf)
    return;
  st.s = (st.m == m ? st.s : st.s * expf(st.m - m)) + (o.m == m ? o.s : o.s * expf(o.m - m));
  st.m = m;
}

template <int Width> __device__ __forceinline__ void laneReduce(State &st) {
#pragma unroll
  for (int o = Width / 2; o > 0; o >>= 1) {
    State other;
    other.m = __shfl_xor_sync(0xffffffffu, st.m, o);
    other.s = __shfl_xor_sync(0xffffffffu, st.s, o);
    merge(st, other);
  }
}

/// Runs both passes over the line starting at input offset `base` with elements `stride`
/// apart, this thread taking elements lane, lane + lanes, ...; `combine` turns the thread's
/// state into the whole line's state (it is called by every thread of the block).
template <class Combine>
__device__ __forceinline__ void line(const Buffers &b, long long base, long long stride, int lane,
                                     int lanes, bool active, Combine combine) {
  const float *__restrict__ x = slot<const float>(b, 0);
  float *out = slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  State st{-kInf, 0.f};
  if (active)
    for (long long d = lane; d < cfg::kD; d += lanes) {
      const long long i = base + d * stride;
      add(st, load(__ldg(x + i), i, b));
    }
  st = combine(st);
  if (!active)
    return;
  const float logSum = logf(st.s);
  const float inv = 1.f / st.s;
  for (long long d = lane; d < cfg::kD; d += lanes) {
    const long long i = base + d * stride;
    const float v = load(__ldg(x + i), i, b) - st.m;
    out[i] = post(cfg::kLog ? v - logSum : expf(v) * inv, i, b);
  }
}

} // namespace sinter::softmax

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace sinter::softmax;
  static_assert(cfg::kMode != 0 || cfg::kInner == 1, "row mode reads contiguous rows");
  static_assert(cfg::kMode != 0 || cfg::kTeam <= 32 || cfg::kThreads == cfg::kTeam,
                "a team wider than a warp owns its block");
  static_assert(cfg::kMode != 1 || cfg::kThreads == 32 * cfg::kRows, "one warp per row");
  if constexpr (cfg::kMode == 0) {
    constexpr int kTeams = cfg::kThreads / cfg::kTeam;
    const long long row = (long long)blockIdx.x * kTeams + threadIdx.x / cfg::kTeam;
    const bool active = row < cfg::kOuter;
    line(b, row * cfg::kD, 1, threadIdx.x % cfg::kTeam, cfg::kTeam, active, [](State st) {
      laneReduce<(cfg::kTeam < 32 ? cfg::kTeam : 32)>(st);
      if constexpr (cfg::kTeam > 32) {
        constexpr int kWarps = cfg::kThreads / 32;
        __shared__ State warpState[kWarps];
        if (threadIdx.x % 32 == 0)
          warpState[threadIdx.x / 32] = st;
        __syncthreads();
        st = warpState[0];
        for (int k = 1; k < kWarps; ++k)
          merge(st, warpState[k]);
      }
      return st;
    });
  } else {
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
    const long long q = (long long)blockIdx.x * 32 + tx; // line index over (outer, inner)
    const bool active = q < cfg::kOuter * cfg::kInner;
    const long long base = (q / cfg::kInner) * cfg::kD * cfg::kInner + q % cfg::kInner;
    line(b, base, cfg::kInner, ty, cfg::kRows, active, [tx, ty](State st) {
      if constexpr (cfg::kRows > 1) {
        __shared__ State rowState[cfg::kRows][32];
        rowState[ty][tx] = st;
        __syncthreads();
        st = rowState[0][tx];
        for (int k = 1; k < cfg::kRows; ++k)
          merge(st, rowState[k][tx]);
      }
      return st;
    });
  }
}
