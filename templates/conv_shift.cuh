//===- templates/conv_shift.cuh - convolution as per-tap GEMMs over shifted rows (sm_90a) ===//
//
// A stride-1 convolution (direct, or transposed, which is the direct one with mirrored
// taps) computed as kTaps GEMMs that share one accumulator: for tap t, output position o
// reads input o + off(t), so over a grid where positions are numbered in one flat order the
// tap's operand is the input's rows shifted by one constant. conv_stage.cuh writes the input
// channels last on a grid of extents (kPitchD, kPitchH, kPitchW) per image, the data at the
// start of each dim and zeros after it; output position (od, oh, ow) of image n is grid row
// q = ((n * kPitchD + od) * kPitchH + oh) * kPitchW + ow, and the input it reads for tap t is
// grid row q + tapOffset(t). A pitch P of a dim with input extent `in`, output extent `out`
// and tap offsets off(t) = kOff + kStep * t (input = output + off) makes that exact when
//   P >= out, P >= in, P > out - 1 + max off, and P >= in - min off:
// a read whose coordinate in that dim falls before the input borrows from the dim above and
// lands on column P + i >= in of the grid, a read past it lands on a column in [in, P) of
// the same row, and any cell with a coordinate past the input is zero (the emitter picks the
// smallest such P; for a transposed 3x3x3 convolution of stride 1 and no padding, P = out
// and no grid row is wasted). Reads before the first image fall outside the tensor map and
// read zeros. Grid rows past an output extent are computed and dropped.
//
// So each k tile (32 input channels of one tap) is two TMA boxes: A = 32 reduction indices
// of kBM output channels of the weight rows conv_pack.cuh wrote (k = chunk * kTaps * 32 +
// tap * 32 + channel), B = 32 channels of kBN consecutive grid rows from row q0 + tapOffset,
// both 128-byte rows in the 128-byte swizzle that wgmma's descriptors read (TF32 wgmma reads
// K-major operands only, hence channels last). The product is D[channel][position] = A B^T:
// output channels are the accumulator rows, grid rows its columns, so a warp's stores of one
// channel cover 8 consecutive positions (whole 32-byte sectors of y).
//
// Block: kBM / 64 consumer warpgroups and one producer warp (its first thread issues the
// copies of every k tile of every tile of the block, into a ring of kStages stages, each
// with a `full` barrier the copies complete and an `empty` one the consumers release); each
// consumer warpgroup multiplies 64 output channels by the whole B tile with wgmma m64nNk8
// (operands from shared memory). Persistent: block b takes tiles b, b + gridDim.x, ...; the
// ring runs on across tiles, so the producer fills the next tile's stages while the consumers
// store. Tiles are numbered with the output-channel tile fastest, then the group, then the position
// tile, so that blocks running together read the same grid rows.
//
// Output phases (kPhased: a transposed convolution with a stride S > 1 in some dim). Along
// such a dim, grid position p stands for the S outputs o = S * p + phi + kBase (phi < S;
// kBase = S * floor(pad / S) - pad), which all read inputs p + floor(pad / S) - j for the
// taps j = 0 .. (K - 1) * dil / S: a stride-1 walk of the grid again (kOff = floor(pad / S),
// kStep = -1). Phase phi and tap j meet where the stored kernel has a tap k with
// k * dil = j * S + phi; the phases become product rows (row = co * kPhases + phi, phi flat
// over kSD x kSH x kSW), their weights zero where they do not meet (conv_shift_rows.cuh), so
// no product is spent on the structural zeros of the strided output, only on the pairs of a
// phase and a tap that do not meet (S4: 27 of 64).
//
// Small groups (8 or 16 input channels): one k group of 32 input channels (one k tile per
// tap) holds 32 / (Cin / groups) channel groups, whose product rows follow each other (all
// rows of group 0, then 1, ...). A consumer warpgroup's 64 rows lie in kSliceGroups
// consecutive groups and multiply only the k8 steps of those groups' channels (the weights
// are zero elsewhere): S4's 4 groups of 8 channels x 8 phases x 8 output channels are 256 rows
// of one k group, and each warpgroup runs one k8 step of four per k tile. Without small
// groups a k group is a channel group (kGroupsPerK = 1) and every warpgroup runs all four.
//
// Epilogue per element: bias, `Epilogue`, store of y [N, Cout, outD, outH, outW], and with
// kAccumulateStats the per-(n, c) sum and sum of squares into slot 4 (double2 per (n, c);
// summed per thread in fp32, over the 4 lanes of a row, then one atomic per row and image).
//
// Slots: 2 bias, 3 y, 4 stats, 6 weight rows (tensor map 0: dims {kKPad, Cout}, box {32, kBM}),
// 7 the staged input (tensor map 1: dims {Cin, rows}, box {32, kBoxCopyRows}); the epilogue
// may read 5 and 8..15. Expects (namespace cfg): kN, kCin, kCout, kGroups, kOutD/H/W, kKD/H/W (taps
// per dim), kPitchD/H/W, kOffD/H/W, kStepD/H/W, kPhased, kSD/H/W and kBaseD/H/W (phases; 1 and
// 0 without), kKGroups, kCinK (input channels per k group), kRowsK (product rows per k group),
// kStoreWarpgroups (and with them kProducerRegs, kStorerRegs, kConsumerRegs), kHasBias,
// kStoreOutput, kAccumulateStats, kBM, kBN, kStages, kBoxRows (kBN, or kBN + 8: kWRun below),
// kBoxCopyRows (rows of one TMA copy of the box: kBoxRows, or a divisor of it within TMA's
// 256), kEpilogueReadsTensors (see storeTile); struct Epilogue.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "mma.cuh"
#include "wgmma.cuh"

