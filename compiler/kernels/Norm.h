//===- compiler/kernels/Norm.h - kernels that finish a fused normalisation ---------===//
//
// A norm tail (group, instance norm) fused after an anchor leaves the anchor's epilogue
// accumulating, per (n, c), the sum and the sum of squares of the tensor to normalise
// (slot 4: double[N * C * 2], over the L spatial elements of the (n, c) plane). These
// emitters write the light kernels that finish the job from those statistics:
//   - emitNormApply: y = post((x - mean) * rstd * gamma + beta) over the whole tensor;
//   - emitNormScaleShift: the per-(n, c) affine map {scale, shift} for anchors that recompute
//     their output and normalise it in their own epilogue;
//   - emitNormReduce: the mean or sum of the normalised tensor over its spatial dims (and
//     over C), from the statistics alone: the normalised tensor is never formed; or the same
//     of an anchor's own output, whose plane sums its epilogue gathered.
// Instance norm is group norm with groups = C. Group moments come from the double sums:
// mean = S / cnt, var = Q / cnt - mean^2 (biased), rstd = 1 / sqrt(var + eps).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Emit.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace sinter {

/// A group normalisation of a tensor [N, C, L...] whose per-(n, c) statistics are in slot 4.
struct NormSpec {
  std::string kernelName;
  int64_t N = 1, C = 1;
  int64_t L = 1;      ///< elements per (n, c) plane (product of the spatial dims)
  int64_t groups = 1; ///< C for instance norm
  double eps = 1e-5;
  bool affine = true; ///< gamma in slot 6, beta in slot 7 (float[C] each)
  /// Applied to each normalised element, in the anchor-epilogue form of Emit.h:
  /// v, n, c and s = the flat index within the (n, c) plane. Must be the identity for
  /// emitNormScaleShift; emitNormReduce applies it to each output as a flat functor.
  FunctorBody post;
};

/// y[n,c,l] = post((x[n,c,l] - mean[n,g]) * rstd[n,g] * gamma[c] + beta[c]); x slot 0,
/// y slot 3 (may alias x). Large planes: grid (plane chunks, C, N); planes smaller than a
/// block's share of work: several consecutive planes a block. Each block derives its (n, c)
/// scale and shift from the statistics as it starts, so no separate finalize launch is needed.
llvm::Expected<KernelSource> emitNormApply(const NormSpec &s);

/// Writes float2 {scale, shift} per (n, c) into slot 5 (float2[N * C]) so that
/// normalised = v * scale + shift. One thread per (n, c).
llvm::Expected<KernelSource> emitNormScaleShift(const NormSpec &s);

/// The mean (or sum, when !mean) over the spatial dims, and over C too when overChannels,
/// into slot 3 (float[N * C], or float[N] when overChannels), then s.post as a flat functor
/// at the output's index (its tensors from slot 8 on). normalised: of the normalised tensor,
/// from m[n,c] = gamma[c] * (S[n,c] / L - mean[n,g]) * rstd[n,g] + beta[c]; otherwise of the
/// values whose sums slot 4 holds (m[n,c] = S[n,c] / L; groups, eps and affine unused). One
/// block per n.
llvm::Expected<KernelSource> emitNormReduce(const NormSpec &s, bool overChannels, bool mean,
                                            bool normalised);

} // namespace sinter
