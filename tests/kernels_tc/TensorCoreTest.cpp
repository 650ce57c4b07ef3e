//===- tests/kernels_tc/TensorCoreTest.cpp - conv_igemm and gemm without a GPU -----===//
//
// What can be checked of the tensor-core templates on a machine with no GPU: the emitters
// accept what they should and refuse the rest with the exact message, their launch
// configurations cover the problem, and every emitted source compiles through NVRTC for
// sm_90a and sm_80 with the embedded templates as its only headers. With SINTER_TC_DUMP set
// to a folder, the sources and a JSON description of every case are written there for the
// GPU harness (bench/kernels/tc_check.py).
//
//===--------------------------------------------------------------------------------===//
#include "Nvrtc.h"
#include "TcCases.h"

#include "compiler/kernels/ConvDirect.h"
#include "compiler/kernels/ConvIgemm.h"
#include "compiler/kernels/ConvShift.h"
#include "compiler/kernels/Gemm.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

using namespace sinter;
using namespace sinter::tc_test;

namespace {

TEST(ConvIgemm, StridedTransposedRunsAsOneKernelPerOutputPhase) {
  // ConvTranspose3d(32 -> 64, k 3, stride 2, padding 1, output_padding 1) on 2 x 32 x 5x6x7:
  // output 10 x 12 x 14, eight phases of 5 x 6 x 7 outputs each, with 2 or 1 taps per dim.
  ConvSpec s = convSpec("phased", true, 3, 2, 32, 64, 1, {5, 6, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1},
                        {1, 1, 1}, MathMode::Tf32);
  for (int d = 0; d < 3; ++d)
    s.out[d] += 1;
  s.accumulateStats = true;
  auto ks = emitConvIgemm(s);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  // The weight rows of the eight phases (32 channels x at most 8 taps, padded to 256), then
  // one kernel per phase reading its own rows.
  ASSERT_EQ(ks->size(), 9u);
  const KernelSource &pack = ks->front();
  EXPECT_EQ(pack.name, "phased_pack");
  EXPECT_EQ(pack.templateName, "conv_pack.cuh");
  EXPECT_EQ(pack.tileConfig, "8 x 64 rows of 256 weights");
  ASSERT_EQ(pack.workspace.size(), 1u);
  EXPECT_EQ(pack.workspace[0].slot, kConvPackSlot);
  EXPECT_EQ(pack.workspace[0].bytes, 8 * 64 * 256 * 4);
  double flops = 0;
  for (size_t i = 1; i < ks->size(); ++i) {
    const KernelSource &k = (*ks)[i];
    EXPECT_EQ(k.name, "phased_p" + std::to_string(i - 1));
    EXPECT_EQ(k.launch.grid[0], (2u * 5 * 6 * 7 + 127) / 128);
    EXPECT_EQ(k.launch.grid[1], 1u);
    EXPECT_NE(k.source.find("constexpr bool kPhased = true;"), std::string::npos);
    EXPECT_NE(k.source.find("constexpr bool kPackedB = true;"), std::string::npos);
    EXPECT_NE(k.source.find("constexpr int kBBase = " + std::to_string((i - 1) * 64 * 256) + ";"),
              std::string::npos);
    ASSERT_EQ(k.workspace.size(), 2u);
    EXPECT_EQ(k.workspace[0].slot, 4);
    EXPECT_EQ(k.workspace[1].slot, kConvPackSlot);
    flops += k.flops;
  }
  // Phase (0, 0, 1): even depth and height (tap 1 only, from input q), odd width (taps 0
  // and 2, from inputs q + 1 and q).
  const std::string &p1 = (*ks)[2].source;
  for (const char *line :
       {"kOutD = 5;", "kKD = 1;", "kPD = 0;", "kYPhaseD = 0;", "kWTap0D = 1;", "kKW = 2;",
        "kPW = 1;", "kYPhaseW = 1;", "kWTap0W = 0;", "kWTapStepW = 2;", "kYW = 14;", "kWKW = 3;"})
    EXPECT_NE(p1.find(std::string("constexpr int ") + line), std::string::npos) << line;
  EXPECT_EQ((*ks)[1].tileConfig,
            "phase 0,0,0 of 2x2x2, 128x64x32, 8 warps, 4 stages, tf32, packed weight rows");
  // Only the products of the taps that reach each output: 27 / 8 taps per output on average.
  EXPECT_DOUBLE_EQ(flops, 2.0 * 2 * 10 * 12 * 14 * 64 * 32 * 27 / 8);
}

TEST(ConvIgemm, TemplateRefusesPhaseConstantsOutsideTheConvolution) {
  // The template checks the emitter's phase constants: outputs inside y, taps inside w.
  ConvSpec s = convSpec("guard", true, 1, 1, 32, 32, 1, {1, 1, 7}, {1, 1, 3}, {1, 1, 2}, {0, 0, 1},
                        {1, 1, 1}, MathMode::Tf32);
  s.out[2] += 1; // output 14: phase 1 has outputs 1, 3, ..., 13 and taps 0 and 2
  auto ks = emitConvIgemm(s);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 3u); // the weight rows, then two phases
  const std::string &src = (*ks)[2].source;
  auto tampered = [&](const std::string &from, const std::string &to) {
    std::string t = src;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  EXPECT_EQ(nvrtcCompile(src, "sm_90a"), "");
  EXPECT_NE(nvrtcCompile(tampered("kYW = 14;", "kYW = 13;"), "sm_90a")
                .find("a phase's outputs lie inside y"),
            std::string::npos);
  EXPECT_NE(nvrtcCompile(tampered("kWTap0W = 0;", "kWTap0W = 1;"), "sm_90a")
                .find("a phase has taps, and they lie inside the stored kernel"),
            std::string::npos);
}

TEST(ConvIgemm, RunsPhasesThatNoTapReachesAsOneTapOfZeros) {
  // Whether the kernel of phase `i` is a tap of zeros (kZeroTaps and one tap), and the pack
  // kernel's kPZero list.
  auto zeroTaps = [](const KernelSource &k) {
    const bool zero = k.source.find("constexpr bool kZeroTaps = true;") != std::string::npos;
    if (zero)
      for (const char *one : {"kKD = 1;", "kKH = 1;", "kKW = 1;"})
        EXPECT_NE(k.source.find(one), std::string::npos) << k.name << " " << one;
    else
      EXPECT_NE(k.source.find("constexpr bool kZeroTaps = false;"), std::string::npos) << k.name;
    return zero;
  };
  // Kernel 1, stride 2: only phase (0, 0) has a tap; the other three hold the bias.
  ConvSpec s = convSpec("k1_s2", true, 2, 1, 32, 32, 1, {1, 5, 5}, {1, 1, 1}, {1, 2, 2}, {0, 0, 0},
                        {1, 1, 1}, MathMode::Tf32);
  s.hasBias = true;
  std::string why;
  EXPECT_TRUE(convIgemmSupports(s, &why)) << why;
  auto k = emitConvIgemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  ASSERT_EQ(k->size(), 5u);
  EXPECT_EQ(k->front().templateName, "conv_pack.cuh");
  EXPECT_NE(k->front().source.find("kPZero[] = {0LL, 1LL, 1LL, 1LL};"), std::string::npos)
      << k->front().source;
  for (size_t i = 1; i < k->size(); ++i) {
    EXPECT_EQ(zeroTaps((*k)[i]), i > 1) << (*k)[i].name;
    EXPECT_EQ((*k)[i].tileConfig.find("(no tap reaches it: bias only)") != std::string::npos, i > 1)
        << (*k)[i].tileConfig;
  }
  for (const KernelSource &ks : *k)
    for (const char *arch : {"sm_90a", "sm_80"})
      EXPECT_EQ(nvrtcCompile(ks.source, arch), "") << ks.name << " " << arch;
  // The same on the wgmma engine: its pack rounds to TF32 and writes the zero rows.
  s.wgmma = true;
  k = emitConvIgemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  ASSERT_EQ(k->size(), 5u);
  EXPECT_NE(k->front().source.find("constexpr bool kRound = true;"), std::string::npos);
  EXPECT_NE(k->front().source.find("kPZero[] = {0LL, 1LL, 1LL, 1LL};"), std::string::npos);
  for (size_t i = 1; i < k->size(); ++i) {
    EXPECT_NE((*k)[i].source.find("constexpr int kEngine = 1;"), std::string::npos);
    EXPECT_EQ(zeroTaps((*k)[i]), i > 1) << (*k)[i].name;
  }
  for (const KernelSource &ks : *k)
    EXPECT_EQ(nvrtcCompile(ks.source, "sm_90a"), "") << ks.name;
  // Dilation 2 with stride 2 and padding 1 (1-D): even outputs get no tap. 3xTF32 on 16
  // output channels:
  // the 16-wide tile reads the weight itself, which kZeroTaps turns into zeros.
  s = convSpec("dil2_s2", true, 1, 1, 64, 16, 1, {1, 1, 9}, {1, 1, 3}, {1, 1, 2}, {0, 0, 1},
               {1, 1, 2}, MathMode::Tf32x3);
  EXPECT_TRUE(convIgemmSupports(s, &why)) << why;
  k = emitConvIgemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  ASSERT_EQ(k->size(), 2u);
  EXPECT_TRUE(zeroTaps((*k)[0]));
  EXPECT_FALSE(zeroTaps((*k)[1]));
  for (const KernelSource &ks : *k) {
    EXPECT_NE(ks.source.find("constexpr bool kPackedB = false;"), std::string::npos) << ks.name;
    for (const char *arch : {"sm_90a", "sm_80"})
      EXPECT_EQ(nvrtcCompile(ks.source, arch), "") << ks.name << " " << arch;
  }
  // The template refuses a tap of zeros that is not one tap of an output phase.
  std::string tampered = (*k)[0].source;
  const size_t at = tampered.find("kKW = 1;");
  ASSERT_NE(at, std::string::npos);
  tampered.replace(at, 8, "kKW = 2;");
  EXPECT_NE(nvrtcCompile(tampered, "sm_90a").find("a phase that no tap reaches runs as one tap"),
            std::string::npos);
  // Dilation 3 with stride 2 reaches every phase.
  s.dilation[2] = 3;
  s.out[2] = 8 * 2 - 2 + 6 + 1;
  k = emitConvIgemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  for (const KernelSource &ks : *k)
    EXPECT_FALSE(zeroTaps(ks)) << ks.name;
}

TEST(ConvIgemm, PhasesWithoutOutputsGetNoKernel) {
  // One input depth, k 3, stride 2, padding 1: output depth 1, so depth phase 1 is empty.
  ConvSpec s = convSpec("thin", true, 3, 1, 32, 32, 1, {1, 4, 4}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1},
                        {1, 1, 1}, MathMode::Tf32);
  ASSERT_EQ(s.out[0], 1);
  auto ks = emitConvIgemm(s);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  EXPECT_EQ(ks->size(), 5u); // the weight rows and four phases
}

