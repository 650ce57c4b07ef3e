//===- tests/compiler/FusionTest.cpp - fusion decisions and the reasons behind them -===//
#include "CompileCheck.h"
#include "PlanSummary.h"

#include "compiler/Canonicalize.h"
#include "compiler/Epilogue.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include <gtest/gtest.h>

using namespace sinter;
using sinter::test::expectCompiles;

namespace {

Graph parseOne(const std::string &text) {
  auto graphs = parseSir(text, "t.sir");
  EXPECT_TRUE(bool(graphs)) << (graphs ? "" : llvm::toString(graphs.takeError()));
  return graphs ? graphs->front() : Graph{};
}

std::string patterns(const Graph &g, const FusionResult &f) {
  std::string s;
  for (const FusionGroup &grp : f.groups) {
    s += grp.pattern + "[";
    for (int op : grp.ops())
      s += " " + g.ops[op].name().str();
    s += " ] ";
  }
  return s;
}

std::string why(const Graph &g, const FusionResult &f) {
  std::string s;
  for (const FusionRejection &r : f.rejections)
    s += g.ops[r.op].name().str() + " " + r.pattern + ": " + r.reason + "\n";
  return s;
}

TEST(Fusion, PathsThatMeetAgainStayInTheEpilogue) {
  // %r feeds two elementwise paths that meet in %o: the whole region is the conv's epilogue.
  Graph g = parseOne("graph g(%x: f32[2,4,9], %w: param f32[4,4,3]) { %y = conv(%x, %w) %r = "
                     "relu(%y) %s = sigmoid(%r) %t = tanh(%r) %o = add(%s, %t) return %o }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "anchor+epilogue[ conv relu sigmoid tanh add ] ");
  // y * hardswish(y) and a residual of the anchor's own result.
  Graph h = parseOne("graph g(%x: f32[3,5], %w: param f32[4,5]) { %y = linear(%x, %w) "
                     "%h = hardswish(%y) %m = mul(%y, %h) %o = add(%m, %y) return %o }");
  EXPECT_EQ(patterns(h, fuse(h)), "anchor+epilogue[ linear hardswish mul add ] ");
}

TEST(Fusion, TwoConsumersThatDoNotMeetEndTheEpilogue) {
  // Both paths are returned: %r has to be written once for both.
  Graph g = parseOne("graph g(%x: f32[2,4,9], %w: param f32[4,4,3]) { %y = conv(%x, %w) %r = "
                     "relu(%y) %s = sigmoid(%r) %t = tanh(%r) return %s, %t }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "anchor+epilogue[ conv relu ] elementwise[ sigmoid ] "
                            "elementwise[ tanh ] ");
  EXPECT_NE(why(g, f).find("epilogue stops at %r has 2 consumers"), std::string::npos);
  // A path through a reduction: %o needs the max over the whole row first.
  Graph h = parseOne("graph g(%x: f32[3,5], %w: param f32[4,5]) { %y = linear(%x, %w) "
                     "%m = max(%y) {dims = [1], keepdim = true} %o = sub(%y, %m) return %o }");
  FusionResult fh = fuse(h);
  EXPECT_NE(why(h, fh).find("epilogue stops at %y has 2 consumers"), std::string::npos);
  // An intermediate of the region that is also returned.
  Graph r = parseOne("graph g(%x: f32[3,5], %w: param f32[4,5]) { %y = linear(%x, %w) "
                     "%s = sigmoid(%y) %o = mul(%y, %s) return %o, %s }");
  EXPECT_EQ(patterns(r, fuse(r)).find("linear sigmoid mul"), std::string::npos);
}

TEST(Fusion, AReturnedIntermediateIsWrittenAndEndsTheChain) {
  Graph g = parseOne("graph g(%x: f32[2,4,9], %w: param f32[4,4,3]) { %y = conv(%x, %w) %r = "
                     "relu(%y) %n = group_norm(%r) {groups = 2} return %r, %n }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "anchor+epilogue[ conv relu ] norm+epilogue[ group_norm ] ");
  EXPECT_NE(why(g, f).find("epilogue stops at %r is a graph result"), std::string::npos);
}

TEST(Fusion, BroadcastThatWouldGrowTheChainIsNotFused) {
  Graph g = parseOne("graph g(%x: f32[3,5], %w: param f32[4,5], %z: f32[2,3,4]) { %y = "
                     "linear(%x, %w) %o = add(%y, %z) return %o }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "anchor+epilogue[ linear ] elementwise[ add ] ");
  EXPECT_EQ(why(g, f), "linear conv+epilogue+norm+reduce: the anchor is not a convolution\n"
                       "linear linear+epilogue+rownorm+reduce: epilogue stops at add broadcasts "
                       "%y to a larger shape; add is not group_norm\n"
                       "linear conv+epilogue+norm+epilogue: the anchor is not a convolution\n"
                       "linear conv+epilogue+softmax+epilogue: the anchor is not a "
                       "convolution\n"
                       "linear conv+epilogue+pool+epilogue: the anchor is not a convolution\n"
                       "linear conv+epilogue+creduce+epilogue: the anchor is not a convolution\n"
                       "linear conv+epilogue+sreduce+epilogue: the anchor is not a convolution\n");
}

TEST(Fusion, MatmulOfTwoMatricesTakesTheRowNormTailWithAMean) {
  Graph g = parseOne("graph g(%x: f32[4,5], %w: param f32[5,32]) { %y = matmul(%x, %w) %n = "
                     "group_norm(%y) {groups = 4} %e = exp(%n) %m = mean(%e) {dims = [1]} "
                     "return %m }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "linear+epilogue+rownorm+reduce[ matmul group_norm exp mean ] ");
}

TEST(Fusion, AMatmulWhoseBEveryBatchSharesIsOneProduct) {
  auto sourceOf = [](const char *sir) {
    auto r = runPipeline(parseOne(sir), {});
    EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
    return r ? r->plan.kernels.back().source.source : std::string();
  };
  // [2, 3, 64, 128] x [128, 96]: 384 rows of one product (batch dims of 1 in A count too).
  for (const char *sir :
       {"graph g(%x: f32[2,3,64,128], %w: param f32[128,96]) { %y = matmul(%x, %w) return %y }",
        "graph g(%x: f32[1,64,128], %w: param f32[128,96]) { %y = matmul(%x, %w) return %y }"}) {
    std::string src = sourceOf(sir);
    EXPECT_NE(src.find("constexpr int kBatchDims = 0;"), std::string::npos) << sir;
  }
  EXPECT_NE(sourceOf("graph g(%x: f32[2,3,64,128], %w: param f32[128,96]) { %y = matmul(%x, %w) "
                     "return %y }")
                .find("constexpr int kM = 384;"),
            std::string::npos);
  // B of its own per batch, or A broadcast over a batch dim: a batched product.
  EXPECT_NE(sourceOf("graph g(%x: f32[3,64,128], %w: f32[3,128,96]) { %y = matmul(%x, %w) "
                     "return %y }")
                .find("constexpr int kBatchDims = 1;"),
            std::string::npos);
  EXPECT_NE(sourceOf("graph g(%x: f32[64,128], %w: f32[3,128,96]) { %y = matmul(%x, %w) "
                     "return %y }")
                .find("constexpr int kBatchDims = 1;"),
            std::string::npos);
}

TEST(Fusion, BatchedMatmulKeepsItsNormApart) {
  // group_norm's channels are dim 1 of a [batch, M, N] product, not groups of a row's columns.
  Graph g = parseOne("graph g(%x: f32[2,4,5], %w: param f32[5,32]) { %y = matmul(%x, %w) %n = "
                     "group_norm(%y) {groups = 2} %m = min(%n) {dims = [1]} return %m }");
  FusionResult f = fuse(g);
  EXPECT_NE(why(g, f).find("linear+epilogue+rownorm+reduce: matmul output is not 2-D"),
            std::string::npos)
      << why(g, f);
  Graph v = parseOne("graph g(%x: f32[5], %w: param f32[3,5,32]) { %y = matmul(%x, %w) %n = "
                     "group_norm(%y) {groups = 2} %m = min(%n) {dims = [1]} return %m }");
  FusionResult fv = fuse(v);
  EXPECT_NE(why(v, fv).find("linear+epilogue+rownorm+reduce: matmul operands are not both 2-D"),
            std::string::npos)
      << why(v, fv);
}

TEST(Fusion, AStandaloneGroupNormTakesTheReductionItsChainFlowsInto) {
  // The norm's input is also the residual: the conv's epilogue cannot gather the statistics.
  Graph g = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) %n = "
                     "group_norm(%y) {groups = 2} %t = tanh(%n) %r = add(%t, %y) %l = "
                     "logsumexp(%r) {dims = [1]} %o = relu(%l) return %o }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "anchor+epilogue[ conv ] norm+epilogue+reduce[ group_norm tanh add "
                            "logsumexp relu ] ");
  EXPECT_EQ(f.groups[1].tail, TailKind::Reduce);
  // The convolution gathers the norm's statistics as it stores y.
  EXPECT_TRUE(f.groups[0].gatherStats);
  auto r = runPipeline(g, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  // The convolution with statistics, the per-(n, c) scale and shift, and the reduction that
  // normalises as it loads.
  ASSERT_EQ(r->plan.kernels.size(), 3u);
  EXPECT_NE(r->plan.kernels[0].source.source.find("constexpr bool kAccStats = true;"),
            std::string::npos);
  EXPECT_EQ(r->plan.kernels[1].source.templateName, "norm_scale_shift.cuh");
  EXPECT_EQ(r->plan.kernels[2].source.templateName, "reduce.cuh");
  // A norm of a graph input has no convolution to gather its statistics: a pass of its own.
  Graph in = parseOne("graph g(%x: f32[2,8,9,9]) { %n = group_norm(%x) {groups = 2} %m = "
                      "sum(%n) {dims = [1]} return %m }");
  auto ri = runPipeline(in, {});
  ASSERT_TRUE(bool(ri)) << llvm::toString(ri.takeError());
  ASSERT_EQ(ri->plan.kernels.size(), 3u);
  EXPECT_EQ(ri->plan.kernels[0].source.templateName, "channel_stats.cuh");
  // A layer norm, and a group norm of a 2-D tensor, keep their own kernels.
  Graph ln = parseOne("graph g(%x: f32[4,6,10]) { %n = layer_norm(%x) {normalized_shape = [10]} "
                      "%m = sum(%n) {dims = [1]} return %m }");
  EXPECT_EQ(patterns(ln, fuse(ln)), "norm+epilogue[ layer_norm ] reduction+epilogue[ sum ] ");
  Graph rows = parseOne("graph g(%x: f32[4,16]) { %n = group_norm(%x) {groups = 4} %m = "
                        "max(%n) {dims = [1]} return %m }");
  EXPECT_EQ(patterns(rows, fuse(rows)), "norm+epilogue[ group_norm ] reduction+epilogue[ max ] ");
}

TEST(Fusion, GemmRowNormNeedsGroupsThatFitATile) {
  Graph g = parseOne("graph g(%x: f32[4,5], %w: param f32[200,5]) { %y = linear(%x, %w) %n = "
                     "group_norm(%y) {groups = 2} %m = min(%n) {dims = [1]} return %m }");
  FusionResult f = fuse(g);
  EXPECT_NE(why(g, f).find("groups of 100 columns do not tile the GEMM's warps (8, 16, 32, 64 "
                           "or 128 columns do)"),
            std::string::npos);
  EXPECT_EQ(patterns(g, f), "anchor+epilogue[ linear ] norm+epilogue[ group_norm ] "
                            "reduction+epilogue[ min ] ");
}

TEST(Fusion, NormReduceNeedsWholeChannels) {
  Graph g = parseOne("graph g(%x: f32[2,3,8,8], %w: param f32[4,3,3,3]) { %y = conv(%x, %w) %n = "
                     "group_norm(%y) {groups = 2} %m = mean(%n) {dims = [3]} return %m }");
  FusionResult f = fuse(g);
  EXPECT_NE(why(g, f).find("mean must reduce all spatial dims (and optionally C)"),
            std::string::npos);
}

TEST(Fusion, ElementwiseTreesInlineSingleUseProducersOfTheSameSize) {
  Graph g = parseOne("graph g(%a: f32[4,6], %b: f32[6]) { %e = exp(%a) %s = add(%e, %b) %t = "
                     "abs(%b) %u = mul(%s, %t) return %u }");
  FusionResult f = fuse(g);
  // abs(%b) has 6 elements, the tree 24: inlining it would compute it 4 times over.
  EXPECT_EQ(patterns(g, f), "elementwise[ abs ] elementwise[ exp add mul ] ");
}

TEST(Fusion, APoolFlowingIntoAReductionTakesItAndItsChain) {
  Graph g = parseOne("graph g(%x: f32[2,4,8,8]) { %p = max_pool(%x) {kernel_size = 2} %h = "
                     "hardtanh(%p) %m = mean(%h) {dims = [2, 3]} %o = tanh(%m) return %o }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "pool+epilogue+reduce[ max_pool hardtanh mean tanh ] ");
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].tail, TailKind::Reduce);
  EXPECT_EQ(g.ops[f.groups[0].reduce].name(), "mean");
  auto r = runPipeline(g, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->plan.kernels.size(), 1u);
  EXPECT_EQ(r->plan.kernels[0].source.templateName, "reduce.cuh");
  EXPECT_NE(r->plan.kernels[0].source.source.find("sinter::pool::window"), std::string::npos);
}

TEST(Fusion, APoolKeepsItsResultInMemoryWhenItIsNeededElsewhere) {
  // Returned, used twice, or read by a norm (which reads its input twice): the pool is stored.
  Graph returned = parseOne("graph g(%x: f32[2,4,8,8]) { %p = avg_pool(%x) {kernel_size = 2} "
                            "%m = sum(%p) {dims = [1]} return %p, %m }");
  FusionResult f = fuse(returned);
  EXPECT_EQ(patterns(returned, f), "pool+epilogue[ avg_pool ] reduction+epilogue[ sum ] ");
  Graph twice = parseOne("graph g(%x: f32[2,4,8,8]) { %p = max_pool(%x) {kernel_size = 2} %m = "
                         "sum(%p) {dims = [1]} %n = max(%p) {dims = [1]} %o = add(%m, %n) "
                         "return %o }");
  f = fuse(twice);
  EXPECT_EQ(patterns(twice, f), "pool+epilogue[ max_pool ] reduction+epilogue[ max ] "
                                "reduction+epilogue[ sum add ] ");
  // Rows of 2 x 262144 pooled values do not fit in registers: the norm splits its statistics
  // and reads its input twice.
  Graph split = parseOne("graph g(%x: f32[1,4,1024,1024]) { %p = max_pool(%x) {kernel_size = 2} "
                         "%n = group_norm(%p) {groups = 2} return %n }");
  f = fuse(split);
  EXPECT_EQ(patterns(split, f), "pool+epilogue[ max_pool ] norm+epilogue[ group_norm ] ");
  EXPECT_EQ(why(split, f), "max_pool pool+epilogue+norm+epilogue: group_norm rows do not fit in "
                           "registers (it reads its input twice)\n");
  // Overlapping windows (3x3, stride 2) stay a pool kernel of their own.
  Graph overlap = parseOne("graph g(%x: f32[2,4,9,9]) { %p = max_pool(%x) {kernel_size = 3, "
                           "stride = 2} %n = group_norm(%p) {groups = 2} return %n }");
  f = fuse(overlap);
  EXPECT_EQ(patterns(overlap, f), "pool+epilogue[ max_pool ] norm+epilogue[ group_norm ] ");
  EXPECT_EQ(why(overlap, f), "max_pool pool+epilogue+norm+epilogue: max_pool windows overlap "
                             "(kernel > stride)\n");
}

TEST(Fusion, APoolFlowingIntoANormHeldInRegistersTakesIt) {
  Graph g = parseOne("graph g(%x: f32[2,4,8,8], %ga: param f32[4], %be: param f32[4]) { %p = "
                     "avg_pool(%x) {kernel_size = 2} %t = tanh(%p) %n = group_norm(%t, %ga, %be) "
                     "{groups = 2} %o = relu(%n) return %o }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "pool+epilogue+norm+epilogue[ avg_pool tanh group_norm relu ] ");
  auto r = runPipeline(g, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->plan.kernels.size(), 1u);
  EXPECT_EQ(r->plan.kernels[0].source.templateName, "row_norm.cuh");
}

FuseOptions everyConvPools() { // and takes every softmax, but no channel reduction
  FuseOptions o;
  o.anchorRunsTail = [](const Graph &, const Op &, const ConvTailOps &t, std::string &why) {
    why = "no reductions here";
    return t.reduce == nullptr;
  };
  return o;
}

TEST(Fusion, AConvTakesAPoolWhoseWindowsTileItsOutputWhenItsKernelRunsIt) {
  Graph g = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                     "{padding = 1} %r = relu(%y) %p = max_pool(%r) {kernel_size = 2, ceil_mode = "
                     "true} %s = sigmoid(%p) %m = sum(%s) {dims = [1]} return %m }");
  FusionResult f = fuse(g, everyConvPools());
  EXPECT_EQ(patterns(g, f), "conv+epilogue+pool+epilogue[ conv relu max_pool sigmoid ] "
                            "reduction+epilogue[ sum ] ");
  ASSERT_EQ(f.groups.size(), 2u);
  EXPECT_EQ(f.groups[0].tail, TailKind::Pool);
  EXPECT_EQ(g.ops[f.groups[0].pool].name(), "max_pool");
  EXPECT_EQ(f.groups[0].poolEpilogue.size(), 1u);
  // Without a kernel that runs it, the pool keeps its reduction (pool+epilogue+reduce).
  FusionResult plain = fuse(g);
  EXPECT_EQ(patterns(g, plain), "anchor+epilogue[ conv relu ] "
                                "pool+epilogue+reduce[ max_pool sigmoid sum ] ");
  EXPECT_NE(why(g, plain).find("conv conv+epilogue+pool+epilogue: no convolution kernel runs "
                               "softmax, pool or channel-reduction tails here"),
            std::string::npos);
  // The planner's kernel refuses: its reason is the rejection.
  FuseOptions refuses;
  refuses.anchorRunsTail = [](const Graph &, const Op &, const ConvTailOps &, std::string &why) {
    why = "not today";
    return false;
  };
  EXPECT_NE(why(g, fuse(g, refuses)).find("conv conv+epilogue+pool+epilogue: not today"),
            std::string::npos);
}

FuseOptions everyConvReduces() {
  FuseOptions o;
  o.anchorRunsTail = [](const Graph &, const Op &, const ConvTailOps &t, std::string &why) {
    why = "only reductions here";
    return t.reduce != nullptr;
  };
  return o;
}

TEST(Fusion, AConvTakesAReductionOverItsChannelsWhenItsKernelRunsIt) {
  Graph g = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                     "%r = relu(%y) %m = min(%r) {dims = [-3], keepdim = true} %a = tanh(%m) "
                     "%o = tanh(%a) return %o }");
  FusionResult f = fuse(g, everyConvReduces());
  EXPECT_EQ(patterns(g, f), "conv+epilogue+creduce+epilogue[ conv relu min tanh tanh ] ");
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].tail, TailKind::ChannelReduce);
  EXPECT_EQ(g.ops[f.groups[0].reduce].name(), "min");
  EXPECT_EQ(f.groups[0].epilogue.size(), 1u);
  EXPECT_EQ(f.groups[0].reduceEpilogue.size(), 2u);
  // The planner's refusal is the rejection; without a kernel that runs it, the reduction
  // keeps its own kernel.
  FusionResult plain = fuse(g, everyConvPools());
  EXPECT_EQ(patterns(g, plain),
            "anchor+epilogue[ conv relu ] reduction+epilogue[ min tanh tanh ] ");
  EXPECT_NE(why(g, plain).find("conv conv+epilogue+creduce+epilogue: no reductions here"),
            std::string::npos);
  // Only a reduction over the channels alone.
  Graph hw = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                      "%m = max(%y) {dims = [1, 2]} return %m }");
  FusionResult fh = fuse(hw, everyConvReduces());
  EXPECT_NE(why(hw, fh).find("conv+epilogue+creduce+epilogue: max does not reduce over the "
                             "channels (dim 1) alone"),
            std::string::npos)
      << why(hw, fh);
}

