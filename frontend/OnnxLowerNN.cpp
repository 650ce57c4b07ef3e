//===- frontend/OnnxLowerNN.cpp - convolutions, GEMMs, norms and pools ---------------===//
//
// Lowering rules for the ONNX ops with weights or windows. ONNX writes padding as begin and
// end per dim, PyTorch (and the catalog) as one number per dim: symmetric pads map
// directly; a transposed convolution whose end pad is smaller than its begin pad is the
// same as PyTorch's with output_padding; a pool whose pads differ is matched to PyTorch's
// padding and ceil_mode by its output size where the result is the same. Gemm is linear
// when B is [N, K] (transB = 1, as both exporters write nn.Linear) or a constant (then
// transposed here); its alpha and beta scale constant operands, or become a multiply.
// Norms whose scale is all ones and bias all zeros lose both (the catalog's norm without
// affine); GroupNormalization before opset 21 has per-group scales, widened to channels.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxImporter.h"

#include "onnx.pb.h"

#include <cmath>

namespace sinter::onnximport {
namespace {

Attr attr(const char *name, AttrValue v) { return Attr{name, std::move(v)}; }

/// A per-spatial-dim attribute as the catalog writes it: one number when all agree.
AttrValue spatial(llvm::ArrayRef<int64_t> v) {
  if (!v.empty() && llvm::all_of(v, [&](int64_t x) { return x == v[0]; }))
    return v[0];
  return IntList(v.begin(), v.end());
}

bool allEqual(llvm::ArrayRef<int64_t> v, int64_t x) {
  return llvm::all_of(v, [&](int64_t y) { return y == x; });
}

/// Adds `name` unless every value is `dflt`.
void addSpatial(llvm::SmallVectorImpl<Attr> &attrs, const char *name, llvm::ArrayRef<int64_t> v,
                int64_t dflt) {
  if (!allEqual(v, dflt))
    attrs.push_back(attr(name, spatial(v)));
}

/// A constant with every element equal to `v`.
bool constEquals(const ConstTensor *t, double v) {
  if (!t)
    return false;
  for (int64_t i = 0; i < t->numel(); ++i)
    if (t->num(size_t(i)) != v)
      return false;
  return true;
}

/// A per-spatial-dim int list attribute with `nd` entries (default `dflt` each).
llvm::Expected<IntList> spatialInts(NodeCtx &c, llvm::StringRef name, unsigned nd, int64_t dflt,
                                    unsigned perDim = 1) {
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
llvm::Error padsOf(NodeCtx &c, llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> kernel,
                   llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> dilation, IntList &begin,
                   IntList &end) {
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

llvm::Error bindEmit(NodeCtx &c, llvm::Expected<ValueId> r) {
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

llvm::Error lowerConv(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}))
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  const Shape xs = c.type(*x).shape;
  if (xs.size() < 3 || xs.size() > 5)
    return c.fail("expected an input of rank 3 to 5 (1-D to 3-D), got " + shapeStr(xs));
  unsigned nd = unsigned(xs.size() - 2);
  Shape ws = c.shape(1);
  if (ws.size() != xs.size())
    return c.fail("weight " + shapeStr(ws) + " does not match input " + shapeStr(xs));
  Shape kernel(ws.begin() + 2, ws.end());
  auto ks = c.getInts("kernel_shape");
  if (!ks)
    return ks.takeError();
  if (*ks && llvm::ArrayRef<int64_t>(**ks) != llvm::ArrayRef<int64_t>(kernel))
    return c.fail("kernel_shape " + shapeStr(**ks) + " disagrees with the weight " + shapeStr(ws));
  auto stride = spatialInts(c, "strides", nd, 1), dilation = spatialInts(c, "dilations", nd, 1);
  if (!stride)
    return stride.takeError();
  if (!dilation)
    return dilation.takeError();
  if (llvm::any_of(*stride, [](int64_t s) { return s < 1; }))
    return c.fail("strides must be >= 1");
  IntList begin, end;
  if (auto err = padsOf(c, llvm::ArrayRef<int64_t>(xs).drop_front(2), kernel, *stride, *dilation,
                        begin, end))
    return err;
  if (begin != end)
    return c.fail("asymmetric pads (begin " + shapeStr(begin) + ", end " + shapeStr(end) +
                  ") are not supported");
  auto group = c.getInt("group", 1);
  if (!group)
    return group.takeError();
  llvm::SmallVector<Attr, 4> attrs;
  addSpatial(attrs, "stride", *stride, 1);
  addSpatial(attrs, "padding", begin, 0);
  addSpatial(attrs, "dilation", *dilation, 1);
  if (*group != 1)
    attrs.push_back(attr("groups", *group));
  auto w = c.value(1);
  if (!w)
    return w.takeError();
  llvm::SmallVector<Operand, 3> ops{Operand::ofValue(*x), Operand::ofValue(*w)};
  if (c.has(2)) {
    auto b = c.value(2);
    if (!b)
      return b.takeError();
    ops.push_back(Operand::ofValue(*b));
  }
  return bindEmit(c, c.emit(OpKind::Conv, ops, attrs));
}

llvm::Error lowerConvTranspose(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                              "output_shape", "pads", "strides"}))
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  const Shape xs = c.type(*x).shape;
  if (xs.size() < 3 || xs.size() > 5)
    return c.fail("expected an input of rank 3 to 5 (1-D to 3-D), got " + shapeStr(xs));
  unsigned nd = unsigned(xs.size() - 2);
  Shape ws = c.shape(1);
  if (ws.size() != xs.size())
    return c.fail("weight " + shapeStr(ws) + " does not match input " + shapeStr(xs));
  Shape kernel(ws.begin() + 2, ws.end());
  auto ks = c.getInts("kernel_shape");
  if (!ks)
    return ks.takeError();
  if (*ks && llvm::ArrayRef<int64_t>(**ks) != llvm::ArrayRef<int64_t>(kernel))
    return c.fail("kernel_shape " + shapeStr(**ks) + " disagrees with the weight " + shapeStr(ws));
  auto stride = spatialInts(c, "strides", nd, 1), dilation = spatialInts(c, "dilations", nd, 1),
       outPad = spatialInts(c, "output_padding", nd, 0), pads = spatialInts(c, "pads", nd, 0, 2);
  for (auto *e : {&stride, &dilation, &outPad, &pads})
    if (!*e)
      return e->takeError();
  if (llvm::any_of(*stride, [](int64_t s) { return s < 1; }))
    return c.fail("strides must be >= 1");
  IntList begin(pads->begin(), pads->begin() + nd), end(pads->begin() + nd, pads->end());
  auto autoPad = c.getString("auto_pad", "NOTSET");
  if (!autoPad)
    return autoPad.takeError();
  auto outShape = c.getInts("output_shape");
  if (!outShape)
    return outShape.takeError();
  bool same = *autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER";
  if (*autoPad == "VALID") {
    begin.assign(nd, 0);
    end.assign(nd, 0);
  } else if (*autoPad != "NOTSET" && !same) {
    return c.fail("auto_pad '" + *autoPad + "' is not supported");
  }
  if (*outShape || same) {
    // The spec's rule: total padding from the wanted output size, split at begin / end.
    IntList want;
    if (*outShape) {
      want.assign((*outShape)->begin(), (*outShape)->end());
      if (want.size() == nd + 2)
        want.erase(want.begin(), want.begin() + 2);
    } else {
      for (unsigned d = 0; d < nd; ++d)
        want.push_back(xs[2 + d] * (*stride)[d]);
    }
    if (want.size() != nd)
      return c.fail("output_shape " + shapeStr(**outShape) + " does not have " + llvm::Twine(nd) +
                    " spatial dims");
    for (unsigned d = 0; d < nd; ++d) {
      int64_t total = (*stride)[d] * (xs[2 + d] - 1) + (*outPad)[d] +
                      (kernel[d] - 1) * (*dilation)[d] + 1 - want[d];
      if (total < 0)
        return c.fail("output_shape " + shapeStr(want) + " is larger than the convolution makes");
      begin[d] = *autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end[d] = total - begin[d];
    }
  }
  // PyTorch pads both ends by `padding` and adds output_padding at the end only: an end pad
  // smaller than the begin pad is output_padding of the difference.
  IntList padding(nd), outputPadding(nd);
  for (unsigned d = 0; d < nd; ++d) {
    if (end[d] > begin[d])
      return c.fail("pads (begin " + shapeStr(begin) + ", end " + shapeStr(end) +
                    ") with a larger end are not supported");
    padding[d] = begin[d];
    outputPadding[d] = (*outPad)[d] + begin[d] - end[d];
  }
  auto group = c.getInt("group", 1);
  if (!group)
    return group.takeError();
  llvm::SmallVector<Attr, 5> attrs;
  addSpatial(attrs, "stride", *stride, 1);
  addSpatial(attrs, "padding", padding, 0);
  addSpatial(attrs, "output_padding", outputPadding, 0);
  addSpatial(attrs, "dilation", *dilation, 1);
  if (*group != 1)
    attrs.push_back(attr("groups", *group));
  auto w = c.value(1);
  if (!w)
    return w.takeError();
  llvm::SmallVector<Operand, 3> ops{Operand::ofValue(*x), Operand::ofValue(*w)};
  if (c.has(2)) {
    auto b = c.value(2);
    if (!b)
      return b.takeError();
    ops.push_back(Operand::ofValue(*b));
  }
  return bindEmit(c, c.emit(OpKind::ConvTranspose, ops, attrs));
}