namespace conv_shift {

using sinter::i64;

constexpr int kCinG = cfg::kCin / cfg::kGroups;
constexpr int kCoutG = cfg::kCout / cfg::kGroups;
constexpr int kPhases = cfg::kSD * cfg::kSH * cfg::kSW;
constexpr int kRowsG = kCoutG * kPhases; // product rows of a channel group
constexpr int kGroupsPerK = cfg::kGroups / cfg::kKGroups;
// Channel groups a consumer warpgroup's 64 rows meet, and the k8 steps of a k tile it runs.
constexpr int kSliceGroups = kGroupsPerK == 1 || kRowsG >= 64 ? 1 : 64 / kRowsG;
constexpr int kSliceSteps = kGroupsPerK == 1 ? 4 : kSliceGroups * kCinG / 8;
constexpr int kTaps = cfg::kKD * cfg::kKH * cfg::kKW;
constexpr int kChunks = (cfg::kCinK + 31) / 32;
constexpr int kKPadRows = kChunks * cfg::kKD * cfg::kKH * cfg::kKW * 32; // floats a weight row
constexpr int kKTiles = kChunks * kTaps;
constexpr int kPlane = cfg::kPitchH * cfg::kPitchW;
constexpr int kGridVol = cfg::kPitchD * kPlane; // grid rows per image
constexpr i64 kRows = (i64)cfg::kN * kGridVol;
constexpr int kOutHW = cfg::kOutH * cfg::kOutW;
constexpr i64 kOutVol = (i64)cfg::kOutD * kOutHW;
// The grid is the output itself: a grid row's image and position need one division.
constexpr bool kDense = !cfg::kPhased && cfg::kPitchD == cfg::kOutD && cfg::kPitchH == cfg::kOutH &&
                        cfg::kPitchW == cfg::kOutW;
// Column pairs (2t, 2t + 1) are one 8-byte store: same image, adjacent positions; and a
// tile spans at most two images.
constexpr bool kPairs = kDense && kGridVol % 2 == 0 && kGridVol >= cfg::kBN;
constexpr int kMTiles = (cfg::kRowsK + cfg::kBM - 1) / cfg::kBM;
// Every accumulator row is a product row of the k group (no row test in the epilogue).
constexpr bool kWholeM = cfg::kRowsK % cfg::kBM == 0;
constexpr int kPTiles = int((kRows + cfg::kBN - 1) / cfg::kBN);
constexpr int kTileCount = kPTiles * cfg::kKGroups * kMTiles;
constexpr int kConsumers = cfg::kBM / 64 * 128;
// kStoreWarpgroups (staged lines only; 0, 1 or one per consumer warpgroup): storing
// warpgroup j stores the lines of consumer warpgroups j, j + kStoreWarpgroups, ... of tile t
// while they multiply tile t + 1; consumer warpgroup wg hands its slice's staging over
// through named barriers kFreeBar + wg (storer: read out) and kFullBar + wg (consumer:
// staged).
constexpr bool kStoring = cfg::kStoreWarpgroups > 0;
constexpr int kStorers = cfg::kStoreWarpgroups * 128;
constexpr int kFreeBar = 5, kFullBar = 9; // 1 .. 4: a warpgroup's own staging barrier
// The consumer warpgroups first (warpgroups start at warp indices divisible by 4), then the
// storing warpgroups, then the producer, of which one thread works: a warp, or with storers
// a whole warpgroup, as setmaxnreg moves registers between warpgroups (producer
// kProducerRegs, storers kStorerRegs, consumers kConsumerRegs a thread).
constexpr int kBlockThreads = kConsumers + kStorers + (kStoring ? 128 : 32);
// With kRegisterA the consumers hold their weights in registers for the whole tile loop
// (small groups: a warpgroup's k8 steps of every tap, at most 32 registers), so a stage is
// only B's box.
//
// With kWRun (the emitter's kBoxRows = kBN + 8) the kKW taps of one (D, H) tap pair read
// one box of kBoxRows grid rows: tap tw's kBN rows start kStepW * tw - kWShift0 rows into
// it, and its B descriptor starts there, inside the box's swizzle pattern, which TMA anchored
// at the stage's 1024-byte boundary. A stage then feeds kKW taps' products, and the grid rows
// they share cross L2 once instead of kKW times. Weights not in registers come with the
// stage too: the kKW taps' kBM x 32 boxes, one after the other, before the grid rows. A box
// of over 256 rows (TMA's limit) is copied in pieces of kBoxCopyRows, each a whole number of
// 8-row swizzle atoms, so the pieces' swizzle meets as one box's would.
constexpr bool kWRun = cfg::kBoxRows > cfg::kBN;
constexpr int kTapsPerStage = kWRun ? cfg::kKW : 1;
constexpr int kWShift0 = kWRun && cfg::kStepW < 0 ? cfg::kStepW * (cfg::kKW - 1) : 0;
constexpr int kLoads = kKTiles / kTapsPerStage; // stages a tile
constexpr int kWeightRows = cfg::kRegisterA ? 0 : cfg::kBM * kTapsPerStage; // a stage's A rows
constexpr unsigned kStageBytes = (kWeightRows + cfg::kBoxRows) * 32 * 4;
// The staged epilogue (kStagedLines): each warpgroup writes its 64 x kBN accumulators to
// shared memory, then its warps (or its storing warpgroup's) store whole output lines: the kSW product rows of one
// (channel, D phase, H phase) hold the W phases of one output row, interleaved there.
constexpr int kStagePitch = cfg::kBN + 8; // floats; float2 writes of 16 lanes hit 32 banks
constexpr unsigned kStagingOffset = cfg::kStages * kStageBytes + cfg::kStages * 16;
constexpr int kLineLen = cfg::kSW * cfg::kBN;
constexpr int kSliceLines = 64 / cfg::kSW; // lines of a warpgroup's staged rows
// Lines whose values an epilogue that reads tensors works out before it stores any of them
// (storeStagedLines): 2 (4 spilled convt3d_s2_skip_mul_tanh's storers and was 9% slower on
// convt2d_kb5_sub_tanh), at most a warp's share of a slice's lines, so that every batch lies
// in the slice (both are powers of two). SINTER_LINE_BATCH overrides it in timing builds.
#ifndef SINTER_LINE_BATCH
#define SINTER_LINE_BATCH 2
#endif
// (Without staged lines, e.g. a W stride of 3, whose slices would not be whole lines, it is
// unused and 1.)
constexpr int kLineBatch =
    !cfg::kStagedLines || !cfg::kEpilogueReadsTensors || kSliceLines < 8
        ? 1
        : (SINTER_LINE_BATCH < kSliceLines / 4 ? SINTER_LINE_BATCH : kSliceLines / 4);
static_assert(kSliceLines % (4 * kLineBatch) == 0 || kLineBatch == 1, "whole batches of lines");

static_assert(cfg::kBM == 64 || cfg::kBM == 128 || cfg::kBM == 256, "1, 2 or 4 warpgroups");
static_assert(cfg::kBM * cfg::kBN <= 128 * 256, "at most 128 accumulators a thread");
static_assert(cfg::kBN == 64 || cfg::kBN == 128 || cfg::kBN == 256, "wgmma widths, TMA boxes");
static_assert(cfg::kStages >= 2, "a ring of stages");
static_assert(kGroupsPerK == 1
                  ? cfg::kCinK == kCinG && (cfg::kGroups == 1 || kCinG % 32 == 0)
                  : cfg::kCinK == 32 && kCinG * kGroupsPerK == 32 && kCinG % 8 == 0 &&
                        cfg::kRowsK % cfg::kBM == 0 && (kRowsG % 64 == 0 || 64 % kRowsG == 0),
              "a k tile reads one k group's channels; small groups: whole k8 steps, whole "
              "tiles, and a warpgroup's rows in whole groups or within one");
static_assert(cfg::kRowsK == kRowsG * kGroupsPerK, "a k group's rows are its groups' rows");
static_assert(cfg::kPhased || kPhases == 1, "phases only in the phase walk");
static_assert(cfg::kBoxRows == cfg::kBN ||
                  ((!cfg::kRegisterA || kChunks == 1) && cfg::kBoxRows % 8 == 0 &&
                   (cfg::kStepW < 0 ? -cfg::kStepW : cfg::kStepW) * (cfg::kKW - 1) <=
                       cfg::kBoxRows - cfg::kBN),
              "a box shared by the W taps: with weights in registers one chunk; every tap's "
              "rows inside it, whole swizzle atoms");
static_assert(cfg::kBoxRows % cfg::kBoxCopyRows == 0 && cfg::kBoxCopyRows % 8 == 0 &&
                  cfg::kBoxCopyRows <= 256,
              "the box in TMA copies of whole swizzle atoms, at most 256 rows each");
static_assert(!cfg::kRegisterA || (kGroupsPerK > 1 && kSliceSteps * kTaps <= 8),
              "weights in registers: small groups, at most 8 fragments a thread");
static_assert(!cfg::kStagedLines || (cfg::kPhased && 64 % cfg::kSW == 0 && cfg::kSW <= 32),
              "staged lines: a warpgroup's rows hold whole lines, a lane one W phase");
static_assert(!cfg::kStagedLines || kOutVol < (1ll << 31), "staged lines: 32-bit positions");
static_assert(!kStoring || (cfg::kStagedLines && kConsumers % kStorers == 0 &&
                            kBlockThreads <= 1024),
              "storing warpgroups store lines, as many consumer warpgroups each, in 1024 threads");
// setmaxnreg moves registers within the block's, which launch with the launch bounds' share:
// targets beyond that would leave setmaxnreg.inc waiting for ever.
static_assert(!kStoring ||
                  128 * cfg::kProducerRegs + kStorers * cfg::kStorerRegs +
                          kConsumers * cfg::kConsumerRegs <=
                      kBlockThreads * (65536 / kBlockThreads / 8 * 8),
              "setmaxnreg targets within the block's registers");
static_assert(cfg::kPhased || (cfg::kPitchD >= cfg::kOutD && cfg::kPitchH >= cfg::kOutH &&
                               cfg::kPitchW >= cfg::kOutW),
              "every output position is a grid row");
static_assert(kRows + kGridVol < (1ll << 31), "grid rows are TMA coordinates (32-bit)");

/// Grid-row offset of tap `tap` (flat over kKD x kKH x kKW): input = output + kOff + kStep *
/// t per dim.
__device__ __forceinline__ int tapOffset(int tap) {
  const int td = tap / (cfg::kKH * cfg::kKW), th = (tap / cfg::kKW) % cfg::kKH, tw = tap % cfg::kKW;
  return ((cfg::kOffD + cfg::kStepD * td) * cfg::kPitchH + (cfg::kOffH + cfg::kStepH * th)) *
             cfg::kPitchW +
         cfg::kOffW + cfg::kStepW * tw;
}

/// One tile: grid rows row0 .. row0 + kBN - 1, product rows m0 .. of k group grp.
struct Tile {
  int row0, grp, m0;
};

__device__ __forceinline__ Tile tileAt(int t) {
  Tile tl;
  tl.m0 = (t % kMTiles) * cfg::kBM;
  const int rest = t / kMTiles;
  tl.grp = rest % cfg::kKGroups;
  tl.row0 = rest / cfg::kKGroups * cfg::kBN;
  return tl;
}

/// The producer (one thread): both boxes of every k tile of every tile of this block.
__device__ __forceinline__ void produce(const sinter::TensorMaps &tm, unsigned smem0,
                                        unsigned fullBar, unsigned emptyBar) {
  namespace sm90 = sinter::sm90;
  int it = 0;
  for (int t = blockIdx.x; t < kTileCount; t += gridDim.x) {
    const Tile tl = tileAt(t);
    const int wRow = tl.grp * cfg::kRowsK + tl.m0, ch0 = tl.grp * cfg::kCinK;
    for (int ld = 0; ld < kLoads; ++ld, ++it) {
      const int s = it % cfg::kStages;
      if (it >= cfg::kStages)
        sm90::mbarWait(emptyBar + s * 8, (it / cfg::kStages - 1) & 1);
      const unsigned a = smem0 + s * kStageBytes, bar = fullBar + s * 8;
      const int kt = ld * kTapsPerStage, c = kt / kTaps, tap = kt - c * kTaps;
      sm90::mbarArriveExpectTx(bar, kStageBytes);
      if constexpr (!cfg::kRegisterA) {
#pragma unroll
        for (int j = 0; j < kTapsPerStage; ++j)
          sm90::tmaLoad2d(a + j * cfg::kBM * 128, tm.m[0], (kt + j) * 32, wRow, bar);
      }
#pragma unroll
      for (int p = 0; p < cfg::kBoxRows / cfg::kBoxCopyRows; ++p)
        sm90::tmaLoad2d(a + (kWeightRows + p * cfg::kBoxCopyRows) * 128, tm.m[1], ch0 + c * 32,
                        tl.row0 + tapOffset(tap) + kWShift0 + p * cfg::kBoxCopyRows, bar);
    }
  }
}

/// Image and position in y of grid row q; false for rows outside the output.
__device__ __forceinline__ bool gridRow(int q, int &n, i64 &sp) {
  n = q / kGridVol;
  const int r = q - n * kGridVol;
  if constexpr (kDense) {
    sp = r;
    return q < kRows;
  } else {
    const int od = r / kPlane, r2 = r - od * kPlane;
    const int oh = r2 / cfg::kPitchW, ow = r2 - oh * cfg::kPitchW;
    sp = ((i64)od * cfg::kOutH + oh) * cfg::kOutW + ow;
    return q < kRows && od < cfg::kOutD && oh < cfg::kOutH && ow < cfg::kOutW;
  }
}

/// The epilogue of tile tl: consumer thread tid holds product rows m0 + 16 warp + g (+8)
/// and grid rows row0 + 8 i + 2 t (+1).
template <int NI>
__device__ __forceinline__ void storeTile(float (&acc)[NI][4], const Tile &tl, int tid,
                                          const sinter::Buffers &b) {
  const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  const float *bias = sinter::slot<const float>(b, 2);
  float *y = sinter::slot<float>(b, 3);
  double *stats = sinter::slot<double>(b, 4);
  int c[2], phD[2], phH[2], phW[2];
  bool rowOk[2];
  float bv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int vr = tl.m0 + warp * 16 + g + 8 * h;
    rowOk[h] = kWholeM || vr < cfg::kRowsK;
    const int r = rowOk[h] ? vr : 0, inGroup = r % kRowsG, phi = inGroup % kPhases;
    c[h] = (tl.grp * kGroupsPerK + r / kRowsG) * kCoutG + inGroup / kPhases;
    bv[h] = cfg::kHasBias ? bias[c[h]] : 0.f;
    // Output coordinate of grid position 0 for this row's phase (o = S * p + this).
    phD[h] = phi / (cfg::kSH * cfg::kSW) + cfg::kBaseD;
    phH[h] = phi / cfg::kSW % cfg::kSH + cfg::kBaseH;
    phW[h] = phi % cfg::kSW + cfg::kBaseW;
  }
  // Statistics of the tile's first image and the next (the tile spans at most two when an
  // image has at least kBN grid rows; others go straight to memory).
  const int n0 = tl.row0 / kGridVol;
  float sum[2][2] = {{0.f, 0.f}, {0.f, 0.f}}, sq[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
  auto finish = [&](float v, int h, int n, i64 sp) {
    if constexpr (cfg::kStoreOutput)
      y[((i64)n * cfg::kCout + c[h]) * kOutVol + sp] = v;
    if constexpr (cfg::kAccumulateStats) {
      if (n == n0) {
        sum[h][0] += v;
        sq[h][0] += v * v;
      } else if (n == n0 + 1) {
        sum[h][1] += v;
        sq[h][1] += v * v;
      } else {
        atomicAdd(&stats[((i64)n * cfg::kCout + c[h]) * 2 + 0], (double)v);
        atomicAdd(&stats[((i64)n * cfg::kCout + c[h]) * 2 + 1], (double)v * v);
      }
    }
  };
#pragma unroll
  for (int i = 0; i < NI; ++i) {
    if constexpr (cfg::kPhased) {
      // Each row is one phase: grid position (pd, ph, pw) is its output S * p + ph*[h].
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const int q = tl.row0 + 8 * i + 2 * t + j;
        if (q >= kRows)
          continue;
        const int n = q / kGridVol, r = q - n * kGridVol;
        const int pd = r / kPlane, r2 = r - pd * kPlane;
        const int ph = r2 / cfg::kPitchW, pw = r2 - ph * cfg::kPitchW;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int od = cfg::kSD * pd + phD[h], oh = cfg::kSH * ph + phH[h],
                    ow = cfg::kSW * pw + phW[h];
          if (!rowOk[h] || unsigned(od) >= unsigned(cfg::kOutD) ||
              unsigned(oh) >= unsigned(cfg::kOutH) || unsigned(ow) >= unsigned(cfg::kOutW))
            continue;
          const i64 sp = ((i64)od * cfg::kOutH + oh) * cfg::kOutW + ow;
          finish(Epilogue{}(acc[i][2 * h + j] + bv[h], n, c[h], sp, b), h, n, sp);
        }
      }
    } else if constexpr (kPairs) {
      int n;
      i64 sp;
      if (!gridRow(tl.row0 + 8 * i + 2 * t, n, sp))
        continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (!rowOk[h])
          continue;
        const float v0 = Epilogue{}(acc[i][2 * h] + bv[h], n, c[h], sp, b);
        const float v1 = Epilogue{}(acc[i][2 * h + 1] + bv[h], n, c[h], sp + 1, b);
        if constexpr (cfg::kStoreOutput) {
          // One 8-byte store (S0's kernel 0.998 -> 0.846 ms against the float2 assignment,
          // which reaches the PTX as two 4-byte stores), except after an epilogue that reads
          // tensors: around the 8-byte stores the compiler reloaded those for every element
          // (convt3d_wide_bn_silu's batch norm: 516 loads per thread and tile against 260,
          // 0.520 -> 0.562 ms).
          float *p = y + ((i64)n * cfg::kCout + c[h]) * kOutVol + sp;
          if constexpr (cfg::kEpilogueReadsTensors)
            *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
          else
            sinter::storePair(p, v0, v1);
        }
        if constexpr (cfg::kAccumulateStats) {
          // Registers are indexed by constants only (a run-time index moves them to local
          // memory).
          const bool first = n == n0;
          sum[h][0] += first ? v0 + v1 : 0.f;
          sq[h][0] += first ? v0 * v0 + v1 * v1 : 0.f;
          sum[h][1] += first ? 0.f : v0 + v1;
          sq[h][1] += first ? 0.f : v0 * v0 + v1 * v1;
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        int n;
        i64 sp;
        if (!gridRow(tl.row0 + 8 * i + 2 * t + j, n, sp))
          continue;
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (rowOk[h])
            finish(Epilogue{}(acc[i][2 * h + j] + bv[h], n, c[h], sp, b), h, n, sp);
      }
    }
  }
  if constexpr (cfg::kAccumulateStats) {
    const int last =
        int((tl.row0 + cfg::kBN - 1 < kRows ? tl.row0 + cfg::kBN - 1 : kRows - 1) / kGridVol);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int slot = 0; slot < 2; ++slot) {
        float s = sum[h][slot], q = sq[h][slot];
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        s += __shfl_xor_sync(0xffffffffu, s, 2);
        q += __shfl_xor_sync(0xffffffffu, q, 1);
        q += __shfl_xor_sync(0xffffffffu, q, 2);
        if (t == 0 && rowOk[h] && n0 + slot <= last) {
          const i64 at = ((i64)(n0 + slot) * cfg::kCout + c[h]) * 2;
          atomicAdd(&stats[at], (double)s);
          atomicAdd(&stats[at + 1], (double)q);
        }
      }
  }
}