TEST(Fusion, AConvTakesASumOrMeanOverWholePlanes) {
  // Every spatial dim, keepdim or not, then a chain on the [N, C] result.
  Graph g = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                     "%r = hardsigmoid(%y) %m = mean(%r) {dims = [-1, 2], keepdim = true} %o = "
                     "tanh(%m) return %o }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "conv+epilogue+sreduce+epilogue[ conv hardsigmoid mean tanh ] ");
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].tail, TailKind::PlaneReduce);
  EXPECT_EQ(f.groups[0].reduceEpilogue.size(), 1u);
  // The channels too.
  Graph all = parseOne("graph g(%x: f32[2,3,5,9,9], %w: param f32[3,8,3,3,3]) { %y = "
                       "conv_transpose(%x, %w) %m = sum(%y) {dims = [1, 2, 3, 4]} return %m }");
  EXPECT_EQ(patterns(all, fuse(all)), "conv+epilogue+sreduce+epilogue[ conv_transpose sum ] ");
  // Part of a plane, or a max, needs per-position values: the reduction keeps its kernel.
  Graph part = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                        "%m = sum(%y) {dims = [2]} return %m }");
  FusionResult fp = fuse(part);
  EXPECT_EQ(patterns(part, fp), "anchor+epilogue[ conv ] reduction+epilogue[ sum ] ");
  EXPECT_NE(why(part, fp).find("conv+epilogue+sreduce+epilogue: sum does not reduce every "
                               "spatial dim (and optionally C)"),
            std::string::npos)
      << why(part, fp);
  Graph max = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                       "%m = max(%y) {dims = [2, 3]} return %m }");
  EXPECT_NE(why(max, fuse(max))
                .find("conv+epilogue+sreduce+epilogue: epilogue stops at max is "
                      "not elementwise; max is not sum or mean"),
            std::string::npos)
      << why(max, fuse(max));
}

