//===- tests/kernels_direct/DirectKernelsTest.cpp - conv_direct and norm emitters ---===//
//
// Every case of Cases.h is emitted and compiled by NVRTC for sm_90a and sm_80 with the
// embedded templates as headers, as the runtime will compile it; the workload kernels must
// also come out of ptxas without spills. Bad specs must fail with a message naming the
// kernel. Numerical checks against PyTorch run on the GPU machine
// (bench/kernels/direct_check.py).
//
//===--------------------------------------------------------------------------------===//
#include "Cases.h"

#include "compiler/kernels/ConvDirect.h"
#include "compiler/kernels/ConvMma.h"
#include "compiler/kernels/Norm.h"
#include "templates/Templates.h"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <regex>
#include <string>
#include <vector>

using namespace sinter;
using namespace sinter::direct_cases;

namespace {

struct NvrtcResult {
  bool ok = false;
  std::string log;
};

/// Compiles `source` to a cubin for `arch` with every template as a named header.
NvrtcResult compile(const KernelSource &k, const std::string &arch) {
  std::vector<const char *> names, texts;
  for (const TemplateFile &f : templateFiles()) {
    names.push_back(f.name.data());
    texts.push_back(f.text.data());
  }
  nvrtcProgram prog;
  NvrtcResult r;
  if (nvrtcCreateProgram(&prog, k.source.c_str(), (k.name + ".cu").c_str(), int(names.size()),
                         texts.data(), names.data()) != NVRTC_SUCCESS) {
    r.log = "nvrtcCreateProgram failed";
    return r;
  }
  std::string archOpt = "--gpu-architecture=" + arch;
  const char *opts[] = {archOpt.c_str(), "-std=c++17", "--ptxas-options=-v"};
  nvrtcResult res = nvrtcCompileProgram(prog, 3, opts);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  r.log.resize(logSize);
  if (logSize) {
    nvrtcGetProgramLog(prog, r.log.data());
    r.log.resize(logSize - 1); // drop the terminating NUL
  }
  size_t cubinSize = 0;
  r.ok =
      res == NVRTC_SUCCESS && nvrtcGetCUBINSize(prog, &cubinSize) == NVRTC_SUCCESS && cubinSize > 0;
  nvrtcDestroyProgram(&prog);
  return r;
}

int spillBytes(const std::string &log) {
  std::smatch m;
  static const std::regex re("(\\d+) bytes spill stores");
  int total = 0;
  for (auto it = log.cbegin(); std::regex_search(it, log.cend(), m, re); it = m.suffix().first)
    total += std::stoi(m[1]);
  return total;
}

KernelSource emitOrFail(llvm::Expected<KernelSource> k) {
  if (!k) {
    ADD_FAILURE() << llvm::toString(k.takeError());
    return {};
  }
  return std::move(*k);
}

std::string errorOf(llvm::Expected<KernelSource> k) {
  if (k)
    return "";
  return llvm::toString(k.takeError());
}

/// `k` compiles for sm_90a and sm_80 without spilling registers.
void expectCompilesWithoutSpills(const KernelSource &k) {
  for (const char *arch : {"sm_90a", "sm_80"}) {
    NvrtcResult r = compile(k, arch);
    EXPECT_TRUE(r.ok) << k.name << " for " << arch << ":\n" << r.log;
    EXPECT_EQ(spillBytes(r.log), 0) << k.name << " (" << k.tileConfig << ") for " << arch << ":\n"
                                    << r.log;
  }
}

} // namespace

TEST(ConvDirect, EveryCaseCompilesForHopperAndAmpere) {
  for (const ConvCase &c : convCases()) {
    KernelSource k = emitOrFail(emitConvDirect(c.spec));
    ASSERT_FALSE(k.source.empty()) << c.spec.kernelName;
    EXPECT_NE(k.source.find("#include \"conv_direct.cuh\""), std::string::npos);
    for (const char *arch : {"sm_90a", "sm_80"}) {
      NvrtcResult r = compile(k, arch);
      EXPECT_TRUE(r.ok) << c.spec.kernelName << " for " << arch << ":\n" << r.log;
      if (c.workload && std::string(arch) == "sm_90a") {
        EXPECT_EQ(spillBytes(r.log), 0) << c.spec.kernelName << ":\n" << r.log;
      }
    }
  }
}

TEST(ConvDirect, PooledCasesCompileForHopperAndAmpereWithoutSpills) {
  for (const ConvSpec &s : pooledCases()) {
    KernelSource k = emitOrFail(emitConvDirect(s));
    EXPECT_NE(k.source.find("constexpr bool kPool = true;"), std::string::npos) << s.kernelName;
    expectCompilesWithoutSpills(k);
  }
}

