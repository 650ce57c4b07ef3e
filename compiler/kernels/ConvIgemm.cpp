//===- compiler/kernels/ConvIgemm.cpp - implicit-GEMM convolution emitter ----------===//
//
// Checks a ConvSpec against what templates/conv_igemm.cuh can do, splits a strided
// transposed convolution into its output phases (ConvPhases.h: one kernel each), picks the
// block tile for each kernel's shape and writes the prologues. The tile is 128 or 256 rows
// (output positions) by up to 128 output channels with a 32-deep k step and eight warps;
// narrower channel counts get narrower tiles so that no block spends its tensor cores on
// padding.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvIgemm.h"
#include "compiler/kernels/ConvPhases.h"
#include "compiler/kernels/ConvShift.h"
#include "compiler/kernels/TensorCoreMath.h"

#include "ir/Error.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>

namespace sinter {

namespace {

using ConvTile = ConvIgemmTile;

// Measured on an H200 for S0 (docs/kernels-tensorcore.md): with ldmatrix fragments,
// 256x128x32 tiles of 8 warps (64x64 warp tiles, about 220 registers: fewer fragment loads
// per mma) beat the same tile with 16 warps of 64x32 (2.56 vs 2.61 ms); 2 stages or 64-deep
// k steps did not pay. 3xTF32 needs more registers
// (two accumulator sets) and keeps 128x128; small problems keep 128-row tiles so that every
// SM gets work.
ConvTile chooseTile(int64_t coutPerGroup, int64_t rows, MathMode math) {
  bool tf32 = math == MathMode::Tf32;
  if (coutPerGroup > 64) {
    if (tf32 && rows >= int64_t(256) * 132 * 2)
      return {256, 128, 32, 4, 2, 3, 1};
    return {128, 128, 32, 2, 4, 4, 1};
  }
  if (coutPerGroup > 32)
    return {128, 64, 32, 4, 2, 4, 1};
  if (coutPerGroup > 16)
    return {128, 32, 32, 4, 2, 4, 1};
  // Not measured: 16 channels or fewer get a 16-wide tile with all eight warps along M (16x16
  // warp tiles: one A and one B ldmatrix.x4 per two mma), so that the smallest groups the
  // planner sends here (16 channels) waste no mma columns on padding.
  return {128, 16, 32, 8, 1, 4, 1};
}

bool isPhased(const ConvSpec &s) { return s.transposed && s.strided(); }

/// What one conv_igemm kernel computes: the problem its M, N and K loops run over (the whole
/// convolution, or one output phase of a strided transposed convolution as a stride-1
/// transposed convolution), and where its outputs and taps sit in the real convolution
/// (templates/conv_igemm.cuh: kPhased).
struct KernelShape {
  std::array<int64_t, 3> out, kernel, stride, padding, dilation;
  bool phased = false;
  std::array<int64_t, 3> yStep{1, 1, 1}, yPhase{0, 0, 0}, wTap0{0, 0, 0}, wTapStep{1, 1, 1};
  /// An output phase that no tap reaches: it runs as one tap whose weights are zero (the
  /// rows conv_pack.cuh writes for it, or kZeroTaps where the kernel reads the weight itself),
  /// so that its outputs get the bias, the epilogue and the statistics as every phase's do.
  bool zeroTaps = false;
};

/// The kernels `s` runs as, in launch order: `s` itself, or one per output phase.
llvm::SmallVector<KernelShape, 8> kernelShapes(const ConvSpec &s) {
  if (!isPhased(s))
    return {KernelShape{s.out, s.kernel, s.stride, s.padding, s.dilation}};
  llvm::SmallVector<KernelShape, 8> shapes;
  for (const ConvPhase &p : transposedConvPhases(s)) {
    KernelShape k{p.outExtent, p.taps, {1, 1, 1}, p.offset, p.dilation};
    k.phased = true;
    k.yStep = p.step;
    k.yPhase = p.phase;
    k.wTap0 = p.firstTap;
    k.wTapStep = p.tapStep;
    if (p.tapVolume() == 0) {
      // One tap at input q (offset 0), stored tap 0: in range and multiplied by zeros.
      k.zeroTaps = true;
      k.kernel = k.dilation = k.wTapStep = {1, 1, 1};
      k.padding = k.wTap0 = {0, 0, 0};
    }
    shapes.push_back(k);
  }
  return shapes;
}

/// "phase 1,0 of 2x2" over the spatial dims in use, for `sinterc explain`.
std::string phaseName(const ConvSpec &s, const KernelShape &k) {
  std::string which, of;
  for (unsigned d = 3 - std::min(s.spatialDims, 3u); d < 3; ++d) {
    which += (which.empty() ? "" : ",") + std::to_string(k.yPhase[d]);
    of += (of.empty() ? "" : "x") + std::to_string(k.yStep[d]);
  }
  return "phase " + which + " of " + of + (k.zeroTaps ? " (no tap reaches it: bias only)" : "");
}

/// The conv_igemm kernel for shape `k` of `s` (checked by the caller) with the given tile.
/// Where a kernel's B loader reads its weight rows (conv_igemm.cuh, kPackedB).
struct BRows {
  bool packed = false; ///< 16-byte copies from rows with contiguous k
  int slot = 1;        ///< the weight itself (1) or conv_pack.cuh's rows (kConvPackSlot)
  int64_t row = 0, base = 0;
  int64_t kernels = 1; ///< kernels whose rows conv_pack.cuh writes one after another
};

/// Whether `tile` reads packed weight rows: engine 1 always (its producer copies them, or TMA
/// does), engine 0 where its B tile splits into whole 16-byte pieces per thread.
bool tileTakesPackedB(const ConvTile &tile) {
  return tile.wgmma || (tile.bn * tile.bk / 4) % (32 * tile.warpsM * tile.warpsN) == 0;
}

/// Engine 1 (conv_wgmma.cuh): rows per block tile, and the input box a kernel's blocks copy
/// per channel chunk (the header there describes the layout).
constexpr int64_t kWgRows = 128;
struct WgBox {
  int64_t boxD = 1, boxH = 1, rowStride = 4, ciStride = 8, wLead = 0;
  bool rowTiles = false;
  /// Output tiles per (n, d) plane (conv_wgmma.cuh's tileAt): 128-position runs of the
  /// flattened plane, ceil(W / 128) a row for one-row tiles, or a pool's tiles.
  int64_t tilesPerPlane = 1;
  /// The tiles' extents (tileW 0: runs of the flattened plane), and for a pool's tiles the
  /// 16-row accumulator blocks across (kPoolBlocksW).
  int64_t tileH = 1, tileW = 0, poolBlocksW = 8;
};

/// The box of a kernel whose tiles are `tileH` output rows x `tileW` columns at multiples of
/// both (one-row tiles, a pool's tiles), or, with tileW 0, runs of 128 positions of the
/// flattened plane (a box of the full rows they touch). A strided direct convolution's box
/// holds every input row and column its outputs' taps read: stride x (outputs - 1) + the
/// kernel's span.
WgBox wgmmaBoxOf(const ConvSpec &s, const KernelShape &k, int64_t tileH, int64_t tileW) {
  const int64_t w = k.out[2], plane = k.out[1] * k.out[2];
  const int64_t spanW = (k.kernel[2] - 1) * k.dilation[2];
  const int64_t off0W = s.transposed ? k.padding[2] - spanW : -k.padding[2];
  WgBox b;
  b.tileH = tileH;
  b.tileW = tileW;
  int64_t spanned = tileH;
  if (tileW == 0)
    for (int64_t start = 0; start < plane; start += kWgRows)
      spanned = std::max(spanned, (std::min(start + kWgRows, plane) - 1) / w - start / w + 1);
  b.boxD = (k.kernel[0] - 1) * k.dilation[0] + 1;
  b.boxH = (spanned - 1) * k.stride[1] + (k.kernel[1] - 1) * k.dilation[1] + 1;
  b.wLead = roundUp(std::max<int64_t>(0, -off0W), 4);
  b.rowStride = roundUp(b.wLead + off0W + ((tileW ? tileW : w) - 1) * k.stride[2] + spanW + 1, 4);
  const int64_t perChannel = b.boxD * b.boxH * b.rowStride;
  b.ciStride = perChannel + (8 - perChannel % 32 + 32) % 32; // 8 modulo 32: no bank conflicts
  b.tilesPerPlane = tileW ? (k.out[1] + tileH - 1) / tileH * ((w + tileW - 1) / tileW)
                          : (plane + kWgRows - 1) / kWgRows;
  return b;
}

WgBox wgmmaBox(const ConvSpec &s, const KernelShape &k) {
  const int64_t w = k.out[2];
  // A pool's tiles (conv_wgmma.cuh, kPoolTiles): 8 blocks of whole windows, each window rows
  // x 16 / window rows columns (16 for one-row windows), kPoolBlocksW across, over the rows
  // and columns of the pooled output's windows. The arrangement with the fewest tiles a
  // plane (products on positions past the output), the widest on ties (wider box rows).
  if (s.pool) {
    const int64_t rows = s.pool->window[1], blockW = rows == 1 ? 16 : 16 / rows;
    KernelShape covered = k;
    covered.out[1] = s.pool->out[1] * rows;
    covered.out[2] = std::min(w, s.pool->out[2] * s.pool->window[2]);
    WgBox best;
    for (int64_t across : {8, 4, 2, 1}) {
      WgBox b = wgmmaBoxOf(s, covered, rows * (8 / across), blockW * across);
      b.poolBlocksW = across;
      if (across == 8 || b.tilesPerPlane < best.tilesPerPlane)
        best = b;
    }
    return best;
  }
  // Tiles lie in one output row where rows are whole tiles. Else a box spans the full rows
  // its 128 positions touch, unless those rows are so long that the box copies more than
  // twice the floats a useful position that one-row tiles do, whose last tile of each row
  // is partial (1-D and wide rows: a row of 16383 would copy 16389 floats a channel for 128
  // positions).
  WgBox row = wgmmaBoxOf(s, k, 1, kWgRows);
  row.rowTiles = true;
  if (w % kWgRows == 0)
    return row;
  const WgBox full = wgmmaBoxOf(s, k, 1, 0);
  const double fullPerPosition = double(full.boxD * full.boxH * full.rowStride) / kWgRows;
  const double rowPerPosition =
      double(row.boxD * row.boxH * row.rowStride) * double((w + kWgRows - 1) / kWgRows) / w;
  return fullPerPosition > 2 * rowPerPosition ? row : full;
}

/// Engine 1's k8 steps per channel chunk of a kernel with `taps` taps, padded to whole stages.
int64_t wgmmaPaddedSteps(int64_t ciChunk, int64_t taps) { return roundUp(ciChunk / 8 * taps, 4); }

/// Engine 1's weight row length for a kernel: chunks x padded steps x 8 channels.
int64_t wgmmaRowLength(const ConvSpec &s, const KernelShape &k, int64_t ciChunk) {
  return (s.Cin / s.groups + ciChunk - 1) / ciChunk * wgmmaPaddedSteps(ciChunk, volume(k.kernel)) *
         8;
}

/// conv_wgmma.cuh's shared memory: alignment slack, the B stages, two boxes, the barriers
/// and, where the epilogue accumulates statistics, their block sums (8 warps x bn columns x
/// two doubles).
int64_t wgmmaSharedBytes(const ConvIgemmTile &t, const WgBox &b, bool stats) {
  return 1024 + int64_t(t.stages) * t.bn * 32 * 4 + 2 * t.ciChunk * b.ciStride * 4 +
         (2 * t.stages + 4) * 8 + (stats ? 8 * t.bn * 16 : 0);
}

constexpr int64_t kSmemLimit = sharedPerBlock(1);

/// Whether engine 1 copies its weight stages by TMA (conv_wgmma.cuh, kTmaB): where a tile has
/// at least 4 of them. The producer's other three warps then copy the boxes. Measured with
/// TMA everywhere (H200, 2026-11-28, against the copies in the same call): from 4 stages a
/// tile on 0.94-1.26x over 35 graphs, geomean 1.13x; tiles of at most 3 stages (reductions
/// of up to 96 terms, e.g. a 3x3 conv of 8 input channels: one box and three stages a tile)
/// 0.94-1.06x over 12, geomean 1.01x, so those keep the producer's copies.
bool wgmmaTakesTmaB(const ConvSpec &s, const KernelShape &k, const ConvIgemmTile &t) {
  return wgmmaRowLength(s, k, t.ciChunk) / 32 >= 4; // a weight row holds a tile's stages
}

/// The widths of engine 1's tiles: its wgmma.mma_async instantiations (wgmma.cuh).
constexpr int64_t kWgmmaWidths[] = {8, 16, 32, 64, 128, 256};

bool isWgmmaWidth(int64_t bn) {
  return std::find(std::begin(kWgmmaWidths), std::end(kWgmmaWidths), bn) != std::end(kWgmmaWidths);
}

/// Engine 1's tile width for groups of coutG output channels: the narrowest that holds them
/// up to 64, else 128 (wider groups take several tiles). A narrower tile reads the same input
/// boxes and weight rows and multiplies no columns past the group: a group of 8 channels on
/// a 64-wide tile spent 7/8 of its products on padding.
int64_t wgmmaWidth(int64_t coutG) {
  for (int64_t bn : kWgmmaWidths)
    if (bn <= 64 && coutG <= bn)
      return bn;
  return 128;
}

/// Engine 1 runs two blocks an SM on tiles of at most 64 channels whose reduction has at most this
/// many terms (convWgmmaTile; measured on 72 to 432).
constexpr int64_t kTwoBlockReduction = 512;

llvm::Expected<KernelSource> emitKernel(const ConvSpec &s, const KernelShape &shape,
                                        const std::string &name, ConvTile tile, BRows bRows) {
  const int64_t coutG = s.Cout / s.groups, cinG = s.Cin / s.groups;
  const int threads = 32 * tile.warpsM * tile.warpsN;
  // A loader: each warp copies groups of 8 rows; B loader: whole k rows per pass.
  if (tile.bm % (16 * tile.warpsM) || tile.bn % (8 * tile.warpsN) || tile.bk % 8 ||
      tile.bm % (8 * (threads / 32)) || threads % tile.bk || tile.bn % (threads / tile.bk) ||
      tile.stages < 2)
    return makeError(name + ": conv_igemm tile " + std::to_string(tile.bm) + "x" +
                     std::to_string(tile.bn) + "x" + std::to_string(tile.bk) +
                     " does not fit its warps");
  // Shared memory: the pipeline stages plus the k table (8 bytes per reduction index).
  // Deep reductions give up stages before they give up the table.
  const int64_t kPadded = (cinG * volume(shape.kernel) + tile.bk - 1) / tile.bk * tile.bk;
  auto smemBytes = [&](int stages) {
    return int64_t(stages) * (tile.bm + tile.bn) * (tile.bk + 4) * 4 + kPadded * 8;
  };
  const WgBox box = tile.wgmma ? wgmmaBox(s, shape) : WgBox{};
  if (tile.wgmma) {
    if (tile.bm != kWgRows || tile.warpsM != (tile.pingpong ? 4 : 8) || tile.warpsN != 1 ||
        tile.bk != 32 || !isWgmmaWidth(tile.bn) || tile.stages < 3 || tile.ciChunk % 8 ||
        tile.ciChunk < 8 || s.math != MathMode::Tf32 || !bRows.packed || tile.minBlocks < 1 ||
        tile.minBlocks > 2 || (tile.minBlocks == 2 && tile.bn > 64) ||
        (tile.pingpong && (tile.minBlocks != 1 || tile.bn > 128)))
      return makeError(name + ": not a conv_wgmma tile (128 x 8/16/32/64/128/256, 8 x 1 warps "
                              "or 4 x 1 alternating, 32-deep stages, chunks of 8k channels, "
                              "TF32, packed rows; two blocks an SM at most 64 channels wide; "
                              "alternating warpgroups one block an SM, at most 128 wide)");
    if (wgmmaSharedBytes(tile, box, s.accumulateStats) > sharedPerBlock(tile.minBlocks))
      return makeError(name + ": the input box of conv_wgmma does not fit shared memory" +
                       (tile.minBlocks > 1 ? " (two blocks an SM)" : ""));
  } else if (tile.pingpong) {
    return makeError(name + ": alternating warpgroups are conv_wgmma's (engine 1)");
  }
  if ((s.channelReduce || s.softmax) &&
      (!tile.wgmma || s.groups != 1 || tile.bn < coutG || s.accumulateStats || !s.storeOutput))
    return makeError(name + ": conv_igemm " + (s.softmax ? "takes a softmax" : "reduces") +
                     " over the channels only on its wgmma engine, for one group whose "
                     "channels one tile holds, stored without statistics");
  if (s.pool && (!tile.wgmma || shape.phased || s.accumulateStats || !s.storeOutput ||
                 s.channelReduce || s.softmax))
    return makeError(name + ": conv_igemm pools only on its wgmma engine, without output "
                            "phases, statistics or a tail over the channels");
  if (!tile.wgmma) {
    while (tile.stages > 2 && smemBytes(tile.stages) > kSmemLimit)
      --tile.stages;
    if (smemBytes(tile.stages) > kSmemLimit)
      return makeError("conv_igemm cannot run " + name +
                       ": the reduction is too deep for the shared k table");
  }
  PrologueWriter w(name, "conv_igemm.cuh");
  w.constant("kN", s.N);
  w.constant("kCin", s.Cin);
  w.constant("kCout", s.Cout);
  w.constant("kGroups", s.groups);
  static const char *const kDim[3] = {"D", "H", "W"};
  for (int d = 0; d < 3; ++d) {
    std::string D = kDim[d];
    w.constant("kIn" + D, s.in[d]);
    w.constant("kOut" + D, shape.out[d]);
    w.constant("kK" + D, shape.kernel[d]);
    w.constant("kS" + D, shape.stride[d]);
    w.constant("kP" + D, shape.padding[d]);
    w.constant("kD" + D, shape.dilation[d]);
  }
  w.constantBool("kTransposed", s.transposed);
  w.constantBool("kPhased", shape.phased);
  w.constantBool("kZeroTaps", shape.zeroTaps);
  for (int d = 0; d < 3; ++d) {
    std::string D = kDim[d];
    w.constant("kY" + D, s.out[d]);
    w.constant("kYStep" + D, shape.yStep[d]);
    w.constant("kYPhase" + D, shape.yPhase[d]);
    w.constant("kWK" + D, s.kernel[d]);
    w.constant("kWTap0" + D, shape.wTap0[d]);
    w.constant("kWTapStep" + D, shape.wTapStep[d]);
  }
  w.constantBool("kHasBias", s.hasBias);
  w.constantBool("kStoreOutput", s.storeOutput);
  w.constantBool("kAccumulateStats", s.accumulateStats);
  w.constantBool("kStatsSquares", s.accumulateStats && !s.sumsOnly);
  w.constant("kCReduce", s.channelReduce ? channelFoldConstant(s.channelReduce->kind) : 0);
  w.constant("kSoftmax", !s.softmax ? 0 : s.softmax->log ? 2 : 1);
  w.constant("kPoolKind", !s.pool ? 0 : s.pool->max ? 1 : 2);
  w.constant("kPKH", s.pool ? s.pool->window[1] : 1);
  w.constant("kPKW", s.pool ? s.pool->window[2] : 1);
  w.constant("kPOH", s.pool ? s.pool->out[1] : 1);
  w.constant("kPOW", s.pool ? s.pool->out[2] : 1);
  w.constant("kPoolBlocksW", box.poolBlocksW);
  w.constantBool("kEpilogueReadsTensors", s.epilogue.readsTensors());
  w.constant("kBM", tile.bm);
  w.constant("kBN", tile.bn);
  w.constant("kBK", tile.bk);
  w.constant("kWarpsM", tile.warpsM);
  w.constant("kWarpsN", tile.warpsN);
  w.constant("kStages", tile.stages);
  w.constant("kMinBlocks", tile.minBlocks);
  w.constantBool("kPingpong", tile.pingpong);
  w.constant("kMath", tensorCoreMathConstant(s.math));
  w.constantBool("kPackedB", bRows.packed);
  w.constant("kBSlot", bRows.slot);
  w.constant("kBRow", bRows.row);
  w.constant("kBBase", bRows.base);
  w.constant("kEngine", tile.wgmma ? 1 : 0);
  w.constant("kCiChunk", tile.wgmma ? tile.ciChunk : 8);
  w.constant("kBoxH", box.boxH);
  w.constant("kRowStride", box.rowStride);
  w.constant("kCiStride", box.ciStride);
  w.constant("kWLead", box.wLead);
  w.constantBool("kRowTiles", box.rowTiles);
  const int64_t sharedBytes =
      tile.wgmma ? wgmmaSharedBytes(tile, box, s.accumulateStats) : smemBytes(tile.stages);
  w.constant("kSharedBytes", sharedBytes);
  // Engine 1 copies its weight stages by TMA where a tile has at least 4 of them
  // (wgmmaTakesTmaB; conv_wgmma.cuh, kTmaB): the map views conv_pack.cuh's rows as
  // [kernel x group][output channel][k], so that a stage's rows past the group's channels
  // read zeros.
  const bool tmaB = tile.wgmma && wgmmaTakesTmaB(s, shape, tile);
  if (tmaB)
    w.code("#define SINTER_CONV_TMA_B 1");
  w.anchorEpilogue("Epilogue", s.epilogue);
  w.anchorEpilogue("CReduceEpilogue", s.channelReduce ? s.channelReduce->post : FunctorBody());
  w.anchorEpilogue("SoftmaxEpilogue", s.softmax ? s.softmax->post : FunctorBody());
  w.anchorEpilogue("PoolEpilogue", s.pool ? s.pool->post : FunctorBody());

  KernelSource k;
  k.name = name;
  k.templateName = "conv_igemm.cuh";
  k.source = w.finish();
  const int64_t outVol = volume(shape.out), rows = s.N * outVol, taps = volume(shape.kernel);
  if (tile.wgmma) {
    // Persistent: one block per tile at most; the runtime launches at most one per SM and
    // each block strides over the tiles.
    k.launch.grid = {unsigned(s.N * shape.out[0] * box.tilesPerPlane *
                              ((coutG + tile.bn - 1) / tile.bn) * s.groups),
                     1, 1};
    k.launch.persistent = true;
    k.launch.persistentPerSm = unsigned(tile.minBlocks);
  } else {
    k.launch.grid = {unsigned((rows + tile.bm - 1) / tile.bm),
                     unsigned((coutG + tile.bn - 1) / tile.bn), unsigned(s.groups)};
  }
  k.launch.block = {
      unsigned(32 * tile.warpsM * tile.warpsN * (tile.pingpong ? 2 : 1) + (tile.wgmma ? 128 : 0)),
      1, 1};
  k.launch.sharedBytes = unsigned(sharedBytes);
  if (tmaB) {
    TensorMapSpec rowsMap;
    rowsMap.slot = bRows.slot;
    rowsMap.rank = 3;
    rowsMap.dims = {uint64_t(bRows.row), uint64_t(coutG), uint64_t(s.groups * bRows.kernels)};
    rowsMap.strides = {uint64_t(bRows.row) * 4, uint64_t(coutG * bRows.row) * 4};
    rowsMap.box = {32, uint32_t(tile.bn), 1};
    rowsMap.swizzle128 = true;
    k.launch.tensorMaps = {rowsMap};
  }
  const std::string engine =
      tile.wgmma ? std::string("wgmma, 2") + (tile.pingpong ? " alternating" : "") +
                       "+1 warpgroups, input box " + std::to_string(box.boxD) + "x" +
                       std::to_string(box.boxH) + "x" + std::to_string(box.rowStride) + " per " +
                       std::to_string(tile.ciChunk) + " channels, " +
                       (tmaB ? "weight stages by TMA, " : "")
                 : std::to_string(tile.warpsM * tile.warpsN) + " warps, ";
  k.tileConfig =
      (shape.phased ? phaseName(s, shape) + ", " : "") + std::to_string(tile.bm) + "x" +
      std::to_string(tile.bn) + "x" + std::to_string(tile.bk) + ", " + engine +
      std::to_string(tile.stages) + " stages, " + tensorCoreMathName(s.math) +
      (tile.minBlocks > 1 ? ", " + std::to_string(tile.minBlocks) + " blocks/SM" : "") +
      (!bRows.packed     ? ""
       : bRows.slot == 1 ? ", 16-byte weight rows"
                         : ", packed weight rows") +
      (s.channelReduce
           ? std::string(", then a ") + reductionName(s.channelReduce->kind) + " over the channels"
       : s.softmax
           ? std::string(", then a ") + (s.softmax->log ? "log_" : "") + "softmax over the channels"
       : s.pool
           ? std::string(s.pool->max ? ", then a max" : ", then an average") + " pool " +
                 std::to_string(s.pool->window[1]) + "x" + std::to_string(s.pool->window[2]) +
                 " on " + std::to_string(box.tileH) + "x" + std::to_string(box.tileW) + " tiles"
           : "");
  k.flops = 2.0 * double(rows) * double(s.Cout) * double(cinG * taps);
  k.bytes =
      4.0 * double(s.N * s.Cin * volume(s.in) + s.Cout * cinG * taps + (s.hasBias ? s.Cout : 0) +
                   (!s.storeOutput    ? 0
                    : s.channelReduce ? s.N * outVol
                    : s.pool          ? s.N * s.Cout * volume(s.pool->out)
                                      : s.N * s.Cout * outVol));
  if (s.accumulateStats) {
    k.bytes += 16.0 * double(s.N * s.Cout);
    k.workspace.push_back({4, 16 * s.N * s.Cout, WorkspaceNeed::Init::Zero,
                           "per-(n,c) sum and sum of squares (double)"});
  }
  return k;
}

} // namespace

double wgmmaBoxFloatsPerPosition(const ConvSpec &s) {
  double floats = 0, positions = 0;
  for (const KernelShape &k : kernelShapes(s)) {
    const WgBox b = wgmmaBox(s, k);
    const double tiles = double(k.out[0] * b.tilesPerPlane);
    floats += tiles * double(b.boxD * b.boxH * b.rowStride);
    positions += double(volume(k.out));
  }
  return positions > 0 ? floats / positions : 0;
}

KernelSource weightRowsKernel(const ConvSpec &s, std::string name, std::string templateName,
                              std::string source, int64_t total, std::string tileConfig,
                              const std::string &what) {
  constexpr int64_t kMaxBlocks = 4096;
  KernelSource k;
  k.name = std::move(name);
  k.templateName = std::move(templateName);
  k.source = std::move(source);
  k.launch.grid = {unsigned(std::clamp<int64_t>(
                       (total + kWeightRowsThreads - 1) / kWeightRowsThreads, 1, kMaxBlocks)),
                   1, 1};
  k.launch.block = {unsigned(kWeightRowsThreads), 1, 1};
  k.tileConfig = std::move(tileConfig);
  k.flops = 0;
  k.bytes = 4.0 * double(s.Cout * (s.Cin / s.groups) * volume(s.kernel) + total);
  k.workspace.push_back({kConvPackSlot, 4 * total, WorkspaceNeed::Init::None, what});
  return k;
}

namespace {

/// conv_pack.cuh for the kernels `shapes` of `s`: their weight rows, kPad floats each.
KernelSource emitPack(const ConvSpec &s, llvm::ArrayRef<KernelShape> shapes, int64_t kPad,
                      int64_t ciChunk, bool roundTf32 = false) {
  const std::string name = s.kernelName + "_pack";
  PrologueWriter w(name, "conv_pack.cuh");
  w.constant("kCin", s.Cin);
  w.constant("kCout", s.Cout);
  w.constant("kGroups", s.groups);
  w.constantBool("kTransposed", s.transposed);
  w.constant("kWKD", s.kernel[0]);
  w.constant("kWKH", s.kernel[1]);
  w.constant("kWKW", s.kernel[2]);
  w.constant("kKernels", int64_t(shapes.size()));
  w.constant("kKPad", kPad);
  w.constant("kChunk", ciChunk);
  w.constant("kThreads", kWeightRowsThreads);
  w.constant("kOutSlot", kConvPackSlot);
  w.constantBool("kRound", roundTf32);
  std::vector<int64_t> taps, tap0, tapStep, zero;
  for (const KernelShape &k : shapes) {
    for (int d = 0; d < 3; ++d) {
      taps.push_back(k.kernel[d]);
      tap0.push_back(k.wTap0[d]);
      tapStep.push_back(k.wTapStep[d]);
    }
    zero.push_back(k.zeroTaps);
  }
  w.deviceConstantArray("kPTaps", taps);
  w.deviceConstantArray("kPTap0", tap0);
  w.deviceConstantArray("kPTapStep", tapStep);
  w.deviceConstantArray("kPZero", zero);
  return weightRowsKernel(s, name, "conv_pack.cuh", w.finish(),
                          int64_t(shapes.size()) * s.Cout * kPad,
                          std::to_string(shapes.size()) + " x " + std::to_string(s.Cout) +
                              " rows of " + std::to_string(kPad) + " weights",
                          "the weights as conv_igemm's k rows (conv_pack.cuh)");
}

/// Every kernel of `s`, each with `tile` or, when null, the tile chosen for its shape.
llvm::Expected<std::vector<KernelSource>> emitKernels(const ConvSpec &s,
                                                      const ConvIgemmTile *tile) {
  if (s.pool) {
    std::string why;
    if (!convIgemmRunsPool(s, &why))
      return makeError(s.kernelName + ": conv_igemm cannot pool: " + why);
  }
  if (s.softmax && s.channelReduce)
    return makeError(s.kernelName + ": conv_igemm takes a softmax or a reduction over the "
                                    "channels, not both");
  // conv_shift fuses no tail over the channels. A reduction over them goes to the input-box
  // engine even for a strided transposed convolution, which conv_shift's phase walk runs
  // faster without one: the output shrinks by the channel count, so its stores go
  // (convt2d_kb36_min_c_sum_h_gelu_bias, H200: 0.659 -> 0.289 ms). A softmax keeps its full
  // output, and there the phase walk and a softmax kernel after it won
  // (convt2d_kb91_softmax_bias_scale_sigmoid 2.283 against 2.304, convt3d_kb49_softmax_sigmoid
  // 0.670 against 0.832; again with the input-box engine's TMA weight stages, 1.880 against
  // 2.208 and 0.669 against 0.808, H200, 2026-11-28).
  // A pool runs on the input-box engine only (convIgemmRunsPool).
  const bool inputBoxTail = (s.channelReduce && isPhased(s)) || s.pool;
  if ((s.channelReduce || s.softmax) && !tile && !inputBoxTail && convShiftTile(s))
    return makeError(s.kernelName + ": conv_shift has no " + (s.softmax ? "softmax" : "reduction") +
                     " over the channels (the input-box engine runs it)");
  // The output sizes must follow from the attributes (transposed: output_padding is folded
  // into `out`, so only a lower bound holds).
  for (int d = 0; d < 3; ++d) {
    int64_t span = s.dilation[d] * (s.kernel[d] - 1);
    int64_t expect = s.transposed ? (s.in[d] - 1) * s.stride[d] - 2 * s.padding[d] + span + 1
                                  : (s.in[d] + 2 * s.padding[d] - span - 1) / s.stride[d] + 1;
    if (s.transposed ? s.out[d] < expect : s.out[d] != expect)
      return makeError(s.kernelName + ": output extent " + std::to_string(s.out[d]) +
                       " does not follow from the convolution attributes (expected " +
                       std::to_string(expect) + ")");
  }
  // TF32 convolutions on sm_90a run as per-tap GEMMs over the staged input where
  // convShiftTile accepts them (ConvShift.h: stride-1 ones whose input boxes would be large,
  // transposed ones by output phase, small groups), unless a tile is forced or a strided
  // transposed one has a reduction over the channels to fold.
  if (!tile && !inputBoxTail)
    if (auto shift = convShiftTile(s))
      return emitConvShift(s, *shift);
  std::string why;
  if (!convIgemmSupports(s, &why))
    return makeError("conv_igemm cannot run " + s.kernelName + ": " + why);
  llvm::SmallVector<KernelShape, 8> shapes = kernelShapes(s);
  // Engine 1 runs every kernel of the convolution or none (they share the pack kernel's
  // row order).
  // On a wgmma target, why a convolution stays on mma.sync is part of its tile description.
  std::string whyNotWgmma;
  std::optional<ConvTile> wgmma = tile ? std::optional<ConvTile>() : convWgmmaTile(s, &whyNotWgmma);
  if (tile && tile->wgmma) {
    wgmma = *tile;
    if (wgmma->ciChunk == 0)
      if (auto chosen = convWgmmaTile(s))
        wgmma->ciChunk = chosen->ciChunk;
  }
  llvm::SmallVector<ConvTile, 8> tiles;
  for (const KernelShape &shape : shapes)
    tiles.push_back(wgmma  ? *wgmma
                    : tile ? *tile
                           : chooseTile(s.Cout / s.groups, s.N * volume(shape.out), s.math));
  // B rows: a direct convolution's weight rows are its k rows already; when they are whole
  // 16-byte pieces the kernel copies them as they are. Otherwise (transposed convolutions,
  // output phases, K % 4 != 0, engine 1's chunked order) conv_pack.cuh writes every
  // kernel's rows first.
  const int64_t cinG = s.Cin / s.groups;
  const bool direct = !wgmma && !s.transposed && (cinG * volume(s.kernel)) % 4 == 0;
  int64_t kPad = 0;
  bool pack = false;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int64_t bk = tiles[i].bk;
    kPad = std::max(kPad, wgmma ? wgmmaRowLength(s, shapes[i], wgmma->ciChunk)
                                : (cinG * volume(shapes[i].kernel) + bk - 1) / bk * bk);
    pack |= !direct && tileTakesPackedB(tiles[i]);
  }
  std::vector<KernelSource> kernels;
  // wgmma reads B through descriptors and would truncate it to TF32: the rows are written
  // rounded (to nearest), as mma.sync's operands are (a truncated B biases every product
  // towards zero: about 3.5e-4 of each output, where rounding leaves an unbiased error).
  if (pack)
    kernels.push_back(emitPack(s, shapes, kPad, wgmma ? wgmma->ciChunk : 0, wgmma.has_value()));
  for (size_t i = 0; i < shapes.size(); ++i) {
    const KernelShape &shape = shapes[i];
    std::string name = shapes.size() == 1 ? s.kernelName : s.kernelName + "_p" + std::to_string(i);
    BRows rows;
    if (tileTakesPackedB(tiles[i])) {
      rows.packed = true;
      rows.slot = direct ? 1 : kConvPackSlot;
      rows.row = direct ? cinG * volume(s.kernel) : kPad;
      rows.base = direct ? 0 : int64_t(i) * s.Cout * kPad;
      rows.kernels = direct ? 1 : int64_t(shapes.size());
    }
    auto k = emitKernel(s, shape, name, tiles[i], rows);
    if (!k)
      return k.takeError();
    if (rows.packed && !direct)
      k->workspace.push_back(kernels.front().workspace.front());
    if (s.wgmma && !wgmma && !tile)
      k->tileConfig += " (not wgmma: " + whyNotWgmma + ")";
    kernels.push_back(std::move(*k));
  }
  return kernels;
}

} // namespace

