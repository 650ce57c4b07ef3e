//===- templates/conv_wgmma.cuh - conv_igemm's sm_90a engine: wgmma on an input tile --===//
//
// Engine 1 of conv_igemm.cuh (cfg::kEngine == 1), included by it after its constants. For
// direct convolutions of any stride, transposed ones of stride 1 and the output phases of
// strided transposed ones, the im2col A tile is never built: a block's 128 output positions lie in
// one (n, d) plane of the output, so every tap reads them from one box of the input, and the
// producer warpgroup copies that box once per chunk of kCiChunk input channels (16-byte cp.async
// where input rows are whole 16-byte pieces, else 4-byte; zero-filled outside the input) instead of
// gathering a column per (channel, tap). The consumer warpgroups read their A fragments straight
// from the box (one 4-byte shared load per element, at an offset that is a compile-time constant
// per tap) into registers and multiply with wgmma.mma_async, A from registers, B (the weights)
// through matrix descriptors from a ring of 32-deep swizzled stages as in wgmma.cuh.
//
// The reduction is ordered for this: chunk c of kCiChunk channels, then k8 step s = tap *
// (kCiChunk / 8) + sub (eight channels c * kCiChunk + sub * 8 + 0..7 of one tap), steps padded
// to a multiple of 4 so that each 32-deep B stage holds four whole steps. conv_pack.cuh writes
// the weight rows in this order (its kChunk); k = (c * stepsPadded + s) * 8 + channel.
//
// Box layout per chunk: [kCiChunk][kBoxD][kBoxH][kRowStride] floats, channel stride kCiStride
// (8 modulo 32, so that a fragment load's 8 rows x 4 channels hit 32 banks at stride 1; a
// stride of 2 halves that). Box plane p, row r, column q hold input (id, ih, iw) = (od * kSD
// + kOff0D + p, hFirst * kSH + kOff0H + r, wFirst * kSW - kWLead + q), where hFirst / wFirst are
// the block's first output row / column (wFirst = 0 unless each tile lies in one output row,
// kRowTiles: then a row has ceil(W / kBM) tiles, the last partial where W is not a multiple of kBM;
// or the tiles are a pool's, kPoolTiles: kPoolTileH x kPoolTileW) and kOff0 = the smallest tap
// offset per dim. Output (oh, ow) and tap (td, th, tw) read box (pos(td), (oh - hFirst) * kSH +
// pos(th), (ow - wFirst) * kSW + kWLead + kOff0W + pos(tw)), pos(t) being t * dil (direct) or
// (k - 1 - t) * dil (transposed; its strides are 1).
//
// Pipeline: a sequence of items, each one cp.async group of the producer: box c, then the B
// stages of chunk c, then box c + 1, ... Boxes have two buffers, B stages kStages; each buffer
// has a full barrier (the 128 producer threads arrive when their copies have landed) and an
// empty one (the consumer threads that read it arrive when they have). The producer publishes
// item i once item i + kLag is issued, keeping kLag + 1 groups in flight; kLag is bounded so
// that a buffer's previous item is always published before the producer waits for it to be
// released (see kLag).
//
// With SINTER_CONV_TMA_B (kTmaB) the weight stages come by TMA instead: one thread of the
// producer's first warp walks the block's B stages alone (wait for the stage's release, then
// one 3-D tensor copy of kBN rows x 32 floats, 128-byte swizzled, completing the stage's full
// barrier by its bytes; rows past the group's channels read zeros), while the other three
// warps copy the boxes and arrive on the box's full barrier through
// cp.async.mbarrier.arrive.noinc, which fires when the thread's copies have landed. No copy
// then waits behind another: the boxes' cp.async groups no longer hold back the stages
// issued after them, and the stages in flight are bounded by the ring alone.
//
// Consumers: either both warpgroups multiply each tile (64 rows each) and run its epilogue
// together, or (cfg::kPingpong) each takes whole tiles of its own, the block's tiles 0, 2, 4,
// ... and 1, 3, 5, ..., the two taking turns at the products, so that one's epilogue runs
// while the other multiplies (the ordering is in consume). Accumulators: consumer warp w
// (0..7) holds rows 16 w + g (+8), or with kPingpong warp w (0..3) of its warpgroup rows
// 32 w + 16 mi + g (+8), columns 8 i + 2 t (+1): the layouts of the mma.sync engine with
// kWarpsM = 8 or 4, kWarpsN = 1, so conv_igemm's epilogue serves all. TF32 only (3xTF32
// convolutions keep engine 0).
//
// Expects (namespace cfg) besides conv_igemm's constants: kCiChunk, kBoxH, kRowStride,
// kCiStride, kWLead, kRowTiles.
//
//===--------------------------------------------------------------------------------===//
#pragma once