TEST(ConvDirect, PooledPatchesAreWholeWindowsOverThePooledOutput) {
  for (const ConvSpec &s : pooledCases()) {
    KernelSource k = emitOrFail(emitConvDirect(s));
    auto constant = [&](const char *name) {
      std::smatch m;
      EXPECT_TRUE(std::regex_search(
          k.source, m, std::regex(std::string("constexpr int ") + name + " = (\\d+);")))
          << name << " in " << s.kernelName;
      return m.empty() ? -1 : std::stoi(m[1]);
    };
    const ConvPoolTail &p = *s.pool;
    const int vh = constant("kVH"), vw = constant("kVW");
    EXPECT_EQ(vh % p.window[1], 0) << s.kernelName;
    EXPECT_EQ(vw % p.window[2], 0) << s.kernelName;
    EXPECT_EQ(constant("kAlignH"), 0) << s.kernelName;
    EXPECT_EQ(constant("kAlignW"), 0) << s.kernelName;
    if (s.transposed) {
      EXPECT_EQ(vh % s.stride[1], 0) << s.kernelName;
      EXPECT_EQ(vw % s.stride[2], 0) << s.kernelName;
      EXPECT_EQ(constant("kPhaseH"), s.padding[1] % s.stride[1]) << s.kernelName;
      EXPECT_EQ(constant("kPhaseW"), s.padding[2] % s.stride[2]) << s.kernelName;
    }
    // One thread per pooled depth and patch: the patches cover the windows' rows and columns.
    const int64_t hBlocks = constant("kHBlocks"), wBlocks = constant("kWBlocks");
    EXPECT_GE(hBlocks * vh, std::min(s.out[1], p.out[1] * p.window[1])) << s.kernelName;
    EXPECT_GE(wBlocks * vw, std::min(s.out[2], p.out[2] * p.window[2])) << s.kernelName;
    EXPECT_GE(int64_t(k.launch.grid[0]) * k.launch.block[0], p.out[0] * hBlocks * wBlocks)
        << s.kernelName;
    EXPECT_TRUE(k.workspace.empty()) << s.kernelName;
  }
}

TEST(ConvDirect, ChannelSoftmaxCasesHoldEveryChannelAndCompileWithoutSpills) {
  for (const ConvSpec &s : softmaxCases()) {
    KernelSource k = emitOrFail(emitConvDirect(s));
    EXPECT_NE(k.source.find("constexpr bool kSoftmax = true;"), std::string::npos) << s.kernelName;
    EXPECT_NE(k.source.find("constexpr int kCB = " + std::to_string(s.Cout) + ";"),
              std::string::npos)
        << s.kernelName;
    EXPECT_EQ(k.launch.grid[1], 1u) << s.kernelName; // one channel block
    expectCompilesWithoutSpills(k);
  }
  // Refused: a grouped convolution (the softmax spans groups), and channels that do not fit.
  ConvSpec grouped = softmaxCases()[1]; // 4 -> 16 channels
  grouped.groups = 2;
  EXPECT_NE(errorOf(emitConvDirect(grouped)).find("spans its groups"), std::string::npos);
  ConvSpec wide = softmaxCases()[2]; // transposed, stride 2: whole 2x2 phases of positions
  wide.Cout = 32;
  EXPECT_NE(errorOf(emitConvDirect(wide))
                .find("a softmax over 32 channels of 2x2 positions does not fit one thread's "
                      "accumulators"),
            std::string::npos);
}

TEST(ConvDirect, ChannelReductionCasesHoldEveryChannelAndCompileWithoutSpills) {
  for (const ConvSpec &s : channelReduceCases()) {
    KernelSource k = emitOrFail(emitConvDirect(s));
    EXPECT_NE(k.source.find("constexpr int kCReduce = " +
                            std::to_string(channelFoldConstant(s.channelReduce->kind)) + ";"),
              std::string::npos)
        << s.kernelName;
    EXPECT_NE(k.source.find("constexpr int kCB = " + std::to_string(s.Cout) + ";"),
              std::string::npos)
        << s.kernelName;
    EXPECT_EQ(k.launch.grid[1], 1u) << s.kernelName; // one channel block
    // Only the reduced tensor is written.
    const double in = 4.0 * s.N * s.Cin * volume(s.in), out = 4.0 * s.N * volume(s.out);
    EXPECT_DOUBLE_EQ(k.bytes, in + 4.0 * s.Cout * (s.Cin / s.groups) * volume(s.kernel) +
                                  (s.hasBias ? 4.0 * s.Cout : 0.0) + out)
        << s.kernelName;
    expectCompilesWithoutSpills(k);
  }
  // Refused: groups, too many channels for a thread, a pool or softmax beside it, conv_mma.
  ConvSpec grouped = channelReduceCases()[1];
  grouped.groups = 2;
  EXPECT_NE(errorOf(emitConvDirect(grouped)).find("a reduction over the channels of a grouped"),
            std::string::npos);
  ConvSpec wide = channelReduceCases()[2]; // transposed, stride 2: whole 2x2 phases
  wide.Cout = 40;
  EXPECT_NE(errorOf(emitConvDirect(wide))
                .find("a reduction over 40 channels of 2x2 positions does not fit one thread's "
                      "accumulators"),
            std::string::npos);
  ConvSpec pooled = channelReduceCases()[0];
  pooled.pool = pooledCases()[1].pool;
  EXPECT_NE(errorOf(emitConvDirect(pooled)).find("takes no softmax or pool"), std::string::npos);
  ConvSpec mma = channelReduceCases()[0];
  mma.math = MathMode::Tf32;
  EXPECT_NE(errorOf(emitConvDirect(mma)).find("conv_mma has no reduction over the channels"),
            std::string::npos);
}

