//===- compiler/kernels/Gemm.h - tensor-core GEMM emitter --------------------------===//
//
// Turns a GemmSpec (compiler/kernels/Specs.h) into the source of a templates/gemm.cuh
// kernel: batched matrix products for linear and matmul on tensor cores, fp32-accurate by
// default (3xTF32), with the fused epilogue and the optional row-group norm tail and row
// reduction (linear -> group_norm -> min without writing the product).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"
#include "compiler/kernels/Specs.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace sinter {

/// The gemm kernel for `s`. Launch: grid (ceil(N / BN), ceil(M / BM), batch count), block
/// 32 * warps, dynamic shared memory as given (over 48 KiB: the loader must raise the
/// kernel's limit). On the wgmma engine an unbatched product on one block per SM has a
/// one-dimensional grid instead (GemmTile::launch: [tiles, 1, 1] and LaunchConfig::persistent,
/// or a block per whole tile and kGemmStreamKBlocks more) and, with more than
/// kGemmStreamKBlocks tiles, needs slot 5 zeroed before each launch (KernelSource::workspace:
/// the stream-K partial tiles and their flags). s.math Ffma is
/// computed as 3xTF32, which is as accurate. With a row reduction, slot 4 must hold
/// float[batch * M] initialised to the reduction's identity.
/// Fails, naming the kernel, on inconsistent sizes or a norm group the tiles cannot hold
/// (normGroupCols must be a multiple of 8 dividing N and at most 128).
llvm::Expected<KernelSource> emitGemm(const GemmSpec &s);

/// How the blocks of a wgmma GEMM share its tiles. Only unbatched products on tiles of one
/// block per SM take the first two; the rest always run a block per tile.
enum class GemmLaunch : uint8_t {
  /// min(tiles, SM count) blocks take the tiles in turn (LaunchConfig::persistent).
  Persistent,
  /// A block per tile of the full waves of kGemmStreamKBlocks, scheduled by the hardware as
  /// they finish, then kGemmStreamKBlocks blocks for the rest (with streamK; else a block per
  /// tile in the same one-dimensional order).
  TilesThenStreamK,
  /// A block per tile, grid (tile columns, tile rows, batch).
  BlockPerTile,
};

/// A block tile of gemm: rows x columns x k step, the warp grid, the cp.async stages.
/// With `wgmma` the tile runs on the sm_90a engine (templates/wgmma.cuh): bk 32, bm 64 or 128
/// (one consumer warpgroup per 64 rows, warps of 16 rows: warpsM = bm / 16, warpsN = 1),
/// bn 64, 128 or 256, plus a producer warpgroup.
struct GemmTile {
  int bm = 128, bn = 128, bk = 32, warpsM = 2, warpsN = 4, stages = 3;
  int minBlocks = 1; ///< blocks per SM the register budget must allow
  bool wgmma = false;
  /// wgmma engine: copy A and B with TMA where the product allows it (no batch), else with
  /// the producer's cp.async copies.
  bool tma = true;
  /// wgmma engine: consecutive blocks cover this many tile rows before the next tile column
  /// (1: row by row).
  int groupM = 8;
  /// wgmma engine: how the blocks share the tiles (GemmLaunch), and whether the last partial
  /// wave is split by k tiles over kGemmStreamKBlocks blocks (stream-K).
  GemmLaunch launch = GemmLaunch::Persistent;
  bool streamK = true;
  /// wgmma engine: blocks per thread-block cluster, 1 or 2. With 2 (TF32, TMA, a block per
  /// tile, even tile counts and groupM) the two blocks of a cluster hold tiles of one tile
  /// column and each copies half of their B tile, multicast to both.
  int cluster = 1;
};

/// The most blocks a gemm kernel splits its last partial wave over: the SM count of the
/// largest Hopper parts (H100 SXM, H200), since the runtime launches a persistent kernel on
/// min(tiles, SM count) blocks. The kernel's workspace holds one partial tile per splitting
/// block; a larger grid splits over its last kGemmStreamKBlocks blocks.
constexpr int kGemmStreamKBlocks = 132;

/// Whether `s` can run on the wgmma engine: the target has it, B is [N, K], and every row and
/// batch offset keeps 16-byte copies aligned.
bool gemmFitsWgmma(const GemmSpec &s);

/// The wgmma tile for `s` (gemmFitsWgmma(s) must hold): among the engine's tiles that hold
/// the norm groups, the one with the least predicted time (tile times on 132 SMs, whole waves
/// or with the stream-K split at its measured efficiency, times the tile's work over its
/// measured efficiency), with its launch: 3xTF32 persistent, split where that is predicted
/// faster; TF32 a block per tile (measured, Gemm.cpp); and its block groups: 16 tile rows
/// for 128 x 256 tiles, 8 for the others.
/// Returns a tile with wgmma false when none holds the groups.
GemmTile chooseWgmmaTile(const GemmSpec &s);

/// Whether the blocks of `t` can run in clusters of two on `s` (GemmTile::cluster): the wgmma
/// engine in TF32 through TMA, no batch, a block per tile on a grid of (tile columns, tile
/// rows), an even count of tile rows and of tile columns, and an even groupM, so that blocks
/// 2i and 2i + 1 hold tiles of one tile column.
bool gemmClusterFits(const GemmSpec &s, const GemmTile &t);

/// Every tile the wgmma chooser considers for math mode `m` (tests compile each one).
std::vector<GemmTile> wgmmaTiles(MathMode m);

/// The gemm_transpose.cuh kernel for the matmul `s` (B as [batch..., K, N]): each of B's
/// distinct K x N matrices (slot 0) written as N x K into slot 1 (the workspace it asks for),
/// at the same matrix offsets, so that the product can read the copy as a linear layer's
/// weight with `s`'s batch strides. Launch: grid (pieces of 32 x 32, matrices), block (32, 8).
llvm::Expected<KernelSource> emitGemmTranspose(const GemmSpec &s);

/// Whether the matmul `s` (B as [batch..., K, N]) runs faster as gemm_transpose.cuh followed by
/// the wgmma engine on the copy than on mma.sync, by the engines' measured rates and the
/// copy's DRAM traffic (docs/kernels-tensorcore.md, "A matmul's B turned K-major"). False
/// where the engine cannot take the copy (no sm_90a, K or the batch strides not multiples of
/// 4, no tile for the norm groups) or B is a vector.
bool gemmTransposesB(const GemmSpec &s);

/// emitGemm with the tile given rather than chosen (benchmarks compare tiles with it).
/// Fails when the tile breaks the template's rules (see gemm.cuh's static_asserts).
llvm::Expected<KernelSource> emitGemm(const GemmSpec &s, const GemmTile &tile);

} // namespace sinter
