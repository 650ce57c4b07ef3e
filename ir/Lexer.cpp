//===- ir/Lexer.cpp - tokens of the .sir text format --------------------------------===//
//
// A hand-written scanner over the whole file held in memory. Columns count bytes from 1;
// tabs count as one column, and the caret line of a diagnostic copies the tabs of the source
// line so that the caret still lands under the right character in a terminal.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Lexer.h"

#include "llvm/ADT/StringExtras.h"

#include <cassert>

namespace sinter {
namespace {

bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }
bool isValueChar(char c) { return llvm::isAlnum(c) || c == '_' || c == '.'; }

/// The message for a character that starts no token.
std::string unexpected(char c) {
  if (llvm::isPrint(c))
    return std::string("unexpected character '") + c + "'";
  return "unexpected byte 0x" + llvm::utohexstr(static_cast<unsigned char>(c), /*LowerCase=*/true) +
         " (outside comments and strings only ASCII is allowed)";
}

} // namespace

std::string describeToken(const Token &token) {
  switch (token.kind) {
  case TokenKind::Eof:
    return "end of file";
  case TokenKind::String:
    return token.text.str();
  case TokenKind::Error:
    return "malformed input";
  case TokenKind::Ident:
  case TokenKind::Value:
  case TokenKind::Int:
  case TokenKind::Number:
  case TokenKind::LParen:
  case TokenKind::RParen:
  case TokenKind::LBrace:
  case TokenKind::RBrace:
  case TokenKind::LBracket:
  case TokenKind::RBracket:
  case TokenKind::Comma:
  case TokenKind::Colon:
  case TokenKind::Equal: {
    // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "'" + std::string + "'".
    std::string quoted = "'";
    quoted += token.text;
    quoted += '\'';
    return quoted;
  }
  }
  llvm_unreachable("unknown token kind");
}

Lexer::Lexer(llvm::StringRef text, llvm::StringRef fileName)
    : text_(text), fileName_(fileName.str()) {
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      lineStarts_.push_back(i + 1);
}

llvm::StringRef Lexer::lineText(unsigned line) const {
  assert(line >= 1 && line <= lineStarts_.size() && "line outside the file");
  llvm::StringRef rest = text_.substr(lineStarts_[line - 1]);
  llvm::StringRef lineStr = rest.take_until([](char c) { return c == '\n'; });
  return lineStr.rtrim('\r');
}

std::string Lexer::diagnostic(SourceLoc loc, llvm::StringRef message) const {
  std::string out = fileName_ + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) +
                    ": " + message.str();
  if (!loc.valid() || loc.line > lineStarts_.size())
    return out;
  llvm::StringRef source = lineText(loc.line);
  out += '\n';
  out += source;
  out += '\n';
  for (unsigned i = 0; i + 1 < loc.col; ++i)
    out += i < source.size() && source[i] == '\t' ? '\t' : ' ';
  out += '^';
  return out;
}

void Lexer::advance() {
  if (text_[pos_] == '\n')
    ++line_;
  ++pos_;
}

void Lexer::skipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n')
        ++pos_;
    } else if (llvm::isSpace(c)) {
      advance();
    } else {
      return;
    }
  }
}

Token Lexer::make(TokenKind kind, size_t begin, SourceLoc loc) {
  return Token{kind, text_.slice(begin, pos_), loc};
}

Token Lexer::error(SourceLoc loc, std::string message) {
  messages_.push_back(std::make_unique<std::string>(std::move(message)));
  return Token{TokenKind::Error, *messages_.back(), loc};
}

Token Lexer::lexNumber(size_t begin, SourceLoc loc) {
  auto digits = [&] {
    size_t start = pos_;
    while (pos_ < text_.size() && llvm::isDigit(text_[pos_]))
      ++pos_;
    return pos_ > start;
  };
  if (pos_ < text_.size() && text_[pos_] == '-')
    ++pos_;
  // `-inf` and `-nan` are the negative literals not made of digits; formatDouble writes
  // them for a float attribute or scalar that holds such a value.
  llvm::StringRef rest = text_.substr(pos_);
  if ((rest.startswith("inf") || rest.startswith("nan")) &&
      (rest.size() == 3 || !isIdentChar(rest[3]))) {
    pos_ += 3;
    return make(TokenKind::Number, begin, loc);
  }
  bool isFloat = false;
  bool whole = digits();
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    isFloat = true;
    bool fraction = digits();
    whole = whole || fraction;
  }
  bool ok = whole;
  if (ok && pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    isFloat = true;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
      ++pos_;
    ok = digits();
  }
  // A literal glued to letters (`3x`, `1.5f`) is a typo, not two tokens.
  if (pos_ < text_.size() && (isIdentChar(text_[pos_]) || text_[pos_] == '.')) {
    ok = false;
    while (pos_ < text_.size() && (isIdentChar(text_[pos_]) || text_[pos_] == '.'))
      ++pos_;
  }
  if (!ok)
    return error(loc, "malformed number '" + text_.slice(begin, pos_).str() + "'");
  return make(isFloat ? TokenKind::Number : TokenKind::Int, begin, loc);
}

Token Lexer::next() {
  skipSpaceAndComments();
  SourceLoc loc = here();
  size_t begin = pos_;
  if (pos_ >= text_.size())
    return Token{TokenKind::Eof, "", loc};
  char c = text_[pos_];

  if (isIdentStart(c)) {
    while (pos_ < text_.size() && isIdentChar(text_[pos_]))
      ++pos_;
    return make(TokenKind::Ident, begin, loc);
  }
  if (c == '%') {
    ++pos_;
    while (pos_ < text_.size() && isValueChar(text_[pos_]))
      ++pos_;
    if (pos_ == begin + 1)
      return error(loc, "expected a value name after '%'");
    return make(TokenKind::Value, begin, loc);
  }
  if (llvm::isDigit(c) || c == '-' || c == '.')
    return lexNumber(begin, loc);
  if (c == '"') {
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n')
      ++pos_;
    if (pos_ >= text_.size() || text_[pos_] != '"')
      return error(loc, "unterminated string");
    ++pos_;
    return make(TokenKind::String, begin, loc);
  }

  TokenKind kind;
  switch (c) {
  case '(':
    kind = TokenKind::LParen;
    break;
  case ')':
    kind = TokenKind::RParen;
    break;
  case '{':
    kind = TokenKind::LBrace;
    break;
  case '}':
    kind = TokenKind::RBrace;
    break;
  case '[':
    kind = TokenKind::LBracket;
    break;
  case ']':
    kind = TokenKind::RBracket;
    break;
  case ',':
    kind = TokenKind::Comma;
    break;
  case ':':
    kind = TokenKind::Colon;
    break;
  case '=':
    kind = TokenKind::Equal;
    break;
  default:
    ++pos_;
    return error(loc, unexpected(c));
  }
  ++pos_;
  return make(kind, begin, loc);
}

} // namespace sinter
