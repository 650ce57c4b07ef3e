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
// only the useful work of the phase decomposition. Depth taps are checked at run time (the
// check is uniform over a warp except where a warp straddles two depths). With kPipeline
// (chosen by the emitter when a patch feeds few FMAs, so its own work cannot hide the load
// latency) the next input patch is loaded while the current one is used.
//
// The weights of the block's channels are staged once in shared memory in the order
// [ci][tap][channel] so that a thread fetches the kCB weights of a tap with 16-byte
// broadcast loads. Per-(n, c) statistics (sum and sum of squares of the epilogue's output) are
// reduced in registers, then over the warp and the block, and added with one double atomic
// per (n, c, block).
//
// Slots: 0 x, 1 w, 2 bias, 3 y, 4 stats (double[N*Cout*2]), 5 and 8..15 for the epilogue.
// The prologue defines, in namespace cfg, the constants used below and `struct Epilogue`
// (compiler/kernels/Emit.h: anchor epilogue).
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "common.cuh"

namespace sinter {
namespace conv_direct {

__host__ __device__ constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
__host__ __device__ constexpr int floorDiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// The tap pattern of one blocked dim. Output j of a patch (relative to the patch origin)
/// and tap k meet input (relative to the patch's input base) off(j, k) when hit(j, k).
/// Convolution: i = o*S - P + k*D, always a hit. Transposed: o = i*S - P + k*D, a hit when
/// (j - k*D) divides by S, which is a compile-time fact because patches start at a phase
/// where o + P is a multiple of S.
template <bool Transposed, int S, int Dil, int V, int K> struct Dim {
  __host__ __device__ static constexpr bool hit(int j, int k) { return !Transposed || (j - k * Dil) % S == 0; }
  __host__ __device__ static constexpr int off(int j, int k) {
    return Transposed ? floorDiv(j - k * Dil, S) : j * S + k * Dil;
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
    return Transposed ? (o0 + pad) / S : o0 * S - pad;
  }
};

} // namespace conv_direct
} // namespace sinter

namespace cfg {
constexpr int kTaps = kKD * kKH * kKW;
constexpr int kWeightFloats = kCinG * kTaps * kCB;
} // namespace cfg

extern "C" __global__ void __launch_bounds__(cfg::kThreads) SINTER_KERNEL(const sinter::Buffers b) {
  using namespace cfg;
  using sinter::i64;
  using DimH = sinter::conv_direct::Dim<kTransposed, kSH, kDH, kVH, kKH>;
  using DimW = sinter::conv_direct::Dim<kTransposed, kSW, kDW, kVW, kKW>;
  constexpr int kPH = DimH::size(), kPW = DimW::size();
  constexpr int kLoH = DimH::lo(), kLoW = DimW::lo();
  static_assert(!kTransposed || (kVH % kSH == 0 && kVW % kSW == 0),
                "transposed patches must cover whole phases");
  static_assert(kN >= 1 && kCin % kCinG == 0, "bad channel counts");
  static_assert(!kWeightsShared || kWeightFloats * 4 <= 40 * 1024, "weights too large");

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
    for (int e = threadIdx.x; e < kWeightFloats; e += kThreads) {
      const int c = e % kCB, tap = (e / kCB) % kTaps, ci = e / (kCB * kTaps);
      sw[e] = co0 + c < kCoutG ? __ldg(w + weightIndex(ci, co0 + c, tap)) : 0.f;
    }
    __syncthreads();
  }

  const i64 t = (i64)blockIdx.x * kThreads + threadIdx.x;
  const bool active = t < (i64)kOD * kHBlocks * kWBlocks;
  const int wb = (int)(t % kWBlocks);
  const int hb = (int)((t / kWBlocks) % kHBlocks);
  const int od = (int)(t / ((i64)kWBlocks * kHBlocks));
  const int oh0 = hb * kVH - kAlignH, ow0 = wb * kVW - kAlignW;

  float acc[kCB][kVH][kVW];
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
    // Patch rows and columns do not depend on the input channel or depth tap: their offsets
    // and in-range flags are computed once. Out-of-range elements load a clamped (valid)
    // address and are zeroed, so the loads of a patch issue back to back without branches.
    const int ihBase = DimH::base(oh0, kPadH) + kLoH;
    const int iwBase = DimW::base(ow0, kPadW) + kLoW;
    int rowOff[kPH], colOff[kPW];
    bool rowOk[kPH], colOk[kPW];
