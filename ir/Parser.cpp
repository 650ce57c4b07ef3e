//===- ir/Parser.cpp - the .sir text format reader -----------------------------------===//
//
// A recursive-descent parser for the grammar of ../shared/design/IR.md. It builds each
// graph op by op and types every op as soon as it is read (inferOpType), so an error points
// at the statement that caused it rather than at some later use. Attributes are checked
// against the op's schema in ir/Ops.def while they are read: the schema decides whether `2`
// is an int, a float (stored as a double) or a spatial value, so the graph holds the same
// AttrValue alternatives that the GraphBuilder would store. Parsing stops at the first
// error; the methods return true when they failed (the LLVM parser convention) and the
// message, with its source line and caret, is kept in `error_`.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Parser.h"

#include "ir/Error.h"
#include "ir/Lexer.h"
#include "ir/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

namespace sinter {
namespace {

/// An attribute value as written, before the schema gives it a meaning.
struct Literal {
  enum Kind { Int, Number, Bool, String, Word, List } kind = Int;
  SourceLoc loc;
  llvm::StringRef text; ///< the source text, for "found ..." messages
  int64_t intValue = 0;
  double numberValue = 0;
  bool boolValue = false;
  std::vector<Literal> elements; ///< List only (std::vector allows the incomplete type)
};

/// "a or b", "a, b or c" (enum choices in messages).
std::string joinWith(llvm::ArrayRef<std::string> items, llvm::StringRef last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += i + 1 == items.size() ? last.str() : ", ";
    out += items[i];
  }
  return out;
}

class Parser {
public:
  Parser(llvm::StringRef text, llvm::StringRef fileName)
      : fileName_(fileName.str()), lexer_(text, fileName.empty() ? "<input>" : fileName) {
    tok_ = lexer_.next();
  }

  llvm::Expected<std::vector<Graph>> parseFile();

private:
  // Errors: each returns true so that `return fail(...)` reads as "stop here".
  bool fail(SourceLoc loc, const llvm::Twine &message);
  bool failExpected(llvm::StringRef what);

  void consume() { tok_ = lexer_.next(); }
  bool expect(TokenKind kind, llvm::StringRef what);
  bool isNumberWord(const Token &t) const {
    return t.is(TokenKind::Ident) && (t.text == "inf" || t.text == "nan");
  }

  bool parseGraph(Graph &graph);
  bool parseArg(Graph &graph);
  bool parseType(TensorType &type);
  bool parseStatement(Graph &graph);
  bool parseReturn(Graph &graph);
  bool parseOperand(OpKind kind, unsigned index, Operand &operand);
  bool parseAttrs(Op &op);
  bool parseLiteral(Literal &lit, bool inList);
  bool parseInt(const Token &t, int64_t &value);
  bool parseNumber(const Token &t, double &value);
  bool convertAttr(const Op &op, const AttrSpec &spec, const Literal &lit, AttrValue &value);

  /// Records `%name` defined at `loc`; errors if it already is.
  bool define(llvm::StringRef name, SourceLoc loc);

  /// Re-renders a located message from verifyGraph with the source line and caret.
  std::string withSnippet(llvm::StringRef message) const;

