//===- ir/Parser.h - the .sir text format reader -----------------------------------===//
//
// Reads the text format of ../shared/design/IR.md into verified, fully typed graphs. Every
// error names file:line:col and what was expected, followed by the source line and a caret.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace sinter {

/// Parses and verifies every graph in `text`; `fileName` is used in error messages and
/// stored in Graph::file.
llvm::Expected<std::vector<Graph>> parseSir(llvm::StringRef text, llvm::StringRef fileName);

/// Reads and parses the file at `path`.
llvm::Expected<std::vector<Graph>> parseSirFile(llvm::StringRef path);

/// Picks the graph named `name` from `graphs`, or the only graph when `name` is empty;
/// errors when it is absent or ambiguous.
llvm::Expected<Graph> selectGraph(std::vector<Graph> graphs, llvm::StringRef name,
                                  llvm::StringRef fileName);

} // namespace sinter
