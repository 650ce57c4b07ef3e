//===- tests/kernels_tc/ConvShiftTest.cpp - conv_shift without a GPU -----------------===//
//
// conv_shift.cuh computes a stride-1 convolution as one GEMM per tap over the input staged
// channels last on a zero-padded grid (compiler/kernels/ConvShift.h). What needs no GPU: the
// grid's pitches make every tap's shifted read land on its input cell or on a zero (checked
// by evaluating convolutions through the grid with the template's index formulas, against
// the definition, over many 1-D, 2-D and 3-D shapes, direct and transposed); the planner's
// rule and its reasons; the launches and tensor maps; every tile compiling for sm_90a.
//
//===--------------------------------------------------------------------------------===//
#include "Nvrtc.h"
#include "TcCases.h"

#include "compiler/kernels/ConvIgemm.h"
#include "compiler/kernels/ConvShift.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace sinter;
using namespace sinter::tc_test;

namespace {

std::string describe(const ConvSpec &s) {
  std::string r = s.transposed ? "transposed" : "direct";
  for (int d = 0; d < 3; ++d)
    r += " [in " + std::to_string(s.in[d]) + " k " + std::to_string(s.kernel[d]) + " p " +
         std::to_string(s.padding[d]) + " dil " + std::to_string(s.dilation[d]) + " out " +
         std::to_string(s.out[d]) + "]";
  return r;
}

/// y[n][co][o] of a stride-1 convolution by its definition (one input and output channel
/// suffices for the indexing: weights w[t]).
std::vector<double> byDefinition(const ConvSpec &s, const std::vector<double> &x,
                                 const std::vector<double> &w) {
  const int64_t outVol = s.out[0] * s.out[1] * s.out[2], inVol = s.in[0] * s.in[1] * s.in[2];
  std::vector<double> y(s.N * outVol, 0.0);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t od = 0; od < s.out[0]; ++od)
      for (int64_t oh = 0; oh < s.out[1]; ++oh)
        for (int64_t ow = 0; ow < s.out[2]; ++ow)
          for (int64_t td = 0; td < s.kernel[0]; ++td)
            for (int64_t th = 0; th < s.kernel[1]; ++th)
              for (int64_t tw = 0; tw < s.kernel[2]; ++tw) {
                const int64_t o[3] = {od, oh, ow}, t[3] = {td, th, tw};
                int64_t i[3];
                bool inside = true;
                for (int d = 0; d < 3; ++d) {
                  i[d] = s.transposed ? o[d] + s.padding[d] - t[d] * s.dilation[d]
                                      : o[d] - s.padding[d] + t[d] * s.dilation[d];
                  inside &= i[d] >= 0 && i[d] < s.in[d];
                }
                if (inside)
                  y[n * outVol + (od * s.out[1] + oh) * s.out[2] + ow] +=
                      x[n * inVol + (i[0] * s.in[1] + i[1]) * s.in[2] + i[2]] *
                      w[(td * s.kernel[1] + th) * s.kernel[2] + tw];
              }
  return y;
}

/// The same through the staged grid, with conv_stage.cuh's placement and conv_shift.cuh's
/// formulas: grid row q of output (n, od, oh, ow) reads grid row q + tapOffset(t), zero
/// outside the grid (TMA's fill). Every output must come from a grid row of its own.
std::vector<double> throughGrid(const ConvSpec &s, const ShiftGrid &g, const std::vector<double> &x,
                                const std::vector<double> &w) {
  const int64_t P[3] = {g.pitch[0], g.pitch[1], g.pitch[2]};
  const int64_t gridVol = P[0] * P[1] * P[2], rows = s.N * gridVol;
  const int64_t inVol = s.in[0] * s.in[1] * s.in[2];
  std::vector<double> staged(rows, 0.0);
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t d = 0; d < s.in[0]; ++d)
      for (int64_t h = 0; h < s.in[1]; ++h)
        for (int64_t v = 0; v < s.in[2]; ++v)
          staged[n * gridVol + (d * P[1] + h) * P[2] + v] =
              x[n * inVol + (d * s.in[1] + h) * s.in[2] + v];
  const int64_t outVol = s.out[0] * s.out[1] * s.out[2];
  std::vector<double> y(s.N * outVol, std::nan(""));
  for (int64_t q = 0; q < rows; ++q) {
    const int64_t n = q / gridVol, r = q % gridVol;
    const int64_t od = r / (P[1] * P[2]), oh = r / P[2] % P[1], ow = r % P[2];
    if (od >= s.out[0] || oh >= s.out[1] || ow >= s.out[2])
      continue;
    double acc = 0;
    for (int64_t td = 0; td < s.kernel[0]; ++td)
      for (int64_t th = 0; th < s.kernel[1]; ++th)
        for (int64_t tw = 0; tw < s.kernel[2]; ++tw) {
          const int64_t off =
              ((g.off[0] + g.step[0] * td) * P[1] + (g.off[1] + g.step[1] * th)) * P[2] + g.off[2] +
              g.step[2] * tw;
          const int64_t src = q + off;
          if (src >= 0 && src < rows)
            acc += staged[src] * w[(td * s.kernel[1] + th) * s.kernel[2] + tw];
        }
    double &out = y[n * outVol + (od * s.out[1] + oh) * s.out[2] + ow];
    EXPECT_TRUE(std::isnan(out)) << "output written twice: " << describe(s);
    out = acc;
  }
  return y;
}

