//===- tests/ir/ParseErrorTest.cpp - every class of .sir error, word for word --------===//
//
// Each test feeds the parser a small graph with one mistake and asserts the exact message:
// `file:line:col: what is wrong` on the first line, then (checked in full by a few tests) the
// source line and a caret under the column. Shape errors come from inferOpType
// (ir/Verifier.cpp); these tests pin the parser's location in front of that wording.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace sinter;

namespace {

/// The full error text of parsing `text` as t.sir, or "<no error>".
std::string errorOf(llvm::StringRef text, llvm::StringRef file = "t.sir") {
  llvm::Expected<std::vector<Graph>> graphs = parseSir(text, file);
  if (graphs)
    return "<no error>";
  return llvm::toString(graphs.takeError());
}

/// The first line of the error: `file:line:col: message`.
std::string firstLine(llvm::StringRef text) {
  std::string err = errorOf(text);
  return err.substr(0, err.find('\n'));
}

/// A one-op graph over `%x: f32[2,4,6,6]` with `stmt` as its only statement (line 2).
std::string oneOp(llvm::StringRef stmt) {
  return "graph g(%x: f32[2,4,6,6], %w: param f32[8,4,3,3], %g: param f32[4]) {\n  " + stmt.str() +
         "\n  return %y\n}\n";
}

} // namespace

TEST(ParseError, MessageCarriesTheSourceLineAndACaret) {
  EXPECT_EQ(errorOf("graph g(%x: f32[4]) {\n  %y = relu(%x) $\n  return %y\n}\n"),
            "t.sir:2:17: unexpected character '$'\n"
            "  %y = relu(%x) $\n"
            "                ^");
}

TEST(ParseError, CaretKeepsTabsSoItLinesUpInATerminal) {
  EXPECT_EQ(errorOf("graph g(%x: f32[4]) {\n\t%y = reluu(%x)\n\treturn %y\n}\n"),
            "t.sir:2:7: unknown op 'reluu'\n"
            "\t%y = reluu(%x)\n"
            "\t     ^");
}

TEST(ParseError, ShapeErrorFromInferenceIsLocatedAtTheOpName) {
  std::ifstream in(std::string(SINTER_WORKLOADS_DIR) + "/s0_convt3d_relu_gn.sir");
  ASSERT_TRUE(in) << "cannot open the S0 workload";
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  size_t at = text.find("groups = 8");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 10, "groups = 7");
  EXPECT_EQ(errorOf(text, "s0.sir"),
            "s0.sir:6:8: group_norm: groups=7 does not divide C=128\n"
            "  %o = group_norm(%r, %gamma, %beta) {groups = 7, eps = 1e-5}\n"
            "       ^");
}

TEST(ParseError, BadTokens) {
  EXPECT_EQ(firstLine(oneOp("%y = relu(%x) \xe2\x80\x94 note")),
            "t.sir:2:17: unexpected byte 0xe2 (outside comments and strings only ASCII is "
            "allowed)");
  EXPECT_EQ(firstLine(oneOp("%y = relu(%x) # \xe2\x80\x94 a comment may hold any text")),
            "<no error>");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups = 2, eps = 1e}")),
            "t.sir:2:42: malformed number '1e'");
  EXPECT_EQ(firstLine(oneOp("%y = gelu(%x) {approximate = \"tanh}")),
            "t.sir:2:32: unterminated string");
  EXPECT_EQ(firstLine(oneOp("%y = add(%x, 3x)")), "t.sir:2:16: malformed number '3x'");
  EXPECT_EQ(firstLine(oneOp("%y = relu(%)")), "t.sir:2:13: expected a value name after '%'");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups = 99999999999999999999}")),
            "t.sir:2:33: integer literal '99999999999999999999' is out of range");
  // A number operand is a double, so a long INT there is fine.
  EXPECT_EQ(firstLine(oneOp("%y = add(%x, 99999999999999999999)")), "<no error>");
  EXPECT_EQ(firstLine(oneOp("%y = add(%x, 1e999)")), "t.sir:2:16: number '1e999' is out of range");
}

