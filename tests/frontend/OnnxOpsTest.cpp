//===- tests/frontend/OnnxOpsTest.cpp - each supported ONNX op against its .sir ------===//
//
// One case per supported op (and per form that lowers differently): a model built node by
// node as an exporter writes it, the .sir graph it must import as (compared as text, origins
// aside), and both evaluated by the float64 reference on the same data.
//
//===--------------------------------------------------------------------------------===//
#include "tests/frontend/OnnxTestUtil.h"

using namespace sinter;
using namespace sinter::test;

namespace {

using B = OnnxBuilder;

class OnnxOps : public OnnxTest {
protected:
  /// Imports `b` and expects exactly `expected` (as text) with the same results.
  void expectImports(const OnnxBuilder &b, const char *expected, double tolerance = 1e-12) {
    OnnxModel m = import(b);
    Graph want = sir(expected);
    EXPECT_EQ(text(m.graph), text(want));
    expectSameResults(m, want, tolerance);
  }
};

TEST_F(OnnxOps, ConvWithBiasStridePadsDilationGroups) {
  B b;
  b.input("x", {2, 4, 9, 9});
  b.ramp("w", {6, 2, 3, 3});
  b.ramp("bias", {6});
  auto &n = b.node("Conv", {"x", "w", "bias"}, {"y"});
  B::attrInts(n, "strides", {2, 2});
  B::attrInts(n, "pads", {1, 1, 1, 1});
  B::attrInts(n, "dilations", {2, 1});
  B::attrInts(n, "kernel_shape", {3, 3});
  B::attrInt(n, "group", 2);
  b.output("y", {2, 6, 4, 5});
  expectImports(b, R"(graph m(%x: f32[2,4,9,9], %w: param f32[6,2,3,3], %bias: param f32[6]) {
  %y = conv(%x, %w, %bias) {stride = 2, padding = 1, dilation = [2, 1], groups = 2}
  return %y
})");
}

TEST_F(OnnxOps, Conv1dAndConv3dWithoutBias) {
  B b;
  b.input("x", {2, 3, 10});
  b.input("v", {1, 2, 5, 6, 7});
  b.ramp("w1", {4, 3, 3});
  b.ramp("w3", {3, 2, 3, 3, 3});
  b.node("Conv", {"x", "w1"}, {"a"});
  auto &c3 = b.node("Conv", {"v", "w3"}, {"c"});
  B::attrString(c3, "auto_pad", "SAME_UPPER");
  b.output("a");
  b.output("c");
  expectImports(b, R"(graph m(%x: f32[2,3,10], %v: f32[1,2,5,6,7], %w1: param f32[4,3,3],
                            %w3: param f32[3,2,3,3,3]) {
  %a = conv(%x, %w1)
  %c = conv(%v, %w3) {padding = 1}
  return %a, %c
})");
}

TEST_F(OnnxOps, ConvTransposeStridePadsOutputPaddingGroups) {
  B b;
  b.input("x", {2, 4, 5, 6});
  b.ramp("w", {4, 3, 3, 3});
  b.ramp("bias", {6});
  auto &n = b.node("ConvTranspose", {"x", "w", "bias"}, {"y"});
  B::attrInts(n, "strides", {2, 2});
  B::attrInts(n, "pads", {1, 1, 1, 1});
  B::attrInts(n, "output_padding", {1, 0});
  B::attrInt(n, "group", 2);
  b.output("y");
  expectImports(b, R"(graph m(%x: f32[2,4,5,6], %w: param f32[4,3,3,3], %bias: param f32[6]) {
  %y = conv_transpose(%x, %w, %bias) {stride = 2, padding = 1, output_padding = [1, 0], groups = 2}
  return %y
})");
}

