//===- tests/compiler/CorpusTest.cpp - every corpus graph plans well and compiles ----===//
//
// The corpus (bench/corpus/, written by bench/corpus/corpus.py) is the broad family of graphs
// the compiler is judged on. Without a GPU, CI checks here that each graph, at full size,
// parses, verifies and plans into launches that are not degenerate (the guard below: a
// performance cliff shows up as a plan long before anyone times it), and that every kernel
// it needs compiles with NVRTC for sm_90a. The five workloads go through the
// same guard. tests/gpu/GpuCorpusTest.cpp runs the small-scale graphs against the reference.
// SINTER_CORPUS_DIR overrides the corpus folder (bench/corpus).
//
//===--------------------------------------------------------------------------------===//
#include "tests/CorpusFiles.h"
#include "tests/compiler/PlanGuard.h"

#include "compiler/Jit.h"
#include "ir/Parser.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace sinter;

namespace {

using test::corpusDir;
using test::sirFiles;

std::vector<std::string> fullGraphs() {
  std::vector<std::string> files = sirFiles(corpusDir() + "/full");
  for (const std::string &w : sirFiles(SINTER_WORKLOADS_DIR))
    files.push_back(w);
  return files;
}

std::string stem(const std::string &path) { return std::filesystem::path(path).stem().string(); }

TEST(Corpus, HasTheBreadthItPromises) {
  // At least 40 graphs at each scale, the same names at both.
  std::vector<std::string> full = sirFiles(corpusDir() + "/full"),
                           small = sirFiles(corpusDir() + "/small");
  EXPECT_GE(full.size(), 40u) << corpusDir();
  ASSERT_EQ(full.size(), small.size());
  for (size_t i = 0; i < full.size(); ++i)
    EXPECT_EQ(stem(full[i]), stem(small[i]));
}

class CorpusGraph : public ::testing::TestWithParam<std::string> {
protected:
  Graph load() {
    auto graphs = parseSirFile(GetParam());
    if (!graphs) {
      ADD_FAILURE() << llvm::toString(graphs.takeError());
      return Graph();
    }
    return std::move(graphs->front());
  }
};

TEST_P(CorpusGraph, PlansWithoutDegenerateLaunches) {
  Graph g = load();
  if (g.ops.empty())
    return;
  PipelineOptions opts;
  auto result = runPipeline(g, opts);
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  for (const std::string &problem : test::degenerateLaunches(result->plan))
    ADD_FAILURE() << problem;
}

TEST_P(CorpusGraph, EveryKernelCompilesForHopper) {
  Graph g = load();
  if (g.ops.empty())
    return;
  JitOptions opts;
  opts.arch = "sm_90a";
  opts.useCache = false;
  auto compiled = compileGraph(g, opts);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  ASSERT_EQ(compiled->kernels.size(), compiled->pipeline.plan.plan.kernels.size());
  for (const CompiledKernel &k : compiled->kernels) {
    EXPECT_EQ(k.cubin.substr(0, 4), "\x7f"
                                    "ELF")
        << k.name;
    EXPECT_GT(k.resources.registers, 0) << k.name << ": no ptxas report\n" << k.log;
    // Spills are a tuning matter here (a few direct convolutions spill tens of bytes); the
    // workloads' test holds their kernels to none.
    if (k.resources.spillStoreBytes > 0)
      std::printf("note: %s spills %d bytes\n", k.name.c_str(), int(k.resources.spillStoreBytes));
  }
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) { return stem(info.param); }

INSTANTIATE_TEST_SUITE_P(Full, CorpusGraph, ::testing::ValuesIn(fullGraphs()), testName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CorpusGraph);

} // namespace
