//===- frontend/OnnxFold.h - the constant folder's internals ---------------------------===//
//
// Shared by OnnxFold.cpp (arithmetic, constants, casts, ranges, reductions, and the
// dispatch) and OnnxFoldIndex.cpp (the ops that move elements: Concat, Gather, Slice,
// Transpose, Expand, Tile, and the view shapes). Not part of the importer's interface.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "frontend/OnnxImporter.h"
#include "ir/InferCommon.h"

#include "llvm/ADT/ArrayRef.h"

#include <functional>
#include <optional>

namespace sinter::onnximport::folding {

/// Row-major strides.
inline Shape stridesOf(llvm::ArrayRef<int64_t> shape) { return contiguousStrides(shape); }

/// The flat index into a tensor of `shape` that broadcasts to `out` at output index `idx`.
inline int64_t broadcastIndex(llvm::ArrayRef<int64_t> idx, llvm::ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  size_t off = idx.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : idx[off + d]);
  return flat;
}

/// Advances a multi-index over `shape` (row-major); false after the last element.
inline bool next(llvm::MutableArrayRef<int64_t> idx, llvm::ArrayRef<int64_t> shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d])
      return true;
    idx[d] = 0;
  }
  return false;
}

inline ElemKind widest(llvm::ArrayRef<const ConstTensor *> ts) {
  ElemKind k = ElemKind::I64;
  for (const ConstTensor *t : ts) {
    if (t->kind == ElemKind::F64)
      return ElemKind::F64;
    if (t->kind == ElemKind::F32)
      k = ElemKind::F32;
  }
  return k;
}

/// A 1-D integer list from a constant (any rank is flattened).
inline IntList ints(const ConstTensor &t) {
  IntList out;
  for (int64_t i = 0; i < t.numel(); ++i)
    out.push_back(t.integer(size_t(i)));
  return out;
}

/// `axis` wrapped into [0, rank), or nullopt when out of range.
inline std::optional<int64_t> wrapAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

class Folder {
public:
  explicit Folder(NodeCtx &c) : c(c) {}

  llvm::Expected<bool> run();

private:
  NodeCtx &c;

  const ConstTensor &in(unsigned i) const { return *c.constant(i); }

  /// A fresh result of `kind` and `shape`, or an error when it would be too large.
  llvm::Expected<ConstTensor> make(ElemKind kind, llvm::ArrayRef<int64_t> shape) {
    if (checkedNumel(shape, kMaxFoldElements) < 0)
      return c.fail("folding would make a constant of shape " + shapeStr(shape) + ", more than " +
                    llvm::Twine(kMaxFoldElements) + " elements");
    return ConstTensor::zeros(kind, shape);
  }

  /// Binds output 0; a view of a named constant keeps that name for its param.
  bool done(ConstTensor t, bool viewOfInput0 = false) {
    c.bindConst(0, std::move(t), viewOfInput0 ? c.in(0).paramName : "");
    return true;
  }

  llvm::Expected<bool> elementwise(llvm::ArrayRef<unsigned> inputs, ElemKind kind,
                                   std::function<double(llvm::ArrayRef<double>)> f,
                                   std::function<int64_t(llvm::ArrayRef<int64_t>)> fi = {});
  llvm::Expected<bool> binary(llvm::StringRef op);
  llvm::Expected<bool> unary(llvm::StringRef op);
  llvm::Expected<bool> constantNode();
  llvm::Expected<bool> reshapeLike(llvm::StringRef op);
  llvm::Expected<bool> concat();
  llvm::Expected<bool> gather();
  /// Folds to a tensor of `shape` whose element at each index idx is x's element at flat
  /// position srcOf(idx): what slice, transpose, expand and tile have in common.
  template <class SrcOf>
  llvm::Expected<bool> rearrange(const ConstTensor &x, llvm::ArrayRef<int64_t> shape, SrcOf srcOf) {
    auto out = make(x.kind, shape);
    if (!out)
      return out.takeError();
    if (out->numel() == 0)
      return done(std::move(*out));
    Shape idx(shape.size(), 0);
    size_t at = 0;
    do {
      const size_t src = size_t(srcOf(llvm::ArrayRef<int64_t>(idx)));
      if (x.kind == ElemKind::I64)
        out->i64[at++] = x.i64[src];
      else
        out->set(at++, x.num(src));
    } while (next(idx, shape));
    return done(std::move(*out));
  }
  llvm::Expected<bool> slice();
  llvm::Expected<bool> transpose();
  llvm::Expected<bool> expandOrTile(bool tile);
  llvm::Expected<bool> range();
  llvm::Expected<bool> cast(bool like);
  llvm::Expected<bool> reduce(llvm::StringRef op);
};

} // namespace sinter::onnximport::folding
