//===- templates/conv_igemm.cuh - implicit-GEMM convolution on tensor cores --------===//
//
// Convolution (and stride-1 transposed convolution) as a GEMM that is never materialised:
// row m = (n, output position), column = output channel of the group, reduction index
// k = (ci, tap) with the tap innermost so that each conv-weight row is contiguous in memory.
// A tiles are gathered from x by cp.async (4 bytes, zero-filled outside the input); which
// taps fall inside the input is decided once per row through per-dimension bit masks, so the
// K loop pays one add and one mask test per element. B tiles come from the weight as stored
// (PyTorch layout, no repacking). Stages are pipelined cp.async groups; products are
// mma.sync m16n8k8 TF32 or 3xTF32 (mma.cuh). A transposed convolution with stride 1 is the
// convolution with flipped taps: input position = out + padding - tap * dilation.
// The epilogue adds the bias, applies the fused `Epilogue` functor, stores y (each warp
// store covers whole 32-byte sectors) and accumulates per-(n, c) sum and sum of squares in
// double (block-reduced first, one atomic per (n, c) per block where the tile lies in one n).
//
// Slots: 0 x, 1 w, 2 bias, 3 y, 4 stats (double2 per (n, c)).
// Expects from the prologue (namespace cfg): kN, kCin, kCout, kGroups, kInD/H/W,
// kOutD/H/W, kKD/H/W, kSD/H/W, kPD/H/W, kDD/H/W, kTransposed, kHasBias, kStoreOutput,
// kAccumulateStats, kBM, kBN, kBK, kWarpsM, kWarpsN, kStages, kMinBlocks (resident blocks the
// registers must allow), kMath; struct Epilogue.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "mma.cuh"

namespace conv_igemm {

using sinter::i64;

constexpr int kThreads = 32 * cfg::kWarpsM * cfg::kWarpsN;
constexpr int kCinG = cfg::kCin / cfg::kGroups;
constexpr int kCoutG = cfg::kCout / cfg::kGroups;
constexpr int kInHW = cfg::kInH * cfg::kInW;
constexpr i64 kInVol = (i64)cfg::kInD * kInHW;
constexpr int kOutHW = cfg::kOutH * cfg::kOutW;
constexpr i64 kOutVol = (i64)cfg::kOutD * kOutHW;
constexpr int kKHW = cfg::kKH * cfg::kKW;
constexpr int kKVol = cfg::kKD * kKHW;
constexpr i64 kM = (i64)cfg::kN * kOutVol;
constexpr int kK = kCinG * kKVol;
constexpr int kKTiles = (kK + cfg::kBK - 1) / cfg::kBK;
// Transposed: input = out + pad - tap * dil; direct: input = out * stride - pad + tap * dil.
constexpr int kSign = cfg::kTransposed ? -1 : 1;
// Kernels of at most 31 taps keep one validity bit per tap (bit 31 marks k past K).
constexpr bool kTapBits = kKVol <= 31;

// Shared-memory layouts: A as [k][m] (lanes load along m), B as [n][k]; the pads make every
// fragment load of warpTileStep conflict-free.
constexpr int kAStride = cfg::kBM + 8;
constexpr int kBStride = cfg::kBK + 4;
constexpr int kAStage = cfg::kBK * kAStride;
constexpr int kBStage = cfg::kBN * kBStride;
constexpr int kMI = cfg::kBM / cfg::kWarpsM / 16;
constexpr int kNI = cfg::kBN / cfg::kWarpsN / 8;
// 3xTF32 is meant to be fp32-accurate: each k tile is accumulated from zero and then added
// to the running sum, so that rounding error does not grow with the whole reduction depth.
constexpr bool kTwoLevel = cfg::kMath == sinter::mma::kMathTf32x3;

static_assert(kThreads % cfg::kBM == 0, "A loader: whole rows of m per pass");
static_assert(kThreads % cfg::kBK == 0, "B loader: whole rows of k per pass");
static_assert(cfg::kBM % (16 * cfg::kWarpsM) == 0 && cfg::kBN % (8 * cfg::kWarpsN) == 0,
              "warp tiles are whole mma tiles");
static_assert(cfg::kBK % 8 == 0, "k tiles are whole mma steps");
static_assert(cfg::kKD <= 31 && cfg::kKH <= 31 && cfg::kKW <= 31, "tap masks are 32 bits");
static_assert(kCinG * kInVol < (1ll << 31), "one image's input offsets fit in 32 bits");
static_assert(!cfg::kTransposed || (cfg::kSD == 1 && cfg::kSH == 1 && cfg::kSW == 1),
              "transposed convolution with stride > 1 is not an implicit GEMM here");

/// Bit t set when tap t of one dimension lands inside the input for base position `base`.
template <int KS, int DIL, int IN> __device__ __forceinline__ unsigned tapMask(int base) {
  unsigned mask = 0;
#pragma unroll
  for (int t = 0; t < KS; ++t) {
    int pos = base + kSign * t * DIL;
    if (pos >= 0 && pos < IN)
      mask |= 1u << t;
  }
  return mask;
}

} // namespace conv_igemm

