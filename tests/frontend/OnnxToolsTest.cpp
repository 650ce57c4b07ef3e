//===- tests/frontend/OnnxToolsTest.cpp - sinterc on .onnx models, end to end --------===//
//
// Runs the built sinterc on models written by OnnxBuilder: verify prints the imported graph
// with the nodes each op came from, eval uses the model's weights unless --params gives
// others, explain names the ONNX nodes in the plan, compile writes the weights into the
// bundle, and a model sinter cannot import is one line on stderr with exit status 1.
//
//===--------------------------------------------------------------------------------===//
#include "tests/frontend/OnnxBuilder.h"
#include "tests/tools/CliHarness.h"

#include "frontend/OnnxImport.h"
#include "ir/Reference.h"
#include "ir/Safetensors.h"

using namespace sinter;
using namespace sinter::clitest;
using sinter::test::OnnxBuilder;

namespace {

class OnnxCli : public CliTest {
protected:
  void SetUp() override {
    CliTest::SetUp();
    OnnxBuilder b;
    b.input("x", {4, 16});
    b.ramp("w", {8, 16});
    b.ramp("b", {8});
    auto &g = b.node("Gemm", {"x", "w", "b"}, {"y"}, "/fc/Gemm");
    OnnxBuilder::attrInt(g, "transB", 1);
    b.node("Relu", {"y"}, {"r"}, "/act/Relu");
    b.node("Sigmoid", {"r"}, {"s"}, "/gate/Sigmoid");
    b.node("Mul", {"r", "s"}, {"o"}, "/gate/Mul");
    b.output("o", {4, 8});
    b.write(path("mlp.onnx"), /*external=*/true);
    TensorMap inputs;
    inputs["x"] = HostTensor({4, 16}, std::vector<float>(64, 0.25f));
    for (int i = 0; i < 64; ++i)
      inputs["x"].data[size_t(i)] = float(i % 7) * 0.3f - 0.9f;
    ASSERT_FALSE(bool(writeSafetensors(path("x.safetensors"), inputs)));
  }

  /// The reference result of the imported model with `params` overriding its weights.
  std::vector<float> expected(const TensorMap &params = {}) {
    auto m = importOnnx(path("mlp.onnx"));
    EXPECT_TRUE(bool(m));
    if (!m)
      return {};
    TensorMap bindings = params;
    for (auto &[name, t] : m->weights)
      bindings.emplace(name, t);
    auto in = readSafetensors(path("x.safetensors"));
    EXPECT_TRUE(bool(in));
    bindings.emplace("x", (*in)["x"]);
    auto r = evaluateReference(m->graph, bindings);
    EXPECT_TRUE(bool(r));
    return toTensorMap(*r)["o"].data;
  }
};

TEST_F(OnnxCli, VerifyPrintsTheImportedGraphWithItsNodes) {
  Outcome o = sinterc("verify " + path("mlp.onnx"));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "# " + path("mlp.onnx") +
                       ": ONNX opset 20, from pytorch 2.11.0; 2 params with their values in the "
                       "file (136 numbers)\n"
                       "graph mlp(%x: f32[4,16], %w: param f32[8,16], %b: param f32[8]) {\n"
                       "  %y = linear(%x, %w, %b) : f32[4,8]  # node '/fc/Gemm' (Gemm)\n"
                       "  %r = relu(%y) : f32[4,8]  # node '/act/Relu' (Relu)\n"
                       "  %s = sigmoid(%r) : f32[4,8]  # node '/gate/Sigmoid' (Sigmoid)\n"
                       "  %o = mul(%r, %s) : f32[4,8]  # node '/gate/Mul' (Mul)\n"
                       "  return %o\n}\n");
  EXPECT_EQ(o.err, "");
}

TEST_F(OnnxCli, EvalUsesTheModelsWeightsUnlessParamsOverride) {
  Outcome o = sinterc("eval " + path("mlp.onnx") + " --inputs " + path("x.safetensors") + " -o " +
                      path("out.safetensors"));
  ASSERT_EQ(o.status, 0) << o.err;
  auto out = readSafetensors(path("out.safetensors"));
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  std::vector<float> want = expected();
  ASSERT_EQ(want.size(), 32u);
  EXPECT_EQ((*out)["o"].data, want);

  TensorMap params;
  params["b"] = HostTensor({8}, std::vector<float>(8, 3.0f));
  ASSERT_FALSE(bool(writeSafetensors(path("b.safetensors"), params)));
  o = sinterc("eval " + path("mlp.onnx") + " --inputs " + path("x.safetensors") + " --params " +
              path("b.safetensors") + " -o " + path("out2.safetensors"));
  ASSERT_EQ(o.status, 0) << o.err;
  auto out2 = readSafetensors(path("out2.safetensors"));
  ASSERT_TRUE(bool(out2));
  EXPECT_EQ((*out2)["o"].data, expected(params));
  EXPECT_NE((*out2)["o"].data, want);
}

TEST_F(OnnxCli, ExplainNamesTheOnnxNodesAndFusesTheSiluItReformed) {
  Outcome o = sinterc("explain " + path("mlp.onnx"));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("graph mlp: 3 ops -> 1 fusion groups -> 1 kernels"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("%y = linear(%x, %w, %b)   # node '/fc/Gemm' (Gemm)"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("%o = silu(%r)   # node '/gate/Sigmoid' (Sigmoid) + node '/gate/Mul' "
                       "(Mul)"),
            std::string::npos)
      << o.out;
}

TEST_F(OnnxCli, CompileWritesTheWeightsIntoTheBundle) {
  Outcome o = sinterc("compile " + path("mlp.onnx") + " -o " + path("bundle"));
  ASSERT_EQ(o.status, 0) << o.err;
  auto w = readSafetensors(path("bundle/params.safetensors"));
  ASSERT_TRUE(bool(w)) << llvm::toString(w.takeError());
  EXPECT_EQ(w->size(), 2u);
  EXPECT_EQ((*w)["w"].type.str(), "f32[8,16]");
  EXPECT_TRUE(llvm::sys::fs::exists(path("bundle/graph.sir")));
  // graph.sir reads back (the origins are comments).
  EXPECT_EQ(sinterc("verify " + path("bundle/graph.sir")).status, 0);
}

TEST_F(OnnxCli, ModelsSinterCannotImportAreOneLine) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.node("LSTM", {"x"}, {"y"}, "lstm0");
  b.output("y");
  b.write(path("bad.onnx"));
  for (const char *cmd : {"verify", "explain"})
    expectError(sinterc(std::string(cmd) + " " + path("bad.onnx")),
                "sinterc: " + path("bad.onnx") +
                    ": node 'lstm0' (LSTM, opset 20): op type 'LSTM' is not supported");
  expectError(sinterc("eval " + path("mlp.onnx") + " --graph other -o " + path("o.st")),
              "sinterc: " + path("mlp.onnx") + ": the imported graph is named 'mlp', not 'other'");
}

} // namespace
