//===- tests/ir/ReferenceTest.cpp - the float64 CPU reference against hand results ---===//
//
// Each test pins one piece of PyTorch semantics the reference must get right, with the
// expected numbers worked out by hand in the comments (transposed convolution scatter with
// stride, padding, output_padding and groups; pool windows with ceil_mode and padding and
// both avg_pool divisors; gelu modes; softplus threshold; broadcasting; negative dims and
// keepdim; biased group-norm variance with eps inside the square root). Larger random cases
// check the blocked GEMM and the convolution loops against naive loops written here, and
// conv_transpose as the adjoint of conv.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Reference.h"
#include "ir/Parser.h"
#include "ir/Random.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace sinter;

namespace {

Graph parse(const std::string &text) {
  auto graphs = parseSir(text, "test.sir");
  if (!graphs) {
    ADD_FAILURE() << llvm::toString(graphs.takeError());
    return Graph{};
  }
  return std::move((*graphs)[0]);
}

HostTensor tensor(llvm::ArrayRef<int64_t> shape, std::vector<float> values) {
  return HostTensor(shape, std::move(values));
}

/// Evaluates `g` (single result) with 3 threads so the parallel paths run.
RefTensor eval(const Graph &g, const TensorMap &bindings) {
  auto results = evaluateReference(g, bindings, {3});
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return RefTensor{};
  }
  EXPECT_EQ(results->size(), 1u);
  return results->begin()->second;
}

void expectValues(const RefTensor &t, llvm::ArrayRef<int64_t> shape,
                  const std::vector<double> &expected, double tol = 1e-12) {
  EXPECT_EQ(shapeStr(t.type.shape), shapeStr(shape));
  ASSERT_EQ(t.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(t.data[i], expected[i], tol) << "element " << i;
}

std::vector<float> iota(int64_t n, float start = 0, float step = 1) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = start + step * float(i);
  return v;
}

} // namespace

TEST(Reference, ConvTransposeStrideOutputPaddingGroups) {
  // Lout = (3-1)*2 - 2*1 + (3-1) + 1 + 1 = 6; y[o] += x[i] * w[k] at o = 2i - 1 + k.
  // Channel 0 (x=1,2,3; w=1,10,100): o0 = 10, o1 = 100+2, o2 = 20, o3 = 200+3, o4 = 30,
  // o5 = 300 (reached only through output_padding). Channel 1 sees only x channel 1.
  Graph g = parse(R"(graph t(%x: f32[1,2,3], %w: param f32[2,1,3], %b: param f32[2]) {
    %y = conv_transpose(%x, %w, %b) {stride = 2, padding = 1, output_padding = 1, groups = 2}
    return %y
  })");
  RefTensor y = eval(g, {{"x", tensor({1, 2, 3}, {1, 2, 3, -1, 0.5, 2})},
                         {"w", tensor({2, 1, 3}, {1, 10, 100, 2, -1, 0.5})},
                         {"b", tensor({2}, {0.5, -1})}});
  expectValues(y, {1, 2, 6}, {10.5, 102.5, 20.5, 203.5, 30.5, 300.5, 0, -0.5, -1.5, 3.25, -3, 0});
}

TEST(Reference, ConvStridePaddingDilation) {
  // Lout = floor((5 + 2 - 2*1 - 1) / 2) + 1 = 3; y[o] = x[2o-1] - x[2o+1].
  Graph g = parse(R"(graph t(%x: f32[1,1,5], %w: param f32[1,1,2]) {
    %y = conv(%x, %w) {stride = 2, padding = 1, dilation = 2}
    return %y
  })");
  RefTensor y = eval(g, {{"x", tensor({1, 1, 5}, iota(5, 1))}, {"w", tensor({1, 1, 2}, {1, -1})}});
  expectValues(y, {1, 1, 3}, {-2, -2, 4});
}

