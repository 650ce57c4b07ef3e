//===- frontend/OnnxImporter.h - the ONNX importer's internal interfaces ------------===//
//
// Shared by the files of the importer (not installed, not for users: see OnnxImport.h).
// An import walks the model's live nodes in order. Each ONNX value name is bound either to
// a sinter value or to a constant; a node whose inputs are all constant is folded
// (OnnxFold.cpp), any other is lowered by the rule for its op type (OnnxLowerNN.cpp,
// OnnxLowerNorm.cpp, OnnxLowerMath.cpp) through a NodeCtx, which reads the node's inputs and
// attributes, turns constants into params or scalar operands, emits sinter ops tagged with
// the node, and puts the node's name, op type and opset on every error.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "frontend/OnnxImport.h"
#include "frontend/OnnxTensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace onnx {
class AttributeProto;
class GraphProto;
class NodeProto;
} // namespace onnx

namespace sinter::onnximport {

using ConstPtr = std::shared_ptr<const ConstTensor>;

/// What an ONNX value name stands for while importing: a sinter value or a constant.
struct Binding {
  ValueId value = -1;
  ConstPtr constant;
  /// For a constant: the name a param made from it takes (an initializer's own name, or
  /// the initializer a folded view such as Unsqueeze(weight) was made from).
  std::string paramName;
  bool isConst() const { return constant != nullptr; }
};

/// The state of one import: the sinter graph being written and what every ONNX name means.
struct Importer {
  std::string file; ///< the model as errors name it
  int64_t opset = 0;
  Graph graph;
  TensorMap weights;
  llvm::StringMap<Binding> env;
  llvm::StringSet<> live;              ///< ONNX values some graph output depends on
  llvm::StringSet<> taken;             ///< sinter value names in use
  llvm::StringSet<> reserved;          ///< graph output names, kept for the values they name
  std::map<ConstPtr, ValueId> paramOf; ///< constants already made params

  /// `wanted` with every character a value name cannot hold replaced by '_'.
  static std::string validName(llvm::StringRef wanted);
  /// `wanted` made into a valid value name ([A-Za-z0-9_.]+) that is not taken yet; a
  /// reserved name only when `reservedOk`.
  std::string uniqueName(llvm::StringRef wanted, bool reservedOk = false);
  /// Appends a value (not yet an argument or a result of any op).
  ValueId addValue(const std::string &name, TensorType type, ValueKind kind);
  /// The param holding `b`'s constant, made on first use (f32; values in `weights`).
  llvm::Expected<ValueId> paramFor(const Binding &b);
};

/// The double a float constant of the model stands for: the shortest decimal of at most 6
/// significant digits that rounds to the same float (0.01f gives 0.01, 1e-05f gives 1e-05),
/// so that what PyTorch wrote as a Python number reads back as that number; any other float
/// exactly.
double fromFloat(float f);

/// The first element of `t` as a number (through fromFloat for f32).
inline double scalarOf(const ConstTensor &t) {
  return t.kind == ElemKind::F32 ? fromFloat(t.f32[0]) : t.num(0);
}

/// `text` with control characters replaced and at most 120 characters, for messages.
std::string printable(llvm::StringRef text);

/// How a node is named in origins: "node 'name' (OpType)", or "node #index (OpType)".
std::string nodeLabel(const onnx::NodeProto &node, int index);

/// One node being lowered or folded.
class NodeCtx {
public:
  NodeCtx(Importer &im, const onnx::NodeProto &node, std::string origin, int64_t opset)
      : im(im), node(node), origin(std::move(origin)), opset(opset) {}

  Importer &im;
  const onnx::NodeProto &node;
  std::string origin; ///< what ops made from this node record (Op::origin)
  int64_t opset;

  /// An error naming the file and the node, e.g.
  /// "m.onnx: node 'c1' (Conv, opset 20): asymmetric pads [0,0,1,1] are not supported".
  llvm::Error fail(const llvm::Twine &message) const;