TEST_F(OnnxOps, ConvTransposeOutputShapeAndSmallerEndPad) {
  // output_shape 10 from 5 with stride 2, k 3: total padding 1, begin 1, end 0 (NOTSET puts
  // the odd one at the begin): PyTorch's padding 1 with output_padding 1.
  B b;
  b.input("x", {1, 2, 5});
  b.ramp("w", {2, 2, 3});
  auto &n = b.node("ConvTranspose", {"x", "w"}, {"y"});
  B::attrInts(n, "strides", {2});
  B::attrInts(n, "output_shape", {10});
  b.output("y", {1, 2, 10});
  expectImports(b, R"(graph m(%x: f32[1,2,5], %w: param f32[2,2,3]) {
  %y = conv_transpose(%x, %w) {stride = 2, padding = 1, output_padding = 1}
  return %y
})");
}

TEST_F(OnnxOps, GemmTransBIsLinear) {
  B b;
  b.input("x", {4, 8});
  b.ramp("weight", {5, 8});
  b.ramp("bias", {5});
  auto &n = b.node("Gemm", {"x", "weight", "bias"}, {"y"});
  B::attrInt(n, "transB", 1);
  B::attrFloat(n, "alpha", 1.0f);
  B::attrFloat(n, "beta", 1.0f);
  b.output("y", {4, 5});
  expectImports(b, R"(graph m(%x: f32[4,8], %weight: param f32[5,8], %bias: param f32[5]) {
  %y = linear(%x, %weight, %bias)
  return %y
})");
}

TEST_F(OnnxOps, GemmConstantBTransposedAndScaled) {
  // alpha and beta scale the constants; B [K, N] is transposed into linear's [N, K].
  B b;
  b.input("x", {3, 4});
  b.weight("B", {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  b.weight("C", {1, 2}, {0.5f, -1});
  auto &n = b.node("Gemm", {"x", "B", "C"}, {"y"});
  B::attrFloat(n, "alpha", 2.0f);
  B::attrFloat(n, "beta", 0.5f);
  b.output("y");
  OnnxModel m = import(b);
  EXPECT_EQ(text(m.graph), text(sir(R"(graph m(%x: f32[3,4], %B: param f32[2,4], %C: param f32[2]) {
  %y = linear(%x, %B, %C)
  return %y
})")));
  ASSERT_EQ(m.weights.count("B"), 1u);
  EXPECT_EQ(m.weights["B"].data, (std::vector<float>{2, 6, 10, 14, 4, 8, 12, 16}));
  EXPECT_EQ(m.weights["C"].data, (std::vector<float>{0.25f, -0.5f}));
}

TEST_F(OnnxOps, GemmWithFullCIsLinearPlusAdd) {
  B b;
  b.input("x", {3, 4});
  b.input("c", {3, 2});
  b.ramp("w", {2, 4});
  auto &n = b.node("Gemm", {"x", "w", "c"}, {"y"});
  B::attrInt(n, "transB", 1);
  B::attrFloat(n, "beta", 2.0f);
  b.output("y");
  expectImports(b, R"(graph m(%x: f32[3,4], %c: f32[3,2], %w: param f32[2,4]) {
  %y_gemm = linear(%x, %w)
  %y_beta = mul(%c, 2.0)
  %y = add(%y_gemm, %y_beta)
  return %y
})");
}

TEST_F(OnnxOps, MatMulWithBatchBroadcast) {
  B b;
  b.input("a", {2, 3, 4, 5});
  b.ramp("w", {3, 5, 6});
  b.node("MatMul", {"a", "w"}, {"y"});
  b.output("y", {2, 3, 4, 6});
  expectImports(b, R"(graph m(%a: f32[2,3,4,5], %w: param f32[3,5,6]) {
  %y = matmul(%a, %w)
  return %y
})");
}

TEST_F(OnnxOps, UnaryActivations) {
  B b(20);
  b.input("x", {3, 7});
  const char *ops[] = {"Relu", "Sigmoid", "Tanh", "Erf", "Neg", "Softplus", "HardSwish", "Mish"};
  std::string prev = "x";
  for (const char *op : ops) {
    std::string out = std::string("o_") + op;
    b.node(op, {prev}, {out});
    prev = out;
  }
  b.output(prev);
  expectImports(b, R"(graph m(%x: f32[3,7]) {
  %o_Relu = relu(%x)
  %o_Sigmoid = sigmoid(%o_Relu)
  %o_Tanh = tanh(%o_Sigmoid)
  %o_Erf = erf(%o_Tanh)
  %o_Neg = neg(%o_Erf)
  %o_Softplus = softplus(%o_Neg)
  %o_HardSwish = hardswish(%o_Softplus)
  %o_Mish = mish(%o_HardSwish)
  return %o_Mish
})");
}

