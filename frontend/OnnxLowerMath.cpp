//===- frontend/OnnxLowerMath.cpp - elementwise, reductions, softmax and views -------===//
//
// Lowering rules for the ONNX ops that map onto the catalog's elementwise ops, reductions,
// softmax and views. Most are one op with renamed attributes; the rest say what they
// become: Reciprocal is div(1, x), Pow with a constant exponent of 2 or 3 is a product,
// HardSigmoid with other than PyTorch's slope is mul, add and clamp, Clip is clamp,
// variadic Max/Min chain maximum/minimum, and Reshape, Flatten, Squeeze and Unsqueeze of a
// computed tensor are reshape (none at all when the shape does not change). Identity,
// Dropout (inference) and casts to f32 bind their input unchanged. Transpose and Expand of
// a computed tensor are supported only when they move no data.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxImporter.h"
#include "frontend/OnnxLowerUtil.h"

#include "onnx.pb.h"

#include <cmath>

namespace sinter::onnximport {
namespace {

Attr attr(const char *name, AttrValue v) { return Attr{name, std::move(v)}; }

llvm::Error unaryOp(NodeCtx &c, OpKind kind, llvm::ArrayRef<Attr> attrs = {}) {
  if (auto err = c.onlyFirstOutputUsed())
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  auto r = c.emit(kind, {Operand::ofValue(*x)}, attrs);
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

#define SIMPLE_UNARY(Fn, Kind)                                                                     \
  llvm::Error Fn(NodeCtx &c) {                                                                     \
    if (auto err = c.onlyAttrs({}))                                                                \
      return err;                                                                                  \
    return unaryOp(c, OpKind::Kind);                                                               \
  }
SIMPLE_UNARY(lowerRelu, Relu)
SIMPLE_UNARY(lowerSigmoid, Sigmoid)
SIMPLE_UNARY(lowerTanh, Tanh)
SIMPLE_UNARY(lowerExp, Exp)
SIMPLE_UNARY(lowerLog, Log)
SIMPLE_UNARY(lowerAbs, Abs)
SIMPLE_UNARY(lowerNeg, Neg)
SIMPLE_UNARY(lowerSqrt, Sqrt)
SIMPLE_UNARY(lowerErf, Erf)
SIMPLE_UNARY(lowerHardSwish, Hardswish)
SIMPLE_UNARY(lowerMish, Mish)
// ONNX Softplus is log(1 + exp(x)); sinter's softplus with PyTorch's default threshold (20)
// returns x above it, which differs from log1p(exp(x)) by less than 2.1e-9.
SIMPLE_UNARY(lowerSoftplus, Softplus)
#undef SIMPLE_UNARY

llvm::Error lowerGelu(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"approximate"}))
    return err;
  auto approx = c.getString("approximate", "none");
  if (!approx)
    return approx.takeError();
  if (*approx != "none" && *approx != "tanh")
    return c.fail("approximate '" + *approx + "' is not \"none\" or \"tanh\"");
  if (*approx == "tanh")
    return unaryOp(c, OpKind::Gelu, {attr("approximate", std::string("tanh"))});
  return unaryOp(c, OpKind::Gelu);
}

llvm::Error lowerLeakyRelu(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"alpha"}))
    return err;
  auto alpha = c.getFloat("alpha", 0.01);
  if (!alpha)
    return alpha.takeError();
  // ONNX stores the slope as a float: 0.01f, not PyTorch's double 0.01.
  if (float(*alpha) == 0.01f)
    return unaryOp(c, OpKind::LeakyRelu);
  return unaryOp(c, OpKind::LeakyRelu, {attr("negative_slope", *alpha)});
}

llvm::Error lowerElu(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"alpha"}))
    return err;
  auto alpha = c.getFloat("alpha", 1.0);
  if (!alpha)
    return alpha.takeError();
  if (*alpha == 1.0)
    return unaryOp(c, OpKind::Elu);
  return unaryOp(c, OpKind::Elu, {attr("alpha", *alpha)});
}

