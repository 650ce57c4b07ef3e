//===- tests/compiler/ConvTemplateChoiceTest.cpp - which conv template runs, in how many launches
//===//
//
// The planner sends convolutions with enough channels per group and a deep enough reduction
// to conv_igemm (tensor cores), the rest to conv_direct. A strided transposed convolution on
// conv_igemm runs as one kernel per output phase, and every kernel of a fusion plan (plain,
// statistics, statistics-only) becomes that many launches on the same buffers; `sinterc
// explain` names the phase of each. Golden plan summaries, CPU only.
//
//===--------------------------------------------------------------------------------===//
#include "PlanSummary.h"

#include "compiler/Explain.h"
#include "ir/Parser.h"

#include <optional>
#include <tuple>

#include <gtest/gtest.h>

using namespace sinter;

namespace {

llvm::Expected<PipelineResult> plan(const std::string &text, Precision precision = Precision::Auto,
                                    const std::string &arch = "sm_90a") {
  auto graphs = parseSir(text, "t.sir");
  if (!graphs)
    return graphs.takeError();
  return runPipeline(graphs->front(), {precision, arch, false});
}

std::string summarize(const std::string &text, Precision precision = Precision::Auto) {
  auto r = plan(text, precision);
  EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
  return r ? test::planSummary(*r) : "";
}

/// `line` repeated `n` times.
std::string times(int n, const std::string &line) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += line;
  return s;
}

TEST(ConvTemplateChoice, StridedTransposed3dRunsEightPhaseKernelsWithStatistics) {
  // ConvTranspose3d(32 -> 64, k 3, stride 2, padding 1, output_padding 1) -> relu -> group
  // norm: 32 * 27 / 8 = 108 reduction terms per phase, 64 channels.
  EXPECT_EQ(summarize("graph g(%x: f32[2,32,4,5,6], %w: param f32[32,64,3,3,3], %ga: param "
                      "f32[64], %be: param f32[64]) { %y = conv_transpose(%x, %w) {stride = 2, "
                      "padding = 1, output_padding = 1} %r = relu(%y) %o = group_norm(%r, %ga, "
                      "%be) {groups = 8} return %o }"),
            "group conv+epilogue+norm+epilogue: conv_transpose relu group_norm\n"
            "  fill r.stats\n"
            "  launch conv_pack.cuh (weight rows) 1=w 6=w.rows\n" +
                times(8, "  launch conv_igemm.cuh (anchor + epilogue + statistics) 0=x 1=w 3=r "
                         "4=r.stats 6=w.rows\n") +
                "  launch norm_apply.cuh (normalise + epilogue) 0=r 3=o 4=r.stats 6=ga 7=be\n");
}

TEST(ConvTemplateChoice, StridedTransposed2dWithBiasRunsFourPhaseKernels) {
  const std::string g = "graph g(%x: f32[2,64,7,9], %w: param f32[64,128,4,4], %b: param "
                        "f32[128]) { %y = conv_transpose(%x, %w, %b) {stride = 2, padding = 1} "
                        "return %y }";
  // fp32 (3xTF32): one conv_igemm kernel per phase.
  EXPECT_EQ(summarize(g, Precision::Fp32),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_pack.cuh (weight rows) 1=w 6=w.rows\n" +
                times(4, "  launch conv_igemm.cuh (anchor + epilogue) 0=x 1=w 2=b 3=y 6=w.rows\n"));
  // TF32 on sm_90a: conv_shift's phase walk, every phase in one kernel over the staged input.
  EXPECT_EQ(summarize(g),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_shift_rows.cuh (weight rows) 1=w 6=w.rows\n"
            "  launch conv_stage.cuh (input staging) 0=x 7=x.staged\n"
            "  launch conv_shift.cuh (anchor + epilogue) 0=x 1=w 2=b 3=y 6=w.rows 7=x.staged\n");
}