TEST_F(OnnxOps, UnaryMathOnPositiveValues) {
  B b;
  b.input("x", {3, 7});
  b.node("Abs", {"x"}, {"a"});
  b.constant("half", {0.5f});
  b.node("Add", {"a", "half"}, {"p"});
  b.node("Log", {"p"}, {"l"});
  b.node("Sqrt", {"p"}, {"s"});
  b.node("Exp", {"l"}, {"e"});
  b.node("Reciprocal", {"s"}, {"r"});
  b.node("Sub", {"e", "r"}, {"o"});
  b.output("o");
  expectImports(b, R"(graph m(%x: f32[3,7]) {
  %a = abs(%x)
  %p = add(%a, 0.5)
  %l = log(%p)
  %s = sqrt(%p)
  %e = exp(%l)
  %r = div(1.0, %s)
  %o = sub(%e, %r)
  return %o
})");
}

TEST_F(OnnxOps, ParameterisedActivations) {
  B b(20);
  b.input("x", {3, 7});
  auto &g = b.node("Gelu", {"x"}, {"g"});
  B::attrString(g, "approximate", "tanh");
  b.node("Gelu", {"g"}, {"g2"});
  auto &l = b.node("LeakyRelu", {"g2"}, {"l"});
  B::attrFloat(l, "alpha", 0.2f);
  b.node("LeakyRelu", {"l"}, {"l2"});
  auto &e = b.node("Elu", {"l2"}, {"e"});
  B::attrFloat(e, "alpha", 0.5f);
  auto &h = b.node("HardSigmoid", {"e"}, {"h"});
  B::attrFloat(h, "alpha", float(1.0 / 6));
  B::attrFloat(h, "beta", 0.5f);
  b.node("HardSigmoid", {"h"}, {"h2"}); // ONNX's own defaults: alpha 0.2
  b.output("h2");
  expectImports(b, R"(graph m(%x: f32[3,7]) {
  %g = gelu(%x) {approximate = "tanh"}
  %g2 = gelu(%g)
  %l = leaky_relu(%g2) {negative_slope = 0.2}
  %l2 = leaky_relu(%l)
  %e = elu(%l2) {alpha = 0.5}
  %h = hardsigmoid(%e)
  %h2_alpha = mul(%h, 0.2)
  %h2_beta = add(%h2_alpha, 0.5)
  %h2 = clamp(%h2_beta) {min = 0.0, max = 1.0}
  return %h2
})");
}

TEST_F(OnnxOps, ClipAndPow) {
  B b;
  b.input("x", {4, 5});
  b.constant("lo", {-0.5f});
  b.constant("hi", {1.5f});
  b.node("Clip", {"x", "lo", "hi"}, {"c"});
  b.node("Clip", {"c", "", "hi"}, {"c2"});
  b.constant("two", {2.0f});
  b.constant("three", {3.0f});
  b.node("Pow", {"c2", "two"}, {"sq"});
  b.node("Pow", {"sq", "three"}, {"cube"});
  b.output("cube");
  expectImports(b, R"(graph m(%x: f32[4,5]) {
  %c = clamp(%x) {min = -0.5, max = 1.5}
  %c2 = clamp(%c) {max = 1.5}
  %sq = mul(%c2, %c2)
  %cube_square = mul(%sq, %sq)
  %cube = mul(%cube_square, %sq)
  return %cube
})");
}