TEST(ParseError, UnexpectedTokens) {
  EXPECT_EQ(firstLine(""), "t.sir:1:1: expected 'graph', found end of file");
  EXPECT_EQ(firstLine("# only a comment\n"), "t.sir:2:1: expected 'graph', found end of file");
  EXPECT_EQ(firstLine("grap g() {}"), "t.sir:1:1: expected 'graph', found 'grap'");
  EXPECT_EQ(firstLine("graph (%x: f32[1]) {}"), "t.sir:1:7: expected a graph name, found '('");
  EXPECT_EQ(firstLine(oneOp("%y relu(%x)")), "t.sir:2:6: expected '=', found 'relu'");
  EXPECT_EQ(firstLine(oneOp("%y = relu(%x return %y")),
            "t.sir:2:16: expected ',' or ')', found 'return'");
  EXPECT_EQ(firstLine(oneOp("%y = = relu(%x)")), "t.sir:2:8: expected an op name, found '='");
  EXPECT_EQ(firstLine(oneOp("%y = relu(,)")),
            "t.sir:2:13: expected an operand (a '%value' or a number), found ','");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups 2}")),
            "t.sir:2:31: expected '=', found '2'");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups = 2,}")),
            "t.sir:2:35: expected an attribute name, found '}'");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups = 2 eps = 1.0}")),
            "t.sir:2:35: expected ',' or '}', found 'eps'");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups = }")),
            "t.sir:2:33: expected an attribute value, found '}'");
  EXPECT_EQ(firstLine(oneOp("%y = mean(%x) {dims = [1 2]}")),
            "t.sir:2:28: expected ',' or ']', found '2'");
  EXPECT_EQ(firstLine(oneOp("%y = mean(%x) {dims = [[1]]}")),
            "t.sir:2:26: expected an integer, found '['");
  EXPECT_EQ(firstLine("graph g(%x: f32[4]) {\n}\n"),
            "t.sir:2:1: expected a statement or 'return', found '}'");
  EXPECT_EQ(firstLine("graph g(%x: f32[4]) {\n  return\n}\n"),
            "t.sir:3:1: expected a returned '%value', found '}'");
  EXPECT_EQ(firstLine("graph g(%x: f32[4]) {\n  return %x %x\n}\n"),
            "t.sir:2:13: expected ',' or '}', found '%x'");
  EXPECT_EQ(firstLine("graph g(x: f32[4]) {\n  return %x\n}\n"),
            "t.sir:1:9: expected an argument such as '%x: f32[4]', found 'x'");
  EXPECT_EQ(firstLine("graph g(%x f32[4]) {\n  return %x\n}\n"),
            "t.sir:1:12: expected ':', found 'f32'");
  EXPECT_EQ(firstLine("graph g(%x: f32[4]) {\n  return %x\n}\ngraph"),
            "t.sir:4:6: expected a graph name, found end of file");
}

TEST(ParseError, BadTypes) {
  EXPECT_EQ(firstLine("graph g(%x: f64[4]) {\n  return %x\n}\n"),
            "t.sir:1:13: unknown element type 'f64' (expected f32, f16 or bf16)");
  EXPECT_EQ(firstLine("graph g(%x: [4]) {\n  return %x\n}\n"),
            "t.sir:1:13: expected a type such as f32[2,3], found '['");
  EXPECT_EQ(firstLine("graph g(%x: f32[4, 0]) {\n  return %x\n}\n"),
            "t.sir:1:20: dimension size must be positive, got 0");
  EXPECT_EQ(firstLine("graph g(%x: f32[4, -2]) {\n  return %x\n}\n"),
            "t.sir:1:20: dimension size must be positive, got -2");
  EXPECT_EQ(firstLine("graph g(%x: f32[4.0]) {\n  return %x\n}\n"),
            "t.sir:1:17: expected a dimension size, found '4.0'");
  EXPECT_EQ(firstLine("graph g(%x: f32(4)) {\n  return %x\n}\n"),
            "t.sir:1:16: expected '[', found '('");
}

TEST(ParseError, UnknownOp) {
  EXPECT_EQ(firstLine(oneOp("%y = convolution(%x, %w)")), "t.sir:2:8: unknown op 'convolution'");
}

TEST(ParseError, UnknownAttribute) {
  EXPECT_EQ(firstLine(oneOp("%y = conv(%x, %w) {strides = 2}")),
            "t.sir:2:22: conv: unknown attribute 'strides' (conv takes stride, padding, "
            "dilation, groups)");
  EXPECT_EQ(firstLine(oneOp("%y = relu(%x) {alpha = 1.0}")),
            "t.sir:2:18: relu: unknown attribute 'alpha' (relu takes no attributes)");
}

