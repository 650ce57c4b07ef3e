//===- frontend/OnnxFoldIndex.cpp - folding the ops that move elements ---------------===//
//
// The constant folder's Concat, Gather, Slice, Transpose, Expand and Tile (with ONNX's
// clamping of slice bounds and numpy's broadcasting), and viewShape: the shape Reshape,
// Flatten, Squeeze and Unsqueeze give a tensor, for constants and computed values alike.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxFold.h"
#include "frontend/OnnxLowerUtil.h"

#include "ir/Error.h"
#include "onnx.pb.h"

namespace sinter::onnximport {
namespace folding {

llvm::Expected<bool> Folder::reshapeLike(llvm::StringRef) {
  if (!c.has(0))
    return c.fail("input 0 is missing");
  auto shape = viewShape(c, in(0).shape);
  if (!shape)
    return shape.takeError();
  ConstTensor r = in(0);
  r.shape = *shape;
  return done(std::move(r), /*viewOfInput0=*/true);
}

llvm::Expected<bool> Folder::concat() {
  auto axisAttr = c.getInt("axis", 0);
  if (!axisAttr)
    return axisAttr.takeError();
  llvm::SmallVector<const ConstTensor *, 4> ts;
  for (unsigned i = 0; i < c.numInputs(); ++i)
    if (c.has(i))
      ts.push_back(c.constant(i));
  if (ts.empty())
    return c.fail("Concat needs inputs");
  int64_t rank = int64_t(ts[0]->shape.size());
  auto axis = wrapAxis(*axisAttr, rank);
  if (!axis)
    return c.fail("axis " + llvm::Twine(*axisAttr) + " out of range for rank " + llvm::Twine(rank));
  Shape shape = ts[0]->shape;
  shape[size_t(*axis)] = 0;
  for (const ConstTensor *t : ts) {
    for (int64_t d = 0; d < rank; ++d)
      if (int64_t(t->shape.size()) != rank ||
          (d != *axis && t->shape[size_t(d)] != shape[size_t(d)]))
        return c.fail("cannot concatenate shapes " + shapeStr(ts[0]->shape) + " and " +
                      shapeStr(t->shape) + " on axis " + llvm::Twine(*axis));
    shape[size_t(*axis)] += t->shape[size_t(*axis)];
  }
  auto out = make(widest(ts), shape);
  if (!out)
    return out.takeError();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= shape[size_t(d)];
  for (int64_t d = *axis + 1; d < rank; ++d)
    inner *= shape[size_t(d)];
  size_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstTensor *t : ts) {
      int64_t chunk = t->shape[size_t(*axis)] * inner;
      for (int64_t k = 0; k < chunk; ++k) {
        size_t src = size_t(o * chunk + k);
        if (out->kind == ElemKind::I64)
          out->i64[at++] = t->integer(src);
        else
          out->set(at++, t->num(src));
      }
    }
  return done(std::move(*out));
}

llvm::Expected<bool> Folder::gather() {
  if (!c.has(0) || !c.has(1))
    return c.fail("Gather needs data and indices");
  const ConstTensor &x = in(0), &idx = in(1);
  auto axisAttr = c.getInt("axis", 0);
  if (!axisAttr)
    return axisAttr.takeError();
  int64_t rank = int64_t(x.shape.size());
  auto axis = wrapAxis(*axisAttr, rank);
  if (!axis)
    return c.fail("axis " + llvm::Twine(*axisAttr) + " out of range for rank " + llvm::Twine(rank));
  Shape shape(x.shape.begin(), x.shape.begin() + *axis);
  shape.append(idx.shape.begin(), idx.shape.end());
  shape.append(x.shape.begin() + *axis + 1, x.shape.end());
  auto out = make(x.kind, shape);
  if (!out)
    return out.takeError();
  int64_t n = x.shape[size_t(*axis)], outer = 1, inner = 1;
  for (int64_t d = 0; d < *axis; ++d)
    outer *= x.shape[size_t(d)];
  for (int64_t d = *axis + 1; d < rank; ++d)
    inner *= x.shape[size_t(d)];
  size_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < idx.numel(); ++k) {
      int64_t j = idx.integer(size_t(k));
      if (j < -n || j >= n)
        return c.fail("index " + llvm::Twine(j) + " out of range for a dim of " + llvm::Twine(n));
      j = j < 0 ? j + n : j;
      for (int64_t i = 0; i < inner; ++i) {
        size_t src = size_t((o * n + j) * inner + i);
        if (x.kind == ElemKind::I64)
          out->i64[at++] = x.i64[src];
        else
          out->set(at++, x.num(src));
      }
    }
  return done(std::move(*out));
}

