//===- tests/compiler/RecomposeTest.cpp - formulas re-formed into catalog ops ---------===//
//
// Golden tests of compiler/Recompose.h through canonicalize: each formula as exporters and
// people spell it becomes the catalog's op, and near misses (another constant, an
// intermediate used elsewhere or returned) stay as written.
//
//===--------------------------------------------------------------------------------===//
#include "tests/compiler/RewriteCheck.h"

#include "compiler/Canonicalize.h"

using namespace sinter;

namespace {

Graph parse(const std::string &text) { return test::parseGraph(text); }

/// Canonicalizes `before`, expects `after` (parsed and printed), and checks both compute the
/// same on random data.
void expectRewrite(const std::string &before, const std::string &after) {
  Graph g = parse(before), want = parse(after);
  Graph original = g;
  EXPECT_TRUE(canonicalize(g));
  EXPECT_EQ(printGraph(g), printGraph(want));
  test::expectSameResults(original, g, 3, 1e-6);
}

void expectUnchanged(const std::string &text) {
  Graph g = parse(text);
  std::string before = printGraph(g);
  canonicalize(g);
  EXPECT_EQ(printGraph(g), before);
}

TEST(Recompose, GeluErfInBothExportersOrders) {
  expectRewrite("graph g(%x: f32[4,8]) { %d = div(%x, 1.4142135) %e = erf(%d) %a = add(%e, 1.0) "
                "%h = mul(0.5, %a) %o = mul(%x, %h) return %o }",
                "graph g(%x: f32[4,8]) { %o = gelu(%x) return %o }");
  expectRewrite("graph g(%x: f32[4,8]) { %d = mul(%x, 0.70710678) %e = erf(%d) %a = add(1.0, %e) "
                "%xa = mul(%x, %a) %o = mul(%xa, 0.5) return %o }",
                "graph g(%x: f32[4,8]) { %o = gelu(%x) return %o }");
}

TEST(Recompose, GeluTanhWithCubeOrSquare) {
  expectRewrite(
      "graph g(%x: f32[4,8]) { %sq = mul(%x, %x) %c = mul(%sq, %x) %k = mul(0.044715, %c) "
      "%s = add(%x, %k) %u = mul(0.7978845608, %s) %t = tanh(%u) %a = add(%t, 1.0) "
      "%h = mul(0.5, %a) %o = mul(%x, %h) return %o }",
      "graph g(%x: f32[4,8]) { %o = gelu(%x) {approximate = \"tanh\"} return %o }");
  expectRewrite("graph g(%x: f32[4,8]) { %sq = mul(%x, %x) %k = mul(%sq, 0.044715) "
                "%s = add(1.0, %k) %xs = mul(%x, %s) %u = mul(%xs, 0.7978845608) %t = tanh(%u) "
                "%a = add(%t, 1.0) %xa = mul(%x, %a) %o = mul(%xa, 0.5) return %o }",
                "graph g(%x: f32[4,8]) { %o = gelu(%x) {approximate = \"tanh\"} return %o }");
}

TEST(Recompose, SiluHardswishMishSoftplusRsqrt) {
  expectRewrite("graph g(%x: f32[16]) { %s = sigmoid(%x) %o = mul(%s, %x) return %o }",
                "graph g(%x: f32[16]) { %o = silu(%x) return %o }");
  expectRewrite("graph g(%x: f32[16]) { %h = hardsigmoid(%x) %o = mul(%x, %h) return %o }",
                "graph g(%x: f32[16]) { %o = hardswish(%x) return %o }");
  expectRewrite("graph g(%x: f32[16]) { %a = add(%x, 3.0) %c = clamp(%a) {min = 0.0, max = 6.0} "
                "%m = mul(%x, %c) %o = div(%m, 6.0) return %o }",
                "graph g(%x: f32[16]) { %o = hardswish(%x) return %o }");
  expectRewrite("graph g(%x: f32[16]) { %a = add(%x, 3.0) %c = hardtanh(%a) {min_val = 0.0, "
                "max_val = 6.0} %m = mul(%c, 0.16666666666666666) %o = mul(%x, %m) return %o }",
                "graph g(%x: f32[16]) { %o = hardswish(%x) return %o }");
  expectRewrite("graph g(%x: f32[16]) { %s = softplus(%x) %t = tanh(%s) %o = mul(%x, %t) "
                "return %o }",
                "graph g(%x: f32[16]) { %o = mish(%x) return %o }");
  expectRewrite("graph g(%x: f32[16]) { %b = mul(%x, 2.0) %s = softplus(%b) {threshold = 10.0} "
                "%o = div(%s, 2.0) return %o }",
                "graph g(%x: f32[16]) { %o = softplus(%x) {beta = 2.0, threshold = 10.0} "
                "return %o }");
  expectRewrite("graph g(%x: f32[16]) { %a = abs(%x) %s = sqrt(%a) %o = div(1.0, %s) return %o }",
                "graph g(%x: f32[16]) { %a = abs(%x) %o = rsqrt(%a) return %o }");
}

TEST(Recompose, LogsumexpStableAndNaive) {
  // torch's decomposition: the max kept for the shift, squeezed (or not) for the result.
  expectRewrite("graph g(%x: f32[4,8]) { %m = max(%x) {dims = [1], keepdim = true} "
                "%d = sub(%x, %m) %e = exp(%d) %s = sum(%e) {dims = [1], keepdim = true} "
                "%l = log(%s) %o = add(%l, %m) return %o }",
                "graph g(%x: f32[4,8]) { %o = logsumexp(%x) {dims = [1], keepdim = true} "
                "return %o }");
  expectRewrite("graph g(%x: f32[4,8]) { %m = max(%x) {dims = [-1], keepdim = true} "
                "%d = sub(%x, %m) %e = exp(%d) %s = sum(%e) {dims = [1]} %l = log(%s) "
                "%m2 = max(%x) {dims = [1]} %o = add(%m2, %l) return %o }",
                "graph g(%x: f32[4,8]) { %o = logsumexp(%x) {dims = [1]} return %o }");
  expectRewrite("graph g(%x: f32[4,8]) { %e = exp(%x) %s = sum(%e) {dims = [0]} %o = log(%s) "
                "return %o }",
                "graph g(%x: f32[4,8]) { %o = logsumexp(%x) {dims = [0]} return %o }");
}

TEST(Recompose, IdentityNumbersDropOut) {
  expectRewrite("graph g(%x: f32[16]) { %a = mul(%x, 1.0) %b = add(0.0, %a) %c = div(%b, 1.0) "
                "%d = sub(%c, 0.0) %o = relu(%d) return %o }",
                "graph g(%x: f32[16]) { %o = relu(%x) return %o }");
}

TEST(Recompose, NearMissesStayAsWritten) {
  // Another constant than the formula's.
  expectUnchanged("graph g(%x: f32[4,8]) { %d = div(%x, 1.5) %e = erf(%d) %a = add(%e, 1.0) "
                  "%h = mul(0.5, %a) %o = mul(%x, %h) : f32[4,8] return %o }");
  // The sigmoid is also returned: silu would have to recompute it.
  expectUnchanged("graph g(%x: f32[16]) { %s = sigmoid(%x) %o = mul(%x, %s) return %o, %s }");
  // sigmoid of another value.
  expectUnchanged("graph g(%x: f32[16], %y: f32[16]) { %s = sigmoid(%y) %o = mul(%x, %s) "
                  "return %o }");
  // A returned x * 1 keeps its name.
  expectUnchanged("graph g(%x: f32[16]) { %r = relu(%x) %o = mul(%r, 1.0) return %o }");
  // A shift by a max over other dims is not logsumexp's: only log(sum(exp(.))) is re-formed.
  expectRewrite("graph g(%x: f32[4,8]) { %m = max(%x) {dims = [0], keepdim = true} "
                "%d = sub(%x, %m) %e = exp(%d) %s = sum(%e) {dims = [1], keepdim = true} "
                "%l = log(%s) %o = add(%l, %m) return %o }",
                "graph g(%x: f32[4,8]) { %m = max(%x) {dims = [0], keepdim = true} "
                "%d = sub(%x, %m) %l = logsumexp(%d) {dims = [1], keepdim = true} "
                "%o = add(%l, %m) return %o }");
}

} // namespace
