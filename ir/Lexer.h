//===- ir/Lexer.h - tokens of the .sir text format ---------------------------------===//
//
// Splits .sir text into tokens for ir/Parser.cpp and renders diagnostics. The lexer knows
// the token classes of the grammar in ../shared/design/IR.md (identifiers, `%values`,
// integers, numbers, strings, punctuation); keywords such as `graph`, `param` or `true` are
// plain identifiers that the parser recognises by context, so op and graph names are never
// shadowed by them. Malformed input (a stray character, `1e`, an unterminated string) comes
// back as an Error token carrying the message, so the parser reports it like any other
// syntax error. Every diagnostic reads `file:line:col: message`, then the source line and a
// caret under the column.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>

namespace sinter {

enum class TokenKind : uint8_t {
  Ident,    ///< [A-Za-z_][A-Za-z0-9_]*
  Value,    ///< %[A-Za-z0-9_.]+ (text includes the '%')
  Int,      ///< -?[0-9]+
  Number,   ///< a literal with a '.' or an exponent, or `-inf`, `-nan`
  String,   ///< "..." (text includes the quotes; no escapes)
  LParen,   ///< (
  RParen,   ///< )
  LBrace,   ///< {
  RBrace,   ///< }
  LBracket, ///< [
  RBracket, ///< ]
  Comma,    ///< ,
  Colon,    ///< :
  Equal,    ///< =
  Eof,
  Error, ///< malformed input; Token::text is the message
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef text;
  SourceLoc loc;

  bool is(TokenKind k) const { return kind == k; }
  bool isIdent(llvm::StringRef word) const { return kind == TokenKind::Ident && text == word; }
};

/// How a token reads in "expected X, found Y" messages, e.g. `'{'` or `end of file`.
std::string describeToken(const Token &token);

class Lexer {
public:
  Lexer(llvm::StringRef text, llvm::StringRef fileName);

  /// The next token; Eof forever at the end.
  Token next();

  llvm::StringRef fileName() const { return fileName_; }

  /// `file:line:col: message`, the source line, and a caret under the column.
  std::string diagnostic(SourceLoc loc, llvm::StringRef message) const;

  /// The text of line `line` (1-based) without its newline.
  llvm::StringRef lineText(unsigned line) const;

private:
  Token make(TokenKind kind, size_t begin, SourceLoc loc);
  Token error(SourceLoc loc, std::string message);
  Token lexNumber(size_t begin, SourceLoc loc);
  void skipSpaceAndComments();
  void advance();
  SourceLoc here() const { return {line_, unsigned(pos_ - lineStarts_[line_ - 1]) + 1}; }

  llvm::StringRef text_;
  std::string fileName_;
  size_t pos_ = 0;
  unsigned line_ = 1;
  llvm::SmallVector<size_t, 64> lineStarts_; ///< offset of each line, computed up front
  /// Error tokens' text points into these; the pointers keep the strings' addresses stable.
  llvm::SmallVector<std::unique_ptr<std::string>, 1> messages_;
};

} // namespace sinter