TEST_F(OnnxOps, BinaryOpsWithNumbersParamsAndInputs) {
  B b;
  b.input("x", {2, 3, 4, 4});
  b.input("z", {2, 3, 4, 4});
  b.ramp("scale", {3, 1, 1});
  b.constant("k", {2.0f}, {1});
  b.node("Mul", {"x", "scale"}, {"a"});
  b.node("Div", {"a", "k"}, {"d"});
  b.node("Sub", {"k", "d"}, {"s"});
  b.node("Add", {"s", "z"}, {"t"});
  b.node("Max", {"t", "z", "k"}, {"mx"});
  b.node("Min", {"mx", "x"}, {"mn"});
  b.output("mn");
  expectImports(b, R"(graph m(%x: f32[2,3,4,4], %z: f32[2,3,4,4], %scale: param f32[3,1,1]) {
  %a = mul(%x, %scale)
  %d = div(%a, 2.0)
  %s = sub(2.0, %d)
  %t = add(%s, %z)
  %mx_partial = maximum(%t, %z)
  %mx = maximum(%mx_partial, 2.0)
  %mn = minimum(%mx, %x)
  return %mn
})");
}

TEST_F(OnnxOps, ReductionsWithAxesInputsAndAttributes) {
  B b(18);
  b.input("x", {2, 3, 4, 5});
  b.ints("ax1", {1}, {1});
  b.ints("ax23", {2}, {-2, -1});
  b.node("ReduceSum", {"x", "ax1"}, {"s"});
  auto &mean = b.node("ReduceMean", {"x", "ax23"}, {"m"});
  B::attrInt(mean, "keepdims", 0);
  b.node("ReduceMax", {"x", "ax1"}, {"mx"});
  auto &mn = b.node("ReduceMin", {"x"}, {"mn"});
  B::attrInt(mn, "keepdims", 0);
  b.node("ReduceLogSumExp", {"x", "ax23"}, {"l"});
  for (const char *o : {"s", "m", "mx", "mn", "l"})
    b.output(o);
  expectImports(b, R"(graph m(%x: f32[2,3,4,5]) {
  %s = sum(%x) {dims = [1], keepdim = true}
  %m = mean(%x) {dims = [-2, -1]}
  %mx = max(%x) {dims = [1], keepdim = true}
  %mn = min(%x) {dims = [0, 1, 2, 3]}
  %l = logsumexp(%x) {dims = [-2, -1], keepdim = true}
  return %s, %m, %mx, %mn, %l
})");
}

TEST_F(OnnxOps, ReduceMeanAxesAttributeBeforeOpset18) {
  B b(13);
  b.input("x", {2, 3, 4});
  auto &n = b.node("ReduceMean", {"x"}, {"m"});
  B::attrInts(n, "axes", {1});
  b.output("m");
  expectImports(b, R"(graph m(%x: f32[2,3,4]) {
  %m = mean(%x) {dims = [1], keepdim = true}
  return %m
})");
}

TEST_F(OnnxOps, SoftmaxAndLogSoftmax) {
  B b;
  b.input("x", {2, 3, 4});
  auto &s = b.node("Softmax", {"x"}, {"p"});
  B::attrInt(s, "axis", 1);
  b.node("LogSoftmax", {"p"}, {"l"});
  b.output("l");
  expectImports(b, R"(graph m(%x: f32[2,3,4]) {
  %p = softmax(%x) {dim = 1}
  %l = log_softmax(%p) {dim = -1}
  return %l
})");
}

