//===- compiler/SinkViews.cpp - views moved below the ops that follow them ---------===//
//
// A reshape keeps the elements in order, so an op that treats every element alike (an
// elementwise op) or a set of whole dims alike (a reduction) can run before it instead of
// after it, provided whatever else the op reads lines up with the elements the same way.
// Both shapes are cut into blocks: a boundary lies wherever the products of the trailing dims
// of the two shapes agree (the view never mixes elements across such a boundary). Inside a
// block the view may merge, split or regroup dims; across blocks it changes nothing. So a
// broadcast operand that is constant over each block, or spans each block whole, means the
// same thing in the other shape, and so does a reduction over whole blocks.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/SinkViews.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <string>

namespace sinter {
namespace {

/// For two shapes of one element count, the block (counted from the innermost, 0) each dim
/// of either lies in. Dims of size 1 lie on a boundary and are given the block to their right.
struct Blocks {
  llvm::SmallVector<int, 6> ofA, ofR;
  int count = 0;
};

Blocks blocksOf(const Shape &a, const Shape &r) {
  auto suffix = [](const Shape &s) {
    llvm::SmallVector<int64_t, 7> p(s.size() + 1, 1);
    for (int i = int(s.size()) - 1; i >= 0; --i)
      p[i] = p[i + 1] * s[i];
    return p;
  };
  auto sa = suffix(a), sr = suffix(r);
  llvm::SmallVector<int64_t, 7> common;
  for (int64_t v : sa)
    if (llvm::is_contained(sr, v) && !llvm::is_contained(common, v))
      common.push_back(v);
  llvm::sort(common);
  // The block of a dim: how many boundaries lie at or inside the product of the dims after it.
  auto block = [&](int64_t after) {
    return int(std::upper_bound(common.begin(), common.end(), after) - common.begin()) - 1;
  };
  Blocks b;
  for (size_t i = 0; i < a.size(); ++i)
    b.ofA.push_back(block(sa[i + 1]));
  for (size_t j = 0; j < r.size(); ++j)
    b.ofR.push_back(block(sr[j + 1]));
  b.count = int(common.size());
  return b;
}

/// What an operand or a reduction does over a block: stays constant on it (None), or spans
/// it whole (Whole). Doing both within one block stops the rewrite.
enum class Cover : uint8_t { None, Whole };

/// `operand`'s shape in `a`'s terms, when it broadcasts over the view `r` of `a` (its dims
/// aligned right) in a way `a` can express: per block, size 1 over all of the block's dims of
/// `r` (then 1 over `a`'s) or their full sizes (then `a`'s). Else nullopt.
std::optional<Shape> operandInTermsOf(const Shape &operand, const Shape &a, const Shape &r,
                                      const Blocks &blocks) {
  if (operand.size() > r.size())
    return std::nullopt;
  llvm::SmallVector<Cover, 6> cover(blocks.count, Cover::None);
  llvm::SmallVector<bool, 6> seen(blocks.count, false);
  const size_t lead = r.size() - operand.size();
  for (size_t j = 0; j < r.size(); ++j) {
    if (r[j] == 1)
      continue;
    const int64_t size = j < lead ? 1 : operand[j - lead];
    if (size != 1 && size != r[j])
      return std::nullopt; // the op broadcasts the view up: not this rewrite's case
    const int k = blocks.ofR[j];
    const Cover c = size == 1 ? Cover::None : Cover::Whole;
    if (seen[k] && cover[k] != c)
      return std::nullopt; // constant over part of a block only
    cover[k] = c;
    seen[k] = true;
  }
  Shape out;
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(a[i] != 1 && cover[blocks.ofA[i]] == Cover::Whole ? a[i] : 1);
  return out;
}

/// Whether two shapes broadcast alike: equal once their leading 1s are dropped.
bool sameBroadcast(const Shape &x, const Shape &y) {
  auto strip = [](const Shape &s) {
    size_t i = 0;
    while (i < s.size() && s[i] == 1)
      ++i;
    return llvm::ArrayRef<int64_t>(s).drop_front(i);
  };
  return strip(x) == strip(y);
}

/// Why a view stays where it is, or nullopt when it moves (or, analysing, would).
using Veto = std::optional<std::string>;

class Sinker {
public:
  /// With `apply` false the Sinker only says why views stay; it changes nothing.
  Sinker(Graph &g, bool apply) : g(g), apply(apply) {}

  bool run() {
    bool changed = false;
    for (bool moved = true; moved;) {
      moved = false;
      for (int i = 0; i < int(g.ops.size()) && !moved; ++i)
        if (!sinkAfter(i)) {
          // The view that moved is unused now; removed at once, so that it does not count
          // as a use of its operand when a view that operand is sinks next.
          erase(i);
          moved = true;
        }
      changed |= moved;
    }
    return changed;
  }

