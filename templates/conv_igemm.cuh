//===- templates/conv_igemm.cuh - implicit-GEMM convolution on tensor cores --------===//
//
// Convolution (and transposed convolution) as a GEMM that is never materialised:
// row m = (n, output position), column = output channel of the group, reduction index
// k = (ci, tap) with the tap innermost so that each conv-weight row is contiguous in memory.
// A tiles are gathered from x by cp.async (4 bytes, zero-filled outside the input); which
// taps fall inside the input is decided once per row through per-dimension bit masks, so the
// K loop pays one add and one mask test per element. B tiles come from the weight as stored
// (PyTorch layout) in 4-byte copies, or with kPackedB in 16-byte copies from rows whose k are
// contiguous: the weight itself for a direct convolution with K % 4 == 0, else the rows
// conv_pack.cuh wrote into slot kBSlot before the kernel. Both tiles are stored [row][k] so
// that ldmatrix forms the mma fragments. Stages are pipelined cp.async groups (mma.cuh's
// cpAsyncMainLoop, shared with gemm.cuh); products are mma.sync m16n8k8 TF32 or 3xTF32
// (mma.cuh). A transposed convolution with stride 1 is the convolution with flipped taps:
// input position = out + padding - tap * dilation.
// A transposed convolution with stride > 1 runs as one kernel per output phase
// (compiler/kernels/ConvPhases.h), each a stride-1 transposed convolution of its own: the
// geometry constants (kOut*, kK*, kP*, kD*) then describe the phase's sub-grid q, its taps j,
// its input offset and tap dilation, and kPhased maps them back to the real convolution:
// output position kYPhase + kYStep * q within y's extents kY*, weight tap
// kWTap0 + kWTapStep * j within the stored kernel's extents kWK*. The epilogue sees real
// output coordinates only.
// Two engines compute the tile (cfg::kEngine): 0 is the mma.sync loop below (every warp
// gathers and multiplies; any stride, TF32 or 3xTF32); 1 is conv_wgmma.cuh's sm_90a loop for
// TF32 convolutions with a stride-1 input walk (a producer warpgroup copies a box of the input
// per channel chunk, two consumer warpgroups read A from it and multiply with wgmma), whose
// consumer warps are laid out as kWarpsM = 8 warps of one column span, so that the epilogue
// below serves both.
// The epilogue adds the bias, applies the fused `Epilogue` functor, stores y (each warp
// store covers whole 32-byte sectors, or every kYStepW-th word of them for a phase)
// and accumulates per-(n, c) sum and sum of squares in
// double (block-reduced first, one atomic per (n, c) per block where the tile lies in one n).
// With kCReduce (engine 1, one group whose channels one tile column holds) it reduces each
// position's values over the channels instead (1 sum, 2 mean, 3 max, 4 min by
// sinter::ChannelFold; 5 logsumexp in two passes), applies `CReduceEpilogue` (c = 0) and
// stores only that, into slot 3 as [N, kY...]. With kSoftmax (engine 1, the same tile rule)
// each position's values become their softmax (1) or log_softmax (2) over the channels, then
// `SoftmaxEpilogue` (the chain after it), and that is stored as y. With kPoolKind (engine 1,
// 1 max, 2 average; windows kPKH x kPKW, stride = window, no padding, depth 1) the tiles are
// conv_wgmma.cuh's pool tiles, each holding whole windows; the epilogue's values are folded
// into them (a max propagates NaN; an average divides by the window's part inside the
// output, as ceil_mode's clipped windows need), `PoolEpilogue` follows, and only the pooled
// tensor [N, kCout, kOutD, kPOH, kPOW] is stored, into slot 3.
//
// Slots: 0 x, 1 w, 2 bias, 3 y, 4 stats (double2 per (n, c)), kBSlot the B rows (kPackedB).
// Expects from the prologue (namespace cfg): kN, kCin, kCout, kGroups, kInD/H/W,
// kOutD/H/W, kKD/H/W, kSD/H/W, kPD/H/W, kDD/H/W, kTransposed, kPhased, kYD/H/W,
// kYStepD/H/W, kYPhaseD/H/W, kWKD/H/W, kWTap0D/H/W, kWTapStepD/H/W (without kPhased: the
// identity, kY* = kOut*, kWK* = kK*), kZeroTaps (a phase no tap reaches, run as one tap whose
// weights are zero: the 4-byte B copies zero-fill, packed rows are zeros already, and A is
// zero too, so that non-finite inputs stay out of the phase's outputs), kHasBias,
// kStoreOutput,
// kAccumulateStats, kStatsSquares (the sums of squares too; else left at zero), kCReduce,
// kSoftmax, kPoolKind, kPKH, kPKW, kPOH, kPOW (pooled extents), kPoolBlocksW (any values
// without a pool),
// kEpilogueReadsTensors (whether `Epilogue` reads tensors), kBM, kBN, kBK,
// kWarpsM, kWarpsN, kStages, kMinBlocks
// (resident blocks the registers must allow), kMath, kPackedB, and with kPackedB: kBSlot, kBRow
// (floats from one output channel's row to the next), kBBase (where this kernel's rows start);
// kEngine and engine 1's box constants (conv_wgmma.cuh; any values under engine 0); kSharedBytes
// (the dynamic shared memory the emitter requests; engine 1 checks it against its layout); structs
// Epilogue, CReduceEpilogue, SoftmaxEpilogue and PoolEpilogue.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "mma.cuh"
#include "wgmma.cuh"