TEST_F(OnnxOps, BatchAndInstanceNormalization) {
  B b;
  b.input("x", {2, 3, 4, 4});
  b.ramp("gamma", {3}, 0.9f, 0.1f);
  b.ramp("beta", {3});
  b.ramp("mean", {3});
  b.weight("var", {3}, {0.5f, 1.0f, 1.5f});
  b.weight("ones", {3}, {1, 1, 1});
  b.weight("zeros", {3}, {0, 0, 0});
  auto &bn = b.node("BatchNormalization", {"x", "gamma", "beta", "mean", "var"}, {"n"});
  B::attrFloat(bn, "epsilon", 1e-3f);
  B::attrInt(bn, "training_mode", 0);
  b.node("InstanceNormalization", {"n", "gamma", "beta"}, {"i"});
  b.node("InstanceNormalization", {"i", "ones", "zeros"}, {"u"});
  b.output("u");
  expectImports(b, R"(graph m(%x: f32[2,3,4,4], %mean: param f32[3], %var: param f32[3],
                            %gamma: param f32[3], %beta: param f32[3]) {
  %n = batch_norm(%x, %mean, %var, %gamma, %beta) {eps = 0.001}
  %i = instance_norm(%n, %gamma, %beta)
  %u = instance_norm(%i)
  return %u
})");
}

TEST_F(OnnxOps, LayerNormalizationOverTrailingDims) {
  B b(17);
  b.input("x", {2, 3, 4, 5});
  b.ramp("g", {4, 5}, 0.8f, 0.01f);
  b.ramp("bb", {4, 5});
  auto &n = b.node("LayerNormalization", {"x", "g", "bb"}, {"y", "", ""});
  B::attrInt(n, "axis", -2);
  B::attrFloat(n, "epsilon", 1e-6f);
  b.ramp("g1", {5}, 0.8f, 0.01f);
  b.node("LayerNormalization", {"y", "g1"}, {"z"});
  b.output("z");
  expectImports(b, R"(graph m(%x: f32[2,3,4,5], %g: param f32[4,5], %bb: param f32[4,5],
                            %g1: param f32[5], %g1_zero_bias: param f32[5]) {
  %y = layer_norm(%x, %g, %bb) {normalized_shape = [4, 5], eps = 1e-06}
  %z = layer_norm(%y, %g1, %g1_zero_bias) {normalized_shape = [5]}
  return %z
})");
}

TEST_F(OnnxOps, GroupNormalizationPerGroupAtOpset18) {
  B b(18);
  b.input("x", {2, 6, 3, 3});
  b.weight("s", {3}, {0.5f, 1.0f, 2.0f});
  b.weight("t", {3}, {0.1f, 0.2f, 0.3f});
  auto &n = b.node("GroupNormalization", {"x", "s", "t"}, {"y"});
  B::attrInt(n, "num_groups", 3);
  b.output("y");
  OnnxModel m = import(b);
  EXPECT_EQ(text(m.graph),
            text(sir(R"(graph m(%x: f32[2,6,3,3], %s: param f32[6], %t: param f32[6]) {
  %y = group_norm(%x, %s, %t) {groups = 3}
  return %y
})")));
  EXPECT_EQ(m.weights["s"].data, (std::vector<float>{0.5f, 0.5f, 1, 1, 2, 2}));
  EXPECT_EQ(m.weights["t"].data, (std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f, 0.3f, 0.3f}));
}

TEST_F(OnnxOps, GroupNormalizationPerChannelAtOpset21) {
  B b(21);
  b.input("x", {2, 6, 3, 3});
  b.ramp("s", {6}, 0.7f, 0.1f);
  b.ramp("t", {6});
  auto &n = b.node("GroupNormalization", {"x", "s", "t"}, {"y"});
  B::attrInt(n, "num_groups", 2);
  B::attrFloat(n, "epsilon", 1e-5f);
  b.output("y");
  expectImports(b, R"(graph m(%x: f32[2,6,3,3], %s: param f32[6], %t: param f32[6]) {
  %y = group_norm(%x, %s, %t) {groups = 2}
  return %y
})");
}