TEST(ConvIgemm, WeightRowsArePackedOnlyWhereTheStoredRowsDoNotServe) {
  // A direct convolution with K = 64 * 9 (whole 16-byte pieces): its weight rows are read as
  // stored, in 16-byte copies, with no pack kernel.
  ConvSpec s = convSpec("direct", false, 2, 2, 64, 128, 1, {1, 9, 9}, {1, 3, 3}, {1, 1, 1},
                        {0, 1, 1}, {1, 1, 1}, MathMode::Tf32);
  auto ks = emitConvIgemm(s);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 1u);
  EXPECT_NE(ks->front().source.find("constexpr bool kPackedB = true;"), std::string::npos);
  EXPECT_NE(ks->front().source.find("constexpr int kBSlot = 1;"), std::string::npos);
  EXPECT_NE(ks->front().source.find("constexpr int kBRow = 576;"), std::string::npos);
  EXPECT_TRUE(ks->front().workspace.empty());
  // K = 3 * 27 = 81: rows are not 16-byte aligned, so they are packed (to 96) first.
  s = convSpec("odd_k", false, 3, 2, 3, 64, 1, {6, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1},
               {1, 1, 1}, MathMode::Tf32);
  ks = emitConvIgemm(s);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 2u);
  EXPECT_EQ(ks->front().templateName, "conv_pack.cuh");
  EXPECT_NE(ks->back().source.find("constexpr int kBSlot = 6;"), std::string::npos);
  EXPECT_NE(ks->back().source.find("constexpr int kBRow = 96;"), std::string::npos);
  // A 16-wide tile has fewer 16-byte pieces than threads: 4-byte copies from w as stored.
  s = convSpec("g4", true, 2, 2, 128, 64, 4, {1, 6, 7}, {1, 4, 4}, {1, 2, 2}, {0, 1, 1}, {1, 1, 1},
               MathMode::Tf32x3);
  ks = emitConvIgemm(s);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 4u);
  for (const KernelSource &k : *ks)
    EXPECT_NE(k.source.find("constexpr bool kPackedB = false;"), std::string::npos) << k.name;
}

TEST(ConvIgemm, SixteenChannelGroupsGetASixteenWideTile) {
  ConvSpec s = convSpec("g4", true, 2, 2, 128, 64, 4, {1, 6, 7}, {1, 4, 4}, {1, 2, 2}, {0, 1, 1},
                        {1, 1, 1}, MathMode::Tf32x3);
  auto ks = emitConvIgemm(s);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 4u);
  for (const KernelSource &k : *ks) {
    EXPECT_NE(k.tileConfig.find("128x16x32, 8 warps"), std::string::npos) << k.tileConfig;
    EXPECT_EQ(k.launch.grid[1], 1u);
    EXPECT_EQ(k.launch.grid[2], 4u);
  }
}

TEST(ConvIgemm, RefusesReductionsDeeperThanTheKTable) {
  // 1024 channels x 27 taps = 27648 reduction indices: a 216 KiB table.
  ConvSpec s = convSpec("deep", false, 3, 1, 1024, 64, 1, {8, 8, 8}, {3, 3, 3}, {1, 1, 1},
                        {1, 1, 1}, {1, 1, 1}, MathMode::Tf32);
  std::string why;
  EXPECT_FALSE(convIgemmSupports(s, &why));
  EXPECT_EQ(why, "the reduction (Cin/groups * kernel volume) is too deep for the shared k table");
  // 512 channels (13824 indices) still fit.
  s.Cin = 512;
  EXPECT_TRUE(convIgemmSupports(s, &why));
  auto k = emitConvIgemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_LE(k->front().launch.sharedBytes, 227u * 1024);
}

TEST(ConvIgemm, RefusesInconsistentOutputSize) {
  ConvSpec s = convSpec("bad_out", false, 2, 1, 4, 4, 1, {1, 8, 8}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
                        {1, 1, 1}, MathMode::Tf32);
  s.out[2] = 7;
  auto k = emitConvIgemm(s);
  ASSERT_FALSE(bool(k));
  EXPECT_EQ(llvm::toString(k.takeError()),
            "bad_out: output extent 7 does not follow from the convolution attributes "
            "(expected 6)");
}

TEST(ConvIgemm, S0LaunchCoversTheProblem) {
  ConvCase c = convCases()[0];
  auto ks = emitConvIgemm(c.spec);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  ASSERT_EQ(ks->size(), 2u); // the weight rows, then the convolution
  EXPECT_EQ(ks->front().templateName, "conv_pack.cuh");
  const KernelSource *k = &ks->back();
  // M = 16 * 34^3 rows in 256-row tiles, all 128 channels in one column tile.
  EXPECT_EQ(k->launch.grid[0], (16u * 34 * 34 * 34 + 255) / 256);
  EXPECT_EQ(k->launch.grid[1], 1u);
  EXPECT_EQ(k->launch.grid[2], 1u);
  EXPECT_EQ(k->launch.block[0], 256u);
  EXPECT_LE(k->launch.sharedBytes, 227u * 1024);
  EXPECT_DOUBLE_EQ(k->flops, 2.0 * 16 * 34 * 34 * 34 * 128 * 64 * 27);
  ASSERT_EQ(k->workspace.size(), 2u);
  EXPECT_EQ(k->workspace[0].slot, 4);
  EXPECT_EQ(k->workspace[0].bytes, 16 * 16 * 128);
  EXPECT_EQ(k->workspace[1].slot, kConvPackSlot);
  EXPECT_EQ(k->workspace[1].bytes, 128 * 64 * 27 * 4); // K = 1728 is a multiple of 32
  EXPECT_NE(k->source.find("#include \"conv_igemm.cuh\""), std::string::npos);
  EXPECT_NE(k->source.find("constexpr bool kTransposed = true;"), std::string::npos);
  EXPECT_NE(k->source.find("constexpr bool kPhased = false;"), std::string::npos);
  EXPECT_EQ(k->tileConfig, "256x128x32, 8 warps, 3 stages, tf32, packed weight rows");
}

TEST(Gemm, RefusesBadNormGroup) {
  GemmSpec s;
  s.kernelName = "g12";
  s.M = 8;
  s.N = 48;
  s.K = 8;
  s.normGroupCols = 12;
  auto k = emitGemm(s);
  ASSERT_FALSE(bool(k));
  EXPECT_EQ(llvm::toString(k.takeError()),
            "g12: norm group of 12 columns unsupported (a multiple of 8 dividing N, at most 128)");
}

TEST(Gemm, S3LaunchAndWorkspace) {
  GemmCase g = gemmCases()[0];
  auto k = emitGemm(g.spec);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->launch.grid[0] * 128u, 8192u);
  EXPECT_EQ(k->launch.grid[1] * 128u, 1024u);
  EXPECT_EQ(k->launch.grid[2], 1u);
  ASSERT_EQ(k->workspace.size(), 1u);
  EXPECT_EQ(k->workspace[0].init, WorkspaceNeed::Init::PlusInf);
  EXPECT_EQ(k->workspace[0].bytes, 4 * 1024);
  // The product is never written: only A, B, bias, gamma, beta and the row minimum move.
  EXPECT_DOUBLE_EQ(k->bytes, 4.0 * (1024.0 * 8192 + 8192.0 * 8192 + 8192 + 1024) + 8.0 * 8192);
  EXPECT_NE(k->source.find("constexpr bool kStoreOutput = false;"), std::string::npos);
  EXPECT_EQ(k->tileConfig, "128x128x32, 8 warps, 3 stages, 3xtf32, norm groups of 16");
}

/// The GEMM case named `name` (a test failure when there is none).
GemmCase gemmCase(const std::string &name) {
  for (const GemmCase &g : gemmCases())
    if (g.spec.kernelName == name)
      return g;
  ADD_FAILURE() << "no case " << name;
  return GemmCase{};
}

TEST(Gemm, WgmmaEngineCopiesThroughTmaUnlessBatched) {
  GemmSpec s3 = gemmCase("s3_linear_gn_min").spec;
  s3.wgmma = true;
  auto k = emitGemm(s3);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_NE(k->source.find("constexpr bool kTma = true;"), std::string::npos);
  ASSERT_EQ(k->launch.tensorMaps.size(), 2u);
  // A [1024, 8192] and B [8192, 8192], K innermost, 32-float boxes of the tile's rows.
  for (int i = 0; i < 2; ++i) {
    const TensorMapSpec &t = k->launch.tensorMaps[i];
    EXPECT_EQ(t.slot, i);
    EXPECT_EQ(t.rank, 2u);
    EXPECT_EQ(t.dims[0], 8192u);
    EXPECT_EQ(t.dims[1], i == 0 ? 1024u : 8192u);
    EXPECT_EQ(t.strides[0], 8192u * 4);
    EXPECT_EQ(t.box[0], 32u);
    EXPECT_EQ(t.box[1], 128u);
    EXPECT_TRUE(t.swizzle128);
  }
  EXPECT_NE(k->tileConfig.find("(TMA)"), std::string::npos) << k->tileConfig;

  GemmTile copies = chooseWgmmaTile(s3);
  copies.tma = false;
  auto c = emitGemm(s3, copies);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_NE(c->source.find("constexpr bool kTma = false;"), std::string::npos);
  EXPECT_TRUE(c->launch.tensorMaps.empty());

  GemmSpec tf32 = gemmCase("linear_8192_tf32").spec;
  tf32.wgmma = true;
  auto plain = emitGemm(tf32);
  ASSERT_TRUE(bool(plain)) << llvm::toString(plain.takeError());
  ASSERT_EQ(plain->launch.tensorMaps.size(), 2u);
  EXPECT_EQ(plain->launch.tensorMaps[1].box[1], 256u) << "B's box spans the 256-wide tile";
  EXPECT_NE(plain->source.find("constexpr int kGroupM = 16;"), std::string::npos)
      << "128 x 256 tiles in groups of 16 tile rows";
  EXPECT_NE(c->source.find("constexpr int kGroupM = 8;"), std::string::npos)
      << "128 x 128 tiles in groups of 8";

  GemmSpec batched = gemmCase("linear_batched_tf32").spec;
  batched.wgmma = true;
  ASSERT_TRUE(gemmFitsWgmma(batched));
  auto b = emitGemm(batched);
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  EXPECT_GT(b->launch.grid[2], 1u);
  EXPECT_NE(b->source.find("constexpr bool kTma = false;"), std::string::npos);
  EXPECT_TRUE(b->launch.tensorMaps.empty());
}

