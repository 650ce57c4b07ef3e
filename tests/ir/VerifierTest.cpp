//===- tests/ir/VerifierTest.cpp - generic checks, elementwise ops, reductions, views ---===//
//
// What the verifier derives from the op table (operand counts, numbers as operands,
// attribute names, kinds and required ones, dtypes), the shapes of elementwise ops,
// reductions, softmax and views, and verifyGraph's SSA checks and error locations. Every
// expected shape is worked out by hand from the PyTorch function IR.md names.
// tests/ir/InferSpatialTest.cpp covers conv, pools, norms, linear and matmul.
//
//===--------------------------------------------------------------------------------===//
#include "InferTestUtil.h"

#include <gtest/gtest.h>

using namespace sinter;
using namespace sinter::testing;

namespace {

// ---- Generic checks derived from the op table ------------------------------------------

TEST(VerifierGeneric, OperandCounts) {
  EXPECT_EQ(infer(OpKind::Relu, {{2}, {2}}), "relu: expected 1 operand, got 2");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 1, 4}}), "conv: expected 2 or 3 operands, got 1");
  EXPECT_EQ(infer(OpKind::Add, {{2}}), "add: expected 2 operands, got 1");
  EXPECT_EQ(infer(OpKind::Matmul, {{2}, {2}, {2}}), "matmul: expected 2 operands, got 3");
  // Optional operands of norms are all-or-none.
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 4}, {4}}, {{"groups", I(2)}}),
            "group_norm: expected 1 or 3 operands (gamma and beta come together), got 2");
  EXPECT_EQ(infer(OpKind::LayerNorm, {{2, 4}, {4}}, {{"normalized_shape", L({4})}}),
            "layer_norm: expected 1 or 3 operands (gamma and beta come together), got 2");
  EXPECT_EQ(infer(OpKind::InstanceNorm, {{2, 4, 3}, {4}}),
            "instance_norm: expected 1 or 3 operands (gamma and beta come together), got 2");
  EXPECT_EQ(infer(OpKind::BatchNorm, {{2, 4}, {4}, {4}, {4}}),
            "batch_norm: expected 3 or 5 operands (gamma and beta come together), got 4");
  EXPECT_EQ(infer(OpKind::BatchNorm, {{2, 4}, {4}}),
            "batch_norm: expected 3 or 5 operands (gamma and beta come together), got 2");
}

TEST(VerifierGeneric, NumbersOnlyAsBinaryOperands) {
  TensorType x(DType::F32, {2, 3});
  EXPECT_EQ(outcome(oneOpGraph({x}, OpKind::Relu, {Arg::num(2)}, {})),
            "relu: operand 0 must be a tensor, got the number 2.0");
  EXPECT_EQ(outcome(oneOpGraph({x}, OpKind::Conv, {{0}, Arg::num(1.5)}, {})),
            "conv: operand 1 must be a tensor, got the number 1.5");
  EXPECT_EQ(outcome(oneOpGraph({x}, OpKind::Add, {Arg::num(1), Arg::num(2)}, {})),
            "add: expected at least one tensor operand, got only numbers");
  EXPECT_EQ(outcome(oneOpGraph({x}, OpKind::Sub, {Arg::num(1), {0}}, {})), "f32[2,3]");
  EXPECT_EQ(outcome(oneOpGraph({x}, OpKind::Div, {{0}, Arg::num(4)}, {})), "f32[2,3]");
}

TEST(VerifierGeneric, OperandDtypesMustAgree) {
  TensorType a(DType::F32, {2, 3}), b(DType::F16, {3});
  EXPECT_EQ(outcome(oneOpGraph({a, b}, OpKind::Add, {{0}, {1}}, {})),
            "add: operand dtypes f32 and f16 differ");
  TensorType x(DType::BF16, {2, 4, 3}), w(DType::F32, {4, 4, 1});
  EXPECT_EQ(outcome(oneOpGraph({x, w}, OpKind::Conv, {{0}, {1}}, {})),
            "conv: operand dtypes bf16 and f32 differ");
  // A number never changes the dtype, and non-f32 types flow through.
  TensorType h(DType::F16, {5});
  EXPECT_EQ(outcome(oneOpGraph({h}, OpKind::Mul, {Arg::num(2), {0}}, {})), "f16[5]");
  EXPECT_EQ(outcome(oneOpGraph({h}, OpKind::Sigmoid, {{0}}, {})), "f16[5]");
}