TEST(ParseError, IllTypedAttribute) {
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups = 1.5}")),
            "t.sir:2:33: group_norm: attribute 'groups' must be an int, got 1.5");
  EXPECT_EQ(firstLine(oneOp("%y = mean(%x) {dims = 2}")),
            "t.sir:2:25: mean: attribute 'dims' must be a list of ints, got 2 (write [2])");
  EXPECT_EQ(firstLine(oneOp("%y = mean(%x) {dims = [1, 2.0]}")),
            "t.sir:2:29: mean: attribute 'dims' must be a list of ints, got 2.0");
  EXPECT_EQ(firstLine(oneOp("%y = mean(%x) {dims = true}")),
            "t.sir:2:25: mean: attribute 'dims' must be a list of ints, got true");
  EXPECT_EQ(firstLine(oneOp("%y = conv(%x, %w) {stride = 1.0}")),
            "t.sir:2:31: conv: attribute 'stride' must be an int or a list of ints, got 1.0");
  EXPECT_EQ(firstLine(oneOp("%y = conv(%x, %w) {padding = [1, \"a\"]}")),
            "t.sir:2:36: conv: attribute 'padding' must be a list of ints, got \"a\"");
  EXPECT_EQ(firstLine(oneOp("%y = leaky_relu(%x) {negative_slope = \"big\"}")),
            "t.sir:2:41: leaky_relu: attribute 'negative_slope' must be a number, got \"big\"");
  EXPECT_EQ(firstLine(oneOp("%y = sum(%x) {dims = [0], keepdim = 1}")),
            "t.sir:2:39: sum: attribute 'keepdim' must be a bool, got 1");
  EXPECT_EQ(firstLine(oneOp("%y = gelu(%x) {approximate = \"exact\"}")),
            "t.sir:2:32: gelu: attribute 'approximate' must be one of \"none\" or \"tanh\", got "
            "\"exact\"");
  // An unquoted enum value is a likely slip; the message shows what is expected.
  EXPECT_EQ(firstLine(oneOp("%y = gelu(%x) {approximate = tanh}")),
            "t.sir:2:32: gelu: attribute 'approximate' must be one of \"none\" or \"tanh\", got "
            "tanh");
}

TEST(ParseError, DuplicateAndMissingAttributes) {
  EXPECT_EQ(firstLine(oneOp("%y = conv(%x, %w) {stride = 1, stride = 2}")),
            "t.sir:2:34: conv: attribute 'stride' given twice");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x)")),
            "t.sir:2:8: group_norm: missing required attribute 'groups'");
  EXPECT_EQ(firstLine(oneOp("%y = max_pool(%x) {stride = 2}")),
            "t.sir:2:8: max_pool: missing required attribute 'kernel_size'");
}

TEST(ParseError, WrongOperandCount) {
  EXPECT_EQ(firstLine(oneOp("%y = relu(%x, %x)")), "t.sir:2:8: relu: expected 1 operand, got 2");
  EXPECT_EQ(firstLine(oneOp("%y = conv(%x)")), "t.sir:2:8: conv: expected 2 or 3 operands, got 1");
  EXPECT_EQ(firstLine(oneOp("%y = add(%x)")), "t.sir:2:8: add: expected 2 operands, got 1");
  EXPECT_EQ(firstLine(oneOp("%y = relu()")), "t.sir:2:8: relu: expected 1 operand, got 0");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x, %g) {groups = 2}")),
            "t.sir:2:8: group_norm: expected 1 or 3 operands (gamma and beta come together), "
            "got 2");
}

TEST(ParseError, NumberOperandOnlyForBinaryOps) {
  EXPECT_EQ(firstLine(oneOp("%y = relu(2)")),
            "t.sir:2:13: relu: operand 0 must be a tensor, got the number 2");
  EXPECT_EQ(firstLine(oneOp("%y = conv(%x, 0.5)")),
            "t.sir:2:17: conv: operand 1 must be a tensor, got the number 0.5");
  EXPECT_EQ(firstLine(oneOp("%y = add(1, 2)")),
            "t.sir:2:8: add: expected at least one tensor operand, got only numbers");
}