namespace conv_igemm {

using sinter::i64;

constexpr bool kWgmma = cfg::kEngine == 1;
// Threads holding one tile's accumulators (the epilogue's threads: with cfg::kPingpong one
// of engine 1's two consumer warpgroups, each of which holds tiles of its own), and all
// threads of the block.
constexpr int kThreads = 32 * cfg::kWarpsM * cfg::kWarpsN;
constexpr int kBlockThreads =
    kThreads * (cfg::kPingpong ? 2 : 1) + (kWgmma ? sinter::sm90::kProducerThreads : 0);
static_assert(!cfg::kPingpong || kWgmma, "alternating consumer warpgroups are engine 1's");

/// Barrier over the threads that hold the tile's accumulators (engine 1's producer has left;
/// with kPingpong, over the calling warpgroup: named barriers 2 and 3).
__device__ __forceinline__ void mathSync() {
  if constexpr (kWgmma)
    sinter::sm90::namedBarrier(
        2 + (cfg::kPingpong ? (threadIdx.x - sinter::sm90::kProducerThreads) / kThreads : 0),
        kThreads);
  else
    __syncthreads();
}
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

// Shared-memory layouts: A as [m][k], B as [n][k], rows padded by 4 words: rows stay 16-byte
// aligned for ldmatrix, the 8 rows of an ldmatrix phase fall in 8 different 4-bank groups,
// and the loaders' 32 lanes (A: 8 rows x 4 k, B: 32 k of one row) hit 32 different banks.
constexpr int kAStride = cfg::kBK + 4;
constexpr int kBStride = cfg::kBK + 4;
constexpr int kAStage = cfg::kBM * kAStride;
constexpr int kBStage = cfg::kBN * kBStride;
constexpr int kMI = cfg::kBM / cfg::kWarpsM / 16;
constexpr int kNI = cfg::kBN / cfg::kWarpsN / 8;
// 3xTF32 is meant to be fp32-accurate: each k tile is accumulated from zero and then added
// to the running sum, so that rounding error does not grow with the whole reduction depth.
constexpr bool kTwoLevel = cfg::kMath == sinter::mma::kMathTf32x3;

// A loader: each warp copies 8 rows x 4 k per instruction; a thread keeps kARows rows.
constexpr int kARows = cfg::kBM / (8 * (kThreads / 32));
static_assert(kARows >= 1 && cfg::kBM % (8 * (kThreads / 32)) == 0,
              "A loader: whole groups of 8 rows per warp");
static_assert(cfg::kBK % 4 == 0, "A loader: 4 k per row per instruction");
static_assert(kThreads % cfg::kBK == 0, "B loader: whole rows of k per pass");
static_assert(!cfg::kPackedB || kWgmma || (cfg::kBN * cfg::kBK / 4) % kThreads == 0,
              "packed B loader: whole 16-byte pieces per thread");
static_assert(cfg::kBM % (16 * cfg::kWarpsM) == 0 && cfg::kBN % (8 * cfg::kWarpsN) == 0,
              "warp tiles are whole mma tiles");
static_assert(cfg::kBK % 8 == 0, "k tiles are whole mma steps");
static_assert(cfg::kCReduce == 0 ||
                  (kWgmma && cfg::kWarpsN == 1 && cfg::kGroups == 1 && cfg::kBN >= cfg::kCout &&
                   cfg::kStoreOutput && !cfg::kAccumulateStats),
              "a reduction over the channels needs engine 1, one group in one column span, "
              "and the reduced tensor stored without statistics");
static_assert(cfg::kSoftmax == 0 ||
                  (kWgmma && cfg::kWarpsN == 1 && cfg::kGroups == 1 && cfg::kBN >= cfg::kCout &&
                   cfg::kStoreOutput && !cfg::kAccumulateStats && cfg::kCReduce == 0),
              "a softmax over the channels needs engine 1, one group in one column span, "
              "and y stored without statistics");
static_assert(cfg::kPoolKind == 0 || (kWgmma && cfg::kStoreOutput && !cfg::kAccumulateStats &&
                                      cfg::kCReduce == 0 && cfg::kSoftmax == 0),
              "a pool needs engine 1 and stores the pooled tensor, without statistics or "
              "other tails");
static_assert(cfg::kKD <= 31 && cfg::kKH <= 31 && cfg::kKW <= 31, "tap masks are 32 bits");
static_assert(kCinG * kInVol < (1ll << 31), "one image's input offsets fit in 32 bits");
static_assert(!cfg::kTransposed || (cfg::kSD == 1 && cfg::kSH == 1 && cfg::kSW == 1),
              "a strided transposed convolution runs as stride-1 output phases (kPhased)");

// Where the kernel's rows and taps sit in the real convolution (the identity unless
// kPhased): y's extents, and the stored weight's kernel extents.
constexpr int kYHW = cfg::kYH * cfg::kYW;
constexpr i64 kYVol = (i64)cfg::kYD * kYHW;
constexpr int kWKVol = cfg::kWKD * cfg::kWKH * cfg::kWKW;
static_assert(cfg::kPhased ||
                  (cfg::kYD == cfg::kOutD && cfg::kYH == cfg::kOutH && cfg::kYW == cfg::kOutW &&
                   cfg::kWKD == cfg::kKD && cfg::kWKH == cfg::kKH && cfg::kWKW == cfg::kKW),
              "without kPhased the kernel computes the whole output with every tap");
// An output phase: a transposed convolution; its outputs and taps lie inside y and w.
static_assert(!cfg::kPhased || cfg::kTransposed, "output phases are of transposed convolutions");
static_assert(!cfg::kPhased ||
                  (cfg::kYPhaseD < cfg::kYStepD && cfg::kYPhaseH < cfg::kYStepH &&
                   cfg::kYPhaseW < cfg::kYStepW &&
                   cfg::kYPhaseD + cfg::kYStepD * (cfg::kOutD - 1) < cfg::kYD &&
                   cfg::kYPhaseH + cfg::kYStepH * (cfg::kOutH - 1) < cfg::kYH &&
                   cfg::kYPhaseW + cfg::kYStepW * (cfg::kOutW - 1) < cfg::kYW),
              "a phase's outputs lie inside y");
static_assert(!cfg::kPhased ||
                  (cfg::kKD >= 1 && cfg::kKH >= 1 && cfg::kKW >= 1 &&
                   cfg::kWTap0D + cfg::kWTapStepD * (cfg::kKD - 1) < cfg::kWKD &&
                   cfg::kWTap0H + cfg::kWTapStepH * (cfg::kKH - 1) < cfg::kWKH &&
                   cfg::kWTap0W + cfg::kWTapStepW * (cfg::kKW - 1) < cfg::kWKW),
              "a phase has taps, and they lie inside the stored kernel");
static_assert(!cfg::kZeroTaps || (cfg::kPhased && cfg::kKD * cfg::kKH * cfg::kKW == 1),
              "a phase that no tap reaches runs as one tap of zeros");

/// The position in y (flat over D, H, W) of the kernel's output position sp (flat over its
/// kOut* grid): sp itself, or for an output phase kYPhase + kYStep * q per dim.
__device__ __forceinline__ i64 yPosition(i64 sp) {
  if constexpr (!cfg::kPhased) {
    return sp;
  } else {
    const int q = (int)sp;
    const int qd = q / kOutHW, qh = (q / cfg::kOutW) % cfg::kOutH, qw = q % cfg::kOutW;
    return ((i64)(cfg::kYPhaseD + cfg::kYStepD * qd) * cfg::kYH +
            (cfg::kYPhaseH + cfg::kYStepH * qh)) *
               cfg::kYW +
           (cfg::kYPhaseW + cfg::kYStepW * qw);
  }
}

/// The tap (flat over the stored kernel's kWK* extents) of the kernel's tap `tap` (flat over
/// its kK* taps): tap itself, or for an output phase kWTap0 + kWTapStep * j per dim.
__device__ __forceinline__ int weightTap(int tap) {
  if constexpr (!cfg::kPhased) {
    return tap;
  } else {
    const int jd = tap / kKHW, jh = (tap / cfg::kKW) % cfg::kKH, jw = tap % cfg::kKW;
    return ((cfg::kWTap0D + cfg::kWTapStepD * jd) * cfg::kWKH +
            (cfg::kWTap0H + cfg::kWTapStepH * jh)) *
               cfg::kWKW +
           (cfg::kWTap0W + cfg::kWTapStepW * jw);
  }
}

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

/// One warp's share of one k8 slice kk of a stage: acc[kMI][kNI] += A(16kMI x 8) * B(8 x 8kNI).
/// A and B are
/// [row][k] with 16-byte aligned rows, so one ldmatrix.x4 brings a whole A fragment, or the
/// b0/b1 fragments of two n8 tiles (instead of four 4-byte loads per fragment). In TF32
/// the operands are rounded by one add (toTf32Operand): with 4x4 warps every element is
/// converted by four warps, so the conversion is a large share of the non-mma instructions.
template <int MATH>
__device__ __forceinline__ void warpStep(float (&acc)[kMI][kNI][4], const float *As,
                                         const float *Bs, int lane, int kk) {
  namespace mma = sinter::mma;
  // ldmatrix row supplied by this lane: n row (lane % 8) of tile pair half (lane / 16), k half
  // ((lane / 8) % 2).
  const float *bRow = Bs + ((lane >> 4) * 8 + (lane & 7)) * kBStride + ((lane >> 3) & 1) * 4;
  // A: matrix j = lane / 8 is rows +8 (j odd) and k +4 (j >= 2): a0, a1, a2, a3 of m16n8k8.
  const float *aRow = As + ((lane & 7) + ((lane >> 3) & 1) * 8) * kAStride + (lane >> 4) * 4;
  {
    unsigned braw[kNI][2], bb[kNI][2], bs[kNI][2];
#pragma unroll
    for (int ni = 0; ni + 1 < kNI; ni += 2) {
      unsigned r[4];
      sinter::mma::ldmatrixX4(r, bRow + ni * 8 * kBStride + kk);
      braw[ni][0] = r[0];
      braw[ni][1] = r[1];
      braw[ni + 1][0] = r[2];
      braw[ni + 1][1] = r[3];
    }
    if constexpr (kNI % 2) {
      unsigned r[2];
      sinter::mma::ldmatrixX2(r, bRow + (kNI - 1) * 8 * kBStride + kk);
      braw[kNI - 1][0] = r[0];
      braw[kNI - 1][1] = r[1];
    }
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float v = __uint_as_float(braw[ni][h]);
        if constexpr (MATH == mma::kMathTf32x3)
          mma::splitTf32(v, bb[ni][h], bs[ni][h]);
        else
          bb[ni][h] = mma::toTf32Operand(v);
      }
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi) {
      unsigned araw[4], ab[4], as[4];
      mma::ldmatrixX4(araw, aRow + mi * 16 * kAStride + kk);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        if constexpr (MATH == mma::kMathTf32x3)
          mma::splitTf32(__uint_as_float(araw[r]), ab[r], as[r]);
        else
          ab[r] = mma::toTf32Operand(__uint_as_float(araw[r]));
      }
#pragma unroll
      for (int ni = 0; ni < kNI; ++ni) {
        if constexpr (MATH == mma::kMathTf32x3) {
          // Small terms first so that they are not lost against the big product.
          mma::mmaTf32(acc[mi][ni], as, bb[ni]);
          mma::mmaTf32(acc[mi][ni], ab, bs[ni]);
        }
        mma::mmaTf32(acc[mi][ni], ab, bb[ni]);
      }
    }
  }
}

