//===- compiler/Fusion.cpp - partitioning a graph into fusion groups ---------------===//
//
// The algorithm, in three sweeps over the verified graph:
//
//  1. Anchors. Each conv / conv_transpose / linear / matmul, in graph order, tries the
//     patterns of kAnchorPatterns from the most to the least ambitious. Every pattern grows
//     the same way: from the anchor's result follow the single consumer while it is an
//     elementwise op (the epilogue), then look for the pattern's tail (a norm, a norm and a
//     reduction, a softmax over the channels or a pool the conv's kernel runs itself). The
//     first pattern that matches takes the ops; every pattern that did not records why, for
//     `sinterc explain --why`.
//  2. Standalone ops. Reductions, softmax, pools and norms each take the elementwise chain
//     that follows them as an epilogue; views stand alone. A pool whose chain ends in a
//     reduction takes the reduction and its chain too (a Reduce tail), and one that ends in a
//     norm whose rows fit in registers takes the norm and its chain (a Norm tail): that
//     kernel computes each pooled element from its window as it reads it, so the pooled
//     tensor is never written and read back, and no element is computed twice.
//  3. Elementwise trees. What is left is elementwise. Walking backwards, each op starts a
//     group and absorbs its producers while they are elementwise, used once, not returned,
//     and of the same size (so nothing is recomputed).
//
// A value can live in registers only when its single consumer is in the same group and it
// is not a graph result: that is the one condition behind every "stops at" reason.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Fusion.h"

#include "compiler/Epilogue.h"
#include "compiler/SinkViews.h"
#include "compiler/kernels/Generic.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <optional>

namespace sinter {

llvm::SmallVector<int, 16> FusionGroup::ops() const {
  llvm::SmallVector<int, 16> all;
  if (root >= 0)
    all.push_back(root);
  all.append(epilogue.begin(), epilogue.end());
  if (norm >= 0)
    all.push_back(norm);
  all.append(normEpilogue.begin(), normEpilogue.end());
  if (reduce >= 0)
    all.push_back(reduce);
  all.append(reduceEpilogue.begin(), reduceEpilogue.end());
  if (softmax >= 0)
    all.push_back(softmax);
  all.append(softmaxEpilogue.begin(), softmaxEpilogue.end());
  if (pool >= 0)
    all.push_back(pool);
  all.append(poolEpilogue.begin(), poolEpilogue.end());
  for (int m : members)
    if (!llvm::is_contained(all, m))
      all.push_back(m);
  llvm::sort(all);
  return all;
}

bool foldsWholePlanes(const Op &red, unsigned rank, bool *withChannels) {
  llvm::SmallVector<int64_t, 6> dims;
  for (int64_t d : red.getInts("dims"))
    dims.push_back(d < 0 ? d + rank : d);
  llvm::sort(dims);
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  bool spatial = dims.size() == rank - 2 && (rank == 2 || dims.front() == 2);
  bool channelsToo = dims.size() == rank - 1 && dims.front() == 1;
  if (withChannels)
    *withChannels = channelsToo;
  return spatial || channelsToo;
}

namespace {

/// Def-use facts the matchers ask about.
struct Context {
  const Graph &graph;
  FuseOptions options;
  std::vector<llvm::SmallVector<int, 2>> users; ///< ops using each value
  std::vector<bool> isResult;                   ///< value is returned by the graph
  std::vector<int> groupOf;                     ///< op -> group index, -1 while free
  /// The tensors the chains of the group being matched read besides their inputs (each
  /// becomes a buffer slot of the group's kernels): at most kChainSlots.
  mutable llvm::SmallVector<ValueId, 8> chainTensors;

  Context(const Graph &g, FuseOptions o)
      : graph(g), options(std::move(o)), users(g.values.size()), isResult(g.values.size(), false),
        groupOf(g.ops.size(), -1) {
    for (size_t i = 0; i < g.ops.size(); ++i)
      for (const Operand &o : g.ops[i].operands)
        if (!o.isScalar() && !llvm::is_contained(users[o.value], int(i)))
          users[o.value].push_back(int(i));
    for (ValueId r : g.results)
      isResult[r] = true;
  }

  const Op &op(int i) const { return graph.ops[i]; }
  std::string name(ValueId v) const { return "%" + graph.values[v].name; }

