//===- tests/gpu/GpuCorpusTest.cpp - the corpus at small scale against the reference -===//
//
// Every graph of bench/corpus/small (the corpus's structure and attributes at sizes the
// float64 CPU reference evaluates quickly) runs on the GPU on random data and is compared
// with the reference. The full-size graphs are checked against PyTorch in float64 by
// bench/corpus_bench.py. SINTER_CORPUS_DIR overrides the corpus folder (bench/corpus).
//
//===--------------------------------------------------------------------------------===//
#include "GpuHarness.h"

#include "ir/Parser.h"
#include "tests/CorpusFiles.h"

#include <filesystem>

namespace sinter::test {
namespace {

std::vector<std::string> smallGraphs() { return sirFiles(corpusDir() + "/small"); }

class GpuCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCorpus, MatchesTheReference) {
  SINTER_REQUIRE_GPU();
  auto graphs = parseSirFile(GetParam());
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  GpuRun run = runAndCompare(graphs->front(), 7);
  ASSERT_FALSE(run.errors.empty()) << "nothing ran";
  for (const OutputError &e : run.errors) {
    EXPECT_LE(e.relL2, run.tolerance) << e.name << "\n" << run.kernelList;
    EXPECT_EQ(e.nonFinite, 0) << e.name << "\n" << run.kernelList;
  }
}

// The same graphs with every conv + group norm that conv_mma can finish in its own kernel
// finished there (JitOptions::normInKernelWherePossible), although the planner keeps those
// small ones on two kernels: the held-values kernel on many shapes (1-D to 3-D, strides,
// groups, edges of every kind) against the reference.
TEST_P(GpuCorpus, MatchesTheReferenceWithNormsInTheConvKernel) {
  SINTER_REQUIRE_GPU();
  auto graphs = parseSirFile(GetParam());
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  JitOptions options;
  options.normInKernelWherePossible = true;
  GpuRun run = runAndCompare(graphs->front(), 11, options);
  ASSERT_FALSE(run.errors.empty()) << "nothing ran";
  for (const OutputError &e : run.errors) {
    EXPECT_LE(e.relL2, run.tolerance) << e.name << "\n" << run.kernelList;
    EXPECT_EQ(e.nonFinite, 0) << e.name << "\n" << run.kernelList;
  }
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  return std::filesystem::path(info.param).stem().string();
}

INSTANTIATE_TEST_SUITE_P(Small, GpuCorpus, ::testing::ValuesIn(smallGraphs()), testName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuCorpus);

} // namespace
} // namespace sinter::test
