//===- tests/kernels_generic/GenericKernelsTest.cpp - generic emitters, CPU side ----===//
//
// Without a GPU: every case of Cases.cpp compiles with NVRTC for sm_90a and sm_80 with an
// empty log; the emitters pick the kernel shapes the templates' comments promise (dims merged,
// team or lane-per-output mode, splits with their workspace); bad specs give the exact errors.
// The GPU half of the check is gpu_check.py on the cases written by generic_device_cases.
//
//===--------------------------------------------------------------------------------===//
#include "tests/kernels_generic/Cases.h"
#include "tests/kernels_generic/NvrtcCompile.h"

#include "compiler/kernels/Generic.h"

#include <gtest/gtest.h>

namespace sinter {
namespace {

using testing::compileWithNvrtc;
using testing::GenericCase;

/// The source line `constexpr <type> name = ...;` of a generated prologue, without the type.
std::string constantLine(const std::string &source, const std::string &name) {
  size_t at = source.find(" " + name + " = ");
  if (at == std::string::npos)
    at = source.find(" " + name + "[] = ");
  if (at == std::string::npos)
    return "";
  size_t end = source.find(';', at);
  return source.substr(at + 1, end - at - 1);
}

KernelSource emitOk(llvm::Expected<KernelSource> ks) {
  if (!ks) {
    ADD_FAILURE() << llvm::toString(ks.takeError());
    return {};
  }
  return std::move(*ks);
}

std::string errorOf(llvm::Expected<KernelSource> ks) {
  if (ks)
    return "(no error)";
  return llvm::toString(ks.takeError());
}

TEST(GenericKernels, EveryCaseCompilesForSm90aAndSm80) {
  auto cases = testing::genericCases();
  ASSERT_TRUE(bool(cases)) << llvm::toString(cases.takeError());
  ASSERT_GE(cases->size(), 40u);
  for (const GenericCase &c : *cases) {
    for (const char *arch : {"sm_90a", "sm_80"}) {
      auto out = compileWithNvrtc(c.kernel.source, c.name, arch);
      EXPECT_TRUE(out.ok) << c.name << " for " << arch << ":\n"
                          << out.log << "\n"
                          << c.kernel.source;
      EXPECT_EQ(out.log, "") << c.name << " for " << arch;
      EXPECT_GT(out.cubin.size(), 0u) << c.name << " for " << arch;
    }
  }
}

TEST(GenericKernels, SourcesAreDeterministicAndNamed) {
  auto a = testing::genericCases();
  auto b = testing::genericCases();
  ASSERT_TRUE(bool(a) && bool(b));
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].kernel.source, (*b)[i].kernel.source);
    EXPECT_NE((*a)[i].kernel.source.find("#define SINTER_KERNEL " + (*a)[i].name + "\n"),
              std::string::npos);
  }
}

TEST(GenericKernels, ElementwiseVectorisesOnlyMultiplesOfFour) {
  ElementwiseSpec s{"ew", 1024, 3, "return 1.f;"};
  KernelSource k = emitOk(emitElementwise(s));
  EXPECT_EQ(constantLine(k.source, "kVec"), "kVec = 4");
  EXPECT_EQ(k.launch.grid[0], 1u); // 256 quads: one block of 256
  s.numel = 1023;
  k = emitOk(emitElementwise(s));
  EXPECT_EQ(constantLine(k.source, "kVec"), "kVec = 1");
  EXPECT_EQ(k.launch.grid[0], 4u);
}

TEST(GenericKernels, ReduceMergesAdjacentDimsAndDropsSizeOne) {
  ReduceSpec s;
  s.kernelName = "r";
  s.inShape = {2, 3, 1, 4, 5};
  s.dims = {1, 3}; // 3 and 4 are adjacent once the size-1 dim is dropped
  KernelSource k = emitOk(emitReduce(s));
  EXPECT_EQ(constantLine(k.source, "kKeptSize"), "kKeptSize[] = {2LL, 5LL}");
  EXPECT_EQ(constantLine(k.source, "kKeptStride"), "kKeptStride[] = {60LL, 1LL}");
  EXPECT_EQ(constantLine(k.source, "kRedSize"), "kRedSize[] = {12LL}");
  EXPECT_EQ(constantLine(k.source, "kRedStride"), "kRedStride[] = {5LL}");
  EXPECT_EQ(constantLine(k.source, "kR"), "kR = 12");
  EXPECT_EQ(constantLine(k.source, "kNumOut"), "kNumOut = 10");
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 1");
}