  // Inputs. An empty input name (an omitted optional input) is absent.
  unsigned numInputs() const;
  bool has(unsigned i) const;
  const Binding &in(unsigned i) const;           ///< requires has(i)
  const ConstTensor *constant(unsigned i) const; ///< null when absent or not constant
  /// The constant input `i`, or an error saying that `what` must be a constant.
  llvm::Expected<const ConstTensor *> requireConst(unsigned i, llvm::StringRef what) const;
  /// Input `i` as a sinter value (a constant becomes a param).
  llvm::Expected<ValueId> value(unsigned i) const;
  /// Input `i` as an operand of a binary op whose other operand has shape `other`: a
  /// one-element constant that broadcasting would not grow becomes a number.
  llvm::Expected<Operand> binaryOperand(unsigned i, llvm::ArrayRef<int64_t> other) const;
  /// The shape of input `i` (a value's type or a constant's dims).
  Shape shape(unsigned i) const;
  const TensorType &type(ValueId v) const { return im.graph.type(v); }

  // Attributes.
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  llvm::Expected<int64_t> getInt(llvm::StringRef name, int64_t dflt) const;
  llvm::Expected<double> getFloat(llvm::StringRef name, double dflt) const;
  llvm::Expected<std::string> getString(llvm::StringRef name, llvm::StringRef dflt) const;
  /// A list of ints, or nullopt when the attribute is absent.
  llvm::Expected<std::optional<IntList>> getInts(llvm::StringRef name) const;
  /// A tensor attribute (Constant's `value`), decoded.
  llvm::Expected<std::optional<ConstTensor>> getTensor(llvm::StringRef name) const;
  /// An error for every attribute the node has that is not in `known`.
  llvm::Error onlyAttrs(llvm::ArrayRef<llvm::StringRef> known) const;

  // Outputs.
  unsigned numOutputs() const;
  /// Whether a graph output depends on output `i`.
  bool used(unsigned i) const;
  /// An error when an output other than the first is used (an op lowered to one value).
  llvm::Error onlyFirstOutputUsed() const;
  /// Appends a sinter op, infers its type and returns its result, named after output 0
  /// (with `_suffix` for an intermediate op of a node lowered to several).
  llvm::Expected<ValueId> emit(OpKind kind, llvm::ArrayRef<Operand> operands,
                               llvm::ArrayRef<Attr> attrs = {}, llvm::StringRef suffix = "");
  /// Binds output `i` to a sinter value / a constant.
  void bind(unsigned i, ValueId v);
  void bindConst(unsigned i, ConstTensor t, std::string paramName = "");

  ExternalData *external = nullptr; ///< for tensor attributes stored externally
};

/// Lowers one node whose op type has a rule; false when none.
using LowerFn = llvm::Error (*)(NodeCtx &);
struct LowerRule {
  const char *opType;
  int64_t sinceOpset; ///< the first opset with the semantics the rule implements
  unsigned minInputs; ///< inputs 0 .. minInputs-1 must be present
  unsigned maxInputs; ///< no more inputs than this
  LowerFn lower;
};
/// Rules for convolutions and GEMMs (OnnxLowerNN.cpp).
llvm::ArrayRef<LowerRule> nnRules();
/// Rules for norms and pools (OnnxLowerNorm.cpp).
llvm::ArrayRef<LowerRule> normRules();
/// Rules for elementwise ops, reductions, softmax and views (OnnxLowerMath.cpp).
llvm::ArrayRef<LowerRule> mathRules();

/// The shape a view node (Identity, Reshape, Flatten, Squeeze, Unsqueeze) gives a tensor
/// of shape `in`; its shape or axes input must be constant.
llvm::Expected<Shape> viewShape(NodeCtx &ctx, llvm::ArrayRef<int64_t> in);

/// Folds the node when every input it reads is constant (Shape also folds a value of
/// known shape) and its op type is one OnnxFold.cpp evaluates; true when it did.
llvm::Expected<bool> tryFold(NodeCtx &ctx);

/// Rewrites exporter decompositions that only ONNX can express, before liveness: the
/// dynamo exporter's softplus (Mul, Softplus, Div, Greater, Where) becomes one node of the
/// private domain "sinter.ai" (op "Softplus" with beta and threshold), a zero Pad feeding a
/// convolution or pool is folded into its pads. `origins` receives the label of each
/// rewritten node (by node index) listing every node it absorbed.
void rewriteOnnx(onnx::GraphProto &graph, std::map<int, std::string> &origins);

/// Re-forms GroupNorm from the exporters' Reshape -> instance_norm -> Reshape -> Mul -> Add
/// (after lowering, with the weights at hand: gamma and beta are re-declared as [C]
/// params), then drops ops and params nothing uses and orders the graph's values (inputs,
/// params, then op results). Returns an error only for a bug (the graph fails to verify).
llvm::Error finishGraph(Importer &im);

} // namespace sinter::onnximport