/// Engine 0 (mma.sync; every warp copies and multiplies): the block's tile into acc. Thread
/// tid holds rows wm + mi * 16 + g (+8), columns wn + ni * 8 + 2t (+1) of its warp's tile.
__device__ __forceinline__ void mmaSyncTile(float (&acc)[kMI][kNI][4], float *smem,
                                            const sinter::Buffers b, i64 m0, int n0, int grp,
                                            int tid) {
  namespace mma = sinter::mma;
  float *As = smem;
  float *Bs = smem + cfg::kStages * kAStage;
  const float *x = sinter::slot<const float>(b, 0);
  const float *w = sinter::slot<const float>(b, 1);
  const int lane = tid & 31, warp = tid >> 5;

  // ---- A loader state: lane l of warp wp copies rows (l % 8) + 8 * (wp + warps * r),
  // r < kARows, at k = l / 8 + 4 j. Per row: which taps fall inside the input (one bit per
  // tap when the kernel has at most 31 taps, else one mask per dimension) and the input
  // position the taps are relative to.
  constexpr int kWarps = kThreads / 32;
  const int aK0 = lane >> 3;
  const float *aBase[kARows];
  unsigned maskD[kARows], maskH[kARows], maskW[kARows], maskTap[kARows];
#pragma unroll
  for (int r = 0; r < kARows; ++r) {
    const i64 am = m0 + (lane & 7) + 8 * (warp + kWarps * r);
    aBase[r] = x;
    maskD[r] = maskH[r] = maskW[r] = maskTap[r] = 0;
    if (am >= kM)
      continue;
    const int nb = (int)(am / kOutVol);
    const int sp = (int)(am - (i64)nb * kOutVol);
    const int od = sp / kOutHW, oh = (sp / cfg::kOutW) % cfg::kOutH, ow = sp % cfg::kOutW;
    const int bd = cfg::kTransposed ? od + cfg::kPD : od * cfg::kSD - cfg::kPD;
    const int bh = cfg::kTransposed ? oh + cfg::kPH : oh * cfg::kSH - cfg::kPH;
    const int bw = cfg::kTransposed ? ow + cfg::kPW : ow * cfg::kSW - cfg::kPW;
    maskD[r] = tapMask<cfg::kKD, cfg::kDD, cfg::kInD>(bd);
    maskH[r] = tapMask<cfg::kKH, cfg::kDH, cfg::kInH>(bh);
    maskW[r] = tapMask<cfg::kKW, cfg::kDW, cfg::kInW>(bw);
    if constexpr (kTapBits) {
#pragma unroll
      for (int tap = 0; tap < kKVol; ++tap) {
        const int kd = tap / kKHW, kh = (tap / cfg::kKW) % cfg::kKH, kw = tap % cfg::kKW;
        maskTap[r] |= ((maskD[r] >> kd) & (maskH[r] >> kh) & (maskW[r] >> kw) & 1u) << tap;
      }
    }
    // May point outside x; only dereferenced for in-range taps.
    aBase[r] = x + ((i64)nb * cfg::kCin + (i64)grp * kCinG) * kInVol + (i64)bd * kInHW +
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
    // Past K: a tap index whose mask bit is never set. With tap bits the entry is the tap's
    // bit itself, so that the loader tests it with one AND.
    const int which =
        kTapBits ? int(1u << (k >= kK ? 31 : tap)) : (k >= kK ? 31 : (kd | kh << 8 | kw << 16));
    kTable[k] = make_int2(off, which);
  }
  __syncthreads();

  // ---- B loader state: this thread loads k column bK of the tile, rows n = bN0 + pass
  // (4-byte copies), or 16-byte pieces tid, tid + kThreads, ... of the tile (kPackedB).
  const int bK = tid % cfg::kBK;
  const int bN0 = tid / cfg::kBK;
  constexpr int kBPass = kThreads / cfg::kBK;

  // Part q of kSteps of a stage's copies: the main loop issues one part before each k8 slice
  // so that the loader's address arithmetic and copies interleave with the mma instructions
  // (with two warps per scheduler, a burst of copies before the slices left the tensor pipe
  // idle).
  constexpr int kSteps = cfg::kBK / 8;
  auto loadPart = [&](int kt, int stage, int q) {
    float *as = As + stage * kAStage;
    float *bs = Bs + stage * kBStage;
    const int kb = kt * cfg::kBK;
    constexpr int kJ = cfg::kBK / 4, kP = cfg::kBN / kBPass;
#pragma unroll
    for (int j = q * kJ / kSteps; j < (q + 1) * kJ / kSteps; ++j) {
      const int kr = aK0 + 4 * j;
      const int2 e = kTable[kb + kr]; // 4 entries per warp, each a broadcast
#pragma unroll
      for (int r = 0; r < kARows; ++r) {
        bool ok;
        if constexpr (kTapBits)
          ok = (maskTap[r] & unsigned(e.y)) != 0;
        else
          ok = e.y != 31 && ((maskD[r] >> (e.y & 255)) & (maskH[r] >> ((e.y >> 8) & 255)) &
                             (maskW[r] >> (e.y >> 16)) & 1u);
        if constexpr (cfg::kZeroTaps)
          ok = false; // zeros, so that a NaN or Inf in x reaches no output of the phase
        const int row = (lane & 7) + 8 * (warp + kWarps * r);
        mma::cpAsync4(as + row * kAStride + kr, ok ? aBase[r] + e.x : x, ok);
      }
    }
    if constexpr (cfg::kPackedB) {
      constexpr int kPieces = cfg::kBN * cfg::kBK / 4 / kThreads; // per thread and stage
      const float *rows = sinter::slot<const float>(b, cfg::kBSlot) + cfg::kBBase +
                          (i64)(grp * kCoutG + n0) * cfg::kBRow;
#pragma unroll
      for (int p = q * kPieces / kSteps; p < (q + 1) * kPieces / kSteps; ++p) {
        const int piece = tid + p * kThreads;
        const int nr = piece / (cfg::kBK / 4), kc = (piece % (cfg::kBK / 4)) * 4;
        const bool ok = n0 + nr < kCoutG && kb + kc < kK;
        mma::cpAsync16(bs + nr * kBStride + kc, ok ? rows + (i64)nr * cfg::kBRow + kb + kc : rows,
                       ok ? 16 : 0);
      }
      return;
    }
    const int k = kb + bK;
    const bool kOk = k < kK && !cfg::kZeroTaps;
    i64 wOff;
    constexpr i64 kNStep = cfg::kTransposed ? kWKVol : kK; // weight distance between columns
    if constexpr (cfg::kTransposed) {
      const int ci = k / kKVol, tap = k - ci * kKVol;
      wOff = ((i64)(grp * kCinG + ci) * kCoutG) * kWKVol + weightTap(tap);
    } else {
      wOff = (i64)grp * kCoutG * kK + k;
    }
#pragma unroll
    for (int p = q * kP / kSteps; p < (q + 1) * kP / kSteps; ++p) {
      const int nr = bN0 + p * kBPass;
      const int n = n0 + nr;
      const bool ok = kOk && n < kCoutG;
      mma::cpAsync4(bs + nr * kBStride + bK, ok ? w + wOff + (i64)n * kNStep : w, ok);
    }
  };

  const int wm = (warp % cfg::kWarpsM) * (cfg::kBM / cfg::kWarpsM);
  const int wn = (warp / cfg::kWarpsM) * (cfg::kBN / cfg::kWarpsN);
  mma::cpAsyncMainLoop<cfg::kStages, kKTiles, kSteps, kTwoLevel>(
      acc, loadPart, [&](float(&sums)[kMI][kNI][4], int st, int q) {
        warpStep<cfg::kMath>(sums, As + st * kAStage + wm * kAStride,
                             Bs + st * kBStage + wn * kBStride, lane, q * 8);
      });
  __syncthreads();
}

} // namespace conv_igemm

