//===- tests/ir/PrinterTest.cpp - printed .sir text and the parse/print round trip ---===//
//
// The printer's layout is pinned by a golden text of S0. The round trip
// parse(print(g)) == g is checked for the five workloads, for one graph that uses every op
// of the catalog and every kind and spelling of attribute, and for a graph built in C++
// (whose doubles were never text), where it depends on formatDouble being exact.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Printer.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

#include <set>

using namespace sinter;

namespace {

Graph parseOne(llvm::StringRef text, llvm::StringRef file = "t.sir") {
  llvm::Expected<std::vector<Graph>> graphs = parseSir(text, file);
  if (!graphs) {
    ADD_FAILURE() << llvm::toString(graphs.takeError());
    return Graph();
  }
  EXPECT_EQ(graphs->size(), 1u);
  return std::move(graphs->front());
}

/// Prints `g`, parses the text back, and checks the graphs are equal and the second print
/// gives the same text. Returns the printed text.
std::string expectRoundTrip(const Graph &g) {
  std::string text = printGraph(g);
  llvm::Expected<std::vector<Graph>> back = parseSir(text, "printed.sir");
  if (!back) {
    ADD_FAILURE() << llvm::toString(back.takeError()) << "\nin:\n" << text;
    return text;
  }
  EXPECT_EQ(back->size(), 1u);
  EXPECT_TRUE(back->front() == g) << text;
  EXPECT_EQ(printGraph(back->front()), text);
  return text;
}

/// Every op of the catalog, every attribute kind, both spellings of spatial attributes,
/// float attributes written as INTs, scalar operands on either side, and optional operands
/// present and absent.
const char *kEveryOp = R"(
graph every_op(%x: f32[2,4,6,6], %w: param f32[8,4,3,3], %b: param f32[8],
               %wt: param f32[8,4,2,2], %g: param f32[8], %be: param f32[8],
               %cb: param f32[8,1,1], %x1: f32[2,4,10], %w1: param f32[6,2,3],
               %x3: f32[1,2,4,4,4], %w3: param f32[2,2,2,2,2], %v: f32[2,8],
               %lw: param f32[3,8], %lb: param f32[3], %mm: f32[2,8,5], %mw: f32[5,4]) {
  %c = conv(%x, %w, %b) {stride = [1, 1], padding = 1, dilation = 1, groups = 1}
  %ct = conv_transpose(%c, %wt) {stride = 2, padding = [0, 1], output_padding = [1, 0],
                                 dilation = 1, groups = 2}
  %c1 = conv(%x1, %w1) {groups = 2}
  %c3 = conv_transpose(%x3, %w3) {stride = [1, 2, 1]}
  %u1 = relu(%c)
  %u2 = sigmoid(%u1)
  %u3 = tanh(%u2)
  %u4 = silu(%u3)
  %u5 = hardswish(%u4)
  %u6 = hardsigmoid(%u5)
  %u7 = mish(%u6)
  %u8 = exp(%u7)
  %u9 = abs(%u8)
  %u10 = log(%u9)
  %u11 = neg(%u10)
  %u12 = sqrt(%u9)
  %u13 = rsqrt(%u12)
  %u14 = erf(%u13)
  %p1 = gelu(%u14) {approximate = "tanh"}
  %p2 = gelu(%p1) {approximate = "none"}
  %p3 = hardtanh(%p2) {min_val = -2, max_val = 2.5}
  %p4 = leaky_relu(%p3) {negative_slope = 0.2}
  %p5 = softplus(%p4) {beta = 2, threshold = 10.0}
  %p6 = elu(%p5) {alpha = 0.5}
  %p7 = clamp(%p6) {min = 0.0}
  %p8 = clamp(%p7) {min = -inf, max = 6}
  %b1 = add(%p8, 1.5)
  %b2 = sub(-2, %b1)
  %b3 = mul(%b2, %cb)
  %b4 = div(%b3, 0.1)
  %b5 = maximum(%b4, %u11)
  %b6 = minimum(%b5, -1e-30)
  %r1 = sum(%b6) {dims = [-1]}
  %r2 = mean(%b6) {dims = [2, 3], keepdim = true}
  %r3 = max(%b6) {dims = [1]}
  %r4 = min(%b6) {dims = [0, -1], keepdim = false}
  %r5 = logsumexp(%b6) {dims = [1]}
  %s1 = softmax(%b6) {dim = -1}
  %s2 = log_softmax(%s1) {dim = 1}
  %n1 = group_norm(%s2, %g, %be) {groups = 4, eps = 1e-6}
  %n2 = group_norm(%n1) {groups = 8}
  %n3 = layer_norm(%n2) {normalized_shape = [6, 6], eps = 0.001}
  %n4 = batch_norm(%n3, %b, %g) {eps = 0.0001}
  %n5 = batch_norm(%n4, %b, %g, %g, %be)
  %n6 = instance_norm(%n5, %g, %be) {eps = 0.001}
  %n7 = instance_norm(%n6)
  %q1 = max_pool(%n7) {kernel_size = 2, stride = [2, 2], padding = 1, dilation = 1,
                       ceil_mode = true}
  %q2 = avg_pool(%n7) {kernel_size = [3, 3], stride = 1, padding = 0, ceil_mode = false,
                       count_include_pad = false}
  %l = linear(%v, %lw, %lb)
  %l2 = linear(%v, %lw)
  %mmo = matmul(%mm, %mw)
  %v1 = reshape(%n7) {shape = [2, -1]}
  %v2 = flatten(%n7) {start_dim = 1, end_dim = -1}
  %v3 = dropout(%v2) {p = 0.1}
  %v4 = flatten(%c1)
  return %ct, %c3, %r1, %r2, %r3, %r4, %r5, %q1, %q2, %l, %l2, %mmo, %v1, %v3, %v4
}
)";

} // namespace

