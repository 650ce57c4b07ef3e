//===- runtime/Driver.h - the CUDA driver, loaded with dlopen ----------------------===//
//
// sinter never links libcuda: the tools and the library must start (and compile kernels with
// NVRTC) on machines without a GPU driver. The driver is opened with dlopen on first use and
// the functions sinter needs are resolved by their versioned symbol names, exactly as
// <cuda.h> maps them (cuMemAlloc -> cuMemAlloc_v2, ...); the header is used for types only.
// Every driver call goes through cuCheck, which turns a CUresult into an llvm::Error naming
// the error and what was being done. gpu() lazily creates the context on device 0 (its
// primary context) and describes the device.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cuda.h>

#include <cstdint>
#include <string>

namespace sinter {

// The driver functions sinter calls. Each entry names the function as <cuda.h> spells it;
// the header's macros turn that into the versioned symbol, which is what dlsym looks up.
#define SINTER_CUDA_REQUIRED_FUNCTIONS(X)                                                          \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuGetErrorName)                                                                                \
  X(cuGetErrorString)                                                                              \
  X(cuDeviceGet)                                                                                   \
  X(cuDeviceGetCount)                                                                              \
  X(cuDeviceGetAttribute)                                                                          \
  X(cuDeviceGetName)                                                                               \
  X(cuDeviceTotalMem)                                                                              \
  X(cuDevicePrimaryCtxRetain)                                                                      \
  X(cuCtxGetCurrent)                                                                               \
  X(cuCtxSetCurrent)                                                                               \
  X(cuCtxSynchronize)                                                                              \
  X(cuModuleLoadData)                                                                              \
  X(cuModuleUnload)                                                                                \
  X(cuModuleGetFunction)                                                                           \
  X(cuFuncSetAttribute)                                                                            \
  X(cuFuncGetAttribute)                                                                            \
  X(cuLaunchKernel)                                                                                \
  X(cuLaunchCooperativeKernel)                                                                     \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                                   \
  X(cuMemAlloc)                                                                                    \
  X(cuMemFree)                                                                                     \
  X(cuMemGetAddressRange)                                                                          \
  X(cuMemcpyHtoD)                                                                                  \
  X(cuMemcpyDtoH)                                                                                  \
  X(cuMemcpyHtoDAsync)                                                                             \
  X(cuMemcpyDtoHAsync)                                                                             \
  X(cuMemsetD32Async)                                                                              \
  X(cuStreamCreate)                                                                                \
  X(cuStreamSynchronize)                                                                           \
  X(cuStreamDestroy)                                                                               \
  X(cuStreamWaitEvent)                                                                             \
  X(cuStreamIsCapturing)                                                                           \
  X(cuEventCreate)                                                                                 \
  X(cuEventRecord)                                                                                 \
  X(cuEventQuery)                                                                                  \
  X(cuEventSynchronize)                                                                            \
  X(cuEventDestroy)

// Functions sinter can do without (CUDA graphs, the newer event timer, stream ids and
// stream-ordered allocation): null when the driver lacks them.
#define SINTER_CUDA_OPTIONAL_FUNCTIONS(X)                                                          \
  X(cuEventElapsedTime)                                                                            \
  X(cuStreamGetId)                                                                                 \
  X(cuThreadExchangeStreamCaptureMode)                                                             \
  X(cuMemAllocAsync)                                                                               \
  X(cuMemFreeAsync)                                                                                \
  X(cuStreamBeginCapture)                                                                          \
  X(cuStreamEndCapture)                                                                            \
  X(cuGraphInstantiate)                                                                            \
  X(cuGraphLaunch)                                                                                 \
  X(cuGraphExecDestroy)                                                                            \
  X(cuGraphDestroy)                                                                                \
  X(cuTensorMapEncodeTiled)

/// The resolved driver entry points. Call them as `api.cuMemAlloc(...)`.
struct DriverApi {
#define SINTER_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  SINTER_CUDA_REQUIRED_FUNCTIONS(SINTER_CUDA_MEMBER)
  SINTER_CUDA_OPTIONAL_FUNCTIONS(SINTER_CUDA_MEMBER)
#undef SINTER_CUDA_MEMBER
  /// The legacy (pre-12.8) event timer, used when cuEventElapsedTime_v2 is missing.
  CUresult (*cuEventElapsedTimeV1)(float *, CUevent, CUevent) = nullptr;

  /// Milliseconds between two recorded events, through whichever timer the driver has.
  CUresult elapsedTime(float *ms, CUevent start, CUevent end) const;
};

/// The driver's entry points, loading libcuda.so.1 and calling cuInit on first use. Fails
/// with `no CUDA driver: cannot load libcuda.so.1 (...)` where there is none.
llvm::Expected<const DriverApi &> driver();

/// Turns `result` into an llvm::Error: `cuda error CUDA_ERROR_OUT_OF_MEMORY (out of memory)
/// while <what>`. Success gives llvm::Error::success().
llvm::Error cuCheck(CUresult result, const llvm::Twine &what);

/// What sinter needs to know about a device.
struct DeviceInfo {
  std::string name;             ///< e.g. "NVIDIA H100 80GB HBM3"
  int ccMajor = 0, ccMinor = 0; ///< compute capability
  std::string arch;             ///< NVRTC target: "sm_90a" for 9.0, else "sm_XY"
  int smCount = 0;
  int l2Bytes = 0;
  int maxSharedPerBlockOptin = 0; ///< bytes of dynamic shared memory a kernel may opt in to
  int cooperativeLaunch = 0;      ///< non-zero: cuLaunchCooperativeKernel works on it
  int64_t totalMemBytes = 0;
  int driverVersion = 0; ///< e.g. 13000
};

/// The NVRTC arch sinter targets by default for a compute capability: Hopper (9.0) gets
/// "sm_90a" so that wgmma and friends are available; anything else "sm_<major><minor>".
std::string archForCapability(int major, int minor);

/// Device 0 with its primary context, current on the thread that asked.
struct GpuContext {
  const DriverApi &api;
  CUdevice device = 0;
  CUcontext context = nullptr;
  DeviceInfo info;
};

/// The GPU context (created on first use; later calls make it current on the calling thread).
llvm::Expected<GpuContext &> gpu();

/// True when a driver loads and a device is usable. Never fails; the reason for `false` is
/// consumed (call gpu() to see it).
bool gpuAvailable();

/// `1.2 GiB`, `384 KiB`, `12 B`: for messages.
std::string formatBytes(uint64_t bytes);

} // namespace sinter