llvm::Error lowerHardSigmoid(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"alpha", "beta"}))
    return err;
  auto alpha = c.getFloat("alpha", 0.2), beta = c.getFloat("beta", 0.5);
  if (!alpha)
    return alpha.takeError();
  if (!beta)
    return beta.takeError();
  // PyTorch's hardsigmoid is ONNX's with alpha = 1/6 (stored as a float) and beta = 0.5.
  if (float(*alpha) == float(1.0 / 6) && *beta == 0.5)
    return unaryOp(c, OpKind::Hardsigmoid);
  if (auto err = c.onlyFirstOutputUsed())
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  auto m = c.emit(OpKind::Mul, {Operand::ofValue(*x), Operand::ofScalar(*alpha)}, {}, "alpha");
  if (!m)
    return m.takeError();
  auto a = c.emit(OpKind::Add, {Operand::ofValue(*m), Operand::ofScalar(*beta)}, {}, "beta");
  if (!a)
    return a.takeError();
  auto r = c.emit(OpKind::Clamp, {Operand::ofValue(*a)}, {attr("min", 0.0), attr("max", 1.0)});
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

llvm::Error lowerReciprocal(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  auto r = c.emit(OpKind::Div, {Operand::ofScalar(1.0), Operand::ofValue(*x)});
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

/// A binary op; a constant side becomes a number (one element) or a param.
llvm::Expected<ValueId> binaryOp(NodeCtx &c, OpKind kind, unsigned i, unsigned j,
                                 std::optional<ValueId> left = std::nullopt,
                                 llvm::StringRef suffix = "") {
  Shape si = left ? c.type(*left).shape : c.shape(i), sj = c.shape(j);
  Operand a, b;
  if (left) {
    a = Operand::ofValue(*left);
  } else {
    auto oa = c.binaryOperand(i, sj);
    if (!oa)
      return oa.takeError();
    a = *oa;
  }
  auto ob = c.binaryOperand(j, si);
  if (!ob)
    return ob.takeError();
  b = *ob;
  if (a.isScalar() && b.isScalar())
    return c.fail("both operands are numbers (the importer should have folded this node)");
  return c.emit(kind, {a, b}, {}, suffix);
}

template <OpKind Kind> llvm::Error lowerBinary(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  if (c.numInputs() != 2 || !c.has(0) || !c.has(1))
    return c.fail("expected 2 inputs");
  auto r = binaryOp(c, Kind, 0, 1);
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

/// Max / Min: variadic, chained left to right.
template <OpKind Kind> llvm::Error lowerMaxMin(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  llvm::SmallVector<unsigned, 4> inputs;
  for (unsigned i = 0; i < c.numInputs(); ++i)
    if (c.has(i))
      inputs.push_back(i);
  if (inputs.empty())
    return c.fail("expected at least 1 input");
  // Start from a computed input so that the chain never combines two numbers.
  auto first = llvm::find_if(inputs, [&](unsigned i) { return !c.constant(i); });
  if (first == inputs.end())
    return c.fail("every input is constant (the importer should have folded this node)");
  std::swap(*first, inputs.front());
  auto acc = c.value(inputs[0]);
  if (!acc)
    return acc.takeError();
  for (size_t k = 1; k < inputs.size(); ++k) {
    auto r = binaryOp(c, Kind, 0, inputs[k], *acc, k + 1 < inputs.size() ? "partial" : "");
    if (!r)
      return r.takeError();
    acc = *r;
  }
  c.bind(0, *acc);
  return llvm::Error::success();
}

llvm::Error lowerPow(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  auto e = c.requireConst(1, "exponent");
  if (!e)
    return e.takeError();
  if ((*e)->numel() != 1)
    return c.fail("the exponent must be a single number");
  double p = scalarOf(**e);
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  Operand xv = Operand::ofValue(*x);
  llvm::Expected<ValueId> r = *x;
  if (p == 1) {
    // x ** 1 is x.
  } else if (p == 2) {
    r = c.emit(OpKind::Mul, {xv, xv});
  } else if (p == 3) {
    auto sq = c.emit(OpKind::Mul, {xv, xv}, {}, "square");
    if (!sq)
      return sq.takeError();
    r = c.emit(OpKind::Mul, {Operand::ofValue(*sq), xv});
  } else if (p == 0.5) {
    r = c.emit(OpKind::Sqrt, {xv});
  } else if (p == -0.5) {
    r = c.emit(OpKind::Rsqrt, {xv});
  } else if (p == -1) {
    r = c.emit(OpKind::Div, {Operand::ofScalar(1.0), xv});
  } else {
    return c.fail("exponent " + formatDouble(p) +
                  " is not supported (1, 2, 3, 0.5, -0.5 and -1 are)");
  }
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

llvm::Error lowerClip(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  llvm::SmallVector<Attr, 2> attrs;
  for (unsigned i : {1u, 2u}) {
    if (!c.has(i))
      continue;
    auto b = c.requireConst(i, i == 1 ? "min" : "max");
    if (!b)
      return b.takeError();
    if ((*b)->numel() != 1)
      return c.fail("min and max must be single numbers");
    attrs.push_back(attr(i == 1 ? "min" : "max", scalarOf(**b)));
  }
  if (attrs.empty()) {
    auto x = c.value(0);
    if (!x)
      return x.takeError();
    c.bind(0, *x);
    return llvm::Error::success();
  }
  return unaryOp(c, OpKind::Clamp, attrs);
}

/// ReduceSum (axes an input from opset 13), ReduceMean / Max / Min / LogSumExp (from 18).
template <OpKind Kind> llvm::Error lowerReduce(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"axes", "keepdims", "noop_with_empty_axes"}))
    return err;
  auto keep = c.getInt("keepdims", 1), noop = c.getInt("noop_with_empty_axes", 0);
  if (!keep)
    return keep.takeError();
  if (!noop)
    return noop.takeError();
  auto attrAxes = c.getInts("axes");
  if (!attrAxes)
    return attrAxes.takeError();
  IntList axes;
  if (*attrAxes) {
    axes = **attrAxes;
  } else if (c.has(1)) {
    auto t = c.requireConst(1, "axes");
    if (!t)
      return t.takeError();
    for (int64_t i = 0; i < (*t)->numel(); ++i)
      axes.push_back((*t)->integer(size_t(i)));
  }
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  unsigned rank = c.type(*x).rank();
  if (axes.empty()) {
    if (*noop) {
      c.bind(0, *x);
      return llvm::Error::success();
    }
    for (unsigned d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (auto err = c.onlyFirstOutputUsed())
    return err;
  llvm::SmallVector<Attr, 2> attrs{attr("dims", axes)};
  if (*keep)
    attrs.push_back(attr("keepdim", true));
  auto r = c.emit(Kind, {Operand::ofValue(*x)}, attrs);
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

template <OpKind Kind> llvm::Error lowerSoftmax(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"axis"}))
    return err;
  auto axis = c.getInt("axis", -1);
  if (!axis)
    return axis.takeError();
  return unaryOp(c, Kind, {attr("dim", *axis)});
}

