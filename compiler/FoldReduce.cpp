//===- compiler/FoldReduce.cpp - sums over a product's features, taken into its weight -===//
//
// The chain between the product and the reduction is read as one affine map per feature,
// y' = (aC * aV) * y + (bV + bC): aV and bV are [N] (or [1]) values built from the chain's
// tensor operands as the walk goes (mul, div, add, sub ops on those small vectors), aC and bC
// numbers. A missing aV is 1, a missing bV 0. Then, with s = 1 (sum) or 1 / N (mean):
//   out = s * aC * (x . sum_n aV_n W[n, :]) + s * sum_n bV_n + s * N * bC,
// written as ops placed where the reduction was: the weighted weight and its feature sum, the
// [.., 1] product (the linear layer keeps the bias on its epilogue), the constant, and a
// reshape where the reduction dropped its dim. For a transposed convolution without padding
// the feature is the channel (dim 1), the reduction runs over the L positions of each plane,
// and x . sum_n aV_n W[n, :] becomes (the input's plane sums) x (the weight's tap sums, each
// output channel's scaled by aV), an [N, Cin] x [Cin, Cout] product (finishPlanes).
//
//===--------------------------------------------------------------------------------===//
#include "compiler/FoldReduce.h"

#include "llvm/ADT/STLExtras.h"

#include <string>

namespace sinter {
namespace {

/// The cost model of the fold: the product's rate and a small kernel's launch.
constexpr double kFoldRate = 100e12, kLaunchSeconds = 3e-6;

class Folder {
public:
  Folder(Graph &g, bool always) : g(g), always(always) {}

  bool run() {
    bool changed = false;
    for (int i = 0; i < int(g.ops.size()); ++i) {
      if (g.ops[i].kind != OpKind::Sum && g.ops[i].kind != OpKind::Mean)
        continue;
      count();
      int moved = fold(i);
      if (moved > 0) {
        changed = true;
        i += moved; // the reduction's old op now sits after the ops placed before it
      }
    }
    return changed;
  }

private:
  Graph &g;
  bool always; ///< fold every match, paying or not (tests)
  std::vector<int> uses;
  std::vector<bool> returned;
  int at = 0;       ///< where the next new op goes
  SourceLoc loc;    ///< the reduction's, for the new ops
  std::string stem; ///< the reduction result's name, for the new values'
  int serial = 0;

  void count() {
    ValueUses u(g);
    uses = std::move(u.uses);
    returned = std::move(u.returned);
  }

  /// A value of shape `shape` defined by a new op placed at `at`.
  ValueId emit(OpKind kind, llvm::SmallVector<Operand, 3> operands, Shape shape,
               llvm::ArrayRef<std::pair<const char *, AttrValue>> attrs = {}) {
    std::string name;
    do
      name = stem + "_fold" + std::to_string(serial++);
    while (g.lookup(name) >= 0);
    for (Value &v : g.values)
      if (v.def >= at)
        ++v.def;
    Value v;
    v.name = name;
    v.type = TensorType(DType::F32, shape);
    v.kind = ValueKind::Result;
    v.def = at;
    ValueId id = ValueId(g.values.size());
    g.values.push_back(std::move(v));
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.result = id;
    op.loc = loc;
    for (const auto &[attr, value] : attrs)
      op.setAttr(attr, value);
    g.ops.insert(g.ops.begin() + at, std::move(op));
    ++at;
    return id;
  }
  ValueId binary(OpKind kind, Operand a, Operand b) {
    auto shapeOf = [&](const Operand &o) {
      return o.isScalar() ? Shape{1} : g.type(o.value).shape;
    };
    Shape sa = shapeOf(a), sb = shapeOf(b);
    // Both are [N] or [1] here: the result is the longer.
    return emit(kind, {a, b}, sa[0] >= sb[0] ? sa : sb);
  }
  ValueId reshape(ValueId v, Shape shape) {
    return emit(OpKind::Reshape, {Operand::ofValue(v)}, shape,
                {{"shape", IntList(shape.begin(), shape.end())}});
  }
  /// `t` as a vector of its elements ([N] or [1]).
  ValueId vec(ValueId t) {
    const TensorType &tt = g.type(t);
    if (tt.rank() == 1)
      return t;
    return reshape(t, {tt.numel()});
  }

  /// Whether tensor `t` is constant along every dim of a value of shape `y` but dim `fd`,
  /// where it has 1 or y[fd] elements (numpy broadcasting: t's dims align right).
  bool perFeature(ValueId t, const Shape &y, unsigned fd) const {
    const Shape &s = g.type(t).shape;
    if (s.size() > y.size() || s.empty())
      return false;
    const size_t lead = y.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] != 1 && !(i + lead == fd && s[i] == y[fd]))
        return false;
    return true;
  }

