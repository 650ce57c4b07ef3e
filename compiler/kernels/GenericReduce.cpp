//===- compiler/kernels/GenericReduce.cpp - reduction and softmax emitters ---------===//
//
// Chooses the shape of work for reduce.cuh and softmax.cuh from the baked shapes: which
// threads own which outputs, how wide a team is, and whether an output's reduced range is
// split over several blocks (only when there are too few outputs to fill the GPU).
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/GenericCommon.h"

#include "llvm/ADT/STLExtras.h"

namespace sinter {

using namespace generic;

namespace {

/// Adjacent input dims of the same kind (kept or reduced) merged into one: size and stride.
struct DimGroup {
  int64_t size, stride;
  bool reduced;
};

/// The groups of a contiguous input, outermost first; size-1 dims are dropped (they move no
/// index either way).
llvm::SmallVector<DimGroup, 6> groupDims(llvm::ArrayRef<int64_t> shape,
                                         llvm::ArrayRef<int64_t> dims) {
  Shape strides = contiguousStrides(shape);
  llvm::SmallVector<DimGroup, 6> groups;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1)
      continue;
    bool reduced = llvm::is_contained(dims, int64_t(d));
    if (!groups.empty() && groups.back().reduced == reduced) {
      // Contiguous: the outer group's stride is exactly this dim's extent times its stride.
      groups.back().size *= shape[d];
      groups.back().stride = strides[d];
    } else {
      groups.push_back({shape[d], strides[d], reduced});
    }
  }
  return groups;
}

} // namespace