llvm::Expected<bool> Folder::slice() {
  auto starts = c.requireConst(1, "starts");
  if (!starts)
    return starts.takeError();
  auto ends = c.requireConst(2, "ends");
  if (!ends)
    return ends.takeError();
  const ConstTensor &x = in(0);
  int64_t rank = int64_t(x.shape.size());
  IntList st = ints(**starts), en = ints(**ends), axes, steps;
  if (c.has(3))
    axes = ints(in(3));
  else
    for (size_t i = 0; i < st.size(); ++i)
      axes.push_back(int64_t(i));
  if (c.has(4))
    steps = ints(in(4));
  else
    steps.assign(st.size(), 1);
  if (en.size() != st.size() || axes.size() != st.size() || steps.size() != st.size())
    return c.fail("starts, ends, axes and steps differ in length");
  Shape begin(size_t(rank), 0), step(size_t(rank), 1), shape = x.shape;
  for (size_t k = 0; k < st.size(); ++k) {
    auto a = wrapAxis(axes[k], rank);
    if (!a || steps[k] == 0)
      return c.fail("invalid slice axis " + llvm::Twine(axes[k]) + " or step 0");
    int64_t n = x.shape[size_t(*a)], s = st[k], e = en[k], p = steps[k];
    // ONNX clamps starts to [0, n] and ends to [0, n] for positive steps; for negative
    // steps starts to [0, n-1] and ends to [-1, n-1].
    auto clampIdx = [&](int64_t v, bool isEnd) {
      if (v < 0)
        v = v < -n ? -n - 1 : v + n;
      if (p > 0)
        return std::min(std::max<int64_t>(v, 0), n);
      return std::min(std::max<int64_t>(v, isEnd ? -1 : 0), n - 1);
    };
    s = clampIdx(s, false);
    e = clampIdx(e, true);
    int64_t len = p > 0 ? (e > s ? (e - s + p - 1) / p : 0) : (s > e ? (s - e - p - 1) / -p : 0);
    begin[size_t(*a)] = s;
    step[size_t(*a)] = p;
    shape[size_t(*a)] = len;
  }
  Shape strides = stridesOf(x.shape);
  return rearrange(x, shape, [&](llvm::ArrayRef<int64_t> idx) {
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (begin[d] + idx[d] * step[d]) * strides[d];
    return src;
  });
}

llvm::Expected<bool> Folder::transpose() {
  const ConstTensor &x = in(0);
  size_t rank = x.shape.size();
  auto permOr = lowering::transposePerm(c, rank);
  if (!permOr)
    return permOr.takeError();
  const IntList &perm = *permOr;
  Shape shape;
  for (int64_t p : perm)
    shape.push_back(x.shape[size_t(p)]);
  Shape strides = stridesOf(x.shape);
  return rearrange(x, shape, [&](llvm::ArrayRef<int64_t> idx) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d)
      src += idx[d] * strides[size_t(perm[d])];
    return src;
  });
}

llvm::Expected<bool> Folder::expandOrTile(bool tile) {
  auto s = c.requireConst(1, tile ? "repeats" : "shape");
  if (!s)
    return s.takeError();
  const ConstTensor &x = in(0);
  IntList arg = ints(**s);
  Shape shape;
  if (tile) {
    if (arg.size() != x.shape.size())
      return c.fail("repeats " + shapeStr(arg) + " do not match rank " +
                    llvm::Twine(x.shape.size()));
    for (size_t d = 0; d < arg.size(); ++d) {
      if (arg[d] < 0 || (arg[d] && x.shape[d] > kMaxFoldElements / arg[d]))
        return c.fail("invalid repeats " + shapeStr(arg));
      shape.push_back(x.shape[d] * arg[d]);
    }
  } else {
    auto b = infer::broadcastShapes(x.shape, arg);
    if (!b)
      return c.fail("cannot expand " + shapeStr(x.shape) + " to " + shapeStr(arg));
    shape = *b;
  }
  Shape strides = stridesOf(x.shape);
  const size_t off = shape.size() - x.shape.size();
  return rearrange(x, shape, [&](llvm::ArrayRef<int64_t> idx) {
    int64_t src = 0;
    for (size_t d = 0; d < x.shape.size(); ++d)
      src += (tile ? idx[off + d] % x.shape[d] : (x.shape[d] == 1 ? 0 : idx[off + d])) * strides[d];
    return src;
  });
}

} // namespace folding