TEST_F(OnnxOps, MaxAndAveragePools) {
  B b;
  b.input("x", {2, 3, 9, 9});
  auto &mp = b.node("MaxPool", {"x"}, {"p", "idx"});
  B::attrInts(mp, "kernel_shape", {3, 3});
  B::attrInts(mp, "strides", {2, 2});
  B::attrInts(mp, "pads", {1, 1, 1, 1});
  B::attrInt(mp, "ceil_mode", 1);
  auto &ap = b.node("AveragePool", {"p"}, {"a"});
  B::attrInts(ap, "kernel_shape", {2, 2});
  B::attrInts(ap, "strides", {2, 2});
  auto &ap2 = b.node("AveragePool", {"x"}, {"a2"});
  B::attrInts(ap2, "kernel_shape", {3, 3});
  B::attrInts(ap2, "pads", {1, 1, 1, 1});
  B::attrInt(ap2, "count_include_pad", 1);
  b.node("GlobalAveragePool", {"a2"}, {"g"});
  b.node("GlobalMaxPool", {"a"}, {"gm"});
  b.output("g");
  b.output("gm");
  expectImports(b, R"(graph m(%x: f32[2,3,9,9]) {
  %p = max_pool(%x) {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true}
  %a = avg_pool(%p) {kernel_size = 2, count_include_pad = false}
  %a2 = avg_pool(%x) {kernel_size = 3, stride = 1, padding = 1}
  %g = mean(%a2) {dims = [2, 3], keepdim = true}
  %gm = max(%a) {dims = [2, 3], keepdim = true}
  return %g, %gm
})");
}

TEST_F(OnnxOps, PoolWithLargerEndPadIsCeilMode) {
  // The TorchScript exporter's old form of ceil_mode: an end pad that adds the last window.
  B b;
  b.input("x", {1, 2, 8});
  auto &mp = b.node("MaxPool", {"x"}, {"p"});
  B::attrInts(mp, "kernel_shape", {3});
  B::attrInts(mp, "strides", {2});
  B::attrInts(mp, "pads", {0, 1});
  b.output("p", {1, 2, 4});
  expectImports(b, R"(graph m(%x: f32[1,2,8]) {
  %p = max_pool(%x) {kernel_size = 3, stride = 2, ceil_mode = true}
  return %p
})");
}

TEST_F(OnnxOps, ViewsOfComputedTensors) {
  B b;
  b.input("x", {2, 3, 4});
  b.node("Relu", {"x"}, {"r"});
  b.constantInts("shape", {0, -1});
  b.node("Reshape", {"r", "shape"}, {"flat"});
  b.constantInts("axes", {1, 3});
  b.node("Unsqueeze", {"flat", "axes"}, {"u"});
  auto &t = b.node("Transpose", {"u"}, {"t"});
  B::attrInts(t, "perm", {0, 3, 2, 1});
  b.node("Squeeze", {"t"}, {"sq"});
  auto &f = b.node("Flatten", {"sq"}, {"f"});
  B::attrInt(f, "axis", 0);
  b.node("Identity", {"f"}, {"i"});
  b.node("Dropout", {"i"}, {"dr"});
  auto &cast = b.node("Cast", {"dr"}, {"c"});
  B::attrInt(cast, "to", onnx::TensorProto::FLOAT);
  b.node("Tanh", {"c"}, {"o"});
  b.output("o");
  expectImports(b, R"(graph m(%x: f32[2,3,4]) {
  %r = relu(%x)
  %flat = reshape(%r) {shape = [2, 12]}
  %u = reshape(%flat) {shape = [2, 1, 12, 1]}
  %sq = reshape(%u) {shape = [2, 12]}
  %f = reshape(%sq) {shape = [1, 24]}
  %o = tanh(%f)
  return %o
})");
}

