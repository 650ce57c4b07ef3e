//===- tests/ir/BuilderTest.cpp - the C++ GraphBuilder -----------------------------===//
//
// The five workloads built in C++ infer the output shapes of ../shared/workloads/README.md;
// every op of the catalog has a builder method (checked against the op table); attributes
// equal to their defaults are not stored; build() reports bad graphs with the op's name.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace sinter;

namespace {

/// The type of the graph's only result, or the build error.
std::string resultOf(const GraphBuilder &b) {
  llvm::Expected<Graph> g = b.build();
  if (!g)
    return llvm::toString(g.takeError());
  EXPECT_EQ(g->results.size(), 1u);
  return g->type(g->results[0]).str();
}

// ---- The five workloads ------------------------------------------------------------------------

TEST(BuilderWorkloads, S0ConvTranspose3dReluGroupNorm) {
  GraphBuilder b("convt3d_relu_gn");
  Val x = b.input("x", {16, 64, 32, 32, 32});
  Val w = b.param("w", {64, 128, 3, 3, 3});
  Val gamma = b.param("gamma", {128}), beta = b.param("beta", {128});
  Val y = b.conv_transpose(x, w, {.stride = {1}, .padding = {0}, .groups = 1}).name("y");
  Val r = b.relu(y).name("r");
  b.output(b.group_norm(r, gamma, beta, {.groups = 8, .eps = 1e-5}).name("o"));
  EXPECT_EQ(resultOf(b), "f32[16,128,34,34,34]");

  llvm::Expected<Graph> g = b.build();
  ASSERT_TRUE(bool(g));
  ASSERT_EQ(g->ops.size(), 3u);
  // stride = 1, padding = 0 and eps = 1e-5 are the defaults: nothing stored but groups.
  EXPECT_TRUE(g->ops[0].attrs.empty());
  ASSERT_EQ(g->ops[2].attrs.size(), 1u);
  EXPECT_EQ(g->ops[2].attrs[0], (Attr{"groups", int64_t(8)}));
  EXPECT_EQ(g->values[g->results[0]].name, "o");
  EXPECT_EQ(g->args.size(), 4u);
  EXPECT_EQ(g->values[g->args[1]].kind, ValueKind::Param);
  EXPECT_EQ(g->values[g->args[0]].kind, ValueKind::Input);
}

TEST(BuilderWorkloads, S1Conv3dGroupNormMean) {
  GraphBuilder b("conv3d_gn_mean");
  Val x = b.input("x", {128, 3, 24, 32, 32});
  Val w = b.param("w", {24, 3, 3, 3, 3}), bias = b.param("b", {24});
  Val gamma = b.param("gamma", {24}), beta = b.param("beta", {24});
  Val n = b.group_norm(b.conv(x, w, bias), gamma, beta, {.groups = 8});
  b.output(b.mean(n, {.dims = {1, 2, 3, 4}}));
  EXPECT_EQ(resultOf(b), "f32[128]");
}

TEST(BuilderWorkloads, S2ConvTranspose2dGeluGroupNorm) {
  GraphBuilder b("convt2d_gelu_gn");
  Val x = b.input("x", {128, 64, 256, 256});
  Val w = b.param("w", {64, 8, 3, 3}), bias = b.param("b", {64});
  Val gamma = b.param("gamma", {64}), beta = b.param("beta", {64});
  Val y = b.conv_transpose(x, w, bias, {.stride = 1, .groups = 8});
  b.output(b.group_norm(b.gelu(y), gamma, beta, {.groups = 8, .eps = 1e-5}));
  EXPECT_EQ(resultOf(b), "f32[128,64,258,258]");
}

TEST(BuilderWorkloads, S3GemmGroupNormMinBias) {
  GraphBuilder b("gemm_gn_min_bias");
  Val x = b.input("x", {1024, 8192});
  Val w = b.param("w", {8192, 8192}), bias = b.param("b", {8192});
  Val gamma = b.param("gamma", {8192}), beta = b.param("beta", {8192});
  Val addend = b.param("bias", {1, 8192, 1, 1});
  Val n = b.group_norm(b.linear(x, w, bias), gamma, beta, {.groups = 512});
  Val m = b.min(n, {.dims = {1}, .keepdim = true});
  EXPECT_EQ(m.type()->str(), "f32[1024,1]");
  b.output(m + addend);
  EXPECT_EQ(resultOf(b), "f32[1,8192,1024,1]");
}

TEST(BuilderWorkloads, S4GroupedConvTranspose3d) {
  GraphBuilder b("convt3d_grouped");
  Val x = b.input("x", {4, 32, 32, 64, 128});
  Val w = b.param("w", {32, 8, 3, 3, 3});
  b.output(b.conv_transpose(x, w, {.stride = {2}, .padding = {1}, .groups = 4}));
  EXPECT_EQ(resultOf(b), "f32[4,32,63,127,255]");
  llvm::Expected<Graph> g = b.build();
  ASSERT_TRUE(bool(g));
  const Op &op = g->ops[0];
  ASSERT_EQ(op.attrs.size(), 3u);
  // One value given: stored as an int, in schema order.
  EXPECT_EQ(op.attrs[0], (Attr{"stride", int64_t(2)}));
  EXPECT_EQ(op.attrs[1], (Attr{"padding", int64_t(1)}));
  EXPECT_EQ(op.attrs[2], (Attr{"groups", int64_t(4)}));
}

// ---- Every op has a method -------------------------------------------------------------------

/// Builds one `kind` op on x = f32[2,4,6,6] and suitable params with the builder's typed
/// method, and sets `expected` to its result type worked out by hand. The switch has no
/// default, so an op added to ir/Ops.def without a case here is a -Wswitch warning.
Val buildOne(GraphBuilder &b, OpKind kind, std::string &expected) {
  expected = "f32[2,4,6,6]";
  Val x = b.input("x", {2, 4, 6, 6});
  Val c = b.param("c", {4});
  switch (kind) {
  case OpKind::Conv:
    expected = "f32[2,8,4,4]";
    return b.conv(x, b.param("w", {8, 2, 3, 3}), b.param("bias", {8}), {.groups = 2});
  case OpKind::ConvTranspose:
    expected = "f32[2,3,14,14]"; // (6-1)*2 + 2 + 1 + 1
    return b.conv_transpose(x, b.param("w", {4, 3, 3, 3}), {.stride = 2, .output_padding = 1});
  case OpKind::Linear:
    expected = "f32[2,4,6,5]";
    return b.linear(x, b.param("w", {5, 6}));
  case OpKind::Matmul:
    expected = "f32[2,4,6,3]";
    return b.matmul(x, b.param("w", {6, 3}));
  case OpKind::Relu:
    return b.relu(x);
  case OpKind::Sigmoid:
    return b.sigmoid(x);
  case OpKind::Tanh:
    return b.tanh(x);
  case OpKind::Silu:
    return b.silu(x);
  case OpKind::Hardswish:
    return b.hardswish(x);
  case OpKind::Hardsigmoid:
    return b.hardsigmoid(x);
  case OpKind::Mish:
    return b.mish(x);
  case OpKind::Exp:
    return b.exp(x);
  case OpKind::Log:
    return b.log(x);
  case OpKind::Abs:
    return b.abs(x);
  case OpKind::Neg:
    return -x;
  case OpKind::Sqrt:
    return b.sqrt(x);
  case OpKind::Rsqrt:
    return b.rsqrt(x);
  case OpKind::Erf:
    return b.erf(x);
  case OpKind::Gelu:
    return b.gelu(x, {.approximate = GeluApproximate::Tanh});
  case OpKind::Hardtanh:
    return b.hardtanh(x, {.min_val = -2, .max_val = 2});
  case OpKind::LeakyRelu:
    return b.leaky_relu(x, {.negative_slope = 0.2});
  case OpKind::Softplus:
    return b.softplus(x, {.beta = 2});
  case OpKind::Elu:
    return b.elu(x, {.alpha = 0.5});
  case OpKind::Clamp:
    return b.clamp(x, {.max = 6});
  case OpKind::Add:
    return x + 1.0;
  case OpKind::Sub:
    return 1.0 - x;
  case OpKind::Mul:
    return x * b.reshape(c, {4, 1, 1});
  case OpKind::Div:
    return x / 3.0;
  case OpKind::Maximum:
    return b.maximum(x, 0.0);
  case OpKind::Minimum:
    return b.minimum(0.0, x);
  case OpKind::Sum:
    expected = "f32[2,6,6]";
    return b.sum(x, {.dims = {1}});
  case OpKind::Mean:
    expected = "f32[2,4,1,1]";
    return b.mean(x, {.dims = {-1, -2}, .keepdim = true});
  case OpKind::Max:
    expected = "f32[4,6,6]";
    return b.max(x, {.dims = {0}});
  case OpKind::Min:
    expected = "f32[2,4,6]";
    return b.min(x, {.dims = {3}});
  case OpKind::Logsumexp:
    expected = "f32[2,6]";
    return b.logsumexp(x, {.dims = {1, 2}});
  case OpKind::Softmax:
    return b.softmax(x, -1);
  case OpKind::LogSoftmax:
    return b.log_softmax(x, 1);
  case OpKind::GroupNorm:
    return b.group_norm(x, c, c, {.groups = 2, .eps = 1e-3});
  case OpKind::LayerNorm:
    return b.layer_norm(x, {.normalized_shape = {6, 6}});
  case OpKind::BatchNorm:
    return b.batch_norm(x, c, c, c, c);
  case OpKind::InstanceNorm:
    return b.instance_norm(x, c, c);
  case OpKind::MaxPool:
    expected = "f32[2,4,4,4]"; // floor((6 + 2 - 2 - 1 + 1)/2) + 1 = 4, start 6 < 7
    return b.max_pool(x, {.kernel_size = 3, .stride = 2, .padding = 1, .ceil_mode = true});
  case OpKind::AvgPool:
    expected = "f32[2,4,3,2]";
    return b.avg_pool(x, {.kernel_size = {2, 3}, .count_include_pad = false});
  case OpKind::Reshape:
    expected = "f32[8,36]";
    return b.reshape(x, {8, -1});
  case OpKind::Flatten:
    expected = "f32[2,144]";
    return b.flatten(x, {.start_dim = 1});
  case OpKind::Dropout:
    return b.dropout(x, 0.1);
  }
  return Val();
}

TEST(BuilderOps, EveryOpOfTheTableHasAMethod) {
  for (unsigned i = 0; i < kNumOps; ++i) {
    OpKind kind = OpKind(i);
    GraphBuilder b("one");
    std::string expected;
    Val v = buildOne(b, kind, expected);
    ASSERT_NE(v.builder(), nullptr) << opName(kind).str();
    b.output(v);
    llvm::Expected<Graph> g = b.build();
    ASSERT_TRUE(bool(g)) << opName(kind).str() << ": " << llvm::toString(g.takeError());
    EXPECT_EQ(g->ops.back().kind, kind) << opName(kind).str();
    EXPECT_EQ(g->type(g->results[0]).str(), expected) << opName(kind).str();
  }
}

TEST(BuilderOps, OptionDefaultsMatchTheOpTable) {
  // Options left alone store nothing, which holds only if their C++ defaults are the table's.
  GraphBuilder b("defaults");
  Val x = b.input("x", {2, 4, 6, 6});
  Val c = b.param("c", {4});
  b.output(b.conv(x, b.param("w", {4, 4, 1, 1})));
  b.output(b.conv_transpose(x, b.param("wt", {4, 4, 1, 1})));
  b.output(b.gelu(x));
  b.output(b.hardtanh(x));
  b.output(b.leaky_relu(x));
  b.output(b.softplus(x));
  b.output(b.elu(x));
  b.output(b.group_norm(x, {.groups = 2}));
  b.output(b.layer_norm(x, {.normalized_shape = {6}}));
  b.output(b.batch_norm(x, c, c));
  b.output(b.instance_norm(x));
  b.output(b.max_pool(x, {.kernel_size = 2}));
  b.output(b.avg_pool(x, {.kernel_size = 2}));
  b.output(b.flatten(x));
  b.output(b.dropout(x));
  b.output(b.sum(x, {.dims = {0}}));
  llvm::Expected<Graph> g = b.build();
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  for (const Op &op : g->ops) {
    size_t required = 0;
    for (const AttrSpec &spec : op.info().attrs)
      required += spec.required;
    EXPECT_EQ(op.attrs.size(), required) << op.name().str();
  }
}

TEST(BuilderOps, SpatialOptionsAndDefaultsStoredAsWritten) {
  GraphBuilder b("spatial");
  Val x = b.input("x", {1, 2, 9, 9, 9});
  Val w = b.param("w", {2, 2, 3, 3, 3});
  Val y = b.conv(x, w, {.stride = {1, 2, 2}, .padding = {1, 1, 1}, .dilation = 1});
  Val p = b.max_pool(y, {.kernel_size = {2}, .stride = {2, 2, 2}});
  Val q = b.max_pool(y, {.kernel_size = 2, .stride = 1});
  b.output(p);
  b.output(q);
  b.output(b.clamp(x, {.min = -std::numeric_limits<double>::infinity()}));
  llvm::Expected<Graph> g = b.build();
  ASSERT_TRUE(bool(g)) << llvm::toString(g.takeError());
  // Several values are stored as a list; dilation = 1 is the default and is dropped.
  EXPECT_EQ(g->ops[0].attrs.size(), 2u);
  EXPECT_EQ(g->ops[0].attrs[0], (Attr{"stride", IntList{1, 2, 2}}));
  EXPECT_EQ(g->ops[0].attrs[1], (Attr{"padding", IntList{1, 1, 1}}));
  EXPECT_EQ(g->type(y.id()).str(), "f32[1,2,9,5,5]");
  // A pool stride equal to kernel_size is its default.
  ASSERT_EQ(g->ops[1].attrs.size(), 1u);
  EXPECT_EQ(g->ops[1].attrs[0], (Attr{"kernel_size", int64_t(2)}));
  ASSERT_EQ(g->ops[2].attrs.size(), 2u);
  EXPECT_EQ(g->ops[2].attrs[1], (Attr{"stride", int64_t(1)}));
  // A clamp bound given explicitly is kept even at its default value.
  ASSERT_EQ(g->ops[3].attrs.size(), 1u);
  EXPECT_EQ(g->ops[3].attrs[0].name, "min");
}

TEST(BuilderOps, NamesAndTypes) {
  GraphBuilder b("names");
  Val x = b.input("x", {3, 4});
  Val t0 = b.relu(x).name("t0");
  Val s = b.sigmoid(t0);
  Val u = b.tanh(s);
  b.output(u);
  EXPECT_EQ(s.type()->str(), "f32[3,4]");
  llvm::Expected<Graph> g = b.build();
  ASSERT_TRUE(bool(g));
  // Unnamed results take t0, t1, ... skipping names the user took.
  EXPECT_EQ(g->values[s.id()].name, "t1");
  EXPECT_EQ(g->values[u.id()].name, "t2");
  // Types are known eagerly only while everything so far is valid.
  Val bad = b.add(x, b.input("y", {5}));
  EXPECT_FALSE(bad.type().has_value());
  EXPECT_FALSE(b.relu(bad).type().has_value());
  Val f16 = b.input("h", {2}, DType::F16);
  EXPECT_EQ(b.exp(f16).type()->str(), "f16[2]");
}

// ---- Errors ------------------------------------------------------------------------------------

TEST(BuilderErrors, ShapeErrorsNameTheOp) {
  GraphBuilder b("bad");
  Val x = b.input("x", {2, 128, 4});
  Val y = b.relu(x);
  Val z = b.sigmoid(y);
  Val w = b.exp(z);
  b.output(b.group_norm(w, {.groups = 7}));
  EXPECT_EQ(resultOf(b), "%t3: group_norm: groups=7 does not divide C=128");

  GraphBuilder c("bad_conv");
  Val cx = c.input("x", {1, 64, 8, 8});
  c.output(c.conv(cx, c.param("w", {8, 16, 3, 3}), {.groups = 2}).name("y"));
  EXPECT_EQ(resultOf(c), "%y: conv: x has 64 channels but w expects 32 (w[1]=16 times groups=2)");

  GraphBuilder d("bad_add");
  d.output(d.input("a", {2, 3}) + d.input("b", {4}));
  EXPECT_EQ(resultOf(d), "%t0: add: shapes [2,3] and [4] do not broadcast");
}

TEST(BuilderErrors, MissingRequiredOptions) {
  GraphBuilder b("missing");
  Val x = b.input("x", {2, 4, 6});
  b.output(b.group_norm(x, {}));
  EXPECT_EQ(resultOf(b), "%t0: group_norm: missing required attribute 'groups'");

  GraphBuilder c("missing_dims");
  c.output(c.mean(c.input("x", {2}), {}));
  EXPECT_EQ(resultOf(c), "%t0: mean: missing required attribute 'dims'");

  GraphBuilder d("no_bounds");
  d.output(d.clamp(d.input("x", {2}), {}));
  EXPECT_EQ(resultOf(d), "%t0: clamp: expected at least one of 'min' and 'max'");
}

TEST(BuilderErrors, GraphLevelMistakes) {
  GraphBuilder noOut("g");
  noOut.relu(noOut.input("x", {2}));
  EXPECT_EQ(resultOf(noOut), "graph g: no outputs (call GraphBuilder::output)");

  GraphBuilder dup("g");
  Val x = dup.input("x", {2});
  dup.output(dup.relu(x).name("x"));
  EXPECT_EQ(resultOf(dup), "%x: value name defined more than once");

  GraphBuilder badName("g");
  badName.output(badName.relu(badName.input("my x", {2})));
  EXPECT_EQ(resultOf(badName), "invalid value name 'my x' (expected [A-Za-z0-9_.]+)");

  GraphBuilder badGraph("2fast");
  badGraph.output(badGraph.relu(badGraph.input("x", {2})));
  EXPECT_EQ(resultOf(badGraph), "invalid graph name '2fast'");

  GraphBuilder zero("g");
  zero.output(zero.relu(zero.input("x", {2, 0})));
  EXPECT_EQ(resultOf(zero), "%x: dim 1 of f32[2,0] must be >= 1");

  GraphBuilder generic("g");
  Val gx = generic.input("x", {2});
  generic.output(generic.op(OpKind::Relu, {gx}, {Attr{"alpha", 1.0}}));
  EXPECT_EQ(resultOf(generic), "%t0: relu: unknown attribute 'alpha'");

  // The generic method keeps attributes in schema order, defaults included.
  GraphBuilder ordered("g");
  Val ox = ordered.input("x", {1, 1, 8});
  ordered.output(ordered.op(OpKind::MaxPool, {ox},
                            {Attr{"ceil_mode", false}, Attr{"kernel_size", int64_t(2)}}));
  llvm::Expected<Graph> og = ordered.build();
  ASSERT_TRUE(bool(og)) << llvm::toString(og.takeError());
  ASSERT_EQ(og->ops[0].attrs.size(), 2u);
  EXPECT_EQ(og->ops[0].attrs[0].name, "kernel_size");
  EXPECT_EQ(og->ops[0].attrs[1].name, "ceil_mode");
  EXPECT_EQ(og->type(og->results[0]).str(), "f32[1,1,4]");
}

} // namespace