#pragma unroll
    for (int r = 0; r < kPH; ++r) {
      const int ih = ihBase + r;
      rowOk[r] = ih >= 0 && ih < kIH;
      rowOff[r] = (ih < 0 ? 0 : ih >= kIH ? kIH - 1 : ih) * kIW;
    }
#pragma unroll
    for (int q = 0; q < kPW; ++q) {
      const int iw = iwBase + q;
      colOk[q] = iw >= 0 && iw < kIW;
      colOff[q] = iw < 0 ? 0 : iw >= kIW ? kIW - 1 : iw;
    }
    const float *xn = x + (i64)(n * kCin + g * kCinG) * kID * kIH * kIW;
    auto loadPatch = [&](float (&p)[kPH][kPW], int ci, int kd) {
      int id;
      if constexpr (kTransposed)
        id = (od + kPadD - kd * kDD) / kSD;
      else
        id = od * kSD - kPadD + kd * kDD;
      const float *xd = xn + ((i64)ci * kID + id) * kIH * kIW;
#pragma unroll
      for (int r = 0; r < kPH; ++r)
#pragma unroll
        for (int q = 0; q < kPW; ++q) {
          const float v = __ldg(xd + rowOff[r] + colOff[q]);
          p[r][q] = rowOk[r] && colOk[q] ? v : 0.f;
        }
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
#pragma unroll
        for (int r = 0; r < kPH; ++r) {
          const int ih = ihBase + r;
          const bool rowOk = ih >= 0 && ih < kIH;
#pragma unroll
          for (int q = 0; q < kPW; ++q) {
            const int iw = iwBase + q;
            patch[r][q] = rowOk && iw >= 0 && iw < kIW ? __ldg(xd + ih * kIW + iw) : 0.f;
          }
        }

        fmaTaps(patch, ci, kd);
      }
    }
  }

  // Epilogue, store, and the per-(n, c) statistics of what the epilogue produced.
  const cfg::Epilogue epilogue;
  float *__restrict__ y = sinter::slot<float>(b, 3);
  const float *__restrict__ bias = sinter::slot<const float>(b, 2);
  float sum[kCB], sq[kCB];
#pragma unroll
  for (int c = 0; c < kCB; ++c) {
    sum[c] = 0.f, sq[c] = 0.f;
    const int co = g * kCoutG + co0 + c;
    if (!active || co0 + c >= kCoutG)
      continue;
    const float bv = kHasBias ? __ldg(bias + co) : 0.f;
#pragma unroll
    for (int j = 0; j < kVH; ++j) {
      const int oh = oh0 + j;
      if (oh < 0 || oh >= kOH)
        continue;
#pragma unroll
      for (int i = 0; i < kVW; ++i) {
        const int ow = ow0 + i;
        if (ow < 0 || ow >= kOW)
          continue;
        const i64 s = ((i64)od * kOH + oh) * kOW + ow;
        const float v = epilogue(acc[c][j][i] + bv, n, co, s, b);
        if constexpr (kStoreOutput)
          y[((i64)n * kCout + co) * kOD * kOH * kOW + s] = v;
        if constexpr (kAccStats) {
          sum[c] += v;
          sq[c] = fmaf(v, v, sq[c]);
        }
      }
    }
  }

  if constexpr (kAccStats) {
    constexpr int kWarps = kThreads / 32;
    __shared__ float red[kWarps][2 * kCB];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int c = 0; c < kCB; ++c) {
      const float s = sinter::warpSum(sum[c]);
      const float q = sinter::warpSum(sq[c]);
      if (lane == 0)
        red[warp][2 * c] = s, red[warp][2 * c + 1] = q;
    }
    __syncthreads();
    double *stats = sinter::slot<double>(b, 4);
    for (int e = threadIdx.x; e < 2 * kCB; e += kThreads) {
      if (co0 + e / 2 >= kCoutG)
        continue;
      double total = 0;
      for (int k = 0; k < kWarps; ++k)
        total += red[k][e];
      atomicAdd(stats + ((i64)n * kCout + g * kCoutG + co0 + e / 2) * 2 + e % 2, total);
    }
  }
}