/// A constant derived from input `i`'s (transposed, scaled or reshaped), as a param that
/// keeps the input's name when possible.
llvm::Expected<ValueId> derivedParam(NodeCtx &c, unsigned i, ConstTensor t) {
  Binding b{-1, std::make_shared<const ConstTensor>(std::move(t)), c.in(i).paramName};
  auto p = c.im.paramFor(b);
  if (!p)
    return c.fail(llvm::toString(p.takeError()));
  return *p;
}

llvm::Error lowerGemm(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"alpha", "beta", "transA", "transB"}))
    return err;
  auto alpha = c.getFloat("alpha", 1.0), beta = c.getFloat("beta", 1.0);
  auto transA = c.getInt("transA", 0), transB = c.getInt("transB", 0);
  for (auto *e : {&alpha, &beta})
    if (!*e)
      return e->takeError();
  for (auto *e : {&transA, &transB})
    if (!*e)
      return e->takeError();
  if (*transA)
    return c.fail("transA = 1 is not supported");
  Shape as = c.shape(0), bs = c.shape(1);
  if (as.size() != 2 || bs.size() != 2)
    return c.fail("Gemm takes 2-D A and B, got " + shapeStr(as) + " and " + shapeStr(bs));
  auto a = c.value(0);
  if (!a)
    return a.takeError();
  // w: B as linear's [N, K]; constants are transposed and scaled by alpha here.
  const ConstTensor *bc = c.constant(1);
  ValueId w;
  bool alphaDone = *alpha == 1.0;
  if (bc && (!*transB || *alpha != 1.0)) {
    int64_t rows = bs[0], cols = bs[1];
    ConstTensor t =
        ConstTensor::zeros(ElemKind::F32, *transB ? Shape{rows, cols} : Shape{cols, rows});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        t.f32[size_t(*transB ? r * cols + k : k * rows + r)] =
            float(*alpha * bc->num(size_t(r * cols + k)));
    auto p = derivedParam(c, 1, std::move(t));
    if (!p)
      return p.takeError();
    w = *p;
    alphaDone = true;
  } else {
    auto v = c.value(1);
    if (!v)
      return v.takeError();
    w = *v;
  }
  // The bias: linear's when it is [N] (or [1, N]) and constant or beta is 1.
  int64_t n = c.type(w).shape[*transB || bc ? 0 : 1];
  std::optional<ValueId> bias;
  bool biasDone = !c.has(2);
  if (c.has(2)) {
    Shape cs = c.shape(2);
    const ConstTensor *cc = c.constant(2);
    bool perColumn = (cs.size() == 1 && cs[0] == n) || (cs.size() == 2 && cs[0] == 1 && cs[1] == n);
    // A computed C can be the bias only as it is: [N] and not scaled.
    bool asBias = perColumn && (*transB || bc) && (cc || (*beta == 1.0 && cs.size() == 1));
    if (asBias) {
      if (cc && (cs.size() == 2 || *beta != 1.0)) {
        ConstTensor t = ConstTensor::zeros(ElemKind::F32, {n});
        for (int64_t j = 0; j < n; ++j)
          t.f32[size_t(j)] = float(*beta * cc->num(size_t(j)));
        auto p = derivedParam(c, 2, std::move(t));
        if (!p)
          return p.takeError();
        bias = *p;
      } else {
        auto v = c.value(2);
        if (!v)
          return v.takeError();
        bias = *v;
      }
      biasDone = true;
    }
  }
  llvm::Expected<ValueId> y = -1;
  llvm::StringRef anchorSuffix = alphaDone && biasDone ? "" : "gemm";
  if (*transB || bc) {
    llvm::SmallVector<Operand, 3> ops{Operand::ofValue(*a), Operand::ofValue(w)};
    if (bias)
      ops.push_back(Operand::ofValue(*bias));
    y = c.emit(OpKind::Linear, ops, {}, anchorSuffix);
  } else {
    y = c.emit(OpKind::Matmul, {Operand::ofValue(*a), Operand::ofValue(w)}, {}, anchorSuffix);
  }
  if (!y)
    return y.takeError();
  if (!alphaDone && *alpha != 1.0) {
    y = c.emit(OpKind::Mul, {Operand::ofValue(*y), Operand::ofScalar(*alpha)}, {},
               biasDone ? "" : "alpha");
    if (!y)
      return y.takeError();
  }
  if (!biasDone) {
    auto cv = c.binaryOperand(2, c.type(*y).shape);
    if (!cv)
      return cv.takeError();
    Operand cop = *cv;
    if (*beta != 1.0) {
      if (cop.isScalar()) {
        cop = Operand::ofScalar(cop.scalar * *beta);
      } else {
        auto scaled = c.emit(OpKind::Mul, {cop, Operand::ofScalar(*beta)}, {}, "beta");
        if (!scaled)
          return scaled.takeError();
        cop = Operand::ofValue(*scaled);
      }
    }
    y = c.emit(OpKind::Add, {Operand::ofValue(*y), cop});
    if (!y)
      return y.takeError();
  }
  c.bind(0, *y);
  return llvm::Error::success();
}