TEST(ConvDirect, RefusesPoolsItCannotRun) {
  ConvSpec base = pooledCases()[1]; // 2-D, 19 x 23 output, 2 x 2 windows
  auto refused = [](ConvSpec s, const char *what) {
    std::string err = errorOf(emitConvDirect(s));
    EXPECT_NE(err.find(what), std::string::npos) << "got: " << err;
  };
  ConvSpec stats = base;
  stats.accumulateStats = true;
  refused(stats, "without statistics");
  ConvSpec wrongOut = base;
  wrongOut.pool->out[1] = 11; // 19 rows hold 9 or 10 windows of 2
  refused(wrongOut, "does not follow from windows of 2 over 19");
  ConvSpec huge = base;
  huge.pool->window = {1, 9, 12};
  huge.pool->out = {1, 2, 1};
  refused(huge, "do not fit one thread's accumulators");
  ConvSpec mma = base;
  mma.math = MathMode::Tf32;
  refused(mma, "conv_mma has no pool or softmax tail");
}

TEST(ConvDirect, LaunchCoversEveryOutput) {
  for (const ConvCase &c : convCases()) {
    KernelSource k = emitOrFail(emitConvDirect(c.spec));
    const ConvSpec &s = c.spec;
    EXPECT_EQ(k.launch.grid[2], unsigned(s.N)) << s.kernelName;
    EXPECT_EQ(k.launch.block[0] % 32, 0u) << s.kernelName;
    // grid.y enumerates (group, channel block); enough channel blocks for the whole group.
    EXPECT_EQ(k.launch.grid[1] % s.groups, 0u) << s.kernelName;
    EXPECT_EQ(k.workspace.empty(), !s.accumulateStats) << s.kernelName;
    EXPECT_GT(k.flops, 0) << s.kernelName;
  }
}

TEST(ConvDirect, TransposedPatchesCoverWholePhases) {
  ConvSpec s = conv("t", true, 2, 1, 4, 4, 1, {1, 8, 8}, {1, 3, 3}, {1, 2, 3}, {0, 1, 1}, {1, 1, 1},
                    {0, 0, 0}, false);
  KernelSource k = emitOrFail(emitConvDirect(s));
  // W is blocked by the stride (3); H by a multiple of 2; patches start at phase padding % s.
  EXPECT_NE(k.source.find("constexpr int kVW = 3;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("constexpr int kAlignW = 1;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("constexpr int kAlignH = 1;"), std::string::npos) << k.source;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(k.source, m, std::regex("constexpr int kVH = (\\d+);")));
  EXPECT_EQ(std::stoi(m[1]) % 2, 0);
}

TEST(ConvDirect, PrefetchesOnlyWhenAPatchFeedsFewFmas) {
  // Blockings measured on the H200 (docs/kernels-direct.md): S1 and S2 run best without the
  // patch prefetch on 256-thread blocks, S4 (144 FMAs per patch) with it on 128 threads.
  for (const ConvCase &c : convCases()) {
    if (!c.workload)
      continue;
    KernelSource k = emitOrFail(emitConvDirect(c.spec));
    bool s4 = c.spec.kernelName == "s4_convt3d_grouped";
    EXPECT_EQ(k.source.find(s4 ? "kPipeline = true" : "kPipeline = false") != std::string::npos,
              true)
        << k.source;
    EXPECT_EQ(k.launch.block[0], s4 ? 128u : 256u) << c.spec.kernelName;
  }
}

TEST(ConvDirect, WidePatchesDoNotPrefetch) {
  // A strided 1x1 convolution blocked 8 x 4 reads a 22 x 10 patch: more than the prefetching
  // loop's 64-element in-range mask, so even a forced prefetch takes the plain loop.
  ConvSpec s = conv("c1x1_s3", false, 2, 1, 2, 2, 2, {1, 40, 40}, {1, 1, 1}, {1, 3, 3}, {0, 0, 0},
                    {1, 1, 1}, {0, 0, 0}, false);
  ConvDirectTuning forced;
  forced.channelsPerThread = 1, forced.rowsPerThread = 8, forced.colsPerThread = 4;
  forced.prefetch = 1;
  KernelSource k = emitOrFail(emitConvDirect(s, forced));
  EXPECT_NE(k.source.find("kPipeline = false"), std::string::npos) << k.source;
  EXPECT_TRUE(compile(k, "sm_90a").ok);
  forced.rowsPerThread = 2, forced.colsPerThread = 2; // a 4 x 4 patch may
  k = emitOrFail(emitConvDirect(s, forced));
  EXPECT_NE(k.source.find("kPipeline = true"), std::string::npos) << k.source;
  EXPECT_TRUE(compile(k, "sm_90a").ok);
}

/// The integer value of `constexpr <type> name = value;` in a generated prologue.
int constantOf(const KernelSource &k, const std::string &name) {
  std::smatch m;
  std::regex re("constexpr (?:int|bool) " + name + " = (\\w+);");
  if (!std::regex_search(k.source, m, re))
    return -1;
  return m[1] == "true" ? 1 : m[1] == "false" ? 0 : std::stoi(m[1]);
}