TEST(ShiftGrid, EveryTapReadsItsInputOrAZero) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::normal_distribution<double> normal;
  int checked = 0;
  for (int trial = 0; trial < 4000 && checked < 600; ++trial) {
    ConvSpec s;
    s.transposed = trial % 2;
    s.N = 2;
    bool ok = true;
    for (int d = 0; d < 3; ++d) {
      if (d < 2 && pick(0, 2) == 0)
        continue; // a dim of extent 1 (1-D and 2-D shapes)
      s.in[d] = pick(1, 7);
      s.kernel[d] = pick(1, 4);
      s.dilation[d] = pick(1, 3);
      s.padding[d] = pick(0, 4);
      const int64_t span = s.dilation[d] * (s.kernel[d] - 1);
      s.out[d] = s.transposed ? s.in[d] - 1 - 2 * s.padding[d] + span + 1
                              : s.in[d] + 2 * s.padding[d] - span;
      ok &= s.out[d] >= 1;
    }
    if (!ok)
      continue;
    const ShiftGrid g = shiftGrid(s);
    for (int d = 0; d < 3; ++d) {
      EXPECT_GE(g.pitch[d], s.out[d]) << describe(s);
      EXPECT_GE(g.pitch[d], s.in[d]) << describe(s);
    }
    std::vector<double> x(s.N * s.in[0] * s.in[1] * s.in[2]),
        w(s.kernel[0] * s.kernel[1] * s.kernel[2]);
    for (double &v : x)
      v = normal(rng);
    for (double &v : w)
      v = normal(rng);
    const std::vector<double> want = byDefinition(s, x, w), got = throughGrid(s, g, x, w);
    ASSERT_EQ(want.size(), got.size());
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(got[i], want[i], 1e-9) << describe(s) << " output " << i;
    ++checked;
  }
  EXPECT_GE(checked, 600);
}

TEST(ShiftGrid, PitchesAreTheSmallestThatServe) {
  // S0: a transposed 3x3x3 convolution of 32^3 without padding: the grid is the output.
  ConvSpec s0 = convSpec("s0", true, 3, 16, 64, 128, 1, {32, 32, 32}, {3, 3, 3}, {1, 1, 1},
                         {0, 0, 0}, {1, 1, 1}, MathMode::Tf32);
  EXPECT_EQ(shiftGrid(s0).pitch, (std::array<int64_t, 3>{34, 34, 34}));
  EXPECT_EQ(shiftGrid(s0).rowPitch, 64);
  // A 'same' 3x3 convolution: one zero column and row between images' rows.
  ConvSpec same = convSpec("same", false, 2, 2, 36, 64, 1, {1, 20, 24}, {1, 3, 3}, {1, 1, 1},
                           {0, 1, 1}, {1, 1, 1}, MathMode::Tf32);
  EXPECT_EQ(shiftGrid(same).pitch, (std::array<int64_t, 3>{1, 21, 25}));
  EXPECT_EQ(shiftGrid(same).rowPitch, 36);
  // Without padding the grid is the input; the last rows of each dim are not outputs.
  ConvSpec valid = convSpec("valid", false, 2, 2, 32, 64, 1, {1, 20, 24}, {1, 3, 5}, {1, 1, 1},
                            {0, 0, 0}, {1, 1, 1}, MathMode::Tf32);
  EXPECT_EQ(shiftGrid(valid).pitch, (std::array<int64_t, 3>{1, 20, 24}));
}