llvm::Expected<KernelSource> emitReduce(const ReduceSpec &spec) {
  if (llvm::Error err = checkKernelName(spec.kernelName))
    return err;
  const std::string &name = spec.kernelName;
  if (llvm::Error err = checkOutSlot(name, spec.outSlot))
    return err;
  if (spec.outSlot == kReduceWorkSlot)
    return makeError(name + ": output slot " + llvm::Twine(spec.outSlot) +
                     " is the reduction workspace");
  const int64_t rank = spec.inShape.size();
  int64_t numel = 1;
  for (int64_t s : spec.inShape)
    numel *= s;
  if (numel <= 0)
    return makeError(name + ": " + reductionName(spec.kind) + " over an empty tensor " +
                     shapeStr(spec.inShape));
  if (spec.dims.empty())
    return makeError(name + ": " + reductionName(spec.kind) + " with no dims to reduce");
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    int64_t d = spec.dims[i];
    if (d < 0 || d >= rank)
      return makeError(name + ": reduced dim " + llvm::Twine(d) + " is out of range for " +
                       shapeStr(spec.inShape));
    if (i > 0 && d <= spec.dims[i - 1])
      return makeError(name + ": reduced dims must be sorted and distinct");
  }

  PoolExtent poolExt; // a window of one element unless the reduction reads a pool
  if (spec.pooled) {
    const PoolSpec &pool = *spec.pooled;
    auto ext = checkPool(pool, name);
    if (!ext)
      return ext.takeError();
    poolExt = *ext;
    Shape pooledShape{pool.N, pool.C};
    for (unsigned d = 3 - pool.spatialDims; d < 3; ++d)
      pooledShape.push_back(pool.out[d]);
    if (pooledShape != spec.inShape)
      return makeError(name + ": " + reductionName(spec.kind) + " over " + shapeStr(spec.inShape) +
                       " reads a pool whose result is " + shapeStr(pooledShape));
  }

  llvm::SmallVector<int64_t, 6> keptSize, keptStride, redSize, redStride;
  for (const DimGroup &g : groupDims(spec.inShape, spec.dims)) {
    (g.reduced ? redSize : keptSize).push_back(g.size);
    (g.reduced ? redStride : keptStride).push_back(g.stride);
  }
  int64_t numOut = 1, R = 1;
  for (int64_t s : keptSize)
    numOut *= s;
  for (int64_t s : redSize)
    R *= s;
  // Reduced innermost dim: a team reads along it. Kept innermost dim: lanes own consecutive
  // outputs. A short innermost reduced range over many outputs reads better the second way.
  const bool innerReduced = !redSize.empty() && (keptSize.empty() || redStride.back() == 1);
  const bool teamMode = innerReduced && (R >= 64 || numOut < 2048);

  // Loads per output: a pooled element costs its window's loads, so a short reduction of
  // pooled values (the channels of a 3x3x3 max pool) still needs several warps per output.
  const int64_t work = R * poolExt.window;

  int64_t team = 0, rows = 0, cols = 1, threads, outputsPerBlock, lanesPerOutput;
  if (teamMode) {
    team = R <= 512 ? 32 : R <= 8192 ? 128 : 512;
    threads = team > 32 ? team : 256; // a team wider than a warp owns its block
    outputsPerBlock = threads / team;
    lanesPerOutput = team;
  } else {
    rows = std::min({int64_t(8), nextPow2(ceilDiv(work, 32)), nextPow2(R)});
    // Blocks of fewer than 8 warps take several groups of 32 outputs: a 32-thread block would
    // cap a multiprocessor at half its threads.
    cols = std::clamp<int64_t>(ceilDiv(numOut, 32), 1, 8 / rows);
    threads = 32 * rows * cols;
    outputsPerBlock = 32 * cols;
    lanesPerOutput = rows;
  }
  const int64_t blocksX = ceilDiv(numOut, outputsPerBlock);
  if (blocksX > kMaxGridX)
    return makeError(name + ": " + llvm::Twine(numOut) + " outputs are too many for one grid");
  int64_t split = 1;
  const int64_t targetBlocks = kTargetThreads / threads;
  if (blocksX < targetBlocks) {
    // Each lane should still make at least 64 loads, or the split costs more than it gains.
    split = std::min({ceilDiv(targetBlocks, blocksX),
                      ceilDiv(ceilDiv(work, lanesPerOutput), int64_t(64)),
                      ceilDiv(R, lanesPerOutput), int64_t(1024)});
    split = std::max<int64_t>(split, 1);
  }
  const int64_t chunk = ceilDiv(R, split);
  split = ceilDiv(R, chunk);

  PrologueWriter w(name, "reduce.cuh");
  w.constant("kKind", int64_t(spec.kind));
  w.constant("kNumOut", numOut);
  w.constant("kR", R);
  w.constant("kKeptRank", keptSize.size());
  w.constantArray("kKeptSize", keptSize);
  w.constantArray("kKeptStride", keptStride);
  w.constant("kRedRank", redSize.size());
  w.constantArray("kRedSize", redSize);
  w.constantArray("kRedStride", redStride);
  w.constant("kMode", teamMode ? 0 : 1);
  w.constant("kThreads", threads);
  w.constant("kTeam", teamMode ? team : 1);
  w.constant("kRows", teamMode ? 1 : rows);
  w.constant("kCols", cols);
  w.constant("kSplit", split);
  w.constant("kChunk", chunk);
  w.constant("kOutSlot", spec.outSlot);
  w.constant("kWorkSlot", kReduceWorkSlot);
  w.constantBool("kSmallIndex", numel <= int64_t(UINT32_MAX));
  writeElement(w, spec.pooled);
  w.flatFunctor("Load", spec.load);
  w.flatFunctor("Post", spec.post);

  KernelSource ks;
  ks.name = name;
  ks.templateName = "reduce.cuh";
  ks.source = w.finish();
  ks.launch.grid = {unsigned(blocksX), unsigned(split), 1};
  ks.launch.block = {unsigned(threads), 1, 1};
  ks.tileConfig = std::string(reductionName(spec.kind)) + " of " + std::to_string(R) +
                  (spec.pooled ? pooledNote(*spec.pooled, poolExt) : std::string()) + " into " +
                  std::to_string(numOut) + ": " +
                  (teamMode ? std::to_string(team) + "-thread team per output"
                            : "warp over 32 outputs x " + std::to_string(rows) + " rows, " +
                                  std::to_string(cols) + " output groups a block") +
                  (split > 1 ? ", split " + std::to_string(split) : "");
  ks.flops = double(numel) * (spec.kind == ReduceSpec::Kind::LogSumExp ? 3 : 1);
  ks.bytes = double(numel + numOut) * 4;
  if (spec.pooled) {
    // The pool's input is read instead of its result.
    ks.flops += double(numel) * poolExt.window;
    ks.bytes = double(spec.pooled->N * spec.pooled->C * poolExt.inPlane + numOut) * 4;
  }
  if (split > 1) {
    WorkspaceNeed need;
    need.slot = kReduceWorkSlot;
    need.bytes = numOut * split * 8 + ceilDiv(numOut * 4, 8) * 8;
    need.init = WorkspaceNeed::Init::Zero;
    need.what = "per-block partial states (float2) then one arrival counter per output";
    ks.workspace.push_back(need);
  }
  return ks;
}

