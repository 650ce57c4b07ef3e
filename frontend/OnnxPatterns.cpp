//===- frontend/OnnxPatterns.cpp - GroupNorm re-formed, and the graph put in order ---===//
//
// Both exporters write F.group_norm at opsets below 21 as
//   r = Reshape(x, [N, G, -1]); n = InstanceNormalization(r, ones[G], zeros[G]);
//   y = Reshape(n, shape(x)); Mul(y, gamma[C,1,..]); Add(., beta[C,1,..])
// which lowers to reshape -> instance_norm (no affine: its unit scale was dropped) ->
// reshape -> mul -> add. finishGraph matches that chain and writes group_norm(x, gamma,
// beta) in place of its last op, re-declaring gamma and beta as [C] params (their values
// are the same numbers in the same order). It needs the weights, which is why it runs here
// and not in the compiler's canonicalize. Then ops nobody uses, and params they alone used,
// are dropped, and the values are ordered as the parser orders them: inputs, params in
// order of first use, op results.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxImporter.h"

#include "ir/Error.h"
#include "ir/Verifier.h"

#include "llvm/ADT/STLExtras.h"

namespace sinter::onnximport {
namespace {

/// Ops reading each value.
std::vector<llvm::SmallVector<int, 2>> usersOf(const Graph &g) {
  std::vector<llvm::SmallVector<int, 2>> users(g.values.size());
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (const Operand &o : g.ops[i].operands)
      if (!o.isScalar() && !llvm::is_contained(users[o.value], int(i)))
        users[o.value].push_back(int(i));
  return users;
}

class GroupNormMatcher {
public:
  explicit GroupNormMatcher(Importer &im) : im(im), g(im.graph), users(usersOf(g)) {}

  /// Re-forms the chain starting at instance_norm op `i`, if it is one.
  void tryAt(int i);

private:
  Importer &im;
  Graph &g;
  std::vector<llvm::SmallVector<int, 2>> users;

  bool returned(ValueId v) const { return llvm::is_contained(g.results, v); }

  /// The single op reading `v`, when `v` is not also a graph result.
  int onlyUser(ValueId v) const { return users[v].size() == 1 && !returned(v) ? users[v][0] : -1; }

  /// For a mul / add op applied to chain value `v` with shape [N, C, *]: the per-channel
  /// param on its other side, or -1. `identity` is set when the other side is the number
  /// that changes nothing (1 for mul, 0 for add).
  ValueId channelParam(const Op &op, ValueId v, int64_t channels, unsigned rank,
                       bool &identity) const {
    identity = false;
    if (op.operands.size() != 2)
      return -1;
    int side = op.operands[0].value == v && !op.operands[0].isScalar() ? 1 : 0;
    if (op.operands[1 - side].isScalar() || op.operands[1 - side].value != v)
      return -1;
    const Operand &other = op.operands[side];
    if (other.isScalar()) {
      identity = other.scalar == (op.kind == OpKind::Mul ? 1.0 : 0.0);
      return -1;
    }
    const Value &p = g.values[other.value];
    if (p.kind != ValueKind::Param || !im.weights.count(p.name) || p.type.rank() > rank)
      return -1;
    // Right-aligned against [N, C, *], the param must be C at dim 1 and 1 elsewhere.
    Shape padded(rank - p.type.rank(), 1);
    padded.append(p.type.shape.begin(), p.type.shape.end());
    for (unsigned d = 0; d < rank; ++d)
      if (padded[d] != (d == 1 ? channels : 1))
        return -1;
    return other.value;
  }

  /// `p` as a [C] param: itself retyped when this op is its only user, else a copy.
  ValueId asChannelVector(ValueId p, int64_t channels) {
    Value &v = g.values[p];
    if (v.type.shape == Shape{channels})
      return p;
    if (users[p].size() == 1) {
      v.type = TensorType(DType::F32, {channels});
      im.weights[v.name].type = v.type;
      return p;
    }
    std::string name = im.uniqueName(v.name + "_c");
    HostTensor t = im.weights[v.name];
    t.type = TensorType(DType::F32, {channels});
    ValueId c = im.addValue(name, t.type, ValueKind::Param);
    g.args.push_back(c);
    im.weights[name] = std::move(t);
    return c;
  }

