//===- frontend/OnnxFold.cpp - evaluating constant sub-graphs while importing --------===//
//
// Exporters compute shapes and small constants inside the model: Shape -> Gather ->
// Unsqueeze -> Concat -> Reshape, Constant -> CastLike -> Expand, Range for a list of axes,
// Unsqueeze(weight) to make a per-channel scale broadcast. None of it is work for the GPU:
// when every input a node reads is a constant (or, for Shape and Size, a value whose shape
// is static, which every value here is), the node is evaluated now with numpy's broadcasting
// and bound to its result. Integers and bools are computed in int64, floats in the widest
// float type of the operands. A fold that would make more than kMaxFoldElements elements is
// an error, so that a corrupt model cannot exhaust memory.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxFold.h"

#include "ir/Error.h"
#include "onnx.pb.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <functional>

namespace sinter::onnximport {
namespace folding {

llvm::Expected<bool> Folder::elementwise(llvm::ArrayRef<unsigned> inputs, ElemKind kind,
                                         std::function<double(llvm::ArrayRef<double>)> f,
                                         std::function<int64_t(llvm::ArrayRef<int64_t>)> fi) {
  Shape shape;
  for (unsigned i : inputs) {
    auto b = infer::broadcastShapes(shape, in(i).shape);
    if (!b)
      return c.fail("shapes of the constant inputs do not broadcast: " + shapeStr(shape) + " and " +
                    shapeStr(in(i).shape));
    shape = *b;
  }
  auto out = make(kind, shape);
  if (!out)
    return out.takeError();
  if (out->numel() == 0)
    return done(std::move(*out));
  Shape idx(shape.size(), 0);
  llvm::SmallVector<double, 3> args(inputs.size());
  llvm::SmallVector<int64_t, 3> iargs(inputs.size());
  size_t flat = 0;
  do {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const ConstTensor &t = in(inputs[k]);
      size_t at = size_t(broadcastIndex(idx, t.shape));
      args[k] = t.num(at);
      iargs[k] = t.kind == ElemKind::I64 ? t.i64[at] : t.integer(at);
    }
    if (kind == ElemKind::I64 && fi)
      out->i64[flat] = fi(iargs);
    else
      out->set(flat, f(args));
    ++flat;
  } while (next(idx, shape));
  return done(std::move(*out));
}

llvm::Expected<bool> Folder::binary(llvm::StringRef op) {
  if (c.numInputs() < 1 || !c.has(0))
    return c.fail("expected inputs");
  llvm::SmallVector<unsigned, 4> inputs;
  llvm::SmallVector<const ConstTensor *, 4> ts;
  for (unsigned i = 0; i < c.numInputs(); ++i)
    if (c.has(i)) {
      inputs.push_back(i);
      ts.push_back(c.constant(i));
    }
  bool variadic = op == "Max" || op == "Min" || op == "Sum";
  if (!variadic && inputs.size() != (op == "Where" ? 3u : 2u))
    return c.fail("expected " + llvm::Twine(op == "Where" ? 3 : 2) + " inputs");
  bool compare = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
                 op == "GreaterOrEqual" || op == "And" || op == "Or";
  ElemKind kind = compare ? ElemKind::I64 : widest(ts);
  if (op == "Where")
    kind = widest({ts[1], ts[2]});
  auto f = [op](llvm::ArrayRef<double> a) -> double {
    double x = a[0], y = a.size() > 1 ? a[1] : 0;
    if (op == "Add" || op == "Sum") {
      double s = 0;
      for (double v : a)
        s += v;
      return s;
    }
    if (op == "Sub")
      return x - y;
    if (op == "Mul")
      return x * y;
    if (op == "Div")
      return x / y;
    if (op == "Pow")
      return std::pow(x, y);
    if (op == "Max" || op == "Min") {
      double m = x;
      for (double v : a)
        m = op == "Max" ? std::max(m, v) : std::min(m, v);
      return m;
    }
    if (op == "Equal")
      return x == y;
    if (op == "Less")
      return x < y;
    if (op == "Greater")
      return x > y;
    if (op == "LessOrEqual")
      return x <= y;
    if (op == "GreaterOrEqual")
      return x >= y;
    if (op == "And")
      return x != 0 && y != 0;
    if (op == "Or")
      return x != 0 || y != 0;
    assert(op == "Where");
    return x != 0 ? y : a[2];
  };
  auto fi = [op](llvm::ArrayRef<int64_t> a) -> int64_t {
    int64_t x = a[0], y = a.size() > 1 ? a[1] : 0;
    // Shape arithmetic wraps instead of overflowing (a corrupt model must not be UB).
    auto wrap = [](uint64_t v) { return int64_t(v); };
    if (op == "Add" || op == "Sum") {
      uint64_t s = 0;
      for (int64_t v : a)
        s += uint64_t(v);
      return wrap(s);
    }
    if (op == "Sub")
      return wrap(uint64_t(x) - uint64_t(y));
    if (op == "Mul")
      return wrap(uint64_t(x) * uint64_t(y));
    if (op == "Div")
      return y == 0 || (x == INT64_MIN && y == -1) ? 0 : x / y;
    if (op == "Max" || op == "Min") {
      int64_t m = x;
      for (int64_t v : a)
        m = op == "Max" ? std::max(m, v) : std::min(m, v);
      return m;
    }
    if (op == "Where")
      return x != 0 ? y : a[2];
    if (op == "Pow") {
      int64_t r = 1;
      for (int64_t k = 0; k < y && k < 64; ++k)
        r = wrap(uint64_t(r) * uint64_t(x));
      return r;
    }
    return 0; // comparisons are computed on doubles
  };
  if (compare)
    return elementwise(inputs, kind, f);
  return elementwise(inputs, kind, f, fi);
}

llvm::Expected<bool> Folder::unary(llvm::StringRef op) {
  if (!c.has(0))
    return c.fail("input 0 is missing");
  ElemKind kind = in(0).kind;
  bool toFloat = op == "Sqrt" || op == "Reciprocal" || op == "Exp" || op == "Log";
  if (toFloat && kind == ElemKind::I64)
    kind = ElemKind::F32;
  auto f = [op](llvm::ArrayRef<double> a) -> double {
    double x = a[0];
    if (op == "Neg")
      return -x;
    if (op == "Abs")
      return std::fabs(x);
    if (op == "Sqrt")
      return std::sqrt(x);
    if (op == "Reciprocal")
      return 1 / x;
    if (op == "Exp")
      return std::exp(x);
    if (op == "Log")
      return std::log(x);
    if (op == "Floor")
      return std::floor(x);
    if (op == "Ceil")
      return std::ceil(x);
    assert(op == "Not");
    return x == 0;
  };
  auto fi = [op](llvm::ArrayRef<int64_t> a) -> int64_t {
    int64_t x = a[0];
    if (op == "Neg")
      return int64_t(0 - uint64_t(x));
    if (op == "Abs")
      return x < 0 ? int64_t(0 - uint64_t(x)) : x;
    if (op == "Not")
      return x == 0;
    return x; // Floor, Ceil
  };
  return elementwise({0}, kind, f, fi);
}

llvm::Expected<bool> Folder::constantNode() {
  if (c.numInputs() != 0)
    return c.fail("Constant takes no inputs");
  if (auto t = c.getTensor("value"); !t)
    return t.takeError();
  else if (*t)
    return done(std::move(**t));
  const onnx::AttributeProto *a = nullptr;
  if ((a = c.attr("value_float"))) {
    ConstTensor t = ConstTensor::zeros(ElemKind::F32, {});
    t.f32[0] = a->f();
    return done(std::move(t));
  }
  if ((a = c.attr("value_int"))) {
    ConstTensor t = ConstTensor::zeros(ElemKind::I64, {});
    t.i64[0] = a->i();
    return done(std::move(t));
  }
  if ((a = c.attr("value_floats"))) {
    ConstTensor t = ConstTensor::zeros(ElemKind::F32, {int64_t(a->floats_size())});
    for (int i = 0; i < a->floats_size(); ++i)
      t.f32[size_t(i)] = a->floats(i);
    return done(std::move(t));
  }
  if ((a = c.attr("value_ints"))) {
    ConstTensor t = ConstTensor::zeros(ElemKind::I64, {int64_t(a->ints_size())});
    for (int i = 0; i < a->ints_size(); ++i)
      t.i64[size_t(i)] = a->ints(i);
    return done(std::move(t));
  }
  return c.fail("only tensor, float and int constants are supported (value, value_float(s), "
                "value_int(s))");
}

llvm::Expected<bool> Folder::range() {
  for (unsigned i = 0; i < 3; ++i)
    if (!c.has(i) || in(i).numel() != 1)
      return c.fail("Range takes three one-element inputs");
  ElemKind kind = widest({&in(0), &in(1), &in(2)});
  double start = in(0).num(0), limit = in(1).num(0), delta = in(2).num(0);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    return c.fail("invalid range");
  double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > double(kMaxFoldElements))
    return c.fail("range of " + llvm::Twine(int64_t(count)) + " elements is too long");
  auto out = make(kind, {int64_t(count)});
  if (!out)
    return out.takeError();
  for (int64_t i = 0; i < int64_t(count); ++i)
    out->set(size_t(i), start + double(i) * delta);
  return done(std::move(*out));
}