TEST(VerifierGeneric, AttributeNamesKindsAndRequired) {
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"strides", I(2)}}),
            "conv: unknown attribute 'strides'");
  EXPECT_EQ(infer(OpKind::Relu, {{2}}, {{"alpha", F(1)}}), "relu: unknown attribute 'alpha'");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"groups", I(1)}, {"groups", I(1)}}),
            "conv: attribute 'groups' given twice");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"groups", F(1.5)}}),
            "conv: attribute 'groups' must be an int, got 1.5");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"stride", S("x")}}),
            "conv: attribute 'stride' must be an int or a list of ints, got \"x\"");
  EXPECT_EQ(infer(OpKind::Sum, {{2, 3}}, {{"dims", L({0})}, {"keepdim", I(1)}}),
            "sum: attribute 'keepdim' must be a bool, got 1");
  EXPECT_EQ(infer(OpKind::Sum, {{2, 3}}, {{"dims", F(0.0)}}),
            "sum: attribute 'dims' must be a list of ints, got 0.0");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 4}}, {{"groups", I(2)}, {"eps", B(true)}}),
            "group_norm: attribute 'eps' must be a number, got true");
  EXPECT_EQ(infer(OpKind::Gelu, {{2}}, {{"approximate", S("fast")}}),
            "gelu: attribute 'approximate' must be one of \"none\" or \"tanh\", got \"fast\"");
  EXPECT_EQ(infer(OpKind::Gelu, {{2}}, {{"approximate", I(1)}}),
            "gelu: attribute 'approximate' must be one of \"none\" or \"tanh\", got 1");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 128}}),
            "group_norm: missing required attribute 'groups'");
  EXPECT_EQ(infer(OpKind::Softmax, {{2}}), "softmax: missing required attribute 'dim'");
  EXPECT_EQ(infer(OpKind::Sum, {{2}}), "sum: missing required attribute 'dims'");
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 4}}),
            "max_pool: missing required attribute 'kernel_size'");
  EXPECT_EQ(infer(OpKind::Reshape, {{4}}), "reshape: missing required attribute 'shape'");
  // An int where a float is expected is fine (IR text `eps = 1`).
  EXPECT_EQ(infer(OpKind::LeakyRelu, {{3}}, {{"negative_slope", I(1)}}), "f32[3]");
}

// ---- Elementwise ops ----------------------------------------------------------------------

TEST(VerifierElementwise, EveryUnaryOpKeepsTheType) {
  for (unsigned i = 0; i < kNumOps; ++i) {
    OpKind kind = OpKind(i);
    if (!isUnary(kind))
      continue;
    std::vector<Attr> attrs;
    if (kind == OpKind::Clamp)
      attrs.push_back({"min", F(0)});
    EXPECT_EQ(infer(kind, {{2, 3, 5}}, attrs), "f32[2,3,5]") << opName(kind).str();
    EXPECT_EQ(infer(kind, {{}}, attrs), "f32[]") << opName(kind).str();
  }
  EXPECT_EQ(infer(OpKind::Gelu, {{4}}, {{"approximate", S("tanh")}}), "f32[4]");
  EXPECT_EQ(infer(OpKind::Hardtanh, {{4}}, {{"min_val", F(-2)}, {"max_val", F(2)}}), "f32[4]");
  EXPECT_EQ(infer(OpKind::Softplus, {{4}}, {{"beta", F(2)}, {"threshold", F(10)}}), "f32[4]");
  EXPECT_EQ(infer(OpKind::Elu, {{4}}, {{"alpha", F(0.5)}}), "f32[4]");
}

TEST(VerifierElementwise, ClampNeedsABound) {
  EXPECT_EQ(infer(OpKind::Clamp, {{4}}), "clamp: expected at least one of 'min' and 'max'");
  EXPECT_EQ(infer(OpKind::Clamp, {{4}}, {{"max", F(6)}}), "f32[4]");
  EXPECT_EQ(infer(OpKind::Clamp, {{4}}, {{"min", F(-1)}, {"max", F(1)}}), "f32[4]");
}

TEST(VerifierElementwise, BinaryOpsBroadcastLikeNumpy) {
  // S3's add: [1024,1] with [1,8192,1,1].
  EXPECT_EQ(infer(OpKind::Add, {{1024, 1}, {1, 8192, 1, 1}}), "f32[1,8192,1024,1]");
  EXPECT_EQ(infer(OpKind::Sub, {{2, 3}, {3}}), "f32[2,3]");
  EXPECT_EQ(infer(OpKind::Mul, {{5, 1, 4}, {1, 3, 1}}), "f32[5,3,4]");
  EXPECT_EQ(infer(OpKind::Div, {{}, {2, 2}}), "f32[2,2]");
  EXPECT_EQ(infer(OpKind::Maximum, {{7}, {7}}), "f32[7]");
  EXPECT_EQ(infer(OpKind::Minimum, {{3, 1}, {1}}), "f32[3,1]");
  EXPECT_EQ(infer(OpKind::Add, {{2, 3}, {4}}), "add: shapes [2,3] and [4] do not broadcast");
  EXPECT_EQ(infer(OpKind::Minimum, {{2, 3, 4}, {3, 3, 4}}),
            "minimum: shapes [2,3,4] and [3,3,4] do not broadcast");
  // A number broadcasts as f32[].
  TensorType s(DType::F32, {});
  EXPECT_EQ(outcome(oneOpGraph({s}, OpKind::Add, {{0}, Arg::num(1)}, {})), "f32[]");
}