ConvSpec s0Spec() {
  ConvSpec s = convSpec("s0", true, 3, 16, 64, 128, 1, {32, 32, 32}, {3, 3, 3}, {1, 1, 1},
                        {0, 0, 0}, {1, 1, 1}, MathMode::Tf32);
  s.wgmma = true;
  s.accumulateStats = true;
  return s;
}

TEST(ConvShift, S0RunsAsWeightRowsStagingAndPerTapGemms) {
  auto ks = emitConvIgemm(s0Spec());
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 3u);
  const KernelSource &pack = (*ks)[0], &stage = (*ks)[1], &conv = (*ks)[2];
  EXPECT_EQ(pack.templateName, "conv_pack.cuh");
  EXPECT_EQ(pack.tileConfig, "1 x 128 rows of 1728 weights"); // 2 chunks x 27 taps x 32
  EXPECT_NE(pack.source.find("constexpr bool kRound = true;"), std::string::npos);
  EXPECT_EQ(stage.templateName, "conv_stage.cuh");
  EXPECT_EQ(stage.name, "s0_stage");
  EXPECT_EQ(stage.launch.grid[0], 16u * 34 * 34);
  ASSERT_EQ(stage.workspace.size(), 1u);
  EXPECT_EQ(stage.workspace[0].slot, kConvStageSlot);
  EXPECT_EQ(stage.workspace[0].bytes, int64_t(16) * 34 * 34 * 34 * 64 * 4);
  EXPECT_EQ(conv.templateName, "conv_shift.cuh");
  EXPECT_EQ(conv.name, "s0");
  EXPECT_EQ(conv.tileConfig, "shifted rows, 128x256x32 over a 34x34x34 grid, wgmma, 2 "
                             "warpgroups + a TMA warp, 4 stages, tf32");
  EXPECT_TRUE(conv.launch.persistent);
  EXPECT_EQ(conv.launch.grid[0], (16u * 34 * 34 * 34 + 255) / 256);
  EXPECT_EQ(conv.launch.block[0], 288u);
  EXPECT_EQ(conv.launch.sharedBytes, 4u * (128 + 256) * 128 + 64 + 1024);
  ASSERT_EQ(conv.launch.tensorMaps.size(), 2u);
  const TensorMapSpec &rows = conv.launch.tensorMaps[0], &staged = conv.launch.tensorMaps[1];
  EXPECT_EQ(tensorMapText(rows), "slot 6: dims [1728,128] box [32,128], 128-byte swizzle");
  EXPECT_EQ(tensorMapText(staged), "slot 7: dims [64,628864] box [32,256], 128-byte swizzle");
  EXPECT_EQ(staged.strides[0], 64u * 4);
  // The statistics, and the two workspaces the kernels before it write.
  ASSERT_EQ(conv.workspace.size(), 3u);
  EXPECT_EQ(conv.workspace[0].slot, 4);
  EXPECT_EQ(conv.workspace[1].slot, kConvPackSlot);
  EXPECT_EQ(conv.workspace[2].slot, kConvStageSlot);
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 16 * 34 * 34 * 34 * 128 * 64 * 27);
  // A forced tile keeps the input-box engine.
  ConvIgemmTile box;
  box.wgmma = true;
  box.bm = 128;
  box.warpsM = 8;
  box.warpsN = 1;
  auto forced = emitConvIgemm(s0Spec(), box);
  ASSERT_TRUE(bool(forced)) << llvm::toString(forced.takeError());
  EXPECT_EQ(forced->back().templateName, "conv_igemm.cuh");
}

