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
//    states through shared memory; a block holds kCols such groups of 32 lines.
//  - kMode 2 (kInner > 1, a short kD: softmax over the channels of an image): a thread owns kVec
//    consecutive lines and holds all kD * kVec of their elements in registers, so the input is
//    read once (16-byte loads when kVec == 4) and each element costs one exponential.
//  - kMode 3 (kInner > 1, a kD too long for one thread's registers, e.g. 128 channels): as
//    mode 1, the 32 lanes of a warp own 32 consecutive lines and kRows warps split kD, but
//    each thread holds its kPer = ceil(kD / kRows) elements of its line in registers: the line's
//    maximum and then its sum of exponentials are combined through shared memory, so the input
//    is read once, with kPer independent loads in flight a thread, and each element costs one
//    exponential (ex2.approx).
//  - kMode 4 (kInner == 1, rows of up to 8192): as mode 0, a team of kTeam threads owns a
//    row, but each thread holds its part of the row in registers, kVec-wide vectors kTeam
//    vectors apart (at most 32 elements a thread), so the row is read once and each element
//    costs one exponential (ex2.approx) instead of mode 0's two reads and running state.
//
// Expects in namespace cfg: kOuter, kD, kInner, kLog, kMode, kThreads, kTeam (modes 0 and 4),
// kRows and kCols (modes 1 and 3), kVec (modes 2 and 4), kOutSlot; and structs Load (each input
// element, flat index; it is called in both passes of modes 0 and 1, so it must be a pure function)
// and Post (each result, flat index).
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

/// V consecutive floats at x + i into v (one 16- or 8-byte load for V of 4 or 2).
template <int V>
__device__ __forceinline__ void loadVec(const float *__restrict__ x, long long i, float (&v)[V]) {
  if constexpr (V == 4) {
    const float4 q = __ldg(reinterpret_cast<const float4 *>(x + i));
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else if constexpr (V == 2) {
    const float2 q = __ldg(reinterpret_cast<const float2 *>(x + i));
    v[0] = q.x, v[1] = q.y;
  } else {
    v[0] = __ldg(x + i);
  }
}

/// y into the V consecutive floats at out + i.
template <int V>
__device__ __forceinline__ void storeVec(float *out, long long i, const float (&y)[V]) {
  if constexpr (V == 4)
    *reinterpret_cast<float4 *>(out + i) = make_float4(y[0], y[1], y[2], y[3]);
  else if constexpr (V == 2)
    *reinterpret_cast<float2 *>(out + i) = make_float2(y[0], y[1]);
  else
    out[i] = y[0];
}

/// kMode 2: the kVec lines starting at input offset `base`, held in registers.
__device__ __forceinline__ void cachedLines(const Buffers &b, long long base) {
  constexpr int V = cfg::kVec;
  const float *__restrict__ x = slot<const float>(b, 0);
  float *out = slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  float v[cfg::kD][V], m[V];
#pragma unroll
  for (int e = 0; e < V; ++e)
    m[e] = -kInf;
#pragma unroll
  for (int d = 0; d < cfg::kD; ++d) {
    const long long i = base + (long long)d * cfg::kInner;
    loadVec<V>(x, i, v[d]);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      v[d][e] = load(v[d][e], i + e, b);
      // NaN is kept out of the max; it still makes its line's sum NaN, as in torch.
      m[e] = fmaxf(m[e], v[d][e]);
    }
  }
  float sum[V];
#pragma unroll
  for (int e = 0; e < V; ++e)
    sum[e] = 0.f;
#pragma unroll
  for (int d = 0; d < cfg::kD; ++d)
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const float t = expf(v[d][e] - m[e]);
      sum[e] += t;
      if constexpr (!cfg::kLog)
        v[d][e] = t;
    }
  float k[V];
#pragma unroll
  for (int e = 0; e < V; ++e)
    k[e] = cfg::kLog ? m[e] + logf(sum[e]) : 1.f / sum[e];
#pragma unroll
  for (int d = 0; d < cfg::kD; ++d) {
    const long long i = base + (long long)d * cfg::kInner;
    float y[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
      y[e] = post(cfg::kLog ? v[d][e] - k[e] : v[d][e] * k[e], i + e, b);
    storeVec<V>(out, i, y);
  }
}