/// A matmul of `m` x `k` by `k` x `n` (B as [K, N]) in math mode `math`, for sm_90a.
GemmSpec matmulSpec(int64_t m, int64_t n, int64_t k, MathMode math = MathMode::Tf32x3) {
  GemmSpec s;
  s.kernelName = "mm";
  s.M = m;
  s.N = n;
  s.K = k;
  s.bTransposed = false;
  s.math = math;
  s.wgmma = true;
  return s;
}

TEST(Gemm, MatmulBTurnedKMajorWhereTheEnginePaysForTheCopy) {
  // Compute-bound products take the copy in both math modes (matmul_gn32_gelu_mean's).
  EXPECT_TRUE(gemmTransposesB(matmulSpec(4096, 2048, 4096)));
  EXPECT_TRUE(gemmTransposesB(matmulSpec(4096, 2048, 4096, MathMode::Tf32)));
  // Not without the engine, with K off 16-byte rows, for a vector B, or where B's copy costs
  // more than the engine saves (a few rows: the product streams B once anyway).
  GemmSpec sm80 = matmulSpec(4096, 2048, 4096);
  sm80.wgmma = false;
  EXPECT_FALSE(gemmTransposesB(sm80));
  EXPECT_FALSE(gemmTransposesB(matmulSpec(4096, 2048, 4098)));
  EXPECT_FALSE(gemmTransposesB(matmulSpec(4096, 1, 4096)));
  EXPECT_FALSE(gemmTransposesB(matmulSpec(8, 2048, 4096)));
  // A B whose elements pass 32-bit indices: outside the copy's grid.
  EXPECT_FALSE(gemmTransposesB(matmulSpec(4096, 65536, 65536)));
  GemmSpec linear = matmulSpec(4096, 2048, 4096);
  linear.bTransposed = true;
  EXPECT_FALSE(gemmTransposesB(linear));
  auto refused = emitGemmTranspose(linear);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()), "mm_bt: B is already [N, K]");

  // B broadcast over the outer batch dim and distinct over the inner one: two matrices.
  GemmSpec batched = gemmCase("matmul_batch2d_big").spec;
  batched.wgmma = true;
  auto k = emitGemmTranspose(batched);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(k->launch.grid[0], unsigned((200 + 31) / 32 * (384 / 32)));
  EXPECT_EQ(k->launch.grid[1], 2u);
  EXPECT_EQ(k->launch.block[0] * k->launch.block[1], 256u);
  ASSERT_EQ(k->workspace.size(), 1u);
  EXPECT_EQ(k->workspace[0].slot, 1);
  EXPECT_EQ(k->workspace[0].bytes, 4 * 2 * 200 * 384);
  EXPECT_DOUBLE_EQ(k->bytes, 2.0 * 4 * 2 * 200 * 384);
  EXPECT_EQ(nvrtcCompile(k->source, "sm_90a", true), "");
  EXPECT_EQ(nvrtcCompile(k->source, "sm_80"), "");
  // The product on the copy is a linear layer's on the engine, with the same batch strides.
  batched.bTransposed = true;
  ASSERT_TRUE(gemmFitsWgmma(batched));
  auto product = emitGemm(batched);
  ASSERT_TRUE(bool(product)) << llvm::toString(product.takeError());
  EXPECT_NE(product->tileConfig.find("wgmma"), std::string::npos) << product->tileConfig;
}

TEST(Gemm, RowMeanAddsEachBlocksSumOverN) {
  GemmSpec s = gemmCase("linear_norm_max_odd").spec;
  s.rowReduce = GemmSpec::RowReduce::Mean;
  auto k = emitGemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_NE(k->source.find("constexpr int kRowReduce = 3;"), std::string::npos);
  EXPECT_NE(k->source.find("constexpr float kRowReduceScale = 0.010416666"), std::string::npos)
      << "1 / 96";
  ASSERT_EQ(k->workspace.size(), 1u);
  EXPECT_EQ(k->workspace[0].init, WorkspaceNeed::Init::Zero);
  s.rowReduce = GemmSpec::RowReduce::Sum;
  auto sum = emitGemm(s);
  ASSERT_TRUE(bool(sum)) << llvm::toString(sum.takeError());
  EXPECT_NE(sum->source.find("constexpr float kRowReduceScale = 1"), std::string::npos);
}

TEST(Gemm, ClustersOfTwoShareTheBTileOrAreRefused) {
  GemmSpec tf32 = gemmCase("linear_8192_tf32").spec;
  tf32.wgmma = true;
  GemmTile t = chooseWgmmaTile(tf32);
  EXPECT_EQ(t.cluster, 1) << "the chooser keeps clusters off (measured no faster)";
  t.cluster = 2;
  ASSERT_TRUE(gemmClusterFits(tf32, t));
  auto k = emitGemm(tf32, t);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  // Each block of a pair copies half of the 256-row B tile, multicast to both; A stays whole.
  ASSERT_EQ(k->launch.tensorMaps.size(), 2u);
  EXPECT_EQ(k->launch.tensorMaps[0].box[1], 128u);
  EXPECT_EQ(k->launch.tensorMaps[1].box[1], 128u);
  EXPECT_NE(k->source.find("#define SINTER_GEMM_CLUSTER __cluster_dims__(2, 1, 1)"),
            std::string::npos);
  EXPECT_EQ(k->launch.grid[0] % 2, 0u);

  auto refused = [&](const GemmSpec &s, const GemmTile &tile, const std::string &what) {
    auto r = emitGemm(s, tile);
    ASSERT_FALSE(bool(r)) << s.kernelName << " " << what;
    std::string e = llvm::toString(r.takeError());
    EXPECT_NE(e.find(s.kernelName + ": clusters"), std::string::npos) << e;
  };
  GemmTile four = chooseWgmmaTile(tf32);
  four.cluster = 4;
  refused(tf32, four, "clusters of four");
  GemmSpec x3 = gemmCase("linear_8192_tf32x3").spec;
  x3.wgmma = true;
  GemmTile x3Tile = chooseWgmmaTile(x3);
  x3Tile.cluster = 2;
  EXPECT_FALSE(gemmClusterFits(x3, x3Tile));
  refused(x3, x3Tile, "3xTF32");
  GemmTile odd = chooseWgmmaTile(tf32);
  odd.cluster = 2;
  odd.groupM = 1; // row order: blocks 2i and 2i + 1 share A, not B
  EXPECT_FALSE(gemmClusterFits(tf32, odd));
  refused(tf32, odd, "row order");
  GemmSpec sync = tf32;
  sync.wgmma = false; // the mma.sync engine has no clusters
  GemmTile syncTile{128, 128, 32, 2, 4, 3};
  syncTile.cluster = 2;
  refused(sync, syncTile, "mma.sync");
}

TEST(Gemm, WideNormGroupsGetWholeWarps) {
  GemmSpec s;
  s.kernelName = "g64";
  s.M = 32;
  s.N = 128;
  s.K = 16;
  s.normGroupCols = 64;
  auto k = emitGemm(s);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  // 64-column groups on 64-wide tiles: one warp across, four down.
  EXPECT_NE(k->source.find("constexpr int kWarpsN = 1;"), std::string::npos);
  EXPECT_NE(k->source.find("constexpr int kWarpsM = 4;"), std::string::npos);
  EXPECT_EQ(nvrtcCompile(k->source, "sm_90a"), "");
}

