//===- compiler/kernels/ConvShift.h - stride-1 convolutions as per-tap GEMMs on wgmma --===//
//
// The emitter of templates/conv_shift.cuh, conv_igemm's first choice on sm_90a for TF32
// convolutions of stride 1 (direct or transposed) with whole 32-channel k tiles where the
// input-box engine's boxes would be large (convShiftTile): the input is staged channels last
// on a zero-padded grid (templates/conv_stage.cuh) so that every tap's operand is a run of
// consecutive rows that one TMA box copies, and the weights are packed as k rows
// (conv_pack.cuh); the product runs on wgmma with both operands read from shared memory, as
// the GEMM engine does.
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
/// grid position p reads input p + off[d] + step[d] * t, and the grid's extents `pitch`
/// make every such read land on its input cell or on a zero (conv_shift.cuh's header).
/// Without phases grid position p is output p; along a dim of a transposed convolution with
/// stride S > 1, it stands for the S outputs S * p + phi + base[d] (phi < S), `taps` being
/// the (K - 1) * dil / S + 1 taps all phases share.
struct ShiftGrid {
  std::array<int64_t, 3> pitch{}, off{}, step{};
  std::array<int64_t, 3> taps{1, 1, 1};   ///< taps per dim
  std::array<int64_t, 3> phases{1, 1, 1}; ///< outputs per grid position (the stride, or 1)
  std::array<int64_t, 3> base{0, 0, 0};   ///< output of grid position 0, phase 0
  std::array<int64_t, 3> extent{1, 1, 1}; ///< grid positions with outputs
  int64_t rowPitch = 0; ///< floats per grid row: the input channels rounded up to 4
  int64_t rows(const ConvSpec &s) const { return s.N * pitch[0] * pitch[1] * pitch[2]; }
  bool phased() const { return phases[0] * phases[1] * phases[2] > 1; }
};

/// The grid for `s` (a stride-1 convolution, or a transposed one of any stride).
ShiftGrid shiftGrid(const ConvSpec &s);

/// How conv_shift lays out the product rows of `s` (conv_shift.cuh's header): a k group is
/// one channel group, or with small groups (8 or 16 input channels) the 32 / (Cin / groups)
/// groups whose channels make one 32-channel k tile; a group's rows are its output channels
/// times the grid's phases.
struct ShiftRows {
  int64_t groupsPerK = 1, kGroups = 1, cinK = 1, rowsG = 1, rowsK = 1;
};
ShiftRows shiftRows(const ConvSpec &s, const ShiftGrid &g);

/// A conv_shift tile: kBM product rows (64, 128 or 256: one, two or four consumer
/// warpgroups) by kBN grid rows (64, 128 or 256; at most 128 with 256 product rows), 32-deep k
/// tiles in `stages` stages. With the weights copied by TMA (not ShiftMode::registerA),
/// `wRun` W taps share a stage: one box of bn + 8 grid rows and their wRun weight boxes
/// (1, or ShiftMode::wTaps); with the weights in registers ShiftMode::wRun decides.
struct ConvShiftTile {
  int bm = 128, bn = 256, stages = 4, wRun = 1;
};

/// Whether conv_shift.cuh can compute `s` at all (whyNot gets the reason when not): strides
/// of 1 or a transposed convolution (walked by output phase), groups of whole 32-channel k
/// tiles or of 8 or 16 input channels whose product rows fill 64-row slices (a group's rows
/// a multiple or a divisor of 64, a k group's a multiple of 64), grid rows within 32-bit
/// coordinates. Small groups also need tiles whose rows divide a k group's.
bool convShiftSupports(const ConvSpec &s, std::string *whyNot = nullptr);

/// How conv_shift.cuh runs `s` beyond its tile: registerA, the consumers hold their weights
/// in registers (small groups with at most 8 k8 fragments a thread: no weight box per k
/// tile); stagedLines, the epilogue goes through shared memory and stores whole output lines
/// (the phase walk, where a fragment's stores would hit every S-th output of 8 rows).
struct ShiftMode {
  bool registerA = false, stagedLines = false;
  /// Taps along W whose B rows can come from one box of kBN + 8 rows (their first rows lie
  /// within 8): kW, or 1.
  int wTaps = 1;
  /// Taps along W whose B rows come from one box (conv_shift.cuh's kWRun) with the weights in
  /// registers: wTaps from 8 taps a tile on, else 1.
  int wRun = 1;
};
ShiftMode shiftMode(const ConvSpec &s);

