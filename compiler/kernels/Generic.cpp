//===- compiler/kernels/Generic.cpp - elementwise, pool and norm emitters ----------===//
//
// Turns ElementwiseSpec, PoolSpec and ChannelStatsSpec into the generated prologues of
// elementwise.cuh, pool.cuh and channel_stats.cuh, with launch configurations sized from the
// baked shapes. Reductions and softmax are in GenericReduce.cpp, row norms in RowNorm.cpp.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/GenericCommon.h"

namespace sinter {

using namespace generic;

namespace {

constexpr int64_t kElementwiseThreads = 256;
/// Grid-stride kernels launch at most this many blocks; each thread then takes several steps.
constexpr int64_t kMaxStrideBlocks = int64_t(1) << 20;

} // namespace

llvm::Expected<KernelSource> emitElementwise(const ElementwiseSpec &spec) {
  if (llvm::Error err = checkKernelName(spec.kernelName))
    return err;
  const std::string &name = spec.kernelName;
  if (llvm::Error err = checkOutSlot(name, spec.outSlot))
    return err;
  if (spec.numel <= 0)
    return makeError(name + ": elementwise kernel over an empty tensor");
  if (llvm::StringRef(spec.computeBody).find("return") == llvm::StringRef::npos)
    return makeError(name + ": elementwise compute body has no return");
  const int64_t vec = spec.numel % 4 == 0 ? 4 : 1;
  const int64_t blocks = std::min(ceilDiv(spec.numel / vec, kElementwiseThreads), kMaxStrideBlocks);

  PrologueWriter w(name, "elementwise.cuh");
  w.constant("kNumel", spec.numel);
  w.constant("kOutSlot", spec.outSlot);
  w.constant("kVec", vec);
  w.constant("kThreads", kElementwiseThreads);
  w.computeFunctor(spec.computeBody);

  KernelSource ks;
  ks.name = name;
  ks.templateName = "elementwise.cuh";
  ks.source = w.finish();
  ks.launch.grid = {unsigned(blocks), 1, 1};
  ks.launch.block = {unsigned(kElementwiseThreads), 1, 1};
  ks.tileConfig = std::to_string(vec) + " elements per step, " +
                  std::to_string(kElementwiseThreads) + " threads";
  ks.flops = double(spec.numel);
  ks.bytes = double(spec.numel) * 4; // the output; the planner adds the tensors the body reads
  return ks;
}

namespace generic {

llvm::Expected<PoolExtent> checkPool(const PoolSpec &spec, llvm::StringRef name) {
  const char *op = spec.max ? "max_pool" : "avg_pool";
  if (spec.spatialDims < 1 || spec.spatialDims > 3)
    return makeError(name + ": " + op + " over " + llvm::Twine(spec.spatialDims) +
                     " spatial dims (1 to 3 supported)");
  if (spec.N < 1 || spec.C < 1)
    return makeError(name + ": " + op + " over an empty tensor");
  PoolExtent e;
  for (unsigned d = 0; d < 3; ++d) {
    const bool real = d >= 3 - spec.spatialDims;
    if (!real && (spec.in[d] != 1 || spec.out[d] != 1 || spec.kernel[d] != 1 ||
                  spec.stride[d] != 1 || spec.padding[d] != 0 || spec.dilation[d] != 1))
      return makeError(name + ": " + op + " spec has a non-trivial unused spatial entry " +
                       llvm::Twine(d));
    if (spec.in[d] < 1 || spec.out[d] < 1 || spec.kernel[d] < 1 || spec.stride[d] < 1 ||
        spec.padding[d] < 0 || spec.dilation[d] < 1)
      return makeError(name + ": " + op + " has a non-positive size, kernel, stride or " +
                       "dilation, or a negative padding in spatial entry " + llvm::Twine(d));
    if (!spec.max && spec.dilation[d] != 1)
      return makeError(name + ": avg_pool has no dilation");
    // PyTorch's rule: every window starts inside the input or its left padding.
    if ((spec.out[d] - 1) * spec.stride[d] >= spec.in[d] + spec.padding[d])
      return makeError(name + ": " + op + " output size " + llvm::Twine(spec.out[d]) +
                       " has windows past the padded input in spatial entry " + llvm::Twine(d));
    e.window *= spec.kernel[d];
    e.inPlane *= spec.in[d];
    e.outPlane *= spec.out[d];
  }
  return e;
}

std::string pooledNote(const PoolSpec &spec, const PoolExtent &e) {
  return std::string(" pooled (") + (spec.max ? "max" : "avg") + " window " +
         std::to_string(e.window) + ")";
}

void writePoolWindow(PrologueWriter &w, const PoolSpec &spec) {
  w.constantBool("kMax", spec.max);
  w.constantArray("kIn", spec.in);
  w.constantArray("kOut", spec.out);
  w.constantArray("kKernel", spec.kernel);
  w.constantArray("kStride", spec.stride);
  w.constantArray("kPad", spec.padding);
  w.constantArray("kDil", spec.dilation);
  w.constantBool("kCountIncludePad", spec.countIncludePad);
}

void writeElement(PrologueWriter &w, const std::optional<PoolSpec> &pooled) {
  constexpr const char *kHead =
      "struct Element {\n  __device__ __forceinline__ float operator()(const float *__restrict__ "
      "x, sinter::i64 i, const sinter::Buffers &b) const {\n    (void)b;\n    ";
  if (!pooled) {
    w.code(std::string(kHead) + "return __ldg(x + i);\n  }\n};");
    return;
  }
  writePoolWindow(w, *pooled);
  w.code("#include \"pool_window.cuh\"");
  w.flatFunctor("PoolLoad", pooled->load);
  w.code(std::string(kHead) + "return sinter::pool::window(x, i, PoolLoad{}, b);\n  }\n};");
}

} // namespace generic

llvm::Expected<KernelSource> emitPool(const PoolSpec &spec) {
  if (llvm::Error err = checkKernelName(spec.kernelName))
    return err;
  const std::string &name = spec.kernelName;
  const char *op = spec.max ? "max_pool" : "avg_pool";
  if (llvm::Error err = checkOutSlot(name, spec.outSlot))
    return err;
  auto ext = checkPool(spec, name);
  if (!ext)
    return ext.takeError();
  const int64_t total = spec.N * spec.C * ext->outPlane;
  const int64_t threads = 256;
  const int64_t blocks = std::min(ceilDiv(total, threads), kMaxStrideBlocks);

  PrologueWriter w(name, "pool.cuh");
  writePoolWindow(w, spec);
  w.constant("kN", spec.N);
  w.constant("kC", spec.C);
  w.constant("kThreads", threads);
  w.constant("kOutSlot", spec.outSlot);
  w.flatFunctor("Load", spec.load);
  w.flatFunctor("Post", spec.post);

  KernelSource ks;
  ks.name = name;
  ks.templateName = "pool.cuh";
  ks.source = w.finish();
  ks.launch.grid = {unsigned(blocks), 1, 1};
  ks.launch.block = {unsigned(threads), 1, 1};
  ks.tileConfig = std::string(op) + " " + std::to_string(spec.spatialDims) +
                  "-D, one thread per output, window " + std::to_string(ext->window);
  ks.flops = double(total) * ext->window;
  ks.bytes = double(spec.N * spec.C) * (ext->inPlane + ext->outPlane) * 4;
  return ks;
}

llvm::Expected<KernelSource> emitChannelStats(const ChannelStatsSpec &spec) {
  if (llvm::Error err = checkKernelName(spec.kernelName))
    return err;
  const std::string &name = spec.kernelName;
  if (spec.N < 1 || spec.C < 1 || spec.L < 1)
    return makeError(name + ": channel statistics over an empty tensor");
  const int64_t planes = spec.N * spec.C;
  if (planes > kMaxGridX)
    return makeError(name + ": " + llvm::Twine(planes) + " planes are too many for one grid");
  const int64_t threads = 256;
  const bool vec4 = spec.L % 4 == 0;
  // Split a plane over blocks until the GPU is full, keeping at least 16 elements a thread.
  int64_t split = std::clamp<int64_t>(
      std::min(ceilDiv(kTargetThreads / threads, planes), ceilDiv(spec.L, threads * 16)), 1, 65535);
  int64_t chunk = ceilDiv(spec.L, split);
  if (vec4)
    chunk = ceilDiv(chunk, 4) * 4;
  split = ceilDiv(spec.L, chunk);

  PrologueWriter w(name, "channel_stats.cuh");
  w.constant("kN", spec.N);
  w.constant("kC", spec.C);
  w.constant("kL", spec.L);
  w.constant("kSplit", split);
  w.constant("kChunk", chunk);
  w.constantBool("kVec4", vec4);
  w.constant("kThreads", threads);
  w.flatFunctor("Load", spec.load);

  KernelSource ks;
  ks.name = name;
  ks.templateName = "channel_stats.cuh";
  ks.source = w.finish();
  ks.launch.grid = {unsigned(planes), unsigned(split), 1};
  ks.launch.block = {unsigned(threads), 1, 1};
  ks.tileConfig = "plane of " + std::to_string(spec.L) + " in " + std::to_string(split) +
                  " blocks" + (vec4 ? ", 16-byte loads" : "");
  ks.flops = double(planes) * spec.L * 3;
  ks.bytes = double(planes) * spec.L * 4 + double(planes) * 16;
  WorkspaceNeed need;
  need.slot = kChannelStatsSlot;
  need.bytes = planes * 16;
  need.init = WorkspaceNeed::Init::Zero;
  need.what = "per-(n,c) sum and sum of squares (double)";
  ks.workspace.push_back(need);
  return ks;
}

} // namespace sinter