#include "conv_wgmma.cuh"

namespace conv_igemm {

/// Each of a thread's rows (m0 + r0 + mi * 16 + h * 8): its image (-1 past mEnd) and its
/// position in y.
__device__ __forceinline__ void rowFacts(i64 m0, i64 mEnd, int r0, int (&rowImage)[kMI][2],
                                         i64 (&rowPos)[kMI][2]) {
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i64 m = m0 + r0 + mi * 16 + h * 8;
      const int nb = (int)(m / kOutVol);
      rowImage[mi][h] = m < mEnd ? nb : -1;
      rowPos[mi][h] = yPosition(m - (i64)nb * kOutVol);
    }
}

/// Engine 1's tails over the channels (one group in the one column span, n0 = 0): row (mi,
/// h) of the thread's accumulators replaced by its epilogue values (bias, Epilogue) and each
/// folded into `fold` (columns past kCout skipped). Called for rows of an image only.
template <class Fold>
__device__ __forceinline__ void foldRowEpilogue(float (&acc)[kMI][kNI][4], const sinter::Buffers &b,
                                                int mi, int h, int nb, i64 sp, int t, Fold &fold) {
  const float *bias = sinter::slot<const float>(b, 2);
#pragma unroll
  for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int c = ni * 8 + 2 * t + j;
      if (c >= cfg::kCout)
        continue;
      float v = acc[mi][ni][h * 2 + j];
      if constexpr (cfg::kHasBias)
        v += bias[c];
      v = Epilogue{}(v, nb, c, sp, b);
      acc[mi][ni][h * 2 + j] = v;
      fold.add(v);
    }
}