TEST(ConvTemplateChoice, GroupedStridedTransposedStatisticsOnly) {
  // Groups of 32 output channels with 32 * 16 / 4 = 128 terms per phase: tensor cores, the
  // conv output never written.
  const std::string g = "graph g(%x: f32[2,128,5,6], %w: param f32[128,32,4,4], %ga: param "
                        "f32[128], %be: param f32[128]) { %y = conv_transpose(%x, %w) {stride = "
                        "2, padding = 1, groups = 4} %n = group_norm(%y, %ga, %be) {groups = 4} "
                        "%o = mean(%n) {dims = [2, 3]} return %o }";
  EXPECT_EQ(
      summarize(g, Precision::Fp32),
      "group conv+epilogue+norm+reduce: conv_transpose group_norm mean\n"
      "  fill y.stats\n"
      "  launch conv_pack.cuh (weight rows) 1=w 6=w.rows\n" +
          times(4, "  launch conv_igemm.cuh (anchor statistics) 0=x 1=w 4=y.stats 6=w.rows\n") +
          "  launch norm_reduce.cuh (reduce from statistics) 3=o 4=y.stats 6=ga 7=be\n");
  EXPECT_EQ(summarize(g),
            "group conv+epilogue+norm+reduce: conv_transpose group_norm mean\n"
            "  fill y.stats\n"
            "  launch conv_shift_rows.cuh (weight rows) 1=w 6=w.rows\n"
            "  launch conv_stage.cuh (input staging) 0=x 7=x.staged\n"
            "  launch conv_shift.cuh (anchor statistics) 0=x 1=w 4=y.stats 6=w.rows 7=x.staged\n"
            "  launch norm_reduce.cuh (reduce from statistics) 3=o 4=y.stats 6=ga 7=be\n");
}