TEST(Reference, MaxPoolCeilModeAndPadding) {
  // ceil_mode keeps the last, partial window [4]; padding is never the maximum.
  Graph g = parse(R"(graph t(%x: f32[1,1,5]) {
    %a = max_pool(%x) {kernel_size = 2, ceil_mode = true}
    %b = max_pool(%x) {kernel_size = 2, padding = 1}
    %c = max_pool(%x) {kernel_size = 2, stride = 1, dilation = 2}
    return %a, %b, %c
  })");
  auto r = evaluateReference(g, {{"x", tensor({1, 1, 5}, {1, 3, 2, 5, 4})}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["a"], {1, 1, 3}, {3, 5, 4});
  expectValues((*r)["b"], {1, 1, 3}, {1, 3, 5});
  expectValues((*r)["c"], {1, 1, 3}, {2, 5, 4});
}

TEST(Reference, AvgPoolDivisorsWithCeilModeAndPadding) {
  // x = 1..6, k=3, s=2, p=1, ceil_mode: 4 windows starting at -1, 1, 3, 5. The last one,
  // [5, 8), is clipped to the padded input [-1, 7) first: divisor 2 with count_include_pad,
  // 1 (only x[5] = 6) without. The first window holds one pad: 3/3 or 3/2.
  Graph g = parse(R"(graph t(%x: f32[1,1,6]) {
    %a = avg_pool(%x) {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true}
    %b = avg_pool(%x) {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true,
                       count_include_pad = false}
    return %a, %b
  })");
  auto r = evaluateReference(g, {{"x", tensor({1, 1, 6}, iota(6, 1))}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["a"], {1, 1, 4}, {1, 3, 5, 3});
  expectValues((*r)["b"], {1, 1, 4}, {1.5, 3, 5, 6});
}