llvm::Error lowerMatMul(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  auto a = c.value(0), b = c.value(1);
  if (!a)
    return a.takeError();
  if (!b)
    return b.takeError();
  return bindEmit(c, c.emit(OpKind::Matmul, {Operand::ofValue(*a), Operand::ofValue(*b)}));
}

/// Norm operands: x, then optional (gamma, beta) dropped when they are ones and zeros.
llvm::Expected<llvm::SmallVector<Operand, 5>> normOperands(NodeCtx &c, unsigned scale,
                                                           unsigned bias) {
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  llvm::SmallVector<Operand, 5> ops{Operand::ofValue(*x)};
  if (constEquals(c.constant(scale), 1.0) && (!c.has(bias) || constEquals(c.constant(bias), 0.0)))
    return ops;
  for (unsigned i : {scale, bias}) {
    auto v = c.value(i);
    if (!v)
      return v.takeError();
    ops.push_back(Operand::ofValue(*v));
  }
  return ops;
}

llvm::Error lowerBatchNorm(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"epsilon", "momentum", "training_mode", "spatial"}))
    return err;
  auto training = c.getInt("training_mode", 0);
  if (!training)
    return training.takeError();
  if (*training)
    return c.fail("training_mode = 1 is not supported (inference only)");
  if (auto err = c.onlyFirstOutputUsed())
    return err;
  auto eps = c.getFloat("epsilon", 1e-5);
  if (!eps)
    return eps.takeError();
  auto norm = normOperands(c, 1, 2);
  if (!norm)
    return norm.takeError();
  llvm::SmallVector<Operand, 5> ops{(*norm)[0]};
  for (unsigned i : {3u, 4u}) {
    auto v = c.value(i);
    if (!v)
      return v.takeError();
    ops.push_back(Operand::ofValue(*v));
  }
  ops.append(norm->begin() + 1, norm->end());
  llvm::SmallVector<Attr, 1> attrs;
  if (*eps != 1e-5)
    attrs.push_back(attr("eps", *eps));
  return bindEmit(c, c.emit(OpKind::BatchNorm, ops, attrs));
}

