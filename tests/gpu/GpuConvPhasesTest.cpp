//===- tests/gpu/GpuConvPhasesTest.cpp - strided transposed convs on tensor cores ---===//
//
// A strided transposed convolution on conv_igemm runs as one kernel per output phase
// (compiler/kernels/ConvPhases.h). Each case here is a small graph at odd shapes - 1-D, 2-D,
// 3-D, output_padding, padding at or above half the kernel, a stride-1 dim beside strided
// ones, dilation coprime with the stride or sharing a factor with it (phases no tap reaches),
// a kernel shorter than the stride, fewer outputs than the stride, groups (16 and 32
// channels each), bias, epilogues that read tensors at the output position, and norm tails
// whose statistics come from the phase kernels' epilogues - compared with the float64 CPU
// reference, first with fp32-accurate products (3xTF32: a tolerance of 1e-5 catches a single
// wrong tap or output), then with TF32. Without a GPU the test still checks the plan (the
// convolution must run on conv_igemm, as the expected number of phase kernels) and compiles
// it through NVRTC.
//
//===--------------------------------------------------------------------------------===//
#include "GpuHarness.h"

#include "compiler/Pipeline.h"
#include "ir/Parser.h"

#include <limits>

namespace sinter::test {
namespace {

struct PhaseCase {
  const char *name;
  int phases;          ///< conv_igemm launches expected (one per output phase)
  const char *pattern; ///< the fusion pattern of the convolution's group
  const char *sir;
};

const PhaseCase kPhaseCases[] = {
    {"convT1d_k3_s2_outpad_relu", 2, "anchor+epilogue",
     "graph g(%x: f32[3,64,13], %w: param f32[64,40,3]) { %y = conv_transpose(%x, %w) {stride "
     "= 2, padding = 1, output_padding = 1} %r = relu(%y) return %r }"},
    {"convT1d_k4_s3_dil2_bias", 3, "anchor+epilogue",
     "graph g(%x: f32[2,48,11], %w: param f32[48,40,4], %b: param f32[40]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 3, padding = 1, dilation = 2} return %y }"},
    {"convT2d_k4_s2_p1", 4, "anchor+epilogue",
     "graph g(%x: f32[2,64,7,9], %w: param f32[64,48,4,4]) { %y = conv_transpose(%x, %w) "
     "{stride = 2, padding = 1} return %y }"},
    {"convT2d_k3_s2_pad2_outpad", 4, "anchor+epilogue",
     "graph g(%x: f32[3,40,6,7], %w: param f32[40,36,3,3]) { %y = conv_transpose(%x, %w) "
     "{stride = 2, padding = 2, output_padding = [1, 0]} return %y }"},
    {"convT2d_stride_2x1", 2, "anchor+epilogue",
     "graph g(%x: f32[2,48,5,6], %w: param f32[48,40,3,3]) { %y = conv_transpose(%x, %w) "
     "{stride = [2, 1], padding = 1} return %y }"},
    // Phase offsets below zero: even outputs take tap 1, from input q - 1.
    {"convT2d_s2_dil3", 4, "anchor+epilogue",
     "graph g(%x: f32[2,48,6,5], %w: param f32[48,40,3,3]) { %y = conv_transpose(%x, %w) "
     "{stride = 2, padding = 1, dilation = 3} return %y }"},
    // Phases that no tap reaches (dilation sharing a factor with the stride, a kernel
    // shorter than the stride) run as one tap of zeros: bias, epilogue and statistics only.
    {"convT2d_s2_dil2_tapless_phases", 4, "anchor+epilogue",
     "graph g(%x: f32[2,48,6,7], %w: param f32[48,40,3,3], %b: param f32[40]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, padding = 1, dilation = 2} %r = tanh(%y) "
     "return %r }"},
    {"convT1d_k1_s2_kernel_shorter_than_stride", 2, "anchor+epilogue",
     "graph g(%x: f32[3,256,9], %w: param f32[256,40,1], %b: param f32[40]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, output_padding = 1} %r = sigmoid(%y) return %r }"},
    // 16 output channels: on mma.sync the 16-wide tile reads the weight itself (kZeroTaps).
    {"convT2d_s2_dil2_16ch_tapless", 4, "anchor+epilogue",
     "graph g(%x: f32[2,256,5,6], %w: param f32[256,16,3,3], %b: param f32[16]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, dilation = 2} return %y }"},
    {"convT3d_s2_dil2_tapless_groupnorm", 8, "conv+epilogue+norm+epilogue",
     "graph g(%x: f32[2,32,3,4,3], %w: param f32[32,48,3,3,3], %b: param f32[48], %ga: param "
     "f32[48], %be: param f32[48]) { %y = conv_transpose(%x, %w, %b) {stride = 2, padding = 1, "
     "dilation = 2} %r = relu(%y) %o = group_norm(%r, %ga, %be) {groups = 6} return %o }"},
    {"convT3d_k3_s2_p1_outpad", 8, "anchor+epilogue",
     "graph g(%x: f32[2,32,3,4,5], %w: param f32[32,40,3,3,3]) { %y = conv_transpose(%x, %w) "
     "{stride = 2, padding = 1, output_padding = 1} return %y }"},
    {"convT3d_one_input_depth", 4, "anchor+epilogue",
     "graph g(%x: f32[2,32,1,4,5], %w: param f32[32,40,3,3,3]) { %y = conv_transpose(%x, %w) "
     "{stride = 2, padding = 1, output_padding = [0, 1, 1]} return %y }"},
    {"convT2d_groups4_32ch", 4, "anchor+epilogue",
     "graph g(%x: f32[3,128,5,6], %w: param f32[128,32,4,4]) { %y = conv_transpose(%x, %w) "
     "{stride = 2, padding = 1, groups = 4} return %y }"},
    {"convT3d_groups2_bias_outpad", 8, "anchor+epilogue",
     "graph g(%x: f32[2,64,3,5,4], %w: param f32[64,32,3,3,3], %b: param f32[64]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, padding = 1, output_padding = [1, 0, 1], groups = "
     "2} return %y }"},
    // The epilogue reads tensors at the output position: the phase kernels must hand it
    // real output coordinates.
    {"convT2d_epilogue_reads_tensors", 4, "anchor+epilogue",
     "graph g(%x: f32[2,64,7,9], %w: param f32[64,48,4,4], %r: f32[2,48,14,18], %s: param "
     "f32[1,1,14,18]) { %y = conv_transpose(%x, %w) {stride = 2, padding = 1} %a = add(%y, %r) "
     "%m = mul(%a, %s) %o = tanh(%m) return %o }"},
    {"convT1d_batchnorm_relu", 2, "anchor+epilogue",
     "graph g(%x: f32[2,64,15], %w: param f32[64,48,4], %mu: param f32[48], %v: param f32[48], "
     "%ga: param f32[48], %be: param f32[48]) { %y = conv_transpose(%x, %w) {stride = 2, "
     "padding = 1} %n = batch_norm(%y, %mu, %v, %ga, %be) %o = relu(%n) return %o }"},
    // Norm tails: statistics accumulated by every phase kernel into one buffer.
    {"convT3d_relu_groupnorm", 8, "conv+epilogue+norm+epilogue",
     "graph g(%x: f32[2,32,3,4,5], %w: param f32[32,48,3,3,3], %ga: param f32[48], %be: param "
     "f32[48]) { %y = conv_transpose(%x, %w) {stride = 2, padding = 1, output_padding = 1} %r = "
     "relu(%y) %o = group_norm(%r, %ga, %be) {groups = 6} return %o }"},
    {"convT2d_groups2_gelu_instancenorm_sigmoid", 4, "conv+epilogue+norm+epilogue",
     "graph g(%x: f32[2,64,5,7], %w: param f32[64,32,4,4], %b: param f32[64], %ga: param "
     "f32[64], %be: param f32[64]) { %y = conv_transpose(%x, %w, %b) {stride = 2, padding = 1, "
     "groups = 2} %g = gelu(%y) %n = instance_norm(%g, %ga, %be) %o = sigmoid(%n) return %o }"},
    {"convT2d_groups4_groupnorm_mean", 4, "conv+epilogue+norm+reduce",
     "graph g(%x: f32[3,128,5,6], %w: param f32[128,32,4,4], %ga: param f32[128], %be: param "
     "f32[128]) { %y = conv_transpose(%x, %w) {stride = 2, padding = 1, groups = 4} %n = "
     "group_norm(%y, %ga, %be) {groups = 4} %o = mean(%n) {dims = [1, 2, 3]} return %o }"},
};

/// Test logs name the case instead of dumping its bytes.
void PrintTo(const PhaseCase &c, std::ostream *os) { *os << c.name; }

class GpuConvPhases : public ::testing::TestWithParam<PhaseCase> {};

TEST_P(GpuConvPhases, RunsOnTensorCoresAndMatchesReference) {
  const PhaseCase &c = GetParam();
  // The plan needs no GPU: check it everywhere.
  auto graphs = parseSir(c.sir, "phases.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  for (Precision p : {Precision::Fp32, Precision::Auto}) {
    auto result = runPipeline(graphs->front(), {p, "sm_90a", false});
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    EXPECT_EQ(result->fusion.groups.front().pattern, c.pattern);
    int igemm = 0, direct = 0, shift = 0;
    for (const PlannedKernel &k : result->plan.kernels) {
      igemm += k.source.templateName == "conv_igemm.cuh";
      direct += k.source.templateName == "conv_direct.cuh";
      shift += k.source.templateName == "conv_shift.cuh";
    }
    // One conv_igemm kernel per phase, or (TF32 on sm_90a, where convShiftTile takes the
    // shape) all phases in one conv_shift kernel; never conv_shift in fp32.
    const bool phases = igemm == c.phases && shift == 0;
    const bool walk = p != Precision::Fp32 && igemm == 0 && shift == 1;
    EXPECT_TRUE(phases || walk) << igemm << " conv_igemm, " << shift << " conv_shift kernels";
    EXPECT_EQ(direct, 0);
  }
  // NVRTC needs no GPU either.
  JitOptions options;
  options.arch = "sm_90a";
  options.precision = Precision::Fp32;
  options.useCache = false;
  auto compiled = compileGraph(graphs->front(), options);
  ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());

