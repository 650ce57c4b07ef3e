//===- tests/ir/InferTestUtil.h - one-op graphs for shape-inference tests ----------===//
//
// Shape-inference tests build a graph of fresh arguments and one op by hand (no parser or
// builder involved, so they test the verifier alone) and read the outcome as one string:
// the inferred type ("f32[2,3]") or the error message, which can never look like a type.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Verifier.h"

#include <string>
#include <vector>

namespace sinter::testing {

inline AttrValue I(int64_t v) { return v; }
inline AttrValue L(std::initializer_list<int64_t> v) { return IntList(v); }
inline AttrValue F(double v) { return v; }
inline AttrValue B(bool v) { return v; }
inline AttrValue S(const char *v) { return std::string(v); }

/// An operand of the op under test: argument `index` of the graph, or a number.
struct Arg {
  int index = -1;
  double number = 0;
  static Arg num(double n) { return {-1, n}; }
};

/// The graph `args -> kind(operands) {attrs}` with its op's result not yet typed.
inline Graph oneOpGraph(const std::vector<TensorType> &args, OpKind kind,
                        const std::vector<Arg> &operands, const std::vector<Attr> &attrs) {
  Graph g;
  g.name = "t";
  for (size_t i = 0; i < args.size(); ++i) {
    g.values.push_back(Value{"a" + std::to_string(i), args[i], ValueKind::Input, -1});
    g.args.push_back(ValueId(i));
  }
  Op op{kind, {}, {}, ValueId(args.size()), {}};
  for (const Arg &a : operands)
    op.operands.push_back(a.index >= 0 ? Operand::ofValue(a.index) : Operand::ofScalar(a.number));
  op.attrs.append(attrs.begin(), attrs.end());
  g.values.push_back(Value{"r", TensorType(), ValueKind::Result, 0});
  g.ops.push_back(op);
  g.results.push_back(op.result);
  return g;
}

/// inferOpType's outcome as text.
inline std::string outcome(const Graph &g) {
  llvm::Expected<TensorType> t = inferOpType(g, g.ops.back());
  if (!t)
    return llvm::toString(t.takeError());
  return t->str();
}

/// Infers `kind` on f32 arguments of `shapes`, used in order as the operands.
inline std::string infer(OpKind kind, const std::vector<Shape> &shapes,
                         const std::vector<Attr> &attrs = {}) {
  std::vector<TensorType> args;
  std::vector<Arg> operands;
  for (size_t i = 0; i < shapes.size(); ++i) {
    args.emplace_back(DType::F32, shapes[i]);
    operands.push_back(Arg{int(i)});
  }
  return outcome(oneOpGraph(args, kind, operands, attrs));
}

} // namespace sinter::testing