  /// Moves the view defined by op `vi` below its one user, where that user allows it; else
  /// says why not.
  Veto sinkAfter(int vi) {
    const Op &view = g.ops[vi];
    if (view.kind != OpKind::Reshape && view.kind != OpKind::Flatten)
      return view.name().str() + " is not a reshape or flatten";
    const ValueId r = view.result, a = view.operands[0].value;
    ValueUses uses(g);
    if (uses.returned[r])
      return name(r) + " is a graph result";
    if (uses.uses[r] == 0)
      return name(r) + " has no use";
    // Only a view of a value computed for it alone: the op after the view can then join the
    // op that computes it. A value used elsewhere (or an argument) is in memory anyway.
    if (g.values[a].isArgument())
      return name(a) + " is a graph argument";
    if (uses.uses[a] != 1 || uses.returned[a])
      return name(a) + " is used elsewhere too";
    // Every use of the view is in one op (mul(%r, %r) counts as one user).
    int user = -1;
    for (int i = vi + 1; i < int(g.ops.size()); ++i)
      for (const Operand &o : g.ops[i].operands)
        if (!o.isScalar() && o.value == r) {
          if (user >= 0 && user != i)
            return name(r) + " has more than one user";
          user = i;
        }
    assert(user >= 0 && "a used value is used after its definition");
    const Shape shapeA = g.type(a).shape, shapeR = g.type(r).shape;
    const Blocks blocks = blocksOf(shapeA, shapeR);
    const FusionClass cls = g.ops[user].info().fusionClass;
    if (cls == FusionClass::Elementwise || cls == FusionClass::Broadcast)
      return sinkElementwise(user, a, r, blocks, uses);
    if (cls == FusionClass::Reduction)
      return sinkReduction(user, a, blocks);
    if (g.ops[user].kind == OpKind::Softmax || g.ops[user].kind == OpKind::LogSoftmax)
      return sinkSoftmax(user, a, blocks);
    return g.ops[user].name().str() + " after it is neither elementwise, a reduction nor a softmax";
  }

private:
  Graph &g;
  bool apply;

  std::string name(ValueId v) const { return "%" + g.values[v].name; }

  /// A new value named and typed after `like` but of shape `shape`, not yet defined.
  ValueId newValue(ValueId like, const Shape &shape) {
    const std::string stem = g.values[like].name;
    const DType dtype = g.type(like).dtype;
    std::string name;
    for (int n = 0; name.empty() || g.lookup(name) >= 0; ++n)
      name = stem + "_unviewed" + (n ? std::to_string(n) : "");
    Value v;
    v.name = std::move(name);
    v.type = TensorType(dtype, shape);
    v.kind = ValueKind::Result;
    g.values.push_back(std::move(v));
    return ValueId(g.values.size() - 1);
  }

  /// Removes op `at` (its result left without a definition, for the caller to drop).
  void erase(int at) {
    g.values[g.ops[at].result].def = -1;
    g.ops.erase(g.ops.begin() + at);
    for (Value &v : g.values)
      if (v.def > at)
        --v.def;
  }

  /// Places `op` at index `at`, moving the ops from there one place on.
  void insert(int at, Op op) {
    for (Value &v : g.values)
      if (v.def >= at)
        ++v.def;
    g.values[op.result].def = at;
    g.ops.insert(g.ops.begin() + at, std::move(op));
  }

  Op reshapeOp(ValueId from, ValueId to, const Op &like) const {
    Op op;
    op.kind = OpKind::Reshape;
    op.operands = {Operand::ofValue(from)};
    op.result = to;
    op.loc = like.loc;
    op.origin = like.origin;
    const Shape &s = g.type(to).shape;
    op.setAttr("shape", IntList(s.begin(), s.end()));
    return op;
  }

  Veto sinkElementwise(int ui, ValueId a, ValueId r, const Blocks &blocks, const ValueUses &uses) {
    const Shape shapeA = g.type(a).shape, shapeR = g.type(r).shape;
    const ValueId old = g.ops[ui].result;
    if (g.type(old).shape != shapeR)
      return g.ops[ui].name().str() + " broadcasts " + name(r) + " to a larger shape";
    // The other tensor operands in a's terms, all of them or nothing moves: each is read as
    // it is (it broadcasts alike in both shapes), as the value it is itself a view of (that
    // value has a's shape), or through a new view.
    struct Other {
      int index;
      ValueId value;             ///< what the moved op reads
      std::optional<Shape> view; ///< the new view's shape, if one is needed
    };
    llvm::SmallVector<Other, 2> others;
    for (int k = 0; k < int(g.ops[ui].operands.size()); ++k) {
      const Operand &o = g.ops[ui].operands[k];
      if (o.isScalar() || o.value == r)
        continue;
      std::optional<Shape> s = operandInTermsOf(g.type(o.value).shape, shapeA, shapeR, blocks);
      if (!s)
        return name(o.value) + " " + g.type(o.value).str() + " varies within a block of dims " +
               "that the view regroups";
      const Value &v = g.values[o.value];
      // (Not an operand of higher rank than a: it would raise the result's rank.)
      if (v.type.rank() <= shapeA.size() && sameBroadcast(*s, v.type.shape)) {
        others.push_back({k, o.value, std::nullopt});
        continue;
      }
      const Op *def = g.defOp(o.value);
      if (def && (def->kind == OpKind::Reshape || def->kind == OpKind::Flatten) &&
          g.type(def->operands[0].value).shape == *s) {
        others.push_back({k, def->operands[0].value, std::nullopt});
        continue;
      }
      // A full-size operand is viewed in a's shape only where it is in memory anyway (an
      // argument, or used elsewhere): its new view then never sinks in turn, which would view
      // a back and trade the two places for ever.
      if (*s == shapeA && !v.isArgument() && uses.uses[o.value] == 1 && !uses.returned[o.value])
        return name(o.value) + " would need a view of its own, being computed for " +
               g.ops[ui].name().str() + " alone";
      others.push_back({k, o.value, s});
    }
    if (!apply)
      return std::nullopt;
    for (const Other &o : others) {
      ValueId value = o.value;
      if (o.view) {
        value = newValue(o.value, *o.view);
        insert(ui, reshapeOp(o.value, value, g.ops[ui]));
        ++ui;
      }
      g.ops[ui].operands[o.index].value = value;
    }
    for (Operand &o : g.ops[ui].operands)
      if (!o.isScalar() && o.value == r)
        o.value = a;
    return moveResult(ui, shapeA);
  }