TEST(GenericKernels, ReduceOverOuterDimMapsLanesToOutputsAndSplits) {
  ReduceSpec s;
  s.kernelName = "sum0";
  s.inShape = {4096, 4096};
  s.dims = {0};
  KernelSource k = emitOk(emitReduce(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 1");
  EXPECT_EQ(k.launch.grid[0], 128u); // 32 outputs a block
  EXPECT_EQ(k.launch.block[0], 256u);
  EXPECT_EQ(k.launch.grid[1], 8u); // 128 blocks are too few: split 8 ways
  ASSERT_EQ(k.workspace.size(), 1u);
  EXPECT_EQ(k.workspace[0].slot, kReduceWorkSlot);
  EXPECT_EQ(k.workspace[0].bytes, 4096 * 8 * 8 + 4096 * 4);
  EXPECT_EQ(k.workspace[0].init, WorkspaceNeed::Init::Zero);
  s.inShape = {128, 16, 32, 32}; // over the channels of images: 8 groups of 32 outputs a block
  s.dims = {1};
  k = emitOk(emitReduce(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 1");
  EXPECT_EQ(constantLine(k.source, "kCols"), "kCols = 8");
  EXPECT_EQ(k.launch.block[0], 256u);
  EXPECT_EQ(k.launch.grid[0], 128u * 1024 / 256);
}

TEST(GenericKernels, ReduceOverAllOfTenMillionSplitsOneOutput) {
  ReduceSpec s;
  s.kernelName = "all";
  s.inShape = {10000000};
  s.dims = {0};
  KernelSource k = emitOk(emitReduce(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 0");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 512");
  EXPECT_EQ(k.launch.grid[0], 1u);
  EXPECT_GT(k.launch.grid[1], 100u);
  EXPECT_LE(int64_t(k.launch.grid[1]) * 512 * 64, 10000000 + 512 * 64 * 2);
  EXPECT_EQ(k.workspace.size(), 1u);
}

TEST(GenericKernels, ReduceRowsUseTeamsWithoutSplitWhenOutputsFillTheGpu) {
  ReduceSpec s;
  s.kernelName = "rows";
  s.inShape = {65536, 300};
  s.dims = {1};
  KernelSource k = emitOk(emitReduce(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 0");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 32");
  EXPECT_EQ(k.launch.grid[0], 65536u / 8);
  EXPECT_EQ(k.launch.grid[1], 1u);
  EXPECT_TRUE(k.workspace.empty());
}

TEST(GenericKernels, SoftmaxPicksRowOrColumnMode) {
  SoftmaxSpec s;
  s.kernelName = "sm";
  s.shape = {8, 3000};
  s.dim = 1;
  // Rows of up to 8192 are held in registers: 750 float4s over a 256-thread team.
  KernelSource k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 4");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 256");
  EXPECT_EQ(constantLine(k.source, "kVec"), "kVec = 4");
  EXPECT_EQ(k.launch.grid[0], 8u);
  EXPECT_NE(k.tileConfig.find("12 elements a thread held in registers"), std::string::npos)
      << k.tileConfig;
  s.shape = {1000, 512}; // attention's rows: a warp each, 4 float4s a thread
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 4");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 32");
  EXPECT_EQ(k.launch.grid[0], 125u);
  s.shape = {9, 37}; // odd rows: scalars, 2 a thread
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kVec"), "kVec = 1");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 32");
  EXPECT_EQ(k.launch.grid[0], 2u);
  s.shape = {8, 10000}; // longer: two passes with a running state
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 0");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 1024");
  EXPECT_EQ(k.launch.grid[0], 8u);
  s.shape = {4, 100, 7};
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 1");
  EXPECT_EQ(constantLine(k.source, "kInner"), "kInner = 7");
  EXPECT_EQ(constantLine(k.source, "kRows"), "kRows = 32"); // 28 lines: as many warps as fit
  EXPECT_EQ(k.launch.block[0], 1024u);
  EXPECT_EQ(k.launch.grid[0], 1u);
  s.shape = {4, 5, 7}; // a line shorter than the warps: no more rows than elements
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kRows"), "kRows = 4");
  EXPECT_EQ(k.launch.block[0], 256u); // two groups of 32 lines, 4 warps each
  s.shape = {128, 16, 64, 64}; // the channels of images: whole lines in registers
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 2");
  EXPECT_EQ(constantLine(k.source, "kVec"), "kVec = 4");
  EXPECT_EQ(k.launch.grid[0], 128u * 64 * 64 / 4 / 256);
  s.shape = {128, 65, 64, 64}; // too many for a thread: split over 4 warps, 17 a thread
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 3");
  EXPECT_EQ(constantLine(k.source, "kRows"), "kRows = 4");
  EXPECT_EQ(k.launch.block[0], 256u); // two groups of 32 lines
  EXPECT_EQ(k.launch.grid[0], 128u * 64 * 64 / 64);
  EXPECT_NE(k.tileConfig.find("17 elements a thread held in registers"), std::string::npos)
      << k.tileConfig;
  s.shape = {128, 128, 129, 129}; // convt2d_kb91's: 4 warps of 32 elements
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kRows"), "kRows = 4");
  EXPECT_NE(k.tileConfig.find("32 elements a thread held in registers"), std::string::npos)
      << k.tileConfig;
  s.shape = {2, 1000, 4096}; // 32 warps of 32 a thread
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 3");
  EXPECT_EQ(k.launch.block[0], 1024u);
  s.shape = {2, 1025, 4096}; // longer lines: warps over lines, two passes
  k = emitOk(emitSoftmax(s));
  EXPECT_EQ(constantLine(k.source, "kMode"), "kMode = 1");
}

TEST(GenericKernels, ChannelStatsListsItsZeroedStatistics) {
  ChannelStatsSpec s{"st", 2, 3, 1 << 20, {}};
  KernelSource k = emitOk(emitChannelStats(s));
  ASSERT_EQ(k.workspace.size(), 1u);
  EXPECT_EQ(k.workspace[0].slot, kChannelStatsSlot);
  EXPECT_EQ(k.workspace[0].bytes, 2 * 3 * 16);
  EXPECT_EQ(k.launch.grid[0], 6u);
  EXPECT_GT(k.launch.grid[1], 1u);
  EXPECT_EQ(constantLine(k.source, "kVec4"), "kVec4 = true");
  int64_t chunk = std::stoll(constantLine(k.source, "kChunk").substr(9));
  EXPECT_EQ(chunk % 4, 0);
  EXPECT_GE(chunk * k.launch.grid[1], 1 << 20);
}

TEST(GenericKernels, RowNormTeamFollowsTheRowLength) {
  RowNormSpec s;
  s.kernelName = "rn";
  s.rows = 1024 * 16;
  s.width = 512; // a 2-D group norm of 8192 features in 16 groups
  KernelSource k = emitOk(emitRowNorm(s));
  EXPECT_EQ(constantLine(k.source, "kVec"), "kVec = 4");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 64");
  EXPECT_EQ(constantLine(k.source, "kPer"), "kPer = 2");
  EXPECT_EQ(k.launch.block[0], 64u);
  EXPECT_EQ(k.launch.grid[0], 1024u * 16);
  s.width = 8; // groups of 8 columns: teams of one thread, many rows a warp
  k = emitOk(emitRowNorm(s));
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 1");
  EXPECT_EQ(k.launch.block[0], 256u);
  EXPECT_EQ(k.launch.grid[0], 1024u * 16 / 256);
  s.width = 999; // odd: scalar loads
  k = emitOk(emitRowNorm(s));
  EXPECT_EQ(constantLine(k.source, "kVec"), "kVec = 1");
  EXPECT_EQ(constantLine(k.source, "kTeam"), "kTeam = 512");
  EXPECT_EQ(constantLine(k.source, "kPer"), "kPer = 2");
}

TEST(GenericKernels, RowNormSplitsLongOrFewRows) {
  RowNormSpec s;
  s.kernelName = "rn";
  s.rows = 4096;
  s.width = 32768;
  EXPECT_EQ(chooseRowNorm(s), RowNormMode::Resident);
  s.width = 32772; // past 1024 threads x 8 float4
  EXPECT_EQ(chooseRowNorm(s), RowNormMode::Split);
  EXPECT_EQ(errorOf(emitRowNorm(s)),
            "rn: rows of 32772 do not fit in the registers of one block; split the statistics");
  s.rows = 16; // S0-sized group norm: 16 samples x 8 groups of 16 x 39304
  s.width = 16 * 39304;
  EXPECT_EQ(chooseRowNorm(s), RowNormMode::Split);
  s.rows = 8; // long rows, few of them: split even though they would fit
  s.width = 16384;
  EXPECT_EQ(chooseRowNorm(s), RowNormMode::Split);
  s.width = 4096; // short enough that one team a row is quick anyway
  EXPECT_EQ(chooseRowNorm(s), RowNormMode::Resident);
  s.rows = 16;
  s.width = 16 * 39304;
  KernelSource k = emitOk(emitRowApply(s));
  ASSERT_EQ(k.workspace.size(), 1u);
  EXPECT_EQ(k.workspace[0].slot, kChannelStatsSlot);
  EXPECT_EQ(k.workspace[0].bytes, 16 * 16);
  int64_t chunk = std::stoll(constantLine(k.source, "kChunk").substr(9));
  int64_t chunks = std::stoll(constantLine(k.source, "kChunks").substr(10));
  EXPECT_GE(chunk * chunks, 16 * 39304);
  EXPECT_EQ(int64_t(k.launch.grid[0]), 16 * chunks);
}

TEST(GenericKernels, BadSpecsGiveExactErrors) {
  ReduceSpec r;
  r.kernelName = "red";
  r.inShape = {4, 5};
  r.dims = {2};
  EXPECT_EQ(errorOf(emitReduce(r)), "red: reduced dim 2 is out of range for [4,5]");
  r.dims = {1, 0};
  EXPECT_EQ(errorOf(emitReduce(r)), "red: reduced dims must be sorted and distinct");
  r.dims = {};
  EXPECT_EQ(errorOf(emitReduce(r)), "red: sum with no dims to reduce");
  r.dims = {0};
  r.inShape = {0, 5};
  EXPECT_EQ(errorOf(emitReduce(r)), "red: sum over an empty tensor [0,5]");
  r.inShape = {4, 5};
  r.outSlot = kReduceWorkSlot;
  EXPECT_EQ(errorOf(emitReduce(r)), "red: output slot 5 is the reduction workspace");
  r.outSlot = 0;
  EXPECT_EQ(errorOf(emitReduce(r)), "red: output slot 0 is not in 1..15");

  SoftmaxSpec sm;
  sm.kernelName = "sm";
  sm.shape = {3, 4};
  sm.dim = 2;
  sm.log = true;
  EXPECT_EQ(errorOf(emitSoftmax(sm)), "sm: log_softmax dim 2 is out of range for [3,4]");

  PoolSpec p;
  p.kernelName = "pool";
  p.max = false;
  p.spatialDims = 1;
  p.in = {1, 1, 10};
  p.kernel = {1, 1, 2};
  p.stride = {1, 1, 2};
  p.out = {1, 1, 6};
  EXPECT_EQ(errorOf(emitPool(p)),
            "pool: avg_pool output size 6 has windows past the padded input in spatial entry 2");
  p.out = {1, 1, 5};
  p.dilation = {1, 1, 2};
  EXPECT_EQ(errorOf(emitPool(p)), "pool: avg_pool has no dilation");
  p.dilation = {1, 1, 1};
  p.in = {2, 1, 10};
  EXPECT_EQ(errorOf(emitPool(p)), "pool: avg_pool spec has a non-trivial unused spatial entry 0");

  // A reduction of a pool's result: the pool is checked, and its result is what is reduced.
  ReduceSpec pr;
  pr.kernelName = "pr";
  pr.dims = {2};
  pr.pooled = p;
  pr.inShape = {1, 1, 5};
  EXPECT_EQ(errorOf(emitReduce(pr)), "pr: avg_pool spec has a non-trivial unused spatial entry 0");
  pr.pooled->in = {1, 1, 10};
  pr.inShape = {1, 1, 10};
  EXPECT_EQ(errorOf(emitReduce(pr)), "pr: sum over [1,1,10] reads a pool whose result is [1,1,5]");
  pr.inShape = {1, 1, 5};
  EXPECT_TRUE(bool(emitReduce(pr)));
  RowNormSpec pn;
  pn.kernelName = "pn";
  pn.pooled = pr.pooled;
  pn.rows = 2;
  pn.width = 5;
  EXPECT_EQ(errorOf(emitRowNorm(pn)), "pn: norm over 2 rows of 5 reads a pool of 5 elements");
  pn.rows = 1;
  EXPECT_TRUE(bool(emitRowNorm(pn)));
  EXPECT_EQ(errorOf(emitRowApply(pn)), "pn: a norm that computes its pooled input must hold its "
                                       "rows in registers (row_norm.cuh)");

  ElementwiseSpec e{"3bad", 10, 3, "return 0.f;"};
  EXPECT_EQ(errorOf(emitElementwise(e)), "generic kernel: '3bad' is not a valid kernel name");
  e.kernelName = "ew";
  e.numel = 0;
  EXPECT_EQ(errorOf(emitElementwise(e)), "ew: elementwise kernel over an empty tensor");

  RowNormSpec rn;
  rn.kernelName = "rn";
  rn.outSlot = 6;
  EXPECT_EQ(errorOf(emitRowNorm(rn)), "rn: norm output slot 6 holds statistics, gamma or beta");
  rn.outSlot = 3;
  rn.width = 10;
  rn.affineGroups = 3;
  rn.affineDiv = 4;
  EXPECT_EQ(errorOf(emitRowApply(rn)), "rn: affine groups 3 and divisor 4 do not index whole "
                                       "parameters of rows of 10");
}

} // namespace
} // namespace sinter
