//===- ir/Graph.h - the sinter IR: graphs, values and ops --------------------------===//
//
// A sinter graph is a straight-line SSA program over dense tensors with static shapes. It
// has named arguments, each either a per-call input or a `param` (a weight bound once), a
// list of ops in definition order, and one or more returned values. Every op has exactly one
// result; an operand is a value defined earlier (or an argument), or, for binary elementwise
// ops, a scalar constant. Ops carry attributes keyed by name; an attribute not written takes
// its default from the op table (ir/Ops.def), so graphs hold exactly what the user wrote and
// print back identically. Types are inferred by the verifier (ir/Verifier.h): a Graph that
// came out of the parser or the GraphBuilder has every value typed.
//
// Semantics are PyTorch's (../shared/design/IR.md names the function for each op), so any
// graph can be checked against PyTorch, and the float64 CPU reference (ir/Reference.h) is
// the oracle every GPU kernel is tested against.
//
// The structs are plain data with public fields; graphs are small, so values and ops live in
// vectors and refer to each other by index.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Ops.h"
#include "ir/Type.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace sinter {

/// A position in a .sir file (1-based); line 0 means "not from text".
struct SourceLoc {
  unsigned line = 0;
  unsigned col = 0;
  bool valid() const { return line != 0; }
  friend bool operator==(const SourceLoc &, const SourceLoc &) = default;
};

using ValueId = int;

enum class ValueKind : uint8_t {
  Input,  ///< graph argument bound per call
  Param,  ///< graph argument declared `param`: a weight
  Result, ///< result of an op
};

/// A tensor value: a graph argument or an op's result.
struct Value {
  std::string name; ///< without the leading '%'
  TensorType type;
  ValueKind kind = ValueKind::Result;
  int def = -1; ///< index of the defining op for results, else -1
  bool isArgument() const { return kind != ValueKind::Result; }
};

/// An op operand: a value, or a scalar constant (binary elementwise ops only).
struct Operand {
  ValueId value = -1;
  double scalar = 0;
  bool isScalar() const { return value < 0; }
  static Operand ofValue(ValueId v) { return {v, 0}; }
  static Operand ofScalar(double s) { return {-1, s}; }
  friend bool operator==(const Operand &a, const Operand &b) {
    return a.value == b.value && (a.value >= 0 || a.scalar == b.scalar);
  }
};

/// A named attribute as written.
struct Attr {
  std::string name;
  AttrValue value;
  friend bool operator==(const Attr &, const Attr &) = default;
};

/// One op: kind, operands, attributes in schema order, and its result value.
struct Op {
  OpKind kind;
  llvm::SmallVector<Operand, 3> operands;
  llvm::SmallVector<Attr, 4> attrs;
  ValueId result = -1;
  SourceLoc loc;
  /// Where an op that was not written as text came from: for a model imported from ONNX,
  /// the node or nodes it was made of, e.g. "node '/conv/Conv' (Conv)". Empty for .sir and
  /// GraphBuilder graphs. Like `loc`, it is ignored by graph equality.
  std::string origin{};

  const OpInfo &info() const { return opInfo(kind); }
  llvm::StringRef name() const { return opName(kind); }

  /// The attribute as written, or null.
  const AttrValue *findAttr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return findAttr(name) != nullptr; }
  /// Sets (or replaces) an attribute, keeping schema order.
  void setAttr(llvm::StringRef name, AttrValue value);

  // Typed accessors: the written value, else the schema default. Asking for an attribute
  // the schema lacks, or a required one that is absent, is a bug (the verifier checks these).
  int64_t getInt(llvm::StringRef name) const;
  double getFloat(llvm::StringRef name) const;
  bool getBool(llvm::StringRef name) const;
  std::string getEnum(llvm::StringRef name) const;
  IntList getInts(llvm::StringRef name) const;
  /// A spatial attribute expanded to one value per spatial dim.
  IntList getSpatial(llvm::StringRef name, unsigned spatialDims) const;

  /// The scalar parameters p0, p1 of a unary op (ir/Ops.def explains the mapping).
  llvm::SmallVector<double, 2> unaryParams() const;
};

/// A graph: arguments, ops in definition order, results.
struct Graph {
  std::string name;
  std::string file; ///< the .sir file it came from, if any (for error messages)
  std::vector<Value> values;
  std::vector<ValueId> args;
  std::vector<Op> ops;
  std::vector<ValueId> results;

  const Value &value(ValueId id) const { return values[id]; }
  const TensorType &type(ValueId id) const { return values[id].type; }
  /// The value named `name` (without '%'), or -1.
  ValueId lookup(llvm::StringRef name) const;
  /// The op defining `id`, or null for arguments.
  const Op *defOp(ValueId id) const {
    return values[id].def < 0 ? nullptr : &ops[values[id].def];
  }
  /// How the error location of `op` reads: "file:line:col", "file: <origin>" for an op
  /// with an origin, or "%result".
  std::string locStr(const Op &op) const;
};

/// Per value (indexed by ValueId): how many operands of ops use it (an op using it twice
/// counts twice) and whether the graph returns it. What rewrites ask before absorbing a value.
struct ValueUses {
  std::vector<int> uses;
  std::vector<bool> returned;
  explicit ValueUses(const Graph &graph);
};

/// The origins of `ops` (indices into graph.ops), each once, in graph order, joined with
/// " + ": what an op re-formed from several records as its own origin.
std::string joinOrigins(const Graph &graph, llvm::ArrayRef<int> ops);

/// Structural equality: names, kinds, types, operands, attributes and results. Source
/// locations and the file name are ignored.
bool operator==(const Graph &a, const Graph &b);
inline bool operator!=(const Graph &a, const Graph &b) { return !(a == b); }

} // namespace sinter
