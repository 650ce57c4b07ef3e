//===- compiler/Roofline.h - what the target GPU can do at best ----------------------===//
//
// `sinterc explain` tells, for every kernel, the fastest it could possibly run on the target:
// its roofline floor, the larger of its FLOPs over the arithmetic rate of the unit its math
// mode uses and its bytes over DRAM bandwidth. This file holds the small table of datasheet
// peaks per arch the floor is computed from (one representative part per arch: A100 SXM for
// sm_80, RTX 3090 for sm_86, L40S for sm_89, H100 SXM for sm_90/sm_90a). Datasheet peaks
// are upper bounds, so the floor is a lower bound a kernel can approach but never beat.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace sinter {

/// Datasheet peaks of one arch's representative part.
struct ArchPeaks {
  std::string arch;          ///< e.g. "sm_90a"
  std::string part;          ///< e.g. "H100 SXM"
  double dramBytesPerSecond; ///< peak DRAM bandwidth
  double fp32FlopsPerSecond; ///< FFMA (CUDA cores)
  double tf32FlopsPerSecond; ///< dense TF32 tensor-core products
};

/// The peaks for `arch` (sm_80, sm_86, sm_89, sm_90, sm_90a), or nullopt for another arch.
std::optional<ArchPeaks> archPeaks(llvm::StringRef arch);

/// The FLOP rate a kernel computing in `math` reaches at best: FFMA at the fp32 rate, one
/// TF32 product at the TF32 rate, 3xTF32 at a third of it (three products per FMA).
double mathRate(const ArchPeaks &peaks, MathMode math);

/// The lower bound on a kernel's time.
struct RooflineFloor {
  double seconds = 0;
  bool memoryBound = false; ///< the bytes term is the larger one
};

RooflineFloor rooflineFloor(const ArchPeaks &peaks, MathMode math, double flops, double bytes);

/// "ffma", "tf32" or "3xtf32".
llvm::StringRef mathModeName(MathMode math);

} // namespace sinter
