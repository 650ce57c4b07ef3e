//===- tests/compiler/WorkloadCompileTest.cpp - NVRTC compiles every workload kernel -===//
//
// CI has no GPU but has NVRTC: every kernel the five workloads need must compile for Hopper
// (sm_90a, the target) and Ampere (sm_80), in every precision, and the result must be a
// cubin with a kernel of the planned name, without register spills.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Jit.h"
#include "ir/Parser.h"

#include <gtest/gtest.h>

using namespace sinter;

namespace {

struct Case {
  const char *file;
  const char *arch;
  Precision precision;
};

/// Test logs name the case instead of dumping its bytes.
void PrintTo(const Case &c, std::ostream *os) {
  *os << c.file << " " << c.arch << " " << precisionName(c.precision).str();
}

class WorkloadCompile : public ::testing::TestWithParam<Case> {};

TEST_P(WorkloadCompile, EveryKernelCompiles) {
  const Case &c = GetParam();
  auto graphs = parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/" + c.file);
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  JitOptions opts;
  opts.arch = c.arch;
  opts.precision = c.precision;
  opts.useCache = false;
  auto compiled = compileGraph(graphs->front(), opts);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  ASSERT_EQ(compiled->kernels.size(), compiled->pipeline.plan.kernels.size());
  for (const CompiledKernel &k : compiled->kernels) {
    EXPECT_GT(k.cubin.size(), 1000u) << k.name;
    // An ELF image: what cuModuleLoadData takes.
    EXPECT_EQ(k.cubin.substr(0, 4), "\x7f" "ELF") << k.name;
    EXPECT_NE(k.cubin.find(k.name), std::string::npos) << k.name << " is not in its cubin";
    EXPECT_EQ(k.arch, c.arch);
    EXPECT_GT(k.resources.registers, 0) << k.name << ": no ptxas report\n" << k.log;
    EXPECT_LE(k.resources.spillStoreBytes, 0) << k.name << " spills registers";
  }
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return std::string(info.param.file).substr(0, 2) + "_" + info.param.arch + "_" +
         std::string(precisionName(info.param.precision));
}

INSTANTIATE_TEST_SUITE_P(
    Workloads, WorkloadCompile,
    ::testing::Values(Case{"s0_convt3d_relu_gn.sir", "sm_90a", Precision::Auto},
                      Case{"s1_conv3d_gn_mean.sir", "sm_90a", Precision::Auto},
                      Case{"s2_convt2d_gelu_gn.sir", "sm_90a", Precision::Auto},
                      Case{"s3_gemm_gn_min_bias.sir", "sm_90a", Precision::Auto},
                      Case{"s4_convt3d_grouped.sir", "sm_90a", Precision::Auto},
                      Case{"s0_convt3d_relu_gn.sir", "sm_80", Precision::Auto},
                      Case{"s1_conv3d_gn_mean.sir", "sm_80", Precision::Auto},
                      Case{"s2_convt2d_gelu_gn.sir", "sm_80", Precision::Auto},
                      Case{"s3_gemm_gn_min_bias.sir", "sm_80", Precision::Auto},
                      Case{"s4_convt3d_grouped.sir", "sm_80", Precision::Auto},
                      Case{"s0_convt3d_relu_gn.sir", "sm_90a", Precision::Fp32},
                      Case{"s3_gemm_gn_min_bias.sir", "sm_90a", Precision::Tf32}),
    caseName);

} // namespace
