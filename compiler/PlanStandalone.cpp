//===- compiler/PlanStandalone.cpp - planning groups without an anchor -------------===//
//
// Elementwise trees become one elementwise kernel computing the group's output from its
// inputs; reductions, softmax and pools become one kernel of their template, with the
// trailing elementwise chain as its Post functor (a pool with a reduction or norm tail
// becomes one reduction or row-norm kernel that computes the pooled elements itself);
// layer, group and instance norm of a tensor in memory are normalisations of contiguous
// rows, one kernel when a row fits in registers and two (split statistics, then normalise)
// when not; views cost nothing unless they are returned, in which case a copy writes the
// output.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Epilogue.h"
#include "compiler/PlanBuilder.h"
#include "compiler/kernels/Generic.h"
#include "compiler/kernels/Norm.h"
#include "ir/Error.h"

#include "llvm/ADT/STLExtras.h"

namespace sinter {
namespace {

/// Binds the extra operand slots of a functor.
void bindExtra(PlanBuilder &b, const SlotMap &extra, std::map<int, int> &slots) {
  for (auto [slot, value] : extra.slots())
    slots[slot] = b.bufferOf(value);
}

llvm::Error planElementwise(PlanBuilder &b, int gi, llvm::ArrayRef<int> members, ValueId output) {
  const Graph &g = b.graph;
  constexpr int kOut = 15;
  SlotMap inputs(0, kOut - 1);
  std::string body;
  if (members.empty()) {
    // A copy (a returned view): read the view's source element by element.
    const Op &root = g.ops[b.fusion.groups[gi].root];
    int slot = inputs.slotFor(root.operands[0].value);
    body = "return __ldg(static_cast<const float *>(b.p[" + std::to_string(slot) + "]) + i);";
  } else {
    auto computed = computeBody(g, members, output, inputs);
    if (!computed)
      return withContext(computed.takeError(), b.where(gi));
    body = *computed;
  }
  ElementwiseSpec spec;
  spec.kernelName = b.kernelName(gi, members.empty() ? "copy" : "");
  spec.numel = g.type(output).numel();
  spec.outSlot = kOut;
  spec.computeBody = body;
  std::map<int, int> slots{{kOut, b.bufferOf(output)}};
  bindExtra(b, inputs, slots);
  llvm::Expected<KernelSource> kernel = emitElementwise(spec);
  // The emitter counts the output; each tensor the body reads crosses DRAM once too (a
  // broadcast one is read again from cache).
  if (kernel)
    for (auto [slot, value] : inputs.slots())
      kernel->bytes += double(g.type(value).bytes());
  return b.launch(std::move(kernel), gi, members.empty() ? "copy" : "elementwise", MathMode::Ffma,
                  slots);
}

llvm::SmallVector<int64_t, 6> normalizedDims(const Op &op, unsigned rank) {
  llvm::SmallVector<int64_t, 6> dims;
  for (int64_t d : op.getInts("dims"))
    dims.push_back(d < 0 ? d + rank : d);
  llvm::sort(dims);
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

/// What every single-input kernel with a Post functor starts from: the root op, its input
/// type, the group's trailing chain as a flat Post functor over the root's output, and the
/// slots bound so far (0: input, 3: output, 8..: the chain's tensors).
struct PostKernel {
  const Op *root = nullptr;
  TensorType input;
  FunctorBody post;
  std::map<int, int> slots;
};

llvm::Expected<PostKernel> postKernel(PlanBuilder &b, int gi) {
  const FusionGroup &grp = b.fusion.groups[gi];
  PostKernel k;
  k.root = &b.graph.ops[grp.root];
  k.input = b.graph.type(k.root->operands[0].value);
  SlotMap extra(kFirstChainSlot);
  auto post = chainBody(b.graph, grp.epilogue, k.root->result,
                        IndexSpace::flat(b.graph.type(k.root->result).shape), extra);
  if (!post)
    return withContext(post.takeError(), b.where(gi));
  k.post = *post;
  k.slots = {{0, b.bufferOf(k.root->operands[0].value)}, {3, b.bufferOf(grp.output)}};
  bindExtra(b, extra, k.slots);
  return k;
}

/// The reduce.cuh spec of group gi's reduction `red` over a tensor of type `input`
/// (functors left to the caller).
ReduceSpec reduceSpec(PlanBuilder &b, int gi, const Op &red, const TensorType &input) {
  ReduceSpec spec;
  spec.kernelName = b.kernelName(gi, "");
  spec.inShape = input.shape;
  spec.dims = normalizedDims(red, input.rank());
  spec.kind = reductionKindOf(red.kind);
  return spec;
}

llvm::Error planReduction(PlanBuilder &b, int gi) {
  auto k = postKernel(b, gi);
  if (!k)
    return k.takeError();
  ReduceSpec spec = reduceSpec(b, gi, *k->root, k->input);
  spec.post = k->post;
  return b.launch(emitReduce(spec), gi, "reduction", MathMode::Ffma, k->slots);
}

llvm::Error planSoftmax(PlanBuilder &b, int gi) {
  auto k = postKernel(b, gi);
  if (!k)
    return k.takeError();
  SoftmaxSpec spec;
  spec.kernelName = b.kernelName(gi, "");
  spec.shape = k->input.shape;
  int64_t dim = k->root->getInt("dim");
  spec.dim = dim < 0 ? dim + k->input.rank() : dim;
  spec.log = k->root->kind == OpKind::LogSoftmax;
  spec.post = k->post;
  return b.launch(emitSoftmax(spec), gi, "softmax", MathMode::Ffma, k->slots);
}

/// The pool spec of `root` (a max_pool or avg_pool of `in`); kernel name, functors and output
/// slot left to the caller.
PoolSpec poolSpec(const Graph &g, const Op &root, const TensorType &in) {
  const TensorType &out = g.type(root.result);
  unsigned sd = in.rank() - 2;
  PoolSpec spec;
  spec.max = root.kind == OpKind::MaxPool;
  spec.spatialDims = sd;
  spec.N = in.shape[0];
  spec.C = in.shape[1];
  IntList kernel = root.getSpatial("kernel_size", sd), st = root.getSpatial("stride", sd),
          pad = root.getSpatial("padding", sd);
  IntList dil = spec.max ? root.getSpatial("dilation", sd) : IntList(sd, 1);
  for (unsigned i = 0; i < sd; ++i) {
    unsigned d = 3 - sd + i;
    spec.in[d] = in.shape[2 + i];
    spec.out[d] = out.shape[2 + i];
    spec.kernel[d] = kernel[i];
    spec.stride[d] = st[i];
    spec.padding[d] = pad[i];
    spec.dilation[d] = dil[i];
  }
  spec.countIncludePad = spec.max ? true : root.getBool("count_include_pad");
  return spec;
}

/// What a pool with a reduction or norm tail hands to that op's kernel: the pool's epilogue
/// as the Load functor over the pooled values, the tail op's chain as Post, the pool itself,
/// and the slots (0: the pool's input, 3: the group output, 8..: the chains' tensors).
struct PooledTail {
  const Op *pool = nullptr, *tail = nullptr;
  TensorType pooled;
  FunctorBody load, post;
  PoolSpec spec;
  std::map<int, int> slots;
};

llvm::Expected<PooledTail> pooledTail(PlanBuilder &b, int gi, int tailOp,
                                      llvm::ArrayRef<int> tailChain) {
  const Graph &g = b.graph;
  const FusionGroup &grp = b.fusion.groups[gi];
  PooledTail t;
  t.pool = &g.ops[grp.root];
  t.tail = &g.ops[tailOp];
  t.pooled = g.type(t.pool->result);
  SlotMap extra(kFirstChainSlot);
  auto load = chainBody(g, grp.epilogue, t.pool->result, IndexSpace::flat(t.pooled.shape), extra);
  if (!load)
    return withContext(load.takeError(), b.where(gi));
  auto post = chainBody(g, tailChain, t.tail->result,
                        IndexSpace::flat(g.type(t.tail->result).shape), extra);
  if (!post)
    return withContext(post.takeError(), b.where(gi));
  t.load = *load;
  t.post = *post;
  t.spec = poolSpec(g, *t.pool, g.type(t.pool->operands[0].value));
  t.slots = {{0, b.bufferOf(t.pool->operands[0].value)}, {3, b.bufferOf(grp.output)}};
  bindExtra(b, extra, t.slots);
  return t;
}

/// A pool whose result flows (through its epilogue) into a reduction: one reduce.cuh kernel
/// that computes each pooled element from its window, applies the pool's epilogue to it and
/// folds it; the reduction's own chain is its Post.
llvm::Error planPoolReduce(PlanBuilder &b, int gi) {
  const FusionGroup &grp = b.fusion.groups[gi];
  auto t = pooledTail(b, gi, grp.reduce, grp.reduceEpilogue);
  if (!t)
    return t.takeError();
  ReduceSpec spec = reduceSpec(b, gi, *t->tail, t->pooled);
  spec.load = t->load;
  spec.post = t->post;
  spec.pooled = t->spec;
  return b.launch(emitReduce(spec), gi,
                  t->spec.max ? "max pool + reduction" : "average pool + reduction", MathMode::Ffma,
                  t->slots);
}

/// A pool whose result flows (through its epilogue) into a layer, group or instance norm
/// whose rows fit in registers: one row_norm.cuh kernel that computes each pooled element
/// from its window as it loads a row.
llvm::Error planPoolNorm(PlanBuilder &b, int gi) {
  const FusionGroup &grp = b.fusion.groups[gi];
  auto t = pooledTail(b, gi, grp.norm, grp.normEpilogue);
  if (!t)
    return t.takeError();
  const Op &norm = *t->tail;
  RowNormSpec spec = rowNormGeometry(norm, t->pooled);
  spec.kernelName = b.kernelName(gi, "");
  spec.load = t->load;
  spec.post = t->post;
  spec.pooled = t->spec;
  std::map<int, int> slots = t->slots;
  bindAffine(b, norm, slots);
  const char *what = norm.kind == OpKind::LayerNorm ? "pool + layer norm" : "pool + group norm";
  return b.launch(emitRowNorm(spec), gi, what, MathMode::Ffma, slots);
}

llvm::Error planPool(PlanBuilder &b, int gi) {
  if (b.fusion.groups[gi].tail == TailKind::Reduce)
    return planPoolReduce(b, gi);
  if (b.fusion.groups[gi].tail == TailKind::Norm)
    return planPoolNorm(b, gi);
  auto k = postKernel(b, gi);
  if (!k)
    return k.takeError();
  PoolSpec spec = poolSpec(b.graph, *k->root, k->input);
  spec.kernelName = b.kernelName(gi, "");
  spec.post = k->post;
  return b.launch(emitPool(spec), gi, spec.max ? "max pool" : "average pool", MathMode::Ffma,
                  k->slots);
}

/// A group or instance norm whose chain flows into a reduction: per-(n, c) statistics of its
/// input (channel_stats.cuh), each (n, c)'s normalisation as a scale and shift
/// (norm_scale_shift.cuh), then one reduce.cuh kernel over the norm's input whose Load applies
/// the scale and shift and the norm's chain. The normalised tensor is never written.
llvm::Error planNormReduce(PlanBuilder &b, int gi) {
  const Graph &g = b.graph;
  const FusionGroup &grp = b.fusion.groups[gi];
  const Op &norm = g.ops[grp.root];
  const Op &red = g.ops[grp.reduce];
  const TensorType &in = g.type(norm.operands[0].value);
  const int64_t n = in.shape[0], c = in.shape[1], l = in.numel() / (n * c);
  const int x = b.bufferOf(norm.operands[0].value);
  const std::string base = g.values[norm.operands[0].value].name;
  // The statistics: gathered by the convolution that wrote x (FusionGroup::gatherStats), or a
  // pass of their own.
  int stats = b.statsOf(norm.operands[0].value);
  if (stats < 0) {
    stats = b.workspace(base + ".stats", n * c * 16);
    b.fill(stats, kFillZero);
    ChannelStatsSpec cs;
    cs.kernelName = b.kernelName(gi, "stats");
    cs.N = n;
    cs.C = c;
    cs.L = l;
    if (auto err = b.launch(emitChannelStats(cs), gi, "channel statistics", MathMode::Ffma,
                            {{0, x}, {kChannelStatsSlot, stats}}))
      return err;
  }
  NormSpec ns;
  ns.kernelName = b.kernelName(gi, "scale_shift");
  ns.N = n;
  ns.C = c;
  ns.L = l;
  ns.groups = norm.kind == OpKind::GroupNorm ? norm.getInt("groups") : c;
  ns.eps = norm.getFloat("eps");
  ns.affine = norm.operands.size() == 3;
  int scaleShift = b.workspace(base + ".scale_shift", n * c * 8);
  std::map<int, int> sslots{{kChannelStatsSlot, stats}, {5, scaleShift}};
  bindAffine(b, norm, sslots);
  if (auto err =
          b.launch(emitNormScaleShift(ns), gi, "norm scale and shift", MathMode::Ffma, sslots))
    return err;
  // The reduction's Load: the normalisation as one FMA with its (n, c)'s scale and shift
  // (slot 6 here: reduce.cuh keeps 5 for its split workspace), then the norm's chain.
  SlotMap extra(kFirstChainSlot);
  const TensorType &normOut = g.type(norm.result);
  auto chain = chainBody(g, grp.epilogue, norm.result, IndexSpace::flat(normOut.shape), extra);
  if (!chain)
    return withContext(chain.takeError(), b.where(gi));
  auto post = chainBody(g, grp.reduceEpilogue, red.result,
                        IndexSpace::flat(g.type(red.result).shape), extra);
  if (!post)
    return withContext(post.takeError(), b.where(gi));
  ReduceSpec spec = reduceSpec(b, gi, red, normOut);
  spec.kernelName = b.kernelName(gi, "");
  spec.load.code = "float t = v;\n    { const float2 ss = __ldg(reinterpret_cast<const float2 "
                   "*>(b.p[6]) + i / " +
                   std::to_string(l) + "LL); t = t * ss.x + ss.y; }\n";
  if (!chain->code.empty())
    spec.load.code += "    { auto f = [&](float v) { " + chain->code + " }; t = f(t); }\n";
  spec.load.code += "    return t;";
  spec.post = *post;
  std::map<int, int> slots{{0, x}, {3, b.bufferOf(grp.output)}, {6, scaleShift}};
  bindExtra(b, extra, slots);
  return b.launch(emitReduce(spec), gi, "normalise + epilogue + reduction", MathMode::Ffma, slots);
}

/// Layer, group and instance norm of a tensor in memory, as a normalisation of contiguous rows
/// (RowNormSpec): one kernel when the rows fit in registers, else per-row statistics split
/// over blocks and an apply pass.
llvm::Error planNorm(PlanBuilder &b, int gi) {
  if (b.fusion.groups[gi].tail == TailKind::Reduce)
    return planNormReduce(b, gi);
  const Graph &g = b.graph;
  auto k = postKernel(b, gi);
  if (!k)
    return k.takeError();
  const Op &root = *k->root;
  RowNormSpec spec = rowNormGeometry(root, k->input);
  spec.post = k->post;
  std::map<int, int> slots = k->slots;
  bindAffine(b, root, slots);
  const char *what = root.kind == OpKind::LayerNorm ? "layer norm" : "group norm";
  if (chooseRowNorm(spec) == RowNormMode::Resident) {
    spec.kernelName = b.kernelName(gi, "");
    return b.launch(emitRowNorm(spec), gi, what, MathMode::Ffma, slots);
  }
  int stats = b.workspace(g.values[root.operands[0].value].name + ".stats", spec.rows * 16);
  b.fill(stats, kFillZero);
  ChannelStatsSpec cs;
  cs.kernelName = b.kernelName(gi, "stats");
  cs.N = spec.rows;
  cs.C = 1;
  cs.L = spec.width;
  cs.load = spec.load;
  if (auto err = b.launch(emitChannelStats(cs), gi, "row statistics", MathMode::Ffma,
                          {{0, slots[0]}, {kChannelStatsSlot, stats}}))
    return err;
  spec.kernelName = b.kernelName(gi, "normalize");
  slots[kChannelStatsSlot] = stats;
  return b.launch(emitRowApply(spec), gi, std::string(what) + " from row statistics",
                  MathMode::Ffma, slots);
}

} // namespace

ReductionKind reductionKindOf(OpKind k) {
  if (k == OpKind::Sum)
    return ReductionKind::Sum;
  if (k == OpKind::Mean)
    return ReductionKind::Mean;
  if (k == OpKind::Max)
    return ReductionKind::Max;
  if (k == OpKind::Min)
    return ReductionKind::Min;
  assert(k == OpKind::Logsumexp && "not a reduction");
  return ReductionKind::LogSumExp;
}

llvm::Error planStandaloneGroup(PlanBuilder &b, int gi) {
  const FusionGroup &grp = b.fusion.groups[gi];
  const Op &root = b.graph.ops[grp.root];
  switch (grp.kind) {
  case GroupKind::Elementwise:
    return planElementwise(b, gi, grp.members, grp.output);
  case GroupKind::Reduction:
    return planReduction(b, gi);
  case GroupKind::Softmax:
    return planSoftmax(b, gi);
  case GroupKind::Pool:
    return planPool(b, gi);
  case GroupKind::Norm:
    return planNorm(b, gi);
  case GroupKind::View:
    // A view of a buffer costs nothing; a returned view needs its own output buffer, unless
    // what it views was written there (PlanBuilder's constructor).
    if (b.hasBuffer(grp.output)) {
      if (b.resolve(b.bufferOf(root.operands[0].value)) == b.resolve(b.bufferOf(grp.output)))
        return llvm::Error::success();
      return planElementwise(b, gi, {}, grp.output);
    }
    b.alias(grp.output, b.bufferOf(root.operands[0].value));
    return llvm::Error::success();
  case GroupKind::Anchor:
    break;
  }
  llvm_unreachable("anchor groups are planned by planAnchorGroup");
}

} // namespace sinter
