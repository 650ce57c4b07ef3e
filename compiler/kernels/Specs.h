//===- compiler/kernels/Specs.h - what the planner asks of the anchor templates ----===//
//
// The planner (compiler/Plan.cpp) describes each anchor kernel it wants with one of these
// structs; the emitters of compiler/kernels/ turn them into KernelSource values (CUDA text
// with every shape baked in). Slots follow docs/kernel-abi.md: conv 0 x, 1 w, 2 bias, 3 y,
// 4 stats, 5 scale/shift, 6 gamma and 7 beta of a norm tail, 8..15 extra epilogue operands;
// gemm 0 A, 1 B, 2 bias, 3 C, 4 row reduction, 6 gamma, 7 beta, 8..15 extra epilogue
// operands.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Emit.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace sinter {

/// The group norm (instance norm: groups == Cout) that follows a convolution's epilogue, when
/// the conv kernel applies it: y = post((v - mean) * rstd * gamma + beta), the moments over
/// each (n, norm group), gamma in slot 6 and beta in slot 7 when affine.
struct ConvNormTail {
  int64_t groups = 1;
  double eps = 1e-5;
  bool affine = true;
  /// The norm's chain, anchor-epilogue form with s = the index within the (n, c) plane.
  FunctorBody post;
};

/// A max or average pool the convolution's kernel runs on its epilogue's values (conv_direct
/// only): windows of `window` elements (D, H, W as ConvSpec's arrays) with stride = window, no
/// padding or dilation, so they tile the output; `out` is the pooled size (ceil_mode may add
/// a last window that the output clips; an average divides by the part inside). Only the
/// pooled tensor [N, Cout, out...] is stored, after `post`.
struct ConvPoolTail {
  bool max = true;
  std::array<int64_t, 3> window{1, 1, 1}, out{1, 1, 1};
  /// The chain after the pool, anchor-epilogue form with s = the index within the pooled
  /// (n, c) plane.
  FunctorBody post;
};

/// A softmax (or log_softmax) over the output channels that the convolution's kernel runs on
/// its epilogue's values (one group: conv_direct with all channels in one thread, or
/// conv_igemm's wgmma input-box engine with all channels in one tile column), followed by
/// `post`, the chain after it (anchor-epilogue form). With a pool tail too (conv_direct
/// only), the pool takes the result.
struct ConvChannelSoftmax {
  bool log = false;
  FunctorBody post;
};

/// A reduction over all output channels that the convolution's kernel runs on its epilogue's
/// values (one group: conv_igemm's wgmma input-box engine with every channel in one tile
/// column, or conv_direct in FFMA with every channel in one thread),
/// followed by `post`, the chain after it (anchor-epilogue form with c = 0 and s the position
/// within the (n) plane). Only the reduced tensor [N, (1,) out...] is stored, to slot 3.
struct ConvChannelReduce {
  using Kind = ReductionKind;
  Kind kind = Kind::Sum;
  FunctorBody post;
};

/// The templates' ChannelFold kind for `k` (common.cuh: 1 sum .. 5 logsumexp).
inline int channelFoldConstant(ReductionKind k) { return int(k) + 1; }