bool convIgemmSupports(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  if (s.groups < 1 || s.Cin % s.groups || s.Cout % s.groups)
    return no("groups do not divide the channels");
  for (int d = 0; d < 3; ++d) {
    if (s.kernel[d] > 31)
      return no("a kernel extent over 31 taps");
    if (s.in[d] < 1 || s.out[d] < 1 || s.kernel[d] < 1 || s.stride[d] < 1 || s.dilation[d] < 1)
      return no("a non-positive size, stride or dilation");
  }
  // The template keeps input offsets within one image and k indices in 32-bit integers.
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (s.Cin * volume(s.in) > kMax || s.Cout * volume(s.out) > kMax ||
      s.Cin / s.groups * volume(s.kernel) > kMax)
    return no("one image or the reduction is too large for 32-bit offsets");
  // The k table (8 bytes per reduction index) shares shared memory with at least two stages
  // of the largest tile (256x128x32: 54 KiB each). An output phase reduces over its own taps.
  int64_t deepest = 0;
  for (const KernelShape &k : kernelShapes(s))
    deepest = std::max(deepest, (s.Cin / s.groups) * volume(k.kernel));
  if (deepest * 8 + 2 * 55296 > kSmemLimit)
    return no("the reduction (Cin/groups * kernel volume) is too deep for the shared k table");
  if (s.N * volume(s.out) / 128 > std::numeric_limits<unsigned>::max() / 2)
    return no("too many output positions for the grid");
  return true;
}