TEST(ConvDirect, DeepWorkloadsUseFloat2RowsAndClampOnlyUnpaddedConvs) {
  // S1 (unpadded conv3d): float2 rows, clamped edge tiles, at most 72 accumulators so that
  // two 256-thread blocks fit an SM. S2 (transposed, so its edges need zeros): float2 rows
  // and, when stored, float2 stores; no clamping. S4 keeps the prefetching element loads.
  for (const ConvCase &c : convCases()) {
    if (!c.workload && c.spec.kernelName != "s2_convt2d_gelu_norm")
      continue;
    KernelSource k = emitOrFail(emitConvDirect(c.spec));
    const std::string &name = c.spec.kernelName;
    int acc = constantOf(k, "kCB") * constantOf(k, "kVH") * constantOf(k, "kVW");
    if (name == "s4_convt3d_grouped") {
      EXPECT_EQ(constantOf(k, "kVecX"), 1) << name;
      EXPECT_EQ(constantOf(k, "kClampTiles"), 0) << name;
      continue;
    }
    EXPECT_EQ(constantOf(k, "kVecX"), 2) << k.source;
    EXPECT_LE(acc, 72) << name;
    EXPECT_EQ(constantOf(k, "kMinBlocks"), 2) << name;
    EXPECT_EQ(constantOf(k, "kClampTiles"), name == "s1_conv3d_stats" ? 1 : 0) << name;
    EXPECT_EQ(constantOf(k, "kVecStore"), name == "s2_convt2d_gelu_norm" ? 1 : 0) << name;
  }
  // Padding forbids clamping; so does an output narrower than a patch.
  ConvSpec padded = conv("p", false, 2, 1, 4, 8, 1, {1, 20, 20}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1},
                         {1, 1, 1}, {0, 0, 0}, false);
  EXPECT_EQ(constantOf(emitOrFail(emitConvDirect(padded)), "kClampTiles"), 0);
  ConvSpec narrow = conv("n", false, 2, 1, 4, 8, 1, {1, 20, 3}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
                         {1, 1, 1}, {0, 0, 0}, false);
  ConvDirectTuning wide;
  wide.colsPerThread = 2;
  wide.rowsPerThread = 6;
  wide.channelsPerThread = 8;
  KernelSource kn = emitOrFail(emitConvDirect(narrow, wide));
  EXPECT_EQ(constantOf(kn, "kOW"), 1);
  EXPECT_EQ(constantOf(kn, "kClampTiles"), 0);
}

TEST(ConvDirect, RejectsBadSpecs) {
  ConvSpec s = conv("bad_groups", false, 2, 1, 6, 4, 4, {1, 8, 8}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
                    {1, 1, 1}, {0, 0, 0}, false);
  EXPECT_EQ(errorOf(emitConvDirect(s)), "bad_groups: groups=4 does not divide Cin=6 and Cout=4");
  s = conv("bad_out", false, 2, 1, 4, 4, 1, {1, 8, 8}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1},
           {0, 0, 0}, false);
  s.out[2] = 7;
  EXPECT_EQ(errorOf(emitConvDirect(s)),
            "bad_out: output size 7 along spatial dim 2 does not follow from the input size and "
            "attributes");
  s = conv("bad_outpad", true, 1, 1, 4, 4, 1, {1, 1, 8}, {1, 1, 3}, {1, 1, 2}, {0, 0, 0}, {1, 1, 1},
           {0, 0, 2}, false);
  EXPECT_EQ(errorOf(emitConvDirect(s)),
            "bad_outpad: output size 19 along spatial dim 2 does not follow from the input size "
            "and attributes");
  s = conv("tf32", false, 1, 1, 4, 4, 1, {1, 1, 8}, {1, 1, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1},
           {0, 0, 0}, false);
  s.math = MathMode::Tf32x3;
  EXPECT_EQ(errorOf(emitConvDirect(s)),
            "tf32: conv_direct computes in fp32 FMA or, on conv_mma, TF32");
  s.math = MathMode::Ffma;
  s.in[1] = 2;
  EXPECT_EQ(errorOf(emitConvDirect(s)), "tf32: unused spatial dim 1 must have size 1");
}

/// The cases conv_mma supports, in TF32 (as the planner hands them to it).
std::vector<ConvSpec> mmaSpecs() {
  std::vector<ConvSpec> out;
  for (const ConvCase &c : convCases()) {
    ConvSpec s = c.spec;
    s.math = MathMode::Tf32;
    if (convMmaSupports(s, nullptr))
      out.push_back(s);
  }
  return out;
}