/// The sum over row (mi, h)'s channels of exp(v - shift), over the thread's columns and then
/// the row's four lanes (`image` false: the row adds nothing but joins the shuffles). With
/// KEEP, each value is replaced by its exponential.
template <bool KEEP>
__device__ __forceinline__ float rowExpSum(float (&acc)[kMI][kNI][4], int mi, int h, bool image,
                                           float shift, int t) {
  float sum = 0.f;
  if (image) {
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        if (ni * 8 + 2 * t + j < cfg::kCout) {
          const float e = expf(acc[mi][ni][h * 2 + j] - shift);
          sum += e;
          if constexpr (KEEP)
            acc[mi][ni][h * 2 + j] = e;
        }
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  return sum + __shfl_xor_sync(0xffffffffu, sum, 2);
}

/// kCReduce (engine 1): the epilogue's values of each of the tile's rows reduced over its
/// channels, which the one column span holds (n0 = 0): over the thread's columns, then the
/// row's four lanes; lane t == 0 runs CReduceEpilogue (c = 0) and stores the row's value
/// (rows past mEnd compute nothing but join the shuffles). A logsumexp keeps the values in
/// `acc` for a second pass: the row's maximum first, then one exponential a value (an online
/// form, which rescales its sum whenever the maximum grows, was as slow as storing y and
/// reducing it in a second kernel). KIND is cfg::kCReduce (a template parameter, so that
/// kernels without the reduction never instantiate it).
template <int KIND>
__device__ __forceinline__ void
reduceTileChannels(float (&acc)[kMI][kNI][4], const sinter::Buffers b, i64 m0, i64 mEnd, int tid) {
  const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  float *out = sinter::slot<float>(b, 3);
  int rowImage[kMI][2];
  i64 rowPos[kMI][2];
  rowFacts(m0, mEnd, (warp % cfg::kWarpsM) * (cfg::kBM / cfg::kWarpsM) + g, rowImage, rowPos);
  constexpr bool kLse = KIND == sinter::kFoldLogSumExp;
  // One-pass kinds fold the values as they come; a logsumexp folds their maximum.
  using Fold = sinter::ChannelFold<kLse ? sinter::kFoldMax : KIND>;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int nb = rowImage[mi][h];
      const i64 sp = rowPos[mi][h];
      Fold fold;
      if (nb >= 0)
        foldRowEpilogue(acc, b, mi, h, nb, sp, t, fold);
      fold.template mergeLanes<4>();
      float r = fold.result(cfg::kCout);
      if constexpr (kLse) {
        const float shift = sinter::logSumExpShift(r);
        r = logf(rowExpSum<false>(acc, mi, h, nb >= 0, shift, t)) + shift;
      }
      if (t == 0 && nb >= 0)
        out[(i64)nb * kYVol + sp] = CReduceEpilogue{}(r, nb, 0, sp, b);
    }
}

