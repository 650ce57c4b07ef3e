//===- tools/sinter-cache/Units.cpp - sizes and ages as people write them -------------===//
//
// See Units.h. Both parsers accept a decimal number (fractions allowed) and a unit; the
// result is rounded down to whole bytes or seconds.
//
//===--------------------------------------------------------------------------------===//
#include "Units.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace sinter::cachetool {
namespace {

/// Splits "1.5G" into 1.5 and "G"; nullopt unless the number part is a plain non-negative
/// decimal.
std::optional<std::pair<double, llvm::StringRef>> splitNumber(llvm::StringRef text) {
  text = text.trim();
  size_t end = 0;
  bool dot = false;
  while (end < text.size() && (llvm::isDigit(text[end]) || (text[end] == '.' && !dot))) {
    dot |= text[end] == '.';
    ++end;
  }
  if (end == 0 || (end == 1 && dot))
    return std::nullopt;
  std::string number = text.take_front(end).str();
  double value = std::strtod(number.c_str(), nullptr);
  if (!std::isfinite(value))
    return std::nullopt;
  return std::make_pair(value, text.drop_front(end));
}

} // namespace

std::optional<uint64_t> parseSize(llvm::StringRef text) {
  auto split = splitNumber(text);
  if (!split)
    return std::nullopt;
  std::string unit = split->second.lower();
  double scale = 0;
  if (unit.empty() || unit == "b")
    scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    scale = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else
    return std::nullopt;
  double bytes = split->first * scale;
  if (bytes >= 1.8e19)
    return std::nullopt;
  return uint64_t(bytes);
}

std::optional<int64_t> parseAge(llvm::StringRef text) {
  auto split = splitNumber(text);
  if (!split)
    return std::nullopt;
  llvm::StringRef unit = split->second;
  double scale = 0;
  if (unit == "s")
    scale = 1;
  else if (unit == "m")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  else if (unit == "w")
    scale = 7 * 86400;
  else
    return std::nullopt;
  double seconds = split->first * scale;
  if (seconds >= 9e18)
    return std::nullopt;
  return int64_t(seconds);
}

} // namespace sinter::cachetool
