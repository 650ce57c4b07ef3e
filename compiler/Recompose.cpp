//===- compiler/Recompose.cpp - decomposed activations re-formed into catalog ops ----===//
//
// Each pattern starts at the op that computes the formula's result and walks its operands
// upwards. Products are read as a whole: a tree of mul (and div by a number) whose inner
// results are used once flattens into a numeric coefficient and a list of value factors,
// so 0.5 * (x * t), (x * t) * 0.5 and x * (t * 0.5) all read {0.5; x, t}. Constants match
// with a relative tolerance of 1e-6, enough for exporters that store them as float32.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Recompose.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <optional>

namespace sinter {
namespace {

bool near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::fabs(b); }

class Recomposer {
public:
  explicit Recomposer(Graph &g) : g(g) { recount(); }

  bool run();

private:
  Graph &g;
  std::vector<int> uses;
  std::vector<bool> returned;

  void recount() {
    ValueUses u(g);
    uses = std::move(u.uses);
    returned = std::move(u.returned);
  }

  /// The op defining `v` when it is of `kind` and `v` feeds only the formula (used once,
  /// not returned); else null.
  const Op *inner(ValueId v, OpKind kind) const {
    const Op *op = g.defOp(v);
    if (!op || op->kind != kind || uses[v] != 1 || returned[v])
      return nullptr;
    return op;
  }
  int indexOf(const Op *op) const { return int(op - g.ops.data()); }

  /// A product read as coefficient * factors, and the ops it consumed.
  struct Product {
    double coef = 1;
    llvm::SmallVector<ValueId, 4> factors;
    llvm::SmallVector<int, 4> ops;
  };
  void flatten(ValueId v, Product &p, bool top) const {
    const Op *op = g.defOp(v);
    bool own = op && (top || (uses[v] == 1 && !returned[v]));
    if (own && op->kind == OpKind::Mul) {
      p.ops.push_back(indexOf(op));
      for (const Operand &o : op->operands) {
        if (o.isScalar())
          p.coef *= o.scalar;
        else
          flatten(o.value, p, false);
      }
      return;
    }
    if (own && op->kind == OpKind::Div && op->operands[1].isScalar() &&
        !op->operands[0].isScalar() && op->operands[1].scalar != 0) {
      p.ops.push_back(indexOf(op));
      p.coef /= op->operands[1].scalar;
      flatten(op->operands[0].value, p, false);
      return;
    }
    p.factors.push_back(v);
  }
  Product product(int root) const {
    Product p;
    flatten(g.ops[root].result, p, true);
    return p;
  }

  /// For a product with factors {x, t} (either order): calls `match(x, t)` both ways.
  template <class Fn> bool pair(const Product &p, Fn match) const {
    if (p.factors.size() != 2)
      return false;
    return match(p.factors[0], p.factors[1]) || match(p.factors[1], p.factors[0]);
  }

  /// `v` = x + c (either side) for a number c near `c`; the add's index, or -1.
  int addsNumber(ValueId v, ValueId x, double c) const {
    const Op *add = inner(v, OpKind::Add);
    if (!add)
      return -1;
    const Operand &a = add->operands[0], &b = add->operands[1];
    if ((a.isScalar() && !b.isScalar() && b.value == x && near(a.scalar, c)) ||
        (b.isScalar() && !a.isScalar() && a.value == x && near(b.scalar, c)))
      return indexOf(add);
    return -1;
  }

  /// Replaces op `root` by `kind`(x) with `attrs`, recording `consumed` in its origin.
  void replace(int root, OpKind kind, ValueId x, llvm::ArrayRef<Attr> attrs,
               llvm::ArrayRef<int> consumed) {
    llvm::SmallVector<int, 8> all(consumed.begin(), consumed.end());
    all.push_back(root);
    std::string origin = joinOrigins(g, all);
    Op &op = g.ops[root];
    op.kind = kind;
    op.operands = {Operand::ofValue(x)};
    op.attrs.clear();
    for (const Attr &a : attrs)
      op.setAttr(a.name, a.value);
    op.origin = origin;
    recount();
  }