llvm::Expected<bool> Folder::cast(bool like) {
  const ConstTensor &x = in(0);
  ElemKind kind;
  if (like) {
    if (!c.has(1))
      return c.fail("CastLike needs a target");
    kind = c.in(1).isConst() ? in(1).kind : ElemKind::F32;
  } else {
    auto to = c.getInt("to", 0);
    if (!to)
      return to.takeError();
    auto k = elemKindOf(int(*to));
    if (!k)
      return c.fail("cast to " + onnxTypeName(int(*to)) + " is not supported");
    kind = *k;
    if (*to == onnx::TensorProto::BOOL) {
      ConstTensor r = ConstTensor::zeros(ElemKind::I64, x.shape);
      for (int64_t i = 0; i < x.numel(); ++i)
        r.i64[size_t(i)] = x.num(size_t(i)) != 0;
      return done(std::move(r));
    }
  }
  if (kind == x.kind) {
    ConstTensor r = x;
    return done(std::move(r), /*viewOfInput0=*/true);
  }
  ConstTensor r = ConstTensor::zeros(kind, x.shape);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (kind == ElemKind::I64)
      r.i64[size_t(i)] = x.integer(size_t(i));
    else
      r.set(size_t(i), x.num(size_t(i)));
  }
  return done(std::move(r), /*viewOfInput0=*/true);
}