TEST(ConvShift, SaysWhyAConvolutionStaysOnTheOtherEngines) {
  auto why = [](ConvSpec s) {
    std::string reason;
    EXPECT_FALSE(convShiftTile(s, &reason).has_value()) << describe(s);
    return reason;
  };
  ConvSpec s = s0Spec();
  ASSERT_TRUE(convShiftTile(s).has_value());
  ConvSpec t = s;
  t.wgmma = false;
  EXPECT_EQ(why(t), "the target has no wgmma (sm_90a)");
  t = s;
  t.math = MathMode::Tf32x3;
  EXPECT_EQ(why(t), "not TF32");
  t = convSpec("strided", false, 2, 8, 64, 128, 1, {1, 32, 32}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1},
               {1, 1, 1}, MathMode::Tf32);
  t.wgmma = true;
  EXPECT_EQ(why(t), "a direct convolution with a stride above 1");
  t = convSpec("g48", false, 2, 8, 96, 256, 2, {1, 32, 32}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1},
               {1, 1, 1}, MathMode::Tf32);
  t.wgmma = true;
  EXPECT_EQ(why(t), "groups whose input channels are not whole 32-channel k tiles");
  t = convSpec("c16", false, 2, 8, 16, 128, 1, {1, 32, 32}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1},
               {1, 1, 1}, MathMode::Tf32);
  t.wgmma = true;
  EXPECT_EQ(why(t), "fewer than 32 input channels per group (other than groups of 8 or 16)");
  t.Cin = 72; // 96 / 72 = 1.33
  EXPECT_EQ(why(t), "input channels that pad the 32-deep k tiles by more than a quarter");
  t.Cin = 128;
  t.Cout = 64;
  EXPECT_EQ(why(t), "output channels per group that fill under 3/4 of 128-channel tiles");
  t.Cout = 96; // 128 x 9 = 1152 terms, 96 of 128 rows, but 32-wide rows: small input boxes
  EXPECT_NEAR(wgmmaBoxFloatsPerPosition(t), 6 * 40 / 128.0, 0.01);
  // (A 128-position tile spans 4 rows: a box of 6 rows of 40 floats.)
  t.in = {1, 130, 130};
  t.out = {1, 130, 130}; // a tile spans two 130-wide rows: 4 x 136 floats
  EXPECT_NEAR(wgmmaBoxFloatsPerPosition(t), 4.28, 0.01);
  ASSERT_TRUE(convShiftTile(t).has_value());
  EXPECT_EQ(convShiftTile(t)->bm, 128);
  EXPECT_EQ(convShiftTile(t)->bn, 256);
  EXPECT_EQ(convShiftTile(t)->wRun, 1);
  t.in = {1, 128, 128};
  t.out = {1, 128, 128}; // rows of one tile each: 3 x 136 floats
  EXPECT_EQ(why(t), "input boxes of at most 4.2 floats a channel per output (the input-box "
                    "engine's, faster there)");
  t = convSpec("shallow", false, 1, 8, 64, 128, 1, {1, 1, 4096}, {1, 1, 5}, {1, 1, 1}, {0, 0, 2},
               {1, 1, 1}, MathMode::Tf32);
  t.wgmma = true; // 64 x 5 = 320 terms (the harness's Conv1d: 0.54 ms against 0.25)
  EXPECT_EQ(why(t), "a reduction of fewer than 1024 terms (each tile's epilogue would outweigh "
                    "its faster products)");
  t = convSpec("small", false, 2, 64, 128, 128, 1, {1, 6, 6}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
               {1, 1, 1}, MathMode::Tf32);
  t.wgmma = true; // 36 grid rows for 16 outputs
  EXPECT_EQ(why(t),
            "the padded grid would compute over half as many rows again as there are outputs");
  // Forcing the engine on a convolution it cannot compute names the kernel and the reason.
  t = convSpec("strided", false, 2, 8, 64, 128, 1, {1, 32, 32}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1},
               {1, 1, 1}, MathMode::Tf32);
  auto refused = emitConvShift(t, ConvShiftTile{});
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()),
            "conv_shift cannot run strided: a direct convolution with a stride above 1");
  auto badTile = emitConvShift(s0Spec(), ConvShiftTile{128, 96, 4});
  ASSERT_FALSE(bool(badTile));
  EXPECT_EQ(llvm::toString(badTile.takeError()),
            "s0: not a conv_shift tile (64, 128 or 256 x 64, 128 or 256, at most 128 x 256, at "
            "least 2 stages)");
  // Small groups: taken in the phase walk (S4: 128 x 128 with the weights in registers, 9
  // stages), refused without phases (conv_mma's), whole k groups' rows a tile.
  ConvSpec s4 = convSpec("s4", true, 3, 4, 32, 32, 4, {32, 64, 128}, {3, 3, 3}, {2, 2, 2},
                         {1, 1, 1}, {1, 1, 1}, MathMode::Tf32);
  s4.wgmma = true;
  EXPECT_TRUE(convShiftSupports(s4));
  auto s4Tile = convShiftTile(s4);
  ASSERT_TRUE(s4Tile.has_value());
  EXPECT_EQ(s4Tile->bm, 128);
  EXPECT_EQ(s4Tile->bn, 128);
  EXPECT_EQ(s4Tile->stages, 9);
  EXPECT_TRUE(shiftMode(s4).registerA);
  EXPECT_TRUE(shiftMode(s4).stagedLines);
  ConvSpec g8 = convSpec("g8", false, 2, 2, 32, 64, 4, {1, 14, 15}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1},
                         {1, 1, 1}, MathMode::Tf32);
  g8.wgmma = true;
  EXPECT_TRUE(convShiftSupports(g8));
  EXPECT_EQ(why(g8), "groups of 8 input channels without a stride (conv_mma's; conv_shift's not "
                     "measured there)");
  auto split = emitConvShift(s4, ConvShiftTile{128, 64, 2});
  ASSERT_TRUE(bool(split)) << llvm::toString(split.takeError()); // 256 rows: two tiles of 128
  s4.Cout = 8; // 2 channels x 8 phases = 16 rows a group, 64 a k group
  auto half = emitConvShift(s4, ConvShiftTile{128, 64, 2});
  ASSERT_FALSE(bool(half));
  EXPECT_EQ(llvm::toString(half.takeError()),
            "s4: conv_shift's small groups need tiles of whole k groups' rows (64 rows, tile of "
            "128)");
  s4.Cout = 4; // 8 rows a group: 32 a k group, under a warpgroup's 64
  std::string reason;
  EXPECT_FALSE(convShiftSupports(s4, &reason));
  EXPECT_EQ(reason, "small groups whose product rows (output channels x phases: 8 a group) do "
                    "not fill 64-row slices");
  auto tooDeep = emitConvShift(s0Spec(), ConvShiftTile{128, 256, 5});
  ASSERT_FALSE(bool(tooDeep));
  EXPECT_EQ(llvm::toString(tooDeep.takeError()),
            "s0: conv_shift's stages do not fit shared memory");
}