TEST(ParseError, UseBeforeDefinition) {
  EXPECT_EQ(firstLine(oneOp("%y = relu(%z)")), "t.sir:2:13: use of undefined value '%z'");
  // A value is defined by its statement, so it cannot feed itself.
  EXPECT_EQ(firstLine(oneOp("%y = add(%x, %y)")), "t.sir:2:16: use of undefined value '%y'");
  EXPECT_EQ(firstLine("graph g(%x: f32[4]) {\n  %y = relu(%x)\n  return %z\n}\n"),
            "t.sir:3:10: use of undefined value '%z'");
  // Values belong to their graph.
  EXPECT_EQ(firstLine("graph a(%x: f32[4]) {\n  return %x\n}\n"
                      "graph b(%y: f32[4]) {\n  return %x\n}\n"),
            "t.sir:5:10: use of undefined value '%x'");
}

TEST(ParseError, Redefinition) {
  EXPECT_EQ(firstLine(oneOp("%x = relu(%x)")),
            "t.sir:2:3: redefinition of value '%x' (previous definition at line 1)");
  EXPECT_EQ(firstLine("graph g(%x: f32[4],\n        %x: f32[4]) {\n  return %x\n}\n"),
            "t.sir:2:9: redefinition of value '%x' (previous definition at line 1)");
  EXPECT_EQ(firstLine("graph g(%x: f32[4]) {\n  %y = relu(%x)\n  %y = neg(%y)\n  return %y\n}\n"),
            "t.sir:3:3: redefinition of value '%y' (previous definition at line 2)");
  EXPECT_EQ(firstLine("graph g(%x: f32[4]) {\n  return %x\n}\n"
                      "graph g(%x: f32[4]) {\n  return %x\n}\n"),
            "t.sir:4:7: redefinition of graph 'g' (previous definition at line 1)");
}

TEST(ParseError, DeclaredTypeDisagreesWithInference) {
  EXPECT_EQ(firstLine("graph g(%x: f32[2,4]) {\n  %y = relu(%x) : f32[2,3]\n  return %y\n}\n"),
            "t.sir:2:19: relu: declared type f32[2,3] does not match inferred type f32[2,4]");
  EXPECT_EQ(firstLine("graph g(%x: f32[2,4]) {\n  %y = relu(%x) : f16[2,4]\n  return %y\n}\n"),
            "t.sir:2:19: relu: declared type f16[2,4] does not match inferred type f32[2,4]");
}

TEST(ParseError, ShapeErrors) {
  // Channel mismatch: x has 4 channels, w expects 3.
  EXPECT_EQ(firstLine("graph g(%x: f32[1,4,8,8], %w: param f32[6,3,3,3]) {\n"
                      "  %y = conv(%x, %w)\n  return %y\n}\n"),
            "t.sir:2:8: conv: x has 4 channels but w expects 3 (w[1]=3 times groups=1)");
  EXPECT_EQ(firstLine(oneOp("%y = group_norm(%x) {groups = 3}")),
            "t.sir:2:8: group_norm: groups=3 does not divide C=4");
  EXPECT_EQ(firstLine("graph g(%a: f32[2,3], %b: f32[4]) {\n  %y = add(%a, %b)\n  return %y\n}\n"),
            "t.sir:2:8: add: shapes [2,3] and [4] do not broadcast");
  EXPECT_EQ(firstLine(oneOp("%y = mean(%x) {dims = [1, 4]}")),
            "t.sir:2:8: mean: dim 4 out of range for rank 4");
  EXPECT_EQ(firstLine(oneOp("%y = sum(%x) {dims = [1, -3]}")),
            "t.sir:2:8: sum: dim 1 appears more than once in dims");
  EXPECT_EQ(firstLine(oneOp("%y = softmax(%x) {dim = -5}")),
            "t.sir:2:8: softmax: dim -5 out of range for rank 4");
}

TEST(ParseError, ErrorsInALaterGraphPointIntoIt) {
  EXPECT_EQ(firstLine("graph a(%x: f32[4]) {\n  return %x\n}\n\n"
                      "graph b(%x: f32[4]) {\n  %y = relu(%x) {alpha = 1.0}\n  return %y\n}\n"),
            "t.sir:6:18: relu: unknown attribute 'alpha' (relu takes no attributes)");
}

TEST(ParseError, UnnamedInputReadsAsInput) {
  llvm::Expected<std::vector<Graph>> graphs = parseSir("graph", "");
  ASSERT_FALSE(graphs);
  EXPECT_EQ(llvm::toString(graphs.takeError()),
            "<input>:1:6: expected a graph name, found end of file\ngraph\n     ^");
}
