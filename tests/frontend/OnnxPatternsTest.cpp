//===- tests/frontend/OnnxPatternsTest.cpp - what the PyTorch exporters write --------===//
//
// Models written node for node as torch.onnx.export writes them at opset 20 (the dynamo
// exporter's torchlib functions and the TorchScript exporter's symbolic functions): GroupNorm
// as Reshape -> InstanceNormalization -> Reshape -> Mul -> Add with its shape arithmetic,
// GELU's erf and tanh formulas, silu, hardswish, mish and softplus spelled out, shape
// sub-graphs feeding Reshape. Each must import to the catalog op, fuse as the hand-written
// .sir does, and compute the same on the float64 reference. The five workloads are built both
// ways at their real shapes (plans compared with ../shared/workloads) and at small shapes
// (results compared).
//
//===--------------------------------------------------------------------------------===//
#include "tests/frontend/ExporterModels.h"
#include "tests/frontend/OnnxTestUtil.h"

#include "ir/Parser.h"

#include <regex>

using namespace sinter;
using namespace sinter::test;

namespace {

using B = OnnxBuilder;

class OnnxPatterns : public OnnxTest {};

TEST_F(OnnxPatterns, GroupNormFromBothExportersIsOneOp) {
  for (Exporter e : {Exporter::Dynamo, Exporter::TorchScript}) {
    B b;
    b.input("x", {2, 8, 3, 5});
    b.ramp("gamma", {8}, 0.8f, 0.05f);
    b.ramp("beta", {8});
    groupNorm(b, e, "x", {2, 8, 3, 5}, 4, "gamma", "beta", "o");
    b.output("o", {2, 8, 3, 5});
    OnnxModel m = import(b);
    Graph want = sir(e == Exporter::Dynamo ? R"(
      graph m(%x: f32[2,8,3,5], %gamma: param f32[8], %beta: param f32[8]) {
        %o = group_norm(%x, %gamma, %beta) {groups = 4}
        return %o
      })"
                                           : R"(
      graph m(%x: f32[2,8,3,5], %onnx__Mul_o: param f32[8], %onnx__Add_o: param f32[8]) {
        %o = group_norm(%x, %onnx__Mul_o, %onnx__Add_o) {groups = 4}
        return %o
      })");
    EXPECT_EQ(text(m.graph), text(want)) << (e == Exporter::Dynamo ? "dynamo" : "torchscript");
    expectSameResults(m, want);
    // The re-formed op names every node it came from.
    ASSERT_EQ(m.graph.ops.size(), 1u);
    EXPECT_NE(m.graph.ops[0].origin.find("(InstanceNormalization)"), std::string::npos);
    EXPECT_NE(m.graph.ops[0].origin.find("(Add)"), std::string::npos);
  }
}

TEST_F(OnnxPatterns, GroupNormOfLinearOutputIn2D) {
  B b;
  b.input("x", {4, 6});
  b.ramp("w", {16, 6});
  b.ramp("gamma", {16}, 0.8f, 0.05f);
  b.ramp("beta", {16});
  auto &g = b.node("Gemm", {"x", "w"}, {"y"});
  B::attrInt(g, "transB", 1);
  groupNorm(b, Exporter::Dynamo, "y", {4, 16}, 4, "gamma", "beta", "o");
  b.output("o");
  OnnxModel m = import(b);
  Graph want = sir(R"(graph m(%x: f32[4,6], %w: param f32[16,6], %gamma: param f32[16],
                              %beta: param f32[16]) {
    %y = linear(%x, %w)
    %o = group_norm(%y, %gamma, %beta) {groups = 4}
    return %o
  })");
  EXPECT_EQ(text(m.graph), text(want));
  expectSameResults(m, want);
}