/// kSoftmax (engine 1, every channel in the one column span, n0 = 0): each of the thread's
/// rows of `acc` replaced by SoftmaxEpilogue of the softmax (1) or log_softmax (2) over the
/// channels of its epilogue values: the row's maximum over the thread's columns and its
/// four lanes, then the sum of exponentials likewise (rows of no image skip the math but
/// join the shuffles).
__device__ __forceinline__ void softmaxTileChannels(float (&acc)[kMI][kNI][4],
                                                    const sinter::Buffers b,
                                                    const int (&rowImage)[kMI][2],
                                                    const i64 (&rowPos)[kMI][2], int t) {
  constexpr bool kLog = cfg::kSoftmax == 2;
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int nb = rowImage[mi][h];
      const i64 sp = rowPos[mi][h];
      // The row's maximum (a NaN propagates: every output of the row is then NaN).
      sinter::ChannelFold<sinter::kFoldMax> top;
      if (nb >= 0)
        foldRowEpilogue(acc, b, mi, h, nb, sp, t, top);
      top.template mergeLanes<4>();
      const float m = top.result(cfg::kCout);
      const float sum = rowExpSum<!kLog>(acc, mi, h, nb >= 0, m, t);
      const float k = kLog ? m + logf(sum) : 1.f / sum;
      if (nb >= 0) {
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const int c = ni * 8 + 2 * t + j;
            if (c < cfg::kCout)
              acc[mi][ni][h * 2 + j] = SoftmaxEpilogue{}(
                  kLog ? acc[mi][ni][h * 2 + j] - k : acc[mi][ni][h * 2 + j] * k, nb, c, sp, b);
          }
      }
    }
}

/// kPoolKind (engine 1's pool tiles): tile tl's epilogue values (bias, Epilogue) folded into
/// the pool's windows and the pooled values stored through PoolEpilogue. A thread's two rows
/// of each 16-row block are rows of one column (kPKH 2 or 4: folded in the thread) or two
/// columns 8 apart (kPKH 1: parts of two windows); a window's kPKW columns are lanes 4 apart,
/// and with kPKH 4 its other rows lanes 16 apart, folded by butterfly shuffles, so that
/// every lane of the window holds its value. A thread's windows of a column (its slots: its
/// blocks x parts, consecutive 8- or 16 / kPKH-column runs of the tile where blocks lie side
/// by side) are then stored by the window's lanes in turn, lane k of a window's kPKW storing
/// slot k: with two slots and windows of 2, one store covers 8 consecutive pooled values of
/// each of four channels. Positions past the output (ceil_mode's clipped windows, the last
/// tile of a row) add nothing; their epilogue runs at a position inside, so that a chain
/// reading tensors stays in bounds. KIND is cfg::kPoolKind.
template <int KIND>
__device__ __forceinline__ void poolTile(float (&acc)[kMI][kNI][4], const sinter::Buffers b,
                                         const wg::Tile &tl, int tid) {
  constexpr bool kMax = KIND == 1;
  constexpr int kParts = cfg::kPKH == 1 ? 2 : 1; // windows a block's column holds part of
  constexpr int kSlots = kMI * kParts;
  constexpr int kPooledHW = cfg::kPOH * cfg::kPOW;
  constexpr float kInvWindow = 1.f / float(cfg::kPKH * cfg::kPKW);
  constexpr bool kWholeWindows =
      cfg::kPOH * cfg::kPKH <= cfg::kOutH && cfg::kPOW * cfg::kPKW <= cfg::kOutW;
  const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  const int k = g % cfg::kPKW; // this lane's place in its windows
  const float *bias = sinter::slot<const float>(b, 2);
  float *out = sinter::slot<float>(b, 3);
  const int nb = tl.plane / cfg::kOutD, od = tl.plane % cfg::kOutD;
  auto merge = [](float a, float v) {
    if constexpr (kMax)
      return v > a || v != v ? v : a; // NaN propagates, as in PyTorch's max pool
    else
      return a + v;
  };
  // Per block and row: its place, whether it is inside the output, and the position in the
  // (n, c) volume its epilogue runs at; per slot: the pooled row and column of its window
  // and whether this lane stores it.
  int sp[kMI][2];
  bool in[kMI][2];
  int ph[kSlots], pw[kSlots];
  bool mine[kSlots];
#pragma unroll
  for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int oh, ow;
      wg::rowPlace(tl, warp * (cfg::kBM / cfg::kWarpsM) + 16 * mi + g + 8 * h, oh, ow);
      in[mi][h] = oh < cfg::kOutH && ow < cfg::kOutW;
      sp[mi][h] = (od * cfg::kOutH + (oh < cfg::kOutH ? oh : cfg::kOutH - 1)) * cfg::kOutW +
                  (ow < cfg::kOutW ? ow : cfg::kOutW - 1);
      if (h < kParts) {
        const int slot = mi * kParts + h;
        ph[slot] = oh / cfg::kPKH;
        pw[slot] = ow / cfg::kPKW;
        mine[slot] = oh % cfg::kPKH == 0 && ph[slot] < cfg::kPOH && pw[slot] < cfg::kPOW;
      }
    }
#pragma unroll
  for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int cl = tl.n0 + ni * 8 + 2 * t + j;
      const int c = tl.grp * kCoutG + (cl < kCoutG ? cl : 0);
      float val[kSlots];
#pragma unroll
      for (int s = 0; s < kSlots; ++s)
        val[s] = kMax ? -sinter::kInf : 0.f;
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float v = acc[mi][ni][h * 2 + j];
          if constexpr (cfg::kHasBias)
            v += bias[c];
          v = Epilogue{}(v, nb, c, sp[mi][h], b);
          float &w = val[mi * kParts + (kParts == 1 ? 0 : h)];
          w = in[mi][h] ? merge(w, v) : w;
        }
#pragma unroll
      for (int s = 0; s < kSlots; ++s) {
#pragma unroll
        for (int o = 4; o < 4 * cfg::kPKW; o <<= 1)
          val[s] = merge(val[s], __shfl_xor_sync(0xffffffffu, val[s], o));
        if constexpr (cfg::kPKH == 4)
          val[s] = merge(val[s], __shfl_xor_sync(0xffffffffu, val[s], 16));
      }
      if (cl >= kCoutG)
        continue;
      float *oc = out + ((i64)nb * cfg::kCout + c) * cfg::kOutD * kPooledHW + od * kPooledHW;
