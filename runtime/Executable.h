//===- runtime/Executable.h - a compiled graph, ready to launch --------------------===//
//
// An Executable owns what running a compiled graph needs: one loaded module per kernel, the
// workspace (intermediates, statistics) allocated once, and the plan's steps. run() binds the
// caller's device buffers by name, fills and launches in order on the caller's stream, and
// does not synchronise. runHost() is the convenience path for tools and tests: upload, run,
// download. An Executable comes from cubins just compiled (create) or from a bundle written
// by `sinterc compile` (load, which never calls NVRTC).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Tensor.h"
#include "runtime/Driver.h"
#include "runtime/Nvrtc.h"
#include "runtime/Plan.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace sinter {

/// Device addresses of the graph's inputs, params and outputs, by buffer name.
using Bindings = std::map<std::string, CUdeviceptr>;

class Executable {
public:
  /// Loads `cubins` (parallel to plan.kernels) and allocates the workspace. Needs a GPU.
  static llvm::Expected<std::unique_ptr<Executable>> create(ExecutablePlan plan,
                                                            std::vector<CompiledKernel> cubins);
  /// Loads a bundle directory written by writeBundle (runtime/Bundle.h) for the current GPU.
  static llvm::Expected<std::unique_ptr<Executable>> load(llvm::StringRef dir);

  ~Executable();
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;

  /// Launches the graph on `stream`. Every input, param and output must be bound to an
  /// allocation large enough for it; unknown names are an error too. Does not synchronise.
  llvm::Error run(const Bindings &bindings, CUstream stream = nullptr);

  /// Uploads `tensors` (every input and param, by name), runs, synchronises and returns the
  /// outputs. f32 buffers only.
  llvm::Expected<TensorMap> runHost(const TensorMap &tensors);

  /// Records one run with `bindings` into a CUDA graph (the addresses are baked in) for
  /// replay with launchGraph; a later capture replaces it. Capture needs a stream of its
  /// own, not the legacy default stream.
  llvm::Error captureGraph(const Bindings &bindings, CUstream stream);
  /// Replays the captured graph on `stream`.
  llvm::Error launchGraph(CUstream stream);
  bool hasGraph() const { return graphExec_ != nullptr; }

  /// Runs `iterations` times on a fresh stream after `warmup` runs (with `useGraph`, as one
  /// captured CUDA graph, which replaces any earlier capture); milliseconds per run, one
  /// value per iteration.
  llvm::Expected<std::vector<float>> time(const Bindings &bindings, int iterations, int warmup = 3,
                                          bool useGraph = false);

  const ExecutablePlan &plan() const { return plan_; }
  const std::vector<CompiledKernel> &kernels() const { return cubins_; }
  int64_t workspaceBytes() const { return workspaceBytes_; }

private:
  Executable(GpuContext &gpu, ExecutablePlan plan, std::vector<CompiledKernel> cubins)
      : gpu_(gpu), plan_(std::move(plan)), cubins_(std::move(cubins)) {}
  llvm::Error init();
  /// The address of every buffer for this run, or an error naming the binding at fault.
  llvm::Error resolve(const Bindings &bindings, std::vector<CUdeviceptr> &addr) const;
  /// Enqueues every step on `stream` with buffer addresses `addr`.
  llvm::Error enqueue(llvm::ArrayRef<CUdeviceptr> addr, CUstream stream);

  GpuContext &gpu_;
  ExecutablePlan plan_;
  std::vector<CompiledKernel> cubins_;
  std::vector<CUmodule> modules_;
  std::vector<CUfunction> functions_;
  CUdeviceptr workspace_ = 0;
  int64_t workspaceBytes_ = 0;
  std::vector<int64_t> workspaceOffset_; ///< per buffer; -1 unless allocated workspace
  CUgraphExec graphExec_ = nullptr;
};

} // namespace sinter