extern "C" __global__ void __launch_bounds__(conv_igemm::kThreads, cfg::kMinBlocks)
    SINTER_KERNEL(const sinter::Buffers b) {
  using namespace conv_igemm;
  namespace mma = sinter::mma;
  extern __shared__ __align__(16) float smem[];
  float *As = smem;
  float *Bs = smem + cfg::kStages * kAStage;

  const float *x = sinter::slot<const float>(b, 0);
  const float *w = sinter::slot<const float>(b, 1);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const i64 m0 = (i64)blockIdx.x * cfg::kBM;
  const int n0 = blockIdx.y * cfg::kBN;
  const int grp = blockIdx.z;

  // ---- A loader state: this thread always loads row aRow of the tile, k rows aK0 + pass.
  // Which taps of the row fall inside the input: one bit per tap when the kernel has at most
  // 32 taps, else one mask per dimension.
  const int aRow = tid % cfg::kBM;
  const int aK0 = tid / cfg::kBM;
  constexpr int kAPass = kThreads / cfg::kBM;
  const i64 am = m0 + aRow;
  const float *aBase = x;
  unsigned maskD = 0, maskH = 0, maskW = 0, maskTap = 0;
  if (am < kM) {
    const int nb = (int)(am / kOutVol);
    const int sp = (int)(am - (i64)nb * kOutVol);
    const int od = sp / kOutHW, oh = (sp / cfg::kOutW) % cfg::kOutH, ow = sp % cfg::kOutW;
    const int bd = cfg::kTransposed ? od + cfg::kPD : od * cfg::kSD - cfg::kPD;
    const int bh = cfg::kTransposed ? oh + cfg::kPH : oh * cfg::kSH - cfg::kPH;
    const int bw = cfg::kTransposed ? ow + cfg::kPW : ow * cfg::kSW - cfg::kPW;
    maskD = tapMask<cfg::kKD, cfg::kDD, cfg::kInD>(bd);
    maskH = tapMask<cfg::kKH, cfg::kDH, cfg::kInH>(bh);
    maskW = tapMask<cfg::kKW, cfg::kDW, cfg::kInW>(bw);
    if constexpr (kTapBits) {
#pragma unroll
      for (int tap = 0; tap < kKVol; ++tap) {
        const int kd = tap / kKHW, kh = (tap / cfg::kKW) % cfg::kKH, kw = tap % cfg::kKW;
        maskTap |= ((maskD >> kd) & (maskH >> kh) & (maskW >> kw) & 1u) << tap;
      }
    }
    // May point outside x; only dereferenced for in-range taps.
    aBase = x + ((i64)nb * cfg::kCin + (i64)grp * kCinG) * kInVol + (i64)bd * kInHW +
            (i64)bh * cfg::kInW + bw;
  }
  // Per reduction index k: the input offset relative to aBase and which tap it is, built
  // once per block so that the K loop does no division.
  int2 *kTable = reinterpret_cast<int2 *>(smem + cfg::kStages * (kAStage + kBStage));
  for (int k = tid; k < kKTiles * cfg::kBK; k += kThreads) {
    const int ci = k / kKVol, tap = k - ci * kKVol;
    const int kd = tap / kKHW, kh = (tap / cfg::kKW) % cfg::kKH, kw = tap % cfg::kKW;
    const int off = ci * (int)kInVol +
                    kSign * (kd * cfg::kDD * kInHW + kh * cfg::kDH * cfg::kInW + kw * cfg::kDW);
    // Past K: a tap index whose mask bit is never set.
    const int which = k >= kK ? 31 : (kTapBits ? tap : (kd | kh << 8 | kw << 16));
    kTable[k] = make_int2(off, which);
  }
  __syncthreads();

  // ---- B loader state: this thread loads k column bK of the tile, rows n = bN0 + pass.
  const int bK = tid % cfg::kBK;
  const int bN0 = tid / cfg::kBK;
  constexpr int kBPass = kThreads / cfg::kBK;

  auto loadTile = [&](int kt, int stage) {
    float *as = As + stage * kAStage;
    float *bs = Bs + stage * kBStage;
    const int kb = kt * cfg::kBK;
#pragma unroll
    for (int p = 0; p < cfg::kBK / kAPass; ++p) {
      const int kr = aK0 + p * kAPass;
      const int2 e = kTable[kb + kr]; // same entry for the whole warp: a broadcast
      bool ok;
      if constexpr (kTapBits)
        ok = (maskTap >> e.y) & 1u;
      else
        ok = e.y != 31 &&
             ((maskD >> (e.y & 255)) & (maskH >> ((e.y >> 8) & 255)) & (maskW >> (e.y >> 16)) & 1u);
      mma::cpAsync4(as + kr * kAStride + aRow, ok ? aBase + e.x : x, ok);
    }
    const int k = kb + bK;
    const bool kOk = k < kK;
    i64 wOff;
    constexpr i64 kNStep = cfg::kTransposed ? kKVol : kK; // weight distance between columns
    if constexpr (cfg::kTransposed) {
      const int ci = k / kKVol, tap = k - ci * kKVol;
      wOff = ((i64)(grp * kCinG + ci) * kCoutG) * kKVol + tap;
    } else {
      wOff = (i64)grp * kCoutG * kK + k;
    }
#pragma unroll
    for (int p = 0; p < cfg::kBN / kBPass; ++p) {
      const int nr = bN0 + p * kBPass;
      const int n = n0 + nr;
      const bool ok = kOk && n < kCoutG;
      mma::cpAsync4(bs + nr * kBStride + bK, ok ? w + wOff + (i64)n * kNStep : w, ok);
    }
  };

  float acc[kMI][kNI][4];
#pragma unroll
  for (int i = 0; i < kMI; ++i)
#pragma unroll
    for (int j = 0; j < kNI; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[i][j][r] = 0.f;

  const int wm = (warp % cfg::kWarpsM) * (cfg::kBM / cfg::kWarpsM);
  const int wn = (warp / cfg::kWarpsM) * (cfg::kBN / cfg::kWarpsN);

#pragma unroll
  for (int s = 0; s < cfg::kStages - 1; ++s) {
    if (s < kKTiles)
      loadTile(s, s);
    mma::cpAsyncCommit();
  }
  for (int kt = 0; kt < kKTiles; ++kt) {
    mma::cpAsyncWait<cfg::kStages - 2>();
    __syncthreads();
    const int next = kt + cfg::kStages - 1;
    if (next < kKTiles)
      loadTile(next, next % cfg::kStages);
    mma::cpAsyncCommit();
    const int st = kt % cfg::kStages;
    if constexpr (kTwoLevel) {
      float part[kMI][kNI][4];
#pragma unroll
      for (int i = 0; i < kMI; ++i)
#pragma unroll
        for (int j = 0; j < kNI; ++j)
#pragma unroll
          for (int r = 0; r < 4; ++r)
            part[i][j][r] = 0.f;
      mma::warpTileStep<kMI, kNI, cfg::kBK, 1, kAStride, kBStride, 1, cfg::kMath>(
          part, As + st * kAStage + wm, Bs + st * kBStage + wn * kBStride, lane);
#pragma unroll
      for (int i = 0; i < kMI; ++i)
#pragma unroll
        for (int j = 0; j < kNI; ++j)
#pragma unroll
          for (int r = 0; r < 4; ++r)
            acc[i][j][r] += part[i][j][r];
    } else {
      mma::warpTileStep<kMI, kNI, cfg::kBK, 1, kAStride, kBStride, 1, cfg::kMath>(
          acc, As + st * kAStage + wm, Bs + st * kBStage + wn * kBStride, lane);
    }
  }
  mma::cpAsyncWait<0>();
  __syncthreads();

  // ---- Epilogue. Thread holds rows wm + mi*16 + g (+8), columns wn + ni*8 + 2t (+1).
  const int g = lane >> 2, t = lane & 3;
  const float *bias = sinter::slot<const float>(b, 2);
  float *y = sinter::slot<float>(b, 3);
  double *stats = sinter::slot<double>(b, 4);
  const i64 mLast = m0 + cfg::kBM - 1;
  // The block-reduced statistics path needs every row of the tile valid and in one image.
  const bool oneImage = mLast < kM && m0 / kOutVol == mLast / kOutVol;
  float colSum[kNI][2], colSq[kNI][2];
#pragma unroll
  for (int ni = 0; ni < kNI; ++ni)
    colSum[ni][0] = colSum[ni][1] = colSq[ni][0] = colSq[ni][1] = 0.f;

#pragma unroll
  for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i64 m = m0 + wm + mi * 16 + g + h * 8;
      if (m >= kM)
        continue;
      const int nb = (int)(m / kOutVol);
      const i64 sp = m - (i64)nb * kOutVol;
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
          const int cl = n0 + wn + ni * 8 + 2 * t + j;
          if (cl >= kCoutG)
            continue;
          const int c = grp * kCoutG + cl;
          float v = acc[mi][ni][h * 2 + j];
          if constexpr (cfg::kHasBias)
            v += bias[c];
          v = Epilogue{}(v, nb, c, sp, b);
          if constexpr (cfg::kStoreOutput)
            y[((i64)nb * cfg::kCout + c) * kOutVol + sp] = v;
          if constexpr (cfg::kAccumulateStats) {
            if (oneImage) {
              colSum[ni][j] += v;
              colSq[ni][j] += v * v;
            } else {
              atomicAdd(&stats[((i64)nb * cfg::kCout + c) * 2 + 0], (double)v);
              atomicAdd(&stats[((i64)nb * cfg::kCout + c) * 2 + 1], (double)v * v);
            }
          }
        }
      }
    }
  }

  if constexpr (cfg::kAccumulateStats) {
    if (!oneImage)
      return;
    // Reduce over the 8 row lanes (g) of the warp, then over the warps along M in shared
    // memory (the pipeline buffers are free now), then one atomic per column per block.
    double *red = reinterpret_cast<double *>(smem);
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        double s = colSum[ni][j], q = colSq[ni][j];
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) {
          s += __shfl_xor_sync(0xffffffffu, s, o);
          q += __shfl_xor_sync(0xffffffffu, q, o);
        }
        if (g == 0) {
          const int col = wn + ni * 8 + 2 * t + j;
          const int wmI = warp % cfg::kWarpsM;
          red[(wmI * cfg::kBN + col) * 2 + 0] = s;
          red[(wmI * cfg::kBN + col) * 2 + 1] = q;
        }
      }
    __syncthreads();
    const int nb = (int)(m0 / kOutVol);
    for (int col = tid; col < cfg::kBN; col += kThreads) {
      const int cl = n0 + col;
      if (cl >= kCoutG)
        continue;
      double s = 0, q = 0;
#pragma unroll
      for (int i = 0; i < cfg::kWarpsM; ++i) {
        s += red[(i * cfg::kBN + col) * 2 + 0];
        q += red[(i * cfg::kBN + col) * 2 + 1];
      }
      const int c = grp * kCoutG + cl;
      atomicAdd(&stats[((i64)nb * cfg::kCout + c) * 2 + 0], s);
      atomicAdd(&stats[((i64)nb * cfg::kCout + c) * 2 + 1], q);
    }
  }
}