  /// A new [C] param filled with `value`.
  ValueId filledParam(const std::string &base, int64_t channels, float value) {
    std::string name = im.uniqueName(base);
    ValueId c = im.addValue(name, TensorType(DType::F32, {channels}), ValueKind::Param);
    g.args.push_back(c);
    im.weights[name] = HostTensor({channels}, std::vector<float>(size_t(channels), value));
    return c;
  }
};

void GroupNormMatcher::tryAt(int i) {
  const Op &norm = g.ops[i];
  if (norm.kind != OpKind::InstanceNorm || norm.operands.size() != 1)
    return;
  // r = reshape(x) to [N, G, M], read only by the norm.
  const Op *r1 = g.defOp(norm.operands[0].value);
  if (!r1 || r1->kind != OpKind::Reshape || onlyUser(r1->result) != i)
    return;
  ValueId x = r1->operands[0].value;
  const Shape &xs = g.type(x).shape;
  const Shape &rs = g.type(r1->result).shape;
  if (xs.size() < 2 || rs.size() != 3 || rs[0] != xs[0] || rs[1] < 1 || xs[1] % rs[1])
    return;
  int64_t channels = xs[1], groups = rs[1];
  // y = reshape(norm) back to x's shape.
  int r2 = onlyUser(norm.result);
  if (r2 < 0 || g.ops[r2].kind != OpKind::Reshape || g.type(g.ops[r2].result).shape != xs)
    return;
  llvm::SmallVector<int, 5> chain{g.values[r1->result].def, i, r2};
  ValueId cur = g.ops[r2].result;
  ValueId gamma = -1, beta = -1;
  for (OpKind kind : {OpKind::Mul, OpKind::Add}) {
    int next = onlyUser(cur);
    if (next < 0 || g.ops[next].kind != kind || g.type(g.ops[next].result).shape != xs)
      continue;
    bool identity = false;
    ValueId p = channelParam(g.ops[next], cur, channels, unsigned(xs.size()), identity);
    if (p < 0 && !identity)
      continue;
    (kind == OpKind::Mul ? gamma : beta) = p;
    chain.push_back(next);
    cur = g.ops[next].result;
  }
  int last = chain.back();
  double eps = norm.getFloat("eps");
  std::string origin = joinOrigins(g, chain);
  llvm::SmallVector<Operand, 3> operands{Operand::ofValue(x)};
  if (gamma >= 0 || beta >= 0) {
    std::string base = g.values[g.ops[last].result].name;
    gamma =
        gamma >= 0 ? asChannelVector(gamma, channels) : filledParam(base + "_gamma", channels, 1);
    beta = beta >= 0 ? asChannelVector(beta, channels) : filledParam(base + "_beta", channels, 0);
    operands.push_back(Operand::ofValue(gamma));
    operands.push_back(Operand::ofValue(beta));
  }
  Op &out = g.ops[last];
  out.kind = OpKind::GroupNorm;
  out.operands = operands;
  out.attrs.clear();
  out.setAttr("groups", groups);
  if (eps != 1e-5)
    out.setAttr("eps", eps);
  out.origin = origin;
  users = usersOf(g);
}

/// Removes ops whose results nobody reads and params nobody reads.
void removeDead(Importer &im) {
  Graph &g = im.graph;
  while (true) {
    auto users = usersOf(g);
    std::vector<bool> keep(g.ops.size(), true);
    bool any = false;
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (users[g.ops[i].result].empty() && !llvm::is_contained(g.results, g.ops[i].result)) {
        keep[i] = false;
        any = true;
      }
    if (!any)
      break;
    std::vector<Op> ops;
    for (size_t i = 0; i < g.ops.size(); ++i)
      if (keep[i])
        ops.push_back(std::move(g.ops[i]));
    g.ops = std::move(ops);
  }
  auto users = usersOf(g);
  std::vector<ValueId> args;
  for (ValueId a : g.args) {
    if (g.values[a].kind == ValueKind::Param && users[a].empty()) {
      im.weights.erase(g.values[a].name);
      continue;
    }
    args.push_back(a);
  }
  g.args = std::move(args);
}

/// Rebuilds the values in the parser's order: inputs, params by first use, op results.
Graph renumber(const Graph &g) {
  Graph out;
  out.name = g.name;
  out.file = g.file;
  std::vector<ValueId> map(g.values.size(), -1);
  auto add = [&](ValueId v) {
    map[v] = ValueId(out.values.size());
    Value nv = g.values[v];
    nv.def = -1;
    out.values.push_back(nv);
    return map[v];
  };
  for (ValueId a : g.args)
    if (g.values[a].kind == ValueKind::Input)
      out.args.push_back(add(a));
  for (const Op &op : g.ops)
    for (const Operand &o : op.operands)
      if (!o.isScalar() && map[o.value] < 0 && g.values[o.value].kind == ValueKind::Param)
        out.args.push_back(add(o.value));
  for (const Op &op : g.ops) {
    Op nop = op;
    for (Operand &o : nop.operands)
      if (!o.isScalar())
        o.value = map[o.value];
    nop.result = add(op.result);
    out.values[nop.result].def = int(out.ops.size());
    out.ops.push_back(std::move(nop));
  }
  for (ValueId r : g.results)
    out.results.push_back(map[r]);
  return out;
}

} // namespace

llvm::Error finishGraph(Importer &im) {
  GroupNormMatcher gn(im);
  for (int i = 0; i < int(im.graph.ops.size()); ++i)
    gn.tryAt(i);
  removeDead(im);
  im.graph = renumber(im.graph);
  if (auto err = verifyGraph(im.graph))
    return withContext(std::move(err), "the imported graph does not verify (a bug)");
  return llvm::Error::success();
}

} // namespace sinter::onnximport