  /// One step of the chain, op `op` producing a value of shape `y` from the chain's value
  /// before it (the operand of that shape): its other operand and whether the chain's value
  /// is its left operand; false when the op is not an affine map of it (whether a tensor
  /// operand varies along the features only is checked once the product is known).
  bool affineStep(const Op &op, const Shape &y, Operand &other, bool &left) const {
    if (g.type(op.result).shape != y)
      return false;
    if (op.kind == OpKind::Neg)
      return true;
    if (op.kind != OpKind::Mul && op.kind != OpKind::Div && op.kind != OpKind::Add &&
        op.kind != OpKind::Sub)
      return false;
    auto full = [&](const Operand &o) { return !o.isScalar() && g.type(o.value).shape == y; };
    const Operand &a = op.operands[0], &b = op.operands[1];
    // Exactly one operand has the chain's shape (x * x or a tensor as large as y are not
    // per-feature maps).
    if (full(a) == full(b))
      return false;
    left = full(a);
    other = left ? b : a;
    // c / y is not affine in y.
    return !(op.kind == OpKind::Div && !left);
  }

  /// Folds the reduction at op index r when it applies; returns how many ops were placed
  /// before it, 0 when it did not apply.
  int fold(int r) {
    const Op red = g.ops[r];
    const ValueId in = red.operands[0].value;
    const Shape y = g.type(in).shape;
    const unsigned rank = y.size();
    IntList dims = red.getInts("dims");
    for (int64_t &d : dims)
      d = d < 0 ? d + rank : d;
    llvm::sort(dims);
    // Over the last dim (a product's features) or over every spatial dim (a transposed
    // convolution's planes); the product decides which below.
    const bool overLast = rank >= 2 && dims.size() == 1 && dims[0] == int64_t(rank) - 1;
    bool overPlanes = rank >= 3 && dims.size() == rank - 2;
    for (size_t i = 0; overPlanes && i < dims.size(); ++i)
      overPlanes = dims[i] == int64_t(i) + 2;
    if (!overLast && !overPlanes)
      return 0;
    // Up the chain to the product.
    struct Step {
      OpKind kind;
      Operand other;
      bool left;
    };
    llvm::SmallVector<Step, 8> steps;
    ValueId v = in;
    const Op *anchor = nullptr; // valid until the first new op is placed
    while (true) {
      if (uses[v] != 1 || returned[v])
        return 0;
      const Op *def = g.defOp(v);
      if (!def)
        return 0;
      if (def->kind == OpKind::Linear || def->kind == OpKind::Matmul ||
          def->kind == OpKind::ConvTranspose) {
        anchor = def;
        break;
      }
      Step s{def->kind, Operand::ofScalar(0), true};
      if (!affineStep(*def, y, s.other, s.left))
        return 0;
      steps.push_back(s);
      v = def->kind == OpKind::Neg ? def->operands[0].value : def->operands[s.left ? 0 : 1].value;
    }
    const bool conv = anchor->kind == OpKind::ConvTranspose;
    const bool linear = anchor->kind == OpKind::Linear;
    const ValueId x = anchor->operands[0].value, w = anchor->operands[1].value;
    const ValueId bias = anchor->operands.size() == 3 ? anchor->operands[2].value : -1;
    if (conv) {
      // Without padding every input element meets every tap inside the output, so a plane's
      // sum is sum_ci (the input plane's sum) * (the taps' sum) + L * bias; one group.
      if (!overPlanes || anchor->getInt("groups") != 1)
        return 0;
      for (int64_t p : anchor->getSpatial("padding", rank - 2))
        if (p != 0)
          return 0;
    } else {
      // A matmul folds B's columns: B must be one [K, N] matrix and A at least 2-D.
      if (!overLast || (!linear && (g.type(w).rank() != 2 || g.type(x).rank() < 2)))
        return 0;
    }
    const unsigned fd = conv ? 1 : rank - 1;
    for (const Step &s : steps)
      if (!s.other.isScalar() && !perFeature(s.other.value, y, fd))
        return 0;
    // The elements each output folds.
    int64_t n = 1;
    for (int64_t d : dims)
      n *= y[d];
    const bool mean = red.kind == OpKind::Mean, keepdim = red.getBool("keepdim");
    const double products =
        conv ? double(g.type(x).numel()) * double(g.type(w).numel()) / double(g.type(x).shape[1])
             : double(g.type(in).numel()) * double(g.type(x).shape.back());
    anchor = nullptr;

    const Graph before = g;
    at = r;
    loc = red.loc;
    stem = g.values[red.result].name;
    serial = 0;
    ValueId aV = -1, bV = bias >= 0 ? vec(bias) : -1;
    double aC = 1, bC = 0;
    auto scaleB = [&](Operand f) {
      if (bV >= 0)
        bV = binary(OpKind::Mul, Operand::ofValue(bV), f);
    };
    for (const Step &s : llvm::reverse(steps)) {
      const bool number = s.other.isScalar();
      const double c = s.other.scalar;
      const Operand t = number ? s.other : Operand::ofValue(vec(s.other.value));
      switch (s.kind) {
      case OpKind::Neg:
        aC = -aC, bC = -bC;
        scaleB(Operand::ofScalar(-1));
        break;
      case OpKind::Mul:
      case OpKind::Div: {
        // y * t or y / t: a and b both scale by t (or 1 / t).
        const OpKind k = s.kind;
        if (number) {
          const double f = k == OpKind::Mul ? c : 1 / c;
          aC *= f, bC *= f;
          scaleB(Operand::ofScalar(f));
          break;
        }
        aV = aV >= 0 ? binary(k, Operand::ofValue(aV), t)
                     : (k == OpKind::Mul ? t.value : binary(OpKind::Div, Operand::ofScalar(1), t));
        if (bV >= 0)
          bV = binary(k, Operand::ofValue(bV), t);
        if (bC != 0) {
          ValueId part = binary(k, Operand::ofScalar(bC), t);
          bV = bV >= 0 ? binary(OpKind::Add, Operand::ofValue(bV), Operand::ofValue(part)) : part;
          bC = 0;
        }
        break;
      }
      case OpKind::Add:
      case OpKind::Sub: {
        // y + t, y - t, t - y.
        const bool negate = s.kind == OpKind::Sub && !s.left;
        if (negate) {
          aC = -aC, bC = -bC;
          scaleB(Operand::ofScalar(-1));
        }
        const bool minus = s.kind == OpKind::Sub && s.left;
        if (number) {
          bC += minus ? -c : c;
          break;
        }
        if (bV >= 0)
          bV = binary(minus ? OpKind::Sub : OpKind::Add, Operand::ofValue(bV), t);
        else
          bV = minus ? binary(OpKind::Mul, t, Operand::ofScalar(-1)) : t.value;
        break;
      }
      default:
        llvm_unreachable("not an affine step");
      }
    }
    if (conv)
      finishPlanes(red, x, w, aV, aC, bV, bC, n, mean, keepdim, y);
    else
      finish(red, linear, x, w, aV, aC, bV, bC, n, mean, keepdim, y);
    // Worth it where the [M, N] product (at about 100 TFLOP/s, fp32-accurate) outlasts the
    // launches of the small kernels that replace it (about 3 us each): tiny products keep
    // their two kernels.
    int placed = at - r, launches = 0;
    for (int i = r; i < at; ++i)
      launches += opInfo(g.ops[i].kind).fusionClass != FusionClass::View;
    if (!always && 2.0 * products / kFoldRate < double(launches) * kLaunchSeconds) {
      g = before;
      return 0;
    }
    return placed;
  }

