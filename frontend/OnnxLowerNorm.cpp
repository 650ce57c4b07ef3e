//===- frontend/OnnxLowerNorm.cpp - norms and pools -----------------------------------===//
//
// Lowering rules for the normalisations and pools. Norms whose scale is all ones and bias
// all zeros lose both (the catalog's norm without affine); GroupNormalization before opset
// 21 has per-group scales, widened to channels here. A pool whose begin and end pads differ
// is matched to PyTorch's padding and ceil_mode by its output size, where the values agree.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxLowerUtil.h"

#include "onnx.pb.h"

namespace sinter::onnximport {
namespace {

using namespace lowering;

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
    {"BatchNormalization", 9, 5, 5, lowerBatchNorm},
    {"InstanceNormalization", 6, 3, 3, lowerInstanceNorm},
    {"LayerNormalization", 17, 2, 3, lowerLayerNorm},
    {"GroupNormalization", 18, 3, 3, lowerGroupNorm},
    {"MaxPool", 12, 1, 1, lowerPool<OpKind::MaxPool>},
    {"AveragePool", 11, 1, 1, lowerPool<OpKind::AvgPool>},
};

} // namespace

llvm::ArrayRef<LowerRule> normRules() { return kRules; }

} // namespace sinter::onnximport