/// The staged epilogue (kStagedLines), first half: consumer thread tid's accumulators into
/// its warpgroup's 64 rows of staging at `st` (64 x kStagePitch floats).
template <int NI>
__device__ __forceinline__ void stageAccumulators(float (&acc)[NI][4], int tid, float *st) {
  const int lane = tid & 31, warp = (tid >> 5) & 3, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int i = 0; i < NI; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h)
      *reinterpret_cast<float2 *>(&st[(16 * warp + g + 8 * h) * kStagePitch + 8 * i + 2 * t]) =
          make_float2(acc[i][2 * h], acc[i][2 * h + 1]);
}

/// The staged epilogue, second half: warp `warp` (0 .. 3) of a storing warpgroup stores whole
/// output lines of tile tl's staged warpgroup slices wg0 .. wg1 - 1 (slice wg at
/// stBase + wg * 64 * kStagePitch), 32 consecutive outputs of a row per store, where fragment
/// stores would write every kSW-th output of 8 rows (S4's phase walk: 12 of each 32-byte
/// sector written, ncu).
__device__ __forceinline__ void storeStagedLines(const Tile &tl, int wg0, int wg1, int warp,
                                                 int lane, const sinter::Buffers &b,
                                                 const float *stBase) {
  const float *bias = sinter::slot<const float>(b, 2);
  float *y = sinter::slot<float>(b, 3);
  double *stats = sinter::slot<double>(b, 4);
  const int n0 = tl.row0 / kGridVol;
  // A lane's elements of every line are e = lane + 32 k: grid column e / kSW, W phase
  // lane % kSW. What depends only on the column is worked out once per tile: its offset in y
  // (32-bit where y's elements allow) and which (D, H) phases of it lie in the output, one
  // bit each; a line then costs a shared load, an add and a predicated store per element.
  constexpr int kPerLane = kLineLen / 32;
  constexpr int kPhasesDH = cfg::kSD * cfg::kSH;
  constexpr bool kMasks = kPhasesDH <= 32;
  using Off = typename sinter::Select<(i64)cfg::kN * cfg::kCout * kOutVol < (1ll << 31), unsigned,
                                      i64>::Type;
  const int pwPhase = lane % cfg::kSW;
  int colN[kPerLane], colSD[kPerLane], colSH[kPerLane], colSp[kPerLane];
  Off colOff[kPerLane];
  unsigned colMask[kPerLane];
  bool colOk[kPerLane];
#pragma unroll
  for (int k = 0; k < kPerLane; ++k) {
    const int q = tl.row0 + lane / cfg::kSW + 32 / cfg::kSW * k;
    const int n = q / kGridVol, r = q - n * kGridVol;
    const int pd = r / kPlane, r2 = r - pd * kPlane;
    const int ph = r2 / cfg::kPitchW, pw = r2 - ph * cfg::kPitchW;
    const int ow = cfg::kSW * pw + pwPhase + cfg::kBaseW;
    colN[k] = n;
    colSD[k] = cfg::kSD * pd;
    colSH[k] = cfg::kSH * ph;
    colSp[k] = (cfg::kSD * pd * cfg::kOutH + cfg::kSH * ph) * cfg::kOutW + ow;
    colOff[k] = Off(n) * Off(cfg::kCout * kOutVol) + Off(colSp[k]);
    colOk[k] = q < kRows && unsigned(ow) < unsigned(cfg::kOutW);
    colMask[k] = 0;
    if constexpr (kMasks) {
#pragma unroll
      for (int dh = 0; dh < kPhasesDH; ++dh) {
        const int od = colSD[k] + dh / cfg::kSH + cfg::kBaseD,
                  oh = colSH[k] + dh % cfg::kSH + cfg::kBaseH;
        if (colOk[k] && unsigned(od) < unsigned(cfg::kOutD) && unsigned(oh) < unsigned(cfg::kOutH))
          colMask[k] |= 1u << dh;
      }
    }
  }
  // Line `line` of a slice: its channel, (D, H) phase, bias and offsets; `ok` false past the
  // k group's rows (those are the slice's last).
  struct Line {
    bool ok;
    int c, dh, phD, phH, lineSp;
    float bv;
    Off off;
    const float *src;
  };
  auto lineAt = [&](const float *st, int wg, int line) {
    Line l;
    const int r0 = line * cfg::kSW, vr = tl.m0 + wg * 64 + r0;
    l.ok = kWholeM || vr < cfg::kRowsK;
    const int inGroup = vr % kRowsG, phi = inGroup % kPhases;
    l.dh = phi / cfg::kSW;
    l.c = (tl.grp * kGroupsPerK + vr / kRowsG) * kCoutG + inGroup / kPhases;
    l.bv = cfg::kHasBias && l.ok ? bias[l.c] : 0.f;
    l.phD = l.dh / cfg::kSH + cfg::kBaseD;
    l.phH = l.dh % cfg::kSH + cfg::kBaseH;
    l.lineSp = (l.phD * cfg::kOutH + l.phH) * cfg::kOutW;
    l.off = Off(l.c) * Off(kOutVol) + Off(l.lineSp);
    l.src = st + (r0 + pwPhase) * kStagePitch + lane / cfg::kSW;
    return l;
  };
  // Whether element k of line l lies in the output.
  auto inOutput = [&](const Line &l, int k) {
    if constexpr (kMasks)
      return bool((colMask[k] >> l.dh) & 1u);
    else
      return colOk[k] && unsigned(colSD[k] + l.phD) < unsigned(cfg::kOutD) &&
             unsigned(colSH[k] + l.phH) < unsigned(cfg::kOutH);
  };
  // Element k's value: the staged sum, the bias, the fused chain; where it is not in the
  // output, the chain reads the tensors at position 0 of image 0 (in bounds) and the value is
  // not stored.
  auto value = [&](const Line &l, int k, bool ok) {
    float v = l.src[32 / cfg::kSW * k];
    if constexpr (cfg::kHasBias)
      v += l.bv; // no add of zero without a bias: -0.f + 0.f is not -0.f
    return Epilogue{}(v, ok ? colN[k] : 0, l.c, ok ? colSp[k] + l.lineSp : 0, b);
  };
  float sum0 = 0.f, sq0 = 0.f, sum1 = 0.f, sq1 = 0.f;
  auto emit = [&](const Line &l, int k, float v) {
    const int n = colN[k];
    if constexpr (cfg::kStoreOutput)
      y[colOff[k] + l.off] = v;
    if constexpr (cfg::kAccumulateStats) {
      if (n == n0) {
        sum0 += v;
        sq0 += v * v;
      } else if (n == n0 + 1) {
        sum1 += v;
        sq1 += v * v;
      } else {
        atomicAdd(&stats[((i64)n * cfg::kCout + l.c) * 2 + 0], (double)v);
        atomicAdd(&stats[((i64)n * cfg::kCout + l.c) * 2 + 1], (double)v * v);
      }
    }
  };
  auto lineStats = [&](const Line &l) {
    if constexpr (cfg::kAccumulateStats) {
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) {
        sum0 += __shfl_xor_sync(0xffffffffu, sum0, o);
        sq0 += __shfl_xor_sync(0xffffffffu, sq0, o);
        sum1 += __shfl_xor_sync(0xffffffffu, sum1, o);
        sq1 += __shfl_xor_sync(0xffffffffu, sq1, o);
      }
      if (lane == 0) {
        const i64 at = ((i64)n0 * cfg::kCout + l.c) * 2;
        atomicAdd(&stats[at], (double)sum0);
        atomicAdd(&stats[at + 1], (double)sq0);
        if (n0 + 1 < cfg::kN && (sum1 != 0.f || sq1 != 0.f)) {
          atomicAdd(&stats[at + 2 * cfg::kCout], (double)sum1);
          atomicAdd(&stats[at + 2 * cfg::kCout + 1], (double)sq1);
        }
      }
    }
  };
  for (int wg = wg0; wg < wg1; ++wg) {
    const float *st = stBase + wg * 64 * kStagePitch;
    if constexpr (kLineBatch == 1) {
      for (int line = warp; line < kSliceLines; line += 4) {
        const Line l = lineAt(st, wg, line);
        if (!l.ok)
          break;
        sum0 = sq0 = sum1 = sq1 = 0.f;
#pragma unroll
        for (int k = 0; k < kPerLane; ++k)
          if (inOutput(l, k))
            emit(l, k, value(l, k, true));
        lineStats(l);
      }
    } else {
      // An epilogue that reads tensors loads inside Epilogue, and a warp issues in order: a
      // load whose value the next instruction uses holds back every load after it, and a load
      // placed after a store is not moved above it. So element by element each load would be
      // a round trip of its own (convt3d_kb26's residual input: 4.9 ms, ~0.5 us an element).
      // The values of kLineBatch lines are worked out before any is stored, without branches
      // (a branch around each element kept its load behind the one before), so that their
      // loads are in flight together.
      for (int line0 = warp; line0 < kSliceLines; line0 += 4 * kLineBatch) {
        Line l[kLineBatch];
        float v[kLineBatch][kPerLane];
#pragma unroll
        for (int j = 0; j < kLineBatch; ++j) {
          l[j] = lineAt(st, wg, line0 + 4 * j);
          l[j].c = l[j].ok ? l[j].c : 0; // a channel in bounds for the chain's reads
#pragma unroll
          for (int k = 0; k < kPerLane; ++k)
            v[j][k] = value(l[j], k, l[j].ok && inOutput(l[j], k));
        }
#pragma unroll
        for (int j = 0; j < kLineBatch; ++j) {
          if (!l[j].ok)
            break;
          sum0 = sq0 = sum1 = sq1 = 0.f;
#pragma unroll
          for (int k = 0; k < kPerLane; ++k)
            if (inOutput(l[j], k))
              emit(l[j], k, v[j][k]);
          lineStats(l[j]);
        }
      }
    }
  }
}

