//===- frontend/OnnxLowerUtil.h - helpers of the rules for ops with weights or windows ===//
//
// Shared by OnnxLowerNN.cpp (convolutions, GEMMs) and OnnxLowerNorm.cpp (norms, pools):
// attributes in the catalog's form, ONNX's begin/end pads, and constants turned into params.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "frontend/OnnxImporter.h"

namespace sinter::onnximport::lowering {

inline Attr attr(const char *name, AttrValue v) { return Attr{name, std::move(v)}; }

/// A per-spatial-dim attribute as the catalog writes it: one number when all agree.
inline AttrValue spatial(llvm::ArrayRef<int64_t> v) {
  if (!v.empty() && llvm::all_of(v, [&](int64_t x) { return x == v[0]; }))
    return v[0];
  return IntList(v.begin(), v.end());
}

inline bool allEqual(llvm::ArrayRef<int64_t> v, int64_t x) {
  return llvm::all_of(v, [&](int64_t y) { return y == x; });
}

/// Adds `name` unless every value is `dflt`.
inline void addSpatial(llvm::SmallVectorImpl<Attr> &attrs, const char *name,
                       llvm::ArrayRef<int64_t> v, int64_t dflt) {
  if (!allEqual(v, dflt))
    attrs.push_back(attr(name, spatial(v)));
}

/// A constant with every element equal to `v`.
inline bool constEquals(const ConstTensor *t, double v) {
  if (!t)
    return false;
  for (int64_t i = 0; i < t->numel(); ++i)
    if (t->num(size_t(i)) != v)
      return false;
  return true;
}

/// Transpose's `perm` for an input of rank `rank` (default: the dims reversed), checked to be
/// a permutation of 0 .. rank - 1.
inline llvm::Expected<IntList> transposePerm(NodeCtx &c, size_t rank) {
  auto attr = c.getInts("perm");
  if (!attr)
    return attr.takeError();
  IntList perm;
  if (*attr)
    perm = **attr;
  else
    for (size_t i = 0; i < rank; ++i)
      perm.push_back(int64_t(rank - 1 - i));
  if (perm.size() != rank)
    return c.fail("perm " + shapeStr(perm) + " does not match rank " + llvm::Twine(rank));
  llvm::SmallVector<bool, 8> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || size_t(p) >= rank || seen[size_t(p)])
      return c.fail("invalid perm " + shapeStr(perm));
    seen[size_t(p)] = true;
  }
  return perm;
}

/// A per-spatial-dim int list attribute with `nd` entries (default `dflt` each).
inline llvm::Expected<IntList> spatialInts(NodeCtx &c, llvm::StringRef name, unsigned nd,
                                           int64_t dflt, unsigned perDim = 1) {
  auto v = c.getInts(name);
  if (!v)
    return v.takeError();
  if (!*v)
    return IntList(nd * perDim, dflt);
  if ((*v)->size() != nd * perDim)
    return c.fail("attribute '" + name + "' has " + llvm::Twine((*v)->size()) +
                  " values, expected " + llvm::Twine(nd * perDim));
  return **v;
}

/// Begin and end pads per spatial dim, from `pads` or `auto_pad` (SAME_* computes them
/// from the output size ceil(in / stride)).
inline llvm::Error padsOf(NodeCtx &c, llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> kernel,
                          llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> dilation,
                          IntList &begin, IntList &end) {
  unsigned nd = unsigned(in.size());
  auto autoPad = c.getString("auto_pad", "NOTSET");
  if (!autoPad)
    return autoPad.takeError();
  auto pads = spatialInts(c, "pads", nd, 0, 2);
  if (!pads)
    return pads.takeError();
  begin.assign(pads->begin(), pads->begin() + nd);
  end.assign(pads->begin() + nd, pads->end());
  if (*autoPad == "NOTSET")
    return llvm::Error::success();
  if (*autoPad == "VALID") {
    begin.assign(nd, 0);
    end.assign(nd, 0);
    return llvm::Error::success();
  }
  if (*autoPad != "SAME_UPPER" && *autoPad != "SAME_LOWER")
    return c.fail("auto_pad '" + *autoPad + "' is not supported");
  for (unsigned d = 0; d < nd; ++d) {
    int64_t out = (in[d] + stride[d] - 1) / stride[d];
    int64_t total =
        std::max<int64_t>((out - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1 - in[d], 0);
    begin[d] = *autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
    end[d] = total - begin[d];
  }
  return llvm::Error::success();
}

inline llvm::Error bindEmit(NodeCtx &c, llvm::Expected<ValueId> r) {
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

/// A constant derived from input `i`'s (transposed, scaled or reshaped), as a param that
/// keeps the input's name when possible.
inline llvm::Expected<ValueId> derivedParam(NodeCtx &c, unsigned i, ConstTensor t) {
  Binding b{-1, std::make_shared<const ConstTensor>(std::move(t)), c.in(i).paramName};
  auto p = c.im.paramFor(b);
  if (!p)
    return c.fail(llvm::toString(p.takeError()));
  return *p;
}

} // namespace sinter::onnximport::lowering