using namespace folding;

llvm::Expected<Shape> viewShape(NodeCtx &c, llvm::ArrayRef<int64_t> inShape) {
  llvm::StringRef op = c.node.op_type();
  int64_t rank = int64_t(inShape.size());
  int64_t numel = checkedNumel(inShape, kMaxElements);
  Shape out;
  if (op == "Identity" || op == "Dropout") {
    out.assign(inShape.begin(), inShape.end());
  } else if (op == "Reshape") {
    auto s = c.requireConst(1, "shape");
    if (!s)
      return s.takeError();
    auto allowZero = c.getInt("allowzero", 0);
    if (!allowZero)
      return allowZero.takeError();
    IntList want = ints(**s);
    int64_t known = 1, inferAt = -1;
    for (size_t i = 0; i < want.size(); ++i) {
      int64_t d = want[i];
      if (d == 0 && !*allowZero) {
        if (int64_t(i) >= rank)
          return c.fail("shape " + shapeStr(want) + " copies dim " + llvm::Twine(i) +
                        " of a rank-" + llvm::Twine(rank) + " tensor");
        d = inShape[i];
      }
      if (d == -1) {
        if (inferAt >= 0)
          return c.fail("shape " + shapeStr(want) + " has more than one -1");
        inferAt = int64_t(i);
        out.push_back(1);
        continue;
      }
      if (d < 0 || (d != 0 && known > kMaxElements / d))
        return c.fail("invalid shape " + shapeStr(want));
      known *= d;
      out.push_back(d);
    }
    if (inferAt >= 0) {
      if (known == 0 || numel % known)
        return c.fail("shape " + shapeStr(want) + " does not fit " + llvm::Twine(numel) +
                      " elements");
      out[size_t(inferAt)] = numel / known;
    }
  } else if (op == "Flatten") {
    auto axis = c.getInt("axis", 1);
    if (!axis)
      return axis.takeError();
    auto a = *axis < 0 ? *axis + rank : *axis;
    if (a < 0 || a > rank)
      return c.fail("axis " + llvm::Twine(*axis) + " out of range for rank " + llvm::Twine(rank));
    int64_t lead = 1;
    for (int64_t i = 0; i < a; ++i)
      lead *= inShape[size_t(i)];
    out = {lead, lead ? numel / lead : 0};
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    // Axes come from the second input (opset 13 on).
    IntList axes;
    if (c.has(1)) {
      auto t = c.requireConst(1, "axes");
      if (!t)
        return t.takeError();
      axes = ints(**t);
    }
    if (op == "Unsqueeze") {
      int64_t outRank = rank + int64_t(axes.size());
      llvm::SmallVector<bool, 8> inserted(size_t(outRank), false);
      for (int64_t a : axes) {
        auto w = wrapAxis(a, outRank);
        if (!w || inserted[size_t(*w)])
          return c.fail("invalid axes " + shapeStr(axes) + " for rank " + llvm::Twine(rank));
        inserted[size_t(*w)] = true;
      }
      size_t k = 0;
      for (int64_t i = 0; i < outRank; ++i)
        out.push_back(inserted[size_t(i)] ? 1 : inShape[k++]);
    } else {
      llvm::SmallVector<bool, 8> drop(size_t(rank), axes.empty());
      for (int64_t a : axes) {
        auto w = wrapAxis(a, rank);
        if (!w || inShape[size_t(*w)] != 1)
          return c.fail("cannot squeeze axes " + shapeStr(axes) + " of shape " + shapeStr(inShape));
        drop[size_t(*w)] = true;
      }
      for (int64_t i = 0; i < rank; ++i)
        if (!drop[size_t(i)] || inShape[size_t(i)] != 1)
          out.push_back(inShape[size_t(i)]);
    }
  } else {
    llvm_unreachable("viewShape: not a view op");
  }
  if (checkedNumel(out, kMaxElements) != numel)
    return c.fail("cannot reshape " + shapeStr(inShape) + " to " + shapeStr(out));
  return out;
}

} // namespace sinter::onnximport