std::optional<ConvIgemmTile> convWgmmaTile(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return std::nullopt;
  };
  if (!s.wgmma)
    return no("the target has no wgmma (sm_90a)");
  if (s.math != MathMode::Tf32)
    return no("3xTF32 convolutions stay on mma.sync");
  std::string why;
  if (!convIgemmSupports(s, &why))
    return no(why);
  const int64_t cinG = s.Cin / s.groups, coutG = s.Cout / s.groups;
  // A strided direct convolution's box holds every input column between its outputs' first
  // and last taps. Measured against mma.sync's im2col (H200, 2026-11-29, 29 graphs): 1.1-2.6x
  // faster on 24 of them, 0.80-0.89x on three whose taps skip input columns (a 1x1 kernel or
  // a dilation of 2 with stride 2; others of that kind won 1.24-1.86x), and 0.49x on a
  // convolution of 3 input channels, which the box pads to a chunk of 8: such groups stay on
  // mma.sync.
  if (!s.transposed && s.strided() && cinG < 8)
    return no("a strided direct convolution of fewer than 8 input channels a group (the input "
              "box would pad them to 8)");
  ConvIgemmTile t{kWgRows, int(wgmmaWidth(coutG)), 32, 8, 1, 4, 1, true, 8};
  llvm::SmallVector<KernelShape, 8> shapes = kernelShapes(s);
  // The kernel indexes its tiles with 32-bit integers.
  for (const KernelShape &k : shapes)
    if (s.N * k.out[0] * wgmmaBox(s, k).tilesPerPlane * ((coutG + t.bn - 1) / t.bn) * s.groups >
        std::numeric_limits<int>::max())
      return no("too many output tiles for 32-bit tile indices");
  auto fits = [&](const ConvIgemmTile &c) {
    for (const KernelShape &k : shapes)
      if (wgmmaSharedBytes(c, wgmmaBox(s, k), s.accumulateStats) > sharedPerBlock(c.minBlocks))
        return false;
    return true;
  };
  // The chunk that pads the reduction least (steps padded to whole stages, channels to the
  // chunk), the smaller on ties; deeper B rings when shared memory allows.
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int chunk : {8, 16, 32}) {
    if (chunk > roundUp(cinG, 8))
      break;
    int64_t steps = 0;
    for (const KernelShape &k : shapes)
      steps += (cinG + chunk - 1) / chunk * wgmmaPaddedSteps(chunk, volume(k.kernel));
    ConvIgemmTile c = t;
    c.ciChunk = chunk;
    if (fits(c) && steps < best) {
      best = steps;
      t.ciChunk = chunk;
    }
  }
  if (best == std::numeric_limits<int64_t>::max())
    return no("the input box does not fit shared memory");
  for (int stages : {6, 5}) {
    ConvIgemmTile c = t;
    c.stages = stages;
    if (fits(c)) {
      t.stages = stages;
      break;
    }
  }
  // Two blocks an SM where the tile is at most 64 channels wide and the reduction shallow: a
  // tile's epilogue (its stores and the fused elementwise chain, a long dependent run on two
  // consumer warps a scheduler) then takes as long as its products or longer, and one
  // block's epilogue runs beside the other's products. 4 B stages and the chosen chunk, or
  // smaller chunks where its boxes leave no room. Measured against one block an SM in the
  // same runs (H100, 2026-11-27, reductions of 72 to 432 terms; the template's setmaxnreg
  // split): conv2d_bn_silu_avgpool 1.27 -> 0.97-1.02 ms, conv3d_in_relu_mean 1.37 ->
  // 1.08-1.16, convt1d_dil_grouped_sum_c_sigmoid 0.52 -> 0.45, three more 2-4% faster,
  // conv2d_min_tanh_tanh 1-3% slower. 128-wide tiles need more registers than two blocks of
  // 384 threads leave (ptxas refuses the wgmma at 80).
  if (t.bn <= 64 && convIgemmMeanReduction(s) <= kTwoBlockReduction) {
    ConvIgemmTile c = t;
    c.minBlocks = 2;
    c.stages = 4;
    while (!fits(c) && c.ciChunk > 8)
      c.ciChunk /= 2;
    if (fits(c))
      t = c;
  }
  // One block an SM: the two consumer warpgroups take whole tiles in turn (pingpong), so
  // that one's epilogue runs beside the other's products. Measured against both warpgroups
  // on each tile (H200, 2026-11-28, full-size corpus graphs, same run): 64 -> 128 and
  // 64 -> 64 3x3 convolutions with their chains 1.27-1.45x, a 3-D one with plane sums
  // 1.32x, a ConvTranspose2d with a norm's statistics 1.14x. Not where the epilogue folds
  // each position's channels into one value (a reduction over the channels): it stores
  // 1 / bn of the tile, so there is little to hide, and one warpgroup's products alone ran
  // slower (a first build: conv2d_kb32_scale_min_c 0.90x, conv1d_max_c_sigmoid 0.94x).
  if (t.minBlocks == 1 && t.bn <= 128 && !s.channelReduce) {
    t.pingpong = true;
    t.warpsM = 4;
  }
  return t;
}