llvm::Expected<bool> Folder::reduce(llvm::StringRef op) {
  const ConstTensor &x = in(0);
  int64_t rank = int64_t(x.shape.size());
  IntList axes;
  auto attrAxes = c.getInts("axes");
  if (!attrAxes)
    return attrAxes.takeError();
  if (*attrAxes)
    axes = **attrAxes;
  else if (c.has(1))
    axes = ints(in(1));
  auto keep = c.getInt("keepdims", 1);
  if (!keep)
    return keep.takeError();
  auto noop = c.getInt("noop_with_empty_axes", 0);
  if (!noop)
    return noop.takeError();
  if (axes.empty() && *noop) {
    ConstTensor r = x;
    return done(std::move(r));
  }
  llvm::SmallVector<bool, 8> red(size_t(rank), axes.empty());
  for (int64_t a : axes) {
    auto w = wrapAxis(a, rank);
    if (!w)
      return c.fail("axis " + llvm::Twine(a) + " out of range");
    red[size_t(*w)] = true;
  }
  Shape shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!red[size_t(d)])
      shape.push_back(x.shape[size_t(d)]);
    else if (*keep)
      shape.push_back(1);
  auto out = make(x.kind, shape);
  if (!out)
    return out.takeError();
  for (int64_t i = 0; i < out->numel(); ++i)
    out->set(size_t(i), op == "ReduceProd" ? 1 : 0);
  if (x.numel() == 0)
    return done(std::move(*out));
  Shape idx(size_t(rank), 0), keptShape;
  for (int64_t d = 0; d < rank; ++d)
    keptShape.push_back(red[size_t(d)] ? 1 : x.shape[size_t(d)]);
  Shape keptStrides = stridesOf(keptShape);
  size_t src = 0;
  do {
    int64_t dst = 0;
    for (int64_t d = 0; d < rank; ++d)
      dst += (red[size_t(d)] ? 0 : idx[size_t(d)]) * keptStrides[size_t(d)];
    if (out->kind == ElemKind::I64)
      out->i64[size_t(dst)] = op == "ReduceProd"
                                  ? int64_t(uint64_t(out->i64[size_t(dst)]) * uint64_t(x.i64[src]))
                                  : int64_t(uint64_t(out->i64[size_t(dst)]) + uint64_t(x.i64[src]));
    else
      out->set(size_t(dst), op == "ReduceProd" ? out->num(size_t(dst)) * x.num(src)
                                               : out->num(size_t(dst)) + x.num(src));
    ++src;
  } while (next(idx, x.shape));
  return done(std::move(*out));
}

