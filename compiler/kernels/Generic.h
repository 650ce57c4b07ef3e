//===- compiler/kernels/Generic.h - standalone kernels no fusion pattern takes -----===//
//
// The planner describes every group that no anchor pattern absorbs with one of these specs:
// elementwise chains, reductions, softmax, pools, and standalone normalisations (one kernel
// holding each row in registers, or a per-row statistics pass and an apply pass). The emitters turn
// a spec into a KernelSource (CUDA text with every shape baked in, launch configuration, workspace)
// for the templates elementwise.cuh, reduce.cuh, softmax.cuh, pool.cuh, channel_stats.cuh,
// row_norm.cuh and row_apply.cuh.
// Slots (docs/kernel-abi.md): the input is slot 0, the output slot `outSlot` (3 unless the
// planner says otherwise); functors may read extra operands from slots 8..15. A spec that no
// kernel can run (empty tensors, dims out of range, a window larger than the padded input)
// gives an llvm::Error naming the kernel.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Emit.h"
#include "ir/Type.h"

#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace sinter {

struct Op;

/// out[i] = Compute{}(i, b) for every i < numel, into slot outSlot. `computeBody` is the body
/// of the compute functor (Emit.h): statements reading `i` and `b` and ending in a return; it
/// reads its inputs itself, broadcasting included. Stores 16 bytes at a time when numel % 4 ==
/// 0, so the output slot must then be 16-byte aligned.
struct ElementwiseSpec {
  std::string kernelName;
  int64_t numel = 0;
  int outSlot = 3;
  std::string computeBody;
};

/// Max or average pooling of x [N, C, in...] (slot 0) into [N, C, out...] (slot outSlot). The
/// spatial arrays have three entries with the real dims last, as in ConvSpec (a 1-D pool has
/// in = {1, 1, W}, kernel {1, 1, k}, stride {1, 1, s}, padding {0, 0, p}). ceil_mode is
/// already folded into `out`. Average pooling has no dilation (all ones).
struct PoolSpec {
  std::string kernelName;
  bool max = true;
  unsigned spatialDims = 2;
  int64_t N = 1, C = 1;
  std::array<int64_t, 3> in{1, 1, 1}, out{1, 1, 1}, kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1}, padding{0, 0, 0}, dilation{1, 1, 1};
  bool countIncludePad = true;
  FunctorBody load, post;
  int outSlot = 3;
};

/// Reduces the sorted, distinct, non-negative `dims` of an input of shape `inShape` (slot 0)
/// into slot outSlot, whose layout is the input's with those dims removed (or kept as size 1:
/// the same memory). Load is applied to every input element (flat input index), Post to every
/// result (flat output index). Mean divides by the number of reduced elements.
/// When the kernel splits each output's range over several blocks it needs workspace slot 5
/// (listed in KernelSource::workspace, zeroed before the first launch; the kernel leaves it
/// ready for the next one).
/// With `pooled`, the reduced tensor is that pool's result and is never in memory: slot 0 is
/// the pool's input, inShape the pool's output [N, C, out...], and each element is computed
/// from its window (pooled->load applied to the window's input elements, then Load to the
/// pooled value) as the reduction folds it. pooled's kernelName, post and outSlot are unused.
struct ReduceSpec {
  using Kind = ReductionKind;
  std::string kernelName;
  Shape inShape;
  llvm::SmallVector<int64_t, 6> dims;
  Kind kind = Kind::Sum;
  FunctorBody load, post;
  int outSlot = 3;
  std::optional<PoolSpec> pooled;
};

/// softmax (or log_softmax when `log`) of slot 0, of shape `shape`, along the non-negative
/// `dim`, into slot outSlot (same shape). Load must be pure: it is applied in both passes.
struct SoftmaxSpec {
  std::string kernelName;
  Shape shape;
  int64_t dim = 0;
  bool log = false;
  FunctorBody load, post;
  int outSlot = 3;
};

/// Per-(n, c) sum and sum of squares (double) of Load(x), x [N, C, L] in slot 0, added into
/// slot 4: double[N * C * 2], {sum, sum of squares} per plane, zeroed before the launch (listed
/// in KernelSource::workspace).
struct ChannelStatsSpec {
  std::string kernelName;
  int64_t N = 1, C = 1, L = 1;
  FunctorBody load;
};

/// A normalisation of rows: slot 0 viewed as [rows, width], each row normalised with its own
/// mean and biased variance (eps inside the square root); when `affine`, element w of row r is
/// then scaled by gamma (slot 6) and shifted by beta (slot 7) at the affine index
/// ((r % affineGroups) * width + w) / affineDiv; Post is applied to each result (flat index),
/// written to slot outSlot. Load is applied to each input element (flat index).
///   layer norm over the last dims:  rows = numel / width, affineGroups = affineDiv = 1;
///   group norm of [N, C, L...]:     rows = N * groups, width = C / groups * L,
///                                   affineGroups = groups, affineDiv = L (instance: groups = C).
struct RowNormSpec {
  std::string kernelName;
  int64_t rows = 1, width = 1;
  int64_t affineGroups = 1, affineDiv = 1;
  double eps = 1e-5;
  bool affine = true;
  FunctorBody load, post;
  int outSlot = 3;
  /// As in ReduceSpec: the rows are this pool's result, computed from its windows over slot 0
  /// as a row is loaded (each pooled element once). Resident kernels only.
  std::optional<PoolSpec> pooled;
};

/// The rows of a layer, group or instance norm `norm` of a tensor of type `input` (contiguous):
/// rows, width, affine groups and divisor, eps and whether it has gamma and beta.
RowNormSpec rowNormGeometry(const Op &norm, const TensorType &input);

/// How a RowNormSpec is computed.
enum class RowNormMode : uint8_t {
  Resident, ///< one kernel (row_norm.cuh): a team holds each row in registers
  Split,    ///< per-row statistics split over blocks (channel_stats.cuh), then row_apply.cuh
};

/// The decomposition the geometry asks for: Resident when a row fits in the registers of at
/// most 1024 threads and there are rows enough to fill the GPU (or rows short enough that
/// few blocks still finish fast); Split otherwise.
RowNormMode chooseRowNorm(const RowNormSpec &spec);

llvm::Expected<KernelSource> emitElementwise(const ElementwiseSpec &spec);
llvm::Expected<KernelSource> emitReduce(const ReduceSpec &spec);
llvm::Expected<KernelSource> emitSoftmax(const SoftmaxSpec &spec);
llvm::Expected<KernelSource> emitPool(const PoolSpec &spec);
llvm::Expected<KernelSource> emitChannelStats(const ChannelStatsSpec &spec);
/// The Resident kernel of a row norm (row_norm.cuh); an error when rows are too long for it.
llvm::Expected<KernelSource> emitRowNorm(const RowNormSpec &spec);
/// The second kernel of a Split row norm (row_apply.cuh). Its statistics come from
/// emitChannelStats with N = rows, C = 1, L = width and the same Load functor (slot 4).
llvm::Expected<KernelSource> emitRowApply(const RowNormSpec &spec);

/// The workspace slot of a split reduction.
constexpr int kReduceWorkSlot = 5;
/// The statistics slot of the channel statistics pass.
constexpr int kChannelStatsSlot = 4;

} // namespace sinter
