//===- tests/compiler/FoldReduceTest.cpp - sums over features taken into the weight ---===//
//
// compiler/FoldReduce.h through canonicalize: a sum or mean over a product's features,
// after per-feature affine ops, becomes a product with the weight's feature sum. Each case
// checks the ops left (no [.., N] product, the reduction's name on the result) and that the
// graph computes the same as before on random data (float64 reference); near misses stay as
// written.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/FoldReduce.h"
#include "tests/compiler/RewriteCheck.h"

#include "compiler/Canonicalize.h"

using namespace sinter;
using test::expectSameResults;

namespace {

Graph parse(const std::string &text) { return test::parseGraph(text); }

/// Folds `text` (paying or not: these sizes are small enough for the float64 reference) and
/// canonicalizes it; expects one product left, of `productOut` (its output type), and the
/// same results as before on random data.
void expectFolded(const std::string &text, const std::string &productOut) {
  Graph g = parse(text);
  const Graph original = g;
  ASSERT_TRUE(foldFeatureReductions(g, true));
  canonicalize(g);
  int products = 0;
  for (const Op &op : g.ops)
    if (op.kind == OpKind::Linear || op.kind == OpKind::Matmul) {
      ++products;
      EXPECT_EQ(g.type(op.result).str(), productOut) << printGraph(g);
    }
  EXPECT_EQ(products, 1) << printGraph(g);
  // The result keeps its name and type.
  test::expectSameResultNames(original, g);
  for (uint64_t seed : {3u, 11u})
    expectSameResults(original, g, seed, 1e-12);
}

/// Canonicalizes `text` alone (the cost model decides) and expects it as written.
void expectKept(const std::string &text) {
  Graph g = parse(text);
  std::string before = printGraph(g);
  canonicalize(g);
  EXPECT_EQ(printGraph(g), before);
}

void expectUnchanged(const std::string &text) {
  Graph g = parse(text);
  std::string before = printGraph(g);
  foldFeatureReductions(g, true);
  canonicalize(g);
  EXPECT_EQ(printGraph(g), before);
}

TEST(FoldReduce, LinearThenMeanOverFeatures) {
  // The corpus's gemm_sub_mean_lse_gelu_res at a small size: a per-feature subtraction.
  expectFolded("graph g(%x: f32[6,10], %w: param f32[12,10], %b: param f32[12], %s: param "
               "f32[12]) { %y = linear(%x, %w, %b) %d = sub(%y, %s) %m = mean(%d) {dims = [1], "
               "keepdim = true} %l = logsumexp(%m) {dims = [1], keepdim = true} return %l }",
               "f32[6,1]");
  // Without keepdim: a vector product. No bias; numbers on either side.
  expectFolded("graph g(%x: f32[2,5,10], %w: param f32[12,10]) { %y = linear(%x, %w) %a = "
               "mul(%y, 0.5) %c = sub(2.0, %a) %o = sum(%c) {dims = [-1]} return %o }",
               "f32[2,5]");
}

TEST(FoldReduce, PerFeatureTensorsInEveryPosition) {
  // mul, div, add, sub by [N], [1, N] and [1] tensors, neg, on a batched matmul by [K, N].
  expectFolded("graph g(%a: f32[3,4,10], %b: f32[10,12], %s: param f32[12], %t: param f32[1,12], "
               "%u: param f32[1]) { %y = matmul(%a, %b) %p = mul(%s, %y) %q = add(%p, 1.5) %r = "
               "div(%q, %t) %n = neg(%r) %v = sub(%u, %n) %w = add(%v, %s) %o = mean(%w) {dims = "
               "[2], keepdim = true} return %o }",
               "f32[3,4,1]");
  // A linear layer whose bias meets a per-feature scale and an added number.
  expectFolded("graph g(%x: f32[7,9], %w: param f32[5,9], %b: param f32[5], %s: param f32[5]) { "
               "%y = linear(%x, %w, %b) %a = add(%y, 0.25) %m = mul(%a, %s) %o = sum(%m) {dims = "
               "[1]} return %o }",
               "f32[7,1]"); // the bias's sum rides on a linear layer, then a reshape
}

TEST(FoldReduce, TransposedConvolutionThenMeanOverItsPlanes) {
  // KernelBench's ConvTranspose2d -> global average pool -> + bias -> logsumexp shape, with
  // a stride and output padding (rows that get the bias alone).
  expectFolded("graph g(%x: f32[2,3,5,6], %w: param f32[3,4,3,3], %b: param f32[4], %c: param "
               "f32[4,1,1]) { %y = conv_transpose(%x, %w, %b) {stride = 2, output_padding = 1} "
               "%m = mean(%y) {dims = [2, 3], keepdim = true} %a = add(%m, %c) %l = "
               "logsumexp(%a) {dims = [1], keepdim = true} return %l }",
               "f32[2,4]");
  // 3-D, per-channel factors and numbers before a sum over the planes, dims dropped.
  expectFolded("graph g(%x: f32[2,3,3,4,5], %w: param f32[3,5,2,3,2], %s: param f32[5,1,1,1]) { "
               "%y = conv_transpose(%x, %w) {dilation = 2} %p = mul(%y, %s) %q = sub(%p, 0.5) %o "
               "= sum(%q) {dims = [-1, -3, -2]} return %o }",
               "f32[2,5]");
}

TEST(FoldReduce, CanonicalizeFoldsOnlyWhereItPays) {
  // 16384 x 2048 x 2048 (the corpus's gemm_sub_mean_lse_gelu_res): the product's ~0.7 ms
  // against five small kernels.
  const char *big = "graph g(%x: f32[16384,2048], %w: param f32[2048,2048], %b: param f32[2048], "
                    "%s: param f32[2048]) { %y = linear(%x, %w, %b) %d = sub(%y, %s) %m = mean(%d) "
                    "{dims = [1], keepdim = true} return %m }";
  Graph g = parse(big);
  ASSERT_TRUE(canonicalize(g));
  EXPECT_NE(printGraph(g).find("linear(%x, %m_fold"), std::string::npos) << printGraph(g);
  // 64 x 256 x 256: two kernels stay two.
  expectKept("graph g(%x: f32[64,256], %w: param f32[256,256]) { %y = linear(%x, %w) "
             "%o = sum(%y) {dims = [1]} return %o }");
}

TEST(FoldReduce, NearMissesStayAsWritten) {
  // A nonlinearity between the product and the sum.
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %r = "
                  "relu(%y) %o = sum(%r) {dims = [1]} return %o }");
  // Over the rows, or over two dims.
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %o = "
                  "sum(%y) {dims = [0]} return %o }");
  expectUnchanged("graph g(%x: f32[2,6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %o = "
                  "sum(%y) {dims = [1, 2]} return %o }");
  // The product (or a chain value) used again, or returned.
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %o = "
                  "sum(%y) {dims = [1]} return %o, %y }");
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %a = "
                  "mul(%y, 2.0) %o = sum(%a) {dims = [1]} %p = add(%a, 1.0) return %o, %p }");
  // A tensor that varies along the rows, the product twice, a number over the product.
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10], %t: param f32[6,1]) { %y = "
                  "linear(%x, %w) %a = mul(%y, %t) %o = sum(%a) {dims = [1]} return %o }");
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %a = "
                  "mul(%y, %y) %o = sum(%a) {dims = [1]} return %o }");
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %a = "
                  "div(1.0, %y) %o = sum(%a) {dims = [1]} return %o }");
  // max is not linear; B batched.
  expectUnchanged("graph g(%x: f32[6,10], %w: param f32[12,10]) { %y = linear(%x, %w) %o = "
                  "max(%y) {dims = [1]} return %o }");
  expectUnchanged("graph g(%a: f32[2,6,10], %b: f32[2,10,12]) { %y = matmul(%a, %b) %o = "
                  "sum(%y) {dims = [2]} return %o }");
  // Padding crops taps at the border; groups; the channels summed too; a direct convolution.
  expectUnchanged("graph g(%x: f32[2,3,5,6], %w: param f32[3,4,3,3]) { %y = conv_transpose(%x, "
                  "%w) {padding = 1} %m = mean(%y) {dims = [2, 3]} return %m }");
  expectUnchanged("graph g(%x: f32[2,4,5,6], %w: param f32[4,2,3,3]) { %y = conv_transpose(%x, "
                  "%w) {groups = 2} %m = mean(%y) {dims = [2, 3]} return %m }");
  expectUnchanged("graph g(%x: f32[2,3,5,6], %w: param f32[3,4,3,3]) { %y = conv_transpose(%x, "
                  "%w) %m = sum(%y) {dims = [1, 2, 3]} return %m }");
  expectUnchanged("graph g(%x: f32[2,3,5,6], %w: param f32[4,3,3,3]) { %y = conv(%x, %w) %m = "
                  "mean(%y) {dims = [2, 3]} return %m }");
}

} // namespace