  std::string fileName_;
  Lexer lexer_;
  Token tok_;
  std::optional<std::string> error_;
  /// Per graph: value name -> id, and where it was defined (for redefinition messages).
  llvm::StringMap<ValueId> ids_;
  llvm::StringMap<SourceLoc> defs_;
};

bool Parser::fail(SourceLoc loc, const llvm::Twine &message) {
  if (!error_)
    error_ = lexer_.diagnostic(loc, message.str());
  return true;
}

bool Parser::failExpected(llvm::StringRef what) {
  // A malformed token explains itself better than "expected X".
  if (tok_.is(TokenKind::Error))
    return fail(tok_.loc, tok_.text);
  return fail(tok_.loc, "expected " + what + ", found " + describeToken(tok_));
}

bool Parser::expect(TokenKind kind, llvm::StringRef what) {
  if (!tok_.is(kind))
    return failExpected(what);
  consume();
  return false;
}

std::string Parser::withSnippet(llvm::StringRef message) const {
  llvm::StringRef rest = message;
  unsigned line = 0, col = 0;
  if (!rest.consume_front(lexer_.fileName()) || !rest.consume_front(":") ||
      rest.consumeInteger(10, line) || !rest.consume_front(":") || rest.consumeInteger(10, col) ||
      !rest.consume_front(": "))
    return message.str();
  return lexer_.diagnostic({line, col}, rest);
}

llvm::Expected<std::vector<Graph>> Parser::parseFile() {
  std::vector<Graph> graphs;
  llvm::StringMap<SourceLoc> graphNames;
  do {
    Graph graph;
    graph.file = fileName_;
    if (!tok_.isIdent("graph")) {
      failExpected("'graph'");
      break;
    }
    consume();
    if (!tok_.is(TokenKind::Ident)) {
      failExpected("a graph name");
      break;
    }
    graph.name = tok_.text.str();
    if (!graphNames.try_emplace(tok_.text, tok_.loc).second) {
      fail(tok_.loc, "redefinition of graph '" + graph.name + "' (previous definition at line " +
                         llvm::Twine(graphNames[tok_.text].line) + ")");
      break;
    }
    consume();
    if (parseGraph(graph))
      break;
    if (llvm::Error err = verifyGraph(graph)) {
      error_ = withSnippet(llvm::toString(std::move(err)));
      break;
    }
    graphs.push_back(std::move(graph));
  } while (!tok_.is(TokenKind::Eof));
  if (error_)
    return makeError(*error_);
  return graphs;
}

bool Parser::define(llvm::StringRef name, SourceLoc loc) {
  auto [it, inserted] = defs_.try_emplace(name, loc);
  if (!inserted)
    return fail(loc, "redefinition of value '%" + name + "' (previous definition at line " +
                         llvm::Twine(it->second.line) + ")");
  return false;
}

bool Parser::parseGraph(Graph &graph) {
  ids_.clear();
  defs_.clear();
  if (expect(TokenKind::LParen, "'('"))
    return true;
  if (!tok_.is(TokenKind::RParen)) {
    while (true) {
      if (parseArg(graph))
        return true;
      if (tok_.is(TokenKind::RParen))
        break;
      if (expect(TokenKind::Comma, "',' or ')'"))
        return true;
    }
  }
  consume(); // ')'
  if (expect(TokenKind::LBrace, "'{'"))
    return true;
  while (tok_.is(TokenKind::Value))
    if (parseStatement(graph))
      return true;
  if (!tok_.isIdent("return"))
    return failExpected("a statement or 'return'");
  if (parseReturn(graph))
    return true;
  return expect(TokenKind::RBrace, "',' or '}'");
}

bool Parser::parseArg(Graph &graph) {
  if (!tok_.is(TokenKind::Value))
    return failExpected("an argument such as '%x: f32[4]'");
  Token name = tok_;
  if (define(name.text.drop_front(), name.loc))
    return true;
  consume();
  if (expect(TokenKind::Colon, "':'"))
    return true;
  ValueKind kind = ValueKind::Input;
  if (tok_.isIdent("param")) {
    kind = ValueKind::Param;
    consume();
  }
  Value value;
  value.name = name.text.drop_front().str();
  value.kind = kind;
  if (parseType(value.type))
    return true;
  ValueId id = ValueId(graph.values.size());
  ids_[value.name] = id;
  graph.values.push_back(std::move(value));
  graph.args.push_back(id);
  return false;
}

bool Parser::parseType(TensorType &type) {
  if (!tok_.is(TokenKind::Ident))
    return failExpected("a type such as f32[2,3]");
  std::optional<DType> dtype = parseDType(tok_.text);
  if (!dtype)
    return fail(tok_.loc, "unknown element type '" + tok_.text + "' (expected f32, f16 or bf16)");
  consume();
  type = TensorType(*dtype, {});
  if (expect(TokenKind::LBracket, "'['"))
    return true;
  if (tok_.is(TokenKind::RBracket)) {
    consume();
    return false;
  }
  while (true) {
    if (!tok_.is(TokenKind::Int))
      return failExpected("a dimension size");
    int64_t size = 0;
    if (parseInt(tok_, size))
      return true;
    if (size < 1)
      return fail(tok_.loc, "dimension size must be positive, got " + tok_.text);
    type.shape.push_back(size);
    consume();
    if (tok_.is(TokenKind::RBracket)) {
      consume();
      return false;
    }
    if (expect(TokenKind::Comma, "',' or ']'"))
      return true;
  }
}

bool Parser::parseStatement(Graph &graph) {
  Token name = tok_;
  if (define(name.text.drop_front(), name.loc))
    return true;
  consume();
  if (expect(TokenKind::Equal, "'='"))
    return true;
  if (!tok_.is(TokenKind::Ident))
    return failExpected("an op name");
  std::optional<OpKind> kind = lookupOp(tok_.text);
  if (!kind)
    return fail(tok_.loc, "unknown op '" + tok_.text + "'");
  Op op{*kind, {}, {}, -1, tok_.loc};
  const OpInfo &info = op.info();
  consume();

  if (expect(TokenKind::LParen, "'('"))
    return true;
  if (!tok_.is(TokenKind::RParen)) {
    while (true) {
      Operand operand;
      if (parseOperand(op.kind, op.operands.size(), operand))
        return true;
      op.operands.push_back(operand);
      if (tok_.is(TokenKind::RParen))
        break;
      if (expect(TokenKind::Comma, "',' or ')'"))
        return true;
    }
  }
  consume(); // ')'
  if (tok_.is(TokenKind::LBrace) && parseAttrs(op))
    return true;
  // Operand counts (with the all-or-none rule of the norms) and required attributes are
  // checked by inferOpType below, in the same words as for a graph built in C++; the error
  // points at the op's name.

  std::optional<TensorType> declared;
  SourceLoc declaredLoc;
  if (tok_.is(TokenKind::Colon)) {
    consume();
    declaredLoc = tok_.loc;
    declared.emplace();
    if (parseType(*declared))
      return true;
  }

  Value value;
  value.name = name.text.drop_front().str();
  value.kind = ValueKind::Result;
  value.def = int(graph.ops.size());
  op.result = ValueId(graph.values.size());
  ids_[value.name] = op.result;
  graph.values.push_back(std::move(value));
  graph.ops.push_back(std::move(op));

  const Op &added = graph.ops.back();
  llvm::Expected<TensorType> inferred = inferOpType(graph, added);
  if (!inferred)
    return fail(added.loc, llvm::toString(inferred.takeError()));
  if (declared && *declared != *inferred)
    return fail(declaredLoc, info.name + ": declared type " + declared->str() +
                                 " does not match inferred type " + inferred->str());
  graph.values[added.result].type = *inferred;
  return false;
}

bool Parser::parseOperand(OpKind kind, unsigned index, Operand &operand) {
  if (tok_.is(TokenKind::Value)) {
    auto it = ids_.find(tok_.text.drop_front());
    if (it == ids_.end())
      return fail(tok_.loc, "use of undefined value '" + tok_.text + "'");
    operand = Operand::ofValue(it->second);
    consume();
    return false;
  }
  if (tok_.is(TokenKind::Int) || tok_.is(TokenKind::Number) || isNumberWord(tok_)) {
    if (!isBinary(kind))
      return fail(tok_.loc, opName(kind) + ": operand " + llvm::Twine(index) +
                                " must be a tensor, got the number " + tok_.text);
    double scalar = 0;
    if (parseNumber(tok_, scalar))
      return true;
    operand = Operand::ofScalar(scalar);
    consume();
    return false;
  }
  return failExpected("an operand (a '%value' or a number)");
}

bool Parser::parseReturn(Graph &graph) {
  consume(); // 'return'
  while (true) {
    if (!tok_.is(TokenKind::Value))
      return failExpected("a returned '%value'");
    auto it = ids_.find(tok_.text.drop_front());
    if (it == ids_.end())
      return fail(tok_.loc, "use of undefined value '" + tok_.text + "'");
    graph.results.push_back(it->second);
    consume();
    if (!tok_.is(TokenKind::Comma))
      return false;
    consume();
  }
}

bool Parser::parseAttrs(Op &op) {
  const OpInfo &info = op.info();
  consume(); // '{'
  while (true) {
    if (!tok_.is(TokenKind::Ident))
      return failExpected("an attribute name");
    Token name = tok_;
    const AttrSpec *spec = info.findAttr(name.text);
    if (!spec) {
      std::string known;
      for (const AttrSpec &s : info.attrs)
        known += (known.empty() ? "" : ", ") + s.name;
      return fail(name.loc,
                  info.name + ": unknown attribute '" + name.text + "' (" + info.name +
                      (known.empty() ? " takes no attributes)" : " takes " + known + ")"));
    }
    if (op.hasAttr(spec->name))
      return fail(name.loc, info.name + ": attribute '" + name.text + "' given twice");
    consume();
    if (expect(TokenKind::Equal, "'='"))
      return true;
    Literal lit;
    AttrValue value;
    if (parseLiteral(lit, /*inList=*/false) || convertAttr(op, *spec, lit, value))
      return true;
    op.setAttr(spec->name, std::move(value));
    if (tok_.is(TokenKind::RBrace)) {
      consume();
      return false;
    }
    if (expect(TokenKind::Comma, "',' or '}'"))
      return true;
  }
}

bool Parser::parseInt(const Token &t, int64_t &value) {
  if (t.text.getAsInteger(10, value))
    return fail(t.loc, "integer literal '" + t.text + "' is out of range");
  return false;
}

bool Parser::parseNumber(const Token &t, double &value) {
  llvm::StringRef text = t.text;
  if (text == "inf" || text == "-inf") {
    value = text == "inf" ? std::numeric_limits<double>::infinity()
                          : -std::numeric_limits<double>::infinity();
    return false;
  }
  if (text == "nan" || text == "-nan") {
    value = std::numeric_limits<double>::quiet_NaN();
    return false;
  }
  // from_chars rounds correctly, so the printer's shortest form reads back bit-exact.
  auto [end, ec] = std::from_chars(text.begin(), text.end(), value);
  if (ec == std::errc::result_out_of_range || !std::isfinite(value))
    return fail(t.loc, "number '" + text + "' is out of range");
  if (ec != std::errc() || end != text.end())
    return fail(t.loc, "malformed number '" + text + "'");
  return false;
}

bool Parser::parseLiteral(Literal &lit, bool inList) {
  lit.loc = tok_.loc;
  lit.text = tok_.text;
  switch (tok_.kind) {
  case TokenKind::Int:
    lit.kind = Literal::Int;
    if (parseInt(tok_, lit.intValue))
      return true;
    break;
  case TokenKind::Number:
    lit.kind = Literal::Number;
    if (parseNumber(tok_, lit.numberValue))
      return true;
    break;
  case TokenKind::String:
    lit.kind = Literal::String;
    break;
  case TokenKind::Ident:
    if (tok_.text == "true" || tok_.text == "false") {
      lit.kind = Literal::Bool;
      lit.boolValue = tok_.text == "true";
    } else if (isNumberWord(tok_)) {
      lit.kind = Literal::Number;
      if (parseNumber(tok_, lit.numberValue))
        return true;
    } else {
      // A bare word is no value, but the schema can say what was meant (`approximate = tanh`).
      lit.kind = Literal::Word;
    }
    break;
  case TokenKind::LBracket: {
    if (inList)
      return failExpected("an integer");
    lit.kind = Literal::List;
    const char *begin = tok_.text.begin();
    consume();
    while (!tok_.is(TokenKind::RBracket)) {
      Literal element;
      if (parseLiteral(element, /*inList=*/true))
        return true;
      lit.elements.push_back(std::move(element));
      if (tok_.is(TokenKind::RBracket))
        break;
      if (expect(TokenKind::Comma, "',' or ']'"))
        return true;
    }
    lit.text = llvm::StringRef(begin, tok_.text.end() - begin);
    break;
  }
  case TokenKind::Value:
  case TokenKind::LParen:
  case TokenKind::RParen:
  case TokenKind::LBrace:
  case TokenKind::RBrace:
  case TokenKind::RBracket:
  case TokenKind::Comma:
  case TokenKind::Colon:
  case TokenKind::Equal:
  case TokenKind::Eof:
  case TokenKind::Error:
    return failExpected(inList ? "an integer" : "an attribute value");
  }
  consume();
  return false;
}

bool Parser::convertAttr(const Op &op, const AttrSpec &spec, const Literal &lit, AttrValue &value) {
  std::string prefix = op.name().str() + ": attribute '" + spec.name + "' must be ";
  auto mismatch = [&](const Literal &at, llvm::StringRef expected, llvm::StringRef hint = "") {
    return fail(at.loc, prefix + expected + ", got " + at.text + hint);
  };
  auto intList = [&](IntList &out) {
    for (const Literal &e : lit.elements) {
      if (e.kind != Literal::Int)
        return mismatch(e, "a list of ints");
      out.push_back(e.intValue);
    }
    return false;
  };
  switch (spec.kind) {
  case AttrKind::Int:
    if (lit.kind != Literal::Int)
      return mismatch(lit, "an int");
    value = lit.intValue;
    return false;
  case AttrKind::Float:
    // An INT is a fine way to write a float (`beta = 1`); the graph stores a double either way.
    if (lit.kind == Literal::Int)
      value = double(lit.intValue);
    else if (lit.kind == Literal::Number)
      value = lit.numberValue;
    else
      return mismatch(lit, "a number");
    return false;
  case AttrKind::Bool:
    if (lit.kind != Literal::Bool)
      return mismatch(lit, "a bool");
    value = lit.boolValue;
    return false;
  case AttrKind::Enum: {
    std::vector<std::string> quoted;
    for (const std::string &c : spec.choices)
      quoted.push_back("\"" + c + "\"");
    std::string choices = joinWith(quoted, " or ");
    if (lit.kind != Literal::String)
      return mismatch(lit, "one of " + choices);
    llvm::StringRef text = lit.text.drop_front().drop_back();
    if (!llvm::is_contained(spec.choices, text))
      return mismatch(lit, "one of " + choices);
    value = text.str();
    return false;
  }
  case AttrKind::Ints: {
    // Strict on purpose: `dims = 1` could mean a list or a count, so a list is required.
    if (lit.kind == Literal::Int)
      return mismatch(lit, "a list of ints", " (write [" + lit.text.str() + "])");
    if (lit.kind != Literal::List)
      return mismatch(lit, "a list of ints");
    IntList list;
    if (intList(list))
      return true;
    value = std::move(list);
    return false;
  }
  case AttrKind::Spatial: {
    if (lit.kind == Literal::Int) {
      value = lit.intValue;
      return false;
    }
    if (lit.kind != Literal::List)
      return mismatch(lit, "an int or a list of ints");
    IntList list;
    if (intList(list))
      return true;
    value = std::move(list);
    return false;
  }
  }
  llvm_unreachable("unknown attribute kind");
}

} // namespace

llvm::Expected<std::vector<Graph>> parseSir(llvm::StringRef text, llvm::StringRef fileName) {
  Parser parser(text, fileName);
  return parser.parseFile();
}

llvm::Expected<std::vector<Graph>> parseSirFile(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return makeError("cannot read '" + path + "': " + buffer.getError().message());
  return parseSir((*buffer)->getBuffer(), path);
}

llvm::Expected<Graph> selectGraph(std::vector<Graph> graphs, llvm::StringRef name,
                                  llvm::StringRef fileName) {
  std::string names;
  for (const Graph &g : graphs)
    names += (names.empty() ? "" : ", ") + g.name;
  if (name.empty()) {
    if (graphs.size() == 1)
      return std::move(graphs.front());
    if (graphs.empty())
      return makeError(fileName + ": holds no graphs");
    return makeError(fileName + ": holds " + llvm::Twine(graphs.size()) + " graphs (" + names +
                     "); pick one with --graph");
  }
  for (Graph &g : graphs)
    if (g.name == name)
      return std::move(g);
  return makeError(fileName + ": no graph named '" + name + "' (graphs: " + names + ")");
}

} // namespace sinter