TEST_F(OnnxPatterns, GeluFormulasBecomeGelu) {
  for (Exporter e : {Exporter::Dynamo, Exporter::TorchScript})
    for (bool tanh : {false, true}) {
      B b(17);
      b.input("x", {3, 10});
      b.node("Relu", {"x"}, {"r"});
      geluFormula(b, e, "r", tanh, "o");
      b.output("o");
      OnnxModel m = import(b);
      Graph want = sir(tanh ? R"(graph m(%x: f32[3,10]) {
          %r = relu(%x)
          %o = gelu(%r) {approximate = "tanh"}
          return %o
        })"
                            : R"(graph m(%x: f32[3,10]) {
          %r = relu(%x)
          %o = gelu(%r)
          return %o
        })");
      // The import keeps the formula; the compiler re-forms it, and fuses the result as
      // it fuses the catalog's gelu.
      expectSameResults(m, want, 1e-6);
      auto r = runPipeline(m.graph, {});
      ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
      EXPECT_EQ(text(r->graph), text(want)) << (tanh ? "tanh" : "erf");
      EXPECT_EQ(plan(m.graph), plan(want));
    }
}

TEST_F(OnnxPatterns, SiluHardswishMishAndRsqrtSpelledOut) {
  B b;
  b.input("x", {4, 6});
  b.node("Sigmoid", {"x"}, {"s"});
  b.node("Mul", {"x", "s"}, {"silu"});
  auto &hs = b.node("HardSigmoid", {"silu"}, {"h"});
  B::attrFloat(hs, "alpha", float(1.0 / 6));
  B::attrFloat(hs, "beta", 0.5f);
  b.node("Mul", {"silu", "h"}, {"hswish"});
  b.node("Softplus", {"hswish"}, {"sp"});
  b.node("Tanh", {"sp"}, {"t"});
  b.node("Mul", {"hswish", "t"}, {"mish"});
  b.node("Abs", {"mish"}, {"a"});
  b.node("Sqrt", {"a"}, {"sq"});
  b.node("Reciprocal", {"sq"}, {"o"});
  b.output("o");
  OnnxModel m = import(b);
  Graph want = sir(R"(graph m(%x: f32[4,6]) {
    %silu = silu(%x)
    %hswish = hardswish(%silu)
    %mish = mish(%hswish)
    %a = abs(%mish)
    %o = rsqrt(%a)
    return %o
  })");
  expectSameResults(m, want, 1e-6);
  auto r = runPipeline(m.graph, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(text(r->graph), text(want));
}

TEST_F(OnnxPatterns, SoftplusWithBetaAndThresholdFromBothExporters) {
  for (Exporter e : {Exporter::Dynamo, Exporter::TorchScript}) {
    B b;
    b.input("x", {4, 6});
    b.constant("beta", {2.0f});
    b.node("Mul", {"x", "beta"}, {"s"});
    b.node("Softplus", {"s"}, {"sp"});
    b.node("Div", {"sp", "beta"}, {e == Exporter::Dynamo ? "d" : "o"});
    if (e == Exporter::Dynamo) {
      b.constant("threshold", {10.0f});
      b.node("Greater", {"s", "threshold"}, {"cond"});
      b.node("Where", {"cond", "x", "d"}, {"o"});
    }
    b.output("o");
    OnnxModel m = import(b);
    Graph want = sir(e == Exporter::Dynamo ? R"(graph m(%x: f32[4,6]) {
        %o = softplus(%x) {beta = 2.0, threshold = 10.0}
        return %o
      })"
                                           : R"(graph m(%x: f32[4,6]) {
        %o = softplus(%x) {beta = 2.0}
        return %o
      })");
    if (e == Exporter::Dynamo) {
      EXPECT_EQ(text(m.graph), text(want));
      EXPECT_NE(m.graph.ops[0].origin.find("(Where)"), std::string::npos);
    }
    expectSameResults(m, want, 1e-6);
    auto r = runPipeline(m.graph, {});
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    EXPECT_EQ(text(r->graph), text(want));
  }
}