TEST(Reference, AvgPool2dCountsPaddingPerDim) {
  // 2x2 input of ones, k=2, s=1, p=1 -> 3x3 output; corners see 1 of 4 cells.
  Graph g = parse(R"(graph t(%x: f32[1,1,2,2]) {
    %a = avg_pool(%x) {kernel_size = 2, stride = 1, padding = 1}
    %b = avg_pool(%x) {kernel_size = 2, stride = 1, padding = 1, count_include_pad = false}
    return %a, %b
  })");
  auto r = evaluateReference(g, {{"x", tensor({1, 1, 2, 2}, {1, 1, 1, 1})}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["a"], {1, 1, 3, 3}, {.25, .5, .25, .5, 1, .5, .25, .5, .25});
  expectValues((*r)["b"], {1, 1, 3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
}

TEST(Reference, GeluModesSoftplusThresholdAndClamp) {
  Graph g = parse(R"(graph t(%x: f32[3]) {
    %a = gelu(%x)
    %b = gelu(%x) {approximate = "tanh"}
    %c = softplus(%x) {beta = 2.0, threshold = 1.0}
    %d = clamp(%x) {min = -0.5}
    %e = hardtanh(%x) {min_val = 0.0, max_val = 0.5}
    return %a, %b, %c, %d, %e
  })");
  auto r = evaluateReference(g, {{"x", tensor({3}, {1, 0.25, -2})}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["a"], {3}, {0.8413447460685429, 0.14967658142073093, -0.04550026389635842});
  expectValues((*r)["b"], {3}, {0.8411919906082768, 0.149675350701685, -0.04540230591222494});
  // x*beta = 2 > 1: identity; 0.5 <= 1: log1p(exp(0.5)) / 2.
  expectValues((*r)["c"], {3}, {1, std::log1p(std::exp(0.5)) / 2, std::log1p(std::exp(-4.0)) / 2});
  expectValues((*r)["d"], {3}, {1, 0.25, -0.5});
  expectValues((*r)["e"], {3}, {0.5, 0.25, 0});
}

TEST(Reference, BinaryBroadcastingAndScalars) {
  // [2,1] + [1,3,1,1] -> [1,3,2,1]: out[0,j,i,0] = a[i] + b[j] (S3's final add, small).
  Graph g = parse(R"(graph t(%a: f32[2,1], %b: f32[1,3,1,1], %c: f32[3], %d: f32[2,3]) {
    %s = add(%a, %b)
    %m = mul(%c, %d)
    %r = sub(5, %c)
    %q = div(%c, 2)
    %x = maximum(%d, 0.5)
    return %s, %m, %r, %q, %x
  })");
  auto r = evaluateReference(g, {{"a", tensor({2, 1}, {1, 2})},
                                 {"b", tensor({1, 3, 1, 1}, {10, 20, 30})},
                                 {"c", tensor({3}, {1, 2, 3})},
                                 {"d", tensor({2, 3}, {1, 0, -1, 2, 0.25, 4})}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["s"], {1, 3, 2, 1}, {11, 12, 21, 22, 31, 32});
  expectValues((*r)["m"], {2, 3}, {1, 0, -3, 2, 0.5, 12});
  expectValues((*r)["r"], {3}, {4, 3, 2});
  expectValues((*r)["q"], {3}, {0.5, 1, 1.5});
  expectValues((*r)["x"], {2, 3}, {1, 0.5, 0.5, 2, 0.5, 4});
}

TEST(Reference, ReductionsWithNegativeDimsAndKeepdim) {
  // x[i,j,k] = 12i + 4j + k.
  Graph g = parse(R"(graph t(%x: f32[2,3,4]) {
    %s = sum(%x) {dims = [-1], keepdim = true}
    %m = mean(%x) {dims = [0, 2]}
    %a = max(%x) {dims = [-2, 0]}
    %i = min(%x) {dims = [1], keepdim = true}
    return %s, %m, %a, %i
  })");
  auto r = evaluateReference(g, {{"x", tensor({2, 3, 4}, iota(24))}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["s"], {2, 3, 1}, {6, 22, 38, 54, 70, 86});
  expectValues((*r)["m"], {3}, {7.5, 11.5, 15.5});
  expectValues((*r)["a"], {4}, {20, 21, 22, 23});
  expectValues((*r)["i"], {2, 1, 4}, {0, 1, 2, 3, 12, 13, 14, 15});
}

TEST(Reference, LogsumexpSoftmaxAndLogSoftmax) {
  Graph g = parse(R"(graph t(%x: f32[2,2]) {
    %l = logsumexp(%x) {dims = [-1]}
    %s = softmax(%x) {dim = -1}
    %t = log_softmax(%x) {dim = 0}
    return %l, %s, %t
  })");
  // Row 1 is row 0 shifted by 1000: the max must be subtracted before exp.
  auto r = evaluateReference(g, {{"x", tensor({2, 2}, {0, 1, 1000, 1001})}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  double e = std::exp(1.0);
  expectValues((*r)["l"], {2}, {std::log1p(e), 1000 + std::log1p(e)}, 1e-12);
  expectValues((*r)["s"], {2, 2}, {1 / (1 + e), e / (1 + e), 1 / (1 + e), e / (1 + e)});
  // Along dim 0 the 1000 dominates each column: log_softmax = [-1000, -exp(-1000) = 0].
  expectValues((*r)["t"], {2, 2}, {-1000, -1000, 0, 0});
}

TEST(Reference, GroupNormBiasedVarianceEpsInsideSqrt) {
  // groups=2 over C=4, L=2. Group 0 holds 1,3,5,7: mean 4, biased var 5; with eps=4 the
  // scale is 1/sqrt(9) = 1/3 -> -1, -1/3, 1/3, 1. Group 1 holds 0,2,4,6: mean 3, var 5.
  // gamma = 1,2,3,4 and beta = 0,1,0,-1 per channel.
  Graph g = parse(R"(graph t(%x: f32[1,4,2], %g: param f32[4], %b: param f32[4]) {
    %y = group_norm(%x, %g, %b) {groups = 2, eps = 4.0}
    return %y
  })");
  RefTensor y = eval(g, {{"x", tensor({1, 4, 2}, {1, 3, 5, 7, 0, 2, 4, 6})},
                         {"g", tensor({4}, {1, 2, 3, 4})},
                         {"b", tensor({4}, {0, 1, 0, -1})}});
  expectValues(y, {1, 4, 2}, {-1, -1. / 3, 5. / 3, 3, -3, -1, 1. / 3, 3});
}

TEST(Reference, LayerBatchAndInstanceNorm) {
  Graph g = parse(R"(graph t(%x: f32[1,2,2], %m: param f32[2], %v: param f32[2],
                            %g: param f32[2], %b: param f32[2]) {
    %l = layer_norm(%x) {normalized_shape = [2], eps = 0.0}
    %n = batch_norm(%x, %m, %v, %g, %b) {eps = 1.0}
    %i = instance_norm(%x, %g, %b) {eps = 0.0}
    return %l, %n, %i
  })");
  auto r = evaluateReference(g, {{"x", tensor({1, 2, 2}, {1, 3, 2, 8})},
                                 {"m", tensor({2}, {1, -1})},
                                 {"v", tensor({2}, {3, 8})},
                                 {"g", tensor({2}, {2, 1})},
                                 {"b", tensor({2}, {0.5, 0})}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["l"], {1, 2, 2}, {-1, 1, -1, 1});
  // Channel 0: (x - 1) / sqrt(3 + 1) * 2 + 0.5; channel 1: (x + 1) / sqrt(8 + 1).
  expectValues((*r)["n"], {1, 2, 2}, {0.5, 2.5, 1, 3});
  // Per (n, c) over the 2 positions: -1, 1; times gamma plus beta.
  expectValues((*r)["i"], {1, 2, 2}, {-1.5, 2.5, -1, 1});
}

TEST(Reference, ViewsKeepRowMajorData) {
  Graph g = parse(R"(graph t(%x: f32[2,3,2]) {
    %r = reshape(%x) {shape = [3, -1]}
    %f = flatten(%r)
    %d = dropout(%f) {p = 0.3}
    return %d
  })");
  RefTensor y = eval(g, {{"x", tensor({2, 3, 2}, iota(12))}});
  std::vector<double> expected(12);
  for (int i = 0; i < 12; ++i)
    expected[i] = i;
  expectValues(y, {12}, expected);
}

TEST(Reference, MatmulBroadcastsBatchDimsAndOneDimOperands) {
  Graph g = parse(R"(graph t(%a: f32[2,1,2,3], %b: f32[3,2], %v: f32[3], %c: f32[2,3,2]) {
    %m = matmul(%a, %b)
    %l = matmul(%v, %c)
    return %m, %l
  })");
  // a[i,0] = [[1,2,3],[4,5,6]] + 6i; b = [[1,0],[0,1],[1,1]] -> row (p,q,r) -> (p+r, q+r).
  auto r = evaluateReference(g, {{"a", tensor({2, 1, 2, 3}, iota(12, 1))},
                                 {"b", tensor({3, 2}, {1, 0, 0, 1, 1, 1})},
                                 {"v", tensor({3}, {1, -1, 2})},
                                 {"c", tensor({2, 3, 2}, iota(12))}});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  expectValues((*r)["m"], {2, 1, 2, 2}, {4, 5, 10, 11, 16, 17, 22, 23});
  // v @ c[k] = c[k][0] - c[k][1] + 2 c[k][2]: c[0] rows (0,1),(2,3),(4,5) -> (6, 8).
  expectValues((*r)["l"], {2, 2}, {6, 8, 18, 20});
}

