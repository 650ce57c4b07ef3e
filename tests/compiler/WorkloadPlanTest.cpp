//===- tests/compiler/WorkloadPlanTest.cpp - golden fusion plans of the workloads --===//
//
// The five workloads must fuse exactly as the project promises: S0 a convolution with
// statistics in its epilogue then one normalise kernel; S1 statistics only (the conv output
// never written); S2 like S0 on the direct conv template; S3 the
// GEMM with group norm and the row min in its epilogue (its output never written), then the
// broadcast add; S4 one kernel.
//
//===--------------------------------------------------------------------------------===//
#include "PlanSummary.h"

#include "ir/Parser.h"

#include <gtest/gtest.h>

using namespace sinter;

namespace {

std::string summarize(const std::string &file) {
  auto graphs = parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/" + file);
  EXPECT_TRUE(bool(graphs)) << (graphs ? "" : llvm::toString(graphs.takeError()));
  if (!graphs)
    return "";
  auto r = runPipeline(graphs->front(), {Precision::Auto, "sm_90a", false});
  EXPECT_TRUE(bool(r)) << (r ? "" : llvm::toString(r.takeError()));
  if (!r)
    return "";
  return test::planSummary(*r);
}

TEST(WorkloadPlan, S0StatisticsInTheConvEpilogueThenOneNormalise) {
  EXPECT_EQ(summarize("s0_convt3d_relu_gn.sir"),
            "group conv+epilogue+norm+epilogue: conv_transpose relu group_norm\n"
            "  fill r.stats\n"
            "  launch conv_pack.cuh (weight rows) 1=w 6=w.rows\n"
            "  launch conv_igemm.cuh (anchor + epilogue + statistics) 0=x 1=w 3=r 4=r.stats "
            "6=w.rows\n"
            "  launch norm_apply.cuh (normalise + epilogue) 0=r 3=o 4=r.stats 6=gamma 7=beta\n");
}

TEST(WorkloadPlan, S1ConvOutputNeverWritten) {
  EXPECT_EQ(summarize("s1_conv3d_gn_mean.sir"),
            "group conv+epilogue+norm+reduce: conv group_norm mean\n"
            "  fill y.stats\n"
            "  launch conv_direct.cuh (anchor statistics) 0=x 1=w 2=b 4=y.stats\n"
            "  launch norm_reduce.cuh (reduce from statistics) 3=o 4=y.stats 6=gamma 7=beta\n");
}

TEST(WorkloadPlan, S2StoresTheConvBecauseComputingItTwiceCostsMore) {
  // 78.5 GFLOP of FFMA per conv pass costs more than writing and reading its 2.2 GB output.
  EXPECT_EQ(summarize("s2_convt2d_gelu_gn.sir"),
            "group conv+epilogue+norm+epilogue: conv_transpose gelu group_norm\n"
            "  fill g.stats\n"
            "  launch conv_direct.cuh (anchor + epilogue + statistics) 0=x 1=w 2=b 3=g "
            "4=g.stats\n"
            "  launch norm_apply.cuh (normalise + epilogue) 0=g 3=o 4=g.stats 6=gamma 7=beta\n");
}

TEST(WorkloadPlan, S3GemmOutputNeverWritten) {
  EXPECT_EQ(summarize("s3_gemm_gn_min_bias.sir"),
            "group linear+epilogue+rownorm+reduce: linear group_norm min\n"
            "group elementwise: add\n"
            "  fill m\n"
            "  launch gemm.cuh (GEMM + row norm + row reduction) 0=x 1=w 2=b 4=m 6=gamma "
            "7=beta\n"
            "  launch elementwise.cuh (elementwise) 0=m 1=bias 15=o\n");
}

TEST(WorkloadPlan, S4OneKernel) {
  EXPECT_EQ(summarize("s4_convt3d_grouped.sir"),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
}

} // namespace
