//===- tests/gpu/GpuOpsTest.cpp - every op of the catalog on the GPU ---------------===//
//
// One small graph per op and attribute combination that matters, at odd shapes (never tile
// multiples), compiled by sinter and compared with the float64 CPU reference on fresh random
// data. Each graph is parsed from text so the case reads like the IR it tests.
//
//===--------------------------------------------------------------------------------===//
#include "GpuHarness.h"

#include "ir/Parser.h"
#include "runtime/Executable.h"

#include <algorithm>
#include <cmath>

namespace sinter::test {
namespace {

struct OpCase {
  const char *name;
  const char *sir;
};

const OpCase kOpCases[] = {
    // Convolutions: ranks, stride, padding, dilation, groups, bias.
    {"conv1d_stride2_pad1",
     "graph g(%x: f32[3,5,37], %w: param f32[7,5,3]) { %y = conv(%x, %w) {stride = 2, padding "
     "= 1} return %y }"},
    {"conv2d_bias_dilation",
     "graph g(%x: f32[2,6,19,23], %w: param f32[10,3,3,3], %b: param f32[10]) { %y = conv(%x, "
     "%w, %b) {dilation = [2, 1], padding = [2, 1], groups = 2} return %y }"},
    {"conv3d_small",
     "graph g(%x: f32[2,3,9,11,13], %w: param f32[5,3,3,3,3]) { %y = conv(%x, %w) {padding = "
     "1} return %y }"},
    {"conv2d_wide_channels",
     "graph g(%x: f32[2,48,13,15], %w: param f32[40,48,3,3]) { %y = conv(%x, %w) {padding = 1} "
     "return %y }"},
    {"conv2d_16_channels",
     "graph g(%x: f32[2,32,9,11], %w: param f32[16,32,3,3], %b: param f32[16]) { %y = conv(%x, "
     "%w, %b) {padding = 1} return %y }"},
    {"conv_transpose1d_outpad",
     "graph g(%x: f32[2,4,17], %w: param f32[4,6,3]) { %y = conv_transpose(%x, %w) {stride = 3, "
     "padding = 1, output_padding = 2} return %y }"},
    {"conv_transpose2d_groups_dilation",
     "graph g(%x: f32[2,6,11,9], %w: param f32[6,2,3,3], %b: param f32[6]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, dilation = 2, groups = 3, padding = 1} return %y "
     "}"},
    {"conv_transpose3d_stride2",
     "graph g(%x: f32[1,8,5,7,9], %w: param f32[8,4,3,3,3]) { %y = conv_transpose(%x, %w) "
     "{stride = 2, padding = 1, groups = 2} return %y }"},
    {"conv_transpose3d_wide",
     "graph g(%x: f32[1,40,6,7,5], %w: param f32[40,36,3,3,3]) { %y = conv_transpose(%x, %w) "
     "return %y }"},
    // GEMMs.
    {"linear_bias",
     "graph g(%x: f32[37,53], %w: param f32[29,53], %b: param f32[29]) { %y = linear(%x, %w, "
     "%b) return %y }"},
    {"linear_3d_input",
     "graph g(%x: f32[3,5,67], %w: param f32[45,67]) { %y = linear(%x, %w) return %y }"},
    {"matmul_batch_broadcast",
     "graph g(%a: f32[2,1,13,17], %b: f32[3,17,11]) { %y = matmul(%a, %b) return %y }"},
    {"matmul_vector", "graph g(%a: f32[19,23], %b: f32[23]) { %y = matmul(%a, %b) return %y }"},
    // Unary ops, with attributes.
    {"unary_chain_1",
     "graph g(%x: f32[7,33]) { %a = relu(%x) %b = sigmoid(%x) %c = tanh(%x) %d = silu(%x) %e = "
     "add(%a, %b) %f = add(%c, %d) %o = mul(%e, %f) return %o }"},
    {"unary_chain_2",
     "graph g(%x: f32[5,41]) { %a = hardswish(%x) %b = hardsigmoid(%x) %c = mish(%x) %d = "
     "abs(%x) %e = neg(%d) %f = erf(%x) %s = add(%a, %b) %t = add(%c, %e) %u = add(%s, %t) %o = "
     "add(%u, %f) return %o }"},
    {"unary_positive_domain",
     "graph g(%x: f32[9,31]) { %a = abs(%x) %p = add(%a, 0.5) %l = log(%p) %s = sqrt(%p) %r = "
     "rsqrt(%p) %e = exp(%x) %u = add(%l, %s) %v = add(%r, %e) %o = sub(%u, %v) return %o }"},
    {"gelu_both_modes",
     "graph g(%x: f32[3,77]) { %a = gelu(%x) %b = gelu(%x) {approximate = \"tanh\"} return %a, "
     "%b }"},
    {"attr_unaries",
     "graph g(%x: f32[4,59]) { %a = hardtanh(%x) {min_val = -0.5, max_val = 0.7} %b = "
     "leaky_relu(%x) {negative_slope = 0.2} %c = softplus(%x) {beta = 2.0, threshold = 1.5} %d "
     "= elu(%x) {alpha = 0.7} %e = clamp(%x) {min = -0.3} %f = clamp(%x) {max = 0.4} %s = add(%a, "
     "%b) %t = add(%c, %d) %u = add(%e, %f) %v = add(%s, %t) %o = add(%v, %u) return %o }"},
    // Binary ops and broadcasting.
    {"binary_broadcast",
     "graph g(%a: f32[1024,1], %b: param f32[1,8192,1,1]) { %y = add(%a, %b) return %y }"},
    {"binary_all",
     "graph g(%a: f32[3,1,7], %b: f32[5,1]) { %s = sub(%a, %b) %m = mul(%a, %b) %x = "
     "maximum(%a, %b) %n = minimum(%s, %m) %q = add(%b, 2.0) %d = div(%a, %q) %t = add(%x, %n) "
     "%o = add(%t, %d) %r = sub(1.0, %o) return %r }"},
    // Reductions.
    {"sum_negative_dims_keepdim",
     "graph g(%x: f32[3,5,7,9]) { %y = sum(%x) {dims = [-1, 1], keepdim = true} return %y }"},
    {"mean_all", "graph g(%x: f32[6,7,11]) { %y = mean(%x) {dims = [0, 1, 2]} return %y }"},
    {"max_outer", "graph g(%x: f32[301,13]) { %y = max(%x) {dims = [0]} return %y }"},
    {"min_middle", "graph g(%x: f32[4,123,5]) { %y = min(%x) {dims = [1]} return %y }"},
    {"logsumexp_inner", "graph g(%x: f32[17,1003]) { %y = logsumexp(%x) {dims = [1]} return %y }"},
    {"sum_large", "graph g(%x: f32[3,1000003]) { %y = sum(%x) {dims = [1]} return %y }"},
    // Softmax.
    {"softmax_last", "graph g(%x: f32[13,257]) { %y = softmax(%x) {dim = -1} return %y }"},
    {"log_softmax_middle", "graph g(%x: f32[3,29,7]) { %y = log_softmax(%x) {dim = 1} return %y }"},
    // Channel lines too long for one thread, split over a block's warps (softmax.cuh mode 3):
    // 96 channels (24 a thread) with a chain after it, 70 (18, the last warp's part short).
    {"softmax_channels_split",
     "graph g(%x: f32[2,96,9,500], %c: param f32[96,1,1]) { %y = softmax(%x) {dim = 1} %o = "
     "mul(%y, %c) return %o }"},
    {"log_softmax_channels_split",
     "graph g(%x: f32[3,70,41,37]) { %y = log_softmax(%x) {dim = 1} return %y }"},
    // Norms.
    {"group_norm_affine",
     "graph g(%x: f32[3,12,7,5], %g: param f32[12], %b: param f32[12]) { %y = group_norm(%x, "
     "%g, %b) {groups = 4} return %y }"},
    {"group_norm_plain", "graph g(%x: f32[2,6,33]) { %y = group_norm(%x) {groups = 3, eps = 0.01} "
                         "return %y }"},
    {"instance_norm",
     "graph g(%x: f32[2,5,9,11], %g: param f32[5], %b: param f32[5]) { %y = instance_norm(%x, "
     "%g, %b) return %y }"},
    {"layer_norm",
     "graph g(%x: f32[7,5,19], %g: param f32[5,19], %b: param f32[5,19]) { %y = layer_norm(%x, "
     "%g, %b) {normalized_shape = [5, 19]} return %y }"},
    {"batch_norm",
     "graph g(%x: f32[3,6,7,5], %m: param f32[6], %v: param f32[6], %g: param f32[6], %b: param "
     "f32[6]) { %y = batch_norm(%x, %m, %v, %g, %b) {eps = 0.001} return %y }"},
    // Pools.
    {"max_pool2d_pad_ceil",
     "graph g(%x: f32[2,3,17,14]) { %y = max_pool(%x) {kernel_size = 3, stride = 2, padding = "
     "1, ceil_mode = true} return %y }"},
    {"max_pool1d_dilation",
     "graph g(%x: f32[2,3,31]) { %y = max_pool(%x) {kernel_size = 3, stride = 2, dilation = 2} "
     "return %y }"},
    {"avg_pool3d",
     "graph g(%x: f32[1,2,9,8,7]) { %y = avg_pool(%x) {kernel_size = 2, stride = 2, ceil_mode = "
     "true} return %y }"},
    {"avg_pool2d_exclude_pad",
     "graph g(%x: f32[2,3,13,11]) { %y = avg_pool(%x) {kernel_size = [3, 2], stride = [2, 1], "
     "padding = [1, 1], count_include_pad = false} return %y }"},
    // Views.
    {"reshape_flatten_dropout",
     "graph g(%x: f32[2,3,4,5]) { %r = reshape(%x) {shape = [6, -1]} %e = exp(%r) %f = "
     "flatten(%e) {start_dim = 0} %d = dropout(%f) {p = 0.3} %o = mul(%d, 2.0) return %o }"},
    {"returned_view", "graph g(%x: f32[4,6]) { %e = relu(%x) %f = flatten(%e) return %f }"},
    // Views that sink below the ops after them (compiler/SinkViews.h), and returned views
    // whose values are written straight into the result (a convolution's, a reduction's that
    // starts from a fill, a value read again by another kernel).
    {"view_sunk_into_softmax",
     "graph g(%x: f32[2,3,4,5,6], %s: param f32[1,3,1,1,1]) { %a = relu(%x) %f = reshape(%a) "
     "{shape = [2, 3, -1]} %p = softmax(%f) {dim = 2} %r = reshape(%p) {shape = [2, 3, 4, 5, "
     "6]} %m = mul(%r, %s) %o = sigmoid(%m) return %o }"},
    {"view_sunk_into_pool_reduction",
     "graph g(%x: f32[6,40], %w: param f32[64,40]) { %y = linear(%x, %w) %u = reshape(%y) {shape "
     "= [6, 1, 64]} %p = avg_pool(%u) {kernel_size = 4} %q = reshape(%p) {shape = [6, 16]} %e = "
     "gelu(%q) %o = max(%e) {dims = [1]} return %o }"},
    {"returned_view_of_conv",
     "graph g(%x: f32[2,4,9,9], %w: param f32[8,4,3,3]) { %y = conv(%x, %w) %r = relu(%y) %f = "
     "flatten(%r) {start_dim = 1} return %f }"},
    {"returned_view_of_sum_and_reused_value",
     "graph g(%x: f32[5,7,3]) { %e = exp(%x) %s = sum(%e) {dims = [2]} %v = reshape(%s) {shape = "
     "[35]} %f = flatten(%e) %m = max(%f) {dims = [0]} return %v, %f, %m }"},
};

/// Test logs name the case instead of dumping its bytes.
void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }

class GpuOp : public ::testing::TestWithParam<OpCase> {};

TEST_P(GpuOp, MatchesReference) {
  // Planning and NVRTC need no GPU: every op must compile everywhere, CI included.
  auto graphs = parseSir(GetParam().sir, "op.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  JitOptions options;
  options.arch = "sm_90a";
  options.useCache = false;
  auto compiled = compileGraph(graphs->front(), options);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  EXPECT_FALSE(compiled->kernels.empty() && compiled->pipeline.plan.plan.steps.empty());

  SINTER_REQUIRE_GPU();
  expectMatchesReference(GetParam().sir, 11);
  // A second draw of data: the kernels must compute the function, not fit one input.
  expectMatchesReference(GetParam().sir, 12345);
}

INSTANTIATE_TEST_SUITE_P(Catalog, GpuOp, ::testing::ValuesIn(kOpCases),
                         [](const auto &info) { return std::string(info.param.name); });

// gelu's exact form runs without erff (common.cuh, geluErf): elementwise against the float64
// function on a fine grid over the whole range where the result is neither x nor 0. The
// bounds are the fp32 error model's (tools/numerics/fit_gelu.py: 9e-7 for x >= -2, 2.1e-6
// down to -6) with some room; below -6 the values are under 6e-9 and only an absolute bound
// applies.
TEST(GpuOpAccuracy, GeluFollowsTheErfFormOverItsRange) {
  constexpr int64_t kN = 28 * 2048 + 1; // x = -14 .. 14 in steps of 1/2048
  auto graphs = parseSir("graph g(%x: f32[57345]) { %y = gelu(%x) return %y }", "gelu.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  auto compiled = compileGraph(graphs->front(), JitOptions());
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
  SINTER_REQUIRE_GPU();
  auto exe = Executable::create(compiled->pipeline.plan.plan, std::move(compiled->kernels));
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  std::vector<float> xs(kN);
  for (int64_t i = 0; i < kN; ++i)
    xs[i] = float(-14.0 + double(i) / 2048);
  auto out = (*exe)->runHost({{"x", HostTensor({kN}, xs)}});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  const std::vector<float> &got = out->at("y").data;
  double worstNear = 0, worstTail = 0, worstAbs = 0;
  for (int64_t i = 0; i < kN; ++i) {
    const double x = xs[i], want = 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    const double err = std::fabs(double(got[i]) - want);
    worstAbs = std::max(worstAbs, err / std::max(1.0, std::fabs(x)));
    if (want != 0 && x >= -2)
      worstNear = std::max(worstNear, err / std::fabs(want));
    else if (want != 0 && x >= -6)
      worstTail = std::max(worstTail, err / std::fabs(want));
  }
  EXPECT_LT(worstNear, 2e-6);
  EXPECT_LT(worstTail, 4e-6);
  EXPECT_LT(worstAbs, 3e-7);
  EXPECT_EQ(got[14 * 2048], 0.f); // gelu(0)
}

TEST(GpuOpPrecision, Fp32PolicyKeepsWideConvolutionsAccurate) {
  SINTER_REQUIRE_GPU();
  expectMatchesReference("graph g(%x: f32[2,48,13,15], %w: param f32[40,48,3,3]) { %y = conv(%x, "
                         "%w) {padding = 1} return %y }",
                         3, Precision::Fp32);
}

} // namespace
} // namespace sinter::test
