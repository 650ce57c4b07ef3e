//===- templates/conv_direct.cuh - direct (FFMA) convolution for few channels per group ===//
//
// Convolution and transposed convolution, 1-, 2- or 3-D (the spatial dims are always D, H, W;
// lower ranks have size-1 leading dims), with stride, padding, dilation, groups, bias and
// output_padding (already in the output size), computed in fp32 FMA straight from the input:
// no im2col, no zero insertion. It is meant for convolutions with few channels per group,
// which are memory-bound and would waste tensor-core tiles.
//
// Work split: block (x, y, z) = (spatial chunk, group * channel block, batch n). Each thread
// owns a kVH x kVW patch of output positions (along H and W at one depth) for kCB output
// channels of one group, so every loaded input feeds up to KH*KW*kCB FMAs from registers.
// Threads of a warp are consecutive along W, so input loads and output stores are
// coalesced. For a transposed convolution with stride s, kVH and kVW are multiples of s and
// patches start at a fixed output phase; which tap reaches which output is then known at
// compile time (taps that would land on inserted zeros are never issued), so the kernel does
// only the useful work of the phase decomposition. When the emitter proves that every patch
// row starts at an even column of an even-width input (kVecX == 2), patch rows are loaded as
// float2, and with kVecStore output pairs are stored as float2. With kClampTiles (unpadded
// convolutions) the last blocks along H and W are moved back inside the output, so patches
// need no bounds checks. Depth taps are checked at run time (the check is uniform over a
// warp except where a warp straddles two depths). With kPipeline
// (chosen by the emitter when a patch feeds few FMAs, so its own work cannot hide the load
// latency) the next input patch is loaded while the current one is used.
//
// The weights of the block's channels are staged once in shared memory in the order
// [ci][tap][channel] so that a thread fetches the kCB weights of a tap with 16-byte
// broadcast loads. Those broadcasts move 16 bytes into every lane, so the emitter keeps the
// ratio of FMAs to weight loads high (several output positions per weight). Per-(n, c)
// statistics (sum and sum of squares of the epilogue's output) are reduced in registers, then
// over the warp with a reduce-scatter (each shuffle step halves the values a lane holds), then
// over the block, and added with one double atomic per (n, c, block).
//
// With kPool the kernel also runs a max or average pool whose windows (kPKD x kPKH x kPKW,
// stride = window, no padding or dilation, the last windows clipped where ceil_mode gave
// them) tile the output: a patch is whole windows along H and W (kVH, kVW multiples of the
// window, patches at multiples of kVH and kVW, so a transposed convolution's patches start
// at phase kPhaseH, kPhaseW), and a thread computes its patch at the kPKD depths of one
// window depth in turn, folding each epilogue value into its window. Only the pooled tensor
// [N, C, kPOD, kPOH, kPOW] is stored, after the PoolEpilogue functor (the chain after the
// pool); the convolution's output never reaches memory.
//
// With kSoftmax (one group, every output channel in one thread: kCB == kCout) a softmax or,
// with kSoftmaxLog, a log_softmax over the channels of each position follows the epilogue
// in registers, then the SoftmaxEpilogue functor (the chain after it); what is stored, or
// pooled with kPool, is that result.
//
// With kCReduce (one group, kCB == kCout, no pool) each position's epilogue values are
// reduced over the channels (1 sum, 2 mean, 3 max, 4 min by sinter::ChannelFold; 5 logsumexp
// in two passes), then the CReduceEpilogue functor (c = 0); only that is stored, into slot 3
// as [N, kOD, kOH, kOW].
//
// Slots: 0 x, 1 w, 2 bias, 3 y, 4 stats (double[N*Cout*2]), 5 and 8..15 for the epilogue.
// x and y must be 8-byte aligned for the float2 paths (runtime buffers are 256-byte pieces).
// The prologue defines, in namespace cfg, the constants used below and `struct Epilogue`
// (compiler/kernels/Emit.h: anchor epilogue).
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "common.cuh"

