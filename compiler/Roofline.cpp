//===- compiler/Roofline.cpp - datasheet peaks and roofline floors --------------------===//
//
// The arch table behind `sinterc explain`'s floor column (see Roofline.h). Numbers are the
// vendors' published dense peaks for the named part.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Roofline.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

namespace sinter {

std::optional<ArchPeaks> archPeaks(llvm::StringRef arch) {
  constexpr double G = 1e9, T = 1e12;
  if (arch == "sm_80")
    return ArchPeaks{arch.str(), "A100 SXM", 2039 * G, 19.5 * T, 156 * T};
  if (arch == "sm_86")
    return ArchPeaks{arch.str(), "RTX 3090", 936 * G, 35.6 * T, 35.6 * T};
  if (arch == "sm_89")
    return ArchPeaks{arch.str(), "L40S", 864 * G, 91.6 * T, 183 * T};
  if (arch == "sm_90" || arch == "sm_90a")
    return ArchPeaks{arch.str(), "H100 SXM", 3350 * G, 67 * T, 495 * T};
  return std::nullopt;
}

double mathRate(const ArchPeaks &peaks, MathMode math) {
  switch (math) {
  case MathMode::Ffma:
    return peaks.fp32FlopsPerSecond;
  case MathMode::Tf32:
    return peaks.tf32FlopsPerSecond;
  case MathMode::Tf32x3:
    return peaks.tf32FlopsPerSecond / 3;
  }
  llvm_unreachable("unknown math mode");
}

RooflineFloor rooflineFloor(const ArchPeaks &peaks, MathMode math, double flops, double bytes) {
  double compute = flops / mathRate(peaks, math);
  double memory = bytes / peaks.dramBytesPerSecond;
  return {std::max(compute, memory), memory >= compute};
}

llvm::StringRef mathModeName(MathMode math) {
  switch (math) {
  case MathMode::Ffma:
    return "ffma";
  case MathMode::Tf32:
    return "tf32";
  case MathMode::Tf32x3:
    return "3xtf32";
  }
  llvm_unreachable("unknown math mode");
}

} // namespace sinter