  SINTER_REQUIRE_GPU();
  expectMatchesReference(c.sir, 31, Precision::Fp32);
  expectMatchesReference(c.sir, 32, Precision::Auto);
}

INSTANTIATE_TEST_SUITE_P(Phases, GpuConvPhases, ::testing::ValuesIn(kPhaseCases),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(GpuConvPhasesNonFinite, ANaNInputReachesOnlyTheOutputsItsTapsReach) {
  // Stride 2, dilation 2, padding 1: only odd (h, w) outputs get taps; the three other
  // phases run as one tap of zeros, which must not turn an input's NaN or Inf into theirs.
  const char *sir = "graph g(%x: f32[2,48,6,7], %w: param f32[48,40,3,3], %b: param f32[40]) { "
                    "%y = conv_transpose(%x, %w, %b) {stride = 2, padding = 1, dilation = 2} "
                    "return %y }";
  auto graphs = parseSir(sir, "nan.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  for (Precision p : {Precision::Fp32, Precision::Auto}) {
    auto result = runPipeline(graphs->front(), {p, "sm_90a", false});
    ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
    int biasOnly = 0;
    for (const PlannedKernel &k : result->plan.kernels)
      biasOnly += k.source.tileConfig.find("no tap reaches it") != std::string::npos;
    EXPECT_EQ(biasOnly, 3);
  }
  SINTER_REQUIRE_GPU();
  // x[0, 0, 0, 0] reaches outputs (1 or 3, 1 or 3) of every channel of image 0 (NaN in the
  // reference); x[1, 5, 3, 4] is infinite. Every other output is finite in the reference,
  // and runAndCompare counts each output whose finiteness differs from it.
  auto poison = [](TensorMap &data) {
    std::vector<float> &x = data.at("x").data;
    x[0] = std::numeric_limits<float>::quiet_NaN();
    x[((1 * 48 + 5) * 6 + 3) * 7 + 4] = std::numeric_limits<float>::infinity();
  };
  for (Precision p : {Precision::Fp32, Precision::Auto}) {
    JitOptions options;
    options.precision = p;
    GpuRun run = runAndCompare(graphs->front(), 5, options, 0, poison);
    ASSERT_EQ(run.errors.size(), 1u);
    EXPECT_EQ(run.errors[0].nonFinite, 0) << run.kernelList;
    EXPECT_LT(run.errors[0].relL2, run.tolerance) << run.kernelList;
  }
}

} // namespace
} // namespace sinter::test
