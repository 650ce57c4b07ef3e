//===- compiler/kernels/Gemm.cpp - tensor-core GEMM emitter ------------------------===//
//
// Checks a GemmSpec, picks the engine and block tile and writes the prologue of a
// templates/gemm.cuh kernel. On sm_90a, products whose B is [N, K] with 16-byte rows run on
// the wgmma engine with the tile of least predicted time (chooseWgmmaTile); unbatched 3xTF32
// ones on 128-row tiles as a persistent kernel, its last partial wave split by k tiles
// (stream-K, workspace in slot 5) where that is predicted faster. Otherwise
// (mma.sync) large products get 128x128x32 tiles with eight warps in three cp.async stages
// (128x64 when N is at most 64); small ones 64x64 with four warps so that more blocks fill
// the machine. With a norm tail
// the warp's column span is widened to the norm group when needed, since a group must be
// reduced inside one warp's registers.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/Gemm.h"
#include "compiler/kernels/TensorCoreMath.h"

#include "ir/Error.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

namespace sinter {

namespace {

int rowReduceConstant(GemmSpec::RowReduce r) {
  switch (r) {
  case GemmSpec::RowReduce::None:
    return 0;
  case GemmSpec::RowReduce::Min:
    return 1;
  case GemmSpec::RowReduce::Max:
    return 2;
  case GemmSpec::RowReduce::Sum:
  case GemmSpec::RowReduce::Mean:
    return 3;
  }
  llvm_unreachable("unknown row reduction");
}

int64_t batchCount(const GemmSpec &s) {
  int64_t batch = 1;
  for (int64_t d : s.batchShape)
    batch *= d;
  return batch;
}

/// The distinct matrices of an operand with batch strides `strides` (0: broadcast over that
/// batch dim, so read once).
int64_t distinctMatrices(const GemmSpec &s, llvm::ArrayRef<int64_t> strides) {
  int64_t n = 1;
  for (size_t d = 0; d < strides.size(); ++d)
    if (strides[d] != 0)
      n *= s.batchShape[d];
  return n;
}

/// Shared memory of the wgmma engine for a tile (wgmma.cuh's Layout: A and B per stage, B's
/// small parts too in 3xTF32, three barriers and two work words per stage, 1 KiB for
/// alignment; then gemm.cuh's row reduction scratch, a float per tile row).
int wgmmaSharedBytes(const GemmSpec &s, const GemmTile &t) {
  int stage = (t.bm + t.bn) * 32 * 4;
  if (tensorCoreMathConstant(s.math) == 2)
    stage += t.bn * 32 * 4;
  int scratch = s.rowReduce != GemmSpec::RowReduce::None ? t.bm * 4 : 0;
  return t.stages * (stage + 5 * 8) + 1024 + scratch;
}

/// Whether the tile's blocks take tiles through gemm.cuh's one-dimensional schedule
/// (GemmLaunch Persistent or TilesThenStreamK): the wgmma engine on one block per SM (the
/// emitter launches a scheduled kernel on at most one block per SM, which would halve
/// two-block tiles; LaunchConfig::persistentPerSm could carry two, not built for GEMMs) and
/// no batch (one tile numbering; a batch would need tensor maps with broadcast strides too).
bool scheduledTile(const GemmTile &t, int64_t batch) {
  return t.wgmma && t.launch != GemmLaunch::BlockPerTile && t.minBlocks == 1 && batch == 1;
}

} // namespace

bool gemmFitsWgmma(const GemmSpec &s) {
  if (!s.wgmma || !s.bTransposed || s.K % 4 != 0)
    return false;
  for (size_t d = 0; d < s.batchStrideA.size(); ++d)
    if (s.batchStrideA[d] % 4 != 0 || s.batchStrideB[d] % 4 != 0)
      return false;
  return true;
}

bool gemmClusterFits(const GemmSpec &s, const GemmTile &t) {
  const int64_t batch = batchCount(s);
  const int64_t tilesM = (s.M + t.bm - 1) / t.bm, tilesN = (s.N + t.bn - 1) / t.bn;
  return gemmFitsWgmma(s) && t.wgmma && t.tma && batch == 1 &&
         tensorCoreMathConstant(s.math) != 2 && !scheduledTile(t, batch) && tilesM % 2 == 0 &&
         tilesN % 2 == 0 && t.groupM % 2 == 0;
}

namespace {

/// The wgmma tiles and their relative throughput per SM (1 = the widest tile). TF32: 128 x 256
/// keeps 128 accumulators per consumer thread; 3xTF32 also keeps a per-k-tile sum, A's small
/// parts and B's in shared memory, so its tiles are narrower (64 x 128 spilled at the 128
/// registers of two blocks per SM). 64-row tiles run two blocks per SM. Measured
/// on the H200 at 8192^3: TF32 128x256 209 TFLOP/s, 128x128 151; 3xTF32 128x128 76, 128x64 47.
struct WgmmaCandidate {
  GemmTile tile;
  double efficiency;
};

std::vector<WgmmaCandidate> wgmmaCandidates(MathMode m) {
  auto t = [](int bm, int bn, int stages, int minBlocks) {
    return GemmTile{bm, bn, 32, bm / 16, 1, stages, minBlocks, true};
  };
  if (tensorCoreMathConstant(m) == 2)
    return {{t(128, 128, 4, 1), 1.0}, {t(64, 64, 4, 2), 0.6}};
  return {{t(128, 256, 4, 1), 1.0},
          {t(128, 128, 6, 1), 0.72},
          {t(64, 128, 4, 2), 0.6},
          {t(64, 64, 6, 2), 0.45}};
}

} // namespace

std::vector<GemmTile> wgmmaTiles(MathMode m) {
  std::vector<GemmTile> out;
  for (const WgmmaCandidate &c : wgmmaCandidates(m))
    out.push_back(c.tile);
  return out;
}

namespace {

/// How fast a stream-K tail runs against whole tiles. Its blocks work on the tail's tiles at
/// scattered k offsets, so the k tiles of a shared A or B panel are read at different times:
/// TF32, which streams operands 3x faster, loses L2 (ncu, H100: hit rate 78% -> 70-73%,
/// DRAM throughput 34% -> 44-49% of peak). Measured on an H100 (2026-11-27, five rounds of
/// tc_check each): TF32 8192^3's 1.52-tile tail took the time of 4.05 whole tiles (0.37);
/// S3's (3xTF32) 1.88-tile tail 2.17 (0.87); 3xTF32 8192^3's 1.03-tile tail no more than
/// whole tiles would.
double streamKTailEfficiency(MathMode m) { return tensorCoreMathConstant(m) == 2 ? 0.87 : 0.37; }

/// Tile times of `tiles` tiles on kGemmStreamKBlocks SMs, without the split (whole waves) or
/// with it (the waves but the last two whole, the last blocks + r tiles split at the tail's
/// efficiency).
double tileTimes(int64_t tiles, bool streamK, MathMode m) {
  const int64_t g = kGemmStreamKBlocks, q = tiles / g, r = tiles % g;
  if (!streamK || tiles <= g || r == 0)
    return double((tiles + g - 1) / g);
  return double(q - 1) + (1.0 + double(r) / double(g)) / streamKTailEfficiency(m);
}

} // namespace

GemmTile chooseWgmmaTile(const GemmSpec &s) {
  const int64_t batch = batchCount(s);
  const bool x3 = tensorCoreMathConstant(s.math) == 2;
  GemmTile best;
  double bestCost = std::numeric_limits<double>::infinity();
  for (const WgmmaCandidate &c : wgmmaCandidates(s.math)) {
    GemmTile t = c.tile;
    if (s.normGroupCols > 0 && t.bn % s.normGroupCols != 0)
      continue;
    // The norm tail's registers beside 128 accumulators spill (264 bytes at 168 registers).
    if (s.normGroupCols > 0 && t.bn * t.bm / 128 > 128)
      continue;
    int64_t blocks = (s.M + t.bm - 1) / t.bm * ((s.N + t.bn - 1) / t.bn) * batch;
    // The launch, from the same H100 runs: 3xTF32 persistent (8192^3 108.7 TFLOP/s against
    // 106.8 a block per tile; S3 1.328 against 1.400 ms), TF32 a block per tile (persistent
    // 316.6 against 332.2; not profiled, presumably blocks dealt tiles in turn drift apart and
    // share less of L2 than blocks the hardware hands tiles as they finish). The split where
    // it beats whole waves at the tail's efficiency: 3xTF32 8192^3 (4 tiles past 31 waves)
    // 112.6, S3 (116 past 3) kept whole.
    t.launch = x3 ? GemmLaunch::Persistent : GemmLaunch::BlockPerTile;
    t.streamK = scheduledTile(t, batch) &&
                tileTimes(blocks, true, s.math) < tileTimes(blocks, false, s.math);
    double waves = t.minBlocks == 1
                       ? tileTimes(blocks, t.streamK, s.math)
                       : double((blocks + 132 * t.minBlocks - 1) / (132 * t.minBlocks));
    double cost = waves * t.minBlocks * t.bm * t.bn / c.efficiency;
    if (cost < bestCost) {
      bestCost = cost;
      best = t;
    }
  }
  // Copies by TMA (GemmTile::tma's default) and blocks in groups of 8 tile rows. Measured on
  // the H200, 8192^3, in the same runs: 3xTF32 TMA 103-109 against 95-104 TFLOP/s for the
  // producer's cp.async copies (faster in all twelve pairs), the grouped order 108 against
  // 99-105 in row order; TF32 (power-throttled, its runs spread 6%) in row order faster with
  // the copies in seven of nine pairs (mean 321 vs 312), in groups faster with TMA in two of
  // three (mean 366 vs 351), and grouped 318-386 against 312-344 in row order.
  // The group's height: a wave of 132 tiles of BM x BN in groups of g tile rows reads g x BM
  // rows of A and 132 / g x BN rows of B, least near g = sqrt(132 BN / BM): 16 for 128 x 256
  // (TF32), 11.5 for 128 x 128. Measured on an H100 (2026-11-27, TF32 8192^3): ncu's DRAM
  // reads 2.99 -> 2.54 GB (cuBLAS 2.33); in 8 rounds with cuBLAS in each of three calls,
  // medians 340.4 / 336.8, 337.4 / 334.1 and 334.6 / 334.2 TFLOP/s, faster in 14 of the 24
  // rounds: no worse, at most 1% better, within the rounds' spread. 128-row tiles of other
  // widths keep 8 (measured earlier; 16 not measured there).
  if (best.wgmma && best.bm == 128 && best.bn == 256)
    best.groupM = 16;
  return best;
}

llvm::Expected<KernelSource> emitGemm(const GemmSpec &s) {
  int64_t batch = batchCount(s);
  if (gemmFitsWgmma(s)) {
    GemmTile t = chooseWgmmaTile(s);
    if (t.wgmma)
      return emitGemm(s, t);
  }
  bool big = s.M * s.N * batch >= int64_t(128) * 128 * 132;
  GemmTile tile = big ? GemmTile{128, 128, 32, 2, 4, 3} : GemmTile{64, 64, 32, 2, 2, 3};
  // At most 64 columns (attention's P x V, a projection to 64 features): a 128-wide tile would
  // spend half its products on padding; the same eight warps take 128 x 64 as 4 x 2.
  if (big && s.N <= 64)
    tile = GemmTile{128, 64, 32, 4, 2, 3};
  if (s.normGroupCols > 0) {
    // Widen the warps' column span to hold whole groups; a 64-wide group needs 128-wide tiles.
    if (s.normGroupCols > tile.bn)
      tile = GemmTile{128, 128, 32, 2, 4, 3};
    int span = std::max<int>(tile.bn / tile.warpsN, int(s.normGroupCols));
    int warps = tile.warpsM * tile.warpsN;
    tile.warpsN = std::max(1, tile.bn / span);
    tile.warpsM = warps / tile.warpsN;
  }

  return emitGemm(s, tile);
}

llvm::Expected<KernelSource> emitGemm(const GemmSpec &s, const GemmTile &tile) {
  const std::string &name = s.kernelName;
  if (s.M < 1 || s.N < 1 || s.K < 1)
    return makeError(name + ": gemm sizes must be positive");
  size_t dims = s.batchShape.size();
  if (dims > 4 || s.batchStrideA.size() != dims || s.batchStrideB.size() != dims ||
      s.batchStrideC.size() != dims)
    return makeError(name + ": batch shape and strides disagree (at most 4 batch dims)");
  int64_t batch = batchCount(s);
  if (batch < 1 || batch > 65535)
    return makeError(name + ": batch count " + std::to_string(batch) + " out of range");
  const int64_t maxNorm = tile.wgmma ? tile.bn : 128;
  if (s.normGroupCols < 0 ||
      (s.normGroupCols > 0 &&
       (s.normGroupCols % 8 != 0 || s.N % s.normGroupCols != 0 || s.normGroupCols > maxNorm)))
    return makeError(name + ": norm group of " + std::to_string(s.normGroupCols) +
                     " columns unsupported (a multiple of 8 dividing N, at most " +
                     std::to_string(maxNorm) + ")");
  if (s.M > std::numeric_limits<int>::max() / batch || s.N > std::numeric_limits<int>::max())
    return makeError(name + ": gemm too large for 32-bit row and column indices");
  const int64_t tiles = (s.M + tile.bm - 1) / tile.bm * ((s.N + tile.bn - 1) / tile.bn);
  const bool scheduled = scheduledTile(tile, batch);
  const bool persistent = scheduled && tile.launch == GemmLaunch::Persistent;
  if (scheduled && tiles > std::numeric_limits<int>::max())
    return makeError(name + ": " + std::to_string(tiles) + " tiles, too many for one grid");
  // The stream-K workspace: one partial tile and one flag per block, for grids of up to
  // kGemmStreamKBlocks blocks; with no more tiles than that the runtime never launches a
  // grid that splits. A TF32 Head adds the other block's sums after its k tiles, beside the
  // epilogue's values: with a row reduction, 128 accumulators a thread (128 x 256) spilled 8
  // bytes, so those tiles deal every tile out whole (the planner gives row reductions only
  // with a norm tail, which keeps them off such tiles anyway).
  const bool wideRowReduce =
      s.rowReduce != GemmSpec::RowReduce::None && tile.bm * tile.bn > 128 * 128;
  const int64_t streamKSlots =
      scheduled && tile.streamK && tiles > kGemmStreamKBlocks && !wideRowReduce ? kGemmStreamKBlocks
                                                                                : 0;

  const int threads = 32 * tile.warpsM * tile.warpsN;
  const int aVec = s.K % 4 == 0 ? 4 : 1, bVec = (s.bTransposed ? s.K : s.N) % 4 == 0 ? 4 : 1;
  auto tileName = [&] {
    return std::to_string(tile.bm) + "x" + std::to_string(tile.bn) + "x" + std::to_string(tile.bk);
  };
  if (tile.wgmma) {
    if (!gemmFitsWgmma(s))
      return makeError(name + ": the wgmma engine needs an sm_90a target, B as [N, K] and "
                              "K and the batch strides multiples of 4");
    if ((tile.bm != 64 && tile.bm != 128) || (tile.bn != 64 && tile.bn != 128 && tile.bn != 256) ||
        tile.bk != 32 || tile.warpsM != tile.bm / 16 || tile.warpsN != 1 || tile.stages < 2 ||
        (s.normGroupCols > 0 && tile.bn % s.normGroupCols) ||
        wgmmaSharedBytes(s, tile) > sharedPerBlock(tile.minBlocks))
      return makeError(name + ": wgmma tile " + tileName() + " with " +
                       std::to_string(tile.stages) + " stages is not one the engine runs");
    if (tile.cluster != 1 && (tile.cluster != 2 || !gemmClusterFits(s, tile)))
      return makeError(name + ": clusters of " + std::to_string(tile.cluster) +
                       " unsupported (only clusters of two, in TF32 through TMA, with no "
                       "batch, a block per tile and even tile counts and block groups)");
  } else if (tile.cluster != 1) {
    return makeError(name + ": clusters are the wgmma engine's");
  } else if (tile.bm % (16 * tile.warpsM) || tile.bn % (8 * tile.warpsN) || tile.bk % 8 ||
             tile.stages < 2 || (tile.bm * tile.bk / aVec) % threads ||
             (tile.bn * tile.bk / bVec) % threads ||
             (s.normGroupCols > 0 && (tile.bn / tile.warpsN) % s.normGroupCols)) {
    return makeError(name + ": gemm tile " + tileName() +
                     " does not fit its warps or the norm groups");
  }

  PrologueWriter w(name, "gemm.cuh");
  w.constant("kM", s.M);
  w.constant("kN", s.N);
  w.constant("kK", s.K);
  w.constant("kBatchDims", int64_t(dims));
  w.constantArray("kBatchShape", s.batchShape);
  w.constantArray("kBatchStrideA", s.batchStrideA);
  w.constantArray("kBatchStrideB", s.batchStrideB);
  w.constantArray("kBatchStrideC", s.batchStrideC);
  w.constantBool("kBTransposed", s.bTransposed);
  w.constantBool("kHasBias", s.hasBias);
  w.constantBool("kStoreOutput", s.storeOutput);
  w.constant("kNormCols", s.normGroupCols);
  w.constantFloat("kNormEps", s.normEps);
  w.constantBool("kNormAffine", s.normAffine);
  w.constant("kRowReduce", rowReduceConstant(s.rowReduce));
  w.constantFloat("kRowReduceScale",
                  s.rowReduce == GemmSpec::RowReduce::Mean ? 1.0 / double(s.N) : 1.0);
  w.constant("kBM", tile.bm);
  w.constant("kBN", tile.bn);
  w.constant("kBK", tile.bk);
  w.constant("kWarpsM", tile.warpsM);
  w.constant("kWarpsN", tile.warpsN);
  w.constant("kStages", tile.stages);
  w.constant("kMinBlocks", tile.minBlocks);
  w.constant("kMath", tensorCoreMathConstant(s.math));
  w.constant("kEngine", tile.wgmma ? 1 : 0);
  // The wgmma engine copies through TMA when one tensor map per operand covers the product:
  // no batch (a batched product's operands would need maps with broadcast strides).
  const bool tma = tile.wgmma && tile.tma && batch == 1;
  w.constantBool("kTma", tma);
  w.constant("kGroupM", tile.wgmma ? std::max(1, tile.groupM) : 1);
  w.constantBool("kPersistent", scheduled);
  w.constant("kStreamKSlots", streamKSlots);
  w.constant("kCluster", tile.cluster);
  if (tile.cluster > 1)
    w.code("#define SINTER_GEMM_CLUSTER __cluster_dims__(" + std::to_string(tile.cluster) +
           ", 1, 1)");
  int bStage = s.bTransposed ? tile.bn * (tile.bk + 4) : tile.bk * (tile.bn + 8);
  const unsigned sharedBytes = tile.wgmma
                                   ? unsigned(wgmmaSharedBytes(s, tile))
                                   : unsigned(tile.stages * (tile.bm * (tile.bk + 4) + bStage) * 4);
  w.constant("kSharedBytes", int64_t(sharedBytes));
  w.anchorEpilogue("Epilogue", s.epilogue);
  w.anchorEpilogue("PostNorm", s.postNorm);

  KernelSource k;
  k.name = name;
  k.templateName = "gemm.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned((s.N + tile.bn - 1) / tile.bn), unsigned((s.M + tile.bm - 1) / tile.bm),
                   unsigned(batch)};
  if (persistent) {
    k.launch.grid = {unsigned(tiles), 1, 1};
    k.launch.persistent = true;
  } else if (scheduled) {
    // A block per whole tile of the full waves, then the stream-K blocks for the rest (the
    // schedule splits over the grid's last kStreamKSlots blocks).
    k.launch.grid = {unsigned(streamKSlots ? tiles - tiles % streamKSlots : tiles), 1, 1};
  }
  k.launch.block = {unsigned(threads + (tile.wgmma ? 128 : 0)), 1, 1};
  if (tma)
    for (auto [slot, rows, boxRows] : {std::tuple{0, s.M, tile.bm}, std::tuple{1, s.N, tile.bn}}) {
      TensorMapSpec t;
      t.slot = slot;
      t.rank = 2;
      t.dims = {uint64_t(s.K), uint64_t(rows)};
      t.strides = {uint64_t(s.K) * 4};
      // A cluster's blocks each copy 1 / cluster of the B tile.
      t.box = {32, uint32_t(slot == 1 ? boxRows / tile.cluster : boxRows)};
      t.swizzle128 = true;
      k.launch.tensorMaps.push_back(t);
    }
  k.launch.sharedBytes = sharedBytes;
  k.tileConfig = tileName() + ", " +
                 (tile.wgmma ? "wgmma, " + std::to_string(tile.bm / 64) + "+1 warpgroups"
                             : std::to_string(tile.warpsM * tile.warpsN) + " warps") +
                 ", " + std::to_string(tile.stages) + " stages" + (tma ? " (TMA)" : "") + ", " +
                 tensorCoreMathName(s.math) +
                 (tile.minBlocks > 1 ? ", " + std::to_string(tile.minBlocks) + " blocks/SM" : "") +
                 (persistent  ? ", persistent"
                  : scheduled ? ", block per tile"
                              : "") +
                 (streamKSlots ? ", stream-K tail" : "") +
                 (tile.cluster > 1 ? ", clusters of " + std::to_string(tile.cluster) : "");
  if (s.normGroupCols > 0)
    k.tileConfig += ", norm groups of " + std::to_string(s.normGroupCols);
  k.flops = 2.0 * double(batch) * double(s.M) * double(s.N) * double(s.K);
  // Operands that broadcast over a batch dim (stride 0) are read once.
  k.bytes =
      4.0 * (double(distinctMatrices(s, s.batchStrideA)) * double(s.M * s.K) +
             double(distinctMatrices(s, s.batchStrideB)) * double(s.N * s.K) +
             (s.hasBias ? s.N : 0) + (s.storeOutput ? double(batch) * double(s.M * s.N) : 0.0));
  if (s.normGroupCols > 0 && s.normAffine)
    k.bytes += 8.0 * double(s.N);
  if (s.rowReduce != GemmSpec::RowReduce::None) {
    k.bytes += 4.0 * double(batch * s.M);
    WorkspaceNeed::Init init =
        s.rowReduce == GemmSpec::RowReduce::Min
            ? WorkspaceNeed::Init::PlusInf
            : (s.rowReduce == GemmSpec::RowReduce::Max ? WorkspaceNeed::Init::MinusInf
                                                       : WorkspaceNeed::Init::Zero);
    k.workspace.push_back({4, 4 * batch * s.M, init, "per-row reduction (float)"});
  }
  if (streamKSlots > 0)
    k.workspace.push_back({5, streamKSlots * (int64_t(tile.bm) * tile.bn * 4 + 4),
                           WorkspaceNeed::Init::Zero,
                           "stream-K partial tiles (float) and their flags, one per block"});
  return k;
}