namespace {

/// f32 random values in [-1, 1), from the library's generator through a throwaway graph
/// argument so the data is deterministic.
std::vector<float> randomValues(int64_t n, uint64_t seed) {
  Graph g;
  g.name = "r";
  g.values.push_back(Value{"v", TensorType(DType::F32, {n}), ValueKind::Param, -1});
  g.args.push_back(0);
  return randomBindings(g, seed)["v"].data;
}

} // namespace

TEST(Reference, BlockedLinearMatchesNaiveLoops) {
  // Sizes that are not multiples of the 4x4 register block or the 64-wide tiles.
  const int64_t m = 70, n = 67, k = 301;
  Graph g = parse(R"(graph t(%x: f32[70,301], %w: param f32[67,301], %b: param f32[67]) {
    %y = linear(%x, %w, %b)
    return %y
  })");
  std::vector<float> x = randomValues(m * k, 1), w = randomValues(n * k, 2), b = randomValues(n, 3);
  RefTensor y =
      eval(g, {{"x", tensor({m, k}, x)}, {"w", tensor({n, k}, w)}, {"b", tensor({n}, b)}});
  std::vector<double> expected(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = b[j];
      for (int64_t q = 0; q < k; ++q)
        s += double(x[i * k + q]) * double(w[j * k + q]);
      expected[i * n + j] = s;
    }
  expectValues(y, {m, n}, expected, 1e-12);
}