  /// The transposed convolution's ops: the input's plane sums Xs [N, Cin], the weight with
  /// the per-channel factors summed over its taps Ws [Cin, Cout], out = s * aC * Xs . Ws +
  /// s * L * (bV + bC) per channel, reshaped where the reduction keeps its dims.
  void finishPlanes(const Op &red, ValueId x, ValueId w, ValueId aV, double aC, ValueId bV,
                    double bC, int64_t n, bool mean, bool keepdim, const Shape &y) {
    const double s = mean ? 1.0 / double(n) : 1.0;
    const Shape xs = g.type(x).shape, ws = g.type(w).shape;
    const int64_t batch = xs[0], cin = xs[1], cout = ws[1];
    IntList inner;
    for (unsigned d = 2; d < xs.size(); ++d)
      inner.push_back(d);
    const ValueId xsum = emit(OpKind::Sum, {Operand::ofValue(x)}, {batch, cin},
                              {{"dims", inner}, {"keepdim", false}});
    ValueId wa = w;
    if (aV >= 0) {
      Shape a(ws.size(), 1);
      a[1] = g.type(aV).numel();
      wa = emit(OpKind::Mul, {Operand::ofValue(w), Operand::ofValue(reshape(aV, a))}, ws);
    }
    ValueId v = emit(OpKind::Sum, {Operand::ofValue(wa)}, {cin, cout},
                     {{"dims", inner}, {"keepdim", false}});
    if (aC * s != 1)
      v = emit(OpKind::Mul, {Operand::ofValue(v), Operand::ofScalar(aC * s)}, {cin, cout});
    const Shape outShape{batch, cout};
    ValueId out = emit(OpKind::Matmul, {Operand::ofValue(xsum), Operand::ofValue(v)}, outShape);
    if (bV >= 0) {
      // L * s is 1 for a mean.
      const ValueId c =
          double(n) * s == 1
              ? bV
              : emit(OpKind::Mul, {Operand::ofValue(bV), Operand::ofScalar(double(n) * s)},
                     g.type(bV).shape);
      out = emit(OpKind::Add, {Operand::ofValue(out), Operand::ofValue(c)}, outShape);
    }
    if (bC != 0)
      out = emit(OpKind::Add, {Operand::ofValue(out), Operand::ofScalar(bC * double(n) * s)},
                 outShape);
    if (keepdim) {
      Shape kept(y.size(), 1);
      kept[0] = batch, kept[1] = cout;
      out = reshape(out, kept);
    }
    takeOver(red.result, out);
  }