/// The staged epilogue of tile tl on the consumers (no storing warpgroup): each warpgroup
/// stages its rows, then stores its own lines.
template <int NI>
__device__ __forceinline__ void storeLines(float (&acc)[NI][4], const Tile &tl, int tid,
                                           const sinter::Buffers &b, float *staging) {
  namespace sm90 = sinter::sm90;
  const int wg = tid / 128;
  // Named barrier 1 + wg over the warpgroup: the previous tile's lines are read out.
  sm90::namedBarrier(1 + wg, 128);
  stageAccumulators(acc, tid, staging + wg * 64 * kStagePitch);
  sm90::namedBarrier(1 + wg, 128);
  storeStagedLines(tl, wg, wg + 1, (tid >> 5) & 3, tid & 31, b, staging);
}

/// Storing thread sid (0 .. kStorers - 1): the lines of its consumer warpgroups' slices of
/// every tile of this block, each once its consumer warpgroup has staged it, while that
/// multiplies the next.
__device__ __forceinline__ void storeAll(int sid, const sinter::Buffers &b, const float *staging) {
  namespace sm90 = sinter::sm90;
  for (int wg = sid / 128; wg < kConsumers / 128; wg += cfg::kStoreWarpgroups)
    sm90::namedBarrierArrive(kFreeBar + wg, 256);
  for (int t = blockIdx.x; t < kTileCount; t += gridDim.x) {
    const Tile tl = tileAt(t);
    for (int wg = sid / 128; wg < kConsumers / 128; wg += cfg::kStoreWarpgroups) {
      sm90::namedBarrier(kFullBar + wg, 256);
      storeStagedLines(tl, wg, wg + 1, (sid >> 5) & 3, sid & 31, b, staging);
      if (t + int(gridDim.x) < kTileCount)
        sm90::namedBarrierArrive(kFreeBar + wg, 256);
    }
  }
}