TEST(Reference, GroupedStridedDilatedConv3dMatchesNaiveLoops) {
  // x [2,4,5,6,7], w [6,2,2,3,2], groups 2, stride (2,1,2), padding (1,0,2), dilation (1,2,1).
  Graph g = parse(R"(graph t(%x: f32[2,4,5,6,7], %w: param f32[6,2,2,3,2], %b: param f32[6]) {
    %y = conv(%x, %w, %b) {stride = [2, 1, 2], padding = [1, 0, 2], dilation = [1, 2, 1],
                           groups = 2}
    return %y
  })");
  std::vector<float> x = randomValues(2 * 4 * 5 * 6 * 7, 4), w = randomValues(6 * 2 * 12, 5),
                     b = randomValues(6, 6);
  RefTensor y = eval(g, {{"x", tensor({2, 4, 5, 6, 7}, x)},
                         {"w", tensor({6, 2, 2, 3, 2}, w)},
                         {"b", tensor({6}, b)}});
  // Output: D = (5+2-1-1)/2+1 = 3, H = (6-4-1)/1+1 = 2, W = (7+4-1-1)/2+1 = 5.
  const int64_t od = 3, oh = 2, ow = 5;
  std::vector<double> expected;
  for (int n = 0; n < 2; ++n)
    for (int co = 0; co < 6; ++co)
      for (int d = 0; d < od; ++d)
        for (int h = 0; h < oh; ++h)
          for (int wq = 0; wq < ow; ++wq) {
            double s = b[co];
            for (int cl = 0; cl < 2; ++cl)
              for (int kd = 0; kd < 2; ++kd)
                for (int kh = 0; kh < 3; ++kh)
                  for (int kw = 0; kw < 2; ++kw) {
                    int id = d * 2 - 1 + kd, ih = h + kh * 2, iw = wq * 2 - 2 + kw;
                    if (id < 0 || id >= 5 || ih < 0 || ih >= 6 || iw < 0 || iw >= 7)
                      continue;
                    int ci = (co / 3) * 2 + cl;
                    s += double(x[(((n * 4 + ci) * 5 + id) * 6 + ih) * 7 + iw]) *
                         double(w[(((co * 2 + cl) * 2 + kd) * 3 + kh) * 2 + kw]);
                  }
            expected.push_back(s);
          }
  expectValues(y, {2, 6, od, oh, ow}, expected, 1e-12);
}

TEST(Reference, ConvTransposeIsTheAdjointOfConv) {
  // <conv(x, w), u> == <x, conv_transpose(u, w)> for the same weight and attributes, with
  // output_padding chosen so conv_transpose gives back x's shape. Covers 2-D with groups,
  // stride, padding and dilation through a different code path than conv.
  Graph g = parse(R"(graph t(%x: f32[2,6,9,8], %u: f32[2,4,4,3], %w: param f32[4,3,3,2]) {
    %c = conv(%x, %w) {stride = [2, 3], padding = [1, 1], dilation = [2, 1], groups = 2}
    %t = conv_transpose(%u, %w) {stride = [2, 3], padding = [1, 1], dilation = [2, 1],
                                 output_padding = [0, 2], groups = 2}
    return %c, %t
  })");
  TensorMap in = {{"x", tensor({2, 6, 9, 8}, randomValues(2 * 6 * 9 * 8, 7))},
                  {"u", tensor({2, 4, 4, 3}, randomValues(2 * 4 * 4 * 3, 8))},
                  {"w", tensor({4, 3, 3, 2}, randomValues(4 * 3 * 3 * 2, 9))}};
  auto r = evaluateReference(g, in, {2});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  const RefTensor &c = (*r)["c"], &t = (*r)["t"];
  ASSERT_EQ(shapeStr(c.type.shape), "[2,4,4,3]");
  ASSERT_EQ(shapeStr(t.type.shape), "[2,6,9,8]");
  double lhs = 0, rhs = 0, scale = 0;
  for (size_t i = 0; i < c.data.size(); ++i) {
    lhs += c.data[i] * double(in["u"].data[i]);
    scale += std::fabs(c.data[i] * double(in["u"].data[i]));
  }
  for (size_t i = 0; i < t.data.size(); ++i)
    rhs += t.data[i] * double(in["x"].data[i]);
  EXPECT_GT(scale, 1.0);
  EXPECT_NEAR(lhs, rhs, 1e-12 * scale);
}