namespace {

/// Whether gemm_transpose.cuh's grid holds B: a row of blocks per matrix (at most 65535),
/// 32-bit piece and element indices within one.
bool transposeFits(const GemmSpec &s) {
  const int64_t pieces = (s.K + 31) / 32 * ((s.N + 31) / 32);
  return s.K >= 1 && s.N >= 1 && pieces <= std::numeric_limits<int>::max() &&
         distinctMatrices(s, s.batchStrideB) <= 65535 &&
         s.K * s.N <= std::numeric_limits<int>::max();
}

} // namespace

llvm::Expected<KernelSource> emitGemmTranspose(const GemmSpec &s) {
  const std::string name = s.kernelName + "_bt";
  if (s.bTransposed)
    return makeError(name + ": B is already [N, K]");
  const int64_t matrices = distinctMatrices(s, s.batchStrideB);
  const int64_t pieces = (s.K + 31) / 32 * ((s.N + 31) / 32);
  if (!transposeFits(s))
    return makeError(name + ": B of " + std::to_string(matrices) + " x " + std::to_string(s.K) +
                     " x " + std::to_string(s.N) + " is outside the transpose's grid");
  PrologueWriter w(name, "gemm_transpose.cuh");
  w.constant("kRows", s.K);
  w.constant("kCols", s.N);
  w.constant("kMatrices", matrices);
  KernelSource k;
  k.name = name;
  k.templateName = "gemm_transpose.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned(pieces), unsigned(matrices), 1};
  k.launch.block = {32, 8, 1};
  k.tileConfig = std::to_string(matrices) + " x [" + std::to_string(s.K) + ", " +
                 std::to_string(s.N) + "] -> [" + std::to_string(s.N) + ", " + std::to_string(s.K) +
                 "] in 32 x 32 pieces";
  k.flops = 0;
  const int64_t bytes = 4 * matrices * s.K * s.N;
  k.bytes = 2.0 * double(bytes);
  k.workspace.push_back(
      {1, bytes, WorkspaceNeed::Init::None, "B as [N, K] for the wgmma engine (float)"});
  return k;
}

