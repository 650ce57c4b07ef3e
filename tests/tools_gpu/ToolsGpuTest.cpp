//===- tests/tools_gpu/ToolsGpuTest.cpp - sinterc run / check and bundles on the GPU ---===//
//
// What needs a GPU: a bundle written by `sinterc compile` in another process is loaded with
// Executable::load in this one and run with NVRTC never called (nvrtcCompileCount stays at
// zero), matching the float64 reference; `sinterc run` on the .sir and on the bundle gives
// the same outputs as `sinterc eval`; `--bench` prints its timing lines; `sinterc check`
// passes on a tiny graph and a workload-shaped graph. Every test skips without a GPU.
//
//===--------------------------------------------------------------------------------===//
#include "CliHarness.h"

#include "ir/Parser.h"
#include "ir/Random.h"
#include "ir/Reference.h"
#include "ir/Safetensors.h"
#include "runtime/Driver.h"
#include "runtime/Executable.h"

#include <cmath>

using namespace sinter;
using namespace sinter::clitest;

namespace {

#define SKIP_WITHOUT_GPU()                                                                         \
  do {                                                                                             \
    if (!gpuAvailable())                                                                           \
      GTEST_SKIP() << "no GPU";                                                                    \
  } while (0)

class ToolsGpuTest : public CliTest {};

double relL2(const HostTensor &got, const HostTensor &want) {
  double d = 0, r = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    d += (double(got.data[i]) - want.data[i]) * (double(got.data[i]) - want.data[i]);
    r += double(want.data[i]) * want.data[i];
  }
  return std::sqrt(d / r);
}

TEST_F(ToolsGpuTest, BundleLoadsWithoutNvrtc) {
  SKIP_WITHOUT_GPU();
  auto ctx = gpu();
  ASSERT_TRUE(bool(ctx));
  std::string arch = ctx->info.arch;
  Outcome o = sinterc("compile " + path("tiny.sir") + " --arch " + arch + " -o " + path("b"));
  ASSERT_EQ(o.status, 0) << o.err;

  ASSERT_EQ(nvrtcCompileCount(), 0u);
  auto exe = Executable::load(path("b"));
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  auto graphs = parseSirFile(path("tiny.sir"));
  ASSERT_TRUE(bool(graphs));
  TensorMap bindings = randomBindings((*graphs)[0], 3);
  auto got = (*exe)->runHost(bindings);
  ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
  EXPECT_EQ(nvrtcCompileCount(), 0u); // load and run never compiled anything

  auto want = evaluateReference((*graphs)[0], bindings);
  ASSERT_TRUE(bool(want));
  TensorMap ref = toTensorMap(*want);
  EXPECT_LT(relL2(got->at("o"), ref.at("o")), 1e-5);
}

TEST_F(ToolsGpuTest, RunMatchesEvalOnSirAndBundle) {
  SKIP_WITHOUT_GPU();
  ASSERT_EQ(sinterc("eval " + path("tiny.sir") + " --seed 5 -o " + path("ref.safetensors")).status,
            0);
  Outcome jit = sinterc("run " + path("tiny.sir") + " --seed 5 -o " + path("jit.safetensors"));
  ASSERT_EQ(jit.status, 0) << jit.err;
  EXPECT_NE(jit.out.find("o f32[4,8]: mean "), std::string::npos) << jit.out;
  Outcome c = sinterc("compile " + path("tiny.sir") + " -o " + path("b"));
  ASSERT_EQ(c.status, 0) << c.err;
  Outcome bundle = sinterc("run " + path("b") + " --seed 5 -o " + path("bundle.safetensors"));
  ASSERT_EQ(bundle.status, 0) << bundle.err;

  auto ref = readSafetensors(path("ref.safetensors"));
  auto a = readSafetensors(path("jit.safetensors"));
  auto b = readSafetensors(path("bundle.safetensors"));
  ASSERT_TRUE(ref && a && b);
  EXPECT_LT(relL2(a->at("o"), ref->at("o")), 1e-5);
  EXPECT_EQ(a->at("o").data, b->at("o").data);
}

TEST_F(ToolsGpuTest, Bench) {
  SKIP_WITHOUT_GPU();
  Outcome o = sinterc("run " + path("tiny.sir") + " --bench 10");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("10 runs after 3 warm-up, median "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" GB/s of "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" TFLOP/s of "), std::string::npos) << o.out;
}

TEST_F(ToolsGpuTest, CheckPasses) {
  SKIP_WITHOUT_GPU();
  Outcome o = sinterc("check " + path("tiny.sir") + " --seed 11");
  EXPECT_EQ(o.status, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("tolerance 1e-05 relative L2"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  ok\n"), std::string::npos) << o.out;

  // A conv + group norm graph: TF32 convolution under auto, 3xTF32 under fp32.
  write(
      "cgn.sir",
      R"(graph cgn(%x: f32[2,8,12,12], %w: param f32[16,8,3,3], %g: param f32[16], %b: param f32[16]) {
  %c = conv(%x, %w) {padding = [1, 1]}
  %r = relu(%c)
  %n = group_norm(%r, %g, %b) {groups = 4}
  return %n
}
)");
  for (const char *precision : {"auto", "fp32"}) {
    Outcome p = sinterc("check " + path("cgn.sir") + " --precision " + precision);
    EXPECT_EQ(p.status, 0) << precision << "\n" << p.out << p.err;
    EXPECT_NE(p.out.find("n            f32[2,16,12,12]"), std::string::npos) << p.out;
  }
}

TEST_F(ToolsGpuTest, CheckFailsOverItsTolerance) {
  SKIP_WITHOUT_GPU();
  // fp32 arithmetic cannot reach 1e-12 against float64: the check must fail, say so in one
  // line naming the output, and exit 1.
  Outcome o = sinterc("check " + path("tiny.sir") + " --seed 11 --tolerance 1e-12");
  EXPECT_EQ(o.status, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("FAIL"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("sinterc: check failed: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("over the tolerance 1e-12"), std::string::npos) << o.err;
}

TEST_F(ToolsGpuTest, RunRefusesBundleOfAnotherArch) {
  SKIP_WITHOUT_GPU();
  auto ctx = gpu();
  ASSERT_TRUE(bool(ctx));
  std::string other = ctx->info.arch == "sm_80" ? "sm_86" : "sm_80";
  ASSERT_EQ(sinterc("compile " + path("tiny.sir") + " --arch " + other + " -o " + path("b")).status,
            0);
  expectError(sinterc("run " + path("b")), "sinterc: bundle '" + path("b") + "' was built for " +
                                               other + " but the GPU is " + ctx->info.arch);
}

} // namespace
