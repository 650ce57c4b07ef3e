//===- compiler/kernels/ConvMma.h - direct convolution on mma.sync emitter ---------===//
//
// Turns a ConvSpec with s.math == Tf32 into the source of a templates/conv_mma.cuh kernel:
// the direct convolution of conv_direct (few channels per group, no im2col) with its
// products on TF32 tensor cores (m16n8k8 mma.sync, sm_80 and later). Convolutions and
// transposed convolutions of any stride are accepted, 1-, 2- or 3-D, with padding,
// dilation, groups (up to 64 output channels per group; a strided transposed one up to 64
// (output phase, channel) columns, its phases walked as columns of the product) and bias.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Specs.h"

#include "llvm/Support/Error.h"

#include <string>

namespace sinter {

/// Whether conv_mma can run `s` (any math mode: the check is of the shape); when not, and
/// whyNot is given, a one-line reason.
bool convMmaSupports(const ConvSpec &s, std::string *whyNot);

/// Whether conv_mma can finish a group norm of `normGroups` groups over s.Cout after the
/// epilogue (ConvSpec::normTail): each norm group within one convolution group, and no more
/// units of work per (n, group) than a GPU holds blocks at once; and, unless
/// evenWhereSlower, enough (n, group)s and tiles per (n, group) for it to beat two kernels.
bool convMmaFinishesNorm(const ConvSpec &s, int64_t normGroups, std::string *whyNot,
                         bool evenWhereSlower = false);

/// The share of conv_mma's tensor-core products that are useful: the group's output
/// channels over whole n8 tiles times the (tap, channel) pairs over whole k8 steps. The
/// planner keeps FFMA below a threshold (a depthwise convolution uses 1/8 of each tile).
double convMmaUsefulShare(const ConvSpec &s);

/// The block tile of conv_mma: kTD x kTH x kTW output positions (kTW a multiple of 16),
/// warps, how many consecutive tiles a block runs, and whether it copies the next tile's box
/// during the current one's products (two boxes in shared memory) or after them.
struct ConvMmaTile {
  int td = 1, th = 1, tw = 16, warps = 4, tileLoop = 1;
  bool doubleBuffer = true;
  /// Stage the stores per warp in shared memory and write whole rows of the tile per
  /// channel (always done for a walk by W phase).
  bool stageStores = false;
};

/// The tile emitConvMma chooses for `s` (which must be supported).
ConvMmaTile chooseConvMmaTile(const ConvSpec &s);

/// The conv_mma kernel for `s` (s.math must be Tf32), on `tile` when given. Launch: grid
/// (ceil(spatial tiles / tileLoop), groups, N), block 32 * warps, dynamic shared memory as
/// given. When s.accumulateStats, slot 4 must hold zeroed double[N * Cout * 2]. With
/// s.normTail the grid is one-dimensional (blocks take work from a counter) and slot 4 also
/// holds the zeroed counters (the workspace need says how many bytes); y is the norm's
/// output. Fails, naming the kernel, when the spec is inconsistent, convMmaSupports(s) is
/// false or, with a norm tail, convMmaFinishesNorm is.
llvm::Expected<KernelSource> emitConvMma(const ConvSpec &s);
llvm::Expected<KernelSource> emitConvMma(const ConvSpec &s, const ConvMmaTile &tile);

} // namespace sinter
