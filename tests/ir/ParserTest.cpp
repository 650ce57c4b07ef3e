//===- tests/ir/ParserTest.cpp - what the .sir parser builds -----------------------===//
//
// Checks the graphs the parser produces: argument and value order, value kinds and defining
// ops, source locations, how each attribute kind is stored (the schema decides whether `1`
// is an int, a double or a spatial value), scalar operands and number syntax, comments,
// several graphs per file, and picking one graph by name.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace sinter;

namespace {

/// Parses `text`, failing the test with the parser's message on error.
std::vector<Graph> parseOk(llvm::StringRef text, llvm::StringRef file = "t.sir") {
  llvm::Expected<std::vector<Graph>> graphs = parseSir(text, file);
  if (!graphs) {
    ADD_FAILURE() << llvm::toString(graphs.takeError());
    return {};
  }
  return std::move(*graphs);
}

Graph parseOne(llvm::StringRef text) {
  std::vector<Graph> graphs = parseOk(text);
  if (graphs.size() != 1) {
    ADD_FAILURE() << "expected one graph, got " << graphs.size();
    return Graph();
  }
  return std::move(graphs.front());
}

const char *kS0 = R"(# S0
graph convt3d_relu_gn(%x: f32[16,64,32,32,32], %w: param f32[64,128,3,3,3],
                      %gamma: param f32[128], %beta: param f32[128]) {
  %y = conv_transpose(%x, %w) {stride = 1, padding = 0}
  %r = relu(%y)   # comment after a statement
  %o = group_norm(%r, %gamma, %beta) {groups = 8, eps = 1e-5}
  return %o
}
)";

} // namespace

TEST(Parser, BuildsArgumentsFirstThenOneValuePerOp) {
  std::vector<Graph> graphs = parseOk(kS0, "s0.sir");
  ASSERT_EQ(graphs.size(), 1u);
  const Graph &g = graphs[0];
  EXPECT_EQ(g.name, "convt3d_relu_gn");
  EXPECT_EQ(g.file, "s0.sir");
  ASSERT_EQ(g.values.size(), 7u);
  EXPECT_EQ(g.args, (std::vector<ValueId>{0, 1, 2, 3}));
  const char *names[] = {"x", "w", "gamma", "beta", "y", "r", "o"};
  for (size_t i = 0; i < 7; ++i)
    EXPECT_EQ(g.values[i].name, names[i]);
  EXPECT_EQ(g.values[0].kind, ValueKind::Input);
  EXPECT_EQ(g.values[1].kind, ValueKind::Param);
  EXPECT_EQ(g.values[3].kind, ValueKind::Param);
  EXPECT_EQ(g.values[0].def, -1);
  EXPECT_EQ(g.values[1].type, TensorType(DType::F32, {64, 128, 3, 3, 3}));

  ASSERT_EQ(g.ops.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(g.ops[i].result, ValueId(4 + i));
    EXPECT_EQ(g.values[4 + i].kind, ValueKind::Result);
    EXPECT_EQ(g.values[4 + i].def, int(i));
  }
  EXPECT_EQ(g.ops[0].kind, OpKind::ConvTranspose);
  EXPECT_EQ(g.ops[0].operands[0], Operand::ofValue(0));
  EXPECT_EQ(g.ops[0].operands[1], Operand::ofValue(1));
  EXPECT_EQ(g.ops[2].operands.size(), 3u);
  EXPECT_EQ(g.results, (std::vector<ValueId>{6}));

  // Locations point at the op name.
  EXPECT_EQ(g.ops[0].loc, (SourceLoc{4, 8}));
  EXPECT_EQ(g.ops[2].loc, (SourceLoc{6, 8}));
  EXPECT_EQ(g.locStr(g.ops[2]), "s0.sir:6:8");

  // Every value is typed.
  TensorType out(DType::F32, {16, 128, 34, 34, 34});
  EXPECT_EQ(g.type(4), out);
  EXPECT_EQ(g.type(5), out);
  EXPECT_EQ(g.type(6), out);
}