#pragma unroll
      for (int s = 0; s < kSlots; ++s) {
        if (s % cfg::kPKW != k || !mine[s])
          continue;
        float v = val[s];
        if constexpr (!kMax) {
          // An average over the window's part inside the output (ceil_mode clips the last).
          const int rowsIn = cfg::kOutH - ph[s] * cfg::kPKH;
          const int colsIn = cfg::kOutW - pw[s] * cfg::kPKW;
          if (kWholeWindows || (rowsIn >= cfg::kPKH && colsIn >= cfg::kPKW))
            v *= kInvWindow;
          else
            v /= float((rowsIn < cfg::kPKH ? rowsIn : cfg::kPKH) *
                       (colsIn < cfg::kPKW ? colsIn : cfg::kPKW));
        }
        const int q = ph[s] * cfg::kPOW + pw[s];
        oc[q] = PoolEpilogue{}(v, nb, c, (i64)od * kPooledHW + q, b);
      }
    }
}

/// The epilogue of one tile: thread tid (of the kThreads accumulator threads) holds rows
/// m0 + wm + mi * 16 + g (+8) (those below mEnd are the tile's), columns n0 + wn + ni * 8 +
/// 2t (+1) of group grp. `red` is kWarpsM * kBN * 2 doubles of shared memory.
__device__ __forceinline__ void storeTile(float (&acc)[kMI][kNI][4], const sinter::Buffers b,
                                          i64 m0, i64 mEnd, int n0, int grp, int tid, double *red) {
  const int lane = tid & 31, warp = tid >> 5;
  const int wm = (warp % cfg::kWarpsM) * (cfg::kBM / cfg::kWarpsM);
  const int wn = (warp / cfg::kWarpsM) * (cfg::kBN / cfg::kWarpsN);

  // ---- Epilogue. Thread holds rows wm + mi*16 + g (+8), columns wn + ni*8 + 2t (+1). Columns
  // are finished one at a time (stored, and their statistics reduced), so that no per-column
  // sums stay live next to the accumulators (with them engine 1's 128x128 tile spilled).
  const int g = lane >> 2, t = lane & 3;
  const float *bias = sinter::slot<const float>(b, 2);
  float *y = sinter::slot<float>(b, 3);
  double *stats = sinter::slot<double>(b, 4);
  // The block-reduced statistics path needs the block's rows in one image.
  const bool oneImage = m0 / kOutVol == (mEnd - 1) / kOutVol;
  // Each row's image (-1 past the tile's rows) and position in y. Engine 1 runs this once
  // per tile of its persistent loop and computes them once per row (per element cost its
  // convolutions 10-27% on the H200); engine 0 computes them per element (in arrays they
  // are hoisted out of its main loop: one kernel went from 66 to 174 registers).
  int rowImage[kMI][2];
  i64 rowPos[kMI][2];
  if constexpr (kWgmma)
    rowFacts(m0, mEnd, wm + g, rowImage, rowPos);
  if constexpr (cfg::kSoftmax != 0)
    softmaxTileChannels(acc, b, rowImage, rowPos, t);
  // Engine 1's consumers may still be reading `red` for their previous tile.
  if constexpr (cfg::kAccumulateStats && kWgmma)
    if (oneImage)
      mathSync();
  // An epilogue that reads tensors loads inside Epilogue; element by element, each load
  // would wait behind the last one's use and store (conv_shift.cuh's storeStagedLines says
  // how). Engine 1 works out a column's values first, without branches (rows past the tile
  // read image 0 at their position in the plane, columns past the group the group's first
  // channel, and neither is stored), so that their loads are in flight together.
  constexpr bool kValuesFirst = kWgmma && cfg::kEpilogueReadsTensors && cfg::kSoftmax == 0;
#pragma unroll
  for (int ni = 0; ni < kNI; ++ni) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int cl = n0 + wn + ni * 8 + 2 * t + j;
      const int c = grp * kCoutG + cl;
      float first[kValuesFirst ? kMI : 1][2];
      if constexpr (kValuesFirst) {
        const int cIn = cl < kCoutG ? c : grp * kCoutG;
#pragma unroll
        for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            float v = acc[mi][ni][h * 2 + j];
            if constexpr (cfg::kHasBias)
              v += bias[cIn];
            first[mi][h] =
                Epilogue{}(v, rowImage[mi][h] < 0 ? 0 : rowImage[mi][h], cIn, rowPos[mi][h], b);
          }
      }
      float colSum = 0.f, colSq = 0.f;
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          int nb;
          i64 sp;
          if constexpr (kWgmma) {
            nb = rowImage[mi][h];
            sp = rowPos[mi][h];
          } else {
            // Tested before the division: computed ahead of it, the row facts are hoisted out
            // of the main loop and stay live through it.
            const i64 m = m0 + wm + mi * 16 + g + h * 8;
            if (m >= mEnd)
              continue;
            nb = (int)(m / kOutVol);
            sp = yPosition(m - (i64)nb * kOutVol);
          }
          if (nb < 0 || cl >= kCoutG)
            continue;
          float v = acc[mi][ni][h * 2 + j];
          if constexpr (kValuesFirst) {
            v = first[mi][h];
          } else if constexpr (cfg::kSoftmax == 0) {
            if constexpr (cfg::kHasBias)
              v += bias[c];
            v = Epilogue{}(v, nb, c, sp, b);
          }
          if constexpr (cfg::kStoreOutput)
            y[((i64)nb * cfg::kCout + c) * kYVol + sp] = v;
          if constexpr (cfg::kAccumulateStats) {
            if (oneImage) {
              colSum += v;
              if constexpr (cfg::kStatsSquares)
                colSq += v * v;
            } else {
              atomicAdd(&stats[((i64)nb * cfg::kCout + c) * 2 + 0], (double)v);
              if constexpr (cfg::kStatsSquares)
                atomicAdd(&stats[((i64)nb * cfg::kCout + c) * 2 + 1], (double)v * v);
            }
          }
        }
      }
      if constexpr (cfg::kAccumulateStats) {
        if (oneImage) {
          // Reduce over the 8 row lanes (g) of the warp into `red` (engine 0: the pipeline
          // buffers, free by now; engine 1: its own region); the warps along M are summed
          // below.
          double s = colSum, q = colSq;
#pragma unroll
          for (int o = 4; o < 32; o <<= 1) {
            s += __shfl_xor_sync(0xffffffffu, s, o);
            if constexpr (cfg::kStatsSquares)
              q += __shfl_xor_sync(0xffffffffu, q, o);
          }
          if (g == 0) {
            const int col = wn + ni * 8 + 2 * t + j;
            const int wmI = warp % cfg::kWarpsM;
            red[(wmI * cfg::kBN + col) * 2 + 0] = s;
            red[(wmI * cfg::kBN + col) * 2 + 1] = q;
          }
        }
      }
    }
  }

  if constexpr (cfg::kAccumulateStats) {
    if (!oneImage)
      return;
    // One atomic per column per block.
    mathSync();
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
      if constexpr (cfg::kStatsSquares)
        atomicAdd(&stats[((i64)nb * cfg::kCout + c) * 2 + 1], q);
    }
  }
}

