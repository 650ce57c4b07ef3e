//===- runtime/Plan.h - what the compiler hands the runtime: buffers, kernels, steps -===//
//
// An ExecutablePlan is the whole compiled graph in data form: the buffers (graph inputs,
// params and outputs, which the caller binds, and workspace, which the Executable allocates),
// the kernels, and the steps run in order: fill a buffer with a 32-bit pattern, or launch a
// kernel with its Buffers slots taken from the buffer list. It is what the compiler's plan
// pass produces, what Executable runs, and what a bundle's manifest.json stores.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "ir/Type.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/ErrorHandling.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sinter {

/// 32-bit fill patterns for Step::Kind::Fill.
constexpr uint32_t kFillZero = 0;
constexpr uint32_t kFillPlusInf = 0x7f800000u;  ///< +inf as f32
constexpr uint32_t kFillMinusInf = 0xff800000u; ///< -inf as f32

struct BufferSpec {
  std::string name;
  /// Inputs, params and outputs are bound by the caller; workspace is allocated once by the
  /// Executable.
  enum class Kind { Input, Param, Output, Workspace } kind = Kind::Workspace;
  TensorType type;
  int64_t bytes = 0;
  /// When >= 0, this buffer is a view (reshape) of buffer `aliasOf`: it is neither bound nor
  /// allocated and its address is that of the buffer it views.
  int aliasOf = -1;
};

struct KernelSpec {
  std::string name;     ///< the kernel symbol, also the cubin's name in a bundle
  std::string cacheKey; ///< the kernel cache key its cubin was stored under (may be empty)
  std::string templateName;
  LaunchConfig launch;
  std::string group; ///< fusion group label
  double flops = 0, bytes = 0;
};

struct Step {
  enum class Kind { Launch, Fill } kind = Kind::Launch;
  int kernel = -1;                  ///< Launch: index into ExecutablePlan::kernels
  llvm::SmallVector<int, 16> slots; ///< Launch: buffer index per Buffers slot, -1 = null
  int buffer = -1;                  ///< Fill: the buffer filled (its whole size)
  uint32_t fillWord = 0;            ///< Fill: 32-bit pattern (kFillZero, kFillPlusInf, ...)
};

struct ExecutablePlan {
  std::string graphName, arch, precision;
  std::vector<BufferSpec> buffers;
  std::vector<KernelSpec> kernels;
  std::vector<Step> steps;
};

/// Checks that every index in `plan` is in range (kernels, buffers, slots, aliases without
/// cycles) and that fills cover whole 32-bit words: a plan read from a bundle is input.
llvm::Error validatePlan(const ExecutablePlan &plan);

/// "input", "param", "output" or "workspace".
inline const char *bufferKindName(BufferSpec::Kind k) {
  switch (k) {
  case BufferSpec::Kind::Input:
    return "input";
  case BufferSpec::Kind::Param:
    return "param";
  case BufferSpec::Kind::Output:
    return "output";
  case BufferSpec::Kind::Workspace:
    return "workspace";
  }
  llvm_unreachable("unknown buffer kind");
}

} // namespace sinter