TEST(Reference, ThreadCountDoesNotChangeResults) {
  Graph g = parse(R"(graph t(%x: f32[3,8,10,10], %w: param f32[8,4,3,3], %g: param f32[8],
                            %b: param f32[8]) {
    %y = conv_transpose(%x, %w) {stride = 2, padding = 1, groups = 2}
    %n = group_norm(%y, %g, %b) {groups = 2}
    %m = mean(%n) {dims = [-1, -2]}
    return %m
  })");
  TensorMap in = randomBindings(g, 11);
  auto one = evaluateReference(g, in, {1});
  auto many = evaluateReference(g, in, {7});
  ASSERT_TRUE(one && many);
  // Each thread owns whole output planes and segments, so the sums run in the same order.
  EXPECT_EQ((*one)["m"].data, (*many)["m"].data);
}

TEST(Reference, ErrorsNameTheTensor) {
  Graph g = parse(R"(graph t(%x: f32[2,3], %w: param f32[4,3]) {
    %y = linear(%x, %w)
    return %y
  })");
  auto missing = evaluateReference(g, {{"x", HostTensor({2, 3})}});
  ASSERT_FALSE(bool(missing));
  EXPECT_EQ(llvm::toString(missing.takeError()), "missing tensor 'w' (param f32[4,3])");
  auto shape = evaluateReference(g, {{"x", HostTensor({3, 2})}, {"w", HostTensor({4, 3})}});
  ASSERT_FALSE(bool(shape));
  EXPECT_EQ(llvm::toString(shape.takeError()),
            "tensor 'x' has shape [3,2], graph expects f32[2,3]");

  Graph h = parse(R"(graph t(%x: bf16[2]) {
    %y = relu(%x)
    return %y
  })");
  auto dtype = evaluateReference(h, {{"x", HostTensor(Shape{2})}});
  ASSERT_FALSE(bool(dtype));
  EXPECT_EQ(llvm::toString(dtype.takeError()),
            "reference: only f32 graphs are supported, %x is bf16");
}

TEST(Random, BindingsAreDeterministicScaledAndNeverZero) {
  Graph g = parse(R"(graph t(%x: f32[4,256], %w: param f32[8,256], %g: param f32[8],
                            %b: param f32[8]) {
    %y = linear(%x, %w)
    %n = group_norm(%y, %g, %b) {groups = 2}
    return %n
  })");
  TensorMap a = randomBindings(g, 5), b = randomBindings(g, 5), c = randomBindings(g, 6);
  EXPECT_EQ(a["w"].data, b["w"].data);
  EXPECT_NE(a["w"].data, c["w"].data);
  EXPECT_EQ(randomBindings(g, 5, /*params=*/false).count("w"), 0u);
  EXPECT_EQ(randomBindings(g, 5, /*params=*/true).count("w"), 1u);
  auto inRange = [](const HostTensor &t, float lo, float hi) {
    bool allZero = true;
    for (float v : t.data) {
      if (v < lo || v > hi)
        return false;
      allZero = allZero && v == 0;
    }
    return !allZero;
  };
  EXPECT_TRUE(inRange(a["w"], -1 / 16.f, 1 / 16.f)); // 1/sqrt(256)
  EXPECT_TRUE(inRange(a["g"], 0.5f, 1.5f));
  EXPECT_TRUE(inRange(a["b"], -0.5f, 0.5f));
  double sq = 0;
  for (float v : a["x"].data)
    sq += double(v) * v;
  EXPECT_NEAR(sq / 1024, 1.0, 0.15); // N(0, 1) inputs
}
