//===- runtime/Executable.cpp - loading modules, binding buffers, launching ---------===//
//
// A workspace is one allocation carved into 256-byte aligned pieces. The first is made at
// create time, so a program that runs on one stream allocates nothing in run(), which costs
// the launches, one cuMemGetAddressRange per binding (how a binding too small for its buffer
// is caught before a kernel writes past it) and one event record.
//
// Sharing an Executable between threads and streams is safe because no two runs that could
// overlap on the GPU ever use the same workspace. Each workspace remembers the stream its
// last run went to (by the driver's stream id, unique for the life of the process) and an
// event recorded after that run. A run may take a workspace that no thread is enqueueing
// with right now and that either last served the same stream (stream order puts this run
// after that one) or whose event has completed; otherwise it allocates another. So the
// number of workspaces is bounded by how many runs are in flight on different streams at
// once, not by how many runs there are. Modules and functions are read-only after create
// and belong to the primary context, which every thread makes current before use.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Executable.h"

#include "ir/Error.h"
#include "runtime/Bundle.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <functional>
#include <thread>

namespace sinter {
namespace {

constexpr int64_t kWorkspaceAlign = 256;

/// The host image of `sinter::Buffers` (templates/common.cuh): 16 device pointers by value.
struct BuffersArg {
  CUdeviceptr p[16];
};
static_assert(sizeof(CUdeviceptr) == sizeof(void *), "Buffers holds device pointers");

/// The second kernel parameter of kernels with tensor maps (templates/common.cuh's
/// TensorMaps): always kMaxTensorMaps maps, the unused ones zero.
struct TensorMapsArg {
  CUtensorMap m[kMaxTensorMaps];
};
static_assert(sizeof(TensorMapsArg) == 128 * kMaxTensorMaps, "CUtensorMap is 128 bytes");

/// Encodes the tensor maps of kernel `k` over the addresses in `arg`.
llvm::Error encodeTensorMaps(const DriverApi &api, const KernelSpec &k, const BuffersArg &arg,
                             TensorMapsArg &maps) {
  if (!api.cuTensorMapEncodeTiled)
    return makeError("kernel '" + k.name +
                     "' reads through TMA tensor maps, which this CUDA driver cannot encode");
  for (size_t i = 0; i < k.launch.tensorMaps.size(); ++i) {
    const TensorMapSpec &t = k.launch.tensorMaps[i];
    std::array<cuuint32_t, 5> elementStrides{1, 1, 1, 1, 1};
    if (auto err = cuCheck(
            api.cuTensorMapEncodeTiled(
                &maps.m[i], CU_TENSOR_MAP_DATA_TYPE_FLOAT32, t.rank,
                reinterpret_cast<void *>(uintptr_t(arg.p[t.slot])), t.dims.data(), t.strides.data(),
                t.box.data(), elementStrides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
                t.swizzle128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            "encoding tensor map " + std::to_string(i) + " (slot " + std::to_string(t.slot) +
                ") of kernel '" + k.name + "' (the tensor must be 16-byte aligned)"))
      return err;
  }
  return llvm::Error::success();
}

/// Makes sinter's context current on the calling thread: modules and functions belong to
/// it, so an Executable may be used from any thread.
llvm::Error bindContext() {
  auto ctx = gpu();
  return ctx ? llvm::Error::success() : ctx.takeError();
}

std::string describe(const BufferSpec &b) {
  return std::string(bufferKindName(b.kind)) + " '" + b.name + "' (" + b.type.str() + ")";
}

/// `lastStream` of a workspace that no run has used yet.
constexpr uint64_t kNoStream = ~uint64_t(0);

/// An identity for `stream` that two different streams never share. The driver's stream id
/// is unique for the life of the process (a destroyed stream's handle may come back for a
/// new stream; its id does not). Drivers before 12.0 have no ids: the handle stands in, with
/// the per-thread default stream told apart by thread. Not to be asked of a capturing stream.
llvm::Expected<uint64_t> streamKey(const DriverApi &api, CUstream stream) {
  if (api.cuStreamGetId) {
    unsigned long long id = 0;
    if (auto err = cuCheck(api.cuStreamGetId(stream, &id), "reading the id of a stream"))
      return err;
    return uint64_t(id) & ~(uint64_t(1) << 63);
  }
  uint64_t key = uint64_t(reinterpret_cast<uintptr_t>(stream));
  if (stream == CU_STREAM_PER_THREAD)
    key ^= uint64_t(std::hash<std::thread::id>{}(std::this_thread::get_id())) << 8;
  return key | (uint64_t(1) << 63);
}

/// Makes the calling thread's stream-capture mode relaxed while it lives. The driver calls
/// run() makes outside any stream (checking bindings, querying events, allocating a
/// workspace) are safe while some stream is being captured, and must not invalidate a
/// capture that the caller runs in global mode on this or another thread.
class RelaxedCaptureMode {
public:
  explicit RelaxedCaptureMode(const DriverApi &api) : api_(api) {
    if (api_.cuThreadExchangeStreamCaptureMode)
      swapped_ = api_.cuThreadExchangeStreamCaptureMode(&previous_) == CUDA_SUCCESS;
  }
  ~RelaxedCaptureMode() {
    if (swapped_)
      api_.cuThreadExchangeStreamCaptureMode(&previous_);
  }
  RelaxedCaptureMode(const RelaxedCaptureMode &) = delete;
  RelaxedCaptureMode &operator=(const RelaxedCaptureMode &) = delete;

private:
  const DriverApi &api_;
  CUstreamCaptureMode previous_ = CU_STREAM_CAPTURE_MODE_RELAXED;
  bool swapped_ = false;
};

} // namespace

/// One workspace allocation. `busy` is set while a thread resolves bindings and enqueues with
/// it (no other run may take it then); `done` is recorded on the stream after that run's
/// work; `lastStream` is the key of that stream. A workspace whose end could not be recorded
/// is `retired`: nothing tells when its last run finishes, so it is never handed out again.
struct Executable::Workspace {
  CUdeviceptr base = 0;
  CUevent done = nullptr;
  uint64_t lastStream = kNoStream;
  uint64_t pendingStream = kNoStream; ///< the key of the stream the busy run goes to
  bool busy = false;
  bool retired = false;
};

Executable::Executable(GpuContext &gpu, ExecutablePlan plan, std::vector<CompiledKernel> cubins)
    : gpu_(gpu), plan_(std::move(plan)), cubins_(std::move(cubins)) {}

llvm::Expected<std::unique_ptr<Executable>> Executable::create(ExecutablePlan plan,
                                                               std::vector<CompiledKernel> cubins) {
  if (auto err = validatePlan(plan))
    return err;
  if (cubins.size() != plan.kernels.size())
    return makeError("executable '" + plan.graphName + "': " + std::to_string(cubins.size()) +
                     " cubins for " + std::to_string(plan.kernels.size()) + " kernels");
  for (size_t i = 0; i < cubins.size(); ++i)
    if (cubins[i].name != plan.kernels[i].name)
      return makeError("executable '" + plan.graphName + "': cubin " + std::to_string(i) + " is '" +
                       cubins[i].name + "' but the plan launches '" + plan.kernels[i].name + "'");
  auto ctx = gpu();
  if (!ctx)
    return ctx.takeError();
  std::unique_ptr<Executable> exe(new Executable(*ctx, std::move(plan), std::move(cubins)));
  if (auto err = exe->init())
    return err;
  return exe;
}

llvm::Error Executable::init() {
  const DriverApi &api = gpu_.api;
  for (size_t i = 0; i < cubins_.size(); ++i) {
    const CompiledKernel &k = cubins_[i];
    const LaunchConfig &launch = plan_.kernels[i].launch;
    CUmodule module = nullptr;
    if (auto err = cuCheck(api.cuModuleLoadData(&module, k.cubin.data()),
                           "loading the cubin of '" + k.name + "' (built for " + k.arch +
                               ", the GPU is " + gpu_.info.arch + ")"))
      return err;
    modules_.push_back(module);
    CUfunction fn = nullptr;
    if (auto err = cuCheck(api.cuModuleGetFunction(&fn, module, k.name.c_str()),
                           "looking up kernel '" + k.name + "' in its cubin"))
      return err;
    functions_.push_back(fn);
    // Above 48 KiB a kernel must opt in to its dynamic shared memory.
    if (launch.sharedBytes > 48 * 1024) {
      if (int(launch.sharedBytes) > gpu_.info.maxSharedPerBlockOptin)
        return makeError("kernel '" + k.name + "' needs " + std::to_string(launch.sharedBytes) +
                         " bytes of shared memory; the GPU allows " +
                         std::to_string(gpu_.info.maxSharedPerBlockOptin));
      if (auto err =
              cuCheck(api.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             int(launch.sharedBytes)),
                      "allowing " + std::to_string(launch.sharedBytes) +
                          " bytes of dynamic shared memory for '" + k.name + "'"))
        return err;
    }
    residentBlocks_.push_back(0);
    if (launch.coResident > 0) {
      // Its blocks wait on each other's work, so it is launched cooperatively: the driver
      // then starts it only when every block can be resident, even beside other kernels
      // (another stream's, or a second copy of itself).
      if (!gpu_.info.cooperativeLaunch)
        return makeError("kernel '" + k.name + "' needs a cooperative launch (its blocks wait " +
                         "on each other's work); " + gpu_.info.name + " cannot launch one");
      int perSm = 0;
      const unsigned threads = launch.block[0] * launch.block[1] * launch.block[2];
      if (auto err = cuCheck(api.cuOccupancyMaxActiveBlocksPerMultiprocessor(
                                 &perSm, fn, int(threads), size_t(launch.sharedBytes)),
                             "asking how many blocks of '" + k.name + "' an SM holds"))
        return err;
      const int64_t resident = int64_t(perSm) * gpu_.info.smCount;
      if (resident < int64_t(launch.coResident))
        return makeError("kernel '" + k.name + "' needs " + std::to_string(launch.coResident) +
                         " blocks resident at once (its blocks wait on each other's work); " +
                         gpu_.info.name + " holds " + std::to_string(resident) + " (" +
                         std::to_string(perSm) + " per SM x " + std::to_string(gpu_.info.smCount) +
                         " SMs)");
      residentBlocks_.back() = unsigned(resident);
    }
  }
  workspaceOffset_.assign(plan_.buffers.size(), -1);
  for (size_t i = 0; i < plan_.buffers.size(); ++i) {
    const BufferSpec &b = plan_.buffers[i];
    if (b.kind != BufferSpec::Kind::Workspace || b.aliasOf >= 0)
      continue;
    workspaceOffset_[i] = workspaceBytes_;
    workspaceBytes_ +=
        (std::max<int64_t>(b.bytes, 1) + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign;
  }
  // The first workspace now, so that running out of memory shows at create time.
  if (workspaceBytes_ > 0) {
    auto ws = newWorkspace();
    if (!ws)
      return ws.takeError();
    workspaces_.push_back(std::move(*ws));
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Executable::Workspace>> Executable::newWorkspace() {
  const DriverApi &api = gpu_.api;
  auto ws = std::make_unique<Workspace>();
  if (auto err = cuCheck(api.cuMemAlloc(&ws->base, size_t(workspaceBytes_)),
                         "allocating " + formatBytes(uint64_t(workspaceBytes_)) +
                             " workspace for '" + plan_.graphName + "'"))
    return err;
  if (auto err = cuCheck(api.cuEventCreate(&ws->done, CU_EVENT_DISABLE_TIMING),
                         "creating an event for a workspace of '" + plan_.graphName + "'")) {
    api.cuMemFree(ws->base);
    return err;
  }
  return ws;
}

Executable::~Executable() {
  const DriverApi &api = gpu_.api;
  llvm::consumeError(bindContext());
  if (graphExec_)
    api.cuGraphExecDestroy(graphExec_);
  auto destroy = [&](Workspace &ws) {
    // Work still queued with this workspace finishes before its memory goes back.
    api.cuEventSynchronize(ws.done);
    api.cuEventDestroy(ws.done);
    api.cuMemFree(ws.base);
  };
  if (graphWorkspace_)
    destroy(*graphWorkspace_);
  for (auto &ws : workspaces_)
    destroy(*ws);
  for (CUmodule m : modules_)
    api.cuModuleUnload(m);
}

bool Executable::hasGraph() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return graphExec_ != nullptr;
}

size_t Executable::workspaceCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return workspaces_.size() + (graphWorkspace_ ? 1 : 0);
}

llvm::Expected<Executable::Workspace *> Executable::acquireWorkspace(CUstream stream) {
  const DriverApi &api = gpu_.api;
  auto key = streamKey(api, stream);
  if (!key)
    return key.takeError();
  std::lock_guard<std::mutex> lock(mutex_);
  Workspace *pick = nullptr;
  // Same stream first: stream order already puts this run after the workspace's last one.
  for (auto &ws : workspaces_)
    if (!ws->busy && !ws->retired && ws->lastStream == *key) {
      pick = ws.get();
      break;
    }
  // Else any workspace whose last run has finished on the GPU.
  for (size_t i = 0; !pick && i < workspaces_.size(); ++i) {
    Workspace &ws = *workspaces_[i];
    if (ws.busy || ws.retired)
      continue;
    CUresult finished = api.cuEventQuery(ws.done);
    if (finished == CUDA_SUCCESS)
      pick = &ws;
    else if (finished != CUDA_ERROR_NOT_READY)
      return cuCheck(finished,
                     "checking whether an earlier run of '" + plan_.graphName + "' has finished");
  }
  if (!pick) {
    auto ws = newWorkspace();
    if (!ws)
      return ws.takeError();
    workspaces_.push_back(std::move(*ws));
    pick = workspaces_.back().get();
  }
  pick->busy = true;
  pick->pendingStream = *key;
  return pick;
}

llvm::Error Executable::releaseWorkspace(Workspace &ws, CUstream stream, bool enqueued) {
  llvm::Error recorded = llvm::Error::success();
  // Still busy, so no other thread touches the event while it is recorded. Even a run that
  // failed half-way may have queued work that uses the workspace.
  if (enqueued)
    recorded = cuCheck(gpu_.api.cuEventRecord(ws.done, stream),
                       "recording the end of a run of '" + plan_.graphName + "'");
  std::lock_guard<std::mutex> lock(mutex_);
  ws.busy = false;
  if (recorded)
    ws.retired = true;
  else if (enqueued)
    ws.lastStream = ws.pendingStream;
  return recorded;
}

llvm::Error Executable::resolve(const Bindings &bindings, CUdeviceptr workspace,
                                std::vector<CUdeviceptr> &addr) const {
  const DriverApi &api = gpu_.api;
  size_t n = plan_.buffers.size();
  addr.assign(n, 0);
  for (const auto &[name, ptr] : bindings) {
    auto it = std::find_if(plan_.buffers.begin(), plan_.buffers.end(), [&](const BufferSpec &b) {
      return b.name == name && b.kind != BufferSpec::Kind::Workspace && b.aliasOf < 0;
    });
    if (it == plan_.buffers.end())
      return makeError("run: '" + plan_.graphName + "' has no input, param or output named '" +
                       name + "'");
  }
  for (size_t i = 0; i < n; ++i) {
    const BufferSpec &b = plan_.buffers[i];
    if (b.aliasOf >= 0)
      continue;
    if (b.kind == BufferSpec::Kind::Workspace) {
      addr[i] = workspace + CUdeviceptr(workspaceOffset_[i]);
      continue;
    }
    auto it = bindings.find(b.name);
    if (it == bindings.end() || it->second == 0)
      return makeError("run: missing binding for " + describe(b));
    // Kernels read and write tensors 16 bytes at a time (float4 loads and stores, 16-byte
    // cp.async of weight rows and GEMM tiles); a misaligned address would fault on the GPU.
    if (it->second % kBindingAlignment != 0)
      return makeError("run: binding for " + describe(b) + " is not " +
                       std::to_string(kBindingAlignment) + "-byte aligned (" + "0x" +
                       llvm::utohexstr(uint64_t(it->second), /*LowerCase=*/true) + ")");
    CUdeviceptr base = 0;
    size_t size = 0;
    if (auto err = cuCheck(api.cuMemGetAddressRange(&base, &size, it->second),
                           "checking the binding for " + describe(b)))
      return err;
    uint64_t room = uint64_t(base + size - it->second);
    if (room < uint64_t(b.bytes))
      return makeError("run: binding for " + describe(b) + " has room for " + std::to_string(room) +
                       " bytes, needs " + std::to_string(b.bytes));
    addr[i] = it->second;
  }
  // Views take the address of what they view (validatePlan ruled out cycles).
  for (size_t i = 0; i < n; ++i) {
    int at = int(i);
    while (plan_.buffers[at].aliasOf >= 0)
      at = plan_.buffers[at].aliasOf;
    addr[i] = addr[at];
  }
  return llvm::Error::success();
}

llvm::Error Executable::run(const Bindings &bindings, CUstream stream) {
  const DriverApi &api = gpu_.api;
  if (auto err = bindContext())
    return err;
  RelaxedCaptureMode relaxed(api);
  std::vector<CUdeviceptr> addr;
  // Nothing is shared between runs without a workspace.
  if (workspaceBytes_ == 0) {
    if (auto err = resolve(bindings, 0, addr))
      return err;
    return enqueue(addr, stream);
  }
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (auto err = cuCheck(api.cuStreamIsCapturing(stream, &capture),
                         "asking whether the stream of a run of '" + plan_.graphName +
                             "' is being captured"))
    return err;
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return runCaptured(bindings, stream);
  auto ws = acquireWorkspace(stream);
  if (!ws)
    return ws.takeError();
  if (auto err = resolve(bindings, (*ws)->base, addr)) {
    llvm::consumeError(releaseWorkspace(**ws, stream, /*enqueued=*/false));
    return err;
  }
  llvm::Error enqueued = enqueue(addr, stream);
  return llvm::joinErrors(std::move(enqueued), releaseWorkspace(**ws, stream, /*enqueued=*/true));
}

llvm::Error Executable::runCaptured(const Bindings &bindings, CUstream stream) {
  const DriverApi &api = gpu_.api;
  // A workspace of the Executable's would be baked into the caller's graph and shared by
  // every replay of it with every later run; a stream-ordered allocation inside the capture
  // belongs to the graph instead.
  if (!api.cuMemAllocAsync || !api.cuMemFreeAsync)
    return makeError("run: capturing '" + plan_.graphName +
                     "' into a CUDA graph needs cuMemAllocAsync, which this CUDA driver lacks "
                     "(use captureGraph)");
  CUdeviceptr workspace = 0;
  if (auto err = cuCheck(api.cuMemAllocAsync(&workspace, size_t(workspaceBytes_), stream),
                         "allocating " + formatBytes(uint64_t(workspaceBytes_)) +
                             " workspace for '" + plan_.graphName + "' inside a stream capture"))
    return err;
  std::vector<CUdeviceptr> addr;
  llvm::Error result = resolve(bindings, workspace, addr);
  if (!result)
    result = enqueue(addr, stream);
  return llvm::joinErrors(
      std::move(result),
      cuCheck(api.cuMemFreeAsync(workspace, stream),
              "freeing the workspace of '" + plan_.graphName + "' inside a stream capture"));
}

llvm::Error Executable::enqueue(llvm::ArrayRef<CUdeviceptr> addr, CUstream stream) {
  const DriverApi &api = gpu_.api;
  for (const Step &st : plan_.steps) {
    switch (st.kind) {
    case Step::Kind::Fill: {
      const BufferSpec &b = plan_.buffers[st.buffer];
      if (auto err = cuCheck(
              api.cuMemsetD32Async(addr[st.buffer], st.fillWord, size_t(b.bytes / 4), stream),
              "filling " + describe(b)))
        return err;
      break;
    }
    case Step::Kind::Launch: {
      const KernelSpec &k = plan_.kernels[st.kernel];
      BuffersArg arg{};
      for (size_t s = 0; s < st.slots.size(); ++s)
        arg.p[s] = st.slots[s] >= 0 ? addr[st.slots[s]] : 0;
      TensorMapsArg maps{};
      void *params[] = {&arg, &maps};
      const LaunchConfig &l = k.launch;
      if (!l.tensorMaps.empty())
        if (auto err = encodeTensorMaps(api, k, arg, maps))
          return err;
      const unsigned blocks =
          l.coResident   ? std::min(l.grid[0], residentBlocks_[st.kernel])
          : l.persistent ? std::min<unsigned>(l.grid[0], unsigned(std::max(gpu_.info.smCount, 1)) *
                                                             l.persistentPerSm)
                         : l.grid[0];
      CUresult launched =
          l.coResident
              ? api.cuLaunchCooperativeKernel(functions_[st.kernel], blocks, l.grid[1], l.grid[2],
                                              l.block[0], l.block[1], l.block[2], l.sharedBytes,
                                              stream, params)
              : api.cuLaunchKernel(functions_[st.kernel], blocks, l.grid[1], l.grid[2], l.block[0],
                                   l.block[1], l.block[2], l.sharedBytes, stream, params, nullptr);
      if (auto err = cuCheck(
              launched, (l.coResident ? "launching cooperative kernel '" : "launching kernel '") +
                            k.name + "'"))
        return err;
      break;
    }
    }
  }
  return llvm::Error::success();
}

llvm::Error Executable::captureGraph(const Bindings &bindings, CUstream stream) {
  const DriverApi &api = gpu_.api;
  if (auto err = bindContext())
    return err;
  if (!api.cuStreamBeginCapture || !api.cuStreamEndCapture || !api.cuGraphInstantiate ||
      !api.cuGraphLaunch || !api.cuGraphExecDestroy || !api.cuGraphDestroy)
    return makeError("captureGraph: this CUDA driver cannot capture graphs");
  if (!stream)
    return makeError("captureGraph: '" + plan_.graphName +
                     "' needs a stream of its own, not the default stream");
  std::lock_guard<std::mutex> lock(mutex_);
  if (workspaceBytes_ > 0 && !graphWorkspace_) {
    auto ws = newWorkspace();
    if (!ws)
      return ws.takeError();
    graphWorkspace_ = std::move(*ws);
  }
  // Bindings are checked before capture: the address-range queries are not stream work.
  std::vector<CUdeviceptr> addr;
  if (auto err = resolve(bindings, graphWorkspace_ ? graphWorkspace_->base : 0, addr))
    return err;
  std::string what = "capturing '" + plan_.graphName + "' as a CUDA graph";
  if (auto err = cuCheck(api.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_RELAXED), what))
    return err;
  llvm::Error enqueued = enqueue(addr, stream);
  CUgraph graph = nullptr;
  // End the capture whatever happened, so the stream is usable again.
  CUresult ended = api.cuStreamEndCapture(stream, &graph);
  if (enqueued) {
    if (graph)
      api.cuGraphDestroy(graph);
    return enqueued;
  }
  if (auto err = cuCheck(ended, what))
    return err;
  CUgraphExec exec = nullptr;
  CUresult made = api.cuGraphInstantiate(&exec, graph, 0);
  api.cuGraphDestroy(graph);
  if (auto err = cuCheck(made, "instantiating the CUDA graph of '" + plan_.graphName + "'"))
    return err;
  if (graphExec_)
    api.cuGraphExecDestroy(graphExec_);
  graphExec_ = exec;
  return llvm::Error::success();
}

llvm::Error Executable::launchGraph(CUstream stream) {
  const DriverApi &api = gpu_.api;
  if (auto err = bindContext())
    return err;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!graphExec_)
    return makeError("launchGraph: no graph captured for '" + plan_.graphName + "'");
  if (!graphWorkspace_)
    return cuCheck(api.cuGraphLaunch(graphExec_, stream),
                   "launching the CUDA graph of '" + plan_.graphName + "'");
  // Replays of one graph are ordered by the driver, but a graph captured again is another
  // one on the same workspace: each replay waits for the last, whatever graph it was.
  if (auto err = cuCheck(api.cuStreamWaitEvent(stream, graphWorkspace_->done, 0),
                         "ordering a replay of '" + plan_.graphName + "' after the last"))
    return err;
  if (auto err = cuCheck(api.cuGraphLaunch(graphExec_, stream),
                         "launching the CUDA graph of '" + plan_.graphName + "'"))
    return err;
  return cuCheck(api.cuEventRecord(graphWorkspace_->done, stream),
                 "recording the end of a replay of '" + plan_.graphName + "'");
}