TEST(ConvShift, StagedLinesGetStoringWarpgroupsWithinTheRegisterFile) {
  ConvSpec s4 = convSpec("s4", true, 3, 4, 32, 32, 4, {32, 64, 128}, {3, 3, 3}, {2, 2, 2},
                         {1, 1, 1}, {1, 1, 1}, MathMode::Tf32);
  s4.wgmma = true;
  const ConvShiftTile t128{128, 128, 9};
  // Plain stores: one storing warpgroup for the two consumers, and a producer warpgroup.
  EXPECT_EQ(storeWarpgroups(s4, t128), 1);
  auto plain = emitConvShift(s4, t128);
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  const KernelSource &k = plain->back();
  EXPECT_EQ(k.launch.block[0], 256u + 128 + 128);
  EXPECT_NE(k.source.find("constexpr int kStoreWarpgroups = 1;"), std::string::npos);
  EXPECT_NE(k.tileConfig.find("2 warpgroups + 1 storing + a TMA warpgroup"), std::string::npos)
      << k.tileConfig;
  // setmaxnreg's targets stay within the registers the block launches with (512 threads x 128),
  // and the consumers keep room for 64 accumulators and 32 weight registers.
  const ShiftRegisters one = shiftRegisters(s4, t128, 1);
  EXPECT_LE(128 * one.producer + 128 * one.storer + 256 * one.consumer, 512 * 128);
  EXPECT_EQ(consumerRegisters(s4, t128), 64 + 32);
  EXPECT_LE(consumerRegisters(s4, t128) + 32, one.consumer);
  // Epilogue work (statistics here): a storer per consumer warpgroup, 640 threads of 96
  // registers at launch, 128 a consumer after setmaxnreg.
  ConvSpec stats = s4;
  stats.accumulateStats = true;
  EXPECT_EQ(storeWarpgroups(stats, t128), 2);
  const ShiftRegisters two = shiftRegisters(stats, t128, 2);
  EXPECT_EQ(two.consumer, 128);
  EXPECT_LE(128 * two.producer + 256 * two.storer + 256 * two.consumer, 640 * 96);
  auto withStats = emitConvShift(stats, t128);
  ASSERT_TRUE(bool(withStats)) << llvm::toString(withStats.takeError());
  EXPECT_EQ(withStats->back().launch.block[0], 256u + 256 + 128);
  // Four consumer warpgroups with four storers would pass 1024 threads: they store their own.
  // One consumer warpgroup of 64 x 256 (128 accumulators, 32 weight registers) gets 240
  // registers beside its storer (lines of 512 elements: 120 registers).
  EXPECT_EQ(storeWarpgroups(stats, ConvShiftTile{256, 64, 9}), 0);
  EXPECT_EQ(storeWarpgroups(s4, ConvShiftTile{64, 256, 9}), 1);
  EXPECT_EQ(shiftRegisters(s4, ConvShiftTile{64, 256, 9}, 1).storer, 120);
  EXPECT_EQ(shiftRegisters(s4, ConvShiftTile{64, 256, 9}, 1).consumer, 240);
  auto own = emitConvShift(stats, ConvShiftTile{256, 64, 9});
  ASSERT_TRUE(bool(own)) << llvm::toString(own.takeError());
  EXPECT_EQ(own->back().launch.block[0], 512u + 32);
  EXPECT_NE(own->back().source.find("constexpr int kStoreWarpgroups = 0;"), std::string::npos);
  // Without staged lines (the stride-1 walk) there is nothing to hand over.
  EXPECT_EQ(storeWarpgroups(s0Spec(), ConvShiftTile{128, 256, 4}), 0);
}

