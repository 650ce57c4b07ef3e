//===- compiler/kernels/ConvPhases.h - output phases of a transposed convolution ---===//
//
// A transposed convolution with stride s writes output o = i*s - p + t*dil from input i and
// tap t (per spatial dim). Split the output by phase phi = o mod s: the taps that reach a
// phase are those with (phi + p - t*dil) divisible by s, an arithmetic progression
// t = t0 + s'*j with s' = s / gcd(s, dil); writing o = phi + s*q, the input they read is
// i = q + e - j*dj with e = (phi + p - t0*dil) / s and dj = dil / gcd(s, dil). So each phase
// is a stride-1 transposed convolution over the sub-grid q, with its own taps and offset,
// and no work lands on the zeros that a zero-stuffed input would hold. conv_igemm runs one
// kernel per phase (compiler/kernels/ConvIgemm.cpp); conv_direct does the same split inside
// its thread patches.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/kernels/Specs.h"

#include "llvm/ADT/SmallVector.h"

#include <array>
#include <cstdint>

namespace sinter {

/// One output phase of a transposed convolution, per spatial dim (D, H, W as in ConvSpec):
/// the outputs o = phase + step * q, q < outExtent, receive the taps t = firstTap + tapStep * j,
/// j < taps, each from input i = q + offset - j * dilation where that lies inside the input
/// (and nothing else: an output that no in-range tap reaches gets only the bias).
struct ConvPhase {
  std::array<int64_t, 3> phase{0, 0, 0}, step{1, 1, 1}, outExtent{1, 1, 1};
  std::array<int64_t, 3> taps{1, 1, 1}, firstTap{0, 0, 0}, tapStep{1, 1, 1};
  std::array<int64_t, 3> offset{0, 0, 0}, dilation{1, 1, 1};

  /// Taps of the phase over all dims: its reduction depth per input channel.
  int64_t tapVolume() const { return taps[0] * taps[1] * taps[2]; }
  /// Outputs of the phase per (n, c).
  int64_t outVolume() const { return outExtent[0] * outExtent[1] * outExtent[2]; }
};

/// The output phases of the transposed convolution `s` that hold at least one output, D
/// slowest, W fastest. With stride 1 there is one phase: the whole output, every tap,
/// offset = padding, dilation as given. A phase has taps == 0 in a dim when no tap reaches
/// it (kernel shorter than the stride, or dilation sharing a factor with the stride).
/// Expects positive sizes, strides and dilations.
llvm::SmallVector<ConvPhase, 8> transposedConvPhases(const ConvSpec &s);

/// Whether every output phase of the transposed convolution `s` is reached by a tap (a phase
/// without taps holds only the bias: conv_igemm runs it as one tap of zeros, conv_shift
/// refuses such convolutions, conv_direct computes them as they are).
inline bool everyPhaseHasTaps(const ConvSpec &s) {
  for (const ConvPhase &p : transposedConvPhases(s))
    if (p.tapVolume() == 0)
      return false;
  return true;
}

} // namespace sinter