namespace {

/// Device memory freed on every path out of runHost.
struct DeviceAllocs {
  const DriverApi &api;
  std::vector<CUdeviceptr> ptrs;
  ~DeviceAllocs() {
    for (CUdeviceptr p : ptrs)
      api.cuMemFree(p);
  }
};

struct StreamGuard {
  const DriverApi &api;
  CUstream stream = nullptr;
  ~StreamGuard() {
    if (stream)
      api.cuStreamDestroy(stream);
  }
};

} // namespace

llvm::Expected<TensorMap> Executable::runHost(const TensorMap &tensors) {
  const DriverApi &api = gpu_.api;
  if (auto err = bindContext())
    return err;
  for (const auto &[name, t] : tensors) {
    bool known = llvm::any_of(plan_.buffers, [&](const BufferSpec &b) {
      return b.name == name && b.aliasOf < 0 &&
             (b.kind == BufferSpec::Kind::Input || b.kind == BufferSpec::Kind::Param);
    });
    if (!known)
      return makeError("runHost: '" + plan_.graphName + "' has no input or param named '" + name +
                       "'");
  }
  DeviceAllocs allocs{api, {}};
  Bindings bindings;
  for (const BufferSpec &b : plan_.buffers) {
    if (b.kind == BufferSpec::Kind::Workspace || b.aliasOf >= 0)
      continue;
    if (b.type.dtype != DType::F32)
      return makeError("runHost: " + describe(b) + " is not f32");
    CUdeviceptr p = 0;
    if (auto err = cuCheck(api.cuMemAlloc(&p, size_t(std::max<int64_t>(b.bytes, 4))),
                           "allocating " + formatBytes(uint64_t(b.bytes)) + " for " + describe(b)))
      return err;
    allocs.ptrs.push_back(p);
    bindings[b.name] = p;
    if (b.kind == BufferSpec::Kind::Output)
      continue;
    auto it = tensors.find(b.name);
    if (it == tensors.end())
      return makeError("runHost: missing tensor for " + describe(b));
    const HostTensor &t = it->second;
    if (int64_t(t.data.size()) * 4 != b.bytes)
      return makeError("runHost: tensor for " + describe(b) + " has " +
                       std::to_string(t.data.size()) + " elements, expected " +
                       std::to_string(b.bytes / 4));
    if (auto err = cuCheck(api.cuMemcpyHtoD(p, t.data.data(), size_t(b.bytes)),
                           "uploading " + describe(b)))
      return err;
  }
  StreamGuard stream{api, nullptr};
  if (auto err =
          cuCheck(api.cuStreamCreate(&stream.stream, CU_STREAM_NON_BLOCKING), "creating a stream"))
    return err;
  if (auto err = run(bindings, stream.stream)) {
    // Work already queued may still use the buffers that are about to be freed.
    api.cuStreamSynchronize(stream.stream);
    return err;
  }
  if (auto err =
          cuCheck(api.cuStreamSynchronize(stream.stream), "running '" + plan_.graphName + "'"))
    return err;
  TensorMap out;
  for (const BufferSpec &b : plan_.buffers) {
    if (b.kind != BufferSpec::Kind::Output || b.aliasOf >= 0)
      continue;
    HostTensor t(b.type.shape);
    if (auto err = cuCheck(api.cuMemcpyDtoH(t.data.data(), bindings[b.name], size_t(b.bytes)),
                           "downloading " + describe(b)))
      return err;
    out[b.name] = std::move(t);
  }
  return out;
}