TEST(Parser, AttributesAreStoredAsTheSchemaSays) {
  Graph g = parseOne(R"(
graph attrs(%x: f32[2,4,8,8], %w: param f32[4,4,3,3]) {
  %c = conv(%x, %w) {groups = 1, padding = [1, 0], stride = 1}
  %n = group_norm(%c) {eps = 1, groups = 2}
  %l = leaky_relu(%n) {negative_slope = 0.2}
  %e = gelu(%l) {approximate = "tanh"}
  %m = mean(%e) {dims = [-1], keepdim = true}
  %p = max_pool(%x) {kernel_size = [2, 2]}
  return %m, %p
}
)");
  ASSERT_EQ(g.ops.size(), 6u);
  const Op &conv = g.ops[0];
  // Schema order (stride, padding, dilation, groups), not the order written.
  ASSERT_EQ(conv.attrs.size(), 3u);
  EXPECT_EQ(conv.attrs[0].name, "stride");
  EXPECT_EQ(conv.attrs[1].name, "padding");
  EXPECT_EQ(conv.attrs[2].name, "groups");
  // A spatial attribute written as one INT stays an int64_t; a list stays a list.
  EXPECT_EQ(conv.attrs[0].value, AttrValue(int64_t(1)));
  EXPECT_EQ(conv.attrs[1].value, AttrValue(IntList{1, 0}));
  EXPECT_EQ(conv.attrs[2].value, AttrValue(int64_t(1)));
  EXPECT_EQ(conv.getSpatial("padding", 2), (IntList{1, 0}));
  EXPECT_EQ(conv.getSpatial("dilation", 2), (IntList{1, 1}));
  EXPECT_EQ(g.type(conv.result), TensorType(DType::F32, {2, 4, 8, 6}));

  // A float attribute written as an INT is stored as a double.
  const Op &gn = g.ops[1];
  ASSERT_EQ(gn.attrs.size(), 2u);
  EXPECT_EQ(gn.attrs[0].name, "groups");
  EXPECT_EQ(gn.attrs[1].value, AttrValue(1.0));
  EXPECT_TRUE(std::holds_alternative<double>(gn.attrs[1].value));

  EXPECT_EQ(g.ops[2].attrs[0].value, AttrValue(0.2));
  // Enum values are stored without their quotes.
  EXPECT_EQ(g.ops[3].attrs[0].value, AttrValue(std::string("tanh")));
  EXPECT_EQ(g.ops[3].unaryParams()[0], 1.0);
  EXPECT_EQ(g.ops[4].attrs[0].value, AttrValue(IntList{-1}));
  EXPECT_EQ(g.ops[4].attrs[1].value, AttrValue(true));
  EXPECT_EQ(g.type(g.ops[4].result), TensorType(DType::F32, {2, 4, 8, 1}));
  // An attribute that was not written is not stored; its default comes from the table.
  EXPECT_FALSE(g.ops[5].hasAttr("stride"));
  EXPECT_EQ(g.ops[5].getSpatial("stride", 2), (IntList{2, 2}));
  EXPECT_EQ(g.results, (std::vector<ValueId>{g.ops[4].result, g.ops[5].result}));
}

TEST(Parser, ScalarOperandsAndNumberSyntax) {
  Graph g = parseOne(R"(
graph nums(%x: f32[3]) {
  %a = add(%x, -1)
  %b = mul(0.5, %a)
  %c = sub(%b, 1e-3)
  %d = div(%c, .25)
  %e = maximum(%d, 2.)
  %f = minimum(1E+3, %e)
  %g = add(%f, -inf)
  %h = clamp(%g) {min = -2, max = inf}
  %i = hardtanh(%h) {min_val = -1.5e-1, max_val = 7}
  return %i
}
)");
  ASSERT_EQ(g.ops.size(), 9u);
  EXPECT_EQ(g.ops[0].operands[1], Operand::ofScalar(-1.0));
  EXPECT_TRUE(g.ops[1].operands[0].isScalar());
  EXPECT_EQ(g.ops[1].operands[0].scalar, 0.5);
  EXPECT_EQ(g.ops[2].operands[1].scalar, 1e-3);
  EXPECT_EQ(g.ops[3].operands[1].scalar, 0.25);
  EXPECT_EQ(g.ops[4].operands[1].scalar, 2.0);
  EXPECT_EQ(g.ops[5].operands[0].scalar, 1000.0);
  EXPECT_TRUE(std::isinf(g.ops[6].operands[1].scalar));
  EXPECT_LT(g.ops[6].operands[1].scalar, 0);
  EXPECT_EQ(g.ops[7].attrs[0].value, AttrValue(-2.0));
  EXPECT_EQ(g.ops[7].getFloat("max"), INFINITY);
  EXPECT_EQ(g.ops[8].getFloat("min_val"), -0.15);
  EXPECT_EQ(g.ops[8].getFloat("max_val"), 7.0);
  for (const Op &op : g.ops)
    EXPECT_EQ(g.type(op.result), TensorType(DType::F32, {3}));
}

TEST(Parser, NotANumberIsAcceptedAsAScalar) {
  // formatDouble prints NaN as `nan` (or `-nan`), so the parser reads both back.
  Graph g = parseOne("graph g(%x: f32[1]) {\n  %y = add(%x, nan)\n  %z = mul(-nan, %y)\n"
                     "  %w = leaky_relu(%z) {negative_slope = nan}\n  return %w\n}\n");
  EXPECT_TRUE(std::isnan(g.ops[0].operands[1].scalar));
  EXPECT_TRUE(std::isnan(g.ops[1].operands[0].scalar));
  EXPECT_TRUE(std::isnan(g.ops[2].getFloat("negative_slope")));
}

TEST(Parser, ScalarsReadBackBitExact) {
  // from_chars rounds correctly, so a 17-digit literal gives exactly the double it names.
  Graph g = parseOne("graph g(%x: f32[1]) {\n  %y = mul(%x, 0.1000000000000000055511151231257827)\n"
                     "  %z = add(%y, 2.2250738585072014e-308)\n  return %z\n}\n");
  EXPECT_EQ(g.ops[0].operands[1].scalar, 0.1);
  EXPECT_EQ(g.ops[1].operands[1].scalar, 2.2250738585072014e-308);
}

