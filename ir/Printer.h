//===- ir/Printer.h - the .sir text format writer ----------------------------------===//
//
// Writes graphs in the text format of ../shared/design/IR.md, every op with its inferred
// `: type`, such that parsing the output gives back an identical graph.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include <string>

namespace sinter {

/// The text of one graph.
std::string printGraph(const Graph &graph);

} // namespace sinter