llvm::Expected<std::vector<float>> Executable::time(const Bindings &bindings, int iterations,
                                                    int warmup, bool useGraph) {
  const DriverApi &api = gpu_.api;
  if (auto err = bindContext())
    return err;
  StreamGuard stream{api, nullptr};
  if (auto err =
          cuCheck(api.cuStreamCreate(&stream.stream, CU_STREAM_NON_BLOCKING), "creating a stream"))
    return err;
  CUevent start = nullptr, stop = nullptr;
  if (auto err = cuCheck(api.cuEventCreate(&start, CU_EVENT_DEFAULT), "creating an event"))
    return err;
  if (auto err = cuCheck(api.cuEventCreate(&stop, CU_EVENT_DEFAULT), "creating an event")) {
    api.cuEventDestroy(start);
    return err;
  }
  auto once = [&]() -> llvm::Error {
    return useGraph ? launchGraph(stream.stream) : run(bindings, stream.stream);
  };
  auto body = [&]() -> llvm::Expected<std::vector<float>> {
    if (useGraph)
      if (auto err = captureGraph(bindings, stream.stream))
        return err;
    for (int i = 0; i < warmup; ++i)
      if (auto err = once())
        return err;
    std::vector<float> ms;
    for (int i = 0; i < iterations; ++i) {
      if (auto err = cuCheck(api.cuEventRecord(start, stream.stream), "recording an event"))
        return err;
      if (auto err = once())
        return err;
      if (auto err = cuCheck(api.cuEventRecord(stop, stream.stream), "recording an event"))
        return err;
      if (auto err = cuCheck(api.cuEventSynchronize(stop), "running '" + plan_.graphName + "'"))
        return err;
      float t = 0;
      if (auto err = cuCheck(api.elapsedTime(&t, start, stop), "reading the event timer"))
        return err;
      ms.push_back(t);
    }
    return ms;
  };
  auto result = body();
  api.cuEventDestroy(start);
  api.cuEventDestroy(stop);
  return result;
}

llvm::Expected<std::unique_ptr<Executable>> Executable::load(llvm::StringRef dir) {
  auto ctx = gpu();
  if (!ctx)
    return ctx.takeError();
  auto bundle = readBundle(dir, ctx->info.arch);
  if (!bundle)
    return bundle.takeError();
  return create(std::move(bundle->plan), std::move(bundle->cubins));
}

} // namespace sinter
