//===- tests/kernels_tc/GemmPersistentTest.cpp - the persistent wgmma GEMM, no GPU -----===//
//
// The persistent gemm kernel with a stream-K tail, as far as a machine without a GPU can see
// it: the template's own schedule (wgmma.cuh's PersistentSchedule, walked at compile time by
// NVRTC for many tile counts, k depths and block counts: every k tile of every tile done
// once, whole tiles dealt in turn, a tile shared by at most two blocks in the order the
// hand-off expects, the consumers' counts matching the producer's walk, blocks within a k
// tile of each other), and the emitter's launch: which products are persistent, their grid,
// the stream-K workspace and its fill, and the chooser's launch and split (measured rules).
// The GPU side (every case on forced block counts) is bench/kernels/tc_check.py.
//
//===--------------------------------------------------------------------------------===//
#include "Nvrtc.h"
#include "TcCases.h"

#include "compiler/kernels/Gemm.h"

#include <gtest/gtest.h>

using namespace sinter;
using namespace sinter::tc_test;

namespace {

/// A translation unit whose static_asserts walk PersistentSchedule for every block count of
/// lo .. hi over `shapes` ({tiles, k tiles} pairs), splitting over at most `split` blocks
/// (0: never; hybrid: the grid is a block per whole tile plus `split`, hi - lo extra blocks
/// counted from there); `check` returns the number of the first rule broken (0: none).
std::string scheduleSource(const std::vector<std::pair<int, int>> &shapes, int lo, int hi,
                           int split, bool hybrid = false) {
  std::string src = R"(#include "common.cuh"
#include "wgmma.cuh"
using sinter::sm90::PersistentSchedule;
using sinter::sm90::Work;

template <int TILES, int KTILES> constexpr int check(int blocks, int splitBlocks) {
  int cover[TILES * KTILES] = {};
  // The rule: with S = min(splitBlocks, blocks) and a partial wave, the last S + TILES % S
  // tiles are split over the last S blocks; the rest are dealt in turn over all blocks.
  const int S = splitBlocks < blocks ? splitBlocks : blocks;
  const bool split = S > 0 && TILES > S && TILES % S != 0;
  const int tail = split ? TILES - S - TILES % S : TILES;
  int least = 1 << 30, most = 0, leastRange = 1 << 30, mostRange = 0;
  int headTile = -1, headEnd = 0; // the Head that ended the last block's range
  for (int b = 0; b < blocks; ++b) {
    PersistentSchedule<TILES, KTILES> walk(b, blocks, splitBlocks);
    const PersistentSchedule<TILES, KTILES> count = walk; // the consumers' copy
    const bool ranged = split && b >= blocks - S;
    int it = 0, whole = 0, pieces = 0;
    bool firstTail = true;
    Work w{};
    while (walk.next(w)) {
      if (w.tile < 0 || w.tile >= TILES || w.k0 < 0 || w.k0 >= w.k1 || w.k1 > KTILES)
        return 1; // a piece outside the problem, or empty
      for (int k = w.k0; k < w.k1; ++k)
        if (cover[w.tile * KTILES + k]++)
          return 2; // a k tile done twice
      if (count.pieceEnd(it) != it + w.k1 - w.k0)
        return 3; // the consumers would finish the piece elsewhere
      if (count.headAt(it) != (w.k0 == 0 && w.k1 < KTILES))
        return 4; // the consumers would start a Head from zero, or another piece from a slot
      if (w.tile < tail) {
        if (w.k0 != 0 || w.k1 != KTILES || w.tile != b + whole * blocks || pieces != whole)
          return 5; // whole tiles not dealt in turn, or not first
        ++whole;
      } else {
        if (!ranged)
          return 6; // tail work in a block that has no range
        if (firstTail && headTile >= 0) {
          if (w.tile != headTile || w.k0 != headEnd || w.k1 != KTILES)
            return 7; // the last block's Head is not continued by this block's first piece
          headTile = -1;
        } else if (w.k0 != 0) {
          return 8; // a Tail that no Head precedes, or in the middle of a range
        }
        firstTail = false;
        if (w.k1 < KTILES) { // a Head: must end the range
          Work rest{};
          if (PersistentSchedule<TILES, KTILES>(walk).next(rest))
            return 9;
          headTile = w.tile;
          headEnd = w.k1;
        }
      }
      it += w.k1 - w.k0;
      ++pieces;
    }
    if (it != count.kTiles())
      return 10; // the consumers would count other k tiles
    if (headTile >= 0 && firstTail && b > 0 && ranged)
      return 11; // a Head left to a range with no pieces
    if (ranged) {
      leastRange = it - whole * KTILES < leastRange ? it - whole * KTILES : leastRange;
      mostRange = it - whole * KTILES > mostRange ? it - whole * KTILES : mostRange;
      if (it - whole * KTILES < KTILES)
        return 12; // a range shorter than a tile (a tile among three blocks)
    }
    least = it < least ? it : least;
    most = it > most ? it : most;
  }
  for (int i = 0; i < TILES * KTILES; ++i)
    if (cover[i] != 1)
      return 13; // a k tile never done
  if (headTile >= 0)
    return 14;
  if (split && mostRange - leastRange > 1)
    return 15; // ranges more than a k tile apart
  if (S == blocks && most - least > (split ? 1 : KTILES))
    return 16; // persistent blocks end more than a k tile apart (a tile without the split)
  return 0;
}
)";
  // One assertion per block count: each constant evaluation has its own step budget.
  for (auto [tiles, kTiles] : shapes) {
    const int base = hybrid && tiles > split && tiles % split ? tiles - tiles % split : 0;
    for (int blocks = base + lo; blocks <= base + hi; ++blocks) {
      const std::string what = std::to_string(tiles) + ", " + std::to_string(kTiles);
      src += "static_assert(check<" + what + ">(" + std::to_string(blocks) + ", " +
             std::to_string(split) + ") == 0, \"schedule of " + what + " on " +
             std::to_string(blocks) + " blocks, split over " + std::to_string(split) + "\");\n";
    }
  }
  return src + "__global__ void schedule_checked() {}\n";
}