/// A convolution or transposed convolution, 1-, 2- or 3-D. Spatial arrays always have three
/// entries, the real dims at the end: a 2-D conv has in = {1, H, W}, kernel = {1, kH, kW},
/// stride/dilation = {1, ...}, padding = {0, ...}. `out` already includes output_padding.
/// Layouts are PyTorch's: x [N, Cin, in...], conv w [Cout, Cin/groups, k...],
/// conv_transpose w [Cin, Cout/groups, k...], y [N, Cout, out...], bias [Cout].
struct ConvSpec {
  std::string kernelName;
  bool transposed = false;
  unsigned spatialDims = 3;
  int64_t N = 1, Cin = 1, Cout = 1, groups = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, padding{0, 0, 0}, dilation{1, 1, 1};
  bool hasBias = false;
  MathMode math = MathMode::Ffma;
  /// The target has sm_90a's wgmma: emitConvIgemm may choose the Hopper engines
  /// (templates/conv_wgmma.cuh, conv_shift.cuh) for TF32 convolutions.
  bool wgmma = false;
  /// Applied to (accumulator + bias) at each output element (Emit.h: anchor epilogue).
  FunctorBody epilogue;
  /// Write y (slot 3). False when only statistics are wanted (the value is recomputed later).
  bool storeOutput = true;
  /// Accumulate, per (n, c), the sum and the sum of squares of the epilogue's output into
  /// slot 4: double[N * Cout * 2], zeroed by the planner before the launch.
  bool accumulateStats = false;
  /// With accumulateStats: the sums alone are wanted (a reduction over the planes), so a
  /// kernel may leave the sums of squares at zero (conv_igemm does; the others gather both).
  bool sumsOnly = false;
  /// A group norm the kernel finishes itself (conv_mma only): y is normalised in place once
  /// each (n, conv group) is complete. Needs storeOutput and accumulateStats; its groups must
  /// lie within the convolution's. See ConvNormTail.
  std::optional<ConvNormTail> normTail;
  /// A pool of y the kernel runs itself (conv_direct only; storeOutput, no statistics): y
  /// never reaches memory, the pooled tensor goes to slot 3. See ConvPoolTail.
  std::optional<ConvPoolTail> pool;
  /// A softmax over the channels the kernel runs itself (conv_direct only; storeOutput, no
  /// statistics). See ConvChannelSoftmax.
  std::optional<ConvChannelSoftmax> softmax;
  /// A reduction over the channels the kernel runs itself (conv_igemm's wgmma engine or
  /// conv_direct; storeOutput, no statistics, no pool or softmax). See ConvChannelReduce.
  std::optional<ConvChannelReduce> channelReduce;

  /// A stride over 1 in some dim (a transposed one then runs by output phase).
  bool strided() const { return stride[0] > 1 || stride[1] > 1 || stride[2] > 1; }
};

/// Elements of a D x H x W extent (ConvSpec's spatial arrays).
inline int64_t volume(const std::array<int64_t, 3> &extents) {
  return extents[0] * extents[1] * extents[2];
}

/// v rounded up to a multiple of `to` (both positive).
inline int64_t roundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

/// A matrix product C = A * B (+ bias), possibly batched, with an optional row-group
/// normalisation tail and row reduction (the S3 pattern: linear -> group_norm -> min).
/// A is [batch..., M, K] row-major; B is [N, K] (linear weight, bTransposed) or
/// [batch..., K, N]; C is [batch..., M, N]. Batch dims are given with per-operand strides
/// (0 where an operand broadcasts), outermost first, at most 4.
struct GemmSpec {
  std::string kernelName;
  int64_t M = 1, N = 1, K = 1;
  llvm::SmallVector<int64_t, 4> batchShape;                               ///< empty: no batch
  llvm::SmallVector<int64_t, 4> batchStrideA, batchStrideB, batchStrideC; ///< in elements
  bool bTransposed = true;
  bool hasBias = false;
  MathMode math = MathMode::Tf32x3;
  /// The target has sm_90a's wgmma: emitGemm may choose the Hopper engine (templates/wgmma.cuh).
  bool wgmma = false;
  /// Anchor epilogue with n = row (flattened over batch: batchIndex * M + row), c = column,
  /// s = 0. Applied to (accumulator + bias).
  FunctorBody epilogue;
  bool storeOutput = true;

  /// Row-group norm tail: when normGroupCols > 0, each row is split into groups of
  /// normGroupCols consecutive columns, every group is normalised with its own mean and
  /// biased variance (eps inside the sqrt), then scaled by gamma (slot 6) and shifted by beta
  /// (slot 7) when normAffine, then `postNorm` (anchor epilogue form) is applied.
  int64_t normGroupCols = 0;
  double normEps = 1e-5;
  bool normAffine = true;
  FunctorBody postNorm;
  /// Reduce each row of the final values into slot 4 (float per row, batch-flattened),
  /// initialised by the planner (min: +inf, max: -inf, sum and mean: 0). Mean adds each
  /// block's partial sum divided by N.
  enum class RowReduce : uint8_t { None, Min, Max, Sum, Mean } rowReduce = RowReduce::None;
};

} // namespace sinter