llvm::Error lowerInstanceNorm(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"epsilon"}))
    return err;
  auto eps = c.getFloat("epsilon", 1e-5);
  if (!eps)
    return eps.takeError();
  auto ops = normOperands(c, 1, 2);
  if (!ops)
    return ops.takeError();
  llvm::SmallVector<Attr, 1> attrs;
  if (*eps != 1e-5)
    attrs.push_back(attr("eps", *eps));
  return bindEmit(c, c.emit(OpKind::InstanceNorm, *ops, attrs));
}

/// Input `i` reshaped to `shape` (a constant with that many elements), or as it is.
llvm::Expected<ValueId> shapedParam(NodeCtx &c, unsigned i, llvm::ArrayRef<int64_t> shape) {
  const ConstTensor *t = c.constant(i);
  if (!t || t->shape == Shape(shape.begin(), shape.end()))
    return c.value(i);
  if (t->numel() != checkedNumel(shape, kMaxElements))
    return c.fail("input " + llvm::Twine(i) + " of shape " + shapeStr(t->shape) + " does not fit " +
                  shapeStr(shape));
  ConstTensor r = *t;
  r.shape.assign(shape.begin(), shape.end());
  return derivedParam(c, i, std::move(r));
}

llvm::Error lowerLayerNorm(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"axis", "epsilon", "stash_type"}))
    return err;
  if (auto err = c.onlyFirstOutputUsed())
    return err;
  auto axis = c.getInt("axis", -1);
  auto eps = c.getFloat("epsilon", 1e-5);
  if (!axis)
    return axis.takeError();
  if (!eps)
    return eps.takeError();
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  const Shape xs = c.type(*x).shape;
  int64_t rank = int64_t(xs.size()), a = *axis < 0 ? *axis + rank : *axis;
  if (a < 0 || a >= rank)
    return c.fail("axis " + llvm::Twine(*axis) + " out of range for rank " + llvm::Twine(rank));
  IntList normalized(xs.begin() + a, xs.end());
  llvm::SmallVector<Attr, 2> attrs{attr("normalized_shape", normalized)};
  if (*eps != 1e-5)
    attrs.push_back(attr("eps", *eps));
  llvm::SmallVector<Operand, 3> ops{Operand::ofValue(*x)};
  bool noAffine = constEquals(c.constant(1), 1.0) && (!c.has(2) || constEquals(c.constant(2), 0.0));
  if (!noAffine) {
    auto gamma = shapedParam(c, 1, normalized);
    if (!gamma)
      return gamma.takeError();
    ops.push_back(Operand::ofValue(*gamma));
    if (c.has(2)) {
      auto beta = shapedParam(c, 2, normalized);
      if (!beta)
        return beta.takeError();
      ops.push_back(Operand::ofValue(*beta));
    } else {
      // The catalog's layer_norm takes gamma and beta together: a zero beta.
      ConstTensor zero = ConstTensor::zeros(ElemKind::F32, normalized);
      Binding b{-1, std::make_shared<const ConstTensor>(std::move(zero)),
                c.in(1).paramName + "_zero_bias"};
      auto p = c.im.paramFor(b);
      if (!p)
        return c.fail(llvm::toString(p.takeError()));
      ops.push_back(Operand::ofValue(*p));
    }
  }
  return bindEmit(c, c.emit(OpKind::LayerNorm, ops, attrs));
}