TEST(ConvMma, EverySupportedCaseAndForcedTileCompilesForHopperAndAmpere) {
  // TF32 direct convolutions go to conv_mma (through emitConvDirect, as the planner calls
  // it); the chosen tiles never spill, nor do the forced ones the GPU harness checks.
  int supported = 0;
  // Chosen tiles fit 48 KiB (four blocks per SM); forced ones the emitter's 200 KiB.
  auto check = [&](const ConvSpec &s, const KernelSource &k, bool forced = false) {
    EXPECT_NE(k.source.find("#include \"conv_mma.cuh\""), std::string::npos) << s.kernelName;
    EXPECT_EQ(k.launch.grid[1], unsigned(s.groups)) << s.kernelName;
    EXPECT_EQ(k.launch.grid[2], unsigned(s.N)) << s.kernelName;
    EXPECT_LE(k.launch.sharedBytes, (forced ? 200u : 48u) * 1024) << s.kernelName;
    for (const char *arch : {"sm_90a", "sm_80"}) {
      NvrtcResult r = compile(k, arch);
      EXPECT_TRUE(r.ok) << s.kernelName << " for " << arch << ":\n" << r.log;
      EXPECT_EQ(spillBytes(r.log), 0) << s.kernelName << " for " << arch << ":\n" << r.log;
    }
  };
  for (const ConvSpec &s : mmaSpecs()) {
    ++supported;
    check(s, emitOrFail(emitConvDirect(s)));
  }
  // All but 64 input channels x 27 taps (the strided transposed ones walked by phase).
  EXPECT_EQ(supported, 24);
  for (const MmaVariant &v : mmaVariants())
    for (const ConvCase &c : convCases()) {
      if (c.spec.kernelName != v.base)
        continue;
      ConvSpec s = c.spec;
      s.math = MathMode::Tf32;
      KernelSource k = emitOrFail(emitConvMma(s, v.tile));
      EXPECT_EQ(constantOf(k, "kTileLoop"), v.tile.tileLoop) << s.kernelName;
      EXPECT_EQ(constantOf(k, "kDoubleBuffer"), v.tile.tileLoop > 1 && v.tile.doubleBuffer)
          << s.kernelName;
      EXPECT_EQ(k.launch.block[0], 32u * v.tile.warps) << s.kernelName;
      check(s, k, true);
    }
}

