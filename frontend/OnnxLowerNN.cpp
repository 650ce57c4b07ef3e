//===- frontend/OnnxLowerNN.cpp - convolutions and GEMMs ------------------------------===//
//
// Lowering rules for convolutions and GEMMs. ONNX writes padding as begin and end per dim,
// PyTorch (and the catalog) as one number per dim: symmetric pads map directly; a
// transposed convolution whose end pad is smaller than its begin pad is the same as
// PyTorch's with output_padding. Gemm is linear when B is [N, K] (transB = 1, as both
// exporters write nn.Linear) or a constant (then transposed here); its alpha and beta scale
// constant operands, or become a multiply.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxLowerUtil.h"

#include "onnx.pb.h"

#include <cmath>

namespace sinter::onnximport {
namespace {

using namespace lowering;

/// What Conv and ConvTranspose read alike: the input and its spatial rank, and the kernel
/// extents from the weight, checked against kernel_shape when the node has one.
struct ConvInput {
  ValueId x;
  Shape xs;
  unsigned nd = 0;
  Shape kernel;
};

llvm::Expected<ConvInput> convInput(NodeCtx &c) {
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  ConvInput in{*x, c.type(*x).shape, 0, {}};
  if (in.xs.size() < 3 || in.xs.size() > 5)
    return c.fail("expected an input of rank 3 to 5 (1-D to 3-D), got " + shapeStr(in.xs));
  in.nd = unsigned(in.xs.size() - 2);
  Shape ws = c.shape(1);
  if (ws.size() != in.xs.size())
    return c.fail("weight " + shapeStr(ws) + " does not match input " + shapeStr(in.xs));
  in.kernel.assign(ws.begin() + 2, ws.end());
  auto ks = c.getInts("kernel_shape");
  if (!ks)
    return ks.takeError();
  if (*ks && llvm::ArrayRef<int64_t>(**ks) != llvm::ArrayRef<int64_t>(in.kernel))
    return c.fail("kernel_shape " + shapeStr(**ks) + " disagrees with the weight " + shapeStr(ws));
  return in;
}

/// Emits the convolution `kind` of x with the node's weight, optional bias and group count.
llvm::Error emitConv(NodeCtx &c, OpKind kind, ValueId x, llvm::SmallVectorImpl<Attr> &attrs) {
  auto group = c.getInt("group", 1);
  if (!group)
    return group.takeError();
  if (*group != 1)
    attrs.push_back(attr("groups", *group));
  auto w = c.value(1);
  if (!w)
    return w.takeError();
  llvm::SmallVector<Operand, 3> ops{Operand::ofValue(x), Operand::ofValue(*w)};
  if (c.has(2)) {
    auto b = c.value(2);
    if (!b)
      return b.takeError();
    ops.push_back(Operand::ofValue(*b));
  }
  return bindEmit(c, c.emit(kind, ops, attrs));
}

llvm::Error lowerConv(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}))
    return err;
  auto in = convInput(c);
  if (!in)
    return in.takeError();
  const Shape &xs = in->xs, &kernel = in->kernel;
  const unsigned nd = in->nd;
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
  llvm::SmallVector<Attr, 5> attrs;
  addSpatial(attrs, "stride", *stride, 1);
  addSpatial(attrs, "padding", begin, 0);
  addSpatial(attrs, "dilation", *dilation, 1);
  return emitConv(c, OpKind::Conv, in->x, attrs);
}

llvm::Error lowerConvTranspose(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                              "output_shape", "pads", "strides"}))
    return err;
  auto in = convInput(c);
  if (!in)
    return in.takeError();
  const Shape &xs = in->xs, &kernel = in->kernel;
  const unsigned nd = in->nd;
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
  llvm::SmallVector<Attr, 5> attrs;
  addSpatial(attrs, "stride", *stride, 1);
  addSpatial(attrs, "padding", padding, 0);
  addSpatial(attrs, "output_padding", outputPadding, 0);
  addSpatial(attrs, "dilation", *dilation, 1);
  return emitConv(c, OpKind::ConvTranspose, in->x, attrs);
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

const LowerRule kRules[] = {
    {"Conv", 1, 2, 3, lowerConv},
    {"ConvTranspose", 1, 2, 3, lowerConvTranspose},
    {"Gemm", 13, 2, 3, lowerGemm},
    {"MatMul", 13, 2, 2, lowerMatMul},
};

} // namespace

llvm::ArrayRef<LowerRule> nnRules() { return kRules; }

} // namespace sinter::onnximport