llvm::Expected<KernelSource> emitSoftmax(const SoftmaxSpec &spec) {
  if (llvm::Error err = checkKernelName(spec.kernelName))
    return err;
  const std::string &name = spec.kernelName;
  const char *op = spec.log ? "log_softmax" : "softmax";
  if (llvm::Error err = checkOutSlot(name, spec.outSlot))
    return err;
  const int64_t rank = spec.shape.size();
  if (spec.dim < 0 || spec.dim >= rank)
    return makeError(name + ": " + op + " dim " + llvm::Twine(spec.dim) + " is out of range for " +
                     shapeStr(spec.shape));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < spec.dim ? outer : inner) *= d == spec.dim ? 1 : spec.shape[d];
  const int64_t D = spec.shape[spec.dim];
  if (outer * D * inner <= 0)
    return makeError(name + ": " + op + " over an empty tensor " + shapeStr(spec.shape));

  const bool rowMode = inner == 1;
  const int64_t lines = outer * inner;
  // A short softmax dim over many lines (the channels of images): each thread holds whole
  // lines in registers, at most 64 values, in vectors of consecutive lines where they divide.
  const bool cached = !rowMode && D <= 64 && lines >= 4096;
  // A longer one (up to 1024) over many lines: the warps of a block split each group of 32
  // lines' elements, at most 32 a thread, all held in registers (one read, one exponential an
  // element). Measured on an H200 (2026-11-28): the 128 channels of
  // convt2d_kb91_softmax_bias_scale_sigmoid's [128, 128, 129, 129] in mode 1, two passes
  // with a running state, took 1.31 ms at ncu's clock. At most 16 a thread (8 warps a line
  // group) made that graph faster (73 registers instead of 128 and a spill; 2026-11-29) but
  // a plain softmax of the same shape 20% slower, 0.253-0.269 against 0.218-0.235 ms; with
  // 32 a thread, the template's ex2.approx and the chain's coordinates in 32 bits
  // (broadcastOffset) kb91's kernel holds 80 registers and the graph ran 1.724-1.732 ms
  // against 1.789-1.793 for 16 a thread (H200, four rotated rounds, 2026-11-29).
  const bool split = !rowMode && !cached && D <= 1024 && lines >= 4096;
  // Rows of up to 8192 (at most 32 elements a thread of a 256-thread team): held in registers,
  // in 16-byte vectors where the row length allows, so each row is read once (mode 4; mode 0
  // reads it twice and keeps a running state, an exponential or two an element).
  const bool rowCached = rowMode && D <= 8192;
  int64_t team = 1, rows = 1, cols = 1, vec = 1, threads, blocks;
  if (rowCached) {
    vec = D % 4 == 0 ? 4 : D % 2 == 0 ? 2 : 1;
    team = D <= 1024 ? std::clamp<int64_t>(nextPow2(D / vec), 4, 32) : 256;
    threads = 256;
    blocks = ceilDiv(outer, threads / team);
  } else if (rowMode) {
    // Past 8192 (rowCached takes the shorter rows): the whole of a 1024-thread block a row.
    team = threads = 1024;
    blocks = outer;
  } else if (cached) {
    vec = inner % 4 == 0 && D <= 16 ? 4 : inner % 2 == 0 && D <= 32 ? 2 : 1;
    threads = 256;
    blocks = ceilDiv(lines / vec, threads);
  } else if (split) {
    rows = nextPow2(ceilDiv(D, 32));
    cols = std::max<int64_t>(1, 8 / rows);
    threads = 32 * rows * cols;
    blocks = ceilDiv(lines, 32 * cols);
  } else {
    // Enough warps per line to fill the GPU when there are few lines, at most a 1024-thread
    // block; blocks of fewer than 8 warps take several groups of 32 lines.
    rows = std::clamp<int64_t>(nextPow2(ceilDiv(kTargetThreads, lines)), 1, 32);
    while (rows > 1 && rows > D)
      rows /= 2;
    cols = std::max<int64_t>(1, 8 / rows);
    threads = 32 * rows * cols;
    blocks = ceilDiv(lines, 32 * cols);
  }
  if (blocks > kMaxGridX)
    return makeError(name + ": " + op + " over " + shapeStr(spec.shape) +
                     " needs too many blocks for one grid");

  PrologueWriter w(name, "softmax.cuh");
  w.constant("kOuter", outer);
  w.constant("kD", D);
  w.constant("kInner", inner);
  w.constantBool("kLog", spec.log);
  w.constant("kMode", rowCached ? 4 : rowMode ? 0 : cached ? 2 : split ? 3 : 1);
  w.constant("kThreads", threads);
  w.constant("kTeam", team);
  w.constant("kRows", rows);
  w.constant("kCols", cols);
  w.constant("kVec", vec);
  w.constant("kOutSlot", spec.outSlot);
  w.flatFunctor("Load", spec.load);
  w.flatFunctor("Post", spec.post);

  KernelSource ks;
  ks.name = name;
  ks.templateName = "softmax.cuh";
  ks.source = w.finish();
  ks.launch.grid = {unsigned(blocks), 1, 1};
  ks.launch.block = {unsigned(threads), 1, 1};
  ks.tileConfig =
      std::string(op) + " along " + std::to_string(D) +
      (rowCached ? ": " + std::to_string(team) + "-thread team per row, " +
                       std::to_string(ceilDiv(D / vec, team) * vec) +
                       " elements a thread held in registers"
       : rowMode ? ": " + std::to_string(team) + "-thread team per row"
       : cached  ? ": " + std::to_string(vec) + " lines a thread, held in registers"
       : split   ? ": warp over 32 lines x " + std::to_string(rows) + " rows, " +
                     std::to_string(ceilDiv(D, rows)) + " elements a thread held in registers, " +
                     std::to_string(cols) + " line groups a block"
               : ": warp over 32 lines x " + std::to_string(rows) + " rows, " +
                     std::to_string(cols) + " line groups a block");
  const double numel = double(outer) * D * inner;
  ks.flops = numel * 5;
  ks.bytes = numel * 8;
  return ks;
}

} // namespace sinter