// The group norm finished in conv_mma's kernel (ConvSpec::normTail): which shapes take it,
// what the kernel is told, and that it compiles for both targets without spilling.
TEST(ConvMma, FinishesLargeGroupNormsInItsKernel) {
  ConvSpec s = conv("s2_norm", true, 2, 128, 64, 64, 8, {1, 256, 256}, {1, 3, 3}, {1, 1, 1},
                    {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, true);
  s.math = MathMode::Tf32;
  s.epilogue.code = "return sinter::geluErf(v);"; // (the pipeline's gelu, as in S2)
  std::string why;
  EXPECT_TRUE(convMmaFinishesNorm(s, 8, &why)) << why;
  EXPECT_TRUE(convMmaFinishesNorm(s, 16, &why)) << why; // 4-channel norm groups nest too
  EXPECT_FALSE(convMmaFinishesNorm(s, 4, &why));
  EXPECT_EQ(why, "a norm group spans several convolution groups");
  EXPECT_FALSE(convMmaFinishesNorm(s, 3, &why));
  EXPECT_EQ(why, "the norm's groups do not divide the channels");
  ConvSpec big = s; // one group of 64 channels x 258^2 positions: 17 MB a sample
  big.groups = 1, big.Cin = 8;
  EXPECT_FALSE(convMmaFinishesNorm(big, 1, &why));
  ConvSpec few = s; // 16 samples x 8 groups
  few.N = 16;
  EXPECT_FALSE(convMmaFinishesNorm(few, 8, &why));
  EXPECT_EQ(why, "fewer than 512 (n, group)s: the two kernels are as fast");
  ConvSpec small = s; // 64 x 64 outputs: 27 tiles per (n, group)
  small.in = {1, 62, 62};
  small.out = {1, 64, 64};
  EXPECT_FALSE(convMmaFinishesNorm(small, 8, &why));
  EXPECT_EQ(why, "fewer than 256 tiles per (n, group): the two kernels are faster");
  // The planner asks before the spec has its norm; the answer must hold for the kernel the
  // emitter then makes, whose held slots can shrink the tile: 16-channel groups on a 258^2
  // output fit the plain convolution's tiles in 512 but not the norm's (a plan taking them
  // failed to compile).
  ConvSpec wide = s;
  wide.Cin = wide.Cout = 128, wide.N = 64;
  EXPECT_FALSE(convMmaFinishesNorm(wide, 8, &why));
  EXPECT_EQ(why, "more than 512 tiles per (n, group): more units than a GPU holds blocks at once");

  s.accumulateStats = true;
  s.normTail = ConvNormTail{8, 1e-5, true, {}};
  KernelSource k = emitOrFail(emitConvMma(s));
  EXPECT_NE(k.source.find("#define SINTER_CONV_MMA_NORM 1"), std::string::npos);
  EXPECT_EQ(constantOf(k, "kCG"), 8);
  EXPECT_EQ(constantOf(k, "kL"), 258 * 258);
  EXPECT_EQ(constantOf(k, "kTileLoop"), 2);
  // 297 tiles of 1x8x32 per (n, group), two a unit.
  EXPECT_EQ(constantOf(k, "kConvUnits"), 149);
  // Every unit of the work on the grid, and as many blocks resident as a task has units.
  const int64_t tasks = 128 * 8;
  EXPECT_EQ(k.launch.grid[0], unsigned(tasks * 149));
  EXPECT_EQ(k.launch.grid[1], 1u);
  EXPECT_EQ(k.launch.grid[2], 1u);
  EXPECT_EQ(k.launch.coResident, 149u);
  // One box buffer, the weights, each of the 4 warps' statistics and three held tile slots
  // of 8 channels x (256 + 4) floats: five blocks an SM on sm_90a (the register cap then
  // 96), four elsewhere.
  EXPECT_EQ(constantOf(k, "kDoubleBuffer"), 0);
  EXPECT_EQ(k.launch.sharedBytes, 4u * (8 * 392 + 9 * 64 + 4 * 16 + 3 * 8 * 260));
  EXPECT_EQ(constantOf(k, "kMinBlocks"), 4); // (this spec is for sm_80: no wgmma)
  // Slot 4: the statistics, then a count of the units done per (n, group) and the 280
  // counters that deal the blocks their places.
  ASSERT_EQ(k.workspace.size(), 1u);
  EXPECT_EQ(constantOf(k, "kDealWords"), 280);
  EXPECT_EQ(k.workspace[0].bytes, 16 * 128 * 64 + (4 * tasks + 7) / 8 * 8 + 4 * 280);
  for (const char *arch : {"sm_90a", "sm_80"}) {
    NvrtcResult r = compile(k, arch);
    EXPECT_TRUE(r.ok) << arch << ":\n" << r.log;
    EXPECT_EQ(spillBytes(r.log), 0) << arch << ":\n" << r.log;
  }
  s.wgmma = true; // (sm_90a: five blocks an SM, and no spills at their 96 registers)
  KernelSource k90 = emitOrFail(emitConvMma(s));
  EXPECT_EQ(constantOf(k90, "kMinBlocks"), 5);
  NvrtcResult r90 = compile(k90, "sm_90a");
  EXPECT_TRUE(r90.ok) << r90.log;
  EXPECT_EQ(spillBytes(r90.log), 0) << r90.log;
  s.wgmma = false;
  // The spec must ask for the statistics and the stores.
  s.storeOutput = false;
  EXPECT_EQ(errorOf(emitConvMma(s)), "s2_norm: conv_mma cannot finish this norm: the norm needs "
                                     "the output stored and its statistics");
}

TEST(ConvMma, TilesCoverTheOutputAndLoopOnlyOnLargeGrids) {
  for (const ConvCase &c : convCases()) {
    ConvSpec s = c.spec;
    s.math = MathMode::Tf32;
    if (!convMmaSupports(s, nullptr))
      continue;
    ConvMmaTile t = chooseConvMmaTile(s);
    KernelSource k = emitOrFail(emitConvMma(s));
    EXPECT_EQ(t.tw % 16, 0) << s.kernelName;
    // Four warps, except on 1-D outputs too short for four m16 tiles.
    EXPECT_TRUE(t.warps == 4 || (s.spatialDims == 1 && s.out[2] < 64) ||
                s.kernelName == "t1d_s3_op2_g2") // 30 grid positions of 3 phases
        << s.kernelName;
    int64_t tiles =
        int64_t(constantOf(k, "kTilesD")) * constantOf(k, "kTilesH") * constantOf(k, "kTilesW");
    // The tiles cover the grid: the output, or along a strided dim of a transposed
    // convolution the positions m = floor((o + pad) / stride) of every output o.
    std::array<int64_t, 3> grid = s.out;
    for (int d = 0; d < 3; ++d)
      if (s.transposed && s.stride[d] > 1)
        grid[d] = (s.out[d] - 1 + s.padding[d]) / s.stride[d] - s.padding[d] / s.stride[d] + 1;
    EXPECT_GE(int64_t(constantOf(k, "kTilesW")) * t.tw, grid[2]) << s.kernelName;
    EXPECT_GE(int64_t(constantOf(k, "kTilesH")) * t.th, grid[1]) << s.kernelName;
    EXPECT_GE(int64_t(constantOf(k, "kTilesD")) * t.td, grid[0]) << s.kernelName;
    EXPECT_EQ(int64_t(k.launch.grid[0]), (tiles + t.tileLoop - 1) / t.tileLoop) << s.kernelName;
    // The small cases have few blocks: one tile each. S2 (a million tiles) loops.
    EXPECT_EQ(t.tileLoop > 1, c.workload || s.kernelName == "s2_convt2d_gelu_norm") << s.kernelName;
    // Looping blocks copy the next box during the products when two boxes fit in 48 KiB.
    EXPECT_EQ(constantOf(k, "kDoubleBuffer") == 1, t.tileLoop > 1 && t.doubleBuffer)
        << s.kernelName;
    EXPECT_LE(k.launch.sharedBytes, 48u * 1024) << s.kernelName;
  }
}

TEST(ConvMma, ChannelStrideAvoidsTheModelledBankConflicts) {
  // Whole-8-channel k8 steps: channels t of one tap, 8 banks apart (8 mod 32). S1's 3
  // channels mix taps in a step: residue 12 models 29 wavefronts for its 22 fragment loads
  // per m16 tile, 8 would model 43.
  for (const ConvSpec &s : mmaSpecs()) {
    KernelSource k = emitOrFail(emitConvMma(s));
    int residue = constantOf(k, "kChannelResidue");
    EXPECT_EQ(residue % 4, 0) << s.kernelName;
    if (s.Cin / s.groups % 8 == 0) {
      EXPECT_EQ(residue, 8) << s.kernelName;
    }
    if (s.kernelName == "s1_conv3d_stats") {
      EXPECT_EQ(residue, 12) << s.kernelName;
    }
  }
}

TEST(ConvMma, StagesTheStoresOfRowsThatStartOffTheSectors) {
  // Output rows of a multiple of 8 floats keep the fragments' 8-position stores (whole
  // 32-byte sectors); other rows are staged and written whole (S2: 258 floats a row).
  int staged = 0;
  for (const ConvSpec &s : mmaSpecs()) {
    KernelSource k = emitOrFail(emitConvMma(s));
    bool stage = constantOf(k, "kStageStores") == 1;
    EXPECT_EQ(stage, s.storeOutput && s.out[2] % 8 != 0) << s.kernelName;
    EXPECT_EQ(k.tileConfig.find("stores staged") != std::string::npos,
              s.storeOutput && (stage || (s.transposed && s.stride[2] > 1)))
        << s.kernelName << ": " << k.tileConfig;
    staged += stage;
    if (s.kernelName == "s2_convt2d_gelu_norm") {
      EXPECT_TRUE(stage);
    }
  }
  EXPECT_GT(staged, 3);
}

TEST(ConvMma, StagedStoresAreWrittenInRunsOfAtLeast32Floats) {
  // A warp writes each channel's staged outputs in runs of 16 x (its m16 tiles per tile row)
  // positions when it holds whole rows of the tile. Runs of 16 (64 bytes, three sectors, most
  // of them partial) made S2's storing pass 1.5x slower on an H100. Checked on S2's storing
  // pass and on a 3-D convolution like the corpus' conv3d_gn_minimum_clamp_dropout (rows of
  // 30 floats; its tile was 2x6x16, runs of 16, before the rule).
  ConvSpec c3 = conv("c3d_rows30", false, 3, 128, 3, 16, 1, {16, 32, 32}, {3, 3, 3}, {1, 1, 1},
                     {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, true);
  c3.math = MathMode::Tf32;
  c3.accumulateStats = true;
  std::vector<ConvSpec> specs{c3};
  for (const ConvSpec &s : mmaSpecs())
    if (s.kernelName == "s2_convt2d_gelu_norm")
      specs.push_back(s);
  ASSERT_EQ(specs.size(), 2u);
  for (const ConvSpec &s : specs) {
    KernelSource k = emitOrFail(emitConvMma(s));
    EXPECT_EQ(constantOf(k, "kStageStores"), 1) << s.kernelName;
    // S2's 8 channels are one k8 step per tap: its warps' two rows share A fragments; the
    // 3-channel convolution's steps mix taps, so it has no row reuse.
    EXPECT_EQ(k.tileConfig.find("A fragments shared by each warp's 2 tile rows") !=
                  std::string::npos,
              s.kernelName == "s2_convt2d_gelu_norm")
        << k.tileConfig;
    ConvMmaTile t = chooseConvMmaTile(s);
    int64_t mcols = t.tw / 16, mw = int64_t(t.td) * t.th * mcols / t.warps;
    EXPECT_GE(16 * (mw % mcols == 0 ? mcols : 1), 32) << s.kernelName << ": " << k.tileConfig;
  }
}

TEST(ConvMma, RefusesWhatItCannotRunWithAReason) {
  std::string why;
  // Walked by phase, 16 channels of 8 phases are 128 columns of the product.
  ConvSpec s = conv("t_s2", true, 3, 1, 16, 16, 1, {5, 9, 9}, {3, 3, 3}, {2, 2, 2}, {0, 0, 0},
                    {1, 1, 1}, {0, 0, 0}, false);
  s.math = MathMode::Tf32;
  EXPECT_FALSE(convMmaSupports(s, &why));
  EXPECT_EQ(why, "more than 64 (output phase, channel) columns per group");
  EXPECT_EQ(errorOf(emitConvDirect(s)),
            "t_s2: conv_mma cannot run this convolution: more than 64 (output phase, channel) "
            "columns per group");
  s.Cin = 8, s.Cout = 8, s.stride = {1, 2, 2}; // 4 phases x 8 channels
  EXPECT_TRUE(convMmaSupports(s, &why)) << why;
  s = conv("wide", false, 2, 1, 8, 72, 1, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1},
           {0, 0, 0}, false);
  EXPECT_FALSE(convMmaSupports(s, &why));
  EXPECT_EQ(why, "more than 64 output channels per group");
  // 64 output channels (8 n8 tiles: 32 accumulators per m16 tile), statistics (32 more) and
  // the lane offsets of 3-channel steps do not fit one thread.
  s = conv("many", false, 2, 1, 3, 64, 1, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1},
           {0, 0, 0}, false);
  s.accumulateStats = true;
  EXPECT_FALSE(convMmaSupports(s, &why));
  EXPECT_EQ(why, "the accumulators, lane offsets and statistics of one m16 tile exceed 64 values "
                 "per thread");
  s = conv("deep", false, 3, 1, 64, 16, 1, {1, 6, 6}, {3, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1},
           {0, 0, 0}, false);
  EXPECT_FALSE(convMmaSupports(s, &why));
  EXPECT_EQ(why, "the group's weights exceed 32 KiB of fragments");
  s = conv("ffma", false, 1, 1, 4, 4, 1, {1, 1, 8}, {1, 1, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1},
           {0, 0, 0}, false);
  EXPECT_EQ(errorOf(emitConvMma(s)), "ffma: conv_mma computes in TF32 only");
  s.math = MathMode::Tf32;
  EXPECT_EQ(errorOf(emitConvMma(s, {1, 1, 24, 4, 1})),
            "ffma: conv_mma tile 1x1x24 does not split into 4 warps of whole m16 tiles");
  // Useful share: S2's 8x8 groups fill every tile; a depthwise convolution 1/8 of N and 9/16
  // of K.
  for (const ConvCase &c : convCases()) {
    if (c.spec.kernelName == "s2_convt2d_gelu_stats") {
      EXPECT_DOUBLE_EQ(convMmaUsefulShare(c.spec), 1.0);
    }
  }
  ConvSpec dw = conv("dw", false, 2, 1, 8, 8, 8, {1, 9, 9}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
                     {1, 1, 1}, {0, 0, 0}, false);
  EXPECT_DOUBLE_EQ(convMmaUsefulShare(dw), 1.0 / 8 * 9.0 / 16);
  // S4 walked by phase: 8 super-taps x 8 channels as K, 8 phases x 8 channels as N; each of
  // its 27 kernel taps meets one (super-tap, phase) pair, the other 37 of the 64 step x tile
  // products are skipped, so every product that runs is useful.
  int found = 0;
  for (const ConvCase &c : convCases()) {
    if (c.spec.kernelName != "s4_convt3d_grouped")
      continue;
    ++found;
    ConvSpec s4 = c.spec;
    s4.math = MathMode::Tf32;
    EXPECT_DOUBLE_EQ(convMmaUsefulShare(s4), 1.0);
    KernelSource k = emitOrFail(emitConvMma(s4));
    EXPECT_NE(k.tileConfig.find("8 channels x 8 output phases"), std::string::npos) << k.tileConfig;
    EXPECT_NE(k.tileConfig.find("(27 of 64 step x tile products)"), std::string::npos)
        << k.tileConfig;
  }
  EXPECT_EQ(found, 1);
}