TEST(ConvShift, TheWTapsOfAStageShareOneBoxFromEightTaps) {
  // S4: 8 taps a tile (2 a dim), weights in registers: each stage is one box of 136 grid rows
  // that both W taps' 128 rows lie in.
  ConvSpec s4 = convSpec("s4", true, 3, 4, 32, 32, 4, {32, 64, 128}, {3, 3, 3}, {2, 2, 2},
                         {1, 1, 1}, {1, 1, 1}, MathMode::Tf32);
  s4.wgmma = true;
  EXPECT_EQ(shiftMode(s4).wRun, 2);
  auto shared = emitConvShift(s4, ConvShiftTile{128, 128, 9});
  ASSERT_TRUE(bool(shared)) << llvm::toString(shared.takeError());
  const KernelSource &k = shared->back();
  EXPECT_NE(k.source.find("constexpr int kBoxRows = 136;"), std::string::npos);
  ASSERT_EQ(k.launch.tensorMaps.size(), 2u);
  EXPECT_EQ(k.launch.tensorMaps[1].box[1], 136u);
  EXPECT_NE(k.tileConfig.find("each stage the 2 W taps' rows in one box"), std::string::npos)
      << k.tileConfig;
  // 9 stages of one box, their barriers, the staged lines (128 x 136 floats), the alignment.
  EXPECT_EQ(k.launch.sharedBytes, 9u * 136 * 128 + 9 * 16 + 128 * 136 * 4 + 1024);
  // A 256-row box would need 264 rows, past TMA's 256: one box a tap there.
  auto wide = emitConvShift(s4, ConvShiftTile{64, 256, 4});
  ASSERT_TRUE(bool(wide)) << llvm::toString(wide.takeError());
  EXPECT_NE(wide->back().source.find("constexpr int kBoxRows = 256;"), std::string::npos);
  // 4 taps a tile (ConvTranspose2d, k 4, stride 2: 2 x 2), measured slower with the shared
  // box; and the weights of S0 come by TMA with every tap: one box a tap.
  ConvSpec g8 = convSpec("g8", true, 2, 8, 64, 64, 8, {1, 64, 64}, {1, 4, 4}, {1, 2, 2}, {0, 1, 1},
                         {1, 1, 1}, MathMode::Tf32);
  g8.wgmma = true;
  ASSERT_TRUE(shiftMode(g8).registerA);
  EXPECT_EQ(shiftMode(g8).wRun, 1);
  EXPECT_EQ(shiftMode(s0Spec()).wRun, 1);
  // Without phases the W taps are the dilation apart (8 input and 64 output channels a
  // group: weights in registers): 4 taps at dilation 2 start within 6 rows and share a box;
  // at dilation 3 they span 9, more than the box's 8 extra rows.
  ConvSpec dil = convSpec("dil", false, 2, 8, 32, 256, 4, {1, 64, 64}, {1, 2, 4}, {1, 1, 1},
                          {0, 0, 0}, {1, 1, 2}, MathMode::Tf32);
  dil.wgmma = true;
  ASSERT_TRUE(shiftMode(dil).registerA);
  EXPECT_EQ(shiftMode(dil).wRun, 4);
  dil.dilation[2] = 3;
  ASSERT_TRUE(shiftMode(dil).registerA);
  EXPECT_EQ(shiftMode(dil).wRun, 1);
}