namespace sinter {
namespace conv_direct {

__host__ __device__ constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
__host__ __device__ constexpr int floorDiv(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/// The tap pattern of one blocked dim. Output j of a patch (relative to the patch origin)
/// and tap k meet input (relative to the patch's input base) off(j, k) when hit(j, k).
/// Convolution: i = o*S - P + k*D, always a hit. Transposed: o = i*S - P + k*D, a hit when
/// (j - k*D) divides by S, which is a compile-time fact because patches start at a phase
/// where o + P is a multiple of S. A patch that starts where o + P is R modulo S instead (a
/// pooled kernel's, whose patches start at the pool's windows) shifts j by R: still a
/// compile-time fact.
template <bool Transposed, int S, int Dil, int V, int K, int R = 0> struct Dim {
  __host__ __device__ static constexpr bool hit(int j, int k) {
    return !Transposed || (j + R - k * Dil) % S == 0;
  }
  __host__ __device__ static constexpr int off(int j, int k) {
    return Transposed ? floorDiv(j + R - k * Dil, S) : j * S + k * Dil;
  }
  __host__ __device__ static constexpr int lo() {
    int m = 1 << 30;
    for (int j = 0; j < V; ++j)
      for (int k = 0; k < K; ++k)
        if (hit(j, k) && off(j, k) < m)
          m = off(j, k);
    return m;
  }
  __host__ __device__ static constexpr int hi() {
    int m = -(1 << 30);
    for (int j = 0; j < V; ++j)
      for (int k = 0; k < K; ++k)
        if (hit(j, k) && off(j, k) > m)
          m = off(j, k);
    return m;
  }
  /// Input positions a patch reads along this dim.
  __host__ __device__ static constexpr int size() { return hi() - lo() + 1; }
  /// Input base of the patch whose first output is o0.
  static __device__ __forceinline__ int base(int o0, int pad) {
    return Transposed ? (o0 + pad - R) / S : o0 * S - pad;
  }
};

} // namespace conv_direct
} // namespace sinter

namespace cfg {
constexpr int kTaps = kKD * kKH * kKW;
constexpr int kWeightFloats = kCinG * kTaps * kCB;

/// Where the patch of thread t (counted over the grid's x dim) lies: its output depth (with
/// kPool, the pooled depth: the patch is computed at that window's kPKD depths), its
/// nominal first row and column (ohN, owN) and its first row and column (oh0, ow0). With
/// kClampTiles (a convolution without H/W padding) the last blocks along H and W are moved
/// back to end at the output's edge, so that every patch lies inside the input and loads need
/// no checks; the outputs they repeat belong to the previous block and are skipped at the
/// stores.
struct Patch {
  bool active;
  int od, ohN, owN, oh0, ow0;
  __device__ explicit Patch(sinter::i64 t) {
    active = t < (sinter::i64)(kPool ? kPOD : kOD) * kHBlocks * kWBlocks;
    const int wb = (int)(t % kWBlocks);
    const int hb = (int)((t / kWBlocks) % kHBlocks);
    od = (int)(t / ((sinter::i64)kWBlocks * kHBlocks));
    ohN = hb * kVH - kAlignH, owN = wb * kVW - kAlignW;
    oh0 = kClampTiles ? min(ohN, kOH - kVH) : ohN;
    ow0 = kClampTiles ? min(owN, kOW - kVW) : owN;
  }
  /// Whether the patch's row j and column i are outputs this thread owns.
  __device__ bool rowOk(int j) const {
    return kClampTiles ? oh0 + j >= ohN : oh0 + j >= 0 && oh0 + j < kOH;
  }
  __device__ bool colOk(int i) const {
    return kClampTiles ? ow0 + i >= owN : ow0 + i >= 0 && ow0 + i < kOW;
  }
  /// Calls fn(j, i, s) for each position (row j, column i) of the patch that this thread owns
  /// at depth od, s being its index within an (n, c) plane of y.
  template <class F> __device__ __forceinline__ void eachPosition(int od, F &&fn) const {
#pragma unroll
    for (int j = 0; j < kVH; ++j) {
      if (!rowOk(j))
        continue;
      const sinter::i64 rowBase = ((sinter::i64)od * kOH + oh0 + j) * kOW;
#pragma unroll
      for (int i = 0; i < kVW; ++i)
        if (colOk(i))
          fn(j, i, rowBase + ow0 + i);
    }
  }
};
} // namespace cfg

extern "C" __global__ void __launch_bounds__(cfg::kThreads, cfg::kMinBlocks)
    SINTER_KERNEL(const sinter::Buffers b) {
  using namespace cfg;
  using sinter::i64;
  using DimH = sinter::conv_direct::Dim<kTransposed, kSH, kDH, kVH, kKH, kPhaseH>;
  using DimW = sinter::conv_direct::Dim<kTransposed, kSW, kDW, kVW, kKW, kPhaseW>;
  constexpr int kPH = DimH::size(), kPW = DimW::size();
  constexpr int kLoH = DimH::lo(), kLoW = DimW::lo();
  static_assert(!kTransposed || (kVH % kSH == 0 && kVW % kSW == 0),
                "transposed patches must cover whole phases");
  static_assert(kN >= 1 && kCin % kCinG == 0, "bad channel counts");
  static_assert(!kPipeline || kPH * kPW <= 64, "prefetched patches hold at most 64 elements");
  static_assert(!kWeightsShared || kWeightFloats * 4 <= 40 * 1024, "weights too large");
  static_assert(kVecX == 1 || (kVecX == 2 && kPW % 2 == 0 && kIW % 2 == 0),
                "float2 patch rows need an even patch width and input width");
  static_assert(!kVecStore || (kVW % 2 == 0 && kOW % 2 == 0 && kAlignW % 2 == 0),
                "float2 stores need even output pairs");
  static_assert(!kClampTiles || (!kTransposed && kPadH == 0 && kPadW == 0 && kOH >= kVH &&
                                 kOW >= kVW && (kVecX == 1 || (kOW - kVW) % 2 == 0)),
                "clamped tiles need an unpadded convolution at least one patch wide");
  static_assert(!kPool || (kVH % kPKH == 0 && kVW % kPKW == 0 && kAlignH == 0 && kAlignW == 0 &&
                           !kClampTiles && !kAccStats && kStoreOutput),
                "a pooled patch is whole windows from the output's origin, stored pooled only");
  static_assert(kPool || (kPhaseH == 0 && kPhaseW == 0 && kPKD == 1), "phases are for pools");
  static_assert(!kSoftmax || (kCB == kCout && kCoutG == kCout && !kAccStats && kStoreOutput),
                "a softmax over channels needs every channel of one group in one thread");
  static_assert(kCReduce == 0 || (kCB == kCout && kCoutG == kCout && !kAccStats && kStoreOutput &&
                                  !kPool && !kSoftmax),
                "a reduction over channels needs every channel of one group in one thread");

  __shared__ __align__(16) float sw[kWeightsShared ? kWeightFloats : 4];

  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  const float *__restrict__ w = sinter::slot<const float>(b, 1);
  const int n = blockIdx.z;
  const int g = blockIdx.y / kCBlocks;
  const int co0 = (blockIdx.y % kCBlocks) * kCB; // first channel of the block within the group

  // Weight of input channel ci (within the group), output channel col (within the group), tap.
  auto weightIndex = [&](int ci, int col, int tap) -> i64 {
    return kTransposed ? ((i64)(g * kCinG + ci) * kCoutG + col) * kTaps + tap
                       : ((i64)(g * kCoutG + col) * kCinG + ci) * kTaps + tap;
  };
  if constexpr (kWeightsShared) {
    // One (input channel, tap) pair per thread and step: the kCB channels' weights of a pair
    // are one index computation and kCB loads.
    for (int e = threadIdx.x; e < kCinG * kTaps; e += kThreads) {
      const int tap = e % kTaps, ci = e / kTaps;
#pragma unroll
      for (int c = 0; c < kCB; ++c)
        sw[e * kCB + c] = co0 + c < kCoutG ? __ldg(w + weightIndex(ci, co0 + c, tap)) : 0.f;
    }
    __syncthreads();
  }

  const i64 t = (i64)blockIdx.x * kThreads + threadIdx.x;
  const Patch me(t);
  const bool active = me.active;
  const int oh0 = me.oh0, ow0 = me.ow0;

  // With kPool: each channel's windows of the patch, folded over the depths of the window.
  constexpr int kWinH = kPool ? kVH / kPKH : 1, kWinW = kPool ? kVW / kPKW : 1;
  float pooled[kPool ? kCB : 1][kWinH][kWinW];
#pragma unroll
  for (int c = 0; c < (kPool ? kCB : 1); ++c)
#pragma unroll
    for (int j = 0; j < kWinH; ++j)
#pragma unroll
      for (int i = 0; i < kWinW; ++i)
        pooled[c][j][i] = kPoolMax ? -sinter::kInf : 0.f;

  // kSoftmax: the epilogue, the softmax over the channels of each position of the patch and
  // the chain after it, in place: a then holds what is stored or pooled.
  auto channelSoftmax = [&](float(&a)[kCB][kVH][kVW], int od) {
    if (!active)
      return;
    const cfg::Epilogue epilogue;
    const cfg::SoftmaxEpilogue post;
    const float *__restrict__ bias = sinter::slot<const float>(b, 2);
    me.eachPosition(od, [&](int j, int i, i64 s) {
      float m = -sinter::kInf;
#pragma unroll
      for (int c = 0; c < kCB; ++c) {
        const float v = kHasBias ? a[c][j][i] + __ldg(bias + c) : a[c][j][i];
        a[c][j][i] = epilogue(v, n, c, s, b);
        m = fmaxf(m, a[c][j][i]); // NaN stays out of the max and makes the sum NaN
      }
      float sum = 0.f;
#pragma unroll
      for (int c = 0; c < kCB; ++c) {
        const float t = expf(a[c][j][i] - m);
        sum += t;
        if constexpr (!kSoftmaxLog)
          a[c][j][i] = t;
      }
      const float k = kSoftmaxLog ? m + logf(sum) : 1.f / sum;
#pragma unroll
      for (int c = 0; c < kCB; ++c)
        a[c][j][i] = post(kSoftmaxLog ? a[c][j][i] - k : a[c][j][i] * k, n, c, s, b);
    });
  };

  // kCReduce: the epilogue's values of each position of the patch folded over the channels,
  // the chain after the reduction, and one store a position. A logsumexp keeps the values
  // in `a` for its second pass (the maximum first, then one exponential a value).
  auto reduceChannels = [&](float(&a)[kCB][kVH][kVW], int od) {
    if (!active)
      return;
    constexpr bool kLse = kCReduce == sinter::kFoldLogSumExp;
    using Fold = sinter::ChannelFold<kLse || kCReduce == 0 ? sinter::kFoldMax : kCReduce>;
    const cfg::Epilogue epilogue;
    const cfg::CReduceEpilogue post;
    const float *__restrict__ bias = sinter::slot<const float>(b, 2);
    float *__restrict__ out = sinter::slot<float>(b, 3) + (i64)n * kOD * kOH * kOW;
    me.eachPosition(od, [&](int j, int i, i64 s) {
      Fold fold;
#pragma unroll
      for (int c = 0; c < kCB; ++c) {
        const float v = epilogue(kHasBias ? a[c][j][i] + __ldg(bias + c) : a[c][j][i], n, c, s, b);
        if constexpr (kLse)
          a[c][j][i] = v;
        fold.add(v);
      }
      float r = fold.result(kCout);
      if constexpr (kLse) {
        const float shift = sinter::logSumExpShift(r);
        float sum = 0.f;
#pragma unroll
        for (int c = 0; c < kCB; ++c)
          sum += expf(a[c][j][i] - shift);
        r = logf(sum) + shift;
      }
      out[s] = post(r, n, 0, s, b);
    });
  };

  // kPool: folds the epilogue's values of the patch at depth od into the patch's windows.
  auto foldIntoWindows = [&](const float(&a)[kCB][kVH][kVW],
                             float(&win)[kPool ? kCB : 1][kWinH][kWinW], int od) {
    const cfg::Epilogue epilogue;
    const float *__restrict__ bias = sinter::slot<const float>(b, 2);
#pragma unroll
    for (int c = 0; c < kCB; ++c) {
      const int co = g * kCoutG + co0 + c;
      if (!active || (kCoutG % kCB != 0 && co0 + c >= kCoutG))
        continue;
      const float bv = kHasBias ? __ldg(bias + co) : 0.f;
#pragma unroll
      for (int j = 0; j < kVH; ++j) {
        if (!me.rowOk(j))
          continue;
        const i64 rowBase = ((i64)od * kOH + oh0 + j) * kOW;
#pragma unroll
        for (int i = 0; i < kVW; ++i) {
          if (!me.colOk(i))
            continue;
          const float v = kSoftmax ? a[c][j][i]
                                   : epilogue(kHasBias ? a[c][j][i] + bv : a[c][j][i], n, co,
                                              rowBase + ow0 + i, b);
          float &m = win[kPool ? c : 0][kPool ? j / kPKH : 0][kPool ? i / kPKW : 0];
          if constexpr (kPoolMax) {
            if (v > m || v != v) // NaN propagates, as in PyTorch's max pool
              m = v;
          } else {
            m += v;
          }
        }
      }
    }
  };
  // kPool: the windows' values (averages over the window's part inside the output) through
  // the chain after the pool, into the pooled tensor.
  auto storePooled = [&](const float(&win)[kPool ? kCB : 1][kWinH][kWinW]) {
    const cfg::PoolEpilogue post;
    float *__restrict__ out = sinter::slot<float>(b, 3);
    const int pd = me.od;
#pragma unroll
    for (int c = 0; c < kCB; ++c) {
      const int co = g * kCoutG + co0 + c;
      if (!active || (kCoutG % kCB != 0 && co0 + c >= kCoutG))
        continue;
      float *oc = out + ((i64)n * kCout + co) * kPOD * kPOH * kPOW;
#pragma unroll
      for (int pj = 0; pj < kWinH; ++pj) {
        const int ph = oh0 / kPKH + pj;
        if (ph >= kPOH)
          continue;
#pragma unroll
        for (int pi = 0; pi < kWinW; ++pi) {
          const int pw = ow0 / kPKW + pi;
          if (pw >= kPOW)
            continue;
          float v = win[kPool ? c : 0][pj][pi];
          if constexpr (!kPoolMax) {
            const int count = min(kPKD, kOD - pd * kPKD) * min(kPKH, kOH - ph * kPKH) *
                              min(kPKW, kOW - pw * kPKW);
            v = v / float(count);
          }
          const i64 s = ((i64)pd * kPOH + ph) * kPOW + pw;
          oc[s] = post(v, n, co, s, b);
        }
      }
    }
  };

  float acc[kCB][kVH][kVW];
  // One depth unless pooled (kPKD is 1 then): the patch at each depth of the pool's window.
#pragma unroll 1
  for (int dd = 0; dd < kPKD; ++dd) {
    const int od = kPool ? me.od * kPKD + dd : me.od;
    if (kPool && od >= kOD)
      break;
#pragma unroll
    for (int c = 0; c < kCB; ++c)
#pragma unroll
      for (int j = 0; j < kVH; ++j)
#pragma unroll
        for (int i = 0; i < kVW; ++i)
          acc[c][j][i] = 0.f;

    // The FMAs of one input patch (channel ci, depth tap kd) into the accumulators: every
    // (kh, kw) tap times every output of the patch it reaches, for the kCB channels.
    auto fmaTaps = [&](const float(&p)[kPH][kPW], int ci, int kd) {
#pragma unroll
      for (int kh = 0; kh < kKH; ++kh)
#pragma unroll
        for (int kw = 0; kw < kKW; ++kw) {
          const int tap = (kd * kKH + kh) * kKW + kw;
          float wv[kCB];
          if constexpr (kWeightsShared && kCB % 4 == 0) {
            const float4 *src = reinterpret_cast<const float4 *>(sw + (ci * kTaps + tap) * kCB);
#pragma unroll
            for (int c = 0; c < kCB / 4; ++c) {
              const float4 v4 = src[c];
              wv[4 * c] = v4.x, wv[4 * c + 1] = v4.y, wv[4 * c + 2] = v4.z, wv[4 * c + 3] = v4.w;
            }
          } else if constexpr (kWeightsShared) {
#pragma unroll
            for (int c = 0; c < kCB; ++c)
              wv[c] = sw[(ci * kTaps + tap) * kCB + c];
          } else {
#pragma unroll
            for (int c = 0; c < kCB; ++c)
              wv[c] = co0 + c < kCoutG ? __ldg(w + weightIndex(ci, co0 + c, tap)) : 0.f;
          }
#pragma unroll
          for (int j = 0; j < kVH; ++j) {
            if (!DimH::hit(j, kh))
              continue;
#pragma unroll
            for (int i = 0; i < kVW; ++i) {
              if (!DimW::hit(i, kw))
                continue;
              const float xv = p[DimH::off(j, kh) - kLoH][DimW::off(i, kw) - kLoW];
#pragma unroll
              for (int c = 0; c < kCB; ++c)
                acc[c][j][i] = fmaf(xv, wv[c], acc[c][j][i]);
            }
          }
        }
    };

    if (active && kPipeline) {
      // Deep-latency variant (little compute per patch): prefetch the next patch.
      // Depth taps that reach this output depth: an arithmetic progression first + m * kdStep,
      // m < kdCount (all in-range taps for a convolution; one phase's for a transposed one).
      constexpr int kdStep = kTransposed ? kSD / sinter::conv_direct::gcd(kSD, kDD) : 1;
      int kdFirst = -1, kdCount = 0;
#pragma unroll
      for (int kd = kKD - 1; kd >= 0; --kd) {
        int id;
        bool ok;
        if constexpr (kTransposed) {
          const int e = od + kPadD - kd * kDD;
          id = e / kSD;
          ok = e >= 0 && e % kSD == 0;
        } else {
          id = od * kSD - kPadD + kd * kDD;
          ok = true;
        }
        if (ok && id >= 0 && id < kID)
          kdFirst = kd, ++kdCount;
      }
      // Patch rows and columns do not depend on the input channel or depth tap: their in-range
      // flags are computed once. Every element is a constant offset from the patch's first
      // (r * kIW + q), so a load needs no address arithmetic; out-of-range elements are not
      // loaded (predicated) and are zero. (Clamping their addresses instead cost ~40 address
      // instructions per patch: the compiler recomputed the six clamped offsets every step.)
      const int ihBase = DimH::base(oh0, kPadH) + kLoH;
      const int iwBase = DimW::base(ow0, kPadW) + kLoW;
      // Bit r * kPW + q: element (r, q) is inside the input plane. It and the origin pass
      // through sinter::opaque so that the compiler keeps them in registers rather than
      // recomputing them from the thread index at every step.
      using Mask = typename sinter::Select<(kPH * kPW <= 32), unsigned, unsigned long long>::Type;
      Mask inside = 0;
#pragma unroll
      for (int r = 0; r < kPH; ++r)
#pragma unroll
        for (int q = 0; q < kPW; ++q)
          inside |= ihBase + r >= 0 && ihBase + r < kIH && iwBase + q >= 0 && iwBase + q < kIW
                        ? Mask(1) << (r * kPW + q)
                        : Mask(0);
      inside = sinter::opaque(inside);
      // The patch origin within the group's first input plane (it may lie before the plane's
      // start or past a row's end; only in-range elements are read).
      const i64 origin =
          sinter::opaque((i64)(n * kCin + g * kCinG) * kID * kIH * kIW + ihBase * kIW + iwBase);
      auto loadPatch = [&](float(&p)[kPH][kPW], int ci, int kd) {
        int id;
        if constexpr (kTransposed)
          id = (od + kPadD - kd * kDD) / kSD;
        else
          id = od * kSD - kPadD + kd * kDD;
        const float *xd = x + (origin + ((i64)ci * kID + id) * kIH * kIW);
#pragma unroll
        for (int r = 0; r < kPH; ++r)
#pragma unroll
          for (int q = 0; q < kPW; ++q)
            p[r][q] = (inside >> (r * kPW + q)) & 1 ? __ldg(xd + r * kIW + q) : 0.f;
      };

      // Software pipeline over (ci, depth tap): the next patch loads while this one is used.
      const int steps = kCinG * kdCount;
      float cur[kPH][kPW];
      if (steps > 0)
        loadPatch(cur, 0, kdFirst);
      int ci = 0, m = 0;
#pragma unroll 1
      for (int step = 0; step < steps; ++step) {
        const int kd = kdFirst + m * kdStep;
        int nci = ci, nm = m + 1;
        if (nm == kdCount)
          nm = 0, ++nci;
        float nxt[kPH][kPW];
        if (step + 1 < steps)
          loadPatch(nxt, nci, kdFirst + nm * kdStep);
        fmaTaps(cur, ci, kd);
#pragma unroll
        for (int r = 0; r < kPH; ++r)
#pragma unroll
          for (int q = 0; q < kPW; ++q)
            cur[r][q] = nxt[r][q];
        ci = nci, m = nm;
      }
    } else if (active) {
      // Shallow variant (much compute per patch): one patch live, loads behind branches.
      const int ihBase = DimH::base(oh0, kPadH) + kLoH;
      const int iwBase = DimW::base(ow0, kPadW) + kLoW;
#pragma unroll 1
      for (int ci = 0; ci < kCinG; ++ci) {
        const float *xc = x + (i64)(n * kCin + g * kCinG + ci) * kID * kIH * kIW;
#pragma unroll 1
        for (int kd = 0; kd < kKD; ++kd) {
          int id;
          if constexpr (kTransposed) {
            const int e = od + kPadD - kd * kDD;
            if (e < 0 || e % kSD != 0)
              continue;
            id = e / kSD;
          } else {
            id = od * kSD - kPadD + kd * kDD;
          }
          if (id < 0 || id >= kID)
            continue;
          const float *xd = xc + (i64)id * kIH * kIW;

          float patch[kPH][kPW];
          if constexpr (kClampTiles) {
            // The whole patch is inside the input: one base address and constant offsets.
            const float *xp = xd + ihBase * kIW + iwBase;
#pragma unroll
            for (int r = 0; r < kPH; ++r) {
#pragma unroll
              for (int q = 0; q < kPW; q += kVecX) {
                if constexpr (kVecX == 2) {
                  const float2 v = __ldg(reinterpret_cast<const float2 *>(xp + r * kIW + q));
                  patch[r][q] = v.x, patch[r][q + 1] = v.y;
                } else {
                  patch[r][q] = __ldg(xp + r * kIW + q);
                }
              }
            }
          }
#pragma unroll
          for (int r = 0; r < kPH && !kClampTiles; ++r) {
            const int ih = ihBase + r;
            const bool rowOk = ih >= 0 && ih < kIH;
            if constexpr (kVecX == 2) {
              // iw is even and kIW is even: a pair is wholly inside the row or wholly outside.
#pragma unroll
              for (int q = 0; q < kPW; q += 2) {
                const int iw = iwBase + q;
                const float2 v = rowOk && iw >= 0 && iw < kIW
                                     ? __ldg(reinterpret_cast<const float2 *>(xd + ih * kIW + iw))
                                     : make_float2(0.f, 0.f);
                patch[r][q] = v.x, patch[r][q + 1] = v.y;
              }
            } else {
#pragma unroll
              for (int q = 0; q < kPW; ++q) {
                const int iw = iwBase + q;
                patch[r][q] = rowOk && iw >= 0 && iw < kIW ? __ldg(xd + ih * kIW + iw) : 0.f;
              }
            }
          }

          fmaTaps(patch, ci, kd);
        }
      }
    }
    if constexpr (kSoftmax)
      channelSoftmax(acc, od);
    if constexpr (kPool)
      foldIntoWindows(acc, pooled, od);
  } // depths

  if constexpr (kPool) {
    storePooled(pooled);
    return;
  }
  if constexpr (kCReduce != 0) {
    reduceChannels(acc, me.od);
    return;
  }

  // Epilogue, store, and the per-(n, c) statistics of what the epilogue produced.
  const int od = me.od;
  const cfg::Epilogue epilogue;
  float *__restrict__ y = sinter::slot<float>(b, 3);
  const float *__restrict__ bias = sinter::slot<const float>(b, 2);
  // Which outputs of the patch this thread owns (clamped tiles lie inside the output and
  // skip what the previous block computes).
  bool rowOk[kVH], colOk[kVW];
#pragma unroll
  for (int j = 0; j < kVH; ++j)
    rowOk[j] = me.rowOk(j);
#pragma unroll
  for (int i = 0; i < kVW; ++i)
    colOk[i] = me.colOk(i);
  // red[2c] and red[2c + 1]: this thread's sum and sum of squares for channel c.
  float red[2 * kCB];
#pragma unroll
  for (int c = 0; c < kCB; ++c) {
    red[2 * c] = 0.f, red[2 * c + 1] = 0.f;
    const int co = g * kCoutG + co0 + c;
    if (!active || (kCoutG % kCB != 0 && co0 + c >= kCoutG))
      continue;
    const float bv = kHasBias ? __ldg(bias + co) : 0.f;
    float *yc = y + ((i64)n * kCout + co) * kOD * kOH * kOW;
    // The patch's first output: rows and columns are then constant offsets from it.
    float *yp = yc + ((i64)od * kOH + oh0) * kOW + ow0;
#pragma unroll
    for (int j = 0; j < kVH; ++j) {
      const int oh = oh0 + j;
      if (!rowOk[j])
        continue;
      const i64 rowBase = ((i64)od * kOH + oh) * kOW;
      float v[kVW];
      bool ok[kVW];
#pragma unroll
      for (int i = 0; i < kVW; ++i) {
        const int ow = ow0 + i;
        ok[i] = colOk[i];
        v[i] = 0.f;
        if (!ok[i])
          continue;
        // (acc + 0.f is not acc for -0.f, so the compiler keeps the add unless told.)
        v[i] = kSoftmax
                   ? acc[c][j][i]
                   : epilogue(kHasBias ? acc[c][j][i] + bv : acc[c][j][i], n, co, rowBase + ow, b);
        if constexpr (kAccStats) {
          red[2 * c] += v[i];
          red[2 * c + 1] = fmaf(v[i], v[i], red[2 * c + 1]);
        }
      }
      if constexpr (kStoreOutput) {
        float *yr = yp + j * kOW;
        if constexpr (kVecStore) {
          // ow0, owN and kOW are even: both elements of a pair are in range or neither is.
#pragma unroll
          for (int i = 0; i < kVW; i += 2)
            if (ok[i])
              *reinterpret_cast<float2 *>(yr + i) = make_float2(v[i], v[i + 1]);
        } else {
#pragma unroll
          for (int i = 0; i < kVW; ++i)
            if (ok[i])
              yr[i] = v[i];
        }
      }
    }
  }

  if constexpr (kAccStats) {
    // Reduce-scatter over the warp: at each offset while a lane holds an even number of
    // values, it keeps one half (chosen by its lane bit) and adds the partner's copy of that
    // half, so the shuffles per step halve; once the count is odd, plain butterflies finish.
    // A lane then holds the warp totals of values [first, first + m).
    constexpr int kWarps = kThreads / 32;
    constexpr int kVals = 2 * kCB;
    __shared__ float part[kWarps][kVals];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int m = kVals, first = 0;
    bool writer = true;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      if (m % 2 == 0) {
        const bool upper = (lane & o) != 0;
        const int h = m / 2;
#pragma unroll
        for (int k = 0; k < kVals / 2; ++k) {
          if (k >= h)
            break;
          const float send = upper ? red[k] : red[k + h];
          const float keep = upper ? red[k + h] : red[k];
          red[k] = keep + __shfl_xor_sync(0xffffffffu, send, o);
        }
        first += upper ? h : 0;
        m = h;
      } else {
#pragma unroll
        for (int k = 0; k < kVals; ++k) {
          if (k >= m)
            break;
          red[k] += __shfl_xor_sync(0xffffffffu, red[k], o);
        }
        writer = writer && (lane & o) == 0;
      }
    }
    if (writer) {
#pragma unroll
      for (int k = 0; k < kVals; ++k) {
        if (k >= m)
          break;
        part[warp][first + k] = red[k];
      }
    }
    __syncthreads();
    double *stats = sinter::slot<double>(b, 4);
    for (int e = threadIdx.x; e < kVals; e += kThreads) {
      if (co0 + e / 2 >= kCoutG)
        continue;
      double total = 0;
      for (int k = 0; k < kWarps; ++k)
        total += part[k][e];
      atomicAdd(stats + ((i64)n * kCout + g * kCoutG + co0 + e / 2) * 2 + e % 2, total);
    }
  }
}