/// Consumer thread tid (0 .. kConsumers - 1): every tile of this block.
__device__ __forceinline__ void consume(unsigned smem0, unsigned fullBar, unsigned emptyBar,
                                        int tid, const sinter::Buffers &b, float *staging) {
  namespace sm90 = sinter::sm90;
  const int wg = tid / 128;
  // kRegisterA: this thread's A fragments of every tap and step (wgmma.cuh's register
  // layout), loaded again only when a tile's k group or row tile differs from the last one's.
  constexpr int kFrags = cfg::kRegisterA ? kTaps * kSliceSteps : 1;
  unsigned frag[kFrags][4];
  int fragTile = -1;
  int it = 0;
  for (int t = blockIdx.x; t < kTileCount; t += gridDim.x) {
    // The first k8 step of this warpgroup's groups (its rows' first group within the k
    // group times the group's steps); all four without small groups.
    const int step0 = kGroupsPerK == 1 ? 0 : (tileAt(t).m0 + wg * 64) / kRowsG * (kCinG / 8);
    if constexpr (cfg::kRegisterA) {
      const int cls = t % (kMTiles * cfg::kKGroups);
      if (cls != fragTile) {
        fragTile = cls;
        const Tile tl = tileAt(t);
        const int lane = tid & 31, row = tl.grp * cfg::kRowsK + tl.m0 + wg * 64 +
                                         16 * ((tid >> 5) & 3) + (lane >> 2);
        const float *rows = sinter::slot<const float>(b, 6);
#pragma unroll
        for (int f = 0; f < kFrags; ++f) {
          const int k = (f / kSliceSteps) * 32 + (step0 + f % kSliceSteps) * 8 + (lane & 3);
          frag[f][0] = __float_as_uint(__ldg(rows + (i64)row * kKPadRows + k));
          frag[f][1] = __float_as_uint(__ldg(rows + (i64)(row + 8) * kKPadRows + k));
          frag[f][2] = __float_as_uint(__ldg(rows + (i64)row * kKPadRows + k + 4));
          frag[f][3] = __float_as_uint(__ldg(rows + (i64)(row + 8) * kKPadRows + k + 4));
        }
      }
#pragma unroll
      for (int f = 0; f < kFrags; ++f)
        sm90::fenceOperands(frag[f]);
    }
    float acc[cfg::kBN / 8][4];
#pragma unroll
    for (int i = 0; i < cfg::kBN / 8; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[i][r] = 0.f;
    // One stage (a k tile, or with kWRun the kKW k tiles of a W run): wait for it, issue its
    // wgmmas, release the stage before it.
    auto kStage = [&](int ld) {
      const int s = it % cfg::kStages;
      sm90::mbarWait(fullBar + s * 8, (it / cfg::kStages) & 1);
      const unsigned bt = smem0 + s * kStageBytes + kWeightRows * 128;
      sm90::wgmmaFence();
#pragma unroll
      for (int j = 0; j < kTapsPerStage; ++j) {
        const int kt = ld * kTapsPerStage + j;
        const unsigned a = smem0 + s * kStageBytes + (j * cfg::kBM + wg * 64) * 128;
        const unsigned rows = bt + (cfg::kStepW * j - kWShift0) * 128; // (tap j's first row)
#pragma unroll
        for (int kk = 0; kk < kSliceSteps; ++kk) {
          if constexpr (cfg::kRegisterA)
            sm90::wgmmaTf32(acc, frag[(kt % kTaps) * kSliceSteps + kk],
                            sm90::descriptor(rows + (step0 + kk) * 32), 1);
          else
            sm90::wgmmaTf32(acc, sm90::descriptor(a + (step0 + kk) * 32),
                            sm90::descriptor(rows + (step0 + kk) * 32), 1);
        }
      }
      sm90::wgmmaCommit();
      sm90::wgmmaWait<1>();
      if (ld > 0)
        sm90::mbarArrive(emptyBar + ((it - 1) % cfg::kStages) * 8);
      ++it;
    };
    if constexpr (cfg::kRegisterA) {
      // Unrolled: the register fragments are indexed by the tap.
#pragma unroll
      for (int ld = 0; ld < kLoads; ++ld)
        kStage(ld);
    } else {
      for (int ld = 0; ld < kLoads; ++ld)
        kStage(ld);
    }
    sm90::wgmmaWait<0>();
    sm90::mbarArrive(emptyBar + ((it - 1) % cfg::kStages) * 8);
    if constexpr (kStoring) {
      sm90::namedBarrier(kFreeBar + wg, 256); // the last tile's lines are out
      stageAccumulators(acc, tid, staging + wg * 64 * kStagePitch);
      sm90::namedBarrierArrive(kFullBar + wg, 256);
    } else if constexpr (cfg::kStagedLines)
      storeLines(acc, tileAt(t), tid, b, staging);
    else
      storeTile(acc, tileAt(t), tid, b);
  }
}

} // namespace conv_shift

