//===- tests/compiler/SinkViewsTest.cpp - views moved below the ops after them --------===//
//
// compiler/SinkViews.h: each case checks which ops come after the views once they have sunk,
// that results keep their names and types, and that the graph computes what it did on random
// data (float64 reference). Views that cannot move stay where they were, and the fusion and
// plan cases check what the move is for: fewer kernels, and no copy for a returned view.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/SinkViews.h"
#include "tests/compiler/RewriteCheck.h"

#include "compiler/Canonicalize.h"
#include "compiler/Pipeline.h"
#include "ir/Verifier.h"

#include <random>

using namespace sinter;
using test::expectSameResults;

namespace {

/// The op kinds of `g` in order, by name ("linear softmax mul reshape").
std::string kinds(const Graph &g) {
  std::string s;
  for (const Op &op : g.ops)
    s += (s.empty() ? "" : " ") + op.name().str();
  return s;
}

/// Sinks the views of `text` and expects the ops `after` (op names, in order, dead ops
/// removed), the results' names and types as before, and the same results on random data.
void expectSunk(const std::string &text, const std::string &after) {
  Graph g = test::parseGraph(text);
  const Graph original = g;
  EXPECT_TRUE(sinkViews(g)) << printGraph(g);
  canonicalize(g); // removes the views left unused
  EXPECT_EQ(kinds(g), after) << printGraph(g);
  test::expectSameResultNames(original, g);
  for (uint64_t seed : {5u, 17u})
    expectSameResults(original, g, seed, 1e-12);
}

/// The pipeline's result for `text` on sm_90a (empty, with a test failure, when it fails).
PipelineResult planned(const std::string &text) {
  auto r = runPipeline(test::parseGraph(text), {Precision::Auto, "sm_90a", false});
  EXPECT_TRUE(bool(r)) << llvm::toString(r.takeError());
  return r ? std::move(*r) : PipelineResult();
}

/// Expects no view of `text` to move, and the reason given for its view (the first reshape
/// or flatten) to be `why`.
void expectStays(const std::string &text, const std::string &why) {
  Graph g = test::parseGraph(text);
  const std::string before = printGraph(g);
  int view = -1;
  for (int i = 0; i < int(g.ops.size()) && view < 0; ++i)
    if (g.ops[i].kind == OpKind::Reshape || g.ops[i].kind == OpKind::Flatten)
      view = i;
  ASSERT_GE(view, 0) << text;
  EXPECT_EQ(whyViewStays(g, view), why) << text;
  EXPECT_FALSE(sinkViews(g));
  EXPECT_EQ(printGraph(g), before);
}

TEST(SinkViews, ElementwiseOpsMoveAboveAView) {
  // The softmax over heads of gemm_reshape_head_softmax: the view of the softmax, a product
  // with a full-size tensor viewed the same way, and a number.
  expectSunk("graph g(%x: f32[6,16], %w: param f32[16,16], %s: param f32[]) { %y = linear(%x, "
             "%w) %r = reshape(%y) {shape = [6, 2, 8]} %p = softmax(%r) {dim = 2} %v = "
             "reshape(%p) {shape = [6, -1]} %q = mul(%v, %y) %o = mul(%q, %s) return %o }",
             "linear reshape softmax reshape mul mul reshape");
  // Two views of values of one shape: the second is read as what it views, no new view.
  expectSunk("graph g(%x: f32[4,6], %z: f32[4,6]) { %a = exp(%x) %b = tanh(%z) %u = reshape(%a) "
             "{shape = [24]} %v = reshape(%b) {shape = [24]} %m = mul(%u, %v) return %m }",
             "exp tanh mul reshape");
  // kb38's per-channel scale after a softmax over the flattened positions: [1, C, 1, 1, 1]
  // is [1, C, 1] in the softmax's terms. Unary ops with attributes move too.
  expectSunk("graph g(%x: f32[2,3,2,4,5], %sc: param f32[1,3,1,1,1]) { %f = reshape(%x) "
             "{shape = [2, 3, -1]} %s = softmax(%f) {dim = 2} %r = reshape(%s) {shape = [2, 3, "
             "2, 4, 5]} %m = mul(%r, %sc) %c = clamp(%m) {min = 0.1, max = 0.6} return %c }",
             "reshape softmax reshape mul clamp reshape");
  // flatten, and a tensor on the left that is constant over one block and spans the other.
  expectSunk("graph g(%x: f32[4,3,5], %t: f32[4,1]) { %a = abs(%x) %f = flatten(%a) {start_dim "
             "= 1} %e = exp(%f) %d = sub(%t, %e) return %d }",
             "abs exp reshape sub reshape");
  // mul(%r, %r): one user.
  expectSunk("graph g(%x: f32[4,6]) { %a = abs(%x) %r = reshape(%a) {shape = [24]} %m = mul(%r, "
             "%r) %o = relu(%m) return %o }",
             "abs mul relu reshape");
}

TEST(SinkViews, AFormulaOverAViewMovesOnceRecomposed) {
  // GELU as an exporter writes it reads the view twice; canonicalize makes it one gelu first,
  // which then moves above the view (and so into the convolution's epilogue).
  Graph g = test::parseGraph(
      "graph g(%x: f32[2,4,6,6], %w: param f32[4,4,3,3]) { %y = conv(%x, %w) {padding = 1} %r = "
      "reshape(%y) {shape = [2, 4, 36]} %d = div(%r, 1.4142135623730951) %e = erf(%d) %p = "
      "add(%e, 1.0) %h = mul(%r, 0.5) %o = mul(%h, %p) return %o }");
  const Graph original = g;
  EXPECT_TRUE(canonicalize(g));
  EXPECT_EQ(kinds(g), "conv gelu reshape") << printGraph(g);
  expectSameResults(original, g, 3, 1e-12);
}

TEST(SinkViews, ASoftmaxAlongADimOfItsOwnRunsOnTheViewedTensor) {
  // x.view(N, C, H * W).softmax(1): a softmax over the channels; log_softmax from the end.
  expectSunk("graph g(%x: f32[2,3,4,5]) { %a = abs(%x) %f = reshape(%a) {shape = [2, 3, 20]} %s "
             "= softmax(%f) {dim = 1} %o = exp(%s) return %o }",
             "abs softmax exp reshape");
  expectSunk("graph g(%x: f32[6,5]) { %a = abs(%x) %r = reshape(%a) {shape = [2, 3, 5]} %s = "
             "log_softmax(%r) {dim = -1} return %s }",
             "abs log_softmax reshape");
  // After a convolution, the softmax over its channels then runs in its kernel.
  const PipelineResult compiled =
      planned("graph g(%x: f32[2,8,6,6], %w: param f32[16,8,3,3]) { %y = conv(%x, %w) {padding "
              "= 1} %f = flatten(%y) {start_dim = 2} %s = softmax(%f) {dim = 1} return %s }");
  ASSERT_EQ(compiled.fusion.groups.size(), 2u) << printGraph(compiled.graph);
  EXPECT_GE(compiled.fusion.groups[0].softmax, 0) << compiled.fusion.groups[0].pattern;
}

TEST(SinkViews, ReductionsOverWholeBlocksReduceTheViewedTensor) {
  // kb98 and kb55: a pool over a [rows, 1, n] view, viewed back, then a reduction over the
  // rows: the reduction runs on the pool's output, the view after it.
  expectSunk("graph g(%x: f32[4,32]) { %u = reshape(%x) {shape = [4, 1, 32]} %p = "
             "avg_pool(%u) {kernel_size = 4} %q = reshape(%p) {shape = [4, 8]} %g = gelu(%q) "
             "%s = mul(%g, 2.0) %o = max(%s) {dims = [1]} return %o }",
             "reshape avg_pool gelu mul max reshape");
  // A reduction over a merged block, keeping its dims.
  expectSunk("graph g(%x: f32[3,4,5]) { %a = abs(%x) %r = reshape(%a) {shape = [3, 20]} %m = "
             "mean(%r) {dims = [-1], keepdim = true} return %m }",
             "abs mean reshape");
  // Over the leading block of a split: [6, 5] viewed as [2, 3, 5], summed over dims 0 and 1.
  expectSunk("graph g(%x: f32[6,5]) { %a = abs(%x) %r = reshape(%a) {shape = [2, 3, 5]} %s = "
             "sum(%r) {dims = [0, 1]} %o = logsumexp(%s) {dims = [0]} return %o }",
             "abs sum logsumexp");
}

TEST(SinkViews, ViewsThatCannotMoveStay) {
  // The other operand varies over part of a block: [2, 3] viewed as [3, 2] is one block, and
  // a [1, 2] operand covers only part of it.
  expectStays("graph g(%x: f32[2,3], %t: f32[1,2]) { %a = abs(%x) %r = reshape(%a) {shape = [3, "
              "2]} %m = mul(%r, %t) return %m }",
              "%t f32[1,2] varies within a block of dims that the view regroups");
  // The op broadcasts the view up to a larger shape.
  expectStays("graph g(%x: f32[4], %t: f32[4,5]) { %a = abs(%x) %u = reshape(%a) {shape = [4, 1]} "
              "%m = add(%u, %t) return %m }",
              "add broadcasts %u to a larger shape");
  // A reduction over part of a merged block.
  expectStays("graph g(%x: f32[3,20]) { %a = abs(%x) %u = reshape(%a) {shape = [3, 2, 10]} %m = "
              "sum(%u) {dims = [2]} return %m }",
              "sum reduces part of a block of dims that the view regroups");
  // A full-size operand computed for this op alone would need a view of its own.
  expectStays("graph g(%x: f32[4,6], %z: f32[24]) { %a = abs(%x) %b = exp(%z) %r = reshape(%a) "
              "{shape = [24]} %m = mul(%r, %b) return %m }",
              "%b would need a view of its own, being computed for mul alone");
  // A view of an argument (nothing to join), of a value used elsewhere, a returned view, and
  // a view with two users.
  expectStays("graph g(%x: f32[4,6]) { %r = reshape(%x) {shape = [24]} %o = relu(%r) return %o }",
              "%x is a graph argument");
  expectStays("graph g(%x: f32[4,6]) { %a = abs(%x) %r = reshape(%a) {shape = [24]} %o = relu(%r) "
              "return %a, %o }",
              "%a is used elsewhere too");
  expectStays("graph g(%x: f32[4,6]) { %a = abs(%x) %r = reshape(%a) {shape = [24]} %o = relu(%r) "
              "return %r, %o }",
              "%r is a graph result");
  expectStays("graph g(%x: f32[4,6]) { %a = abs(%x) %r = reshape(%a) {shape = [24]} %p = relu(%r) "
              "%q = exp(%r) %o = add(%p, %q) return %o }",
              "%r has more than one user");
  // A softmax along a merged dim, and a pool.
  expectStays("graph g(%x: f32[4,6]) { %a = abs(%x) %r = reshape(%a) {shape = [24]} %o = "
              "softmax(%r) {dim = 0} return %o }",
              "softmax runs along a dim that the view merges with others or splits");
  expectStays("graph g(%x: f32[2,3,8]) { %a = abs(%x) %r = reshape(%a) {shape = [2, 3, 2, 4]} "
              "%o = max_pool(%r) {kernel_size = 2} return %o }",
              "max_pool after it is neither elementwise, a reduction nor a softmax");
  Graph moves = test::parseGraph(
      "graph g(%x: f32[4,6]) { %a = abs(%x) %r = reshape(%a) {shape = [24]} %o = relu(%r) return "
      "%o }");
  EXPECT_EQ(whyViewStays(moves, 1), "it could move");
}

TEST(SinkViews, FewerKernelsAndNoCopyForAReturnedView) {
  // softmax -> view -> mul by a per-channel tensor: one kernel, written straight into the
  // returned view's buffer (no copy kernel), where the mul used to be a kernel of its own.
  const PipelineResult compiled =
      planned("graph g(%x: f32[2,3,2,4,4], %sc: param f32[1,3,1,1,1]) { %f = reshape(%x) {shape "
              "= [2, 3, -1]} %s = softmax(%f) {dim = 2} %r = reshape(%s) {shape = [2, 3, 2, 4, "
              "4]} %o = mul(%r, %sc) return %o }");
  const ExecutablePlan &plan = compiled.plan.plan;
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_NE(plan.kernels[0].name.find("softmax_mul"), std::string::npos) << plan.kernels[0].name;
  // The kernel writes (through a view) the graph's output buffer.
  int out = -1;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].kind == BufferSpec::Kind::Output)
      out = int(i);
  ASSERT_GE(out, 0);
  bool writesOutput = false;
  for (const Step &s : plan.steps)
    for (int buffer : s.slots) {
      int at = buffer;
      while (at >= 0 && plan.buffers[at].aliasOf >= 0)
        at = plan.buffers[at].aliasOf;
      writesOutput |= at == out;
    }
  EXPECT_TRUE(writesOutput);
}

} // namespace