/// kMode 3: thread (col, ty, tx) holds elements ty * kPer .. of line q (see the header);
/// every thread of the block calls it (`active` false past the last line).
__device__ __forceinline__ void splitLine(const Buffers &b, long long base, bool active, int tx,
                                          int ty, int col) {
  constexpr int kPer = (cfg::kD + cfg::kRows - 1) / cfg::kRows;
  const float *__restrict__ x = slot<const float>(b, 0);
  float *out = slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  __shared__ float part[2][cfg::kCols][cfg::kRows][32];
  float v[kPer];
  float m = -kInf;
#pragma unroll
  for (int e = 0; e < kPer; ++e) {
    const int d = ty * kPer + e;
    const long long i = base + (long long)d * cfg::kInner;
    v[e] = active && d < cfg::kD ? load(__ldg(x + i), i, b) : -kInf;
    // NaN is kept out of the max; it still makes its line's sum NaN, as in torch.
    m = fmaxf(m, v[e]);
  }
  part[0][col][ty][tx] = m;
  __syncthreads();
#pragma unroll
  for (int k = 0; k < cfg::kRows; ++k)
    m = fmaxf(m, part[0][col][k][tx]);
  float sum = 0.f;
#pragma unroll
  for (int e = 0; e < kPer; ++e)
    if (ty * kPer + e < cfg::kD) {
      // expApprox's error grows with |v - m|, and v - m <= 0: the larger it is, the less the
      // element weighs in the sum. expf's range reduction cost
      // convt2d_kb91_softmax_bias_scale_sigmoid's kernel, about 47 instructions an element,
      // measurable time (see the emitter's rows).
      const float t = expApprox(v[e] - m);
      sum += t;
      if constexpr (!cfg::kLog)
        v[e] = t;
    }
  part[1][col][ty][tx] = sum;
  __syncthreads();
  sum = 0.f;
#pragma unroll
  for (int k = 0; k < cfg::kRows; ++k)
    sum += part[1][col][k][tx];
  if (!active)
    return;
  const float k = cfg::kLog ? m + logf(sum) : 1.f / sum;
#pragma unroll
  for (int e = 0; e < kPer; ++e) {
    const int d = ty * kPer + e;
    if (d < cfg::kD) {
      const long long i = base + (long long)d * cfg::kInner;
      out[i] = post(cfg::kLog ? v[e] - k : v[e] * k, i, b);
    }
  }
}

/// The max (Max) or the sum of v over the thread's team of kTeam threads (mode 4: a team of
/// at most 32 lanes within a warp, or the whole block); every thread of the block calls it.
template <bool Max> __device__ __forceinline__ float teamAll(float v) {
#pragma unroll
  for (int o = (cfg::kTeam < 32 ? cfg::kTeam : 32) / 2; o > 0; o >>= 1) {
    const float u = __shfl_xor_sync(0xffffffffu, v, o);
    v = Max ? fmaxf(v, u) : v + u;
  }
  if constexpr (cfg::kTeam > 32) {
    constexpr int kWarps = cfg::kThreads / 32;
    __shared__ float part[kWarps]; // (one array a use: the max's is still read while the
                                   // sum's is written)
    if (threadIdx.x % 32 == 0)
      part[threadIdx.x / 32] = v;
    __syncthreads();
    v = part[0];
#pragma unroll
    for (int k = 1; k < kWarps; ++k)
      v = Max ? fmaxf(v, part[k]) : v + part[k];
  }
  return v;
}

/// kMode 4: row `row` held in the registers of its team; `lane` is the thread's place in the
/// team. Every thread of the block calls it (`active` false past the last row).
__device__ __forceinline__ void cachedRow(const Buffers &b, long long row, bool active, int lane) {
  constexpr int V = cfg::kVec, kVecs = cfg::kD / V;
  constexpr int kSteps = (kVecs + cfg::kTeam - 1) / cfg::kTeam;
  const float *__restrict__ x = slot<const float>(b, 0);
  float *out = slot<float>(b, cfg::kOutSlot);
  const Load load{};
  const Post post{};
  const long long base = row * cfg::kD;
  float v[kSteps][V];
  float m = -kInf;
#pragma unroll
  for (int j = 0; j < kSteps; ++j) {
    const int q = lane + j * cfg::kTeam;
    const long long i = base + (long long)q * V;
    if (active && q < kVecs) {
      loadVec<V>(x, i, v[j]);
#pragma unroll
      for (int e = 0; e < V; ++e) {
        v[j][e] = load(v[j][e], i + e, b);
        // NaN is kept out of the max; it still makes its row's sum NaN, as in torch.
        m = fmaxf(m, v[j][e]);
      }
    }
  }
  m = teamAll<true>(m);
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kSteps; ++j)
    if (active && lane + j * cfg::kTeam < kVecs)