TEST(Printer, WritesTheCanonicalLayout) {
  Graph g = parseOne(R"(# S0
graph convt3d_relu_gn(%x: f32[16,64,32,32,32], %w: param f32[64,128,3,3,3],
                      %gamma: param f32[128], %beta: param f32[128]) {
  %y = conv_transpose(%x, %w) {padding = 0, stride = 1}
  %r = relu(%y)
  %o = group_norm(%r, %gamma, %beta) {eps = 1e-5, groups = 8}
  return %o
})");
  EXPECT_EQ(printGraph(g),
            "graph convt3d_relu_gn(%x: f32[16,64,32,32,32], %w: param f32[64,128,3,3,3], "
            "%gamma: param f32[128], %beta: param f32[128]) {\n"
            "  %y = conv_transpose(%x, %w) {stride = 1, padding = 0} : f32[16,128,34,34,34]\n"
            "  %r = relu(%y) : f32[16,128,34,34,34]\n"
            "  %o = group_norm(%r, %gamma, %beta) {groups = 8, eps = 1e-05} : "
            "f32[16,128,34,34,34]\n"
            "  return %o\n"
            "}\n");
}

TEST(Printer, WritesScalarsListsAndSeveralResults) {
  Graph g = parseOne("graph g(%x: f32[2,3], %s: f32[]) {\n"
                     "  %a = sub(-1, %x)\n"
                     "  %b = mean(%a) {dims = [0, -1], keepdim = true}\n"
                     "  %c = leaky_relu(%b) {negative_slope = 1}\n"
                     "  %d = mul(%c, %s)\n"
                     "  return %c, %d\n}\n");
  EXPECT_EQ(printGraph(g), "graph g(%x: f32[2,3], %s: f32[]) {\n"
                           "  %a = sub(-1.0, %x) : f32[2,3]\n"
                           "  %b = mean(%a) {dims = [0, -1], keepdim = true} : f32[1,1]\n"
                           "  %c = leaky_relu(%b) {negative_slope = 1.0} : f32[1,1]\n"
                           "  %d = mul(%c, %s) : f32[1,1]\n"
                           "  return %c, %d\n"
                           "}\n");
}

TEST(Printer, RoundTripsTheWorkloads) {
  const char *files[] = {"s0_convt3d_relu_gn.sir", "s1_conv3d_gn_mean.sir",
                         "s2_convt2d_gelu_gn.sir", "s3_gemm_gn_min_bias.sir",
                         "s4_convt3d_grouped.sir"};
  for (const char *file : files) {
    SCOPED_TRACE(file);
    llvm::Expected<std::vector<Graph>> graphs =
        parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/" + file);
    ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
    for (const Graph &g : *graphs)
      expectRoundTrip(g);
  }
}

