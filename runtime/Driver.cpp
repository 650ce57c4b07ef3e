//===- runtime/Driver.cpp - dlopen of libcuda, checked calls, the GPU context -------===//
//
// The driver library is opened once, on first use, under a std::call_once; the result (the
// entry points or the reason they are missing) is kept for the life of the process, so a
// machine without a driver pays for the failed dlopen once and every later call gets the same
// error. The context is device 0's primary context: it is what the CUDA runtime (and so
// PyTorch) uses too, which lets buffers allocated there be bound to a sinter Executable.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Driver.h"

#include "ir/Error.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

#include <mutex>
#include <optional>

namespace sinter {
namespace {

#define SINTER_STRINGIFY_(x) #x
// Expands the <cuda.h> macro first, so cuMemAlloc becomes "cuMemAlloc_v2".
#define SINTER_SYMBOL_NAME(x) SINTER_STRINGIFY_(x)

struct DriverState {
  std::once_flag once;
  DriverApi api;
  std::string error; ///< empty when the driver loaded
};

DriverState &driverState() {
  static DriverState state;
  return state;
}

std::string loadDriver(DriverApi &api) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    return std::string("no CUDA driver: cannot load libcuda.so.1 (") +
           (why ? why : "unknown reason") + ")";
  }
  std::string missing;
#define SINTER_RESOLVE_REQUIRED(name)                                                              \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, SINTER_SYMBOL_NAME(name)));           \
  if (!api.name)                                                                                   \
    missing += std::string(missing.empty() ? "" : ", ") + SINTER_SYMBOL_NAME(name);
  SINTER_CUDA_REQUIRED_FUNCTIONS(SINTER_RESOLVE_REQUIRED)
#undef SINTER_RESOLVE_REQUIRED
#define SINTER_RESOLVE_OPTIONAL(name)                                                              \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, SINTER_SYMBOL_NAME(name)));
  SINTER_CUDA_OPTIONAL_FUNCTIONS(SINTER_RESOLVE_OPTIONAL)
#undef SINTER_RESOLVE_OPTIONAL
  api.cuEventElapsedTimeV1 =
      reinterpret_cast<decltype(api.cuEventElapsedTimeV1)>(dlsym(lib, "cuEventElapsedTime"));
  if (!missing.empty())
    return "no CUDA driver: libcuda.so.1 is too old (missing " + missing + ")";
  if (!api.cuEventElapsedTime && !api.cuEventElapsedTimeV1)
    return "no CUDA driver: libcuda.so.1 is too old (missing cuEventElapsedTime)";
  CUresult init = api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char *name = nullptr;
    api.cuGetErrorName(init, &name);
    return std::string("no CUDA driver: cuInit failed with ") + (name ? name : "an unknown error");
  }
  return {};
}

} // namespace

CUresult DriverApi::elapsedTime(float *ms, CUevent start, CUevent end) const {
  if (cuEventElapsedTime)
    return cuEventElapsedTime(ms, start, end);
  return cuEventElapsedTimeV1(ms, start, end);
}

llvm::Expected<const DriverApi &> driver() {
  DriverState &state = driverState();
  std::call_once(state.once, [&] { state.error = loadDriver(state.api); });
  if (!state.error.empty())
    return makeError(state.error);
  return state.api;
}

llvm::Error cuCheck(CUresult result, const llvm::Twine &what) {
  if (result == CUDA_SUCCESS)
    return llvm::Error::success();
  const char *name = nullptr, *text = nullptr;
  // cuCheck is only reached with a result from a driver call, so the driver is loaded; the
  // guard keeps a misuse from crashing.
  DriverState &state = driverState();
  if (state.error.empty() && state.api.cuGetErrorName) {
    state.api.cuGetErrorName(result, &name);
    state.api.cuGetErrorString(result, &text);
  }
  std::string code = name ? name : ("CUresult " + std::to_string(int(result)));
  std::string detail = text ? std::string(" (") + text + ")" : "";
  return makeError("cuda error " + code + detail + " while " + what);
}