bool convIgemmRunsChannelTail(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  const char *tail = s.softmax ? "the softmax" : "the reduction";
  const char *does = s.softmax ? "take a softmax over" : "reduce over";
  if (s.groups != 1)
    return no(std::string(tail) + " spans the convolution's groups");
  if ((s.softmax || !isPhased(s)) && convShiftTile(s))
    return no(std::string("the convolution runs on conv_shift, which does not ") + does +
              " the channels");
  std::string why;
  auto tile = convWgmmaTile(s, &why);
  if (!tile)
    return no("the convolution stays on mma.sync (" + why + "), which does not " + does +
              " the channels");
  if (tile->bn < s.Cout)
    return no(std::to_string(s.Cout) + " channels span more than one " + std::to_string(tile->bn) +
              "-channel tile");
  return true;
}

bool convIgemmRunsPool(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  if (!s.pool)
    return no("there is no pool");
  const ConvPoolTail &p = *s.pool;
  if (s.softmax || s.channelReduce || s.accumulateStats || !s.storeOutput)
    return no("the pool would follow a tail over the channels or statistics");
  if (isPhased(s))
    return no("a strided transposed convolution runs by output phase, and a window spans "
              "phases");
  if (s.strided())
    return no("a strided direct convolution (its pool tiles on the input-box engine are not "
              "measured)");
  ConvSpec plain = s; // conv_shift's choice is made on the convolution's own tiles
  plain.pool.reset();
  if (convShiftTile(plain))
    return no("the convolution runs on conv_shift, which does not pool in its kernel");
  std::string why;
  if (!convWgmmaTile(s, &why))
    return no("the convolution stays on mma.sync (" + why + "), which does not pool in its kernel");
  if (p.window[0] != 1)
    return no("the input-box engine's tiles lie in one output depth, and the pool's windows span " +
              std::to_string(p.window[0]));
  if (p.window[1] != 1 && p.window[1] != 2 && p.window[1] != 4)
    return no("the input-box engine's pool tiles hold windows of 1, 2 or 4 rows, not " +
              std::to_string(p.window[1]));
  // A window lies in one 16-row block of a warp's accumulators: rows x 16 / rows columns
  // (8 columns a thread's row for one-row windows).
  const int64_t columns = p.window[1] == 1 ? 8 : 16 / p.window[1];
  if ((p.window[2] & (p.window[2] - 1)) != 0 || p.window[2] > columns)
    return no("the input-box engine's pool tiles hold windows of " + std::to_string(p.window[1]) +
              (p.window[1] == 1 ? " row" : " rows") + " and up to " + std::to_string(columns) +
              " columns (a power of two), not " + std::to_string(p.window[2]));
  if (p.window[1] * p.window[2] < 2)
    return no("a window of one position");
  for (int d = 1; d < 3; ++d)
    if (p.out[d] < 1 || (p.out[d] - 1) * p.window[d] >= s.out[d] ||
        p.out[d] * p.window[d] < s.out[d] - p.window[d] + 1)
      return no("the pooled extents do not follow from the windows");
  // Tiles of whole windows may hold more padding than the plain tiles (a 34 x 34 plane: 15
  // tiles of 8 x 16 against 10 runs of 128). The extra products must cost less than the
  // output's write and the pool kernel's read of it, at the engine's rate and DRAM's
  // (measured on an H200: 3x3 convolutions on the engine 150-210 TFLOP/s; copies about 3 TB/s
  // in the planner's model).
  constexpr double kEngineFlopsPerSecond = 200e12, kDramBytesPerSecond = 3e12;
  double pooledTiles = 0, plainTiles = 0, flops = 0;
  for (const KernelShape &k : kernelShapes(s)) {
    pooledTiles += double(wgmmaBox(s, k).tilesPerPlane);
    plainTiles += double(wgmmaBox(plain, k).tilesPerPlane);
    flops += 2.0 * double(s.N * s.Cout * volume(k.out) * (s.Cin / s.groups) * volume(k.kernel));
  }
  const double extra = (pooledTiles / plainTiles - 1) * flops / kEngineFlopsPerSecond;
  const double saved = 2.0 * 4.0 * double(s.N * s.Cout * volume(s.out)) / kDramBytesPerSecond;
  if (extra > saved) {
    char ratio[16];
    std::snprintf(ratio, sizeof ratio, "%.2f", pooledTiles / plainTiles);
    return no(std::string("tiles of whole windows would multiply ") + ratio +
              "x the convolution's tiles, more products than the output's round trip costs");
  }
  return true;
}

int64_t convIgemmMeanReduction(const ConvSpec &s) {
  int64_t depth = (s.Cin / s.groups) * volume(s.kernel);
  return isPhased(s) ? depth / volume(s.stride) : depth;
}

KernelSource emitConvWeightRows(const ConvSpec &s, int64_t kPad, int64_t ciChunk, bool roundTf32) {
  const KernelShape identity{s.out, s.kernel, s.stride, s.padding, s.dilation};
  return emitPack(s, {identity}, kPad, ciChunk, roundTf32);
}

llvm::Expected<std::vector<KernelSource>> emitConvIgemm(const ConvSpec &s) {
  return emitKernels(s, nullptr);
}

llvm::Expected<std::vector<KernelSource>> emitConvIgemm(const ConvSpec &s,
                                                        const ConvIgemmTile &tile) {
  return emitKernels(s, &tile);
}

} // namespace sinter