TEST(GemmPersistent, ScheduleCoversEveryKTileOnceForAnyBlockCount) {
  // Small problems on every block count from 1 to past the tile count, the split over all of
  // them (a persistent launch on at most kGemmStreamKBlocks blocks): k depths of 1 (no tile
  // can be cut), shallow and deeper; tails of one and of nearly two rounds.
  EXPECT_EQ(nvrtcCompile(
                scheduleSource({{1, 1}, {7, 1}, {13, 3}, {20, 7}, {31, 4}, {40, 2}}, 1, 45, 1000),
                "sm_90a"),
            "");
  // The harness's stream-K cases at the block counts it forces and past them, splitting over
  // at most 132 blocks (the kernel's workspace), so over the last 132 of larger grids.
  EXPECT_EQ(nvrtcCompile(scheduleSource({{156, 7}, {136, 3}, {144, 17}}, 1, 160, 132), "sm_90a"),
            "");
  // A block per whole tile, then the split blocks (GemmLaunch::TilesThenStreamK), and grids
  // a few blocks off that count either way.
  EXPECT_EQ(nvrtcCompile(scheduleSource({{40, 7}, {61, 3}, {100, 1}}, -3, 3, 9, true), "sm_90a"),
            "");
  EXPECT_EQ(nvrtcCompile(scheduleSource({{300, 4}, {156, 7}}, -2, 2, 132, true), "sm_90a"), "");
  // Without the split: whole tiles only.
  EXPECT_EQ(nvrtcCompile(scheduleSource({{156, 7}, {29, 5}}, 1, 40, 0), "sm_90a"), "");
}

TEST(GemmPersistent, ScheduleCheckCanFail) {
  // The same walk with a rule the schedule breaks on purpose (persistent blocks a k tile
  // apart with the split): the check must name it.
  std::string src = scheduleSource({{20, 7}}, 3, 3, 1000);
  const std::string rule = "most - least > (split ? 1 : KTILES)";
  size_t at = src.find(rule);
  ASSERT_NE(at, std::string::npos);
  src.replace(at, rule.size(), "most - least > (split ? -1 : KTILES)");
  EXPECT_NE(nvrtcCompile(src, "sm_90a").find("schedule of 20, 7 on 3 blocks"), std::string::npos);
}

GemmSpec wgmmaCase(const std::string &name) {
  for (const GemmCase &g : gemmCases())
    if (g.spec.kernelName == name) {
      GemmSpec s = g.spec;
      s.wgmma = true;
      return s;
    }
  ADD_FAILURE() << "no case " << name;
  return {};
}

