//===- compiler/kernels/ConvIgemm.h - implicit-GEMM convolution emitter ------------===//
//
// Turns a ConvSpec (compiler/kernels/Specs.h) into the source of a templates/conv_igemm.cuh
// kernel: a tensor-core implicit GEMM (TF32 or 3xTF32 mma.sync) for convolutions with many
// channels per group, where the work is compute-bound. Convolutions of any rank, stride,
// padding, dilation and groups are accepted; transposed convolutions only with stride 1
// (they are run as the convolution with flipped taps).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Specs.h"

#include "llvm/Support/Error.h"

#include <string>

namespace sinter {

/// Whether conv_igemm can run `s`; when not, and whyNot is given, a one-line reason.
bool convIgemmSupports(const ConvSpec &s, std::string *whyNot);

/// The conv_igemm kernel for `s`. Launch: grid (ceil(N * out volume / BM),
/// ceil(Cout/groups / BN), groups), block 32 * warps, dynamic shared memory as given (over
/// 48 KiB: the loader must raise the kernel's limit). s.math Ffma is computed as 3xTF32,
/// which is as accurate. When s.accumulateStats, slot 4 must hold zeroed double[N * Cout * 2].
/// Fails, naming the kernel, when convIgemmSupports(s) is false.
llvm::Expected<KernelSource> emitConvIgemm(const ConvSpec &s);

/// A block tile of conv_igemm: rows (output positions) x columns (channels) x k step, the
/// warp grid over it, and the number of cp.async stages.
struct ConvIgemmTile {
  int bm = 128, bn = 128, bk = 32, warpsM = 2, warpsN = 4, stages = 4;
  int minBlocks = 1; ///< blocks per SM the register budget must allow
};

/// emitConvIgemm with the tile given rather than chosen (benchmarks compare tiles with it).
/// Fails when the tile breaks the template's rules (see conv_igemm.cuh's static_asserts).
llvm::Expected<KernelSource> emitConvIgemm(const ConvSpec &s, const ConvIgemmTile &tile);

} // namespace sinter