extern "C" __global__ void __launch_bounds__(conv_shift::kBlockThreads, 1)
    SINTER_KERNEL(const sinter::Buffers b, const __grid_constant__ sinter::TensorMaps tm) {
  using namespace conv_shift;
  namespace sm90 = sinter::sm90;
  extern __shared__ __align__(16) float smem[];
  const unsigned smem0 = sinter::mma::smemAddr(sm90::alignedBase(smem));
  const unsigned fullBar = smem0 + cfg::kStages * kStageBytes,
                 emptyBar = fullBar + cfg::kStages * 8;
  if (threadIdx.x == 0) {
    for (int s = 0; s < cfg::kStages; ++s) {
      sm90::mbarInit(fullBar + s * 8, 1);
      sm90::mbarInit(emptyBar + s * 8, kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  float *staging =
      reinterpret_cast<float *>(reinterpret_cast<char *>(sm90::alignedBase(smem)) + kStagingOffset);
  if (threadIdx.x >= kConsumers + kStorers) {
    if constexpr (kStoring)
      sm90::setMaxRegisters<cfg::kProducerRegs, false>();
    if (threadIdx.x == kConsumers + kStorers)
      produce(tm, smem0, fullBar, emptyBar);
    return;
  }
  if constexpr (kStoring) {
    if (threadIdx.x >= kConsumers) {
      sm90::setMaxRegisters<cfg::kStorerRegs, false>();
      storeAll(threadIdx.x - kConsumers, b, staging);
      return;
    }
    sm90::setMaxRegisters<cfg::kConsumerRegs, true>();
  }
  consume(smem0, fullBar, emptyBar, threadIdx.x, b, staging);
}
