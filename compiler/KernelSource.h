//===- compiler/KernelSource.h - a generated kernel and how to launch it -----------===//
//
// What each template's emitter (compiler/kernels/) hands to the rest of the pipeline: the
// complete CUDA source (a short prologue of constants and functors, then an #include of the
// template), the kernel's symbol, its launch configuration, and what each Buffers slot
// holds. Workspace needs (statistics, partial results) are listed so the planner can
// allocate and clear them.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>
#include <string>

namespace sinter {

/// Precision policy (ARCHITECTURE.md, "Precision").
enum class Precision : uint8_t {
  Auto, ///< PyTorch's defaults: convolutions may use TF32, linear/matmul stay fp32-accurate
  Fp32, ///< every op fp32-accurate (FFMA or 3xTF32)
  Tf32, ///< TF32 allowed everywhere
};

/// How a GEMM-like kernel computes its products.
enum class MathMode : uint8_t {
  Ffma,   ///< plain fp32 FMA
  Tf32,   ///< one TF32 tensor-core product (about 1e-3 relative error)
  Tf32x3, ///< 3xTF32 split products: fp32-accurate on tensor cores
};

/// A TMA tensor map the runtime encodes at launch (cuTensorMapEncodeTiled) over the tensor in
/// Buffers slot `slot`: fp32 elements, zeros outside the tensor. The kernel receives the
/// maps, in this order, in its second parameter (`sinter::TensorMaps`, kernel-abi.md).
struct TensorMapSpec {
  int slot = -1;
  unsigned rank = 2;                 ///< 1 .. 5
  std::array<uint64_t, 5> dims{};    ///< elements per dimension, innermost first
  std::array<uint64_t, 4> strides{}; ///< bytes between consecutive indices of dims 1 ..
  std::array<uint32_t, 5> box{};     ///< elements per copy, innermost first
  bool swizzle128 = false;           ///< the 128-byte swizzle (else none)
};

/// One line for tools: "slot 0: dims [8192,1024] box [32,128], 128-byte swizzle" (innermost
/// dim first, as the driver takes them).
inline std::string tensorMapText(const TensorMapSpec &t) {
  std::string dims, box;
  for (unsigned d = 0; d < t.rank && d < t.dims.size(); ++d) {
    dims += (d ? "," : "") + std::to_string(t.dims[d]);
    box += (d ? "," : "") + std::to_string(t.box[d]);
  }
  return "slot " + std::to_string(t.slot) + ": dims [" + dims + "] box [" + box + "]" +
         (t.swizzle128 ? ", 128-byte swizzle" : "");
}

/// At most this many tensor maps per kernel (kernel-abi.md).
constexpr int kMaxTensorMaps = 4;

struct LaunchConfig {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned sharedBytes = 0; ///< dynamic shared memory
  /// The kernel strides over grid[0] units of work with gridDim.x blocks (grid[1], grid[2]
  /// are 1): it is launched with min(grid[0], SM count x persistentPerSm) blocks, at most
  /// persistentPerSm per SM (its register and shared-memory budgets allow that many).
  bool persistent = false;
  unsigned persistentPerSm = 1;
  /// Non-zero: the kernel's blocks wait on each other's work. It strides over grid[0] units
  /// with gridDim.x blocks (grid[1], grid[2] are 1) and is launched cooperatively (every
  /// block resident before any starts) with every block the GPU holds at once (min(grid[0],
  /// blocks per SM x SMs)); it needs at least coResident of them, and the runtime refuses a
  /// GPU that holds fewer.
  unsigned coResident = 0;
  /// Tensor maps passed as the kernel's second parameter; none: a one-parameter kernel.
  llvm::SmallVector<TensorMapSpec, 2> tensorMaps;
};

/// One line for tools: "grid [64,8,1] block [384,1,1] dynamic smem 197728 B" (with
/// "tiles, persistent ..." after a persistent launch's grid). Tensor maps: tensorMapText.
inline std::string launchText(const LaunchConfig &l) {
  auto triple = [](const std::array<unsigned, 3> &v) {
    return "[" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) +
           "]";
  };
  return "grid " + triple(l.grid) +
         (!l.persistent           ? ""
          : l.persistentPerSm > 1 ? " tiles, persistent (at most " +
                                        std::to_string(l.persistentPerSm) + " blocks per SM)"
                                  : " tiles, persistent (at most one block per SM)") +
         " block " + triple(l.block) + " dynamic smem " + std::to_string(l.sharedBytes) + " B" +
         (l.coResident ? ", needs " + std::to_string(l.coResident) + " blocks resident at once"
                       : "");
}

/// A buffer a kernel needs zeroed or filled before it runs (statistics accumulators...).
struct WorkspaceNeed {
  int slot = -1;
  int64_t bytes = 0;
  enum class Init : uint8_t { None, Zero, PlusInf, MinusInf } init = Init::None;
  std::string what; ///< e.g. "per-(n,c) sum and sum of squares (double)"
};

struct KernelSource {
  std::string name;         ///< the extern "C" symbol (SINTER_KERNEL)
  std::string templateName; ///< e.g. "conv_direct.cuh"
  std::string source;       ///< complete CUDA source handed to NVRTC
  LaunchConfig launch;
  std::string tileConfig;   ///< human-readable tile choice, for `sinterc explain`
  double flops = 0;         ///< useful floating-point operations
  double bytes = 0;         ///< fewest bytes this kernel must move through DRAM
  /// Scratch buffers the planner allocates (and initialises) before the launch.
  llvm::SmallVector<WorkspaceNeed, 1> workspace;
};

} // namespace sinter