TEST(Fusion, ANormWhoseChainEndsInAReductionLeavesTheConvAndTakesTheReduction) {
  // conv -> instance_norm -> leaky_relu -> max over the planes: the conv stores y and gathers
  // its statistics; the norm normalises as the reduction reads y.
  Graph g = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                     "%n = instance_norm(%y) %a = leaky_relu(%n) %m = max(%a) {dims = [2, 3]} "
                     "return %m }");
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f),
            "anchor+epilogue[ conv ] norm+epilogue+reduce[ instance_norm leaky_relu max ] ");
  ASSERT_EQ(f.groups.size(), 2u);
  EXPECT_TRUE(f.groups[0].gatherStats);
  EXPECT_NE(why(g, f).find("conv conv+epilogue+norm+epilogue: the norm's chain flows into max"),
            std::string::npos)
      << why(g, f);
  // A mean of the normalised planes themselves stays the statistics-only tail, now with a
  // chain after it.
  Graph s1 = parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                      "%n = group_norm(%y) {groups = 2} %m = mean(%n) {dims = [2, 3]} %o = "
                      "exp(%m) return %o }");
  EXPECT_EQ(patterns(s1, fuse(s1)), "conv+epilogue+norm+reduce[ conv group_norm mean exp ] ");
}

TEST(Fusion, ThePlannerRunsAChannelReductionOnTheWgmmaEngineOrConvDirect) {
  // 16 -> 64 channels, 3x3, on sm_90a: conv_igemm's input-box engine, one 64-channel tile.
  const char *wide = "graph g(%x: f32[4,16,40,40], %w: param f32[64,16,3,3], %b: param f32[64]) "
                     "{ %y = conv(%x, %w, %b) %l = logsumexp(%y) {dims = [1]} %o = relu(%l) "
                     "return %o }";
  auto r = runPipeline(parseOne(wide), {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(patterns(r->graph, r->fusion),
            "conv+epilogue+creduce+epilogue[ conv logsumexp relu ] ");
  ASSERT_EQ(r->plan.kernels.size(), 2u); // the weight rows, then the convolution
  EXPECT_NE(r->plan.kernels[1].source.source.find("constexpr int kCReduce = 5;"),
            std::string::npos);
  EXPECT_NE(r->plan.kernels[1].source.tileConfig.find("then a logsumexp over the channels"),
            std::string::npos)
      << r->plan.kernels[1].source.tileConfig;
  // On sm_80 it stays on mma.sync, which does not run it.
  PipelineOptions sm80;
  sm80.arch = "sm_80";
  auto r80 = runPipeline(parseOne(wide), sm80);
  ASSERT_TRUE(bool(r80)) << llvm::toString(r80.takeError());
  EXPECT_EQ(patterns(r80->graph, r80->fusion),
            "anchor+epilogue[ conv ] reduction+epilogue[ logsumexp relu ] ");
  EXPECT_NE(why(r80->graph, r80->fusion).find("the convolution stays on mma.sync"),
            std::string::npos)
      << why(r80->graph, r80->fusion);
  // A convolution of few channels runs on conv_direct, which holds them all in one thread.
  auto small = runPipeline(parseOne("graph g(%x: f32[2,3,9,9], %w: param f32[4,3,3,3]) { %y = "
                                    "conv(%x, %w) %m = sum(%y) {dims = [1]} return %m }"),
                           {});
  ASSERT_TRUE(bool(small)) << llvm::toString(small.takeError());
  EXPECT_EQ(patterns(small->graph, small->fusion), "conv+epilogue+creduce+epilogue[ conv sum ] ");
  ASSERT_EQ(small->plan.kernels.size(), 1u);
  EXPECT_EQ(small->plan.kernels[0].source.templateName, "conv_direct.cuh");
  // Unless its channels of a transposed convolution's whole 2x2 phase exceed a thread's.
  auto phases = runPipeline(parseOne("graph g(%x: f32[2,16,9,11], %w: param f32[16,40,3,3]) { "
                                     "%y = conv_transpose(%x, %w) {stride = 2} %m = mean(%y) "
                                     "{dims = [1]} return %m }"),
                            {});
  ASSERT_TRUE(bool(phases)) << llvm::toString(phases.takeError());
  EXPECT_NE(why(phases->graph, phases->fusion)
                .find("a reduction over 40 channels of 2x2 positions does not fit"),
            std::string::npos)
      << why(phases->graph, phases->fusion);
}

TEST(Fusion, AConvTakesASoftmaxOverItsChannelsAndThenAPool) {
  Graph g = parseOne("graph g(%x: f32[2,3,8,8], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                     "{padding = 1} %p = softmax(%y) {dim = 1} %s = sigmoid(%p) %q = "
                     "max_pool(%s) {kernel_size = 2} %o = tanh(%q) return %o }");
  FusionResult f = fuse(g, everyConvPools());
  EXPECT_EQ(patterns(g, f),
            "conv+epilogue+softmax+epilogue+pool+epilogue[ conv softmax sigmoid max_pool tanh ] ");
  ASSERT_EQ(f.groups.size(), 1u);
  EXPECT_EQ(f.groups[0].tail, TailKind::Softmax);
  EXPECT_EQ(f.groups[0].softmaxEpilogue.size(), 1u);
  // Through the planner: one conv_direct kernel (3 -> 8 channels, one group).
  auto r = runPipeline(g, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->plan.kernels.size(), 1u);
  EXPECT_EQ(r->plan.kernels[0].role, "anchor + epilogue + softmax + max pool");
  // Over another dim, or where the kernel cannot hold the channels, the softmax stays apart.
  Graph rows = parseOne("graph g(%x: f32[2,3,8,8], %w: param f32[8,3,3,3]) { %y = conv(%x, %w) "
                        "%p = log_softmax(%y) {dim = 3} return %p }");
  f = fuse(rows, everyConvPools());
  EXPECT_EQ(patterns(rows, f), "anchor+epilogue[ conv ] softmax+epilogue[ log_softmax ] ");
  EXPECT_NE(why(rows, f).find("log_softmax is not over the channels (dim 1)"), std::string::npos);
  Graph wide = parseOne("graph g(%x: f32[2,3,8,8], %w: param f32[3,128,3,3]) { %y = "
                        "conv_transpose(%x, %w) {stride = 2} %p = softmax(%y) {dim = 1} return "
                        "%p }");
  r = runPipeline(wide, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->plan.kernels.back().source.templateName, "softmax.cuh");
  EXPECT_NE(why(r->graph, r->fusion)
                .find("a softmax over 128 channels of 2x2 positions does not "
                      "fit one thread's accumulators"),
            std::string::npos)
      << why(r->graph, r->fusion);
}

TEST(Fusion, AConvMmaConvolutionMovesToFfmaWhereItsTailsSaveMoreThanTheProductsCost) {
  // 3 channels x 27 taps: FFMA's products cost less than y's trips to the standalone softmax
  // and pool; 8 x 27 with only a pool: conv_mma and the pool kernel stay.
  Graph cheap = parseOne("graph g(%x: f32[2,3,10,14,14], %w: param f32[16,3,3,3,3], %b: param "
                         "f32[16]) { %y = conv(%x, %w, %b) %p = softmax(%y) {dim = 1} %m = "
                         "max_pool(%p) {kernel_size = 2} return %m }");
  auto r = runPipeline(cheap, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->plan.kernels.size(), 1u);
  EXPECT_EQ(r->plan.kernels[0].source.templateName, "conv_direct.cuh");
  EXPECT_EQ(r->plan.kernels[0].math, MathMode::Ffma);
  EXPECT_EQ(r->plan.kernels[0].role, "anchor + epilogue + softmax + max pool");
  Graph deep = parseOne("graph g(%x: f32[2,8,10,14,14], %w: param f32[16,8,3,3,3]) { %y = "
                        "conv(%x, %w) %p = max_pool(%y) {kernel_size = 2} return %p }");
  r = runPipeline(deep, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->plan.kernels.size(), 2u);
  EXPECT_EQ(r->plan.kernels[0].source.templateName, "conv_mma.cuh");
  EXPECT_NE(why(r->graph, r->fusion).find("the convolution runs on conv_mma"), std::string::npos);
}

TEST(Fusion, PoolsWhoseWindowsDoNotTileTheOutputStayPoolKernels) {
  for (const char *attrs : {"kernel_size = 3, stride = 2", "kernel_size = 2, padding = 1",
                            "kernel_size = 2, dilation = 2"}) {
    Graph g = parseOne(std::string("graph g(%x: f32[2,3,9,9], %w: param f32[8,3,3,3]) { %y = "
                                   "conv(%x, %w) %p = max_pool(%y) {") +
                       attrs + "} return %p }");
    FusionResult f = fuse(g, everyConvPools());
    EXPECT_EQ(patterns(g, f), "anchor+epilogue[ conv ] pool+epilogue[ max_pool ] ") << attrs;
    EXPECT_NE(why(g, f).find("max_pool windows do not tile its input"), std::string::npos) << attrs;
  }
}

TEST(Fusion, ThePlannerPoolsInConvDirectAndTheInputBoxEngine) {
  // 3 -> 16 channels, 27 reduction terms: conv_direct in FFMA runs the pool in its kernel.
  Graph direct = parseOne("graph g(%x: f32[2,3,10,12], %w: param f32[16,3,3,3], %b: param "
                          "f32[16]) { %y = conv(%x, %w, %b) {padding = 1} %p = avg_pool(%y) "
                          "{kernel_size = 2} %o = tanh(%p) return %o }");
  auto r = runPipeline(direct, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->plan.kernels.size(), 1u);
  const KernelSource &k = r->plan.kernels[0].source;
  EXPECT_EQ(k.templateName, "conv_direct.cuh");
  EXPECT_EQ(r->plan.kernels[0].role, "anchor + epilogue + average pool");
  EXPECT_NE(k.source.find("constexpr bool kPool = true;"), std::string::npos);
  EXPECT_NE(k.tileConfig.find("then its average pool over 2x2 windows"), std::string::npos);
  // 32 -> 64 channels: conv_igemm's input-box engine on sm_90a, on tiles of whole 2x2
  // windows (8 x 16: two tiles a 16 x 16 plane, as many as runs of 128); y is never stored.
  Graph igemm = parseOne("graph g(%x: f32[2,32,16,16], %w: param f32[64,32,3,3]) { %y = "
                         "conv(%x, %w) {padding = 1} %p = max_pool(%y) {kernel_size = 2} return "
                         "%p }");
  r = runPipeline(igemm, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->plan.kernels.size(), 2u); // the weight rows, then the convolution
  EXPECT_EQ(r->plan.kernels[1].source.templateName, "conv_igemm.cuh");
  EXPECT_EQ(r->plan.kernels[1].role, "anchor + epilogue + max pool");
  EXPECT_NE(r->plan.kernels[1].source.tileConfig.find("then a max pool 2x2 on 8x16 tiles"),
            std::string::npos)
      << r->plan.kernels[1].source.tileConfig;
  // Windows of 3 rows do not fit its tiles: y is stored for a pool kernel, and `why` says so.
  Graph rows3 = parseOne("graph g(%x: f32[2,32,10,12], %w: param f32[64,32,3,3]) { %y = "
                         "conv(%x, %w) {padding = 1} %p = max_pool(%y) {kernel_size = 3} return "
                         "%p }");
  r = runPipeline(rows3, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->plan.kernels.back().source.templateName, "pool.cuh");
  std::string reasons = why(r->graph, r->fusion);
  EXPECT_NE(reasons.find("conv conv+epilogue+pool+epilogue: the input-box engine's pool tiles "
                         "hold windows of 1, 2 or 4 rows, not 3"),
            std::string::npos)
      << reasons;
  // Where tiles of whole windows would hold much more padding than the plain ones (a 10 x 12
  // plane: two 8 x 16 tiles against one run of 128) and the output is small, the pool stays
  // a kernel of its own.
  Graph padded = parseOne("graph g(%x: f32[2,32,10,12], %w: param f32[64,32,3,3]) { %y = "
                          "conv(%x, %w) {padding = 1} %p = max_pool(%y) {kernel_size = 2} "
                          "return %p }");
  r = runPipeline(padded, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->plan.kernels.back().source.templateName, "pool.cuh");
  reasons = why(r->graph, r->fusion);
  EXPECT_NE(reasons.find("tiles of whole windows would multiply 2.00x the convolution's tiles"),
            std::string::npos)
      << reasons;
  // Windows too large for one thread's accumulators stay a pool kernel, with the reason.
  Graph wide = parseOne("graph g(%x: f32[1,3,40,40], %w: param f32[4,3,3,3]) { %y = conv(%x, %w) "
                        "%p = max_pool(%y) {kernel_size = 9} return %p }");
  r = runPipeline(wide, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(r->plan.kernels.back().source.templateName, "pool.cuh");
  EXPECT_NE(why(r->graph, r->fusion).find("do not fit one thread's accumulators"),
            std::string::npos);
}

// A kernel binds the tensors its fused chains read at slots 8..15, an elementwise tree's
// kernel its inputs at 0..14: the fuse pass ends a chain (or stops inlining producers) where
// one more tensor would not fit, and every kernel of the plan compiles.
std::string chainOfAdds(int inputs, const char *anchorShape, const char *anchor) {
  std::string sir = "graph g(%x: f32" + std::string(anchorShape) + ", %w: param f32[1,256]";
  for (int i = 0; i < inputs; ++i)
    sir += ", %r" + std::to_string(i) + ": f32[64,1]";
  sir += ") { %y = " + std::string(anchor) + " %a0 = relu(%y)";
  for (int i = 0; i < inputs; ++i)
    sir += " %a" + std::to_string(i + 1) + " = add(%a" + std::to_string(i) + ", %r" +
           std::to_string(i) + ")";
  return sir + " return %a" + std::to_string(inputs) + " }";
}

TEST(Fusion, AGroupsChainsReadAtMostEightTensors) {
  // Two batch norms read 8 per-channel tensors; the gate would be the ninth.
  const char *bn = "graph g(%x: f32[2,16,9,9], %w: param f32[16,8,3,3], %s: f32[2,8,11,11], "
                   "%m0: param f32[8], %v0: param f32[8], %g0: param f32[8], %b0: param f32[8], "
                   "%m1: param f32[8], %v1: param f32[8], %g1: param f32[8], %b1: param f32[8]) {"
                   " %y = conv_transpose(%x, %w) %n0 = batch_norm(%y, %m0, %v0, %g0, %b0)"
                   " %n1 = batch_norm(%n0, %m1, %v1, %g1, %b1) %o = mul(%n1, %s) return %o }";
  Graph g = parseOne(bn);
  FusionResult f = fuse(g);
  EXPECT_EQ(patterns(g, f), "anchor+epilogue[ conv_transpose batch_norm batch_norm ] "
                            "elementwise[ mul ] ");
  EXPECT_NE(why(g, f).find("mul would read %s, past the 8 tensors a kernel's fused chains "
                           "can read"),
            std::string::npos)
      << why(g, f);
  expectCompiles(g);
  // Ten inputs added after a linear layer: eight join its epilogue.
  Graph h = parseOne(chainOfAdds(10, "[64,256]", "linear(%x, %w)"));
  FusionResult fh = fuse(h);
  ASSERT_GE(fh.groups.size(), 2u);
  EXPECT_EQ(fh.groups.front().epilogue.size(), 9u); // relu and 8 adds
  expectCompiles(h);
}

TEST(Fusion, AnElementwiseTreeReadsAtMostFifteenTensors) {
  std::string sir = "graph g(";
  for (int i = 0; i < 20; ++i)
    sir += (i ? ", %x" : "%x") + std::to_string(i) + ": f32[1000]";
  sir += ") { %s1 = add(%x0, %x1)";
  for (int i = 2; i < 20; ++i)
    sir += " %s" + std::to_string(i) + " = add(%s" + std::to_string(i - 1) + ", %x" +
           std::to_string(i) + ")";
  Graph g = parseOne(sir + " return %s19 }");
  FusionResult f = fuse(g);
  ASSERT_EQ(f.groups.size(), 2u) << patterns(g, f);
  for (const FusionGroup &grp : f.groups)
    EXPECT_LE(chainSideTensors(g, grp.ops(), {}).size(), 15u) << patterns(g, f);
  expectCompiles(g);
}

TEST(Fusion, ADotProductPerRowLeavesItsChainFewerSlots) {
  // The vector of a one-column product (and its bias, where it has one) takes one of its
  // kernel's chain slots: seven tensors in the chain keep the dot-product kernel, eight move
  // to the GEMM engine.
  for (int inputs : {7, 8}) {
    auto r = runPipeline(parseOne(chainOfAdds(inputs, "[64,256]", "linear(%x, %w)")), {});
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    ASSERT_EQ(r->plan.kernels.size(), 1u) << inputs;
    EXPECT_EQ(r->plan.kernels[0].source.templateName, inputs == 7 ? "reduce.cuh" : "gemm.cuh")
        << inputs;
  }
}

TEST(Canonicalize, DropoutScalarChainsAndDeadOps) {
  Graph g = parseOne("graph g(%x: f32[4]) { %d = dropout(%x) %a = mul(%d, 2.0) %b = div(%a, 4.0) "
                     "%c = add(%b, 1.0) %e = sub(%c, 3.0) %dead = exp(%x) return %e }");
  EXPECT_TRUE(canonicalize(g));
  EXPECT_EQ(printGraph(g), "graph g(%x: f32[4]) {\n"
                           "  %b = mul(%x, 0.5) : f32[4]\n"
                           "  %e = add(%b, -2.0) : f32[4]\n"
                           "  return %e\n"
                           "}\n");
  EXPECT_FALSE(canonicalize(g));
}

TEST(Canonicalize, ConstantOnTheLeftOfSubIsNotFolded) {
  Graph g = parseOne("graph g(%x: f32[4]) { %a = sub(1.0, %x) %b = sub(%a, 2.0) return %b }");
  canonicalize(g);
  EXPECT_EQ(g.ops.size(), 2u);
}

// A kernel's bytes count what its fused chain reads besides its own operands: a residual
// input once, per-channel params, but not a tensor the kernel already reads (x below).
TEST(Epilogue, KernelBytesCountWhatTheChainReads) {
  auto anchorBytes = [](const char *sir) {
    auto r = runPipeline(parseOne(sir), {});
    EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
    return r ? r->plan.kernels.back().source.bytes : 0.0;
  };
  const double plain = anchorBytes(
      "graph g(%x: f32[64,2048], %w: param f32[1024,2048]) { %y = linear(%x, %w) %o = relu(%y) "
      "return %o }");
  const double residual = anchorBytes(
      "graph g(%x: f32[64,2048], %w: param f32[1024,2048], %r: f32[64,1024]) { %y = linear(%x, "
      "%w) %a = add(%y, %r) %o = relu(%a) return %o }");
  EXPECT_DOUBLE_EQ(residual - plain, 64.0 * 1024 * 4);
  const double perColumn =
      anchorBytes("graph g(%x: f32[64,2048], %w: param f32[1024,2048], %s: param f32[1024]) { %y = "
                  "linear(%x, %w) %a = mul(%y, %s) %o = relu(%a) return %o }");
  EXPECT_DOUBLE_EQ(perColumn - plain, 1024.0 * 4);
  // The product's own input read again by the chain is counted once.
  const double again = anchorBytes(
      "graph g(%x: f32[64,2048], %w: param f32[2048,2048]) { %y = linear(%x, %w) %a = add(%y, "
      "%x) return %a }");
  const double alone = anchorBytes(
      "graph g(%x: f32[64,2048], %w: param f32[2048,2048]) { %y = linear(%x, %w) %a = relu(%y) "
      "return %a }");
  EXPECT_DOUBLE_EQ(again, alone);
}

TEST(Epilogue, StandaloneElementwiseBytesCountItsInputs) {
  auto bytes = [](const char *sir) {
    auto r = runPipeline(parseOne(sir), {});
    EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
    EXPECT_TRUE(r && r->plan.kernels.size() == 1u);
    return r ? r->plan.kernels.back().source.bytes : 0.0;
  };
  // Two full inputs, a per-column one and the output, each once (x read twice counts once).
  EXPECT_DOUBLE_EQ(bytes("graph g(%x: f32[256,1024], %y: f32[256,1024], %z: f32[1024]) { %a = "
                         "add(%x, %y) %b = mul(%a, %z) %c = add(%b, %x) %o = relu(%c) return %o }"),
                   (3.0 * 256 * 1024 + 1024) * 4);
}

TEST(Epilogue, BroadcastOffsetsFollowTheOperandShape) {
  IndexSpace conv = IndexSpace::conv({2, 8, 5, 7});
  EXPECT_EQ(broadcastOffset(conv, {7}), "((unsigned)s % 7u)");
  EXPECT_EQ(broadcastOffset(conv, {8, 1, 1}), "(sinter::i64)c");
  EXPECT_EQ(broadcastOffset(conv, {2, 8, 1, 1}), "(sinter::i64)n * 8LL + (sinter::i64)c");
  EXPECT_EQ(broadcastOffset(conv, {5, 1}), "((unsigned)s / 7u)");
  EXPECT_EQ(broadcastOffset(conv, {1, 7}), "((unsigned)s % 7u)");
  // Dims the operand holds as the space does are one coordinate: no division for a whole
  // run.
  EXPECT_EQ(broadcastOffset(conv, {2, 8, 5, 7}),
            "(sinter::i64)n * 280LL + (sinter::i64)c * 35LL + (sinter::i64)s");
  EXPECT_EQ(broadcastOffset(conv, {8, 5, 7}), "(sinter::i64)c * 35LL + (sinter::i64)s");
  EXPECT_EQ(broadcastOffset(conv, {2, 1, 5, 7}), "(sinter::i64)n * 35LL + (sinter::i64)s");
  IndexSpace conv3 = IndexSpace::conv({2, 8, 3, 5, 7});
  EXPECT_EQ(broadcastOffset(conv3, {5, 7}), "((unsigned)s % 35u)");
  EXPECT_EQ(broadcastOffset(conv3, {3, 1, 7}), "((unsigned)s % 7u) + ((unsigned)s / 35u) * 7u");
  EXPECT_EQ(broadcastOffset(conv3, {3, 5, 1}), "((unsigned)s / 7u)");
  IndexSpace flat = IndexSpace::flat({3, 4});
  EXPECT_EQ(broadcastOffset(flat, {3, 1}), "((unsigned)i / 4u)");
  EXPECT_EQ(broadcastOffset(flat, {3, 4}), "(sinter::i64)i");
  EXPECT_EQ(broadcastOffset(flat, {}), "0");
  // Past 2^31 elements, in the run or in the operand, the coordinates stay 64-bit.
  IndexSpace wide = IndexSpace::flat({3, int64_t(1) << 31});
  EXPECT_EQ(broadcastOffset(wide, {3, 1}), "((sinter::i64)i / 2147483648LL)");
  IndexSpace wideConv = IndexSpace::conv({2, 8, 3, int64_t(1) << 30});
  EXPECT_EQ(broadcastOffset(wideConv, {3, 1}), "((sinter::i64)s / 1073741824LL)");
  IndexSpace gemm = IndexSpace::gemm({5, 6});
  EXPECT_EQ(broadcastOffset(gemm, {6}), "(sinter::i64)c");
  EXPECT_EQ(broadcastOffset(gemm, {5, 1}), "(sinter::i64)n");
}

TEST(Codegen, TheSameGraphGivesTheSameSources) {
  auto graphs = parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/s3_gemm_gn_min_bias.sir");
  ASSERT_TRUE(bool(graphs));
  auto a = runPipeline(graphs->front(), {});
  auto b = runPipeline(graphs->front(), {});
  ASSERT_TRUE(bool(a) && bool(b));
  ASSERT_EQ(a->plan.kernels.size(), b->plan.kernels.size());
  for (size_t i = 0; i < a->plan.kernels.size(); ++i)
    EXPECT_EQ(a->plan.kernels[i].source.source, b->plan.kernels[i].source.source);
}

TEST(Codegen, KernelSourcesAreAPrologueAndOneInclude) {
  auto graphs = parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/s0_convt3d_relu_gn.sir");
  ASSERT_TRUE(bool(graphs));
  auto r = runPipeline(graphs->front(), {});
  ASSERT_TRUE(bool(r));
  // The weight rows (conv_pack.cuh) and the staged input (conv_stage.cuh) come first; then
  // the convolution.
  ASSERT_GE(r->plan.kernels.size(), 3u);
  EXPECT_EQ(r->plan.kernels[0].source.templateName, "conv_pack.cuh");
  EXPECT_EQ(r->plan.kernels[1].source.templateName, "conv_stage.cuh");
  const std::string &src = r->plan.kernels[2].source.source;
  EXPECT_NE(src.find("#define SINTER_KERNEL convt3d_relu_gn_k0_conv_transpose_relu_group_norm_stats"),
            std::string::npos);
  EXPECT_NE(src.find("namespace cfg {"), std::string::npos);
  // relu comes from the op table's device expression.
  EXPECT_NE(src.find("(x < 0.f ? 0.f : x)"), std::string::npos);
  EXPECT_NE(src.find("#include \"conv_shift.cuh\""), std::string::npos);
  EXPECT_EQ(src.find("__global__"), std::string::npos) << "kernel bodies belong in templates";
}

} // namespace
