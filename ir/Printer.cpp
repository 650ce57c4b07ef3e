//===- ir/Printer.cpp - the .sir text format writer ----------------------------------===//
//
// Writes a graph in the canonical layout of the text format: the signature on one line, one
// op per line with the attributes as written (in schema order, which Op::setAttr keeps) and
// the op's inferred type, then the return. Numbers go through formatDouble, the shortest text
// that reads back as the same double, so parseSir(printGraph(g)) gives back a graph equal to
// g bit for bit. An op's origin (an imported model's node) is written as a trailing comment.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Printer.h"

namespace sinter {
namespace {

std::string valueRef(const Graph &graph, ValueId id) { return "%" + graph.value(id).name; }

std::string operandStr(const Graph &graph, const Operand &operand) {
  if (operand.isScalar())
    return formatDouble(operand.scalar);
  return valueRef(graph, operand.value);
}

} // namespace

std::string printGraph(const Graph &graph) {
  std::string out = "graph " + graph.name + "(";
  for (size_t i = 0; i < graph.args.size(); ++i) {
    const Value &arg = graph.value(graph.args[i]);
    out += (i ? ", %" : "%") + arg.name + ": ";
    if (arg.kind == ValueKind::Param)
      out += "param ";
    out += arg.type.str();
  }
  out += ") {\n";

  for (const Op &op : graph.ops) {
    out += "  " + valueRef(graph, op.result) + " = " + op.name().str() + "(";
    for (size_t i = 0; i < op.operands.size(); ++i)
      out += (i ? ", " : "") + operandStr(graph, op.operands[i]);
    out += ")";
    if (!op.attrs.empty()) {
      out += " {";
      for (size_t i = 0; i < op.attrs.size(); ++i)
        out += (i ? ", " : "") + op.attrs[i].name + " = " + attrValueStr(op.attrs[i].value);
      out += "}";
    }
    out += " : " + graph.type(op.result).str();
    // Where an imported op came from, as a comment the parser skips.
    if (!op.origin.empty())
      out += "  # " + op.origin;
    out += "\n";
  }

  out += "  return";
  for (size_t i = 0; i < graph.results.size(); ++i)
    out += (i ? ", " : " ") + valueRef(graph, graph.results[i]);
  out += "\n}\n";
  return out;
}

} // namespace sinter