  bool identityScalar(int i);
  bool rsqrt(int i);
  bool activation(int i);
  bool gelu(int i, const Product &p);
  bool softplusBeta(int i, const Product &p);
  bool logsumexp(int i);
};

bool Recomposer::identityScalar(int i) {
  const Op &op = g.ops[i];
  if (op.operands.size() != 2 || !isBinary(op.kind))
    return false;
  for (unsigned s : {0u, 1u}) {
    const Operand &num = op.operands[s], &val = op.operands[1 - s];
    if (!num.isScalar() || val.isScalar())
      continue;
    double c = num.scalar;
    bool identity = (op.kind == OpKind::Mul && c == 1) || (op.kind == OpKind::Add && c == 0) ||
                    (s == 1 && op.kind == OpKind::Div && c == 1) ||
                    (s == 1 && op.kind == OpKind::Sub && c == 0);
    // A returned value keeps its op: the result must exist under its name.
    if (!identity || returned[op.result])
      continue;
    ValueId from = op.result, to = val.value;
    for (Op &user : g.ops)
      for (Operand &o : user.operands)
        if (!o.isScalar() && o.value == from)
          o.value = to;
    recount();
    return true;
  }
  return false;
}

bool Recomposer::rsqrt(int i) {
  const Op &op = g.ops[i];
  if (op.kind != OpKind::Div || !op.operands[0].isScalar() || op.operands[0].scalar != 1 ||
      op.operands[1].isScalar())
    return false;
  const Op *sq = inner(op.operands[1].value, OpKind::Sqrt);
  if (!sq)
    return false;
  replace(i, OpKind::Rsqrt, sq->operands[0].value, {}, {indexOf(sq)});
  return true;
}

bool Recomposer::gelu(int i, const Product &p) {
  if (!near(p.coef, 0.5))
    return false;
  return pair(p, [&](ValueId x, ValueId t) {
    // t = 1 + erf(u) or 1 + tanh(u).
    const Op *add = inner(t, OpKind::Add);
    if (!add)
      return false;
    for (unsigned s : {0u, 1u}) {
      const Operand &one = add->operands[s], &f = add->operands[1 - s];
      if (!one.isScalar() || one.scalar != 1 || f.isScalar())
        continue;
      const Op *erf = inner(f.value, OpKind::Erf);
      const Op *tanh = inner(f.value, OpKind::Tanh);
      if (!erf && !tanh)
        continue;
      const Op *fn = erf ? erf : tanh;
      // u, the erf's or tanh's argument, is a product used only there.
      ValueId uv = fn->operands[0].value;
      if (!g.defOp(uv) || uses[uv] != 1 || returned[uv])
        continue;
      Product u;
      flatten(uv, u, true);
      llvm::SmallVector<int, 12> consumed{indexOf(add), indexOf(fn)};
      consumed.append(p.ops.begin(), p.ops.end());
      consumed.append(u.ops.begin(), u.ops.end());
      if (erf) {
        // u = x / sqrt(2).
        if (u.factors.size() != 1 || u.factors[0] != x || !near(u.coef, 0.70710678118654752440))
          continue;
        replace(i, OpKind::Gelu, x, {}, consumed);
        return true;
      }
      // u = sqrt(2/pi) * (x + 0.044715 x^3), or sqrt(2/pi) * x * (1 + 0.044715 x^2).
      const double k = 0.79788456080286535588;
      if (!near(u.coef, k))
        continue;
      auto cubicTerm = [&](ValueId v, unsigned powers) -> bool {
        Product w;
        const Op *d = g.defOp(v);
        if (!d || uses[v] != 1 || returned[v])
          return false;
        flatten(v, w, true);
        if (!near(w.coef, 0.044715) || w.factors.size() != powers ||
            !llvm::all_of(w.factors, [&](ValueId f) { return f == x; }))
          return false;
        consumed.append(w.ops.begin(), w.ops.end());
        return true;
      };
      bool ok = false;
      if (u.factors.size() == 1) {
        const Op *s2 = inner(u.factors[0], OpKind::Add);
        if (s2 && !s2->operands[0].isScalar() && !s2->operands[1].isScalar())
          for (unsigned k2 : {0u, 1u})
            if (!ok && s2->operands[k2].value == x && cubicTerm(s2->operands[1 - k2].value, 3)) {
              consumed.push_back(indexOf(s2));
              ok = true;
            }
      } else if (u.factors.size() == 2) {
        for (unsigned k2 : {0u, 1u}) {
          if (ok || u.factors[k2] != x)
            continue;
          const Op *s2 = inner(u.factors[1 - k2], OpKind::Add);
          if (!s2)
            continue;
          for (unsigned k3 : {0u, 1u}) {
            const Operand &c1 = s2->operands[k3], &w = s2->operands[1 - k3];
            if (!ok && c1.isScalar() && c1.scalar == 1 && !w.isScalar() && cubicTerm(w.value, 2)) {
              consumed.push_back(indexOf(s2));
              ok = true;
            }
          }
        }
      }
      if (!ok)
        continue;
      replace(i, OpKind::Gelu, x, {{"approximate", std::string("tanh")}}, consumed);
      return true;
    }
    return false;
  });
}

bool Recomposer::softplusBeta(int i, const Product &p) {
  // softplus(x * beta) / beta: one factor, coefficient 1 / beta.
  if (p.factors.size() != 1 || p.ops.empty())
    return false;
  const Op *sp = inner(p.factors[0], OpKind::Softplus);
  if (!sp || sp->getFloat("beta") != 1)
    return false;
  Product in;
  ValueId y = sp->operands[0].value;
  if (uses[y] != 1 || returned[y] || !g.defOp(y))
    return false;
  flatten(y, in, true);
  if (in.factors.size() != 1 || in.ops.empty() || in.coef <= 0 || !near(p.coef * in.coef, 1.0))
    return false;
  llvm::SmallVector<int, 8> consumed{indexOf(sp)};
  consumed.append(p.ops.begin(), p.ops.end());
  consumed.append(in.ops.begin(), in.ops.end());
  llvm::SmallVector<Attr, 2> attrs{{"beta", in.coef}};
  if (sp->getFloat("threshold") != 20.0)
    attrs.push_back({"threshold", sp->getFloat("threshold")});
  replace(i, OpKind::Softplus, in.factors[0], attrs, consumed);
  return true;
}

bool Recomposer::activation(int i) {
  const Op &op = g.ops[i];
  if (op.kind != OpKind::Mul && op.kind != OpKind::Div)
    return false;
  Product p = product(i);
  if (gelu(i, p) || softplusBeta(i, p))
    return true;
  return pair(p, [&](ValueId x, ValueId t) {
    llvm::SmallVector<int, 6> consumed(p.ops.begin(), p.ops.end());
    auto unaryOf = [&](ValueId v, OpKind k) -> const Op * {
      const Op *u = inner(v, k);
      return u && u->operands[0].value == x ? u : nullptr;
    };
    if (near(p.coef, 1.0)) {
      if (const Op *s = unaryOf(t, OpKind::Sigmoid)) {
        consumed.push_back(indexOf(s));
        replace(i, OpKind::Silu, x, {}, consumed);
        return true;
      }
      if (const Op *h = unaryOf(t, OpKind::Hardsigmoid)) {
        consumed.push_back(indexOf(h));
        replace(i, OpKind::Hardswish, x, {}, consumed);
        return true;
      }
      if (const Op *th = inner(t, OpKind::Tanh)) {
        const Op *sp = unaryOf(th->operands[0].value, OpKind::Softplus);
        if (sp && sp->getFloat("beta") == 1 && sp->getFloat("threshold") == 20) {
          consumed.append({indexOf(th), indexOf(sp)});
          replace(i, OpKind::Mish, x, {}, consumed);
          return true;
        }
      }
    }
    if (near(p.coef, 1.0 / 6)) {
      // x * clamp(x + 3, 0, 6) / 6 (clamp or hardtanh).
      const Op *c = inner(t, OpKind::Clamp);
      const Op *h = inner(t, OpKind::Hardtanh);
      const Op *bound = c ? c : h;
      if (!bound)
        return false;
      double lo = c ? c->getFloat("min") : h->getFloat("min_val");
      double hi = c ? c->getFloat("max") : h->getFloat("max_val");
      int add = addsNumber(bound->operands[0].value, x, 3.0);
      if (lo != 0 || hi != 6 || add < 0)
        return false;
      consumed.append({indexOf(bound), add});
      replace(i, OpKind::Hardswish, x, {}, consumed);
      return true;
    }
    return false;
  });
}

/// The reduction's dims as non-negative, sorted.
IntList normDims(const Graph &g, const Op &op) {
  IntList dims = op.getInts("dims");
  int64_t rank = std::max<int64_t>(g.type(op.operands[0].value).rank(), 1);
  for (int64_t &d : dims)
    d = d < 0 ? d + rank : d;
  llvm::sort(dims);
  return dims;
}

bool Recomposer::logsumexp(int i) {
  const Op &root = g.ops[i];
  auto fromLog = [&](const Op *log, llvm::SmallVectorImpl<int> &consumed, const Op *&sum,
                     ValueId &x, ValueId &shift) -> bool {
    sum = inner(log->operands[0].value, OpKind::Sum);
    if (!sum)
      return false;
    const Op *exp = inner(sum->operands[0].value, OpKind::Exp);
    if (!exp)
      return false;
    consumed.append({indexOf(log), indexOf(sum), indexOf(exp)});
    x = exp->operands[0].value;
    shift = -1;
    // exp(x - m) with m = max(x) over the same dims, kept.
    if (const Op *sub = inner(x, OpKind::Sub);
        sub && !sub->operands[0].isScalar() && !sub->operands[1].isScalar()) {
      const Op *m = g.defOp(sub->operands[1].value);
      if (m && m->kind == OpKind::Max && m->operands[0].value == sub->operands[0].value &&
          m->getBool("keepdim") && normDims(g, *m) == normDims(g, *sum)) {
        consumed.push_back(indexOf(sub));
        x = sub->operands[0].value;
        shift = m->result;
      }
    }
    return true;
  };
  llvm::SmallVector<int, 8> consumed;
  const Op *sum = nullptr;
  ValueId x = -1, shift = -1;
  if (root.kind == OpKind::Log) {
    // log(sum(exp(x))) alone: the unshifted form.
    if (!fromLog(&root, consumed, sum, x, shift) || shift >= 0)
      return false;
    consumed.erase(consumed.begin());
  } else if (root.kind == OpKind::Add && !root.operands[0].isScalar() &&
             !root.operands[1].isScalar()) {
    bool found = false;
    for (unsigned s : {0u, 1u}) {
      const Op *log = inner(root.operands[s].value, OpKind::Log);
      consumed.clear();
      if (!log || !fromLog(log, consumed, sum, x, shift) || shift < 0)
        continue;
      // + m, kept when the sum keeps dims, else the same max squeezed (or m reshaped).
      ValueId m2 = root.operands[1 - s].value;
      const Op *m = g.defOp(shift);
      if (m2 == shift && sum->getBool("keepdim")) {
        found = true;
      } else if (const Op *d = g.defOp(m2); d && !sum->getBool("keepdim")) {
        if (d->kind == OpKind::Max && d->operands[0].value == m->operands[0].value &&
            !d->getBool("keepdim") && normDims(g, *d) == normDims(g, *sum))
          found = true;
        else if (d->kind == OpKind::Reshape && d->operands[0].value == shift &&
                 g.type(d->result) == g.type(sum->result))
          found = true;
      }
      if (found)
        break;
    }
    if (!found)
      return false;
  } else {
    return false;
  }
  llvm::SmallVector<Attr, 2> attrs{{"dims", sum->getInts("dims")}};
  if (sum->getBool("keepdim"))
    attrs.push_back({"keepdim", true});
  replace(i, OpKind::Logsumexp, x, attrs, consumed);
  return true;
}

bool Recomposer::run() {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (int i = 0; i < int(g.ops.size()); ++i) {
      // An op whose result nobody reads any more is left for the caller to remove.
      if (uses[g.ops[i].result] == 0 && !returned[g.ops[i].result])
        continue;
      if (identityScalar(i) || rsqrt(i) || activation(i) || logsumexp(i)) {
        changed = again = true;
      }
    }
  }
  return changed;
}

} // namespace

bool recompose(Graph &graph) { return Recomposer(graph).run(); }

} // namespace sinter