llvm::Error lowerGroupNorm(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"epsilon", "num_groups", "stash_type"}))
    return err;
  auto groups = c.getInt("num_groups", 0);
  auto eps = c.getFloat("epsilon", 1e-5);
  if (!groups)
    return groups.takeError();
  if (!eps)
    return eps.takeError();
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  const Shape xs = c.type(*x).shape;
  if (xs.size() < 2 || *groups < 1 || xs[1] % *groups)
    return c.fail("num_groups " + llvm::Twine(*groups) + " does not divide the channels of " +
                  shapeStr(xs));
  int64_t channels = xs[1];
  llvm::SmallVector<Attr, 2> attrs{attr("groups", *groups)};
  if (*eps != 1e-5)
    attrs.push_back(attr("eps", *eps));
  llvm::SmallVector<Operand, 3> ops{Operand::ofValue(*x)};
  if (!(constEquals(c.constant(1), 1.0) && constEquals(c.constant(2), 0.0))) {
    for (unsigned i : {1u, 2u}) {
      // Opsets 18 to 20 scale per group; PyTorch (and opset 21) per channel.
      if (c.opset < 21) {
        auto t = c.requireConst(i, i == 1 ? "scale" : "bias");
        if (!t)
          return t.takeError();
        if ((*t)->numel() != *groups)
          return c.fail("expected " + llvm::Twine(*groups) + " per-group values, got " +
                        shapeStr((*t)->shape));
        ConstTensor wide = ConstTensor::zeros(ElemKind::F32, {channels});
        for (int64_t ch = 0; ch < channels; ++ch)
          wide.f32[size_t(ch)] = float((*t)->num(size_t(ch / (channels / *groups))));
        auto p = derivedParam(c, i, std::move(wide));
        if (!p)
          return p.takeError();
        ops.push_back(Operand::ofValue(*p));
      } else {
        auto v = shapedParam(c, i, {channels});
        if (!v)
          return v.takeError();
        ops.push_back(Operand::ofValue(*v));
      }
    }
  }
  return bindEmit(c, c.emit(OpKind::GroupNorm, ops, attrs));
}