TEST(Norm, EveryCaseCompilesForHopperAndAmpere) {
  for (const NormCase &c : normCases()) {
    llvm::Expected<KernelSource> e =
        c.kind == NormCase::Kind::Apply ? emitNormApply(c.spec)
        : c.kind == NormCase::Kind::ScaleShift
            ? emitNormScaleShift(c.spec)
            : emitNormReduce(c.spec, c.overChannels, c.mean, c.normalised);
    KernelSource k = emitOrFail(std::move(e));
    ASSERT_FALSE(k.source.empty()) << c.spec.kernelName;
    for (const char *arch : {"sm_90a", "sm_80"}) {
      NvrtcResult r = compile(k, arch);
      EXPECT_TRUE(r.ok) << c.spec.kernelName << " for " << arch << ":\n" << r.log;
    }
  }
}

TEST(Norm, ApplyVectorisesOnlyWholeFloat4Planes) {
  KernelSource a = emitOrFail(emitNormApply(norm("a", 2, 4, 64, 2, true)));
  EXPECT_NE(a.source.find("constexpr int kVec = 4;"), std::string::npos);
  KernelSource b = emitOrFail(emitNormApply(norm("b", 2, 4, 66, 2, true)));
  EXPECT_NE(b.source.find("constexpr int kVec = 1;"), std::string::npos);
  // The grid covers every vector of a plane: chunks * 256 threads * 4 per thread >= L / vec.
  KernelSource c = emitOrFail(emitNormApply(norm("c", 1, 1, 258 * 258, 1, true)));
  EXPECT_GE(int64_t(c.launch.grid[0]) * c.launch.block[0] * 4, 258 * 258 / 4);
  EXPECT_LT(int64_t(c.launch.grid[0] - 1) * c.launch.block[0] * 4, 258 * 258 / 4);
}

TEST(Norm, RejectsBadSpecs) {
  EXPECT_EQ(errorOf(emitNormApply(norm("gn", 1, 12, 10, 5, true))),
            "gn: groups=5 does not divide C=12");
  NormSpec s = norm("red", 1, 12, 10, 4, true);
  s.post.code = kRelu;
  s.groups = 5;
  EXPECT_EQ(errorOf(emitNormReduce(s, true, true, true)), "red: groups=5 does not divide C=12");
  s.groups = 4;
  s.kernelName = "ss";
  EXPECT_EQ(errorOf(emitNormScaleShift(s)), "ss: norm scale/shift takes no post-norm ops");
}