TEST(Parser, ValueNamesTypesAndDeclaredTypes) {
  Graph g = parseOne(R"(graph g(%0: f16[2,3], %a.b_1: param bf16[], %s: f32[]) {
  %1 = neg(%0) : f16[2,3]
  %2.x = relu(%1)
  return %2.x, %a.b_1, %s
})");
  EXPECT_EQ(g.values[0].name, "0");
  EXPECT_EQ(g.values[1].name, "a.b_1");
  EXPECT_EQ(g.values[1].type, TensorType(DType::BF16, {}));
  EXPECT_EQ(g.values[1].type.rank(), 0u);
  EXPECT_EQ(g.values[4].name, "2.x");
  EXPECT_EQ(g.type(4), TensorType(DType::F16, {2, 3}));
  // Arguments may be returned directly.
  EXPECT_EQ(g.results, (std::vector<ValueId>{4, 1, 2}));
}

TEST(Parser, WhitespaceAndCommentsAreFree) {
  Graph a = parseOne("graph g(%x:f32[4]){%y=relu(%x)return %y}");
  Graph b = parseOne("# header\n\n graph   g (\n  %x :  # the input\n f32 [ 4 ] )\n{\n"
                     "  %y =\n relu ( %x )  # act\n\n  return\n %y # done\n}\n# trailer");
  EXPECT_EQ(a, b);
  EXPECT_EQ(b.ops[0].loc, (SourceLoc{8, 2}));
  // CRLF line ends are whitespace too.
  Graph c = parseOne("graph g(%x: f32[4]) {\r\n  %y = relu(%x)\r\n  return %y\r\n}\r\n");
  EXPECT_EQ(a, c);
}

TEST(Parser, SeveralGraphsPerFileAndSelection) {
  const char *text = R"(
graph first(%x: f32[4]) {
  %y = relu(%x)
  return %y
}
graph second(%x: f32[2,2]) {
  %y = sum(%x) {dims = [0, 1]}
  return %y
}
)";
  std::vector<Graph> graphs = parseOk(text, "two.sir");
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_EQ(graphs[0].name, "first");
  EXPECT_EQ(graphs[1].name, "second");
  EXPECT_EQ(graphs[1].type(graphs[1].results[0]), TensorType(DType::F32, {}));
  EXPECT_EQ(graphs[1].ops[0].loc, (SourceLoc{7, 8}));

  llvm::Expected<Graph> second = selectGraph(graphs, "second", "two.sir");
  ASSERT_TRUE(bool(second)) << llvm::toString(second.takeError());
  EXPECT_EQ(*second, graphs[1]);

  llvm::Expected<Graph> none = selectGraph(graphs, "third", "two.sir");
  ASSERT_FALSE(none);
  EXPECT_EQ(llvm::toString(none.takeError()),
            "two.sir: no graph named 'third' (graphs: first, second)");

  llvm::Expected<Graph> ambiguous = selectGraph(graphs, "", "two.sir");
  ASSERT_FALSE(ambiguous);
  EXPECT_EQ(llvm::toString(ambiguous.takeError()),
            "two.sir: holds 2 graphs (first, second); pick one with --graph");

  std::vector<Graph> one(graphs.begin(), graphs.begin() + 1);
  llvm::Expected<Graph> only = selectGraph(one, "", "one.sir");
  ASSERT_TRUE(bool(only)) << llvm::toString(only.takeError());
  EXPECT_EQ(only->name, "first");
}

TEST(Parser, ReadsFiles) {
  std::string path = std::string(SINTER_WORKLOADS_DIR) + "/s4_convt3d_grouped.sir";
  llvm::Expected<std::vector<Graph>> graphs = parseSirFile(path);
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  ASSERT_EQ(graphs->size(), 1u);
  EXPECT_EQ((*graphs)[0].file, path);
  EXPECT_EQ((*graphs)[0].locStr((*graphs)[0].ops[0]), path + ":3:8");

  llvm::Expected<std::vector<Graph>> missing = parseSirFile("/nonexistent/dir/x.sir");
  ASSERT_FALSE(missing);
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "cannot read '/nonexistent/dir/x.sir': No such file or directory");
}

TEST(Parser, KeywordsAreOnlyKeywordsInPlace) {
  // `param`, `return` and `graph` are plain words elsewhere, e.g. as value or graph names.
  Graph g = parseOne("graph param(%param: param f32[4], %return: f32[4]) {\n"
                     "  %graph = add(%param, %return)\n  return %graph\n}\n");
  EXPECT_EQ(g.name, "param");
  EXPECT_EQ(g.values[0].kind, ValueKind::Param);
  EXPECT_EQ(g.values[1].kind, ValueKind::Input);
  EXPECT_EQ(g.values[2].name, "graph");
}
