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

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace sinter::test {
namespace {

std::vector<std::string> smallGraphs() {
  const char *env = std::getenv("SINTER_CORPUS_DIR");
  std::string dir = (env && *env ? std::string(env) : std::string(SINTER_CORPUS_DIR)) + "/small";
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".sir")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

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

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  return std::filesystem::path(info.param).stem().string();
}

INSTANTIATE_TEST_SUITE_P(Small, GpuCorpus, ::testing::ValuesIn(smallGraphs()), testName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GpuCorpus);

} // namespace
} // namespace sinter::test