#pragma unroll
      for (int e = 0; e < V; ++e) {
        const float t = expApprox(v[j][e] - m); // (as in splitLine)
        sum += t;
        if constexpr (!cfg::kLog)
          v[j][e] = t;
      }
  sum = teamAll<false>(sum);
  if (!active)
    return;
  const float k = cfg::kLog ? m + logf(sum) : 1.f / sum;
#pragma unroll
  for (int j = 0; j < kSteps; ++j) {
    const int q = lane + j * cfg::kTeam;
    if (q >= kVecs)
      break;
    const long long i = base + (long long)q * V;
    float y[V];
#pragma unroll
    for (int e = 0; e < V; ++e)
      y[e] = post(cfg::kLog ? v[j][e] - k : v[j][e] * k, i + e, b);
    storeVec<V>(out, i, y);
  }
}

} // namespace sinter::softmax

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace sinter::softmax;
  static_assert(cfg::kMode != 0 || cfg::kInner == 1, "row mode reads contiguous rows");
  static_assert(cfg::kMode != 0 || cfg::kTeam <= 32 || cfg::kThreads == cfg::kTeam,
                "a team wider than a warp owns its block");
  static_assert((cfg::kMode != 1 && cfg::kMode != 3) ||
                    cfg::kThreads == 32 * cfg::kRows * cfg::kCols,
                "one warp per row and column group");
  static_assert(cfg::kMode != 3 || (cfg::kD + cfg::kRows - 1) / cfg::kRows <= 32,
                "split lines: at most 32 elements a thread");
  static_assert(cfg::kMode != 2 || cfg::kInner % cfg::kVec == 0, "whole vectors of lines");
  static_assert(cfg::kMode != 4 ||
                    (cfg::kInner == 1 && cfg::kD % cfg::kVec == 0 && cfg::kD <= 32 * cfg::kTeam &&
                     (cfg::kTeam <= 32 || cfg::kThreads == cfg::kTeam)),
                "rows in registers: whole vectors, at most 32 elements a thread");
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
  } else if constexpr (cfg::kMode == 1) {
    const int tx = threadIdx.x % 32, ty = (threadIdx.x / 32) % cfg::kRows;
    const int col = threadIdx.x / (32 * cfg::kRows);
    // line index over (outer, inner)
    const long long q = ((long long)blockIdx.x * cfg::kCols + col) * 32 + tx;
    const bool active = q < cfg::kOuter * cfg::kInner;
    const long long base = (q / cfg::kInner) * cfg::kD * cfg::kInner + q % cfg::kInner;
    line(b, base, cfg::kInner, ty, cfg::kRows, active, [tx, ty, col](State st) {
      if constexpr (cfg::kRows > 1) {
        __shared__ State rowState[cfg::kCols][cfg::kRows][32];
        rowState[col][ty][tx] = st;
        __syncthreads();
        st = rowState[col][0][tx];
        for (int k = 1; k < cfg::kRows; ++k)
          merge(st, rowState[col][k][tx]);
      }
      return st;
    });
  } else if constexpr (cfg::kMode == 4) {
    constexpr int kTeams = cfg::kThreads / cfg::kTeam;
    const long long row = (long long)blockIdx.x * kTeams + threadIdx.x / cfg::kTeam;
    cachedRow(b, row, row < cfg::kOuter, threadIdx.x % cfg::kTeam);
  } else if constexpr (cfg::kMode == 3) {
    const int tx = threadIdx.x % 32, ty = (threadIdx.x / 32) % cfg::kRows;
    const int col = threadIdx.x / (32 * cfg::kRows);
    const long long q = ((long long)blockIdx.x * cfg::kCols + col) * 32 + tx;
    const bool active = q < cfg::kOuter * cfg::kInner;
    const long long qq = active ? q : 0;
    splitLine(b, (qq / cfg::kInner) * cfg::kD * cfg::kInner + qq % cfg::kInner, active, tx, ty,
              col);
  } else {
    // (Checked in every mode, the kernel not being a template: mode 4 has kVec > kInner.)
    constexpr long long kVecsPerOuter = cfg::kMode == 2 ? cfg::kInner / cfg::kVec : 1;
    const long long q = (long long)blockIdx.x * cfg::kThreads + threadIdx.x;
    if (q >= cfg::kOuter * kVecsPerOuter)
      return;
    cachedLines(b, (q / kVecsPerOuter) * cfg::kD * cfg::kInner + (q % kVecsPerOuter) * cfg::kVec);
  }
}