/// Binds output 0 to input 0 unchanged.
llvm::Error passThrough(NodeCtx &c) {
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  c.bind(0, *x);
  return llvm::Error::success();
}

/// Reshape, Flatten, Squeeze, Unsqueeze of a computed tensor.
llvm::Error lowerView(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"allowzero", "axis"}))
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  auto shape = viewShape(c, c.type(*x).shape);
  if (!shape)
    return shape.takeError();
  if (*shape == c.type(*x).shape)
    return passThrough(c);
  auto r = c.emit(OpKind::Reshape, {Operand::ofValue(*x)},
                  {attr("shape", IntList(shape->begin(), shape->end()))});
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

llvm::Error lowerIdentity(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  return passThrough(c);
}

llvm::Error lowerDropout(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"seed"}))
    return err;
  if (c.used(1))
    return c.fail("the dropout mask (output 1) is used; only inference is supported");
  if (const ConstTensor *training = c.constant(2))
    if (training->numel() == 1 && training->num(0) != 0)
      return c.fail("training_mode is true; only inference is supported");
  if (c.has(2) && !c.constant(2))
    return c.fail("training_mode must be a constant");
  return passThrough(c);
}

llvm::Error lowerCast(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"to", "saturate"}))
    return err;
  auto to = c.getInt("to", 0);
  if (!to)
    return to.takeError();
  if (*to != onnx::TensorProto::FLOAT)
    return c.fail("cast of a computed f32 tensor to " + onnxTypeName(int(*to)) +
                  " is not supported");
  return passThrough(c);
}