std::string archForCapability(int major, int minor) {
  if (major == 9 && minor == 0)
    return "sm_90a";
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string formatBytes(uint64_t bytes) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (bytes >= (1ull << 30))
    os << llvm::format("%.1f GiB", double(bytes) / double(1ull << 30));
  else if (bytes >= (1ull << 20))
    os << llvm::format("%.1f MiB", double(bytes) / double(1ull << 20));
  else if (bytes >= (1ull << 10))
    os << llvm::format("%.1f KiB", double(bytes) / double(1ull << 10));
  else
    os << bytes << " B";
  return os.str();
}

namespace {

struct GpuState {
  std::once_flag once;
  std::optional<GpuContext> ctx;
  std::string error;
};

GpuState &gpuState() {
  static GpuState state;
  return state;
}

llvm::Error createContext(const DriverApi &api, std::optional<GpuContext> &out) {
  int count = 0;
  if (auto err = cuCheck(api.cuDeviceGetCount(&count), "counting devices"))
    return err;
  if (count == 0)
    return makeError("no CUDA device: the driver reports no GPU");
  GpuContext ctx{api, 0, nullptr, {}};
  if (auto err = cuCheck(api.cuDeviceGet(&ctx.device, 0), "getting device 0"))
    return err;
  if (auto err = cuCheck(api.cuDevicePrimaryCtxRetain(&ctx.context, ctx.device),
                         "retaining the primary context of device 0"))
    return err;
  DeviceInfo &info = ctx.info;
  char name[256] = {};
  if (auto err = cuCheck(api.cuDeviceGetName(name, sizeof(name) - 1, ctx.device),
                         "reading the name of device 0"))
    return err;
  info.name = name;
  struct {
    CUdevice_attribute attr;
    int *dst;
    const char *what;
  } attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.ccMajor, "compute capability"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.ccMinor, "compute capability"},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.smCount, "SM count"},
      {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &info.l2Bytes, "L2 size"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info.maxSharedPerBlockOptin,
       "opt-in shared memory per block"},
      {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &info.cooperativeLaunch,
       "cooperative launch support"},
  };
  for (auto &a : attrs)
    if (auto err = cuCheck(api.cuDeviceGetAttribute(a.dst, a.attr, ctx.device),
                           llvm::Twine("reading the ") + a.what + " of device 0"))
      return err;
  size_t total = 0;
  if (auto err = cuCheck(api.cuDeviceTotalMem(&total, ctx.device), "reading device memory size"))
    return err;
  info.totalMemBytes = int64_t(total);
  if (auto err = cuCheck(api.cuDriverGetVersion(&info.driverVersion), "reading driver version"))
    return err;
  info.arch = archForCapability(info.ccMajor, info.ccMinor);
  out.emplace(ctx);
  return llvm::Error::success();
}

} // namespace

llvm::Expected<GpuContext &> gpu() {
  GpuState &state = gpuState();
  std::call_once(state.once, [&] {
    auto api = driver();
    if (!api) {
      state.error = llvm::toString(api.takeError());
      return;
    }
    if (auto err = createContext(*api, state.ctx))
      state.error = llvm::toString(std::move(err));
  });
  if (!state.error.empty())
    return makeError(state.error);
  // A context is current per thread, and other libraries on this thread may have made
  // another one current since; asking the driver is a thread-local read.
  GpuContext &ctx = *state.ctx;
  CUcontext current = nullptr;
  if (ctx.api.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != ctx.context)
    if (auto err = cuCheck(ctx.api.cuCtxSetCurrent(ctx.context), "making the context current"))
      return err;
  return ctx;
}

bool gpuAvailable() {
  auto ctx = gpu();
  if (!ctx) {
    llvm::consumeError(ctx.takeError());
    return false;
  }
  return true;
}

} // namespace sinter