TEST_F(OnnxPatterns, ShapeGatherUnsqueezeConcatFeedingReshape) {
  // x.view(x.size(0), -1) as the TorchScript exporter writes it.
  B b;
  b.input("x", {3, 4, 5});
  b.node("Shape", {"x"}, {"shape"});
  b.constant("zero", {}, {}); // replaced below by an int64 scalar
  b.graph()
      .mutable_node(b.graph().node_size() - 1)
      ->mutable_attribute(0)
      ->mutable_t()
      ->set_data_type(onnx::TensorProto::INT64);
  b.graph()
      .mutable_node(b.graph().node_size() - 1)
      ->mutable_attribute(0)
      ->mutable_t()
      ->add_int64_data(0);
  auto &g = b.node("Gather", {"shape", "zero"}, {"n"});
  B::attrInt(g, "axis", 0);
  b.constantInts("axes", {0});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"});
  b.constantInts("minus1", {-1});
  auto &c = b.node("Concat", {"n1", "minus1"}, {"target"});
  B::attrInt(c, "axis", 0);
  b.node("Reshape", {"x", "target"}, {"flat"});
  b.node("Relu", {"flat"}, {"o"});
  b.output("o", {3, 20});
  OnnxModel m = import(b);
  EXPECT_EQ(text(m.graph), text(sir(R"(graph m(%x: f32[3,4,5]) {
    %flat = reshape(%x) {shape = [3, 20]}
    %o = relu(%flat)
    return %o
  })")));
}

TEST_F(OnnxPatterns, EluWithUnitScalesAndSliceOfShape) {
  // torchlib's elu multiplies by input_scale and scale (both 1); a Slice of Shape picks dims.
  B b;
  b.input("x", {2, 3, 4});
  b.constant("one", {1.0f});
  b.node("Mul", {"x", "one"}, {"xs"});
  auto &e = b.node("Elu", {"xs"}, {"e"});
  B::attrFloat(e, "alpha", 1.0f);
  b.node("Mul", {"e", "one"}, {"es"});
  b.node("Shape", {"x"}, {"shape"});
  b.constantInts("st", {1});
  b.constantInts("en", {100});
  b.node("Slice", {"shape", "st", "en"}, {"tail"});
  b.constantInts("lead", {-1});
  auto &c = b.node("Concat", {"lead", "tail"}, {"target"});
  B::attrInt(c, "axis", 0);
  b.node("Reshape", {"es", "target"}, {"o"});
  b.output("o", {2, 3, 4});
  OnnxModel m = import(b);
  auto r = runPipeline(m.graph, {});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(text(r->graph), text(sir(R"(graph m(%x: f32[2,3,4]) {
    %e = elu(%x)
    %o = mul(%e, 1.0)
    return %o
  })")));
}

//===----------------------------------------------------------------------------------===//
// The five workloads, as each exporter writes them.

Graph workload(const std::string &file) {
  auto graphs = parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/" + file);
  if (!graphs) {
    ADD_FAILURE() << llvm::toString(graphs.takeError());
    return {};
  }
  return std::move((*graphs)[0]);
}

/// `g`'s text with its shapes replaced: `subs` maps "old" shape text to "new".
Graph reshaped(const Graph &g, std::vector<std::pair<std::string, std::string>> subs) {
  std::string t = OnnxTest::text(g);
  // Drop the inferred types: they follow from the new argument shapes.
  t = std::regex_replace(t, std::regex(" : f32\\[[0-9,]*\\]"), "");
  for (auto &[from, to] : subs)
    t = std::regex_replace(t, std::regex(std::regex_replace(from, std::regex("[\\[\\]]"), "\\$&")),
                           to);
  return OnnxTest::sir(t);
}

class OnnxWorkloads : public OnnxTest, public ::testing::WithParamInterface<Exporter> {};

TEST_P(OnnxWorkloads, FuseAsTheirSirFilesAtFullShape) {
  Exporter e = GetParam();
  struct Case {
    B model;
    Graph sir;
    std::string name;
  };
  Graph w3 = workload("s3_gemm_gn_min_bias.sir");
  // S3's weight is 256 MiB at full size: K is cut to 64 for the test (the plan's groups and
  // kernels do not depend on K; the device check runs the full size).
  Graph w3small =
      reshaped(w3, {{"f32[1024,8192]", "f32[1024,64]"}, {"f32[8192,8192]", "f32[8192,64]"}});
  std::vector<Case> cases;
  cases.push_back({s0(e, 16, 64, 128, 32), workload("s0_convt3d_relu_gn.sir"), "s0"});
  cases.push_back({s1(e, 128, 24, 32), workload("s1_conv3d_gn_mean.sir"), "s1"});
  cases.push_back({s2(e, 128, 256), workload("s2_convt2d_gelu_gn.sir"), "s2"});
  cases.push_back({s3(e, 1024, 64, 8192), w3small, "s3"});
  cases.push_back({s4(4, 32, 64, 128), workload("s4_convt3d_grouped.sir"), "s4"});
  for (Case &c : cases) {
    OnnxModel m = import(c.model, c.sir.name + ".onnx");
    EXPECT_EQ(m.graph.name, c.sir.name);
    std::string got = plan(m.graph), want = plan(c.sir);
    EXPECT_FALSE(want.empty());
    EXPECT_EQ(got, want) << c.name;
    if (e == Exporter::Dynamo) { // every name is the .sir's
      EXPECT_EQ(text(m.graph), text(c.sir)) << c.name;
    }
  }
}

TEST_P(OnnxWorkloads, ComputeAsTheirSirFilesAtSmallShape) {
  Exporter e = GetParam();
  struct Case {
    B model;
    Graph sir;
  };
  std::vector<Case> cases;
  cases.push_back({s0(e, 2, 4, 16, 3), reshaped(workload("s0_convt3d_relu_gn.sir"),
                                                {{"f32[16,64,32,32,32]", "f32[2,4,3,3,3]"},
                                                 {"f32[64,128,3,3,3]", "f32[4,16,3,3,3]"},
                                                 {"f32[128]", "f32[16]"}})});
  cases.push_back({s1(e, 2, 5, 6), reshaped(workload("s1_conv3d_gn_mean.sir"),
                                            {{"f32[128,3,24,32,32]", "f32[2,3,5,6,6]"}})});
  cases.push_back({s2(e, 2, 4), reshaped(workload("s2_convt2d_gelu_gn.sir"),
                                         {{"f32[128,64,256,256]", "f32[2,64,4,4]"}})});
  cases.push_back({s3(e, 3, 8, 1024), reshaped(workload("s3_gemm_gn_min_bias.sir"),
                                               {{"f32[1024,8192]", "f32[3,8]"},
                                                {"f32[8192,8192]", "f32[1024,8]"},
                                                {"f32[8192]", "f32[1024]"},
                                                {"f32[1,8192,1,1]", "f32[1,1024,1,1]"}})});
  cases.push_back({s4(1, 2, 3, 4), reshaped(workload("s4_convt3d_grouped.sir"),
                                            {{"f32[4,32,32,64,128]", "f32[1,32,2,3,4]"}})});
  for (Case &c : cases) {
    OnnxModel m = import(c.model, c.sir.name + ".onnx", /*external=*/e == Exporter::Dynamo);
    // The exporter's formulas and the catalog ops round differently only in the last bits.
    expectSameResults(m, c.sir, 1e-9, initializers(c.model));
  }
}

INSTANTIATE_TEST_SUITE_P(BothExporters, OnnxWorkloads,
                         ::testing::Values(Exporter::Dynamo, Exporter::TorchScript),
                         [](const auto &info) {
                           return info.param == Exporter::Dynamo ? "dynamo" : "torchscript";
                         });

} // namespace