  Veto sinkReduction(int ui, ValueId a, const Blocks &blocks) {
    Op &red = g.ops[ui];
    const Shape shapeA = g.type(a).shape, shapeR = g.type(red.operands[0].value).shape;
    const int rank = int(shapeR.size());
    llvm::SmallVector<bool, 6> reduced(rank, false);
    for (int64_t d : red.getInts("dims"))
      reduced[d < 0 ? d + rank : d] = true;
    llvm::SmallVector<Cover, 6> cover(blocks.count, Cover::None);
    llvm::SmallVector<bool, 6> seen(blocks.count, false);
    for (int j = 0; j < rank; ++j) {
      if (shapeR[j] == 1)
        continue;
      const int k = blocks.ofR[j];
      const Cover c = reduced[j] ? Cover::Whole : Cover::None;
      if (seen[k] && cover[k] != c)
        return red.name().str() + " reduces part of a block of dims that the view regroups";
      cover[k] = c;
      seen[k] = true;
    }
    IntList dims;
    Shape out;
    const bool keep = red.getBool("keepdim");
    for (size_t i = 0; i < shapeA.size(); ++i) {
      const bool isReduced = shapeA[i] != 1 && cover[blocks.ofA[i]] == Cover::Whole;
      if (isReduced)
        dims.push_back(int64_t(i));
      if (!isReduced || keep)
        out.push_back(isReduced ? 1 : shapeA[i]);
    }
    if (dims.empty())
      return red.name().str() + " reduces only dims of size 1";
    if (!apply)
      return std::nullopt;
    red.operands[0].value = a;
    red.setAttr("dims", dims);
    return moveResult(ui, out);
  }

  /// A softmax along a dim that is a block of its own in both shapes (the view splits or
  /// merges only other dims) runs along that dim of a.
  Veto sinkSoftmax(int ui, ValueId a, const Blocks &blocks) {
    Op &sm = g.ops[ui];
    const Shape shapeA = g.type(a).shape, shapeR = g.type(sm.operands[0].value).shape;
    const int rank = int(shapeR.size());
    int64_t d = sm.getInt("dim");
    d = d < 0 ? d + rank : d;
    if (shapeR[d] == 1)
      return sm.name().str() + " runs along a dim of size 1";
    const int k = blocks.ofR[d];
    auto onlyDim = [&](const Shape &shape, llvm::ArrayRef<int> of) {
      int found = -1;
      for (int i = 0; i < int(shape.size()); ++i)
        if (shape[i] != 1 && of[i] == k) {
          if (found >= 0)
            return -1;
          found = i;
        }
      return found;
    };
    const int i = onlyDim(shapeA, blocks.ofA);
    if (onlyDim(shapeR, blocks.ofR) != d || i < 0)
      return sm.name().str() + " runs along a dim that the view merges with others or splits";
    if (!apply)
      return std::nullopt;
    sm.operands[0].value = a;
    sm.setAttr("dim", int64_t(i));
    return moveResult(ui, shapeA);
  }

  /// Op `ui` now reads the unviewed values and makes `shape`: it gets a new result of that
  /// shape, and a reshape after it gives its old result (name, type, uses) the view's shape
  /// back. Nothing is added where the shapes agree.
  Veto moveResult(int ui, const Shape &shape) {
    const ValueId old = g.ops[ui].result;
    if (g.type(old).shape == shape)
      return std::nullopt;
    const ValueId fresh = newValue(old, shape);
    g.ops[ui].result = fresh;
    g.values[fresh].def = ui;
    insert(ui + 1, reshapeOp(fresh, old, g.ops[ui]));
    return std::nullopt;
  }
};

} // namespace

bool sinkViews(Graph &graph) { return Sinker(graph, true).run(); }

std::string whyViewStays(const Graph &graph, int viewOp) {
  Graph copy = graph; // analysis only: nothing is changed, but the Sinker takes a graph
  Veto why = Sinker(copy, false).sinkAfter(viewOp);
  return why ? *why : "it could move";
}

} // namespace sinter
