//===- ir/InferCommon.h - helpers shared by the shape-inference files --------------===//
//
// Internal to ir/: the verifier (ir/Verifier.cpp) checks an op's operands and attributes
// generically from the op table, then hands it to one inference function per op family.
// Those live in ir/Verifier.cpp (elementwise, reductions, views) and ir/InferSpatial.cpp
// (conv, conv_transpose, pools, norms, linear, matmul) and share the small context below,
// which makes every error start with the op's name.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Error.h"
#include "ir/Graph.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace sinter::infer {

/// One op under inference: its graph, and helpers that phrase errors the same way.
struct Ctx {
  const Graph &graph;
  const Op &op;

  /// "<op>: <message>".
  llvm::Error fail(const llvm::Twine &message) const {
    return makeError(op.name() + ": " + message);
  }
  /// The type of value operand `i` (the generic checks ran, so it is a value).
  const TensorType &type(unsigned i) const { return graph.type(op.operands[i].value); }
  unsigned numOperands() const { return op.operands.size(); }
  /// The dtype of the result: that of the first value operand.
  DType dtype() const;
};

/// The numpy broadcast of two shapes, or nothing when they do not broadcast.
std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// Floor division (PyTorch's div_rtn) for a positive divisor.
int64_t floorDiv(int64_t a, int64_t b);

/// Wraps a possibly negative dim into [0, rank) the way PyTorch does (a scalar accepts 0 and
/// -1); errors "<what> <dim> out of range for rank <rank>".
llvm::Expected<int64_t> wrapDim(const Ctx &c, int64_t dim, unsigned rank, llvm::StringRef what);

/// The spatial attribute `name` expanded to `nd` values; errors when its list has neither 1
/// nor `nd` values or a value is below `min`.
llvm::Expected<IntList> spatialAttr(const Ctx &c, llvm::StringRef name, unsigned nd, int64_t min);

/// Checks that operand `i`, called `what`, has shape `expected`.
llvm::Error expectShape(const Ctx &c, unsigned i, llvm::StringRef what,
                        llvm::ArrayRef<int64_t> expected);

// The op families of ir/InferSpatial.cpp.
llvm::Expected<TensorType> inferConv(const Ctx &c);
llvm::Expected<TensorType> inferConvTranspose(const Ctx &c);
llvm::Expected<TensorType> inferLinear(const Ctx &c);
llvm::Expected<TensorType> inferMatmul(const Ctx &c);
llvm::Expected<TensorType> inferPool(const Ctx &c);
llvm::Expected<TensorType> inferGroupNorm(const Ctx &c);
llvm::Expected<TensorType> inferLayerNorm(const Ctx &c);
llvm::Expected<TensorType> inferBatchNorm(const Ctx &c);
llvm::Expected<TensorType> inferInstanceNorm(const Ctx &c);

} // namespace sinter::infer
