//===- tests/gpu/GpuWorkloadsTest.cpp - the five workloads at full size on the GPU -===//
//
// Each workload of ../shared/workloads at its real size, on random data (random weights,
// inputs and norm gamma/beta), against the float64 CPU reference. The reference is the
// slow part (S0 is 278 GFLOP); it uses every core. SINTER_WORKLOADS=s1,s4 picks a subset;
// SINTER_WORKLOADS_DIR overrides where the .sir files are.
//
//===--------------------------------------------------------------------------------===//
#include "GpuHarness.h"

#include "ir/Parser.h"

#include <cstdlib>
#include <string>

namespace sinter::test {
namespace {

bool selected(const std::string &prefix) {
  const char *only = std::getenv("SINTER_WORKLOADS");
  return !only || std::string(only).find(prefix) != std::string::npos;
}

class GpuWorkload : public ::testing::TestWithParam<const char *> {};

TEST_P(GpuWorkload, MatchesReferenceAtFullSize) {
  SINTER_REQUIRE_GPU();
  std::string file = GetParam();
  if (!selected(file.substr(0, 2)))
    GTEST_SKIP() << "not in SINTER_WORKLOADS";
  const char *dir = std::getenv("SINTER_WORKLOADS_DIR"); // where ../shared is elsewhere
  auto graphs = parseSirFile(std::string(dir ? dir : SINTER_WORKLOADS_DIR) + "/" + file);
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  GpuRun run = runAndCompare(graphs->front(), 7);
  ASSERT_FALSE(run.errors.empty());
  for (const OutputError &e : run.errors) {
    std::printf("%s: %s rel L2 %.3e (tolerance %.0e), max abs %.3e, %d kernels\n", file.c_str(),
                e.name.c_str(), e.relL2, run.tolerance, e.maxAbs, run.kernels);
    EXPECT_EQ(e.nonFinite, 0) << e.name;
    EXPECT_LT(e.relL2, run.tolerance) << e.name << "\n" << run.kernelList;
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, GpuWorkload,
                         ::testing::Values("s0_convt3d_relu_gn.sir", "s1_conv3d_gn_mean.sir",
                                           "s2_convt2d_gelu_gn.sir", "s3_gemm_gn_min_bias.sir",
                                           "s4_convt3d_grouped.sir"),
                         [](const auto &info) {
                           return std::string(info.param).substr(0, 2);
                         });

} // namespace
} // namespace sinter::test