  /// Value `out` takes the name and the uses of `old`.
  void takeOver(ValueId old, ValueId out) {
    std::swap(g.values[old].name, g.values[out].name);
    for (Op &op : g.ops)
      for (Operand &o : op.operands)
        if (!o.isScalar() && o.value == old)
          o.value = out;
    for (ValueId &res : g.results)
      if (res == old)
        res = out;
  }

  /// The ops after the chain's walk: the weighted feature sum, the product, the constant and
  /// the reshape; the last takes the reduction's name and uses.
  void finish(const Op &red, bool linear, ValueId x, ValueId w, ValueId aV, double aC, ValueId bV,
              double bC, int64_t n, bool mean, bool keepdim, const Shape &y) {
    const double s = mean ? 1.0 / double(n) : 1.0;
    const Shape ws = g.type(w).shape;
    // The weight with the per-feature factors, summed over its features.
    ValueId wa = w;
    if (aV >= 0) {
      const int64_t na = g.type(aV).numel();
      wa = emit(OpKind::Mul,
                {Operand::ofValue(w),
                 Operand::ofValue(reshape(aV, linear ? Shape{na, 1} : Shape{1, na}))},
                ws);
    }
    // sum_n bV_n, scaled.
    ValueId c = -1;
    if (bV >= 0) {
      c = g.type(bV).numel() != 1 ? emit(OpKind::Sum, {Operand::ofValue(bV)}, {1},
                                         {{"dims", IntList{0}}, {"keepdim", true}})
          : double(n) * s == 1
              ? bV
              : emit(OpKind::Mul, {Operand::ofValue(bV), Operand::ofScalar(double(n) * s)}, {1});
      if (g.type(bV).numel() != 1 && s != 1)
        c = emit(OpKind::Mul, {Operand::ofValue(c), Operand::ofScalar(s)}, {1});
    }
    // The product: linear(x, v [1, K], c) -> [..., 1] where the dim is kept on a linear layer
    // or a tensor is added (the bias rides on the linear layer's epilogue; a vector product's
    // epilogue reads no tensors), then a reshape where the dim is dropped; else matmul by
    // v [K, 1] (kept) or by the vector v [K] (dropped).
    const int64_t k = linear ? ws[1] : ws[0];
    const bool asLinear = (keepdim && linear) || (!keepdim && c >= 0);
    Shape vShape = asLinear ? Shape{1, k} : keepdim ? Shape{k, 1} : Shape{k};
    // The feature sum keeps its dim where that gives vShape ([1, K] from W, [K, 1] from B).
    const Shape kept = linear ? Shape{1, k} : Shape{k, 1};
    const bool keep = vShape == kept;
    ValueId v = emit(OpKind::Sum, {Operand::ofValue(wa)}, keep ? kept : Shape{k},
                     {{"dims", IntList{linear ? 0 : 1}}, {"keepdim", keep}});
    if (!keep && vShape.size() == 2)
      v = reshape(v, vShape);
    if (aC * s != 1)
      v = emit(OpKind::Mul, {Operand::ofValue(v), Operand::ofScalar(aC * s)}, vShape);
    Shape outShape = y;
    outShape.back() = 1;
    ValueId out;
    if (asLinear) {
      llvm::SmallVector<Operand, 3> ops{Operand::ofValue(x), Operand::ofValue(v)};
      if (c >= 0)
        ops.push_back(Operand::ofValue(c));
      out = emit(OpKind::Linear, ops, outShape);
    } else {
      if (!keepdim)
        outShape.pop_back();
      out = emit(OpKind::Matmul, {Operand::ofValue(x), Operand::ofValue(v)}, outShape);
      if (c >= 0)
        out = emit(OpKind::Add, {Operand::ofValue(out), Operand::ofValue(c)}, outShape);
    }
    if (bC != 0)
      out = emit(OpKind::Add, {Operand::ofValue(out), Operand::ofScalar(bC * double(n) * s)},
                 outShape);
    if (asLinear && !keepdim)
      out = reshape(out, Shape(y.begin(), y.end() - 1));
    takeOver(red.result, out);
  }
};

} // namespace

bool foldFeatureReductions(Graph &graph, bool always) { return Folder(graph, always).run(); }

} // namespace sinter