TEST(GemmPersistent, LargeProductsArePersistentWithAStreamKWorkspace) {
  // 3xTF32 8192^3 as chosen; TF32 on its tile with the persistent launch forced (the chooser
  // keeps TF32 a block per tile).
  for (const char *name : {"linear_8192_tf32x3", "linear_8192_tf32"}) {
    GemmSpec s = wgmmaCase(name);
    const bool x3 = s.math == MathMode::Tf32x3;
    GemmTile t = chooseWgmmaTile(s);
    t.launch = GemmLaunch::Persistent;
    t.streamK = true;
    auto k = emitGemm(s, t);
    ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
    const unsigned tiles = x3 ? 64 * 64 : 64 * 32; // 128 x 128, or 128 x 256 for TF32
    EXPECT_TRUE(k->launch.persistent) << name;
    EXPECT_EQ(k->launch.grid[0], tiles) << name;
    EXPECT_EQ(k->launch.grid[1], 1u);
    EXPECT_EQ(k->launch.grid[2], 1u);
    EXPECT_EQ(k->launch.block[0], 384u);
    ASSERT_EQ(k->workspace.size(), 1u) << name;
    const WorkspaceNeed &ws = k->workspace[0];
    EXPECT_EQ(ws.slot, 5);
    EXPECT_EQ(ws.init, WorkspaceNeed::Init::Zero);
    EXPECT_EQ(ws.bytes, int64_t(kGemmStreamKBlocks) * (128 * (x3 ? 128 : 256) * 4 + 4));
    EXPECT_NE(k->source.find("constexpr bool kPersistent = true;"), std::string::npos);
    EXPECT_NE(k->source.find("constexpr int kStreamKSlots = 132;"), std::string::npos);
    EXPECT_NE(k->tileConfig.find(", persistent, stream-K tail"), std::string::npos)
        << k->tileConfig;
    // The stages, barriers, work words and alignment; the template checks the same sum.
    const int stage = x3 ? (128 + 128 + 128) * 128 : (128 + 256) * 128;
    EXPECT_EQ(k->launch.sharedBytes, unsigned(4 * (stage + 40) + 1024));
  }
}

TEST(GemmPersistent, ChooserTakesTheMeasuredLaunch) {
  // 3xTF32 8192^3: 4096 tiles = 31 waves and 4 tiles; split, the tail costs 1.03 / 0.87 tile
  // times against a 32nd wave.
  GemmTile t = chooseWgmmaTile(wgmmaCase("linear_8192_tf32x3"));
  EXPECT_EQ(t.launch, GemmLaunch::Persistent);
  EXPECT_TRUE(t.streamK);
  // S3: 512 tiles = 3 waves and 116; split, the tail would cost 1.88 / 0.87 = 2.16 tile
  // times against a fourth wave's one: persistent, every tile whole.
  t = chooseWgmmaTile(wgmmaCase("s3_linear_gn_min"));
  EXPECT_EQ(t.launch, GemmLaunch::Persistent);
  EXPECT_FALSE(t.streamK);
  // A small case with a short tail (156 tiles): split.
  t = chooseWgmmaTile(wgmmaCase("linear_streamk_odd"));
  EXPECT_EQ(t.bm, 128);
  EXPECT_EQ(t.launch, GemmLaunch::Persistent);
  EXPECT_TRUE(t.streamK);
  // TF32: a block per tile, as before the persistent schedule.
  GemmSpec tf32 = wgmmaCase("linear_8192_tf32");
  t = chooseWgmmaTile(tf32);
  EXPECT_EQ(t.launch, GemmLaunch::BlockPerTile);
  EXPECT_FALSE(t.streamK);
  auto k = emitGemm(tf32);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_FALSE(k->launch.persistent);
  EXPECT_EQ(k->launch.grid[0], 32u);
  EXPECT_EQ(k->launch.grid[1], 64u);
  EXPECT_TRUE(k->workspace.empty());
  EXPECT_NE(k->source.find("constexpr bool kPersistent = false;"), std::string::npos);
}

TEST(GemmPersistent, TilesThenStreamKLaunchesABlockPerWholeTileAndTheSplitBlocks) {
  // TF32 8192^3 on 128 x 256: 2048 tiles = 15 full waves of 132 and 68 more; the grid is a
  // block per tile of the first 14 waves (1848) and 132 blocks sharing the last 200 tiles.
  GemmSpec s = wgmmaCase("linear_8192_tf32");
  GemmTile t = chooseWgmmaTile(s);
  t.launch = GemmLaunch::TilesThenStreamK;
  t.streamK = true;
  auto k = emitGemm(s, t);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_FALSE(k->launch.persistent);
  EXPECT_EQ(k->launch.grid[0], 2048u - 68u);
  EXPECT_EQ(k->launch.grid[1], 1u);
  ASSERT_EQ(k->workspace.size(), 1u);
  EXPECT_EQ(k->workspace[0].slot, 5);
  EXPECT_NE(k->source.find("constexpr bool kPersistent = true;"), std::string::npos);
  EXPECT_NE(k->tileConfig.find(", block per tile, stream-K tail"), std::string::npos)
      << k->tileConfig;
  // Without the split it is a block per tile on the same one-dimensional order.
  t.streamK = false;
  k = emitGemm(s, t);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->launch.grid[0], 2048u);
  EXPECT_TRUE(k->workspace.empty());
}