// ---- Reductions and softmax ---------------------------------------------------------------

TEST(VerifierReduction, DimsNegativeAndKeepdim) {
  EXPECT_EQ(infer(OpKind::Sum, {{2, 3, 4, 5}}, {{"dims", L({1, -1})}}), "f32[2,4]");
  EXPECT_EQ(infer(OpKind::Sum, {{2, 3, 4, 5}}, {{"dims", L({1, -1})}, {"keepdim", B(true)}}),
            "f32[2,1,4,1]");
  // S1's mean over C, D, H, W, and S3's min over the features with keepdim.
  EXPECT_EQ(infer(OpKind::Mean, {{128, 24, 22, 30, 30}}, {{"dims", L({1, 2, 3, 4})}}), "f32[128]");
  EXPECT_EQ(infer(OpKind::Min, {{1024, 8192}}, {{"dims", L({1})}, {"keepdim", B(true)}}),
            "f32[1024,1]");
  EXPECT_EQ(infer(OpKind::Max, {{6, 7}}, {{"dims", L({-2})}}), "f32[7]");
  EXPECT_EQ(infer(OpKind::Logsumexp, {{6, 7}}, {{"dims", L({0, 1})}}), "f32[]");
  EXPECT_EQ(infer(OpKind::Logsumexp, {{6, 7}}, {{"dims", L({0, 1})}, {"keepdim", B(true)}}),
            "f32[1,1]");
  // A single int for a list attribute, and a scalar input (PyTorch accepts dim 0 or -1).
  EXPECT_EQ(infer(OpKind::Mean, {{6, 7}}, {{"dims", I(1)}}), "f32[6]");
  EXPECT_EQ(infer(OpKind::Sum, {{}}, {{"dims", L({-1})}}), "f32[]");
}

TEST(VerifierReduction, BadDims) {
  EXPECT_EQ(infer(OpKind::Mean, {{2, 3, 4}}, {{"dims", L({5})}}),
            "mean: dim 5 out of range for rank 3");
  EXPECT_EQ(infer(OpKind::Mean, {{2, 3, 4}}, {{"dims", L({-4})}}),
            "mean: dim -4 out of range for rank 3");
  EXPECT_EQ(infer(OpKind::Sum, {{}}, {{"dims", L({1})}}), "sum: dim 1 out of range for rank 0");
  EXPECT_EQ(infer(OpKind::Sum, {{2, 3, 4}}, {{"dims", L({1, -2})}}),
            "sum: dim 1 appears more than once in dims");
  EXPECT_EQ(infer(OpKind::Max, {{2, 3, 4}}, {{"dims", L({})}}), "max: dims must not be empty");
}

TEST(VerifierReduction, Softmax) {
  EXPECT_EQ(infer(OpKind::Softmax, {{2, 3, 4}}, {{"dim", I(-1)}}), "f32[2,3,4]");
  EXPECT_EQ(infer(OpKind::LogSoftmax, {{2, 3, 4}}, {{"dim", I(1)}}), "f32[2,3,4]");
  EXPECT_EQ(infer(OpKind::Softmax, {{2, 3, 4}}, {{"dim", I(3)}}),
            "softmax: dim 3 out of range for rank 3");
  EXPECT_EQ(infer(OpKind::LogSoftmax, {{2, 3, 4}}, {{"dim", I(-4)}}),
            "log_softmax: dim -4 out of range for rank 3");
}

// ---- Views ----------------------------------------------------------------------------------

TEST(VerifierView, Reshape) {
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({4, -1})}}), "f32[4,6]");
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({-1})}}), "f32[24]");
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({3, 2, 4})}}), "f32[3,2,4]");
  EXPECT_EQ(infer(OpKind::Reshape, {{1}}, {{"shape", L({})}}), "f32[]");
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({-1, 2, -1})}}),
            "reshape: more than one -1 in shape [-1,2,-1]");
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({-2, 12})}}),
            "reshape: invalid size -2 in shape [-2,12]");
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({5, 5})}}),
            "reshape: shape [5,5] is invalid for input of 24 elements");
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({5, -1})}}),
            "reshape: shape [5,-1] is invalid for input of 24 elements");
  EXPECT_EQ(infer(OpKind::Reshape, {{2, 3, 4}}, {{"shape", L({0, -1})}}),
            "reshape: shape [0,-1] is invalid for input of 24 elements");
}