  /// Why `v` cannot stay in registers and flow into its consumer, or nullopt when it can;
  /// on success `consumer` is that one consumer.
  std::optional<std::string> singleFreeConsumer(ValueId v, int &consumer) const {
    // A returned value must be written to memory.
    if (isResult[v])
      return name(v) + " is a graph result";
    // Nothing consumes it: the chain ends here.
    if (users[v].empty())
      return name(v) + " has no consumer";
    // Two consumers would each need it: it has to be materialised.
    if (users[v].size() > 1)
      return name(v) + " has " + std::to_string(users[v].size()) + " consumers";
    consumer = users[v][0];
    // An op can use a value twice (mul(%y, %y)): that is still one consumer.
    if (groupOf[consumer] >= 0)
      return name(graph.ops[consumer].result) + " is already in another group";
    return std::nullopt;
  }
};

bool isElementwiseOp(OpKind k) {
  FusionClass c = opInfo(k).fusionClass;
  return c == FusionClass::Elementwise || c == FusionClass::Broadcast ||
         k == OpKind::BatchNorm;
}

/// Whether `consumer` can apply to the chain value `v` as one more epilogue step; the reason
/// when it cannot.
std::optional<std::string> epilogueStepVeto(const Context &ctx, ValueId v, int consumer) {
  const Op &op = ctx.op(consumer);
  // A view left in place by canonicalize (compiler/SinkViews.h): say why it did not move.
  if (op.kind == OpKind::Reshape || op.kind == OpKind::Flatten)
    return op.name().str() + " " + ctx.name(op.result) +
           " stays in place: " + whyViewStays(ctx.graph, consumer);
  // Only elementwise work can run on the value inside the producer's epilogue.
  if (!isElementwiseOp(op.kind))
    return op.name().str() + " is not elementwise";
  // batch_norm normalises its first operand with per-channel constants.
  if (op.kind == OpKind::BatchNorm) {
    if (op.operands[0].value != v)
      return std::string("batch_norm uses ") + ctx.name(v) + " as a statistic";
    return std::nullopt;
  }
  // A binary op must keep the chain's shape: broadcasting the chain value up would mean
  // computing each element several times.
  if (ctx.graph.type(op.result).shape != ctx.graph.type(v).shape)
    return op.name().str() + " broadcasts " + ctx.name(v) + " to a larger shape";
  return std::nullopt;
}

/// Where the chain value `v` has several consumers that all lie on elementwise paths meeting
/// again in one value (`y * hardswish(y)`, `y * 0.5 + y`, `r * clamp((r + 3) / 6, 0, 1)`):
/// appends those ops, in graph order, to `chain` and returns the value where the paths meet,
/// or nullopt when they do not. Each op of the region must be a free elementwise step of
/// the chain's shape whose tensor operands are region values or tensors computed without
/// `v`; no region value but the last may be a graph result or be used outside the region.
/// The epilogue functor keeps the values used again in registers (chainBody).
std::optional<ValueId> followDiamond(const Context &ctx, ValueId v,
                                     llvm::SmallVectorImpl<int> &chain) {
  if (ctx.isResult[v])
    return std::nullopt;
  constexpr size_t kMaxOps = 16; // ops in a region
  const Graph &g = ctx.graph;
  // Region values and, for each, how many of its consumers are not in the region yet.
  llvm::SmallVector<std::pair<ValueId, size_t>, 8> open{{v, ctx.users[v].size()}};
  auto inRegion = [&](ValueId x) {
    return llvm::any_of(open, [&](const auto &e) { return e.first == x; });
  };
  llvm::SmallVector<int, 8> region;
  const int first = g.values[v].def + 1;
  for (int i = std::max(first, 0); i < int(g.ops.size()) && region.size() < kMaxOps; ++i) {
    const Op &op = g.ops[i];
    llvm::SmallVector<ValueId, 2> read; // the region values it reads
    for (const Operand &o : op.operands)
      if (!o.isScalar() && inRegion(o.value) && !llvm::is_contained(read, o.value))
        read.push_back(o.value);
    if (read.empty())
      continue;
    if (ctx.groupOf[i] >= 0 || g.type(op.result).shape != g.type(v).shape)
      return std::nullopt;
    // Every region value it reads must pass as an epilogue step, and every other tensor it
    // reads must not depend on v: any value that does is a region value, since every op
    // reading one is taken into the region or ends the search.
    for (ValueId x : read) {
      if (epilogueStepVeto(ctx, x, i))
        return std::nullopt;
      for (auto &e : open)
        if (e.first == x)
          --e.second;
    }
    region.push_back(i);
    open.push_back({op.result, ctx.users[op.result].size()});
    // Met again: every region value but this one has all its consumers in the region.
    bool met = llvm::all_of(llvm::makeArrayRef(open).drop_back(),
                            [](const auto &e) { return e.second == 0; });
    if (met) {
      chain.append(region.begin(), region.end());
      return op.result;
    }
    if (ctx.isResult[op.result])
      return std::nullopt;
  }
  return std::nullopt;
}

/// Why the group being matched cannot take the elementwise `ops` into a chain that started
/// at `start` (`taken`: the chain's ops so far): the tensors they read besides the chain's
/// own values would take the group's chains past the kernels' kChainSlots slots. Records
/// those tensors when it can.
std::optional<std::string> chainSlotsVeto(const Context &ctx, ValueId start,
                                          llvm::ArrayRef<int> taken, llvm::ArrayRef<int> ops) {
  llvm::SmallVector<int, 16> all(taken.begin(), taken.end());
  all.append(ops.begin(), ops.end());
  llvm::SmallVector<ValueId, 8> fresh = chainSideTensors(ctx.graph, all, {start}, ctx.chainTensors);
  if (ctx.chainTensors.size() + fresh.size() > size_t(kChainSlots))
    return ctx.op(ops.front()).name().str() + " would read " + ctx.name(fresh.back()) +
           ", past the " + std::to_string(kChainSlots) +
           " tensors a kernel's fused chains can read";
  ctx.chainTensors.append(fresh.begin(), fresh.end());
  return std::nullopt;
}

/// Follows the elementwise chain from `v`; appends its ops to `chain` and returns the value
/// at its end. `stop` receives why it ended.
ValueId followChain(const Context &ctx, ValueId v, llvm::SmallVectorImpl<int> &chain,
                    std::string &stop) {
  const ValueId start = v;
  const size_t first = chain.size();
  auto taken = [&] { return llvm::makeArrayRef(chain).drop_front(first); };
  while (true) {
    int consumer = -1;
    if (auto why = ctx.singleFreeConsumer(v, consumer)) {
      if (ctx.users[v].size() > 1) {
        llvm::SmallVector<int, 8> region;
        if (std::optional<ValueId> met = followDiamond(ctx, v, region)) {
          if (auto full = chainSlotsVeto(ctx, start, taken(), region)) {
            stop = *full;
            return v;
          }
          chain.append(region.begin(), region.end());
          v = *met;
          continue;
        }
      }
      stop = *why;
      return v;
    }
    if (auto why = epilogueStepVeto(ctx, v, consumer)) {
      stop = *why;
      return v;
    }
    if (auto full = chainSlotsVeto(ctx, start, taken(), {consumer})) {
      stop = *full;
      return v;
    }
    chain.push_back(consumer);
    v = ctx.op(consumer).result;
  }
}

using MatchResult = std::optional<std::string>; // nullopt = matched, else why not

bool isConvAnchor(OpKind k) { return k == OpKind::Conv || k == OpKind::ConvTranspose; }
bool isStatsNorm(OpKind k) { return k == OpKind::GroupNorm || k == OpKind::InstanceNorm; }

/// The part every norm-tail pattern shares: an anchor `anchorOk` accepts, its elementwise
/// epilogue, then a norm `normOk` accepts as the epilogue's single consumer. Sets g.epilogue
/// and g.norm; the reason it fails otherwise.
MatchResult matchNormHead(const Context &ctx, int root, FusionGroup &g,
                          bool (*anchorOk)(OpKind), const char *anchorWhy,
                          bool (*normOk)(OpKind), const char *normWhy) {
  const Op &anchor = ctx.op(root);
  if (!anchorOk(anchor.kind))
    return std::string(anchorWhy);
  std::string stop;
  ValueId end = followChain(ctx, anchor.result, g.epilogue, stop);
  int consumer = -1;
  if (ctx.singleFreeConsumer(end, consumer))
    return "epilogue stops at " + stop;
  const Op &norm = ctx.op(consumer);
  // Only norms whose statistics the anchor's epilogue can gather fit.
  if (!normOk(norm.kind))
    return "epilogue stops at " + stop + "; " + norm.name().str() + " is not " + normWhy;
  if (norm.operands[0].value != end)
    return ctx.name(end) + " is not the normalised operand";
  g.norm = consumer;
  return std::nullopt;
}

/// Conv anchors with per-(n, group of channels) statistics: the NCHW-like layout keeps them
/// per (n, c) plane.
MatchResult matchConvNormHead(const Context &ctx, int root, FusionGroup &g) {
  return matchNormHead(ctx, root, g, isConvAnchor, "the anchor is not a convolution",
                       isStatsNorm, "group_norm or instance_norm");
}

/// conv -> elementwise* -> group_norm|instance_norm -> elementwise*, unless that chain flows
/// into a reduction: the norm then takes the reduction as a norm+epilogue+reduce group (the
/// normalised tensor is never written) and the conv gathers its statistics as it stores y.
MatchResult matchNorm(const Context &ctx, int root, FusionGroup &g) {
  if (MatchResult why = matchConvNormHead(ctx, root, g))
    return why;
  std::string stop;
  llvm::SmallVector<int, 8> post;
  ValueId end = followChain(ctx, ctx.op(g.norm).result, post, stop);
  int consumer = -1;
  if (!ctx.singleFreeConsumer(end, consumer) &&
      opInfo(ctx.op(consumer).kind).fusionClass == FusionClass::Reduction)
    return "the norm's chain flows into " + ctx.op(consumer).name().str() +
           ": norm+epilogue+reduce takes them, with statistics from the convolution";
  g.normEpilogue = post;
  g.output = end;
  return std::nullopt;
}

/// conv -> elementwise* -> group_norm|instance_norm -> mean|sum over spatial (and C) dims ->
/// elementwise*.
MatchResult matchNormReduce(const Context &ctx, int root, FusionGroup &g) {
  if (MatchResult why = matchConvNormHead(ctx, root, g))
    return why;
  const Op &norm = ctx.op(g.norm);
  int redIdx = -1;
  if (auto why = ctx.singleFreeConsumer(norm.result, redIdx))
    return "after the norm: " + *why;
  const Op &red = ctx.op(redIdx);
  // The mean of a normalised tensor over whole channels needs only the channel sums.
  if (red.kind != OpKind::Mean && red.kind != OpKind::Sum)
    return "the norm feeds " + red.name().str() + ", not mean or sum";
  // Reducing part of a channel's plane would need per-position values, not sums.
  if (!foldsWholePlanes(red, ctx.graph.type(norm.result).rank()))
    return red.name().str() + " must reduce all spatial dims (and optionally C)";
  g.reduce = redIdx;
  std::string stop;
  g.output = followChain(ctx, red.result, g.reduceEpilogue, stop);
  return std::nullopt;
}

/// linear or matmul (both operands 2-D) -> elementwise* -> group_norm over [M, N] ->
/// elementwise* -> min|max|sum|mean(dim 1).
MatchResult matchRowNormReduce(const Context &ctx, int root, FusionGroup &g) {
  const Op &anchor = ctx.op(root);
  if (anchor.kind != OpKind::Linear && anchor.kind != OpKind::Matmul)
    return "the anchor is not linear or matmul";
  const TensorType &yt = ctx.graph.type(anchor.result);
  // The norm groups must be columns of one output row.
  if (yt.rank() != 2)
    return anchor.name().str() + " output is not 2-D";
  if (anchor.kind == OpKind::Matmul && (ctx.graph.type(anchor.operands[0].value).rank() != 2 ||
                                        ctx.graph.type(anchor.operands[1].value).rank() != 2))
    return "matmul operands are not both 2-D";
  if (MatchResult why = matchNormHead(
          ctx, root, g, [](OpKind k) { return k == OpKind::Linear || k == OpKind::Matmul; },
          "the anchor is not linear or matmul", [](OpKind k) { return k == OpKind::GroupNorm; },
          "group_norm"))
    return why;
  const Op &norm = ctx.op(g.norm);
  int64_t cols = yt.shape[1] / norm.getInt("groups");
  // A group has to fit inside one warp's columns of a GEMM tile (up to 128 wide, split in
  // power-of-two spans of at least 8 columns).
  if (cols % 8 != 0 || 128 % cols != 0)
    return "groups of " + std::to_string(cols) +
           " columns do not tile the GEMM's warps (8, 16, 32, 64 or 128 columns do)";
  std::string stop2;
  llvm::SmallVector<int, 8> post;
  ValueId afterNorm = followChain(ctx, norm.result, post, stop2);
  int redIdx = -1;
  if (ctx.singleFreeConsumer(afterNorm, redIdx))
    return "after the norm: " + stop2;
  const Op &red = ctx.op(redIdx);
  if (red.kind != OpKind::Min && red.kind != OpKind::Max && red.kind != OpKind::Sum &&
      red.kind != OpKind::Mean)
    return "the norm feeds " + red.name().str() + ", not min, max, sum or mean";
  IntList dims = red.getInts("dims");
  if (dims.size() != 1 || (dims[0] != 1 && dims[0] != -1))
    return red.name().str() + " must reduce dim 1 only";
  g.normEpilogue = post;
  g.reduce = redIdx;
  g.output = red.result;
  return std::nullopt;
}

/// Why pool `pool`'s windows do not tile its input (stride = window, no padding or dilation),
/// or nullopt when they do.
std::optional<std::string> poolWindowsVeto(const Context &ctx, const Op &pool) {
  unsigned sd = ctx.graph.type(pool.operands[0].value).rank() - 2;
  IntList kernel = pool.getSpatial("kernel_size", sd), stride = pool.getSpatial("stride", sd),
          padding = pool.getSpatial("padding", sd);
  IntList dilation =
      pool.kind == OpKind::MaxPool ? pool.getSpatial("dilation", sd) : IntList(sd, 1);
  for (unsigned i = 0; i < sd; ++i)
    if (stride[i] != kernel[i] || padding[i] != 0 || dilation[i] != 1)
      return pool.name().str() + " windows do not tile its input (stride = kernel_size, no " +
             "padding or dilation)";
  return std::nullopt;
}

/// The pool that value `v` flows into as its single free consumer, or -1; `why` receives why
/// not when there is a pool that does not fit.
int poolConsumer(const Context &ctx, ValueId v, std::string &why) {
  int consumer = -1;
  if (ctx.singleFreeConsumer(v, consumer))
    return -1;
  const Op &pool = ctx.op(consumer);
  if (pool.kind != OpKind::MaxPool && pool.kind != OpKind::AvgPool)
    return -1;
  if (auto veto = poolWindowsVeto(ctx, pool)) {
    why = *veto;
    return -1;
  }
  return consumer;
}

/// Whether the planner's kernel for `anchor` runs the tail; `why` receives why not.
bool runsTail(const Context &ctx, const Op &anchor, const ConvTailOps &tail, std::string &why) {
  if (!ctx.options.anchorRunsTail) {
    why = "no convolution kernel runs softmax, pool or channel-reduction tails here";
    return false;
  }
  return ctx.options.anchorRunsTail(ctx.graph, anchor, tail, why);
}

/// Whether dim `d` (possibly negative) of a rank-`rank` [N, C, ...] tensor is C.
bool isChannelDim(int64_t d, int64_t rank) { return d == 1 || d == 1 - rank; }

/// Where a conv tail pattern's tail starts: the end of the anchor's epilogue, that value's
/// single free consumer, and why the epilogue stopped there.
struct TailStart {
  ValueId end = -1;
  int consumer = -1;
  std::string stop;
};

/// The part the conv tail patterns share: a conv anchor, its epilogue (into g.epilogue) and
/// where its tail starts.
MatchResult convTailStart(const Context &ctx, int root, FusionGroup &g, TailStart &t) {
  if (!isConvAnchor(ctx.op(root).kind))
    return std::string("the anchor is not a convolution");
  t.end = followChain(ctx, ctx.op(root).result, g.epilogue, t.stop);
  if (ctx.singleFreeConsumer(t.end, t.consumer))
    return "epilogue stops at " + t.stop;
  return std::nullopt;
}

/// conv -> elementwise* -> max_pool|avg_pool -> elementwise*, where the pool's windows tile
/// the output (stride = window, no padding or dilation) and the planner's kernel for the conv
/// can run the pool on its epilogue's values (conv_direct): y never reaches memory.
MatchResult matchPool(const Context &ctx, int root, FusionGroup &g) {
  const Op &anchor = ctx.op(root);
  TailStart t;
  if (MatchResult why = convTailStart(ctx, root, g, t))
    return why;
  std::string why;
  int pool = poolConsumer(ctx, t.end, why);
  if (pool < 0)
    return why.empty() ? "epilogue stops at " + t.stop + "; " + ctx.op(t.consumer).name().str() +
                             " is not a pool"
                       : why;
  if (!runsTail(ctx, anchor, {nullptr, &ctx.op(pool), nullptr}, why))
    return why;
  g.pool = pool;
  g.output = followChain(ctx, ctx.op(pool).result, g.poolEpilogue, t.stop);
  return std::nullopt;
}

/// conv -> elementwise* -> softmax|log_softmax over the channels -> elementwise*, then
/// optionally a pool as matchPool's: the planner's kernel for the conv holds every channel of
/// a position (one group: conv_direct, or without the pool conv_igemm's wgmma engine), so the
/// softmax runs in its registers.
MatchResult matchSoftmax(const Context &ctx, int root, FusionGroup &g) {
  const Op &anchor = ctx.op(root);
  TailStart t;
  if (MatchResult why = convTailStart(ctx, root, g, t))
    return why;
  const Op &softmax = ctx.op(t.consumer);
  if (softmax.kind != OpKind::Softmax && softmax.kind != OpKind::LogSoftmax)
    return "epilogue stops at " + t.stop + "; " + softmax.name().str() + " is not a softmax";
  if (!isChannelDim(softmax.getInt("dim"), ctx.graph.type(t.end).rank()))
    return softmax.name().str() + " is not over the channels (dim 1)";
  g.softmax = t.consumer;
  ValueId after = followChain(ctx, softmax.result, g.softmaxEpilogue, t.stop);
  // The pool too, where its windows tile the output and the kernel can hold them.
  std::string why;
  int pool = poolConsumer(ctx, after, why);
  if (pool >= 0 && runsTail(ctx, anchor, {&softmax, &ctx.op(pool), nullptr}, why)) {
    g.pattern = "conv+epilogue+softmax+epilogue+pool+epilogue";
    g.pool = pool;
    g.output = followChain(ctx, ctx.op(pool).result, g.poolEpilogue, t.stop);
    return std::nullopt;
  }
  if (!runsTail(ctx, anchor, {&softmax, nullptr, nullptr}, why))
    return why;
  g.output = after;
  return std::nullopt;
}

/// conv -> elementwise* -> sum|mean|max|min|logsumexp over the channels (dims [1]) ->
/// elementwise*, where the planner's kernel for the conv holds every channel of a position
/// (conv_igemm's wgmma engine: one group in one tile column; conv_direct: one group in one
/// thread): y never reaches memory.
MatchResult matchChannelReduce(const Context &ctx, int root, FusionGroup &g) {
  const Op &anchor = ctx.op(root);
  TailStart t;
  if (MatchResult why = convTailStart(ctx, root, g, t))
    return why;
  const Op &red = ctx.op(t.consumer);
  if (opInfo(red.kind).fusionClass != FusionClass::Reduction)
    return "epilogue stops at " + t.stop + "; " + red.name().str() + " is not a reduction";
  IntList dims = red.getInts("dims");
  if (dims.size() != 1 || !isChannelDim(dims[0], ctx.graph.type(t.end).rank()))
    return red.name().str() + " does not reduce over the channels (dim 1) alone";
  std::string why;
  if (!runsTail(ctx, anchor, {nullptr, nullptr, &red}, why))
    return why;
  g.reduce = t.consumer;
  g.output = followChain(ctx, red.result, g.reduceEpilogue, t.stop);
  return std::nullopt;
}

/// conv -> elementwise* -> sum|mean over every spatial dim (and optionally C) ->
/// elementwise*: every conv kernel can add up its epilogue's values per (n, c) plane (the
/// statistics a norm tail gathers), so y never reaches memory and a small kernel finishes
/// each output from its plane's sum.
MatchResult matchPlaneReduce(const Context &ctx, int root, FusionGroup &g) {
  TailStart t;
  if (MatchResult why = convTailStart(ctx, root, g, t))
    return why;
  const Op &red = ctx.op(t.consumer);
  if (red.kind != OpKind::Sum && red.kind != OpKind::Mean)
    return "epilogue stops at " + t.stop + "; " + red.name().str() + " is not sum or mean";
  if (!foldsWholePlanes(red, ctx.graph.type(t.end).rank()))
    return red.name().str() + " does not reduce every spatial dim (and optionally C)";
  g.reduce = t.consumer;
  g.output = followChain(ctx, red.result, g.reduceEpilogue, t.stop);
  return std::nullopt;
}

/// anchor -> elementwise*.
MatchResult matchPlain(const Context &ctx, int root, FusionGroup &g) {
  std::string stop;
  g.output = followChain(ctx, ctx.op(root).result, g.epilogue, stop);
  return std::nullopt;
}

struct AnchorPattern {
  const char *name;
  TailKind tail;
  MatchResult (*match)(const Context &, int, FusionGroup &);
};

/// Most ambitious first: the first that matches takes the ops.
const AnchorPattern kAnchorPatterns[] = {
    {"conv+epilogue+norm+reduce", TailKind::NormReduce, matchNormReduce},
    {"linear+epilogue+rownorm+reduce", TailKind::RowNormReduce, matchRowNormReduce},
    {"conv+epilogue+norm+epilogue", TailKind::Norm, matchNorm},
    {"conv+epilogue+softmax+epilogue", TailKind::Softmax, matchSoftmax},
    {"conv+epilogue+pool+epilogue", TailKind::Pool, matchPool},
    {"conv+epilogue+creduce+epilogue", TailKind::ChannelReduce, matchChannelReduce},
    {"conv+epilogue+sreduce+epilogue", TailKind::PlaneReduce, matchPlaneReduce},
    {"anchor+epilogue", TailKind::None, matchPlain},
};

GroupKind standaloneKind(OpKind k) {
  switch (opInfo(k).fusionClass) {
  case FusionClass::Reduction:
    return GroupKind::Reduction;
  case FusionClass::Norm:
    return k == OpKind::BatchNorm ? GroupKind::Elementwise : GroupKind::Norm;
  case FusionClass::Opaque:
    return (k == OpKind::Softmax || k == OpKind::LogSoftmax) ? GroupKind::Softmax
                                                              : GroupKind::Pool;
  case FusionClass::View:
    return GroupKind::View;
  case FusionClass::Elementwise:
  case FusionClass::Broadcast:
    return GroupKind::Elementwise;
  case FusionClass::Anchor:
    return GroupKind::Anchor;
  }
  llvm_unreachable("unknown fusion class");
}

const char *standaloneName(GroupKind k) {
  switch (k) {
  case GroupKind::Reduction:
    return "reduction+epilogue";
  case GroupKind::Softmax:
    return "softmax+epilogue";
  case GroupKind::Pool:
    return "pool+epilogue";
  case GroupKind::Norm:
    return "norm+epilogue";
  case GroupKind::View:
    return "view";
  case GroupKind::Elementwise:
    return "elementwise";
  case GroupKind::Anchor:
    return "anchor+epilogue";
  }
  llvm_unreachable("unknown group kind");
}

void claim(Context &ctx, FusionResult &result, FusionGroup g) {
  int index = int(result.groups.size());
  for (int op : g.ops())
    ctx.groupOf[op] = index;
  result.groups.push_back(std::move(g));
}

/// Gives a pool group the reduction or norm its chain flows into, and that op's chain, when
/// the consumer reads each pooled value exactly once: a reduction always, a layer, group or
/// instance norm when its rows fit in registers (one kernel, row_norm.cuh) and the pool's
/// windows do not overlap; a norm that splits its statistics reads its input twice, so the
/// pool is stored for it. Returns why a norm that follows was not taken (for `explain
/// --why`), nullopt otherwise.
std::optional<std::string> takePoolTail(const Context &ctx, FusionGroup &g) {
  int consumer = -1;
  // The pooled values (after the chain) must go to one consumer only, and not to memory.
  if (ctx.singleFreeConsumer(g.output, consumer))
    return std::nullopt;
  const Op &op = ctx.op(consumer);
  std::string stop;
  if (opInfo(op.kind).fusionClass == FusionClass::Reduction) {
    g.tail = TailKind::Reduce;
    g.pattern = "pool+epilogue+reduce";
    g.reduce = consumer;
    g.output = followChain(ctx, op.result, g.reduceEpilogue, stop);
    return std::nullopt;
  }
  // Only a norm of the pooled values can take them (batch_norm is elementwise and already in
  // the chain; a norm using them as gamma or beta reads them per element of another tensor).
  if (opInfo(op.kind).fusionClass != FusionClass::Norm || op.kind == OpKind::BatchNorm)
    return std::nullopt;
  for (size_t i = 1; i < op.operands.size(); ++i)
    if (op.operands[i].value == g.output)
      return ctx.name(g.output) + " is a parameter of " + op.name().str();
  // A norm that splits its statistics reads its input twice.
  if (chooseRowNorm(rowNormGeometry(op, ctx.graph.type(g.output))) != RowNormMode::Resident)
    return op.name().str() + " rows do not fit in registers (it reads its input twice)";
  // Overlapping windows (kernel > stride) measured slower fused on the H200 (a 3x3 stride-2
  // max pool before a group norm: 0.491 vs 0.466 ms): one block per row cannot hide the
  // extra loads that the standalone pool's one thread per output does.
  const Op &pool = ctx.op(g.root);
  unsigned sd = ctx.graph.type(pool.operands[0].value).rank() - 2;
  IntList kernel = pool.getSpatial("kernel_size", sd), stride = pool.getSpatial("stride", sd);
  for (unsigned i = 0; i < sd; ++i)
    if (kernel[i] > stride[i])
      return pool.name().str() + " windows overlap (kernel > stride)";
  g.tail = TailKind::Norm;
  g.pattern = "pool+epilogue+norm+epilogue";
  g.norm = consumer;
  g.output = followChain(ctx, op.result, g.normEpilogue, stop);
  return std::nullopt;
}

/// Gives a standalone group or instance norm of an [N, C, ...] tensor the reduction its chain
/// flows into, and that reduction's chain: its kernel then reads the norm's input once more,
/// normalising each element as it folds it, instead of writing the normalised tensor and
/// reading it back.
void takeNormReduce(const Context &ctx, FusionGroup &g) {
  const Op &norm = ctx.op(g.root);
  if ((norm.kind != OpKind::GroupNorm && norm.kind != OpKind::InstanceNorm) ||
      ctx.graph.type(norm.operands[0].value).rank() < 3)
    return;
  int consumer = -1;
  if (ctx.singleFreeConsumer(g.output, consumer))
    return;
  const Op &op = ctx.op(consumer);
  if (opInfo(op.kind).fusionClass != FusionClass::Reduction)
    return;
  std::string stop;
  g.tail = TailKind::Reduce;
  g.pattern = "norm+epilogue+reduce";
  g.reduce = consumer;
  g.output = followChain(ctx, op.result, g.reduceEpilogue, stop);
}

/// Absorbs the producers of `op` that can be computed inline, recursively.
void absorbProducers(Context &ctx, int op, FusionGroup &g) {
  const Op &consumer = ctx.op(op);
  int64_t size = ctx.graph.type(consumer.result).numel();
  for (const Operand &o : consumer.operands) {
    if (o.isScalar())
      continue;
    int producer = ctx.graph.values[o.value].def;
    if (producer < 0 || ctx.groupOf[producer] >= 0 || llvm::is_contained(g.members, producer))
      continue;
    const Op &p = ctx.op(producer);
    // Inline only elementwise work that nobody else needs and that is computed once per
    // output element.
    if (!isElementwiseOp(p.kind) || ctx.isResult[p.result] || ctx.users[p.result].size() != 1 ||
        ctx.graph.type(p.result).numel() != size)
      continue;
    // The tree's kernel reads at most kTreeInputSlots tensors.
    llvm::SmallVector<int, 16> members(g.members.begin(), g.members.end());
    members.push_back(producer);
    llvm::sort(members);
    if (chainSideTensors(ctx.graph, members, {}).size() > size_t(kTreeInputSlots))
      continue;
    g.members.push_back(producer);
    absorbProducers(ctx, producer, g);
  }
}

} // namespace

FusionResult fuse(const Graph &graph, const FuseOptions &options) {
  Context ctx(graph, options);
  FusionResult result;

  // 1. Anchors, in graph order.
  for (int i = 0; i < int(graph.ops.size()); ++i) {
    if (ctx.groupOf[i] >= 0 || opInfo(graph.ops[i].kind).fusionClass != FusionClass::Anchor)
      continue;
    for (const AnchorPattern &p : kAnchorPatterns) {
      FusionGroup g;
      g.pattern = p.name;
      g.kind = GroupKind::Anchor;
      g.tail = p.tail;
      g.root = i;
      ctx.chainTensors.clear();
      if (MatchResult why = p.match(ctx, i, g)) {
        result.rejections.push_back({i, p.name, *why});
        continue;
      }
      claim(ctx, result, std::move(g));
      break;
    }
  }

  // 2. Standalone non-elementwise ops with their epilogues.
  for (int i = 0; i < int(graph.ops.size()); ++i) {
    if (ctx.groupOf[i] >= 0 || isElementwiseOp(graph.ops[i].kind))
      continue;
    FusionGroup g;
    g.kind = standaloneKind(graph.ops[i].kind);
    g.pattern = standaloneName(g.kind);
    g.root = i;
    g.output = graph.ops[i].result;
    ctx.chainTensors.clear();
    if (g.kind != GroupKind::View) {
      std::string stop;
      g.output = followChain(ctx, g.output, g.epilogue, stop);
    }
    if (g.kind == GroupKind::Pool)
      if (auto why = takePoolTail(ctx, g))
        result.rejections.push_back({i, "pool+epilogue+norm+epilogue", *why});
    if (g.kind == GroupKind::Norm)
      takeNormReduce(ctx, g);
    claim(ctx, result, std::move(g));
  }

  // 3. Elementwise trees, walking backwards so consumers absorb their producers.
  for (int i = int(graph.ops.size()) - 1; i >= 0; --i) {
    if (ctx.groupOf[i] >= 0)
      continue;
    FusionGroup g;
    g.kind = GroupKind::Elementwise;
    g.pattern = "elementwise";
    g.root = i;
    g.output = graph.ops[i].result;
    g.members.push_back(i);
    absorbProducers(ctx, i, g);
    claim(ctx, result, std::move(g));
  }

  // A norm+epilogue+reduce group of a plain convolution's output takes its statistics from
  // the convolution's epilogue instead of a pass of its own over that output.
  for (const FusionGroup &g : result.groups) {
    if (g.kind != GroupKind::Norm || g.tail != TailKind::Reduce)
      continue;
    ValueId in = graph.ops[g.root].operands[0].value;
    int def = graph.values[in].def;
    if (def < 0)
      continue;
    FusionGroup &producer = result.groups[ctx.groupOf[def]];
    if (producer.kind == GroupKind::Anchor && producer.tail == TailKind::None &&
        producer.output == in && isConvAnchor(graph.ops[producer.root].kind))
      producer.gatherStats = true;
  }

  // Order groups by the op that produces their output: a valid topological order, since
  // every value a group reads is produced by an op that comes before that output op.
  llvm::stable_sort(result.groups, [&](const FusionGroup &a, const FusionGroup &b) {
    return graph.values[a.output].def < graph.values[b.output].def;
  });
  return result;
}

} // namespace sinter
