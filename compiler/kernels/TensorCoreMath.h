//===- compiler/kernels/TensorCoreMath.h - math modes of the tensor-core templates --===//
//
// conv_igemm.cuh and gemm.cuh read the math mode as `cfg::kMath` (1: one TF32 product,
// 2: 3xTF32). Both run MathMode::Ffma as 3xTF32: on tensor cores that is faster than FFMA
// and as accurate, so "fp32-accurate" never means "slow" there. Also the shared memory a
// block of these templates may take on sm_90.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"

#include "llvm/Support/ErrorHandling.h"

#include <cstdint>

namespace sinter {

/// The template's kMath constant for `m`.
inline int tensorCoreMathConstant(MathMode m) {
  switch (m) {
  case MathMode::Tf32:
    return 1;
  case MathMode::Ffma:
  case MathMode::Tf32x3:
    return 2;
  }
  llvm_unreachable("unknown math mode");
}

/// Dynamic shared memory a block may take when `blocks` of them share an sm_90 SM (228 KiB,
/// of which the driver reserves 1 KiB a block): 227 KiB for one.
constexpr int64_t sharedPerBlock(int blocks) { return 228 * 1024 / blocks - 1024; }

/// How `m` is computed, for tile descriptions: "tf32" or "3xtf32".
inline const char *tensorCoreMathName(MathMode m) {
  return tensorCoreMathConstant(m) == 1 ? "tf32" : "3xtf32";
}

} // namespace sinter