/// Engine 1 (a template so that sm_80 builds never instantiate it): the producer warpgroup
/// streams every tile's boxes and weight stages; the consumer warpgroups multiply each of
/// the block's tiles and run the epilogue on it while the producer fills the next one's.
template <int E>
__device__ __forceinline__ void runWgmma(float *smem, const sinter::Buffers b,
                                         const sinter::TensorMaps *tm) {
  namespace sm90 = sinter::sm90;
  float *base = sm90::alignedBase(smem);
  const wg::Bars bars(sinter::mma::smemAddr(base));
  int tid = threadIdx.x;
  if (tid == 0)
    wg::initBarriers(bars);
  __syncthreads();
  if (tid < sm90::kProducerThreads) {
    if constexpr (cfg::kMinBlocks == 2)
      sm90::setMaxRegisters<wg::kTwoBlockProducerRegs, false>();
    if constexpr (cfg::kPingpong)
      sm90::setMaxRegisters<wg::kPingpongProducerRegs, false>();
    wg::produce(base, b, bars, tm, tid);
    return;
  }
  if constexpr (cfg::kMinBlocks == 2)
    sm90::setMaxRegisters<wg::kTwoBlockConsumerRegs, true>();
  if constexpr (cfg::kPingpong)
    sm90::setMaxRegisters<wg::kPingpongConsumerRegs, true>();
  tid -= sm90::kProducerThreads;
  // With kPingpong, warpgroup cw takes the block's tiles cw, cw + 2, ... (see wg::consume).
  const int cw = cfg::kPingpong ? tid / kThreads : 0;
  tid -= cw * kThreads;
  double *red = reinterpret_cast<double *>(base + wg::kRedBase) + cw * cfg::kWarpsM * cfg::kBN * 2;
  constexpr int kStep = cfg::kPingpong ? 2 : 1;
  // The tile's first chunk in the block's sequence of items: k * kChunks. Without kPingpong
  // every tile is this warpgroup's and a running count c0 gives the same value (and the
  // SASS of before alternation existed).
  int c0 = 0;
  for (int k = cw, t = blockIdx.x + cw * gridDim.x; t < wg::kTileCount;
       k += kStep, t += kStep * gridDim.x, c0 += wg::kChunks) {
    const wg::Tile tl = wg::tileAt(t);
    float acc[kMI][kNI][4];
    wg::consume<kMI + 0 * E, kNI>(acc, base, bars, tl, cfg::kPingpong ? k * wg::kChunks : c0, k,
                                  t + gridDim.x < wg::kTileCount, tid);
    const i64 m0 = (i64)tl.plane * kOutHW + tl.start;
    if constexpr (cfg::kCReduce != 0)
      reduceTileChannels<cfg::kCReduce>(acc, b, m0, m0 + tl.rows, tid);
    else if constexpr (cfg::kPoolKind != 0)
      poolTile<cfg::kPoolKind>(acc, b, tl, tid);
    else
      storeTile(acc, b, m0, m0 + tl.rows, tl.n0, tl.grp, tid, red);
  }
}

} // namespace conv_igemm

// With SINTER_CONV_TMA_B the kernel takes the weight rows' tensor map (conv_wgmma.cuh).
extern "C" __global__ void __launch_bounds__(conv_igemm::kBlockThreads, cfg::kMinBlocks)
#ifdef SINTER_CONV_TMA_B
    SINTER_KERNEL(const sinter::Buffers b, const __grid_constant__ sinter::TensorMaps tm) {
  const sinter::TensorMaps *maps = &tm;
#else
    SINTER_KERNEL(const sinter::Buffers b) {
  const sinter::TensorMaps *maps = nullptr;
#endif
  using namespace conv_igemm;
  extern __shared__ __align__(16) float smem[];
  if constexpr (kWgmma) {
    runWgmma<cfg::kEngine>(smem, b, maps);
  } else {
    (void)maps;
    const i64 m0 = (i64)blockIdx.x * cfg::kBM;
    const i64 mEnd = m0 + cfg::kBM < kM ? m0 + cfg::kBM : kM;
    const int n0 = blockIdx.y * cfg::kBN, grp = blockIdx.z;
    float acc[kMI][kNI][4];
    mmaSyncTile(acc, smem, b, m0, n0, grp, threadIdx.x);
    storeTile(acc, b, m0, mEnd, n0, grp, threadIdx.x, reinterpret_cast<double *>(smem));
  }
}