TEST(GemmPersistent, FewTilesNeedNoWorkspace) {
  // 300 x 200 on 128 x 128 tiles: 6 tiles, never more than the SMs, so the runtime launches a
  // block per tile and nothing is split.
  GemmSpec s = wgmmaCase("linear_odd_mn_relu");
  auto k = emitGemm(s, wgmmaTiles(s.math).front());
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_TRUE(k->launch.persistent);
  EXPECT_EQ(k->launch.grid[0], 6u);
  EXPECT_TRUE(k->workspace.empty());
  EXPECT_NE(k->source.find("constexpr int kStreamKSlots = 0;"), std::string::npos);
  EXPECT_EQ(k->tileConfig.find("stream-K"), std::string::npos) << k->tileConfig;
}

TEST(GemmPersistent, RowReductionKeepsItsWorkspaceAndScratch) {
  // S3's shape: 512 tiles, persistent, the row minimum in slot 4; split (forced here), the
  // stream-K slots in 5. The row reduction's scratch follows the engine's shared memory (the
  // stages are the producer's).
  GemmSpec s = wgmmaCase("s3_linear_gn_min");
  auto k = emitGemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_TRUE(k->launch.persistent);
  EXPECT_EQ(k->launch.grid[0], 512u);
  ASSERT_EQ(k->workspace.size(), 1u);
  EXPECT_EQ(k->workspace[0].slot, 4);
  EXPECT_NE(k->source.find("constexpr int kStreamKSlots = 0;"), std::string::npos);
  EXPECT_EQ(k->launch.sharedBytes, unsigned(4 * (384 * 128 + 40) + 1024 + 128 * 4));
  GemmTile t = chooseWgmmaTile(s);
  t.streamK = true;
  k = emitGemm(s, t);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  ASSERT_EQ(k->workspace.size(), 2u);
  EXPECT_EQ(k->workspace[0].slot, 4);
  EXPECT_EQ(k->workspace[1].slot, 5);
}

TEST(GemmPersistent, WideTilesWithARowReductionAreNotSplit) {
  // TF32 on 128 x 256 with a row sum: persistent, but every tile dealt out whole (a Head's
  // add beside the row reduction's values spilled); on 128 x 128 the tail is split.
  GemmSpec s = wgmmaCase("linear_streamk_tf32");
  const std::vector<GemmTile> tiles = wgmmaTiles(s.math);
  auto wide = emitGemm(s, tiles[0]);
  ASSERT_TRUE(bool(wide)) << llvm::toString(wide.takeError());
  EXPECT_EQ(wide->tileConfig.find("128x256"), 0u) << wide->tileConfig;
  EXPECT_TRUE(wide->launch.persistent);
  EXPECT_NE(wide->source.find("constexpr int kStreamKSlots = 0;"), std::string::npos);
  ASSERT_EQ(wide->workspace.size(), 1u); // the row sum's alone
  EXPECT_EQ(wide->workspace[0].slot, 4);
  auto narrow = emitGemm(s, tiles[1]);
  ASSERT_TRUE(bool(narrow)) << llvm::toString(narrow.takeError());
  EXPECT_NE(narrow->source.find("constexpr int kStreamKSlots = 132;"), std::string::npos);
  ASSERT_EQ(narrow->workspace.size(), 2u);
  EXPECT_EQ(narrow->workspace[1].slot, 5);
}

TEST(GemmPersistent, BatchesTwoBlockTilesAndTheKnobStayOneBlockPerTile) {
  GemmSpec batched = wgmmaCase("linear_batched_tf32");
  auto b = emitGemm(batched);
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_FALSE(b->launch.persistent);
  EXPECT_EQ(b->launch.grid[2], 6u);
  EXPECT_NE(b->source.find("constexpr bool kPersistent = false;"), std::string::npos);
  EXPECT_TRUE(b->workspace.empty());

  GemmSpec s = wgmmaCase("linear_8192_tf32x3");
  for (const GemmTile &t : wgmmaTiles(s.math)) {
    auto k = emitGemm(s, t);
    ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
    // 64-row tiles run two blocks an SM, which a launch of one block per SM would halve.
    EXPECT_EQ(k->launch.persistent, t.minBlocks == 1) << k->tileConfig;
  }
  GemmTile plain = chooseWgmmaTile(s);
  plain.launch = GemmLaunch::BlockPerTile;
  auto k = emitGemm(s, plain);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_FALSE(k->launch.persistent);
  EXPECT_EQ(k->launch.grid[0], 64u);
  EXPECT_EQ(k->launch.grid[1], 64u);
  EXPECT_TRUE(k->workspace.empty());
  EXPECT_EQ(k->tileConfig.find("persistent"), std::string::npos) << k->tileConfig;
}

} // namespace
