//===- runtime/Executable.cpp - loading modules, binding buffers, launching ---------===//
//
// The workspace is one allocation carved into 256-byte aligned pieces, made once at create
// time, so run() allocates nothing and costs only the launches plus one cuMemGetAddressRange
// per binding (which is how a binding too small for its buffer is caught before a kernel
// writes past it).
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Executable.h"

#include "ir/Error.h"
#include "runtime/Bundle.h"

#include <algorithm>

namespace sinter {
namespace {

constexpr int64_t kWorkspaceAlign = 256;

/// The host image of `sinter::Buffers` (templates/common.cuh): 16 device pointers by value.
struct BuffersArg {
  CUdeviceptr p[16];
};
static_assert(sizeof(CUdeviceptr) == sizeof(void *), "Buffers holds device pointers");

/// Makes sinter's context current on the calling thread: modules and functions belong to
/// it, so an Executable may be used from any thread.
llvm::Error bindContext() {
  auto ctx = gpu();
  return ctx ? llvm::Error::success() : ctx.takeError();
}

std::string describe(const BufferSpec &b) {
  return std::string(bufferKindName(b.kind)) + " '" + b.name + "' (" + b.type.str() + ")";
}

} // namespace

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
  if (workspaceBytes_ > 0)
    if (auto err = cuCheck(api.cuMemAlloc(&workspace_, size_t(workspaceBytes_)),
                           "allocating " + formatBytes(uint64_t(workspaceBytes_)) +
                               " workspace for '" + plan_.graphName + "'"))
      return err;
  return llvm::Error::success();
}

Executable::~Executable() {
  const DriverApi &api = gpu_.api;
  llvm::consumeError(bindContext());
  if (graphExec_)
    api.cuGraphExecDestroy(graphExec_);
  if (workspace_)
    api.cuMemFree(workspace_);
  for (CUmodule m : modules_)
    api.cuModuleUnload(m);
}

llvm::Error Executable::resolve(const Bindings &bindings, std::vector<CUdeviceptr> &addr) const {
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
      addr[i] = workspace_ + CUdeviceptr(workspaceOffset_[i]);
      continue;
    }
    auto it = bindings.find(b.name);
    if (it == bindings.end() || it->second == 0)
      return makeError("run: missing binding for " + describe(b));
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
  if (auto err = bindContext())
    return err;
  std::vector<CUdeviceptr> addr;
  if (auto err = resolve(bindings, addr))
    return err;
  return enqueue(addr, stream);
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
      void *params[] = {&arg};
      const LaunchConfig &l = k.launch;
      if (auto err = cuCheck(api.cuLaunchKernel(functions_[st.kernel], l.grid[0], l.grid[1],
                                                l.grid[2], l.block[0], l.block[1], l.block[2],
                                                l.sharedBytes, stream, params, nullptr),
                             "launching kernel '" + k.name + "'"))
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
  // Bindings are checked before capture: the address-range queries are not stream work.
  std::vector<CUdeviceptr> addr;
  if (auto err = resolve(bindings, addr))
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
  if (!graphExec_)
    return makeError("launchGraph: no graph captured for '" + plan_.graphName + "'");
  if (auto err = bindContext())
    return err;
  return cuCheck(gpu_.api.cuGraphLaunch(graphExec_, stream),
                 "launching the CUDA graph of '" + plan_.graphName + "'");
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