TEST(ConvShift, BoxBoundConvolutionsShareAStageBetweenTheirWTaps) {
  auto spec = [](bool transposed, int dims, int64_t cin, int64_t cout, std::array<int64_t, 3> in,
                 int64_t pad) {
    const int64_t pd = dims == 3 ? pad : 0;
    ConvSpec s = convSpec("c", transposed, dims, 2, cin, cout, 1, in, {dims == 3 ? 3 : 1, 3, 3},
                          {1, 1, 1}, {pd, pad, pad}, {1, 1, 1}, MathMode::Tf32);
    s.wgmma = true;
    return s;
  };
  // ConvTranspose2d 64 -> 64 on 256 px: 258-wide output rows, so each 128-position tile of
  // the input-box engine copies four full input rows (8.25 floats a channel an output):
  // narrow and shallow (576 terms), yet conv_shift's 64 x 256 tile, the 3 W taps a stage.
  ConvSpec kb19 = spec(true, 2, 64, 64, {1, 256, 256}, 0);
  EXPECT_NEAR(wgmmaBoxFloatsPerPosition(kb19), 8.27, 0.01);
  EXPECT_EQ(shiftMode(kb19).wTaps, 3);
  auto t = convShiftTile(kb19);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->bm, 64);
  EXPECT_EQ(t->bn, 256);
  EXPECT_EQ(t->wRun, 3);
  EXPECT_EQ(t->stages, 3);
  // A stage: the 3 taps' 64 x 32 weight boxes and 264 grid rows, copied as 3 x 88 rows.
  auto ks = emitConvShift(kb19, *t);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  const KernelSource &k = ks->back();
  EXPECT_NE(k.source.find("constexpr int kBoxRows = 264;"), std::string::npos);
  EXPECT_NE(k.source.find("constexpr int kBoxCopyRows = 88;"), std::string::npos);
  ASSERT_EQ(k.launch.tensorMaps.size(), 2u);
  EXPECT_EQ(k.launch.tensorMaps[0].box[1], 64u);
  EXPECT_EQ(k.launch.tensorMaps[1].box[1], 88u);
  EXPECT_EQ(k.launch.sharedBytes, 3u * (3 * 64 + 264) * 128 + 3 * 16 + 1024);
  EXPECT_NE(k.tileConfig.find("each stage the 3 W taps' rows in one box"), std::string::npos)
      << k.tileConfig;
  // 130-wide rows (4.28) still go; 128 output channels get 128 x 128 tiles.
  ConvSpec s130 = spec(true, 2, 64, 64, {1, 128, 128}, 0);
  EXPECT_NEAR(wgmmaBoxFloatsPerPosition(s130), 4.28, 0.01);
  ASSERT_TRUE(convShiftTile(s130).has_value());
  EXPECT_EQ(convShiftTile(s130)->wRun, 3);
  ConvSpec wide = spec(true, 2, 64, 128, {1, 256, 256}, 0);
  ASSERT_TRUE(convShiftTile(wide).has_value());
  EXPECT_EQ(convShiftTile(wide)->bm, 128);
  EXPECT_EQ(convShiftTile(wide)->bn, 128);
  EXPECT_EQ(convShiftTile(wide)->wRun, 3);
  // A 3-D convolution's boxes hold three planes (Conv3d 64 -> 64, k 3, pad 1 on 32 x 32
  // planes: 1728 terms but 64 channels; each tile's box 3 planes of 6 rows of 40 floats).
  ConvSpec c3 = spec(false, 3, 64, 64, {16, 32, 32}, 1);
  EXPECT_NEAR(wgmmaBoxFloatsPerPosition(c3), 3 * 6 * 40 / 128.0, 0.01);
  ASSERT_TRUE(convShiftTile(c3).has_value());
  EXPECT_EQ(convShiftTile(c3)->bm, 64);
  EXPECT_EQ(convShiftTile(c3)->wRun, 3);
  // Rows that are whole tiles (3.19), or 126-wide ones whose tiles span two rows (4.03),
  // stay on the input-box engine, as do convolutions whose channels the epilogue reduces.
  ConvSpec s256 = spec(false, 2, 64, 64, {1, 256, 256}, 1);
  EXPECT_NEAR(wgmmaBoxFloatsPerPosition(s256), 3.19, 0.01);
  std::string why;
  EXPECT_FALSE(convShiftTile(s256, &why).has_value());
  EXPECT_EQ(why, "output channels per group that fill under 3/4 of 128-channel tiles");
  ConvSpec kb1 = spec(false, 2, 64, 128, {1, 128, 128}, 0);
  EXPECT_NEAR(wgmmaBoxFloatsPerPosition(kb1), 4.03, 0.01);
  EXPECT_FALSE(convShiftTile(kb1, &why).has_value());
  EXPECT_EQ(why, "a reduction of fewer than 1024 terms (each tile's epilogue would outweigh its "
                 "faster products)");
  ConvSpec reduced = kb19;
  reduced.channelReduce = ConvChannelReduce{};
  EXPECT_FALSE(convShiftTile(reduced).has_value());
  // A shared stage is the W taps' count or none.
  auto two = emitConvShift(kb19, ConvShiftTile{64, 256, 3, 2});
  ASSERT_FALSE(bool(two));
  EXPECT_EQ(llvm::toString(two.takeError()),
            "c: conv_shift cannot share a stage between 2 W taps (3 can)");
  ConvSpec s4 = convSpec("s4", true, 3, 4, 32, 32, 4, {32, 64, 128}, {3, 3, 3}, {2, 2, 2},
                         {1, 1, 1}, {1, 1, 1}, MathMode::Tf32);
  s4.wgmma = true;
  auto regs = emitConvShift(s4, ConvShiftTile{128, 128, 9, 2});
  ASSERT_FALSE(bool(regs));
  EXPECT_EQ(llvm::toString(regs.takeError()),
            "s4: conv_shift holds these weights in registers and shares their stages between W "
            "taps by itself (a tile's wRun of 1)");
}

