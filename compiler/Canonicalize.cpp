//===- compiler/Canonicalize.cpp - normalising a graph before fusion ---------------===//
#include "compiler/Canonicalize.h"

#include "compiler/FoldReduce.h"
#include "compiler/Recompose.h"
#include "compiler/SinkViews.h"

#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace sinter {
namespace {

/// Uses of each value (ops and graph results).
std::vector<int> useCounts(const Graph &g) {
  std::vector<int> uses(g.values.size(), 0);
  for (const Op &op : g.ops)
    for (const Operand &o : op.operands)
      if (!o.isScalar())
        ++uses[o.value];
  for (ValueId r : g.results)
    ++uses[r];
  return uses;
}

bool isResult(const Graph &g, ValueId v) { return llvm::is_contained(g.results, v); }

/// Replaces every operand use of `from` by `to`.
void replaceUses(Graph &g, ValueId from, ValueId to) {
  for (Op &op : g.ops)
    for (Operand &o : op.operands)
      if (!o.isScalar() && o.value == from)
        o.value = to;
}

/// The scalar of a binary op whose other operand is a value, with the side it is on.
std::optional<double> scalarOperand(const Op &op, unsigned &valueIndex) {
  if (op.operands.size() != 2)
    return std::nullopt;
  if (op.operands[1].isScalar() && !op.operands[0].isScalar()) {
    valueIndex = 0;
    return op.operands[1].scalar;
  }
  if (op.operands[0].isScalar() && !op.operands[1].isScalar()) {
    valueIndex = 1;
    return op.operands[0].scalar;
  }
  return std::nullopt;
}

/// Folds op `i` into its producer when both are scalar add/sub or both scalar mul/div on
/// the value (x + a) + b = x + (a + b), (x * a) * b = x * (a * b); sub and div are turned
/// into add and mul of the negated / inverted constant first. Only forms with the value on
/// the left of sub/div are folded.
bool foldScalarPair(Graph &g, int i, const std::vector<int> &uses) {
  Op &outer = g.ops[i];
  unsigned vi = 0;
  auto b = scalarOperand(outer, vi);
  if (!b)
    return false;
  ValueId inner = outer.operands[vi].value;
  int def = g.values[inner].def;
  if (def < 0 || uses[inner] != 1 || isResult(g, inner))
    return false;
  Op &in = g.ops[def];
  unsigned vj = 0;
  auto a = scalarOperand(in, vj);
  if (!a)
    return false;
  auto additive = [](OpKind k) { return k == OpKind::Add || k == OpKind::Sub; };
  auto multiplicative = [](OpKind k) { return k == OpKind::Mul || k == OpKind::Div; };
  // x - c and x / c only: c - x and c / x do not fold this way.
  auto asAdd = [](const Op &op, unsigned vIdx, double c) -> std::optional<double> {
    if (op.kind == OpKind::Add)
      return c;
    if (vIdx == 0)
      return -c;
    return std::nullopt;
  };
  auto asMul = [](const Op &op, unsigned vIdx, double c) -> std::optional<double> {
    if (op.kind == OpKind::Mul)
      return c;
    if (vIdx == 0 && c != 0)
      return 1 / c;
    return std::nullopt;
  };
  std::optional<double> ca, cb;
  OpKind kind;
  if (additive(outer.kind) && additive(in.kind)) {
    ca = asAdd(in, vj, *a);
    cb = asAdd(outer, vi, *b);
    kind = OpKind::Add;
  } else if (multiplicative(outer.kind) && multiplicative(in.kind)) {
    ca = asMul(in, vj, *a);
    cb = asMul(outer, vi, *b);
    kind = OpKind::Mul;
  } else {
    return false;
  }
  if (!ca || !cb)
    return false;
  // The two ops must see the same shape: the scalar never changes it.
  double c = kind == OpKind::Add ? *ca + *cb : *ca * *cb;
  outer.kind = kind;
  outer.operands = {Operand::ofValue(in.operands[vj].value), Operand::ofScalar(c)};
  return true;
}

/// Drops the values that are neither arguments nor op results (those of removed ops),
/// renumbering the rest in order, so that the graph verifies again.
void dropOrphanValues(Graph &g) {
  std::vector<ValueId> renumber(g.values.size(), -1);
  std::vector<Value> kept;
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].isArgument() || g.values[i].def >= 0) {
      renumber[i] = ValueId(kept.size());
      kept.push_back(std::move(g.values[i]));
    }
  g.values = std::move(kept);
  for (ValueId &a : g.args)
    a = renumber[a];
  for (ValueId &r : g.results)
    r = renumber[r];
  for (Op &op : g.ops) {
    op.result = renumber[op.result];
    for (Operand &o : op.operands)
      if (!o.isScalar())
        o.value = renumber[o.value];
  }
}

/// Removes ops whose results nobody uses, renumbering values' defs, and then their values.
bool removeDead(Graph &g) {
  bool changed = false;
  while (true) {
    std::vector<int> uses = useCounts(g);
    int dead = -1;
    for (int i = int(g.ops.size()) - 1; i >= 0 && dead < 0; --i)
      if (uses[g.ops[i].result] == 0)
        dead = i;
    if (dead < 0)
      break;
    changed = true;
    g.values[g.ops[dead].result].def = -1;
    g.ops.erase(g.ops.begin() + dead);
    for (Value &v : g.values)
      if (v.def > dead)
        --v.def;
  }
  // (Also the values of ops other rewrites removed, e.g. sinkViews.)
  dropOrphanValues(g);
  return changed;
}

} // namespace

bool canonicalize(Graph &g) {
  bool changed = false;
  // Dropout: the identity.
  for (Op &op : g.ops) {
    if (op.kind != OpKind::Dropout || isResult(g, op.result))
      continue;
    ValueId in = op.operands[0].value;
    if (std::count_if(g.ops.begin(), g.ops.end(), [&](const Op &o) {
          return llvm::any_of(o.operands, [&](const Operand &x) {
            return !x.isScalar() && x.value == op.result;
          });
        }) == 0)
      continue;
    replaceUses(g, op.result, in);
    changed = true;
  }
  // Formulas spelled out op by op (exported GELU, silu, logsumexp, ...): the catalog's op.
  if (recompose(g))
    changed = true;
  // Views below the elementwise ops and reductions that follow them, so that those join
  // the groups before the views (after recompose: a formula that reads a view several times
  // is one op then, which can move; the ops it replaced, removed first, no longer use it).
  if (removeDead(g))
    changed = true;
  if (sinkViews(g))
    changed = true;
  // Scalar chains (which can leave x * 1 behind: recompose drops it).
  bool folded = false;
  for (int i = 0; i < int(g.ops.size()); ++i)
    if (foldScalarPair(g, i, useCounts(g)))
      folded = true;
  if (folded) {
    changed = true;
    recompose(g);
  }
  // Sums over a linear layer's features: products with the weight's feature sum.
  if (foldFeatureReductions(g))
    changed = true;
  return removeDead(g) || changed;
}

} // namespace sinter