/// PyTorch's pooled length (the catalog's: a last window must start inside the input or
/// its left padding).
int64_t torchPoolOut(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t o = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (o - 1) * s >= in + p)
    --o;
  return o;
}

template <OpKind Kind> llvm::Error lowerPool(NodeCtx &c) {
  bool isMax = Kind == OpKind::MaxPool;
  if (auto err = c.onlyAttrs({"auto_pad", "ceil_mode", "count_include_pad", "dilations",
                              "kernel_shape", "pads", "storage_order", "strides"}))
    return err;
  if (auto err = c.onlyFirstOutputUsed())
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  const Shape xs = c.type(*x).shape;
  if (xs.size() < 3 || xs.size() > 5)
    return c.fail("expected an input of rank 3 to 5 (1-D to 3-D), got " + shapeStr(xs));
  unsigned nd = unsigned(xs.size() - 2);
  auto kernel = c.getInts("kernel_shape");
  if (!kernel)
    return kernel.takeError();
  if (!*kernel || (*kernel)->size() != nd)
    return c.fail("kernel_shape must give " + llvm::Twine(nd) + " sizes");
  auto stride = spatialInts(c, "strides", nd, 1), dilation = spatialInts(c, "dilations", nd, 1);
  if (!stride)
    return stride.takeError();
  if (!dilation)
    return dilation.takeError();
  if (llvm::any_of(*stride, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(**kernel, [](int64_t k) { return k < 1; }))
    return c.fail("kernel_shape and strides must be >= 1");
  if (!isMax && !allEqual(*dilation, 1))
    return c.fail("dilations are not supported for AveragePool");
  auto ceilMode = c.getInt("ceil_mode", 0), countPad = c.getInt("count_include_pad", 0);
  if (!ceilMode)
    return ceilMode.takeError();
  if (!countPad)
    return countPad.takeError();
  IntList begin, end;
  if (auto err = padsOf(c, llvm::ArrayRef<int64_t>(xs).drop_front(2), **kernel, *stride, *dilation,
                        begin, end))
    return err;
  bool ceil = *ceilMode != 0;
  if (begin != end) {
    // Extra end padding only adds windows at the end; PyTorch's ceil_mode adds the same
    // windows when the output sizes agree. For max and for averages that skip padding the
    // values agree too.
    if (!isMax && *countPad)
      return c.fail("asymmetric pads with count_include_pad = 1 are not supported");
    std::optional<bool> match;
    for (bool tryCeil : {false, true}) {
      bool ok = true;
      for (unsigned d = 0; d < nd && ok; ++d) {
        int64_t k = (**kernel)[d], s = (*stride)[d], dl = (*dilation)[d];
        int64_t span = xs[2 + d] + begin[d] + end[d] - dl * (k - 1) - 1;
        int64_t onnxOut = (ceil ? (span + s - 1) / s : span / s) + 1;
        ok = end[d] >= begin[d] && torchPoolOut(xs[2 + d], k, s, begin[d], dl, tryCeil) == onnxOut;
      }
      if (ok && !match)
        match = tryCeil;
    }
    if (!match)
      return c.fail("asymmetric pads (begin " + shapeStr(begin) + ", end " + shapeStr(end) +
                    ") are not supported");
    ceil = *match;
  }
  llvm::SmallVector<Attr, 6> attrs{attr("kernel_size", spatial(**kernel))};
  if (*stride != **kernel)
    attrs.push_back(attr("stride", spatial(*stride)));
  addSpatial(attrs, "padding", begin, 0);
  if (isMax)
    addSpatial(attrs, "dilation", *dilation, 1);
  if (ceil)
    attrs.push_back(attr("ceil_mode", true));
  if (!isMax && !*countPad)
    attrs.push_back(attr("count_include_pad", false));
  return bindEmit(c, c.emit(Kind, {Operand::ofValue(*x)}, attrs));
}

const LowerRule kRules[] = {
    {"Conv", 1, 2, 3, lowerConv},
    {"ConvTranspose", 1, 2, 3, lowerConvTranspose},
    {"Gemm", 13, 2, 3, lowerGemm},
    {"MatMul", 13, 2, 2, lowerMatMul},
    {"BatchNormalization", 9, 5, 5, lowerBatchNorm},
    {"InstanceNormalization", 6, 3, 3, lowerInstanceNorm},
    {"LayerNormalization", 17, 2, 3, lowerLayerNorm},
    {"GroupNormalization", 18, 3, 3, lowerGroupNorm},
    {"MaxPool", 12, 1, 1, lowerPool<OpKind::MaxPool>},
    {"AveragePool", 11, 1, 1, lowerPool<OpKind::AvgPool>},
};

} // namespace

llvm::ArrayRef<LowerRule> nnRules() { return kRules; }

} // namespace sinter::onnximport
