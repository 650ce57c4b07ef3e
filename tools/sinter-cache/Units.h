//===- tools/sinter-cache/Units.h - sizes and ages as people write them --------------===//
//
// `sinter-cache gc --max-size 512M --older-than 7d` takes sizes with a binary suffix
// (K, M, G, T; an optional trailing B or iB) and ages with a unit (s, m, h, d, w). These
// parsers are kept apart from main.cpp so the tests can call them.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace sinter::cachetool {

/// "512M" -> 536870912, "2G", "1.5G", "4096", "10KiB"; nullopt when malformed or negative.
std::optional<uint64_t> parseSize(llvm::StringRef text);

/// "7d" -> 604800, "12h", "30m", "45s", "2w"; nullopt when malformed (the unit is required).
std::optional<int64_t> parseAge(llvm::StringRef text);

} // namespace sinter::cachetool
