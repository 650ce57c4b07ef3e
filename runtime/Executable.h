//===- runtime/Executable.h - a compiled graph, ready to launch --------------------===//
//
// An Executable owns what running a compiled graph needs: one loaded module per kernel, the
// workspace for intermediates and statistics, and the plan's steps. run() binds the caller's
// device buffers by name, fills and launches in order on the caller's stream, and does not
// synchronise. runHost() is the convenience path for tools and tests: upload, run, download.
// An Executable comes from cubins just compiled (create) or from a bundle written by
// `sinterc compile` (load, which never calls NVRTC).
//
// Threads: run(), runHost(), time(), captureGraph() and launchGraph() may be called on one
// Executable from several threads at once, on the same stream or on different ones. Runs
// that may overlap on the GPU get different workspaces (see Executable.cpp), so their
// intermediates never mix; the caller still owns the bindings, and two runs that overlap
// must not write the same output buffers. Destroying an Executable while another thread
// uses it, or while its work is still queued, is not allowed.
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
#include <mutex>
#include <string>
#include <vector>

namespace sinter {

/// Device addresses of the graph's inputs, params and outputs, by buffer name. Each must be
/// kBindingAlignment-byte aligned (cudaMalloc, cuMemAlloc and PyTorch's allocator give 256)
/// and point into an allocation with room for the whole tensor.
using Bindings = std::map<std::string, CUdeviceptr>;

/// The alignment run() requires of every binding: kernels move tensors 16 bytes at a time.
constexpr uint64_t kBindingAlignment = 16;

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
  /// Safe to call from several threads at once (see the file comment). Inside a stream
  /// capture of the caller's, the workspace is allocated and freed by the captured graph
  /// itself (cuMemAllocAsync), so every replay of that graph has its own.
  llvm::Error run(const Bindings &bindings, CUstream stream = nullptr);

  /// Uploads `tensors` (every input and param, by name), runs, synchronises and returns the
  /// outputs. f32 buffers only.
  llvm::Expected<TensorMap> runHost(const TensorMap &tensors);

  /// Records one run with `bindings` into a CUDA graph (the addresses are baked in) for
  /// replay with launchGraph; a later capture replaces it. Capture needs a stream of its
  /// own, not the legacy default stream. The graph has a workspace of its own.
  llvm::Error captureGraph(const Bindings &bindings, CUstream stream);
  /// Replays the captured graph on `stream`. Replays never overlap one another, whichever
  /// streams they are launched on: each waits for the one before (they share one workspace).
  llvm::Error launchGraph(CUstream stream);
  bool hasGraph() const;

  /// Runs `iterations` times on a fresh stream after `warmup` runs (with `useGraph`, as one
  /// captured CUDA graph, which replaces any earlier capture); milliseconds per run, one
  /// value per iteration.
  llvm::Expected<std::vector<float>> time(const Bindings &bindings, int iterations, int warmup = 3,
                                          bool useGraph = false);

  const ExecutablePlan &plan() const { return plan_; }
  const std::vector<CompiledKernel> &kernels() const { return cubins_; }
  /// Bytes of one workspace.
  int64_t workspaceBytes() const { return workspaceBytes_; }
  /// Workspaces allocated so far: one at create time, one more for each run that could
  /// overlap every existing one on the GPU, and one for a captured graph. Runs on one stream
  /// reuse one workspace; runs on N streams at once need at most N.
  size_t workspaceCount() const;

private:
  /// One device allocation of workspaceBytes() and what last used it (Executable.cpp).
  struct Workspace;

  Executable(GpuContext &gpu, ExecutablePlan plan, std::vector<CompiledKernel> cubins);
  llvm::Error init();
  /// A new workspace (device memory and its event), not yet in any list.
  llvm::Expected<std::unique_ptr<Workspace>> newWorkspace();
  /// A workspace no other run can be using by the time `stream` reaches this run's work,
  /// marked busy; allocates one when none is free.
  llvm::Expected<Workspace *> acquireWorkspace(CUstream stream);
  /// Marks `ws` free again. When the run `enqueued` work, first records on `stream` where
  /// that work ends.
  llvm::Error releaseWorkspace(Workspace &ws, CUstream stream, bool enqueued);
  /// run() on a stream the caller is capturing into a CUDA graph.
  llvm::Error runCaptured(const Bindings &bindings, CUstream stream);
  /// The address of every buffer for this run (workspace buffers inside `workspace`), or an
  /// error naming the binding at fault.
  llvm::Error resolve(const Bindings &bindings, CUdeviceptr workspace,
                      std::vector<CUdeviceptr> &addr) const;
  /// Enqueues every step on `stream` with buffer addresses `addr`.
  llvm::Error enqueue(llvm::ArrayRef<CUdeviceptr> addr, CUstream stream);

  GpuContext &gpu_;
  ExecutablePlan plan_;
  std::vector<CompiledKernel> cubins_;
  std::vector<CUmodule> modules_;
  std::vector<CUfunction> functions_;
  /// Per kernel, the blocks the GPU holds at once (launches with LaunchConfig::coResident).
  std::vector<unsigned> residentBlocks_;
  int64_t workspaceBytes_ = 0;
  std::vector<int64_t> workspaceOffset_; ///< per buffer; -1 unless allocated workspace

  mutable std::mutex mutex_;                           ///< guards everything below
  std::vector<std::unique_ptr<Workspace>> workspaces_; ///< for run(); never shrinks
  std::unique_ptr<Workspace> graphWorkspace_;          ///< for the captured graph
  CUgraphExec graphExec_ = nullptr;
};

} // namespace sinter
