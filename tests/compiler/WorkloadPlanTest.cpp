//===- tests/compiler/WorkloadPlanTest.cpp - golden fusion plans of the workloads --===//
//
// The five workloads must fuse exactly as the project promises: S0 a convolution with
// statistics in its epilogue then one normalise kernel; S1 statistics only (the conv output
// never written); S2 one conv_mma kernel that also normalises (TF32 mma.sync under the auto
// precision; FFMA and a normalise kernel under fp32); S3 the
// GEMM with group norm and the row min in its epilogue (its output never written), then the
// broadcast add; S4 one kernel (FFMA under either precision).
//
//===--------------------------------------------------------------------------------===//
#include "PlanSummary.h"

#include "ir/Parser.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace sinter;

namespace {

std::string summarize(const std::string &file, Precision precision = Precision::Auto,
                      const char *arch = "sm_90a") {
  auto graphs = parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/" + file);
  EXPECT_TRUE(bool(graphs)) << (graphs ? "" : llvm::toString(graphs.takeError()));
  if (!graphs)
    return "";
  auto r = runPipeline(graphs->front(), {precision, arch, false});
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
            "  launch conv_stage.cuh (input staging) 0=x 7=x.staged\n"
            "  launch conv_shift.cuh (anchor + epilogue + statistics) 0=x 1=w 3=r 4=r.stats "
            "6=w.rows 7=x.staged\n"
            "  launch norm_apply.cuh (normalise + epilogue) 0=r 3=o 4=r.stats 6=gamma 7=beta\n");
}

TEST(WorkloadPlan, S1ConvOutputNeverWritten) {
  // TF32 mma.sync where the precision allows it and the target has it, else FFMA.
  for (auto [precision, arch, templ] : {std::tuple{Precision::Auto, "sm_90a", "conv_mma.cuh"},
                                        std::tuple{Precision::Auto, "sm_80", "conv_mma.cuh"},
                                        std::tuple{Precision::Fp32, "sm_90a", "conv_direct.cuh"},
                                        std::tuple{Precision::Auto, "sm_75", "conv_direct.cuh"}})
    EXPECT_EQ(summarize("s1_conv3d_gn_mean.sir", precision, arch),
              std::string("group conv+epilogue+norm+reduce: conv group_norm mean\n"
                          "  fill y.stats\n"
                          "  launch ") +
                  templ +
                  " (anchor statistics) 0=x 1=w 2=b 4=y.stats\n"
                  "  launch norm_reduce.cuh (reduce from statistics) 3=o 4=y.stats 6=gamma "
                  "7=beta\n")
        << arch;
}

TEST(WorkloadPlan, S2FinishesTheNormInTheConvKernel) {
  // Under auto, conv_mma (TF32 mma.sync) stores y, sums it and normalises each (n, group) in
  // place while it is in L2: one kernel, y through DRAM once (H200: 2.66 ms against 2.98 for
  // the two kernels below). The statistics, counters and maps share the zeroed g.stats.
  EXPECT_EQ(summarize("s2_convt2d_gelu_gn.sir"),
            "group conv+epilogue+norm+epilogue: conv_transpose gelu group_norm\n"
            "  fill g.stats\n"
            "  launch conv_mma.cuh (anchor + epilogue + group norm) 0=x 1=w 2=b 3=o 4=g.stats "
            "6=gamma 7=beta\n");
  // fp32 (FFMA) and a target without TF32 mma.sync store the conv and normalise it in a
  // second kernel: computing the 78.5 GFLOP pass twice, with GELU and statistics per
  // output, costs more than writing and reading its 2.2 GB output.
  for (auto [precision, arch] :
       {std::tuple{Precision::Fp32, "sm_90a"}, std::tuple{Precision::Auto, "sm_75"}})
    EXPECT_EQ(summarize("s2_convt2d_gelu_gn.sir", precision, arch),
              "group conv+epilogue+norm+epilogue: conv_transpose gelu group_norm\n"
              "  fill g.stats\n"
              "  launch conv_direct.cuh (anchor + epilogue + statistics) 0=x 1=w 2=b 3=g "
              "4=g.stats\n"
              "  launch norm_apply.cuh (normalise + epilogue) 0=g 3=o 4=g.stats 6=gamma "
              "7=beta\n")
        << arch;
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

TEST(WorkloadPlan, S4OnConvShiftUnderTf32) {
  // Under auto (TF32 allowed for convolutions) on sm_90a: conv_shift's phase walk with 8-channel
  // groups, 4 a k tile (0.552 ms against 0.612 on FFMA, H200). fp32 keeps FFMA: conv_mma's
  // walk by phase ran 1.3-1.9x slower (docs/kernels-direct.md, "conv_mma by phase").
  EXPECT_EQ(summarize("s4_convt3d_grouped.sir"),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_shift_rows.cuh (weight rows) 1=w 6=w.rows\n"
            "  launch conv_stage.cuh (input staging) 0=x 7=x.staged\n"
            "  launch conv_shift.cuh (anchor + epilogue) 0=x 1=w 3=y 6=w.rows 7=x.staged\n");
  EXPECT_EQ(summarize("s4_convt3d_grouped.sir", Precision::Fp32),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
  // Without wgmma (sm_80) the FFMA kernel too.
  EXPECT_EQ(summarize("s4_convt3d_grouped.sir", Precision::Auto, "sm_80"),
            "group anchor+epilogue: conv_transpose\n"
            "  launch conv_direct.cuh (anchor + epilogue) 0=x 1=w 3=y\n");
}

} // namespace