namespace {

/// A shape with the elements of `dims` regrouped at random: each run of dims is merged or
/// split into factors, and size-1 dims come and go.
Shape regroup(const Shape &dims, std::mt19937 &rng) {
  std::vector<int64_t> primes;
  for (int64_t d : dims)
    for (int64_t n = d, p = 2; n > 1;)
      if (n % p == 0) {
        primes.push_back(p);
        n /= p;
      } else {
        ++p;
      }
  Shape out;
  int64_t cur = 1;
  for (int64_t p : primes) {
    cur *= p;
    if (rng() % 2) {
      out.push_back(cur);
      cur = 1;
    }
    if (rng() % 5 == 0)
      out.push_back(1);
  }
  if (cur > 1 || out.empty())
    out.push_back(cur);
  return out;
}

std::string shapeText(const Shape &s) {
  std::string t;
  for (int64_t d : s)
    t += (t.empty() ? "" : ", ") + std::to_string(d);
  return t;
}

std::string typeText(const Shape &s) {
  std::string t = "f32[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

} // namespace

TEST(SinkViews, RandomViewsKeepTheirMeaning) {
  // Random views of a computed tensor, each followed by a mul with a random broadcast operand
  // and a random reduction or softmax: whatever moves, the graph must compute what it did, and the
  // rewrite must be stable (a second canonicalize changes nothing). Enough of them move for
  // the test to mean something.
  std::mt19937 rng(20261128);
  int movedOps = 0, movedReductions = 0, movedSoftmaxes = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Shape a;
    for (int rank = 1 + int(rng() % 4), i = 0; i < rank; ++i)
      a.push_back(int64_t(1 + rng() % 6));
    const Shape r = regroup(a, rng);
    Shape t = r;
    for (int64_t &d : t)
      if (rng() % 2)
        d = 1;
    if (rng() % 3 == 0 && t.size() > 1)
      t.erase(t.begin()); // aligned right
    std::string dims;
    for (size_t j = 0; j < r.size(); ++j)
      if (rng() % 2)
        dims += (dims.empty() ? "" : ", ") + std::to_string(j);
    if (dims.empty())
      dims = "0";
    // Every third graph ends in a softmax along a random dim instead of a sum.
    const bool softmax = trial % 3 == 0;
    const std::string last =
        softmax ? "%s = softmax(%m) {dim = " + std::to_string(rng() % r.size()) + "}"
                : "%s = sum(%m) {dims = [" + dims +
                      "], keepdim = " + (rng() % 2 ? "true" : "false") + "}";
    const std::string text = "graph g(%x: " + typeText(a) + ", %t: " + typeText(t) +
                             ") { %e = exp(%x) %r = reshape(%e) {shape = [" + shapeText(r) +
                             "]} %m = mul(%r, %t) " + last + " return %s }";
    Graph g = test::parseGraph(text);
    ASSERT_FALSE(g.ops.empty()) << text;
    const Graph original = g;
    canonicalize(g);
    const std::string once = printGraph(g);
    // Every type the rewrite wrote down is the one its op infers.
    Graph checked = g;
    if (llvm::Error err = verifyGraph(checked))
      FAIL() << text << "\n" << once << "\n" << llvm::toString(std::move(err));
    EXPECT_EQ(printGraph(checked), once) << text;
    EXPECT_FALSE(canonicalize(g)) << text << "\n" << once;
    // Which ops now run on the unviewed tensor.
    for (const Op &op : g.ops) {
      if (op.kind == OpKind::Mul && g.type(op.result).shape == a && a != r)
        ++movedOps;
      if (op.kind == OpKind::Sum && g.type(op.operands[0].value).shape == a && a != r)
        ++movedReductions;
      if (op.kind == OpKind::Softmax && g.type(op.result).shape == a && a != r)
        ++movedSoftmaxes;
    }
    ASSERT_EQ(g.type(g.results[0]), original.type(original.results[0])) << text;
    expectSameResults(original, g, uint64_t(trial), 1e-12);
    if (HasFailure())
      FAIL() << text << "\n" << printGraph(g);
  }
  EXPECT_GT(movedOps, 50);
  EXPECT_GT(movedReductions, 20);
  EXPECT_GT(movedSoftmaxes, 10);
}
