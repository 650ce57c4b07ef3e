//===- compiler/kernels/ConvShift.h - stride-1 convolutions as per-tap GEMMs on wgmma --===//
//
// The emitter of templates/conv_shift.cuh, conv_igemm's first choice on sm_90a for TF32
// convolutions of stride 1 (direct or transposed) with whole 32-channel k tiles and output
// channels that fill 128-channel tiles: the input is staged channels last on a zero-padded grid
// (templates/conv_stage.cuh) so that every tap's operand is a run of consecutive rows that
// one TMA box copies, and the weights are packed as k rows (conv_pack.cuh); the product runs
// on wgmma with both operands read from shared memory, as the GEMM engine does.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Specs.h"

#include "llvm/Support/Error.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace sinter {

/// The slot of the staged input conv_stage.cuh writes and conv_shift.cuh reads (conv
/// kernels read nothing else from it; see kConvPackSlot).
constexpr int kConvStageSlot = 7;

/// Where a convolution's taps read on the staged grid, per spatial dim (D, H, W): tap t of
/// output position o reads input o + off[d] + step[d] * t, and the grid's extents `pitch`
/// make every such read land on its input cell or on a zero (conv_shift.cuh's header).
struct ShiftGrid {
  std::array<int64_t, 3> pitch{}, off{}, step{};
  int64_t rowPitch = 0; ///< floats per grid row: the input channels rounded up to 4
  int64_t rows(const ConvSpec &s) const { return s.N * pitch[0] * pitch[1] * pitch[2]; }
};

/// The grid for `s` (any stride-1 convolution).
ShiftGrid shiftGrid(const ConvSpec &s);

/// A conv_shift tile: kBM output channels (64 or 128: one or two consumer warpgroups) by
/// kBN grid rows (64, 128 or 256), 32-deep k tiles in `stages` stages.
struct ConvShiftTile {
  int bm = 128, bn = 256, stages = 4;
};

/// Whether conv_shift.cuh can compute `s` at all (any tile; whyNot gets the reason when not):
/// strides of 1, at least 32 input channels per group and groups of whole 32-channel k tiles,
/// grid rows within 32-bit coordinates.
bool convShiftSupports(const ConvSpec &s, std::string *whyNot = nullptr);

/// The most stages of `t` that fit shared memory (at most 6).
int maxStages(const ConvShiftTile &t);

/// The tile for `s`, or none when the planner should not pick conv_shift (whyNot gets the
/// reason): no wgmma target, not TF32, not convShiftSupports, input channels padding the k
/// tiles by over a quarter, a reduction (Cin / groups x taps) under 1024 terms, output
/// channels per group filling under 3/4 of 128-channel tiles, or a grid with over half as
/// many rows again as outputs.
std::optional<ConvShiftTile> convShiftTile(const ConvSpec &s, std::string *whyNot = nullptr);

/// The kernels, in launch order, sharing slots: conv_pack.cuh (the weight rows, slot 6),
/// conv_stage.cuh (the staged input, slot 7) and the conv_shift.cuh kernel named
/// s.kernelName (persistent; tensor maps over slots 6 and 7). Slots as conv_igemm's (0 x,
/// 1 w, 2 bias, 3 y, 4 stats). Any spec convShiftSupports accepts runs on any tile (tests
/// force small ones). Fails, naming the kernel, when it does not or the tile breaks the
/// template's rules or shared memory. Without a wgmma target the kernel does not compile.
llvm::Expected<std::vector<KernelSource>> emitConvShift(const ConvSpec &s,
                                                        const ConvShiftTile &tile);

} // namespace sinter
