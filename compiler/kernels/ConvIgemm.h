//===- compiler/kernels/ConvIgemm.h - implicit-GEMM convolution emitter ------------===//
//
// Turns a ConvSpec (compiler/kernels/Specs.h) into the sources of templates/conv_igemm.cuh
// kernels: tensor-core implicit GEMMs (TF32 or 3xTF32 mma.sync) for convolutions with many
// channels per group, where the work is compute-bound. Convolutions of any rank, stride,
// padding, dilation and groups are accepted. A transposed convolution with stride 1 runs as
// the convolution with flipped taps; with stride > 1 it runs as one kernel per output phase
// (ConvPhases.h), so that no product is spent on the zeros of a zero-stuffed input.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Specs.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace sinter {

/// Whether conv_igemm can run `s`; when not, and whyNot is given, a one-line reason.
bool convIgemmSupports(const ConvSpec &s, std::string *whyNot);

/// The conv_igemm kernels for `s`, to be launched in order with the same slots. Where
/// convShiftTile(s) accepts it (sm_90a, TF32, stride 1 or a transposed convolution walked by
/// output phase, whole 32-channel k tiles, wide groups), the kernels are emitConvShift's:
/// weight rows, staged input, per-tap GEMMs (ConvShift.h). Otherwise one conv_igemm kernel, or
/// for a strided transposed convolution one per output phase that holds outputs (named
/// `<kernelName>_p<i>`, each writing its own outputs of y and adding to the same statistics).
/// Launch of each: grid (ceil(N * rows / BM), ceil(Cout/groups / BN), groups), rows being the
/// output positions of the kernel per image, block 32 * warps, dynamic shared memory as given
/// (over 48 KiB: the loader must raise the kernel's limit). s.math Ffma is computed as
/// 3xTF32, which is as accurate. When s.accumulateStats, slot 4 must hold zeroed
/// double[N * Cout * 2], one buffer for all the kernels.
/// Fails, naming the kernel, when convIgemmSupports(s) is false.
llvm::Expected<std::vector<KernelSource>> emitConvIgemm(const ConvSpec &s);

/// The slot of the weight rows conv_pack.cuh writes and conv_igemm.cuh reads. When
/// emitConvIgemm's first kernel is that pack kernel (template conv_pack.cuh), every kernel
/// listing this slot in its workspace must be given the pack kernel's buffer.
/// Slot 6: conv kernels bind 5 to the per-(n, c) scale and shift of a recomputed pass, and
/// read nothing else from 6 or 7.
constexpr int kConvPackSlot = 6;

/// conv_pack.cuh for the one kernel of a convolution without output phases: every output
/// channel's row of kPad floats, in chunks of ciChunk channels (0: k = ci * taps + tap),
/// rounded to TF32 when roundTf32. Writes kConvPackSlot.
KernelSource emitConvWeightRows(const ConvSpec &s, int64_t kPad, int64_t ciChunk,
                                bool roundTf32);

/// A kernel that writes `total` floats of weight rows into kConvPackSlot from `source`
/// (a grid-stride loop of 256-thread blocks, at most 4096 of them): the launch, cost and
/// workspace shared by conv_pack.cuh and conv_shift_rows.cuh. `what` names the rows in the
/// workspace's description.
KernelSource weightRowsKernel(const ConvSpec &s, std::string name, std::string templateName,
                              std::string source, int64_t total, std::string tileConfig,
                              const std::string &what);
/// The block size weightRowsKernel launches (the templates' kThreads).
constexpr int64_t kWeightRowsThreads = 256;

/// The mean reduction depth of the kernels of emitConvIgemm(s): Cin/groups * kernel volume,
/// shared among the output phases of a strided transposed convolution.
int64_t convIgemmMeanReduction(const ConvSpec &s);

/// A block tile of conv_igemm: rows (output positions) x columns (channels) x k step, the
/// warp grid over it, and the number of cp.async stages.
struct ConvIgemmTile {
  int bm = 128, bn = 128, bk = 32, warpsM = 2, warpsN = 4, stages = 4;
  /// Blocks per SM the register budget must allow; engine 1: blocks per SM of its
  /// persistent launch, 1 or (tiles of at most 64 channels) 2.
  int minBlocks = 1;
  /// Engine 1 (conv_wgmma.cuh): 128 x bn tiles (bn 8 to 256, the narrowest that holds a
  /// group up to 64 channels), two consumer warpgroups (warpsM 8, warpsN
  /// 1, bk 32) and a producer; stages counts B stages; ciChunk channels per input box (0:
  /// chosen).
  bool wgmma = false;
  int ciChunk = 0;
  /// Engine 1 with each consumer warpgroup on whole tiles of its own, the two taking turns
  /// at the products (warpsM 4: a warpgroup's 4 warps hold the 128 rows), so that one's
  /// epilogue runs beside the other's products. One block an SM, bn at most 128.
  bool pingpong = false;
};

/// The engine-1 tile for `s` (every kernel of it on the input-box engine), or none when
/// `s` does not fit it: not TF32, no wgmma target, a strided direct convolution of fewer than
/// 8 input channels a group, or a box too large for shared memory. whyNot gets the reason.
/// Tiles of at most 64 channels of a reduction of at most 512 terms run two blocks an SM
/// where their boxes fit (minBlocks 2); tiles of one block an SM alternate their consumer
/// warpgroups (pingpong) unless the epilogue reduces over the channels.
std::optional<ConvIgemmTile> convWgmmaTile(const ConvSpec &s, std::string *whyNot = nullptr);

/// The floats of one input channel the input-box engine copies per output position of `s`
/// (its boxes over all tiles of an image, with their halos and the rows a tile's 128
/// positions touch, over the outputs): 3.2 for a 3x3 convolution on 256-wide rows, 8.3
/// where 258-wide rows make each tile's box span four full input rows.
double wgmmaBoxFloatsPerPosition(const ConvSpec &s);

/// Whether emitConvIgemm runs `s` with a softmax (ConvSpec::softmax) or else a reduction
/// (ConvSpec::channelReduce) over its channels in the kernel: on the wgmma input-box engine
/// (not conv_shift, which keeps a convolution it would run with a softmax, and one of stride
/// 1 with a reduction; a strided transposed one with a reduction leaves it), one group, every
/// output channel in one tile column. whyNot gets the reason when not.
bool convIgemmRunsChannelTail(const ConvSpec &s, std::string *whyNot = nullptr);

/// Whether emitConvIgemm runs `s` with its pool (ConvSpec::pool) in the kernel, storing only
/// the pooled tensor: on the wgmma input-box engine (a convolution that conv_shift or
/// mma.sync would run, or a strided transposed one, keeps its pool as a kernel of its own),
/// on tiles of whole windows of one depth, 1, 2 or 4 rows and up to 8, 8 or 4 columns (a power
/// of two), where those tiles add fewer products than the output's round trip costs. whyNot
/// gets the reason when not.
bool convIgemmRunsPool(const ConvSpec &s, std::string *whyNot = nullptr);

/// emitConvIgemm with the tile given rather than chosen (benchmarks compare tiles with it),
/// the same for every kernel. Fails when the tile breaks the template's rules (see
/// conv_igemm.cuh's static_asserts).
llvm::Expected<std::vector<KernelSource>> emitConvIgemm(const ConvSpec &s,
                                                        const ConvIgemmTile &tile);

} // namespace sinter