/// Threads of a block of tile t: bm / 64 consumer warpgroups, then with `storers` as many
/// storing warpgroups and a producer warpgroup, else a producer warp.
int64_t blockThreads(const ConvShiftTile &t, int storers);

/// Registers a consumer thread of tile t holds across its k loop: accumulators, and with
/// registerA its weight fragments.
int64_t consumerRegisters(const ConvSpec &s, const ConvShiftTile &t);

/// Registers a thread of each role: without storing warpgroups every thread gets the launch
/// bounds' share of the 64K register file (`consumer`); with them setmaxnreg splits the file
/// between the producer warpgroup, the storers (by the length of the lines they store) and the
/// consumers (the rest).
struct ShiftRegisters {
  int64_t producer = 0, storer = 0, consumer = 0;
};
ShiftRegisters shiftRegisters(const ConvSpec &s, const ConvShiftTile &t, int storers);

/// Whether consumerRegisters leave ~32 for the rest of a consumer's share.
bool registersFit(const ConvSpec &s, const ConvShiftTile &t, int storers);

/// How many storing warpgroups tile t of `s` gets (0: none, each consumer stores its own lines
/// after its k loop): with staged lines, one when the lines are plain stores (no epilogue
/// math, no statistics), else one per consumer warpgroup, where the block stays within 1024
/// threads and the consumers' registers fit their setmaxnreg share. A storer stores the
/// lines of its consumers' slices of tile i while they multiply tile i + 1.
int storeWarpgroups(const ConvSpec &s, const ConvShiftTile &t);

/// The most stages of `t` that fit shared memory for `s` (at most 6; 16 with the weights in
/// registers); 1 or 0 where not even two fit (the emitter refuses such tiles).
int maxStages(const ConvSpec &s, const ConvShiftTile &t);

/// The tile conv_shift runs `s` on when the planner's rules are not asked (tests and the
/// harness): 128 x 256 for the stride-1 walk, 128 x 128 for the phase walk, 256 x 64 for
/// small groups with their weights in registers; the most stages that fit.
ConvShiftTile convShiftDefaultTile(const ConvSpec &s);

/// The tile for `s`, or none when the planner should not pick conv_shift (whyNot gets the
/// reason): no wgmma target, not TF32, not convShiftSupports, small groups (measured slower
/// than FFMA on S4), input channels padding the k tiles by over a quarter, a grid with over
/// half as many rows again as outputs; and for the stride-1 walk also a reduction (Cin /
/// groups x taps) under 1024 terms or output channels per group filling under 3/4 of
/// 128-channel tiles, unless the input-box engine's boxes copy over 4.2 floats a channel per
/// output (wgmmaBoxFloatsPerPosition), the W taps can share a stage and the epilogue has no
/// reduction or softmax over the channels: then 64 x 256 tiles (128 x 128 for groups of over
/// 64 output channels) with wRun W taps a stage; and boxes of at most 4.2 floats where the
/// input-box engine can run the convolution (it is faster there). The phase walk gets
/// convShiftDefaultTile (the planner only asks for strided transposed convolutions it
/// already sent to conv_igemm).
std::optional<ConvShiftTile> convShiftTile(const ConvSpec &s, std::string *whyNot = nullptr);

/// The kernels, in launch order, sharing slots: conv_pack.cuh (the weight rows, slot 6; for
/// the phase walk and small groups conv_shift_rows.cuh's product rows),
/// conv_stage.cuh (the staged input, slot 7) and the conv_shift.cuh kernel named
/// s.kernelName (persistent; tensor maps over slots 6 and 7). Slots as conv_igemm's (0 x,
/// 1 w, 2 bias, 3 y, 4 stats). Any spec convShiftSupports accepts runs on any tile (tests
/// force small ones). Fails, naming the kernel, when it does not or the tile breaks the
/// template's rules or shared memory. Without a wgmma target the kernel does not compile.
llvm::Expected<std::vector<KernelSource>> emitConvShift(const ConvSpec &s,
                                                        const ConvShiftTile &tile);

} // namespace sinter