TEST(ConvShift, TemplateRefusesAGridSmallerThanTheOutput) {
  auto ks = emitConvShift(s0Spec(), ConvShiftTile{});
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  std::string src = ks->back().source;
  EXPECT_EQ(nvrtcCompile(src, "sm_90a"), "");
  const std::string from = "kPitchW = 34;";
  size_t at = src.find(from);
  ASSERT_NE(at, std::string::npos);
  src.replace(at, from.size(), "kPitchW = 33;");
  EXPECT_NE(nvrtcCompile(src, "sm_90a").find("every output position is a grid row"),
            std::string::npos);
}

// Every conv case conv_shift can compute compiles for sm_90a on every tile, without a
// warning; the GPU harness runs the same kernels (bench/kernels/tc_check.py, suffixes
// _sh, _sht<i> and, with the W taps sharing a stage, _shw<i>).
class ConvShiftCompile : public ::testing::TestWithParam<size_t> {};
TEST_P(ConvShiftCompile, EveryTileNvrtcSm90a) {
  ConvCase c = convCases()[GetParam()];
  c.spec.math = MathMode::Tf32;
  c.spec.wgmma = true;
  std::string why;
  if (!convShiftSupports(c.spec, &why))
    GTEST_SKIP() << c.spec.kernelName << ": " << why;
  bool prepCompiled = false;
  const ShiftRows rows = shiftRows(c.spec, shiftGrid(c.spec));
  // With the weights copied by TMA, every tile also with the W taps sharing a stage.
  for (int wRun : shiftWRuns(c.spec))
    for (int bm : {64, 128, 256})
      for (int bn : {64, 128, 256}) {
        ConvShiftTile t{bm, bn, 0, wRun};
        t.stages = maxStages(c.spec, t);
        auto ks = emitConvShift(c.spec, t);
        // Refused: over 128 accumulators a thread, small groups' k groups split, staged lines
        // or shared stages leaving no room for two stages, or weights in registers that do not
        // fit (the emitter's messages name why; the default tile must always be accepted).
        if (bm * bn > 128 * 256 || (rows.groupsPerK > 1 && rows.rowsK % bm) || t.stages < 2) {
          EXPECT_FALSE(bool(ks)) << c.spec.kernelName << " " << bm << "x" << bn;
        }
        if (!ks) {
          llvm::consumeError(ks.takeError());
          const ConvShiftTile d = convShiftDefaultTile(c.spec);
          EXPECT_FALSE(d.bm == bm && d.bn == bn && wRun == 1)
              << c.spec.kernelName << ": default tile refused";
          continue;
        }
        ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
        ASSERT_EQ(ks->size(), 3u);
        // The weight rows and staged input do not depend on the tile: compiled once.
        for (const KernelSource &k : *ks) {
          if (k.templateName == "conv_shift.cuh" || !prepCompiled) {
            EXPECT_EQ(nvrtcCompile(k.source, "sm_90a"), "") << k.name << " " << k.tileConfig;
          }
        }
        prepCompiled = true;
      }
}
INSTANTIATE_TEST_SUITE_P(AllCases, ConvShiftCompile,
                         ::testing::Range(size_t(0), convCases().size()));

} // namespace