namespace conv_igemm {

namespace wg {

constexpr bool kOn = cfg::kEngine == 1;
constexpr int kSub = cfg::kCiChunk / 8;           // k8 steps per tap and chunk
constexpr int kSteps = kSub * kKVol;              // k8 steps per chunk
constexpr int kStagesPerChunk = (kSteps + 3) / 4; // 32-deep B stages per chunk
constexpr int kChunks = (kCinG + cfg::kCiChunk - 1) / cfg::kCiChunk;
constexpr int kBoxD = (cfg::kKD - 1) * cfg::kDD + 1;
constexpr int kPlaneStride = cfg::kBoxH * cfg::kRowStride;
constexpr int kBoxFloats = cfg::kCiChunk * cfg::kCiStride;
constexpr int kBStage = cfg::kBN * 32;
// Tiles in one output row (kRowTiles): ceil(W / kBM) a row, the last one partial where W is
// not a multiple of kBM; else kBM-position runs of the flattened plane.
constexpr int kTilesPerRow = (cfg::kOutW + cfg::kBM - 1) / cfg::kBM;
// Pool tiles (cfg::kPoolKind != 0): every window of the pool (kPKH x kPKW) lies in one 16-row
// block of a warp's accumulators, a block being kPKH (1, 2 or 4) output rows x 16 / kPKH
// columns (rowPlace). A consumer thread's rows g and g + 8 of a block are then columns g and
// g + 8 of its row (kPKH 1), rows 0 and 1 of column g (kPKH 2), or rows g / 4 and 2 + g / 4
// of column g % 4 (kPKH 4): a window's rows are the thread's two rows (and with kPKH 4 lanes
// 16 apart), its columns lanes 4 apart. A tile's 8 blocks are kPoolBlocksW across and
// 8 / kPoolBlocksW down: kPoolTileH x kPoolTileW positions at multiples of both, covering the
// rows and columns of whole windows (ceil_mode's clipped last windows included).
constexpr bool kPoolTiles = cfg::kPoolKind != 0;
constexpr int kPoolBlockW = cfg::kPKH == 1 ? 16 : 16 / cfg::kPKH;
constexpr int kPoolTileW = kPoolBlockW * cfg::kPoolBlocksW;
constexpr int kPoolTileH = cfg::kPKH * (8 / cfg::kPoolBlocksW);
constexpr int kPoolCoveredW =
    cfg::kPOW * cfg::kPKW < cfg::kOutW ? cfg::kPOW * cfg::kPKW : cfg::kOutW;
constexpr int kPoolTilesW = (kPoolCoveredW + kPoolTileW - 1) / kPoolTileW;
constexpr int kPoolTilesH = (cfg::kPOH * cfg::kPKH + kPoolTileH - 1) / kPoolTileH;
constexpr int kTilesPerPlane = kPoolTiles       ? kPoolTilesH * kPoolTilesW
                               : cfg::kRowTiles ? cfg::kOutH * kTilesPerRow
                                                : (kOutHW + cfg::kBM - 1) / cfg::kBM;
// Consumer threads, and those that read each item (both warpgroups, or with kPingpong the one
// whose tile it is).
constexpr int kConsumers = 256;
constexpr int kItemReaders = cfg::kPingpong ? 128 : 256;
#ifdef SINTER_CONV_TMA_B
constexpr bool kTmaB = true;
#else
constexpr bool kTmaB = false;
#endif
// The producer threads that copy boxes (with kTmaB its first warp issues the weight stages).
constexpr int kBoxThreads = sinter::sm90::kProducerThreads - (kTmaB ? 32 : 0);
// Per dim: the offset of tap t from the output position in input coordinates is
// off0 + pos(t) (stride 1: transposed in = out + pad - t * dil, direct in = out - pad + t * dil).
constexpr int kOff0D = cfg::kTransposed ? cfg::kPD - (cfg::kKD - 1) * cfg::kDD : -cfg::kPD;
constexpr int kOff0H = cfg::kTransposed ? cfg::kPH - (cfg::kKH - 1) * cfg::kDH : -cfg::kPH;
constexpr int kOff0W = cfg::kTransposed ? cfg::kPW - (cfg::kKW - 1) * cfg::kDW : -cfg::kPW;
// Publishing lags issuing by kLag items. The producer waits for B stage b - kStages to be
// released, which the consumers do after they have waited for stage b - kStages + 1, at least
// kStages - 1 items before b: kLag <= kStages - 2. It waits for box c - 2, released after the
// last stage of chunk c - 2, kStagesPerChunk + 1 items before box c: kLag <= kStagesPerChunk + 1.
// At most 3 (4 groups, about 64 KiB, in flight per block).
constexpr int smaller(int a, int b) { return a < b ? a : b; }
constexpr int kLag = smaller(smaller(cfg::kStages - 2, kStagesPerChunk + 1), 3);

// Two blocks an SM (cfg::kMinBlocks 2, 64-channel tiles) launch with 80 registers a thread,
// at which ptxas serialised the consumers' wgmmas (C7512); the producer, whose copies need
// few, gives the consumers its share (setmaxnreg): 128 x 48 + 256 x 96 = 384 x 80.
constexpr int kTwoBlockProducerRegs = 48, kTwoBlockConsumerRegs = 96;
static_assert(sinter::sm90::kProducerThreads * kTwoBlockProducerRegs +
                      kConsumers * kTwoBlockConsumerRegs <=
                  (sinter::sm90::kProducerThreads + kConsumers) * 80,
              "setmaxnreg: the consumers take no more than the producer gives back");
// kPingpong: each consumer warpgroup holds whole 128-row tiles (two m64 wgmmas a k8 step:
// 128 accumulators a thread at 128 channels) and the producer gives them its registers:
// 128 x 72 + 256 x 216 = 384 x 168 (at 56 the producer's 3-D box addressing spilled).
constexpr int kPingpongProducerRegs = 72, kPingpongConsumerRegs = 216;
static_assert(sinter::sm90::kProducerThreads * kPingpongProducerRegs +
                      kConsumers * kPingpongConsumerRegs <=
                  (sinter::sm90::kProducerThreads + kConsumers) * 168,
              "setmaxnreg: the consumers take no more than the producer gives back");
static_assert(!kOn || cfg::kMinBlocks == 1 || (cfg::kMinBlocks == 2 && cfg::kBN <= 64),
              "two blocks an SM: tiles of at most 64 channels");
static_assert(!kOn || (cfg::kBM == 128 && cfg::kWarpsN == 1 &&
                       (cfg::kPingpong ? cfg::kWarpsM == 4 : cfg::kWarpsM == 8)),
              "two consumer warpgroups of 64 rows of a tile (the epilogue's 8 x 1 warps), or "
              "with kPingpong 128 rows each of its own tile (4 x 1 warps)");
static_assert(!cfg::kPingpong || (cfg::kMinBlocks == 1 && cfg::kBN <= 128),
              "alternating warpgroups: one block an SM, at most 128 accumulator columns");
static_assert(!kOn || cfg::kBN == 8 || cfg::kBN == 16 || cfg::kBN == 32 || cfg::kBN == 64 ||
                  cfg::kBN == 128 || cfg::kBN == 256,
              "wgmma widths");
static_assert(!kOn || cfg::kMath == sinter::mma::kMathTf32, "TF32 only");
static_assert(!kOn || (cfg::kCiChunk % 8 == 0 && cfg::kCiStride % 32 == 8 &&
                       cfg::kRowStride % 4 == 0 && cfg::kWLead % 4 == 0),
              "box layout: whole 16-byte pieces, channel stride 8 mod 32");
static_assert(!kOn || !cfg::kTransposed || (cfg::kSD == 1 && cfg::kSH == 1 && cfg::kSW == 1),
              "transposed convolutions by output phase: stride 1");
static_assert(!kOn || (cfg::kWLead + kOff0W >= 0 && kLag >= 1), "box origin, pipeline depth");
static_assert(!kOn || cfg::kPackedB, "B rows in the chunked order of conv_pack.cuh");
// kTmaB's tensor map views conv_pack.cuh's rows as [kernel x group][kCoutG][kBRow]: this
// kernel's rows start at group kBGroup0 of it.
constexpr int kBGroup0 = kTmaB ? cfg::kBBase / (kCoutG * cfg::kBRow) : 0;
static_assert(!kTmaB || (kOn && cfg::kBRow > 0 && cfg::kBBase % (kCoutG * cfg::kBRow) == 0),
              "TMA weight stages: engine 1, rows of whole groups");
static_assert(!kPoolTiles ||
                  (kOn && !cfg::kPhased && (cfg::kPKH == 1 || cfg::kPKH == 2 || cfg::kPKH == 4) &&
                   (cfg::kPKW == 1 || cfg::kPKW == 2 || cfg::kPKW == 4 || cfg::kPKW == 8) &&
                   cfg::kPKW * (cfg::kPKH == 1 ? 2 : cfg::kPKH) <= 16 &&
                   cfg::kPKH * cfg::kPKW > 1 && !cfg::kRowTiles &&
                   (cfg::kPoolBlocksW == 1 || cfg::kPoolBlocksW == 2 || cfg::kPoolBlocksW == 4 ||
                    cfg::kPoolBlocksW == 8)),
              "pool tiles: engine 1, no output phases, windows of 1, 2 or 4 rows and of 1 to "
              "8 columns (powers of two) that fit a 16-row block's columns, blocks 1 to 8 "
              "across");

/// Box offset of tap t of a dim with k taps and dilation dil (see the header).
__device__ __forceinline__ constexpr int pos(int t, int k, int dil) {
  return cfg::kTransposed ? (k - 1 - t) * dil : t * dil;
}

/// Box offset (floats) of k8 step s of a chunk, for channel t of its eight.
__device__ __forceinline__ constexpr int stepOffset(int s, int t) {
  const int tap = s / kSub, sub = s % kSub;
  const int kd = tap / kKHW, kh = (tap / cfg::kKW) % cfg::kKH, kw = tap % cfg::kKW;
  return (sub * 8 + t) * cfg::kCiStride + pos(kd, cfg::kKD, cfg::kDD) * kPlaneStride +
         pos(kh, cfg::kKH, cfg::kDH) * cfg::kRowStride + pos(kw, cfg::kKW, cfg::kDW);
}

/// Shared memory (floats from the 1 KiB-aligned base): kStages B stages, two boxes, the
/// barriers (full B, empty B, full box, empty box), then the epilogue's statistics (8 warps x
/// kBN columns x sum and square, double).
constexpr int kBoxBase = cfg::kStages * kBStage;
constexpr int kBarriers = (kBoxBase + 2 * kBoxFloats) * 4; // bytes
constexpr int kRedBase = kBarriers / 4 + (2 * cfg::kStages + 4) * 2;
static_assert(kRedBase % 2 == 0, "the statistics are doubles");
static_assert(!kOn || cfg::kSharedBytes ==
                          1024 + kRedBase * 4 + (cfg::kAccumulateStats ? 8 * cfg::kBN * 16 : 0),
              "the emitter's shared memory is the template's (1 KiB of alignment slack, the "
              "statistics only where the epilogue accumulates them)");

// The persistent schedule: block b takes tiles b, b + gridDim.x, ... of kTileCount, each
// 128 positions of one (n, d) plane x kBN channels of one group (positions fastest, so that
// the blocks running together share their weight rows in L2).
constexpr int kPlaneTiles = cfg::kN * cfg::kOutD * kTilesPerPlane;
constexpr int kNTiles = (kCoutG + cfg::kBN - 1) / cfg::kBN;
constexpr int kTileCount = kPlaneTiles * kNTiles * cfg::kGroups;

/// One output tile: plane (n * OutD + od), its first position in the plane and the valid
/// rows, the first output row and column the box is relative to, channels n0.., group grp.
struct Tile {
  int plane, start, rows, hFirst, wFirst, n0, grp;
};

__device__ __forceinline__ Tile tileAt(int t) {
  Tile tl;
  const int pt = t % kPlaneTiles, rest = t / kPlaneTiles;
  tl.n0 = (rest % kNTiles) * cfg::kBN;
  tl.grp = rest / kNTiles;
  tl.plane = pt / kTilesPerPlane;
  if constexpr (kPoolTiles) {
    const int pp = pt % kTilesPerPlane;
    tl.hFirst = pp / kPoolTilesW * kPoolTileH;
    tl.wFirst = pp % kPoolTilesW * kPoolTileW;
    tl.start = tl.hFirst * cfg::kOutW + tl.wFirst; // rows are placed by rowPlace
    tl.rows = cfg::kBM;
  } else if constexpr (cfg::kRowTiles && cfg::kOutW % cfg::kBM != 0) {
    const int pp = pt % kTilesPerPlane;
    tl.hFirst = pp / kTilesPerRow;
    tl.wFirst = pp % kTilesPerRow * cfg::kBM;
    tl.start = tl.hFirst * cfg::kOutW + tl.wFirst;
    tl.rows = cfg::kOutW - tl.wFirst < cfg::kBM ? cfg::kOutW - tl.wFirst : cfg::kBM;
  } else {
    tl.start = (pt % kTilesPerPlane) * cfg::kBM;
    tl.rows = kOutHW - tl.start < cfg::kBM ? kOutHW - tl.start : cfg::kBM;
    tl.hFirst = tl.start / cfg::kOutW;
    tl.wFirst = cfg::kRowTiles ? tl.start % cfg::kOutW : 0;
  }
  return tl;
}

/// The output row and column (in the plane) of tile row r: by the pool tiles' blocks (see
/// kPoolTiles; rows past the output lie inside the box, and the epilogue drops them), else
/// position start + r of the flattened plane (rows past the tile read its first position).
__device__ __forceinline__ void rowPlace(const Tile &tl, int r, int &oh, int &ow) {
  if constexpr (kPoolTiles) {
    const int b = r >> 4, h = (r >> 3) & 1, g = r & 7;
    oh = tl.hFirst + b / cfg::kPoolBlocksW * cfg::kPKH;
    ow = tl.wFirst + b % cfg::kPoolBlocksW * kPoolBlockW;
    if constexpr (cfg::kPKH == 4) {
      oh += 2 * h + (g >> 2);
      ow += g & 3;
    } else if constexpr (cfg::kPKH == 2) {
      oh += h;
      ow += g;
    } else {
      ow += 8 * h + g;
    }
  } else {
    const int i = tl.start + (r < tl.rows ? r : 0);
    oh = i / cfg::kOutW;
    ow = i % cfg::kOutW;
  }
}

/// Barrier addresses (shared space) of the ring.
struct Bars {
  unsigned fullB, emptyB, fullX, emptyX;
  __device__ __forceinline__ explicit Bars(unsigned smem0)
      : fullB(smem0 + kBarriers), emptyB(fullB + cfg::kStages * 8),
        fullX(emptyB + cfg::kStages * 8), emptyX(fullX + 16) {}
  /// The producer's wait before it fills weight stage bi (counted over the block's stages):
  /// the ring slot's last use released, unless this is its first. Returns the slot.
  __device__ __forceinline__ int stageFree(int bi) const {
    const int s = bi % cfg::kStages;
    if (bi >= cfg::kStages)
      sinter::sm90::mbarWait(emptyB + s * 8, (bi / cfg::kStages - 1) & 1);
    return s;
  }
  /// The same for box chunk cg's buffer (cg & 1).
  __device__ __forceinline__ void boxFree(int cg) const {
    if (cg >= 2)
      sinter::sm90::mbarWait(emptyX + (cg & 1) * 8, ((cg >> 1) - 1) & 1);
  }
};

/// Thread 0 initialises the barriers; the caller synchronises the block afterwards.
__device__ __forceinline__ void initBarriers(const Bars &bars) {
  namespace sm90 = sinter::sm90;
  for (int s = 0; s < cfg::kStages; ++s) {
    sm90::mbarInit(bars.fullB + s * 8, kTmaB ? 1 : sm90::kProducerThreads);
    sm90::mbarInit(bars.emptyB + s * 8, kItemReaders);
  }
  for (int s = 0; s < 2; ++s) {
    sm90::mbarInit(bars.fullX + s * 8, kBoxThreads);
    sm90::mbarInit(bars.emptyX + s * 8, kItemReaders);
  }
}

/// The producer's copy of box chunk c: 16-byte pieces (4-byte ones where input rows are not
/// whole pieces), zero outside the input and past Cin/groups; ptid 0 .. kBoxThreads - 1.
__device__ __forceinline__ void copyBox(float *box, const float *x, const Tile &tile, int grp,
                                        int c, int ptid) {
  constexpr int kVec = cfg::kInW % 4 == 0 ? 4 : 1;
  constexpr int kPieces = cfg::kRowStride / kVec;
  constexpr int kRowsPerCi = kBoxD * cfg::kBoxH;
  constexpr int kRows = cfg::kCiChunk * kRowsPerCi;
  constexpr int kThreads = kBoxThreads;
  const int nb = tile.plane / cfg::kOutD, od = tile.plane % cfg::kOutD;
  const float *xg = x + ((i64)nb * cfg::kCin + (i64)grp * kCinG) * kInVol;
  // Piece q of box row `row` (channel row / kRowsPerCi, plane and row pr of it).
  auto copy = [&](int row, int q, int iw, bool wOk) {
    const int ci = c * cfg::kCiChunk + row / kRowsPerCi, pr = row % kRowsPerCi;
    const int id = od * cfg::kSD + kOff0D + pr / cfg::kBoxH;
    const int ih = tile.hFirst * cfg::kSH + kOff0H + pr % cfg::kBoxH;
    const bool ok = wOk && ci < kCinG && id >= 0 && id < cfg::kInD && ih >= 0 && ih < cfg::kInH;
    float *dst = box + (row / kRowsPerCi) * cfg::kCiStride + pr * cfg::kRowStride + kVec * q;
    const float *src = ok ? xg + (i64)ci * kInVol + ((i64)id * cfg::kInH + ih) * cfg::kInW + iw : x;
    if constexpr (kVec == 4)
      sinter::mma::cpAsync16(dst, src, ok ? 16 : 0);
    else
      sinter::mma::cpAsync4(dst, src, ok);
  };
  if constexpr (kPieces <= kThreads) {
    // A thread keeps one piece q of every kRowsPerPass-th row: its column test is done once.
    constexpr int kRowsPerPass = kThreads / kPieces;
    const int q = ptid % kPieces, sub = ptid / kPieces;
    if (sub >= kRowsPerPass)
      return;
    const int iw = tile.wFirst * cfg::kSW - cfg::kWLead + kVec * q;
    const bool wOk = iw >= 0 && iw + kVec <= cfg::kInW;
#pragma unroll 4
    for (int row = sub; row < kRows; row += kRowsPerPass)
      copy(row, q, iw, wOk);
  } else {
    for (int i = ptid; i < kRows * kPieces; i += kThreads) {
      const int q = i % kPieces, iw = tile.wFirst * cfg::kSW - cfg::kWLead + kVec * q;
      copy(i / kPieces, q, iw, iw >= 0 && iw + kVec <= cfg::kInW);
    }
  }
}

/// The producer warpgroup (ptid 0..127): every item of every tile of this block, in order.
/// Items are numbered over the block's whole sequence: chunk C (C / kChunks-th tile of the
/// block, chunk C % kChunks of it) has items C * kPer (its box) and C * kPer + 1 .. (its B
/// stages, global stage index C * kStagesPerChunk + r - 1), so the rings and their phases
/// run on across tiles. With kTmaB (weight stages through map 0 of `tm`) thread 0 walks the
/// stages and threads 32..127 the boxes, each on its own (see the header).
__device__ __forceinline__ void produce(float *base, const sinter::Buffers b, const Bars &bars,
                                        const sinter::TensorMaps *tm, int ptid) {
  namespace sm90 = sinter::sm90;
  namespace mma = sinter::mma;
  const float *x = sinter::slot<const float>(b, 0);
  const int tiles = blockIdx.x < kTileCount ? (kTileCount - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  if constexpr (kTmaB) {
    const int chunks = tiles * kChunks;
    if (ptid < 32) { // the weight stages, by one thread
      if (ptid != 0)
        return;
      const unsigned smem0 = mma::smemAddr(base);
      for (int cg = 0; cg < chunks; ++cg) {
        const Tile tl = tileAt(blockIdx.x + cg / kChunks * gridDim.x);
        const int c = cg % kChunks;
#pragma unroll 1
        for (int r = 0; r < kStagesPerChunk; ++r) {
          const int s = bars.stageFree(cg * kStagesPerChunk + r);
          sm90::mbarArriveExpectTx(bars.fullB + s * 8, kBStage * 4);
          sm90::tmaLoad3d(smem0 + s * kBStage * 4, tm->m[0], (c * kStagesPerChunk + r) * 32, tl.n0,
                          kBGroup0 + tl.grp, bars.fullB + s * 8);
        }
      }
      return;
    }
    for (int cg = 0; cg < chunks; ++cg) { // the boxes, by the other three warps
      const Tile tl = tileAt(blockIdx.x + cg / kChunks * gridDim.x);
      bars.boxFree(cg);
      copyBox(base + kBoxBase + (cg & 1) * kBoxFloats, x, tl, tl.grp, cg % kChunks, ptid - 32);
      mma::cpAsyncArriveNoinc(bars.fullX + (cg & 1) * 8); // read by ordinary loads
    }
    mma::cpAsyncWait<0>();
    return;
  }
  const float *rows = sinter::slot<const float>(b, cfg::kBSlot) + cfg::kBBase;
  constexpr int kPer = kStagesPerChunk + 1;
  const int items = tiles * kChunks * kPer;
  auto issue = [&](int i) {
    const int cg = i / kPer, r = i % kPer;
    const Tile tl = tileAt(blockIdx.x + cg / kChunks * gridDim.x);
    const int c = cg % kChunks;
    if (r == 0) {
      bars.boxFree(cg);
      copyBox(base + kBoxBase + (cg & 1) * kBoxFloats, x, tl, tl.grp, c, ptid);
    } else {
      const int s = bars.stageFree(cg * kStagesPerChunk + r - 1);
      sm90::copyTileSwizzled<cfg::kBN, cfg::kBRow, kCoutG, cfg::kBRow>(
          base + s * kBStage, rows + (i64)tl.grp * kCoutG * cfg::kBRow, tl.n0,
          (i64)(c * kStagesPerChunk + r - 1) * 32, ptid);
    }
    mma::cpAsyncCommit();
  };
  auto publish = [&](int i) {
    const int cg = i / kPer, r = i % kPer;
    if (r == 0) {
      sm90::mbarArrive(bars.fullX + (cg & 1) * 8); // read by ordinary loads: no proxy fence
    } else {
      sm90::fenceProxyAsync();
      sm90::mbarArrive(bars.fullB + ((cg * kStagesPerChunk + r - 1) % cfg::kStages) * 8);
    }
  };
  for (int i = 0; i < items; ++i) {
    issue(i);
    if (i >= kLag) {
      mma::cpAsyncWait<kLag>();
      publish(i - kLag);
    }
  }
  mma::cpAsyncWait<0>();
  for (int i = items > kLag ? items - kLag : 0; i < items; ++i)
    publish(i);
}

/// A consumer thread multiplies tile tl, the block's k-th (its chunks are the block's
/// chunks c0 = k * kChunks ..), into acc: rows (kBM / kWarpsM) w + 16 mi + g (+8) of warp w of its
/// warpgroup, MI m64 wgmmas a k8 step (the A rows are the thread's own, so the rows of wgmma
/// mi are the tile rows the epilogue expects), tid 0..255 (two warpgroups, one tile) or with
/// kPingpong 0..127 (the warpgroup k % 2 of tile k alone).
///
/// kPingpong orders the warpgroups' products: warpgroup k % 2 starts tile k once the other has
/// waited for every item of tile k - 1 (named barrier 4 + k % 2, arrived at by the other
/// warpgroup where `hasNext`), so that products alternate and each epilogue runs beside the
/// other warpgroup's products. The order is also what makes the ring's parity waits sound: an
/// item's previous use of its slot has always been waited for when a warpgroup waits for it.
template <int MI, int NI>
__device__ __forceinline__ void consume(float (&acc)[MI][NI][4], float *base, const Bars &bars,
                                        const Tile &tl, int c0, int k, bool hasNext, int tid) {
  static_assert(NI == cfg::kBN / 8 && MI * 16 * cfg::kWarpsM == cfg::kBM,
                "a consumer thread holds MI x 16 rows x kBN / 4 columns");
  namespace sm90 = sinter::sm90;
  namespace mma = sinter::mma;
  const unsigned smem0 = mma::smemAddr(base);
  const int lane = tid & 31, warp = tid >> 5, t = lane & 3;
  // This thread's rows as box offsets (rowPlace).
  int rowOff[MI][2];
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = warp * (cfg::kBM / cfg::kWarpsM) + 16 * mi + (lane >> 2) + 8 * h;
      int oh, ow;
      rowPlace(tl, r, oh, ow);
      rowOff[mi][h] = (oh - tl.hFirst) * cfg::kSH * cfg::kRowStride + (ow - tl.wFirst) * cfg::kSW +
                      cfg::kWLead + kOff0W + t * cfg::kCiStride;
    }
#pragma unroll
  for (int mi = 0; mi < MI; ++mi)
#pragma unroll
    for (int i = 0; i < NI; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[mi][i][r] = 0.f;
  if constexpr (cfg::kPingpong) { // predicated: no branch near the wgmmas (C7520)
    sm90::namedBarrierIf<4, 256, false>(k > 0 && (k & 1) == 0);
    sm90::namedBarrierIf<5, 256, false>((k & 1) == 1);
  }

  // Each stage's wgmmas go out as MI commit groups, one per m64 row block, its four steps'
  // fragments loaded just before it; waiting for all but the newest group frees the previous
  // group's fragments, so that a thread keeps the fragments of two groups (with MI = 2 and
  // 128 columns, two whole stages' fragments beside the 128 accumulators made ptxas serialise
  // the wgmmas for want of registers, C7512). A B stage is released once the group after its
  // last one has been issued and the wait has seen its last group complete.
  for (int c = 0; c < kChunks; ++c) {
    const int cg = c0 + c;
    sm90::mbarWait(bars.fullX + (cg & 1) * 8, (cg >> 1) & 1);
    const float *box = base + kBoxBase + (cg & 1) * kBoxFloats;
#pragma unroll
    for (int g = 0; g < kStagesPerChunk; ++g) {
      const int bi = cg * kStagesPerChunk + g, s = bi % cfg::kStages;
      // The stage's B (computed once its barrier is passed where both warpgroups share the
      // tile, as the engine always did: the same SASS as before alternation existed; ahead of
      // the loop with kPingpong, the code that was measured).
      unsigned bs = cfg::kPingpong ? smem0 + s * kBStage * 4 : 0;
#pragma unroll
      for (int mi = 0; mi < MI; ++mi) {
        // Fragments of the stage's four steps: rows (r0, r1) x channels (t, t + 4).
        const float *r0 = box + rowOff[mi][0], *r1 = box + rowOff[mi][1];
        unsigned a[4][4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int step = g * 4 + j < kSteps ? g * 4 + j : 0;
          if constexpr (cfg::kZeroTaps) {
            // A phase no tap reaches: zeros, so that a NaN or Inf in x reaches no output.
            a[j][0] = a[j][1] = a[j][2] = a[j][3] = 0u;
          } else {
            a[j][0] = mma::toTf32Operand(r0[stepOffset(step, 0)]);
            a[j][1] = mma::toTf32Operand(r1[stepOffset(step, 0)]);
            a[j][2] = mma::toTf32Operand(r0[stepOffset(step, 4)]);
            a[j][3] = mma::toTf32Operand(r1[stepOffset(step, 4)]);
          }
        }
        if (g == kStagesPerChunk - 1 && mi == MI - 1)
          sm90::mbarArrive(bars.emptyX + (cg & 1) * 8); // the box's last loads are done
        if (mi == 0) {
          sm90::mbarWait(bars.fullB + s * 8, (bi / cfg::kStages) & 1);
          if constexpr (cfg::kPingpong)
            if (g == kStagesPerChunk - 1) { // the tile's last item is waited for
              const bool last = c == kChunks - 1 && hasNext;
              sm90::namedBarrierIf<4, 256, true>(last && (k & 1) == 1);
              sm90::namedBarrierIf<5, 256, true>(last && (k & 1) == 0);
            }
          if constexpr (!cfg::kPingpong)
            bs = smem0 + s * kBStage * 4;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j)
          sm90::fenceOperands(a[j]);
        sm90::wgmmaFence();
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (g * 4 + j < kSteps)
            sm90::wgmmaTf32(acc[mi], a[j], sm90::descriptor(bs + j * 32), 1);
        sm90::wgmmaCommit();
        sm90::wgmmaWait<1>();
        // The previous stage's last group has completed (with kPingpong, if it is this
        // tile's).
        if (mi == 0 && (cfg::kPingpong ? bi > c0 * kStagesPerChunk : bi > 0))
          sm90::mbarArrive(bars.emptyB + ((bi - 1) % cfg::kStages) * 8);
      }
    }
    // The next chunk's first fragments take the registers of this chunk's last ones (the
    // loop over chunks is not unrolled): ptxas serialises every wgmma (C7513) unless they
    // have completed.
    sm90::wgmmaWait<0>();
  }
  // With kPingpong the tile's last stage is this warpgroup's to release (the other one's
  // next tile does not release it); without, the next tile's first stage releases it.
  if constexpr (cfg::kPingpong)
    sm90::mbarArrive(bars.emptyB + ((c0 + kChunks) * kStagesPerChunk - 1) % cfg::kStages * 8);
}

} // namespace wg

} // namespace conv_igemm