TEST_F(OnnxOps, ShapeConstantsFoldThroughTransposeTileAndReversedSlice) {
  // [12, 2] -> Unsqueeze -> [[12], [2]] -> Transpose -> [[12, 2]] -> Reshape -> [12, 2] ->
  // Tile x2 -> [12, 2, 12, 2] -> Slice 2 down to 1 -> [12, 2]: the reshape's target.
  B b;
  b.input("x", {2, 3, 4});
  b.constantInts("a", {12, 2});
  b.constantInts("ax1", {1});
  b.node("Unsqueeze", {"a", "ax1"}, {"col"});
  auto &t = b.node("Transpose", {"col"}, {"row"});
  B::attrInts(t, "perm", {1, 0});
  b.constantInts("flat", {-1});
  b.node("Reshape", {"row", "flat"}, {"pair"});
  b.constantInts("twice", {2});
  b.node("Tile", {"pair", "twice"}, {"four"});
  b.constantInts("st", {2});
  b.constantInts("en", {0});
  b.constantInts("axes", {0});
  b.constantInts("back", {-1});
  b.node("Slice", {"four", "st", "en", "axes", "back"}, {"target"});
  b.node("Reshape", {"x", "target"}, {"o"});
  b.output("o");
  expectImports(b, R"(graph m(%x: f32[2,3,4]) {
  %o = reshape(%x) {shape = [12, 2]}
  return %o
})");
}

TEST_F(OnnxOps, ExternalDataWeights) {
  B b;
  b.input("x", {2, 8});
  b.ramp("w", {16, 8});
  b.ramp("b", {16});
  auto &n = b.node("Gemm", {"x", "w", "b"}, {"y"});
  B::attrInt(n, "transB", 1);
  b.output("y");
  b.write(path("ext.onnx"));
  OnnxModel inline_ = import(b, "inline.onnx");
  OnnxModel external = import(b, "ext.onnx", /*external=*/true);
  EXPECT_TRUE(llvm::sys::fs::exists(path("ext.onnx.data")));
  EXPECT_EQ(text(inline_.graph).substr(text(inline_.graph).find('(')),
            text(external.graph).substr(text(external.graph).find('(')));
  ASSERT_EQ(external.weights.size(), 2u);
  EXPECT_EQ(external.weights["w"].data, inline_.weights["w"].data);
  EXPECT_EQ(external.weights["b"].data, inline_.weights["b"].data);
}

TEST_F(OnnxOps, DeadNodesAndUnusedInitializersAreIgnored) {
  B b;
  b.input("x", {2, 3});
  b.ramp("unused", {7});
  b.node("LSTM", {"x"}, {"never"}); // unsupported, but nothing reads it
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  OnnxModel m = import(b);
  EXPECT_EQ(text(m.graph), text(sir(R"(graph m(%x: f32[2,3]) {
  %y = relu(%x)
  return %y
})")));
  EXPECT_TRUE(m.weights.empty());
  EXPECT_EQ(m.opset, 20);
  EXPECT_EQ(m.producer, "pytorch 2.11.0");
}

TEST_F(OnnxOps, NamesAreMadeValidAndOriginsNameTheNodes) {
  B b;
  b.input("input.1", {2, 3});
  b.ramp("onnx::Mul_7", {3});
  b.node("Mul", {"input.1", "onnx::Mul_7"}, {"/block/Mul_output_0"}, "/block/Mul");
  b.node("Relu", {"/block/Mul_output_0"}, {"out:0"}).clear_name();
  b.output("out:0");
  OnnxModel m = import(b, "my-model.onnx");
  EXPECT_EQ(printGraph(m.graph),
            "graph my_model(%input.1: f32[2,3], %onnx__Mul_7: param f32[3]) {\n"
            "  %_block_Mul_output_0 = mul(%input.1, %onnx__Mul_7) : f32[2,3]  "
            "# node '/block/Mul' (Mul)\n"
            "  %out_0 = relu(%_block_Mul_output_0) : f32[2,3]  # node #1 (Relu)\n"
            "  return %out_0\n}\n");
  EXPECT_EQ(m.weights.count("onnx__Mul_7"), 1u);
}

} // namespace