TEST(VerifierView, FlattenAndDropout) {
  EXPECT_EQ(infer(OpKind::Flatten, {{2, 3, 4, 5}}), "f32[120]");
  EXPECT_EQ(infer(OpKind::Flatten, {{2, 3, 4, 5}}, {{"start_dim", I(1)}}), "f32[2,60]");
  EXPECT_EQ(infer(OpKind::Flatten, {{2, 3, 4, 5}}, {{"start_dim", I(1)}, {"end_dim", I(-2)}}),
            "f32[2,12,5]");
  EXPECT_EQ(infer(OpKind::Flatten, {{2, 3}}, {{"start_dim", I(1)}, {"end_dim", I(1)}}), "f32[2,3]");
  EXPECT_EQ(infer(OpKind::Flatten, {{}}), "f32[1]");
  EXPECT_EQ(infer(OpKind::Flatten, {{2, 3, 4}}, {{"start_dim", I(2)}, {"end_dim", I(1)}}),
            "flatten: start_dim 2 comes after end_dim 1");
  EXPECT_EQ(infer(OpKind::Flatten, {{2, 3, 4}}, {{"start_dim", I(4)}}),
            "flatten: start_dim 4 out of range for rank 3");
  EXPECT_EQ(infer(OpKind::Flatten, {{2, 3, 4}}, {{"end_dim", I(-5)}}),
            "flatten: end_dim -5 out of range for rank 3");
  EXPECT_EQ(infer(OpKind::Dropout, {{2, 3}}), "f32[2,3]");
  EXPECT_EQ(infer(OpKind::Dropout, {{2, 3}}, {{"p", F(0.0)}}), "f32[2,3]");
  EXPECT_EQ(infer(OpKind::Dropout, {{2, 3}}, {{"p", F(1.5)}}),
            "dropout: p must be in [0, 1], got 1.5");
}

// ---- verifyGraph -----------------------------------------------------------------------------

/// x -> relu -> group_norm(groups) -> return.
Graph reluGroupNorm(int64_t groups) {
  Graph g = oneOpGraph({TensorType(DType::F32, {2, 128, 4})}, OpKind::Relu, {{0}}, {});
  Op gn{OpKind::GroupNorm, {Operand::ofValue(1)}, {{"groups", I(groups)}}, 2, {}};
  g.values.push_back(Value{"o", TensorType(), ValueKind::Result, 1});
  g.ops.push_back(gn);
  g.results = {2};
  return g;
}

TEST(VerifyGraph, TypesEveryResult) {
  Graph g = reluGroupNorm(8);
  ASSERT_FALSE(verifyGraph(g)) << "should verify";
  EXPECT_EQ(g.type(1).str(), "f32[2,128,4]");
  EXPECT_EQ(g.type(2).str(), "f32[2,128,4]");
}

TEST(VerifyGraph, ErrorsNameTheOp) {
  Graph g = reluGroupNorm(7);
  EXPECT_EQ(llvm::toString(verifyGraph(g)), "%o: group_norm: groups=7 does not divide C=128");
  g.file = "s0.sir";
  g.ops[1].loc = SourceLoc{6, 8};
  EXPECT_EQ(llvm::toString(verifyGraph(g)),
            "s0.sir:6:8: group_norm: groups=7 does not divide C=128");
}

TEST(VerifyGraph, SsaStructure) {
  Graph useBeforeDef = reluGroupNorm(8);
  useBeforeDef.ops[0].operands[0] = Operand::ofValue(2);
  EXPECT_EQ(llvm::toString(verifyGraph(useBeforeDef)),
            "%r: relu: operand %o is used before its definition");

  Graph missing = reluGroupNorm(8);
  missing.ops[1].operands[0] = Operand::ofValue(9);
  EXPECT_EQ(llvm::toString(verifyGraph(missing)),
            "%o: group_norm: operand 0 refers to no value (id 9)");

  Graph dupName = reluGroupNorm(8);
  dupName.values[2].name = "r";
  EXPECT_EQ(llvm::toString(verifyGraph(dupName)), "%r: value name defined more than once");

  Graph twice = reluGroupNorm(8);
  twice.ops[1].result = 1;
  EXPECT_EQ(llvm::toString(verifyGraph(twice)),
            "%r: group_norm: result %r is defined more than once");

  Graph noResults = reluGroupNorm(8);
  noResults.results.clear();
  EXPECT_EQ(llvm::toString(verifyGraph(noResults)), "graph t: returns no value");

  Graph badResult = reluGroupNorm(8);
  badResult.results = {5};
  EXPECT_EQ(llvm::toString(verifyGraph(badResult)),
            "graph t: returns a value that does not exist (id 5)");

  Graph emptyDim = reluGroupNorm(8);
  emptyDim.values[0].type.shape[2] = 0;
  EXPECT_EQ(llvm::toString(verifyGraph(emptyDim)), "%a0: dim 2 of f32[2,128,0] must be >= 1");
}

} // namespace
