//===- compiler/kernels/ConvPhases.cpp - output phases of a transposed convolution -===//
//
// The per-dimension phase split of ConvPhases.h and its product over D, H and W.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvPhases.h"

#include <cassert>
#include <numeric>

namespace sinter {
namespace {

/// One phase of one spatial dim.
struct DimPhase {
  int64_t phase = 0, outExtent = 1, taps = 1, firstTap = 0, tapStep = 1, offset = 0, dilation = 1;
};

int64_t floorMod(int64_t a, int64_t b) { return ((a % b) + b) % b; }

/// The phases phi < min(stride, out) of one dim, which are exactly those with outputs.
llvm::SmallVector<DimPhase, 4> dimPhases(int64_t out, int64_t kernel, int64_t stride,
                                         int64_t padding, int64_t dilation) {
  assert(out >= 1 && kernel >= 1 && stride >= 1 && dilation >= 1 && "checked by the caller");
  const int64_t g = std::gcd(stride, dilation);
  llvm::SmallVector<DimPhase, 4> r;
  for (int64_t phi = 0; phi < stride && phi < out; ++phi) {
    DimPhase d;
    d.phase = phi;
    d.outExtent = (out - phi + stride - 1) / stride;
    d.tapStep = stride / g;
    d.dilation = dilation / g;
    d.taps = 0;
    // t * dilation mod stride repeats with period stride / g, so the first tap reaching phi,
    // if any, is below that.
    for (int64_t t = 0; t < kernel && t < d.tapStep; ++t) {
      if (floorMod(phi + padding - t * dilation, stride) != 0)
        continue;
      d.firstTap = t;
      d.taps = (kernel - 1 - t) / d.tapStep + 1;
      d.offset = (phi + padding - t * dilation) / stride; // exact, also when negative
      break;
    }
    r.push_back(d);
  }
  return r;
}

} // namespace

llvm::SmallVector<ConvPhase, 8> transposedConvPhases(const ConvSpec &s) {
  assert(s.transposed && "phases are a transposed-convolution notion");
  std::array<llvm::SmallVector<DimPhase, 4>, 3> dims;
  for (int d = 0; d < 3; ++d)
    dims[d] = dimPhases(s.out[d], s.kernel[d], s.stride[d], s.padding[d], s.dilation[d]);
  llvm::SmallVector<ConvPhase, 8> phases;
  for (const DimPhase &pd : dims[0])
    for (const DimPhase &ph : dims[1])
      for (const DimPhase &pw : dims[2]) {
        ConvPhase p;
        const DimPhase *per[3] = {&pd, &ph, &pw};
        for (int d = 0; d < 3; ++d) {
          p.phase[d] = per[d]->phase;
          p.step[d] = s.stride[d];
          p.outExtent[d] = per[d]->outExtent;
          p.taps[d] = per[d]->taps;
          p.firstTap[d] = per[d]->firstTap;
          p.tapStep[d] = per[d]->tapStep;
          p.offset[d] = per[d]->offset;
          p.dilation[d] = per[d]->dilation;
        }
        phases.push_back(p);
      }
  return phases;
}

} // namespace sinter