namespace {

/// The engines' rates for the transposition decision, in FLOP/s, and DRAM bytes a second.
/// 3xTF32: bmm_lse_softplus's product ran at about 55 TFLOP/s on the mma.sync loop (H100,
/// 2026-11-28), the engine at 113 on 8192^3 and less on smaller products. TF32 keeps about the
/// same ratio (not measured for matmul). Measured with these rates, on the corpus's four
/// matmul graphs (all four take the copy): 1.05x to 2.11x faster than mma.sync
/// (docs/kernels-tensorcore.md, "A matmul's B turned K-major").
constexpr double kSyncX3Rate = 55e12, kSyncTf32Rate = 160e12;
constexpr double kWgmmaX3Rate = 100e12, kWgmmaTf32Rate = 300e12;
constexpr double kGemmDramRate = 3e12;

} // namespace

bool gemmTransposesB(const GemmSpec &s) {
  if (s.bTransposed || s.N < 2 || !transposeFits(s))
    return false;
  GemmSpec t = s;
  t.bTransposed = true;
  if (!gemmFitsWgmma(t) || !chooseWgmmaTile(t).wgmma)
    return false;
  const bool x3 = tensorCoreMathConstant(s.math) == 2;
  const double batch = double(batchCount(s));
  const double flops = 2.0 * batch * double(s.M) * double(s.N) * double(s.K);
  const double bBytes = 4.0 * double(distinctMatrices(s, s.batchStrideB)) * double(s.K * s.N);
  const double bytes = 4.0 * double(distinctMatrices(s, s.batchStrideA)) * double(s.M * s.K) +
                       bBytes + 4.0 * batch * double(s.M * s.N);
  const double onSync = std::max(flops / (x3 ? kSyncX3Rate : kSyncTf32Rate), bytes / kGemmDramRate);
  const double onWgmma =
      std::max(flops / (x3 ? kWgmmaX3Rate : kWgmmaTf32Rate), bytes / kGemmDramRate) +
      2.0 * bBytes / kGemmDramRate;
  return onWgmma < onSync;
}

} // namespace sinter