TEST(Printer, RoundTripsEveryOpAndAttributeKind) {
  Graph g = parseOne(kEveryOp);
  std::set<OpKind> seen;
  for (const Op &op : g.ops)
    seen.insert(op.kind);
  // A new op in ir/Ops.def must be added to this graph.
  for (unsigned i = 0; i < kNumOps; ++i)
    EXPECT_TRUE(seen.count(OpKind(i))) << opName(OpKind(i)).str() << " is not exercised";
  std::string text = expectRoundTrip(g);
  // Spot checks of how the attribute spellings come out.
  EXPECT_NE(text.find("{stride = 2, padding = [0, 1], output_padding = [1, 0], dilation = 1, "
                      "groups = 2} : f32[2,8,13,10]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("%p3 = hardtanh(%p2) {min_val = -2.0, max_val = 2.5}"), std::string::npos);
  EXPECT_NE(text.find("%p8 = clamp(%p7) {min = -inf, max = 6.0}"), std::string::npos);
  EXPECT_NE(text.find("%b2 = sub(-2.0, %b1)"), std::string::npos);
  EXPECT_NE(text.find("%b6 = minimum(%b5, -1e-30)"), std::string::npos);
  EXPECT_NE(text.find("%p1 = gelu(%u14) {approximate = \"tanh\"}"), std::string::npos);
  EXPECT_NE(text.find("%c3 = conv_transpose(%x3, %w3) {stride = [1, 2, 1]} : f32[1,2,5,8,5]"),
            std::string::npos);
}

TEST(Printer, RoundTripsAGraphBuiltInCpp) {
  // Doubles that were never text: the printer must find a spelling that reads back exactly.
  Graph g;
  g.name = "built";
  auto addValue = [&](const char *name, ValueKind kind, TensorType type) {
    g.values.push_back(Value{name, std::move(type), kind, -1});
    ValueId id = ValueId(g.values.size() - 1);
    if (kind != ValueKind::Result)
      g.args.push_back(id);
    return id;
  };
  auto addOp = [&](OpKind kind, llvm::ArrayRef<Operand> operands, const char *name) -> Op & {
    ValueId id = addValue(name, ValueKind::Result, TensorType());
    g.values[id].def = int(g.ops.size());
    g.ops.push_back(Op{kind, {operands.begin(), operands.end()}, {}, id, {}});
    return g.ops.back();
  };
  ValueId x = addValue("x", ValueKind::Input, TensorType(DType::F32, {2, 3}));
  ValueId b = addValue("b", ValueKind::Param, TensorType(DType::F32, {3}));
  Op &a = addOp(OpKind::Add, {Operand::ofValue(x), Operand::ofScalar(0.1 + 0.2)}, "a");
  ValueId av = a.result;
  Op &m = addOp(OpKind::Mul, {Operand::ofScalar(1.0 / 3), Operand::ofValue(av)}, "m");
  ValueId mv = m.result;
  Op &lr = addOp(OpKind::LeakyRelu, {Operand::ofValue(mv)}, "lr");
  lr.setAttr("negative_slope", 2.0 / 3);
  ValueId lrv = lr.result;
  Op &cl = addOp(OpKind::Clamp, {Operand::ofValue(lrv)}, "cl");
  cl.setAttr("max", 1e300);
  cl.setAttr("min", -5e-324);
  ValueId clv = cl.result;
  Op &mp = addOp(OpKind::Maximum, {Operand::ofValue(clv), Operand::ofValue(b)}, "mp");
  ValueId mpv = mp.result;
  Op &rs = addOp(OpKind::Reshape, {Operand::ofValue(mpv)}, "rs");
  rs.setAttr("shape", IntList{3, 2});
  g.results.push_back(rs.result);
  if (llvm::Error err = verifyGraph(g))
    FAIL() << llvm::toString(std::move(err));

  std::string text = expectRoundTrip(g);
  EXPECT_NE(text.find("add(%x, 0.30000000000000004)"), std::string::npos) << text;
  EXPECT_NE(text.find("clamp(%lr) {min = -5e-324, max = 1e+300}"), std::string::npos) << text;
}