TEST(ConvTemplateChoice, ShapesConvIgemmDoesNotTakeStayDirect) {
  const char *const direct[] = {
      // Kernel 1, stride 2: 64 terms over 4 phases (odd outputs hold only the bias), too
      // shallow for the implicit GEMM.
      "graph g(%x: f32[2,64,5,6], %w: param f32[64,64,1,1]) { %y = conv_transpose(%x, %w) "
      "{stride = 2, output_padding = 1} return %y }",
      // 16 channels per group, 16 * 27 / 8 = 54 terms per phase: too shallow for conv_igemm;
      // conv_shift's small groups refuse it too (its padded grid: 4 x 5 x 6 rows for 3 x 4 x 5
      // inputs, over 1.5x the outputs' share).
      "graph g(%x: f32[2,64,3,4,5], %w: param f32[64,16,3,3,3]) { %y = conv_transpose(%x, %w) "
      "{stride = 2, padding = 1, groups = 4} return %y }",
  };
  for (const char *text : direct)
    EXPECT_EQ(summarize(text), "group anchor+epilogue: conv_transpose\n"
                               "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n")
        << text;
  // 8 channels per group, 4 output phases: conv_shift's phase walk with small groups on
  // sm_90a under TF32 (S4's family); fp32 keeps FFMA (conv_mma's walk by output phase lost).
  const char *eight = "graph g(%x: f32[2,64,5,6], %w: param f32[64,8,4,4]) { %y = "
                      "conv_transpose(%x, %w) {stride = 2, padding = 1, groups = 8} return %y }";
  EXPECT_EQ(summarize(eight),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_shift_rows.cuh (weight rows) 1=w 6=w.rows\n"
            "  launch conv_stage.cuh (input staging) 0=x 7=x.staged\n"
            "  launch conv_shift.cuh (anchor + epilogue) 0=x 1=w 3=y 6=w.rows 7=x.staged\n");
  EXPECT_EQ(summarize(eight, Precision::Fp32),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
  // Two output phases (stride 2 in one dim) stay on FFMA: ConvTranspose1d with 16-channel
  // groups lost there (convt1d_s2_g16_tanh, 0.542 against 0.487 ms on an H200).
  EXPECT_EQ(summarize("graph g(%x: f32[2,128,40], %w: param f32[128,32,3]) { %y = "
                      "conv_transpose(%x, %w) {stride = 2, padding = 1, groups = 8} return %y }"),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
}

TEST(ConvTemplateChoice, SixteenChannelGroupsStayDirect) {
  // 16 channels, 32 * 9 = 288 reduction terms: direct, on conv_mma's TF32 mma.sync under
  // the auto precision. On an H200 conv_igemm's 16- and 32-wide tiles lost 1.4-1.6x on
  // four corpus graphs of 16-channel groups.
  const char *sixteen = "graph g(%x: f32[2,32,9,11], %w: param f32[16,32,3,3], %b: param "
                        "f32[16]) { %y = conv(%x, %w, %b) {padding = 1} return %y }";
  EXPECT_EQ(summarize(sixteen), "group anchor+epilogue: conv\n"
                                "  launch conv_mma.cuh (anchor + epilogue) 0=x 1=w 2=b 3=y\n");
  // S1's shape of group: 24 channels, 3 * 27 = 81 terms (three k steps) stays direct.
  EXPECT_EQ(summarize("graph g(%x: f32[2,3,6,7,8], %w: param f32[24,3,3,3,3]) { %y = conv(%x, "
                      "%w) return %y }"),
            "group anchor+epilogue: conv\n"
            "  launch conv_mma.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
  // Shallow reductions stay on FFMA unless the group's channels fill whole k8 steps: 3
  // channels x 9 taps (27 terms) does, 8 channels x 3 taps does not.
  EXPECT_EQ(summarize("graph g(%x: f32[2,3,19,21], %w: param f32[16,3,3,3]) { %y = conv(%x, %w) "
                      "return %y }"),
            "group anchor+epilogue: conv\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
  EXPECT_EQ(summarize("graph g(%x: f32[2,32,301], %w: param f32[64,8,3]) { %y = conv(%x, %w) "
                      "{groups = 4} return %y }"),
            "group anchor+epilogue: conv\n"
            "  launch conv_mma.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
  // Depthwise: one channel per group fills 1/8 of an n8 tile and 9/16 of two k8 steps, so
  // it stays on FFMA; so does a strided transposed convolution (conv_mma walks it by output
  // phase, but S4 ran 1.3-1.9x slower that way).
  EXPECT_EQ(summarize("graph g(%x: f32[2,8,9,11], %w: param f32[8,1,3,3]) { %y = conv(%x, %w) "
                      "{groups = 8} return %y }"),
            "group anchor+epilogue: conv\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
  EXPECT_EQ(summarize("graph g(%x: f32[2,8,9,11], %w: param f32[8,8,3,3]) { %y = "
                      "conv_transpose(%x, %w) {stride = 2} return %y }"),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
}

TEST(ConvTemplateChoice, DeepGroupsOfSixteenToThirtyOneChannelsTakeTheTensorCoreEngines) {
  // From 512 reduction terms a group of 16-31 output channels leaves the direct kernels:
  // 128 channels x 27 taps into 24 (random chain conv3d_r1n71: 11.7 ms on conv_direct, 1.26
  // on the input-box engine, eager 1.25) and 64 x 16 into 16 (conv2d_r1n113: 0.61 -> 0.34).
  // 256 x 2 taps (512 terms) is the first depth taken; 255 x 2 stays direct.
  auto engine = [](const char *cin, const char *cout, const char *kernel, const char *in) {
    std::string sir = std::string("graph g(%x: f32[2,") + cin + "," + in + "], %w: param f32[" +
                      cout + "," + cin + "," + kernel + "]) { %y = conv(%x, %w) return %y }";
    auto r = plan(sir);
    EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
    return r ? r->plan.kernels.back().source.templateName : std::string();
  };
  // Which of the two (input box or shifted rows) depends on the sizes, as for wide groups.
  auto wgmmaEngine = [](const std::string &t) {
    return t == "conv_igemm.cuh" || t == "conv_shift.cuh";
  };
  EXPECT_TRUE(wgmmaEngine(engine("128", "24", "3,3,3", "16,16,16")));
  EXPECT_TRUE(wgmmaEngine(engine("64", "16", "4,4", "40,40")));
  EXPECT_TRUE(wgmmaEngine(engine("256", "16", "2", "301")));
  EXPECT_FALSE(wgmmaEngine(engine("255", "16", "2", "301")));
}

TEST(ConvTemplateChoice, GroupsOfEightToFifteenChannelsTakeOnlyTheWgmmaEnginesAndOnlyDeep) {
  // An 8-wide wgmma reads each input value for 8 products, as FFMA does: only deep reductions
  // gain (random chains, H200: 1.3-6.1x from 1296 terms, 0.26-0.97x up to 432), by output
  // phase from 192 terms; on mma.sync (sm_80, 3xTF32) never (0.39-1.06x).
  auto engine = [](const std::string &sir, Precision p = Precision::Auto,
                   const std::string &arch = "sm_90a") {
    auto r = plan(sir, p, arch);
    EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
    return r ? r->plan.kernels.back().source.templateName : std::string();
  };
  auto conv = [](const char *cin, const char *k) {
    return std::string("graph g(%x: f32[2,") + cin + ",24,28], %w: param f32[8," + cin + "," + k +
           "]) { %y = conv(%x, %w) return %y }";
  };
  EXPECT_EQ(engine(conv("128", "3,3")), "conv_igemm.cuh"); // 1152 terms
  EXPECT_NE(engine(conv("112", "3,3")), "conv_igemm.cuh"); // 1008 terms
  EXPECT_NE(engine(conv("128", "3,3"), Precision::Auto, "sm_80"), "conv_igemm.cuh");
  EXPECT_NE(engine(conv("128", "3,3"), Precision::Fp32), "conv_igemm.cuh");
  // Stride 2, 4x4: four phases of 4 taps, 64 x 4 = 256 terms each.
  const std::string phased = "graph g(%x: f32[2,64,10,12], %w: param f32[64,8,4,4]) { %y = "
                             "conv_transpose(%x, %w) {stride = 2} return %y }";
  const std::string t = engine(phased);
  EXPECT_TRUE(t == "conv_igemm.cuh" || t == "conv_shift.cuh") << t;
  EXPECT_EQ(engine(phased, Precision::Auto, "sm_80"), "conv_direct.cuh");
  // 16 channels by output phase from 128 terms on the wgmma engines (32 x 4 taps).
  const std::string narrow = "graph g(%x: f32[2,32,10,12], %w: param f32[32,16,4,4]) { %y = "
                             "conv_transpose(%x, %w) {stride = 2} return %y }";
  const std::string n = engine(narrow);
  EXPECT_TRUE(n == "conv_igemm.cuh" || n == "conv_shift.cuh") << n;
  EXPECT_EQ(engine(narrow, Precision::Auto, "sm_80"), "conv_direct.cuh");
}

TEST(ConvTemplateChoice, ExplainWhySaysWhyEachConvolutionRunsOnItsEngine) {
  auto why = [](const char *sir, const std::string &arch = "sm_90a") {
    auto r = plan(sir, Precision::Auto, arch);
    EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
    ExplainOptions o;
    o.why = true;
    return r ? renderExplain(*r, o) : std::string();
  };
  // 8 output channels of 128 x 16 terms on sm_80 (no wgmma engine): its weights are too
  // large for conv_mma's fragments.
  std::string ffma = why("graph g(%x: f32[2,128,20,20], %w: param f32[8,128,4,4]) { %y = "
                         "conv(%x, %w) return %y }",
                         "sm_80");
  EXPECT_NE(ffma.find("engines (--why)\n  group 0, %y = conv: direct in FFMA (conv_direct): 8 "
                      "output channels a group and 2048 reduction terms: groups of 8-15 "
                      "channels take tensor cores only on sm_90a's wgmma engines in TF32, from "
                      "1024 terms (by output phase from 192); not on mma.sync: "),
            std::string::npos)
      << ffma;
  std::string tc = why("graph g(%x: f32[2,64,20,20], %w: param f32[64,64,3,3]) { %y = "
                       "conv(%x, %w) return %y }");
  EXPECT_NE(tc.find("%y = conv: tensor cores (implicit GEMM): 64 output channels a group and "
                    "576 reduction terms"),
            std::string::npos)
      << tc;
  // A transposed convolution whose dilation shares a factor with its stride: three of its
  // four phases hold only the bias, each one tap of zeros on the implicit GEMM.
  std::string phases = why("graph g(%x: f32[2,64,9,9], %w: param f32[64,64,5,5]) { %y = "
                           "conv_transpose(%x, %w) {stride = 2, dilation = 2} return %y }");
  EXPECT_NE(phases.find("%y = conv_transpose: tensor cores (implicit GEMM)"), std::string::npos)
      << phases;
  size_t biasOnly = 0;
  for (size_t at = phases.find("(no tap reaches it: bias only)"); at != std::string::npos;
       at = phases.find("(no tap reaches it: bias only)", at + 1))
    ++biasOnly;
  EXPECT_EQ(biasOnly, 3u) << phases;
}

TEST(ConvTemplateChoice, DirectTensorCoresAreChosenForTheStatisticsPassToo) {
  // 30 channels (four n8 tiles) of 5 x 27 terms: conv_mma fits a plain pass but not the
  // statistics pass (16 accumulators + 34 lane offsets + 16 sums per m16 tile), so the whole
  // group stays on FFMA instead of failing to emit its first kernel.
  auto r = plan("graph g(%x: f32[2,5,10,12,14], %w: param f32[30,5,3,3,3], %gamma: param f32[30], "
                "%beta: param f32[30]) { %y = conv(%x, %w) %o = group_norm(%y, %gamma, %beta) "
                "{groups = 6} return %o }");
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_FALSE(r->plan.kernels.empty());
  EXPECT_EQ(r->plan.kernels[0].source.templateName, "conv_direct.cuh");
  // Without the norm the same convolution would fit conv_mma, but the choice is one per
  // shape: it stays on FFMA there too.
  EXPECT_EQ(summarize("graph g(%x: f32[2,5,10,12,14], %w: param f32[30,5,3,3,3]) { %y = "
                      "conv(%x, %w) return %y }"),
            "group anchor+epilogue: conv\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
}

TEST(ConvTemplateChoice, ExplainNamesThePhaseOfEachKernel) {
  auto r = plan("graph g(%x: f32[2,48,9], %w: param f32[48,40,4]) { %y = conv_transpose(%x, "
                "%w) {stride = 3, padding = 1, dilation = 2} return %y }");
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  // The weight rows of all three phases first (conv_pack.cuh), then one kernel per phase.
  ASSERT_EQ(r->plan.kernels.size(), 4u);
  EXPECT_EQ(r->plan.kernels[0].source.templateName, "conv_pack.cuh");
  std::string text = renderExplain(*r, {});
  for (const char *phase : {"phase 0 of 3, 128x64x32", "phase 1 of 3, 128x64x32",
                            "phase 2 of 3, 128x64x32", "3 x 40 rows of", "packed weight rows"})
    EXPECT_NE(text.find(phase), std::string::npos) << phase << "\n" << text;
  EXPECT_NE(text.find("g_k0_conv_transpose_p2"), std::string::npos) << text;
}

/// The conv_igemm kernels of `text` planned for `arch` at `precision`.
std::vector<KernelSource> convIgemmKernels(const std::string &text, const char *arch,
                                           Precision precision = Precision::Auto) {
  auto graphs = parseSir(text, "t.sir");
  EXPECT_TRUE(bool(graphs));
  std::vector<KernelSource> out;
  if (!graphs)
    return out;
  auto r = runPipeline(graphs->front(), {precision, arch, false});
  EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
  if (!r)
    return out;
  for (const PlannedKernel &k : r->plan.kernels)
    if (k.source.templateName == "conv_igemm.cuh")
      out.push_back(k.source);
  return out;
}

/// The tile descriptions of the conv_igemm kernels of `text` planned for `arch` at
/// `precision`, and whether each is launched persistently.
std::vector<std::pair<std::string, bool>> convTiles(const std::string &text, const char *arch,
                                                    Precision precision = Precision::Auto) {
  std::vector<std::pair<std::string, bool>> tiles;
  for (const KernelSource &k : convIgemmKernels(text, arch, precision))
    tiles.push_back({k.tileConfig, k.launch.persistent});
  return tiles;
}

TEST(ConvTemplateChoice, Sm90aRunsTf32ConvolutionsOnTheWgmmaEngine) {
  const std::string direct = "graph g(%x: f32[2,32,20,24], %w: param f32[64,32,3,3]) { %y = "
                             "conv(%x, %w) {padding = 1} return %y }";
  const std::string strided = "graph g(%x: f32[2,32,20,24], %w: param f32[64,32,3,3]) { %y = "
                              "conv(%x, %w) {stride = 2, padding = 1} return %y }";
  // Three input channels: the box would pad every k8 step to 8.
  const std::string thin = "graph g(%x: f32[2,3,40,48], %w: param f32[64,3,5,5]) { %y = "
                           "conv(%x, %w) {stride = 2, padding = 2} return %y }";
  // sm_90a, TF32 (auto): direct convolutions of any stride on the engine (a strided one's box
  // holds every input column its taps read), persistent. (The strided transposed one takes
  // conv_shift's phase walk there: StridedTransposed2dWithBiasRunsFourPhaseKernels; its
  // phases on this engine are forced in tests/kernels_tc.)
  for (const std::string &g : {direct, strided}) {
    auto tiles = convTiles(g, "sm_90a");
    ASSERT_FALSE(tiles.empty());
    for (const auto &[tile, persistent] : tiles) {
      EXPECT_NE(tile.find("wgmma, 2"), std::string::npos) << tile;
      EXPECT_NE(tile.find("warpgroups, input box"), std::string::npos) << tile;
      EXPECT_TRUE(persistent) << tile;
    }
  }
  // 3xTF32 (fp32), sm_80 and a strided convolution of 3 input channels stay on mma.sync, not
  // persistent.
  for (auto [g, arch, precision] :
       {std::tuple{thin, "sm_90a", Precision::Auto}, std::tuple{direct, "sm_90a", Precision::Fp32},
        std::tuple{direct, "sm_80", Precision::Auto}}) {
    auto tiles = convTiles(g, arch, precision);
    ASSERT_FALSE(tiles.empty());
    for (const auto &[tile, persistent] : tiles) {
      EXPECT_EQ(tile.find("wgmma, "), std::string::npos) << arch << " " << tile;
      EXPECT_FALSE(persistent) << tile;
    }
  }
  // On sm_90a the tile says why a convolution stays on mma.sync.
  auto tiles = convTiles(thin, "sm_90a");
  ASSERT_FALSE(tiles.empty());
  EXPECT_NE(tiles[0].first.find("(not wgmma: a strided direct convolution of fewer than 8 input "
                                "channels a group"),
            std::string::npos)
      << tiles[0].first;
  tiles = convTiles(direct, "sm_90a", Precision::Fp32);
  ASSERT_FALSE(tiles.empty());
  EXPECT_NE(tiles[0].first.find("(not wgmma: 3xTF32 convolutions stay on mma.sync)"),
            std::string::npos)
      << tiles[0].first;
}

// On the input-box engine, 64-channel tiles of a shallow reduction (at most 512 terms) run
// two persistent blocks an SM, in smaller channel chunks where two blocks' boxes need it;
// 128-channel tiles and deeper reductions keep one.
TEST(ConvTemplateChoice, ShallowSixtyFourChannelWgmmaConvolutionsRunTwoBlocksAnSm) {
  auto launches = [](const std::string &text) {
    std::vector<std::pair<std::string, unsigned>> out;
    for (const KernelSource &k : convIgemmKernels(text, "sm_90a")) {
      EXPECT_TRUE(k.launch.persistent) << k.tileConfig;
      out.push_back({k.tileConfig, k.launch.persistentPerSm});
    }
    return out;
  };
  auto conv = [](int cin, int cout) {
    return "graph g(%x: f32[2," + std::to_string(cin) + ",8,128], %w: param f32[" +
           std::to_string(cout) + "," + std::to_string(cin) +
           ",3,3]) { %y = conv(%x, %w) {padding = 1} return %y }";
  };
  // 32 -> 64 on 128-wide rows: 288 terms; two blocks need 16-channel boxes (1 x 3 x 136).
  auto two = launches(conv(32, 64));
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(two[0].second, 2u);
  EXPECT_NE(two[0].first.find("128x64x32, wgmma"), std::string::npos) << two[0].first;
  EXPECT_NE(two[0].first.find("per 16 channels, weight stages by TMA, 4 stages, tf32, 2 blocks/SM"),
            std::string::npos)
      << two[0].first;
  // 64 -> 64: 576 terms; 32 -> 128: 128-channel tiles.
  for (auto [cin, cout] : {std::pair{64, 64}, std::pair{32, 128}}) {
    auto one = launches(conv(cin, cout));
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0].second, 1u) << one[0].first;
    EXPECT_EQ(one[0].first.find("blocks/SM"), std::string::npos) << one[0].first;
  }
}

// At one block an SM the input-box engine's two consumer warpgroups take whole tiles in turn
// (384 threads: the producer and two warpgroups of 4 warps), so that one's epilogue runs
// beside the other's products; not where the epilogue reduces each position's channels to
// one value (little to hide; one warpgroup's products alone were slower there).
TEST(ConvTemplateChoice, OneBlockWgmmaConvolutionsAlternateTheirConsumerWarpgroups) {
  auto convKernel = [](const std::string &text) {
    std::vector<KernelSource> ks = convIgemmKernels(text, "sm_90a");
    EXPECT_EQ(ks.size(), 1u);
    return ks.empty() ? std::optional<KernelSource>() : std::optional<KernelSource>(ks.front());
  };
  const std::string conv = "graph g(%x: f32[2,64,16,128], %w: param f32[128,64,3,3], %b: param "
                           "f32[128]) { %y = conv(%x, %w, %b) %r = relu(%y) ";
  auto alternating = convKernel(conv + "return %r }");
  ASSERT_TRUE(alternating.has_value());
  EXPECT_NE(alternating->tileConfig.find("128x128x32, wgmma, 2 alternating+1 warpgroups"),
            std::string::npos)
      << alternating->tileConfig;
  EXPECT_EQ(alternating->launch.block[0], 384u);
  EXPECT_EQ(alternating->launch.persistentPerSm, 1u);
  EXPECT_NE(alternating->source.find("constexpr bool kPingpong = true;"), std::string::npos);
  EXPECT_NE(alternating->source.find("constexpr int kWarpsM = 4;"), std::string::npos);

  auto reduced = convKernel(conv + "%m = min(%r) {dims = [1]} return %m }");
  ASSERT_TRUE(reduced.has_value());
  EXPECT_NE(reduced->tileConfig.find("wgmma, 2+1 warpgroups"), std::string::npos)
      << reduced->tileConfig;
  EXPECT_NE(reduced->tileConfig.find("then a min over the channels"), std::string::npos)
      << reduced->tileConfig;
  EXPECT_EQ(reduced->launch.block[0], 384u);
  EXPECT_NE(reduced->source.find("constexpr bool kPingpong = false;"), std::string::npos);
  EXPECT_NE(reduced->source.find("constexpr int kWarpsM = 8;"), std::string::npos);
}

// A conv + gelu + group norm of a few (n, group)s stays on two kernels (the planner's size
// rules), unless PlanOptions::normInKernelWherePossible asks for the norm in the conv_mma
// kernel; that kernel then holds its units' values and says how many blocks it needs
// resident.
TEST(ConvTemplateChoice, NormInKernelWherePossibleOverridesTheSizeRules) {
  auto graphs = parseSir(
      "graph g(%x: f32[2,16,64,64], %w: param f32[16,8,3,3], %b: param f32[16], %ga: param "
      "f32[16], %be: param f32[16]) { %y = conv_transpose(%x, %w, %b) {groups = 2} %g = "
      "gelu(%y) %o = group_norm(%g, %ga, %be) {groups = 4} return %o }",
      "t.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  auto usual = runPipeline(graphs->front(), {Precision::Auto, "sm_90a", false});
  ASSERT_TRUE(bool(usual)) << llvm::toString(usual.takeError());
  EXPECT_EQ(usual->plan.kernels.size(), 2u);
  auto forced = runPipeline(graphs->front(), {Precision::Auto, "sm_90a", false, true});
  ASSERT_TRUE(bool(forced)) << llvm::toString(forced.takeError());
  ASSERT_EQ(forced->plan.kernels.size(), 1u);
  const KernelSource &k = forced->plan.kernels[0].source;
  EXPECT_EQ(k.templateName, "conv_mma.cuh");
  EXPECT_NE(k.source.find("#define SINTER_CONV_MMA_NORM 1"), std::string::npos);
  // 66 x 66 outputs in 1x8x32 tiles: 9 x 3 tiles, 14 units of two per (n, group).
  EXPECT_EQ(k.launch.coResident, 14u);
  EXPECT_EQ(k.launch.grid[0], 2u * 2u * 14u);
  EXPECT_NE(launchText(k.launch).find("needs 14 blocks resident at once"), std::string::npos)
      << launchText(k.launch);
}

} // namespace

TEST(ConvTemplateChoice, OneColumnProductsAreDotProductsPerRow) {
  // A linear layer of one feature with a bias and a chain, and a matmul by a vector: one
  // reduce.cuh kernel each, the vector read by its Load and the bias added in its Post.
  EXPECT_EQ(summarize("graph g(%x: f32[64,300], %w: param f32[1,300], %b: param f32[1]) { "
                      "%y = linear(%x, %w, %b) %o = tanh(%y) return %o }"),
            "group anchor+epilogue: linear tanh\n"
            "  launch reduce.cuh (anchor + epilogue (a dot product per row)) 0=x 3=o 8=w 9=b\n");
  EXPECT_EQ(summarize("graph g(%x: f32[3,64,300], %v: f32[300]) { %o = matmul(%x, %v) return "
                      "%o }"),
            "group anchor+epilogue: matmul\n"
            "  launch reduce.cuh (anchor + epilogue (a dot product per row)) 0=x 3=o 8=v\n");
  // Two columns stay on the GEMM engine.
  EXPECT_NE(summarize("graph g(%x: f32[64,300], %w: param f32[2,300]) { %o = linear(%x, %w) "
                      "return %o }")
                .find("gemm.cuh"),
            std::string::npos);
}