llvm::Expected<bool> Folder::run() {
  llvm::StringRef op = c.node.op_type();
  if (op == "Constant")
    return constantNode();
  if (op == "Shape" || op == "Size") {
    if (!c.has(0))
      return c.fail("input 0 is missing");
    Shape s = c.shape(0);
    if (op == "Size") {
      ConstTensor t = ConstTensor::zeros(ElemKind::I64, {});
      t.i64[0] = checkedNumel(s, kMaxElements);
      return done(std::move(t));
    }
    int64_t rank = int64_t(s.size());
    auto start = c.getInt("start", 0), end = c.getInt("end", rank);
    if (!start)
      return start.takeError();
    if (!end)
      return end.takeError();
    auto clampAxis = [rank](int64_t a) {
      a = a < 0 ? a + rank : a;
      return std::min(std::max<int64_t>(a, 0), rank);
    };
    int64_t b = clampAxis(*start), e = clampAxis(*end);
    ConstTensor t = ConstTensor::zeros(ElemKind::I64, {std::max<int64_t>(e - b, 0)});
    for (int64_t i = b; i < e; ++i)
      t.i64[size_t(i - b)] = s[size_t(i)];
    return done(std::move(t));
  }
  bool foldable = llvm::StringSwitch<bool>(op)
                      .Cases("Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", true)
                      .Cases("Concat", "Gather", "Slice", "Transpose", "Expand", "Tile", true)
                      .Cases("Range", "Cast", "CastLike", "ConstantOfShape", true)
                      .Cases("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", true)
                      .Cases("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", true)
                      .Cases("And", "Or", "Where", "Not", true)
                      .Cases("Neg", "Abs", "Sqrt", "Reciprocal", "Exp", "Log", true)
                      .Cases("Floor", "Ceil", "ReduceSum", "ReduceProd", true)
                      .Default(false);
  if (!foldable)
    return false;
  // CastLike needs only its first input constant (the second gives the type).
  for (unsigned i = 0; i < c.numInputs(); ++i)
    if (c.has(i) && !c.constant(i) && !(op == "CastLike" && i == 1))
      return false;
  if (!c.has(0))
    return c.fail("input 0 is missing");
  if (op == "ConstantOfShape") {
    auto value = c.getTensor("value");
    if (!value)
      return value.takeError();
    ConstTensor fill = *value ? std::move(**value) : ConstTensor::zeros(ElemKind::F32, {});
    if (fill.numel() != 1)
      return c.fail("value must hold one element");
    auto out = make(fill.kind, ints(in(0)));
    if (!out)
      return out.takeError();
    for (int64_t i = 0; i < out->numel(); ++i) {
      if (fill.kind == ElemKind::I64)
        out->i64[size_t(i)] = fill.i64[0];
      else
        out->set(size_t(i), fill.num(0));
    }
    return done(std::move(*out));
  }
  if (op == "Identity" || op == "Reshape" || op == "Flatten" || op == "Squeeze" ||
      op == "Unsqueeze")
    return reshapeLike(op);
  if (op == "Concat")
    return concat();
  if (op == "Gather")
    return gather();
  if (op == "Slice")
    return slice();
  if (op == "Transpose")
    return transpose();
  if (op == "Expand" || op == "Tile")
    return expandOrTile(op == "Tile");
  if (op == "Range")
    return range();
  if (op == "Cast" || op == "CastLike")
    return cast(op == "CastLike");
  if (op == "ReduceSum" || op == "ReduceProd")
    return reduce(op);
  if (op == "Neg" || op == "Abs" || op == "Sqrt" || op == "Reciprocal" || op == "Exp" ||
      op == "Log" || op == "Floor" || op == "Ceil" || op == "Not")
    return unary(op);
  return binary(op);
}

} // namespace folding

llvm::Expected<bool> tryFold(NodeCtx &ctx) { return folding::Folder(ctx).run(); }

} // namespace sinter::onnximport