// A softmax or log_softmax over the channels runs in the input-box engine's epilogue too: a
// 64-wide tile (two blocks an SM), a 128-wide one, a 3-D box and a 1-D row of 1000 (tiles
// in one row, the last partial), each compiled for sm_90a without spills or serialised
// wgmmas; what the engine cannot hold is refused.
TEST(ConvIgemm, ChannelSoftmaxCompilesOnTheInputBoxEngine) {
  auto spec = [](ConvSpec s, bool log) {
    s.wgmma = true;
    s.hasBias = true;
    s.epilogue = functor("relu");
    s.softmax = ConvChannelSoftmax{log, functor("affine")};
    return s;
  };
  const ConvSpec shapes[] = {convSpec("sm_2d_64", false, 2, 3, 16, 48, 1, {1, 21, 23}, {1, 3, 3},
                                      {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                             convSpec("sm_1d_128", false, 1, 3, 32, 128, 1, {1, 1, 40}, {1, 1, 5},
                                      {1, 1, 1}, {0, 0, 2}, {1, 1, 1}, MathMode::Tf32),
                             convSpec("sm_3d_32", false, 3, 2, 16, 32, 1, {7, 9, 10}, {3, 3, 3},
                                      {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                             convSpec("sm_1d_long", false, 1, 2, 16, 32, 1, {1, 1, 1000}, {1, 1, 7},
                                      {1, 1, 1}, {0, 0, 3}, {1, 1, 1}, MathMode::Tf32)};
  for (const ConvSpec &shape : shapes)
    for (bool log : {false, true}) {
      ConvSpec s = spec(shape, log);
      std::string why;
      ASSERT_TRUE(convIgemmRunsChannelTail(s, &why)) << s.kernelName << ": " << why;
      auto ks = emitConvIgemm(s);
      ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
      const KernelSource &k = ks->back();
      EXPECT_NE(k.source.find(std::string("constexpr int kSoftmax = ") + (log ? "2;" : "1;")),
                std::string::npos);
      EXPECT_NE(k.tileConfig.find(log ? "then a log_softmax over the channels"
                                      : "then a softmax over the channels"),
                std::string::npos)
          << k.tileConfig;
      int registers = 0;
      EXPECT_EQ(nvrtcCompile(k.source, "sm_90a", true, &registers), "")
          << s.kernelName << (log ? " log_softmax" : " softmax");
    }
  // The 1-D row of 1000 takes one-row tiles, eight a row (the last of 104 positions), and a
  // box of 128 + 6 columns instead of the whole row.
  auto ks = emitConvIgemm(spec(shapes[3], false));
  ASSERT_TRUE(bool(ks));
  EXPECT_NE(ks->back().source.find("constexpr bool kRowTiles = true;"), std::string::npos);
  EXPECT_NE(ks->back().tileConfig.find("input box 1x1x136"), std::string::npos)
      << ks->back().tileConfig;
  EXPECT_EQ(ks->back().launch.grid[0], 2u * 8u);
  // Refused: two groups, more channels than a tile holds, statistics, a pool beside it.
  ConvSpec grouped = spec(convSpec("sm_g2", false, 2, 3, 16, 64, 2, {1, 21, 23}, {1, 3, 3},
                                   {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                          false);
  std::string why;
  EXPECT_FALSE(convIgemmRunsChannelTail(grouped, &why));
  EXPECT_EQ(why, "the softmax spans the convolution's groups");
  EXPECT_FALSE(bool(emitConvIgemm(grouped)));
  ConvSpec wide = spec(convSpec("sm_192", false, 2, 3, 16, 192, 1, {1, 21, 23}, {1, 3, 3},
                                {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                       true);
  EXPECT_FALSE(convIgemmRunsChannelTail(wide, &why));
  EXPECT_EQ(why, "192 channels span more than one 128-channel tile");
  auto refused = emitConvIgemm(wide);
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("takes a softmax over the channels only on"),
            std::string::npos);
  ConvSpec stats = spec(shapes[0], false);
  stats.accumulateStats = true;
  EXPECT_FALSE(bool(emitConvIgemm(stats)));
  ConvSpec pooled = spec(shapes[0], false);
  pooled.pool = ConvPoolTail();
  EXPECT_FALSE(bool(emitConvIgemm(pooled)));
}

// An epilogue that reads a tensor of the output's shape (a residual input) works its values
// out before it stores them, without branches: on the input-box engine (two blocks an SM,
// alternating warpgroups, with statistics: the 3-D one with its tile forced, since its boxes
// send it to conv_shift) and on conv_shift's storing warpgroups (strided transposed
// convolutions, 2-D and 3-D); conv_shift's plain stores of a box-bound 3-D one read it per
// element. Each compiles for sm_90a without spills or serialised wgmmas.
TEST(ConvIgemm, EpiloguesThatReadTensorsCompileWithoutSpills) {
  struct Case {
    ConvSpec spec;
    const char *templ;
    const char *tile;
  };
  auto residual = [](ConvSpec s, bool stats) {
    s.wgmma = true;
    s.hasBias = true;
    s.accumulateStats = stats;
    const int64_t vol = s.out[0] * s.out[1] * s.out[2];
    s.epilogue.code = "return v + __ldg(static_cast<const float *>(b.p[8]) + ((sinter::i64)n * " +
                      std::to_string(s.Cout * vol) + "LL + (sinter::i64)c * " +
                      std::to_string(vol) + "LL + s));";
    return s;
  };
  const Case cases[] = {
      {residual(convSpec("rd_2d_64", false, 2, 2, 32, 64, 1, {1, 128, 128}, {1, 3, 3}, {1, 1, 1},
                         {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                false),
       "conv_igemm.cuh", "2 blocks/SM"},
      {residual(convSpec("rd_2d_128", false, 2, 4, 64, 128, 1, {1, 64, 64}, {1, 3, 3}, {1, 1, 1},
                         {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                false),
       "conv_igemm.cuh", "alternating"},
      {residual(convSpec("rd_3d_stats", false, 3, 2, 32, 64, 1, {8, 16, 16}, {3, 3, 3}, {1, 1, 1},
                         {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                true),
       "conv_igemm.cuh", "input box"},
      {residual(convSpec("rd_3d_shift", false, 3, 2, 32, 64, 1, {8, 16, 16}, {3, 3, 3}, {1, 1, 1},
                         {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                true),
       "conv_shift.cuh", "each stage the 3 W taps' rows in one box"},
      {residual(convSpec("rd_t3d_s2", true, 3, 16, 32, 64, 1, {16, 16, 16}, {3, 3, 3}, {2, 2, 2},
                         {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                false),
       "conv_shift.cuh", "output lines staged"},
      {residual(convSpec("rd_t2d_s2", true, 2, 2, 128, 64, 1, {1, 32, 32}, {1, 3, 3}, {1, 2, 2},
                         {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                false),
       "conv_shift.cuh", "output lines staged"}};
  for (const Case &c : cases) {
    const std::optional<ConvIgemmTile> inputBox =
        std::string(c.templ) == "conv_igemm.cuh" && convShiftTile(c.spec) ? convWgmmaTile(c.spec)
                                                                          : std::nullopt;
    auto ks = inputBox ? emitConvIgemm(c.spec, *inputBox) : emitConvIgemm(c.spec);
    ASSERT_TRUE(bool(ks)) << c.spec.kernelName << ": " << llvm::toString(ks.takeError());
    const KernelSource &k = ks->back();
    EXPECT_EQ(k.templateName, c.templ) << c.spec.kernelName;
    EXPECT_NE(k.tileConfig.find(c.tile), std::string::npos)
        << c.spec.kernelName << ": " << k.tileConfig;
    EXPECT_NE(k.source.find("constexpr bool kEpilogueReadsTensors = true;"), std::string::npos)
        << c.spec.kernelName;
    EXPECT_EQ(nvrtcCompile(k.source, "sm_90a", true), "") << c.spec.kernelName;
  }
}

// A reduction over the channels runs in the input-box engine's epilogue: every kind on a
// 64-wide tile (two blocks an SM), a 128-wide one and a 3-D box, each compiled for sm_90a
// without spills or serialised wgmmas; what the engine cannot hold is refused.
TEST(ConvIgemm, ChannelReductionsCompileOnTheInputBoxEngine) {
  using Kind = ConvChannelReduce::Kind;
  auto spec = [](ConvSpec s, Kind kind) {
    s.wgmma = true;
    s.hasBias = true;
    s.epilogue = functor("relu");
    s.channelReduce = ConvChannelReduce{kind, functor("affine")};
    return s;
  };
  const ConvSpec shapes[] = {convSpec("cr_2d_64", false, 2, 3, 16, 48, 1, {1, 21, 23}, {1, 3, 3},
                                      {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                             convSpec("cr_1d_128", false, 1, 3, 32, 128, 1, {1, 1, 40}, {1, 1, 5},
                                      {1, 1, 1}, {0, 0, 2}, {1, 1, 1}, MathMode::Tf32),
                             convSpec("cr_3d_32", false, 3, 2, 16, 32, 1, {7, 9, 10}, {3, 3, 3},
                                      {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, MathMode::Tf32)};
  for (const ConvSpec &shape : shapes)
    for (Kind kind : {Kind::Sum, Kind::Mean, Kind::Max, Kind::Min, Kind::LogSumExp}) {
      ConvSpec s = spec(shape, kind);
      std::string why;
      ASSERT_TRUE(convIgemmRunsChannelTail(s, &why)) << s.kernelName << ": " << why;
      auto ks = emitConvIgemm(s);
      ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
      const KernelSource &k = ks->back();
      EXPECT_NE(k.source.find(
                    "constexpr int kCReduce = " + std::to_string(channelFoldConstant(kind)) + ";"),
                std::string::npos);
      // Only the reduced tensor is written.
      EXPECT_NE(k.tileConfig.find(std::string("then a ") + reductionName(kind)),
                std::string::npos)
          << k.tileConfig;
      int registers = 0;
      EXPECT_EQ(nvrtcCompile(k.source, "sm_90a", true, &registers), "")
          << s.kernelName << " " << reductionName(kind);
    }
  // Refused: two groups, more channels than a tile holds, no wgmma, statistics.
  ConvSpec grouped = spec(convSpec("cr_g2", false, 2, 3, 16, 64, 2, {1, 21, 23}, {1, 3, 3},
                                   {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                          Kind::Max);
  std::string why;
  EXPECT_FALSE(convIgemmRunsChannelTail(grouped, &why));
  EXPECT_EQ(why, "the reduction spans the convolution's groups");
  EXPECT_FALSE(bool(emitConvIgemm(grouped)));
  ConvSpec wide = spec(convSpec("cr_192", false, 2, 3, 16, 192, 1, {1, 21, 23}, {1, 3, 3},
                                {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                       Kind::Sum);
  EXPECT_FALSE(convIgemmRunsChannelTail(wide, &why));
  EXPECT_EQ(why, "192 channels span more than one 128-channel tile");
  auto refused = emitConvIgemm(wide);
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("reduces over the channels only on"),
            std::string::npos);
  ConvSpec sm80 = spec(shapes[0], Kind::Min);
  sm80.wgmma = false;
  EXPECT_FALSE(convIgemmRunsChannelTail(sm80, &why));
  EXPECT_FALSE(bool(emitConvIgemm(sm80)));
  ConvSpec stats = spec(shapes[0], Kind::Min);
  stats.accumulateStats = true;
  EXPECT_FALSE(bool(emitConvIgemm(stats)));
  // conv_mma refuses it (conv_direct in FFMA runs it: DirectKernelsTest).
  ConvSpec mma = spec(shapes[0], Kind::Sum);
  EXPECT_FALSE(bool(emitConvDirect(mma)));
  // A strided transposed convolution of conv_shift's phase walk leaves it for the input-box
  // engine's phase kernels with a reduction over the channels, not with a softmax.
  ConvSpec phased = spec(convSpec("cr_t2d_s2", true, 2, 2, 64, 128, 1, {1, 9, 11}, {1, 3, 3},
                                  {1, 2, 2}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                         Kind::Min);
  ConvSpec plain = phased;
  plain.channelReduce.reset();
  ASSERT_TRUE(convShiftTile(plain).has_value());
  EXPECT_TRUE(convIgemmRunsChannelTail(phased, &why)) << why;
  auto ks = emitConvIgemm(phased);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  EXPECT_EQ(ks->size(), 5u); // the pack kernel and one a phase
  EXPECT_EQ(ks->back().templateName, "conv_igemm.cuh");
  EXPECT_NE(ks->back().tileConfig.find("then a min"), std::string::npos);
  ConvSpec softmax = plain;
  softmax.softmax = ConvChannelSoftmax{};
  EXPECT_FALSE(convIgemmRunsChannelTail(softmax, &why));
  EXPECT_EQ(why, "the convolution runs on conv_shift, which does not take a softmax over the "
                 "channels");
}

// The input-box engine copies its weight stages by TMA where a tile has at least 4 of them:
// one 3-D map over conv_pack.cuh's rows ([kernel x group][output channel][k], 32 x bn x 1
// boxes, 128-byte swizzle), so that rows past a group's channels read zeros and each phase's
// kernel starts at its own groups. A tile of 3 stages (8 input channels x 3 x 3) keeps the
// producer's copies and a one-parameter kernel.
TEST(ConvIgemm, InputBoxEngineTakesWeightStagesByTmaFromFourStagesATile) {
  auto wgmma = [](ConvSpec s) {
    s.wgmma = true;
    return s;
  };
  auto minOverChannels = [](ConvSpec s) {
    s.channelReduce = ConvChannelReduce{ConvChannelReduce::Kind::Min, functor("affine")};
    return s;
  };
  struct Case {
    ConvSpec spec;
    uint64_t kPad, coutG, planes;
  };
  const Case cases[] = {
      // 64 -> 128: two 32-channel chunks of 9 taps x 4 steps, 9 stages each.
      {wgmma(convSpec("tma_64x128", false, 2, 2, 64, 128, 1, {1, 40, 40}, {1, 3, 3}, {1, 1, 1},
                      {0, 1, 1}, {1, 1, 1}, MathMode::Tf32)),
       576, 128, 1},
      // Two groups of 64 -> 48: 48-row tiles of a 64-wide tile read zeros past the group.
      {wgmma(convSpec("tma_g2", false, 2, 2, 128, 96, 2, {1, 24, 40}, {1, 3, 3}, {1, 1, 1},
                      {0, 1, 1}, {1, 1, 1}, MathMode::Tf32)),
       576, 48, 2},
      // A stride-2 transposed 4x4 with a min over the channels (which keeps it off
      // conv_shift): four phase kernels of 2 x 2 taps, their rows one after another.
      {minOverChannels(wgmma(convSpec("tma_phased", true, 2, 2, 64, 128, 1, {1, 20, 20}, {1, 4, 4},
                                      {1, 2, 2}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32))),
       256, 128, 4},
  };
  for (const Case &c : cases) {
    auto ks = emitConvIgemm(c.spec);
    ASSERT_TRUE(bool(ks)) << c.spec.kernelName << ": " << llvm::toString(ks.takeError());
    int products = 0;
    for (const KernelSource &k : *ks) {
      if (k.name.find("_pack") != std::string::npos)
        continue;
      const int i = products++;
      ASSERT_NE(k.tileConfig.find("wgmma"), std::string::npos) << k.name << ": " << k.tileConfig;
      EXPECT_NE(k.tileConfig.find("weight stages by TMA"), std::string::npos) << k.tileConfig;
      EXPECT_NE(k.source.find("#define SINTER_CONV_TMA_B 1"), std::string::npos) << k.name;
      EXPECT_NE(
          k.source.find(" kBBase = " + std::to_string(i * c.spec.Cout * int64_t(c.kPad)) + ";"),
          std::string::npos)
          << k.name;
      ASSERT_EQ(k.launch.tensorMaps.size(), 1u) << k.name;
      const TensorMapSpec &t = k.launch.tensorMaps[0];
      EXPECT_EQ(t.slot, kConvPackSlot);
      EXPECT_EQ(t.rank, 3u);
      EXPECT_EQ(t.dims[0], c.kPad) << k.name;
      EXPECT_EQ(t.dims[1], c.coutG);
      EXPECT_EQ(t.dims[2], c.planes);
      EXPECT_EQ(t.strides[0], c.kPad * 4);
      EXPECT_EQ(t.strides[1], c.coutG * c.kPad * 4);
      EXPECT_EQ(t.box[0], 32u);
      EXPECT_EQ(t.box[2], 1u);
      EXPECT_NE(k.tileConfig.find("x" + std::to_string(t.box[1]) + "x32"), std::string::npos)
          << k.tileConfig;
      EXPECT_TRUE(t.swizzle128);
      EXPECT_EQ(nvrtcCompile(k.source, "sm_90a"), "") << k.name;
    }
    EXPECT_EQ(products, c.spec.transposed ? 4 : 1) << c.spec.kernelName;
  }
  auto copies =
      emitConvIgemm(wgmma(convSpec("copies_8x64", false, 2, 2, 8, 64, 1, {1, 40, 40}, {1, 3, 3},
                                   {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32)));
  ASSERT_TRUE(bool(copies)) << llvm::toString(copies.takeError());
  const KernelSource &k = copies->back();
  ASSERT_NE(k.tileConfig.find("wgmma"), std::string::npos) << k.tileConfig;
  EXPECT_EQ(k.tileConfig.find("by TMA"), std::string::npos) << k.tileConfig;
  EXPECT_EQ(k.source.find("SINTER_CONV_TMA_B"), std::string::npos);
  EXPECT_TRUE(k.launch.tensorMaps.empty());
  EXPECT_EQ(nvrtcCompile(k.source, "sm_90a"), "");
}

// A pool whose windows tile the output runs in the input-box engine's epilogue, on tiles of
// whole windows: 2x2 on 64- and 128-wide tiles (ceil and floor mode), 4x4, 4x2, 2x1, a 1-D
// window of 8, a 3-D convolution's 1x2x2 windows and a grouped convolution, each compiled for
// sm_90a without spills or serialised wgmmas; what its tiles cannot hold is refused.
TEST(ConvIgemm, PoolsCompileOnTheInputBoxEngine) {
  auto pooled = [](ConvSpec s, bool max, std::array<int64_t, 3> window, bool ceil) {
    s.wgmma = true;
    s.hasBias = true;
    s.epilogue = functor("relu");
    ConvPoolTail p;
    p.max = max;
    p.window = window;
    for (int d = 0; d < 3; ++d)
      p.out[d] = ceil ? (s.out[d] + window[d] - 1) / window[d] : s.out[d] / window[d];
    p.post = functor("affine");
    s.pool = p;
    return s;
  };
  auto conv2d = [](const char *name, int64_t cin, int64_t cout, int64_t groups, int64_t h,
                   int64_t w, int64_t pad) {
    return convSpec(name, false, 2, 2, cin, cout, groups, {1, h, w}, {1, 3, 3}, {1, 1, 1},
                    {0, pad, pad}, {1, 1, 1}, MathMode::Tf32);
  };
  struct Case {
    ConvSpec spec;
    const char *tile;
  };
  const Case cases[] = {
      {pooled(conv2d("pl_64_max2_ceil", 16, 48, 1, 21, 23, 1), true, {1, 2, 2}, true),
       "then a max pool 2x2 on 4x32 tiles"},
      {pooled(conv2d("pl_128_avg2", 16, 128, 1, 20, 22, 1), false, {1, 2, 2}, false),
       "then an average pool 2x2 on 4x32 tiles"},
      {pooled(conv2d("pl_avg4", 16, 64, 1, 30, 34, 0), false, {1, 4, 4}, false),
       "input box 1x6x36 per 16 channels"},
      {pooled(conv2d("pl_max4x2_ceil", 16, 64, 1, 23, 21, 1), true, {1, 4, 2}, true),
       "then a max pool 4x2 on 4x32 tiles"},
      {pooled(conv2d("pl_max2x1", 16, 64, 1, 21, 23, 1), true, {1, 2, 1}, false),
       "then a max pool 2x1"},
      {pooled(convSpec("pl_1d_max8_ceil", false, 1, 3, 32, 128, 1, {1, 1, 100}, {1, 1, 5},
                       {1, 1, 1}, {0, 0, 2}, {1, 1, 1}, MathMode::Tf32),
              true, {1, 1, 8}, true),
       "then a max pool 1x8 on 1x128 tiles"},
      {pooled(convSpec("pl_3d_1x2x2", false, 3, 2, 16, 32, 1, {6, 9, 10}, {3, 3, 3}, {1, 1, 1},
                       {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
              false, {1, 2, 2}, false),
       "then an average pool 2x2"},
      {pooled(conv2d("pl_g2_avg2_ceil", 32, 64, 2, 19, 21, 1), false, {1, 2, 2}, true),
       "then an average pool 2x2"}};
  for (const Case &c : cases) {
    std::string why;
    ASSERT_TRUE(convIgemmRunsPool(c.spec, &why)) << c.spec.kernelName << ": " << why;
    auto ks = emitConvIgemm(c.spec);
    ASSERT_TRUE(bool(ks)) << c.spec.kernelName << ": " << llvm::toString(ks.takeError());
    const KernelSource &k = ks->back();
    EXPECT_EQ(k.templateName, "conv_igemm.cuh") << c.spec.kernelName;
    EXPECT_NE(k.tileConfig.find(c.tile), std::string::npos)
        << c.spec.kernelName << ": " << k.tileConfig;
    EXPECT_NE(
        k.source.find(std::string("constexpr int kPoolKind = ") + (c.spec.pool->max ? "1;" : "2;")),
        std::string::npos);
    // The 3-D case runs two blocks an SM at 80 registers, where the engine's 3-D boxes
    // spill a few bytes with or without a pool (a plain 8 -> 32 3x3x3 convolution: 4 bytes):
    // compiled without the spill check.
    const bool threeD = c.spec.spatialDims == 3;
    EXPECT_EQ(nvrtcCompile(k.source, "sm_90a", !threeD), "") << c.spec.kernelName;
  }
  // 4x4 windows of a 28 x 32 output: 4 x 32 tiles (8 x 16 would take 8 a plane), 7 a plane,
  // 2 images.
  auto ks = emitConvIgemm(cases[2].spec);
  ASSERT_TRUE(bool(ks));
  EXPECT_EQ(ks->back().launch.grid[0], 14u);
  // Only the pooled tensor is written.
  EXPECT_DOUBLE_EQ(ks->back().bytes, 4.0 * (2 * 16 * 30 * 34 + 64 * 16 * 9 + 64 + 2 * 64 * 7 * 8));
  // Refused, with the reason: windows of 3 rows, 16 columns, 2 depths; a strided transposed
  // convolution's phases; no wgmma; statistics.
  auto refused = [&](ConvSpec s, const std::string &reason) {
    std::string why;
    EXPECT_FALSE(convIgemmRunsPool(s, &why)) << s.kernelName;
    EXPECT_EQ(why, reason) << s.kernelName;
    auto r = emitConvIgemm(s);
    ASSERT_FALSE(bool(r)) << s.kernelName;
    EXPECT_NE(llvm::toString(r.takeError()).find(s.kernelName + ": conv_igemm cannot pool"),
              std::string::npos);
  };
  refused(pooled(conv2d("pl_rows3", 16, 64, 1, 21, 23, 1), true, {1, 3, 3}, false),
          "the input-box engine's pool tiles hold windows of 1, 2 or 4 rows, not 3");
  refused(pooled(conv2d("pl_cols16", 16, 64, 1, 21, 40, 1), true, {1, 1, 16}, false),
          "the input-box engine's pool tiles hold windows of 1 row and up to 8 columns (a "
          "power of two), not 16");
  refused(pooled(conv2d("pl_cols8", 16, 64, 1, 21, 40, 1), true, {1, 4, 8}, false),
          "the input-box engine's pool tiles hold windows of 4 rows and up to 4 columns (a "
          "power of two), not 8");
  refused(pooled(convSpec("pl_3d_depth2", false, 3, 2, 16, 32, 1, {6, 9, 10}, {3, 3, 3}, {1, 1, 1},
                          {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                 true, {2, 2, 2}, false),
          "the input-box engine's tiles lie in one output depth, and the pool's windows span 2");
  refused(pooled(convSpec("pl_t2d_s2", true, 2, 2, 64, 128, 1, {1, 9, 11}, {1, 3, 3}, {1, 2, 2},
                          {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                 true, {1, 2, 2}, false),
          "a strided transposed convolution runs by output phase, and a window spans phases");
  // A strided direct convolution runs on the engine, but not with its pool.
  refused(pooled(convSpec("pl_s2", false, 2, 2, 16, 64, 1, {1, 21, 23}, {1, 3, 3}, {1, 2, 2},
                          {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                 true, {1, 2, 2}, false),
          "a strided direct convolution (its pool tiles on the input-box engine are not "
          "measured)");
  ConvSpec sm80 = cases[0].spec;
  sm80.kernelName = "pl_sm80";
  sm80.wgmma = false;
  refused(sm80, "the convolution stays on mma.sync (the target has no wgmma (sm_90a)), which "
                "does not pool in its kernel");
  ConvSpec stats = cases[0].spec;
  stats.kernelName = "pl_stats";
  stats.accumulateStats = true;
  refused(stats, "the pool would follow a tail over the channels or statistics");
}

class ConvCompile : public ::testing::TestWithParam<size_t> {};
TEST_P(ConvCompile, NvrtcSm90aAndSm80) {
  ConvCase c = convCases()[GetParam()];
  auto ks = emitConvIgemm(c.spec);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  for (const KernelSource &k : *ks) {
    EXPECT_EQ(nvrtcCompile(k.source, "sm_90a"), "") << k.name;
    EXPECT_EQ(nvrtcCompile(k.source, "sm_80"), "") << k.name;
  }
}
INSTANTIATE_TEST_SUITE_P(AllCases, ConvCompile, ::testing::Range(size_t(0), convCases().size()));

class GemmCompile : public ::testing::TestWithParam<size_t> {};
TEST_P(GemmCompile, NvrtcSm90aAndSm80) {
  GemmCase g = gemmCases()[GetParam()];
  auto k = emitGemm(g.spec);
  ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
  EXPECT_EQ(nvrtcCompile(k->source, "sm_90a"), "") << g.spec.kernelName;
  EXPECT_EQ(nvrtcCompile(k->source, "sm_80"), "") << g.spec.kernelName;
}
INSTANTIATE_TEST_SUITE_P(AllCases, GemmCompile, ::testing::Range(size_t(0), gemmCases().size()));

// Every conv case that fits the input-box wgmma engine compiles on it for sm_90a, on the
// chosen tile and on every other width and stage count the chooser can pick; cases that do
// not fit say why.
class WgmmaConvCompile : public ::testing::TestWithParam<size_t> {};
TEST_P(WgmmaConvCompile, EveryTileNvrtcSm90a) {
  ConvCase c = convCases()[GetParam()];
  c.spec.wgmma = true;
  c.spec.math = MathMode::Tf32;
  std::string why;
  auto chosen = convWgmmaTile(c.spec, &why);
  if (!chosen) {
    EXPECT_FALSE(why.empty());
    GTEST_SKIP() << c.spec.kernelName << ": " << why;
  }
  auto ks = emitConvIgemm(c.spec);
  ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
  const std::string pack = ks->front().templateName;
  EXPECT_TRUE(pack == "conv_pack.cuh" || pack == "conv_shift_rows.cuh") << pack;
  for (const KernelSource &k : *ks) {
    if (k.templateName != pack && k.templateName != "conv_stage.cuh") {
      EXPECT_NE(k.tileConfig.find("wgmma"), std::string::npos) << k.tileConfig;
    }
    EXPECT_EQ(nvrtcCompile(k.source, "sm_90a"), "") << k.name;
  }
  // A kernel at two blocks an SM: the engine's own tile where it takes two (below), and the
  // forced tiles after it.
  auto checkTwoBlocks = [](const KernelSource &k) {
    EXPECT_EQ(k.launch.persistentPerSm, 2u) << k.name;
    // At two blocks the consumers take the producer's registers (setmaxnreg 48 / 96), which
    // adds up only if the block launches with the 80 a thread that two blocks of 384 threads
    // allow: with fewer the consumers' request would wait for ever. Their wgmmas must not be
    // serialised; the producer's 3-D box addressing may spill a few bytes at 48
    // (docs/kernels-tensorcore.md, "Fifteenth session").
    int registers = 0;
    EXPECT_EQ(nvrtcCompile(k.source, "sm_90a", true, &registers, true), "")
        << k.name << " " << k.tileConfig;
    EXPECT_EQ(registers, 80) << k.name << " " << k.tileConfig;
  };
  // Alternating warpgroups: the consumers take the producer's registers (setmaxnreg 72 /
  // 216), which adds up only if the block launches with the 168 a thread that one block of
  // 384 threads allows. No spills, no serialised wgmmas.
  auto checkPingpong = [](const KernelSource &k) {
    EXPECT_EQ(k.launch.persistentPerSm, 1u) << k.name;
    EXPECT_EQ(k.launch.block[0], 384u) << k.name;
    EXPECT_NE(k.tileConfig.find("2 alternating+1 warpgroups"), std::string::npos) << k.tileConfig;
    int registers = 0;
    EXPECT_EQ(nvrtcCompile(k.source, "sm_90a", true, &registers), "")
        << k.name << " " << k.tileConfig;
    EXPECT_EQ(registers, 168) << k.name << " " << k.tileConfig;
  };
  if (chosen->minBlocks == 2 || chosen->pingpong) {
    auto own = emitConvIgemm(c.spec, *chosen);
    ASSERT_TRUE(bool(own)) << llvm::toString(own.takeError());
    for (const KernelSource &k : *own)
      if (k.templateName == "conv_igemm.cuh") {
        if (chosen->pingpong)
          checkPingpong(k);
        else
          checkTwoBlocks(k);
      }
  }
  // Modes: 0 both consumer warpgroups on each tile (the planner takes it only under a
  // reduction over the channels: one stage count), 1 alternating, 2 two blocks an SM.
  for (int bn : {64, 128})
    for (int stages : {3, 6})
      for (int mode : {0, 1, 2}) {
        if (mode == 0 && stages != 3)
          continue;
        const int blocks = mode == 2 ? 2 : 1;
        ConvIgemmTile t = *chosen;
        t.bn = bn;
        t.stages = stages;
        t.minBlocks = blocks;
        t.pingpong = mode == 1;
        t.warpsM = mode == 1 ? 4 : 8;
        auto forced = emitConvIgemm(c.spec, t);
        if (blocks == 2 && bn != 64) { // two blocks an SM leave too few registers
          EXPECT_FALSE(bool(forced)) << c.spec.kernelName;
          if (!forced) {
            EXPECT_NE(llvm::toString(forced.takeError()).find("at most 64 channels wide"),
                      std::string::npos);
          }
          continue;
        }
        if (!forced) { // only a box too large for shared memory is refused
          std::string e = llvm::toString(forced.takeError());
          EXPECT_NE(e.find("does not fit shared memory"), std::string::npos) << e;
          continue;
        }
        for (const KernelSource &k : *forced) {
          if (k.templateName == "conv_igemm.cuh" && blocks == 2)
            checkTwoBlocks(k);
          else if (k.templateName == "conv_igemm.cuh" && t.pingpong)
            checkPingpong(k);
          else
            EXPECT_EQ(nvrtcCompile(k.source, "sm_90a"), "") << k.name << " " << k.tileConfig;
        }
      }
  // Alternating warpgroups are refused where they cannot run: two blocks an SM, 256 columns.
  for (auto [bn, blocks] : {std::pair{256, 1}, std::pair{64, 2}}) {
    ConvIgemmTile t = *chosen;
    t.bn = bn;
    t.minBlocks = blocks;
    t.pingpong = true;
    t.warpsM = 4;
    auto refused = emitConvIgemm(c.spec, t);
    EXPECT_FALSE(bool(refused)) << c.spec.kernelName;
    if (!refused) {
      EXPECT_NE(llvm::toString(refused.takeError()).find("alternating warpgroups one block"),
                std::string::npos);
    }
  }
}
INSTANTIATE_TEST_SUITE_P(AllCases, WgmmaConvCompile,
                         ::testing::Range(size_t(0), convCases().size()));

TEST(WgmmaConvTile, NarrowGroupsTakeTheNarrowestWidthThatHoldsThem) {
  // 8-, 16- and 32-wide tiles (wgmma m64n8/16/32) for groups of up to 8, 16 and 32 channels,
  // 64 up to 64, then 128. A narrower tile reads the same boxes and weight rows.
  for (auto [cout, bn] : {std::pair{5, 8}, std::pair{8, 8}, std::pair{12, 16}, std::pair{16, 16},
                          std::pair{24, 32}, std::pair{32, 32}, std::pair{48, 64},
                          std::pair{64, 64}, std::pair{96, 128}, std::pair{256, 128}}) {
    ConvSpec s = convSpec("w", false, 2, 2, 64, cout, 1, {1, 20, 24}, {1, 3, 3}, {1, 1, 1},
                          {0, 1, 1}, {1, 1, 1}, MathMode::Tf32);
    s.wgmma = true;
    auto t = convWgmmaTile(s);
    ASSERT_TRUE(t.has_value()) << cout;
    EXPECT_EQ(t->bn, bn) << cout << " channels";
  }
}

TEST(WgmmaConvTile, EveryNarrowWidthCompilesInBothLaunchModes) {
  // The deep 8-channel case forced onto each narrow width, alternating warpgroups (one block
  // an SM, 168 registers) and two blocks an SM (80): no spills, no serialised wgmmas.
  ConvCase c;
  for (const ConvCase &k : convCases())
    if (k.spec.kernelName == "narrow8_conv2d_deep")
      c = k;
  ASSERT_EQ(c.spec.kernelName, "narrow8_conv2d_deep");
  c.spec.wgmma = true;
  auto chosen = convWgmmaTile(c.spec);
  ASSERT_TRUE(chosen.has_value());
  for (int bn : {8, 16, 32})
    for (bool two : {false, true}) {
      ConvIgemmTile t = *chosen;
      t.bn = bn;
      t.minBlocks = two ? 2 : 1;
      t.stages = two ? 4 : 6;
      t.pingpong = !two;
      t.warpsM = two ? 8 : 4;
      auto ks = emitConvIgemm(c.spec, t);
      ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
      for (const KernelSource &k : *ks) {
        if (k.templateName != "conv_igemm.cuh")
          continue;
        EXPECT_NE(k.tileConfig.find("128x" + std::to_string(bn) + "x32"), std::string::npos)
            << k.tileConfig;
        int registers = 0;
        EXPECT_EQ(nvrtcCompile(k.source, "sm_90a", true, &registers, two), "")
            << k.name << " " << k.tileConfig;
        EXPECT_EQ(registers, two ? 80 : 168) << k.tileConfig;
      }
    }
  // Widths wgmma has no instruction for are refused.
  ConvIgemmTile odd = *chosen;
  odd.bn = 24;
  auto refused = emitConvIgemm(c.spec, odd);
  ASSERT_FALSE(bool(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("128 x 8/16/32/64/128/256"),
            std::string::npos);
}

// Every case that fits the wgmma engine, on every tile the chooser can pick and with and
// on every launch (GemmLaunch), compiles for sm_90a without spilling and without ptxas
// serialising its wgmmas (its resource report is read).
class WgmmaGemmCompile : public ::testing::TestWithParam<size_t> {};
TEST_P(WgmmaGemmCompile, EveryTileNvrtcSm90a) {
  GemmCase g = gemmCases()[GetParam()];
  g.spec.wgmma = true;
  if (!gemmFitsWgmma(g.spec))
    GTEST_SKIP() << g.spec.kernelName << " does not fit the wgmma engine";
  auto chosen = emitGemm(g.spec);
  ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
  EXPECT_NE(chosen->tileConfig.find("wgmma"), std::string::npos) << chosen->tileConfig;
  EXPECT_EQ(nvrtcCompile(chosen->source, "sm_90a", true), "") << chosen->tileConfig;
  for (GemmTile t : wgmmaTiles(g.spec.math))
    for (GemmLaunch launch :
         {GemmLaunch::Persistent, GemmLaunch::TilesThenStreamK, GemmLaunch::BlockPerTile}) {
      t.launch = launch;
      auto k = emitGemm(g.spec, t);
      if (!k) { // a tile that cannot hold the norm groups is refused, never miscompiled
        std::string e = llvm::toString(k.takeError());
        EXPECT_NE(e.find("not one the engine runs"), std::string::npos) << e;
        continue;
      }
      int registers = 0;
      EXPECT_EQ(nvrtcCompile(k->source, "sm_90a", true, &registers), "")
          << g.spec.kernelName << " " << k->tileConfig;
      // Two consumer warpgroups take the producer's registers (setmaxnreg 40 / 232) in
      // 3xTF32 and wherever a schedule deals the tiles (persistent, or whole tiles then the
      // stream-K blocks), which only adds up if the block launches with the 168 a thread that
      // 384 threads allow: with fewer the consumers' request would wait for ever. A TF32
      // kernel of one tile a block does without.
      const bool scheduled = k->tileConfig.find(", persistent") != std::string::npos ||
                             k->tileConfig.find(", block per tile") != std::string::npos;
      const bool shifts = g.spec.math == MathMode::Tf32x3 || scheduled;
      if (t.bm == 128 && shifts) {
        EXPECT_EQ(registers, 168) << g.spec.kernelName << " " << k->tileConfig;
      }
      // The same tile in clusters of two, where the product allows them.
      GemmTile clustered = t;
      clustered.cluster = 2;
      auto kc = emitGemm(g.spec, clustered);
      if (gemmClusterFits(g.spec, clustered)) {
        ASSERT_TRUE(bool(kc)) << llvm::toString(kc.takeError());
        EXPECT_NE(kc->tileConfig.find(", clusters of 2"), std::string::npos) << kc->tileConfig;
        EXPECT_NE(kc->source.find("__cluster_dims__(2, 1, 1)"), std::string::npos);
        EXPECT_EQ(kc->launch.grid[0] % 2, 0u) << kc->tileConfig;
        EXPECT_EQ(nvrtcCompile(kc->source, "sm_90a", true), "")
            << g.spec.kernelName << " " << kc->tileConfig;
      } else {
        ASSERT_FALSE(bool(kc)) << g.spec.kernelName << " " << t.bm << "x" << t.bn;
        EXPECT_NE(llvm::toString(kc.takeError()).find("clusters of 2 unsupported (only clusters"),
                  std::string::npos);
      }
    }
}
INSTANTIATE_TEST_SUITE_P(AllCases, WgmmaGemmCompile,
                         ::testing::Range(size_t(0), gemmCases().size()));

/// A case's launches for the harness: its kernels, launched in order on the same buffers
/// (several for the output phases of a strided transposed convolution).
/// The workspace slots a kernel needs: {slot, bytes, fill}, shared by slot among a case's
/// kernels; fill ("none", "zero", "+inf", "-inf") is what the planner's fill step writes
/// before every launch.
nlohmann::json workspaceJson(const KernelSource &k) {
  nlohmann::json list = nlohmann::json::array();
  for (const WorkspaceNeed &need : k.workspace) {
    if (need.slot == 4) // the statistics / row reduction slot is the harness's own
      continue;
    const char *fill = "none";
    switch (need.init) {
    case WorkspaceNeed::Init::None:
      break;
    case WorkspaceNeed::Init::Zero:
      fill = "zero";
      break;
    case WorkspaceNeed::Init::PlusInf:
      fill = "+inf";
      break;
    case WorkspaceNeed::Init::MinusInf:
      fill = "-inf";
      break;
    }
    list.push_back({{"slot", need.slot}, {"bytes", need.bytes}, {"fill", fill}});
  }
  return list;
}

/// The tensor maps the harness encodes before each launch: {slot, dims, strides, box,
/// swizzle128}, dims and box innermost first, strides in bytes for dims 1 ...
nlohmann::json tensorMapsJson(const KernelSource &k) {
  nlohmann::json list = nlohmann::json::array();
  for (const TensorMapSpec &t : k.launch.tensorMaps) {
    nlohmann::json m = {{"slot", t.slot}, {"swizzle128", t.swizzle128}};
    m["strides"] = nlohmann::json::array();
    for (unsigned d = 0; d < t.rank; ++d) {
      m["dims"].push_back(t.dims[d]);
      m["box"].push_back(t.box[d]);
      if (d > 0)
        m["strides"].push_back(t.strides[d - 1]);
    }
    list.push_back(std::move(m));
  }
  return list;
}

nlohmann::json launchJson(const std::string &name, llvm::ArrayRef<KernelSource> ks) {
  nlohmann::json list = nlohmann::json::array();
  double flops = 0, bytes = 0;
  for (const KernelSource &k : ks) {
    list.push_back({{"name", k.name},
                    {"file", k.name + ".cu"},
                    {"grid", {k.launch.grid[0], k.launch.grid[1], k.launch.grid[2]}},
                    {"block", {k.launch.block[0], k.launch.block[1], k.launch.block[2]}},
                    {"smem", k.launch.sharedBytes},
                    {"persistent", k.launch.persistent},
                    {"persistent_per_sm", k.launch.persistentPerSm},
                    {"tile", k.tileConfig},
                    {"workspace", workspaceJson(k)},
                    {"tensor_maps", tensorMapsJson(k)}});
    flops += k.flops;
    bytes += k.bytes;
  }
  return {{"name", name},
          {"kernels", list},
          {"tile", ks.front().tileConfig},
          {"flops", flops},
          {"bytes", bytes}};
}

const char *mathName(MathMode m) {
  switch (m) {
  case MathMode::Ffma:
    return "ffma";
  case MathMode::Tf32:
    return "tf32";
  case MathMode::Tf32x3:
    return "tf32x3";
  }
  return "?";
}

// Writes every case for the GPU harness; skipped unless SINTER_TC_DUMP names a folder.
TEST(Dump, ForGpuHarness) {
  const char *dir = std::getenv("SINTER_TC_DUMP");
  if (!dir)
    GTEST_SKIP() << "set SINTER_TC_DUMP=<folder> to write the cases for the GPU harness";
  std::filesystem::create_directories(dir);
  nlohmann::json all = nlohmann::json::array();
  auto write = [&](const KernelSource &k) {
    std::ofstream(std::string(dir) + "/" + k.name + ".cu") << k.source;
  };
  // Benchmarked cases are also written with other tiles (name suffix _v<i>) so that one GPU
  // run can compare them.
  const ConvIgemmTile convTiles[] = {{256, 128, 32, 4, 2, 3, 1},
                                     {128, 128, 32, 2, 4, 3, 2},
                                     {128, 64, 32, 4, 2, 4, 2},
                                     {64, 128, 32, 2, 4, 4, 2}};
  const GemmTile gemmTiles[] = {{128, 128, 32, 2, 4, 4, 1}};
  std::vector<ConvCase> convs = convCases();
  for (size_t i = 0, e = convs.size(); i < e; ++i)
    if (convs[i].bench)
      for (size_t v = 0; v < std::size(convTiles); ++v) {
        ConvCase c = convs[i];
        c.spec.kernelName += "_v" + std::to_string(v + 1);
        convs.push_back(c);
      }
  std::vector<GemmCase> gemms = gemmCases();
  for (size_t i = 0, e = gemms.size(); i < e; ++i)
    if (gemms[i].bench)
      for (size_t v = 0; v < std::size(gemmTiles); ++v) {
        GemmCase g = gemms[i];
        g.spec.kernelName += "_v" + std::to_string(v + 1);
        gemms.push_back(g);
      }
  // Every case that fits the wgmma engine also runs on it with the chosen tile (name suffix
  // _wg), unbatched ones also with the other copy path (_wgcp / _wgtma), other launches
  // (_wghy and, benchmarked, _wgnp, _wgpw, _wgps) and the other cluster size (_wgcl / _wgnc),
  // and, unless benchmarked, on every other wgmma tile (suffix _wgt<i>; in clusters of two
  // _wgclt<i>).
  std::map<std::string, GemmTile> forcedTiles;
  for (size_t i = 0, e = gemms.size(); i < e; ++i) {
    GemmCase g = gemms[i];
    g.spec.wgmma = true;
    if (!gemmFitsWgmma(g.spec) || g.spec.kernelName.find("_v") != std::string::npos)
      continue;
    std::string name = g.spec.kernelName;
    g.spec.kernelName = name + "_wg";
    gemms.push_back(g);
    // The chosen tile also with the other copy path (_wgcp: cp.async, _wgtma), and a block
    // per whole tile then the stream-K blocks (_wghy): for every unbatched case, so that the
    // persistent producer's copies and both launches meet the stream-K tail.
    if (g.bench || g.spec.batchShape.empty()) {
      GemmTile other = chooseWgmmaTile(g.spec);
      other.tma = !other.tma;
      g.spec.kernelName = name + (other.tma ? "_wgtma" : "_wgcp");
      forcedTiles[g.spec.kernelName] = other;
      gemms.push_back(g);
    }
    // The chosen tile with the other cluster size: in clusters of two (B multicast, _wgcl)
    // wherever that fits, or without (_wgnc) where the chooser takes them.
    GemmTile otherCluster = chooseWgmmaTile(g.spec);
    otherCluster.cluster = otherCluster.cluster == 1 ? 2 : 1;
    if (otherCluster.cluster == 1 || gemmClusterFits(g.spec, otherCluster)) {
      g.spec.kernelName = name + (otherCluster.cluster == 2 ? "_wgcl" : "_wgnc");
      forcedTiles[g.spec.kernelName] = otherCluster;
      gemms.push_back(g);
    }
    if (!g.bench && g.spec.batchShape.empty()) {
      GemmTile hybrid = chooseWgmmaTile(g.spec);
      hybrid.launch = GemmLaunch::TilesThenStreamK;
      g.spec.kernelName = name + "_wghy";
      forcedTiles[g.spec.kernelName] = hybrid;
      gemms.push_back(g);
    }
    if (g.bench) {
      // Other launches: a block per tile (_wgnp: the launch before the persistent schedule),
      // persistent without stream-K (_wgpw), a block per whole tile and stream-K blocks for
      // the rest (_wghy), persistent with stream-K (_wgps); and
      for (auto [suffix, launch, streamK] :
           {std::tuple{"_wgnp", GemmLaunch::BlockPerTile, false},
            std::tuple{"_wgpw", GemmLaunch::Persistent, false},
            std::tuple{"_wghy", GemmLaunch::TilesThenStreamK, true},
            std::tuple{"_wgps", GemmLaunch::Persistent, true}}) {
        GemmTile t = chooseWgmmaTile(g.spec);
        t.launch = launch;
        t.streamK = streamK;
        g.spec.kernelName = name + suffix;
        forcedTiles[g.spec.kernelName] = t;
        gemms.push_back(g);
      }
      // with blocks in plain row order (_wgrow) or groups of other heights (_wgg<rows>)
      const GemmTile chosen = chooseWgmmaTile(g.spec);
      for (int groupM : {1, 4, 8, 16}) {
        if (groupM == chosen.groupM)
          continue;
        GemmTile grouped = chosen;
        grouped.groupM = groupM;
        g.spec.kernelName = name + (groupM == 1 ? "_wgrow" : "_wgg" + std::to_string(groupM));
        forcedTiles[g.spec.kernelName] = grouped;
        gemms.push_back(g);
      }
      continue;
    }
    std::vector<GemmTile> tiles = wgmmaTiles(g.spec.math);
    for (size_t t = 0; t < tiles.size(); ++t) {
      if (g.spec.normGroupCols > 0 && tiles[t].bn % g.spec.normGroupCols)
        continue;
      g.spec.kernelName = name + "_wgt" + std::to_string(t);
      forcedTiles[g.spec.kernelName] = tiles[t];
      gemms.push_back(g);
      // and a block per tile in clusters of two, where the tile allows them (_wgclt<i>)
      GemmTile clustered = tiles[t];
      clustered.launch = GemmLaunch::BlockPerTile;
      clustered.cluster = 2;
      if (gemmClusterFits(g.spec, clustered)) {
        g.spec.kernelName = name + "_wgclt" + std::to_string(t);
        forcedTiles[g.spec.kernelName] = clustered;
        gemms.push_back(g);
      }
    }
  }
  // Every conv case that fits the input-box wgmma engine in TF32 also runs on it (suffix _wg,
  // with engine 1's chosen tile even where conv_shift.cuh would be chosen);
  // benchmarked ones also with other widths, B stage counts and (64-wide tiles) one and two
  // blocks an SM (suffix _wgt<i>; one block an SM on alternating warpgroups).
  std::map<std::string, ConvIgemmTile> forcedConvTiles;
  for (size_t i = 0, e = convs.size(); i < e; ++i) {
    ConvCase c = convs[i];
    c.spec.wgmma = true;
    c.spec.math = MathMode::Tf32;
    auto chosen = convWgmmaTile(c.spec);
    if (!chosen || c.spec.kernelName.find("_v") != std::string::npos)
      continue;
    std::string name = c.spec.kernelName;
    c.spec.kernelName = name + "_wg";
    forcedConvTiles[c.spec.kernelName] = *chosen; // engine 1 even where conv_shift is chosen
    convs.push_back(c);
    // The chosen tile of alternating warpgroups also with both warpgroups on each tile (_wgco).
    if (chosen->pingpong) {
      ConvIgemmTile both = *chosen;
      both.pingpong = false;
      both.warpsM = 8;
      c.spec.kernelName = name + "_wgco";
      forcedConvTiles[c.spec.kernelName] = both;
      convs.push_back(c);
    }
    if (!c.bench)
      continue;
    int t = 0;
    for (int bn : {64, 128})
      for (int stages : {3, 4, 6})
        for (int blocks : {1, 2}) {
          if (blocks == 2 && bn != 64)
            continue;
          ConvIgemmTile forced = *chosen;
          forced.bn = bn;
          forced.stages = stages;
          forced.minBlocks = blocks;
          forced.pingpong = blocks == 1;
          forced.warpsM = blocks == 1 ? 4 : 8;
          c.spec.kernelName = name + "_wgt" + std::to_string(t++);
          forcedConvTiles[c.spec.kernelName] = forced;
          convs.push_back(c);
        }
  }
  // Every conv case conv_shift.cuh can compute also runs on it in TF32 (suffix _sh: the
  // chosen tile where the planner would pick the engine, else the default one), and on every
  // other tile the emitter accepts (suffix _sht<i>: 64, 128 or 256 product rows x 64, 128 or
  // 256 grid rows, the most stages; with the weights copied by TMA, each also with a stage
  // for the W taps that can share one).
  std::map<std::string, ConvShiftTile> forcedShiftTiles;
  for (size_t i = 0, e = convs.size(); i < e; ++i) {
    ConvCase c = convs[i];
    c.spec.wgmma = true;
    c.spec.math = MathMode::Tf32;
    if (!convShiftSupports(c.spec) || c.spec.kernelName.find("_v") != std::string::npos ||
        c.spec.kernelName.find("_wg") != std::string::npos)
      continue;
    const std::string name = c.spec.kernelName;
    const ConvShiftTile chosen = convShiftTile(c.spec).value_or(convShiftDefaultTile(c.spec));
    if (auto ks = emitConvShift(c.spec, chosen)) {
      c.spec.kernelName = name + "_sh";
      forcedShiftTiles[c.spec.kernelName] = chosen;
      convs.push_back(c);
    } else {
      ADD_FAILURE() << llvm::toString(ks.takeError());
    }
    // Suffix _sht<i> for one tap a stage, _shw<i> for the W taps' shared stage.
    for (int wRun : shiftWRuns(c.spec)) {
      int t = 0;
      for (int bm : {64, 128, 256})
        for (int bn : {64, 128, 256}) {
          ConvShiftTile forced{bm, bn, 0, wRun};
          forced.stages = maxStages(c.spec, forced);
          if (bm == chosen.bm && bn == chosen.bn && wRun == chosen.wRun)
            continue;
          // Tiles the emitter refuses: over 128 accumulators a thread, rows that split a k
          // group of small groups, or stages that do not fit.
          if (auto ks = emitConvShift(c.spec, forced); !ks) {
            llvm::consumeError(ks.takeError());
            continue;
          }
          c.spec.kernelName = name + (wRun > 1 ? "_shw" : "_sht") + std::to_string(t++);
          forcedShiftTiles[c.spec.kernelName] = forced;
          convs.push_back(c);
        }
    }
  }
  auto variant = [](const std::string &name) {
    size_t at = name.rfind("_v");
    return at == std::string::npos ? 0 : std::stoi(name.substr(at + 2));
  };
  for (const ConvCase &c : convs) {
    int v = variant(c.spec.kernelName);
    auto forced = forcedConvTiles.find(c.spec.kernelName);
    auto shift = forcedShiftTiles.find(c.spec.kernelName);
    auto ks = shift != forcedShiftTiles.end()   ? emitConvShift(c.spec, shift->second)
              : forced != forcedConvTiles.end() ? emitConvIgemm(c.spec, forced->second)
              : v                               ? emitConvIgemm(c.spec, convTiles[v - 1])
                                                : emitConvIgemm(c.spec);
    if (!ks && forced != forcedConvTiles.end()) { // a box too large for these stages
      llvm::consumeError(ks.takeError());
      continue;
    }
    ASSERT_TRUE(bool(ks)) << llvm::toString(ks.takeError());
    for (const KernelSource &k : *ks)
      write(k);
    const ConvSpec &s = c.spec;
    nlohmann::json j = launchJson(s.kernelName, *ks);
    j.update({{"kind", "conv"},
              {"transposed", s.transposed},
              {"N", s.N},
              {"Cin", s.Cin},
              {"Cout", s.Cout},
              {"groups", s.groups},
              {"in", s.in},
              {"out", s.out},
              {"kernel", s.kernel},
              {"stride", s.stride},
              {"padding", s.padding},
              {"dilation", s.dilation},
              {"bias", s.hasBias},
              {"stats", s.accumulateStats},
              {"store", s.storeOutput},
              {"epilogue", c.epilogue},
              {"math", mathName(s.math)},
              {"bench", c.bench}});
    all.push_back(j);
  }
  for (const GemmCase &g : gemms) {
    int v = variant(g.spec.kernelName);
    auto forced = forcedTiles.find(g.spec.kernelName);
    auto k = forced != forcedTiles.end() ? emitGemm(g.spec, forced->second)
             : v                         ? emitGemm(g.spec, gemmTiles[v - 1])
                                         : emitGemm(g.spec);
    ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
    write(*k);
    const GemmSpec &s = g.spec;
    nlohmann::json j = launchJson(s.kernelName, *k);
    j.update({{"kind", "gemm"},
              {"M", s.M},
              {"N", s.N},
              {"K", s.K},
              {"batchShape", std::vector<int64_t>(s.batchShape.begin(), s.batchShape.end())},
              {"batchStrideA", std::vector<int64_t>(s.batchStrideA.begin(), s.batchStrideA.end())},
              {"batchStrideB", std::vector<int64_t>(s.batchStrideB.begin(), s.batchStrideB.end())},
              {"batchStrideC", std::vector<int64_t>(s.batchStrideC.begin(), s.batchStrideC.end())},
              {"bTransposed", s.bTransposed},
              {"bias", s.hasBias},
              {"store", s.storeOutput},
              {"normCols", s.normGroupCols},
              {"eps", s.normEps},
              {"affine", s.normAffine},
              {"rowReduce", int(s.rowReduce)},
              {"epilogue", g.epilogue},
              {"postNorm", g.postNorm},
              {"math", mathName(s.math)},
              {"bench", g.bench}});
    all.push_back(j);
  }
  std::ofstream(std::string(dir) + "/cases.json") << all.dump(1);
}

} // namespace