llvm::Error lowerCastLike(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"saturate"}))
    return err;
  if (const ConstTensor *target = c.constant(1); target && target->kind != ElemKind::F32)
    return c.fail("cast of a computed f32 tensor to another type is not supported");
  return passThrough(c);
}

llvm::Error lowerTranspose(NodeCtx &c) {
  if (auto err = c.onlyAttrs({"perm"}))
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  const Shape &in = c.type(*x).shape;
  auto perm = lowering::transposePerm(c, in.size());
  if (!perm)
    return perm.takeError();
  // Moving only dims of size 1 keeps the elements in order: that is a reshape.
  Shape out;
  int64_t last = -1;
  for (int64_t p : *perm) {
    out.push_back(in[size_t(p)]);
    if (in[size_t(p)] == 1)
      continue;
    if (p < last)
      return c.fail("a transpose that moves data (perm " + shapeStr(*perm) + " of " + shapeStr(in) +
                    ") is not supported");
    last = p;
  }
  if (out == in)
    return passThrough(c);
  auto r = c.emit(OpKind::Reshape, {Operand::ofValue(*x)},
                  {attr("shape", IntList(out.begin(), out.end()))});
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

llvm::Error lowerExpand(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  auto s = c.requireConst(1, "shape");
  if (!s)
    return s.takeError();
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  const Shape &in = c.type(*x).shape;
  // Expanding to a shape the tensor already covers changes nothing.
  Shape want;
  for (int64_t i = 0; i < (*s)->numel(); ++i)
    want.push_back((*s)->integer(size_t(i)));
  bool same = want.size() <= in.size();
  for (size_t i = 0; same && i < want.size(); ++i) {
    int64_t w = want[want.size() - 1 - i], d = in[in.size() - 1 - i];
    same = w == 1 || w == d;
  }
  if (!same)
    return c.fail("expanding a computed tensor of shape " + shapeStr(in) + " to " + shapeStr(want) +
                  " is not supported");
  return passThrough(c);
}

/// GlobalAveragePool / GlobalMaxPool: a reduction over the spatial dims, kept.
template <OpKind Kind> llvm::Error lowerGlobalPool(NodeCtx &c) {
  if (auto err = c.onlyAttrs({}))
    return err;
  auto x = c.value(0);
  if (!x)
    return x.takeError();
  unsigned rank = c.type(*x).rank();
  if (rank < 3)
    return c.fail("expected an input of rank 3 to 5, got " + c.type(*x).str());
  IntList dims;
  for (unsigned d = 2; d < rank; ++d)
    dims.push_back(d);
  auto r = c.emit(Kind, {Operand::ofValue(*x)}, {attr("dims", dims), attr("keepdim", true)});
  if (!r)
    return r.takeError();
  c.bind(0, *r);
  return llvm::Error::success();
}

/// The importer's own node for the dynamo exporter's softplus (see OnnxRewrite.cpp).
llvm::Error lowerSinterSoftplus(NodeCtx &c) {
  auto beta = c.getFloat("beta", 1.0), threshold = c.getFloat("threshold", 20.0);
  if (!beta)
    return beta.takeError();
  if (!threshold)
    return threshold.takeError();
  llvm::SmallVector<Attr, 2> attrs;
  if (*beta != 1.0)
    attrs.push_back(attr("beta", *beta));
  if (*threshold != 20.0)
    attrs.push_back(attr("threshold", *threshold));
  return unaryOp(c, OpKind::Softplus, attrs);
}

const LowerRule kRules[] = {
    {"Relu", 1, 1, 1, lowerRelu},
    {"Sigmoid", 1, 1, 1, lowerSigmoid},
    {"Tanh", 1, 1, 1, lowerTanh},
    {"Exp", 1, 1, 1, lowerExp},
    {"Log", 1, 1, 1, lowerLog},
    {"Abs", 1, 1, 1, lowerAbs},
    {"Neg", 1, 1, 1, lowerNeg},
    {"Sqrt", 1, 1, 1, lowerSqrt},
    {"Erf", 1, 1, 1, lowerErf},
    {"Reciprocal", 1, 1, 1, lowerReciprocal},
    {"Softplus", 1, 1, 1, lowerSoftplus},
    {"HardSigmoid", 1, 1, 1, lowerHardSigmoid},
    {"HardSwish", 14, 1, 1, lowerHardSwish},
    {"Mish", 18, 1, 1, lowerMish},
    {"Gelu", 20, 1, 1, lowerGelu},
    {"LeakyRelu", 1, 1, 1, lowerLeakyRelu},
    {"Elu", 1, 1, 1, lowerElu},
    {"Clip", 11, 1, 3, lowerClip},
    {"Add", 1, 2, 2, lowerBinary<OpKind::Add>},
    {"Sub", 1, 2, 2, lowerBinary<OpKind::Sub>},
    {"Mul", 1, 2, 2, lowerBinary<OpKind::Mul>},
    {"Div", 1, 2, 2, lowerBinary<OpKind::Div>},
    {"Max", 1, 1, 64, lowerMaxMin<OpKind::Maximum>},
    {"Min", 1, 1, 64, lowerMaxMin<OpKind::Minimum>},
    {"Pow", 1, 2, 2, lowerPow},
    {"ReduceSum", 13, 1, 2, lowerReduce<OpKind::Sum>},
    {"ReduceMean", 1, 1, 2, lowerReduce<OpKind::Mean>},
    {"ReduceMax", 1, 1, 2, lowerReduce<OpKind::Max>},
    {"ReduceMin", 1, 1, 2, lowerReduce<OpKind::Min>},
    {"ReduceLogSumExp", 1, 1, 2, lowerReduce<OpKind::Logsumexp>},
    {"Softmax", 13, 1, 1, lowerSoftmax<OpKind::Softmax>},
    {"LogSoftmax", 13, 1, 1, lowerSoftmax<OpKind::LogSoftmax>},
    {"Reshape", 5, 2, 2, lowerView},
    {"Flatten", 1, 1, 1, lowerView},
    {"Squeeze", 13, 1, 2, lowerView},
    {"Unsqueeze", 13, 2, 2, lowerView},
    {"Identity", 1, 1, 1, lowerIdentity},
    {"Dropout", 12, 1, 3, lowerDropout},
    {"Cast", 1, 1, 1, lowerCast},
    {"CastLike", 15, 2, 2, lowerCastLike},
    {"Transpose", 1, 1, 1, lowerTranspose},
    {"Expand", 8, 2, 2, lowerExpand},
    {"GlobalAveragePool", 1, 1, 1, lowerGlobalPool<OpKind::Mean>},
    {"GlobalMaxPool", 1, 1, 1, lowerGlobalPool<OpKind::Max>},
    {"sinter.ai:Softplus", 1, 1, 1, lowerSinterSoftplus},
};

} // namespace

llvm::ArrayRef<LowerRule> mathRules() { return kRules; }

} // namespace sinter::onnximport
