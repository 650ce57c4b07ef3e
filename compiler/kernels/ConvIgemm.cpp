//===- compiler/kernels/ConvIgemm.cpp - implicit-GEMM convolution emitter ----------===//
//
// Checks a ConvSpec against what templates/conv_igemm.cuh can do, picks the block tile for
// the shape and writes the prologue. The tile is 128 or 256 rows (output positions) by up to
// 128 output channels with a 32-deep k step and eight warps; narrower channel counts get
// narrower tiles so that no block spends its tensor cores on padding.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvIgemm.h"
#include "compiler/kernels/TensorCoreMath.h"

#include "ir/Error.h"

#include <limits>

namespace sinter {

namespace {

using ConvTile = ConvIgemmTile;

// Measured on an H200 for S0 (docs/kernels-tensorcore.md): with ldmatrix fragments,
// 256x128x32 tiles of 8 warps (64x64 warp tiles, about 220 registers: fewer fragment loads
// per mma) beat the same tile with 16 warps of 64x32 (2.56 vs 2.61 ms); 2 stages or 64-deep
// k steps did not pay. 3xTF32 needs more registers
// (two accumulator sets) and keeps 128x128; small problems keep 128-row tiles so that every
// SM gets work.
ConvTile chooseTile(int64_t coutPerGroup, int64_t rows, MathMode math) {
  bool tf32 = math == MathMode::Tf32;
  if (coutPerGroup > 64) {
    if (tf32 && rows >= int64_t(256) * 132 * 2)
      return {256, 128, 32, 4, 2, 3, 1};
    return {128, 128, 32, 2, 4, 4, 1};
  }
  if (coutPerGroup > 32)
    return {128, 64, 32, 4, 2, 4, 1};
  return {128, 32, 32, 4, 2, 4, 1};
}

int64_t volume(const std::array<int64_t, 3> &a) { return a[0] * a[1] * a[2]; }


} // namespace

bool convIgemmSupports(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  if (s.groups < 1 || s.Cin % s.groups || s.Cout % s.groups)
    return no("groups do not divide the channels");
  for (int d = 0; d < 3; ++d) {
    if (s.kernel[d] > 32)
      return no("a kernel extent over 32 taps");
    if (s.in[d] < 1 || s.out[d] < 1 || s.kernel[d] < 1 || s.stride[d] < 1 || s.dilation[d] < 1)
      return no("a non-positive size, stride or dilation");
  }
  if (s.transposed && (s.stride[0] != 1 || s.stride[1] != 1 || s.stride[2] != 1))
    return no("transposed convolution with stride > 1 (zero-stuffed input wastes the tiles)");
  // The template keeps input offsets within one image and k indices in 32-bit integers.
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (s.Cin * volume(s.in) > kMax || s.Cout * volume(s.out) > kMax ||
      s.Cin / s.groups * volume(s.kernel) > kMax)
    return no("one image or the reduction is too large for 32-bit offsets");
  // The k table (8 bytes per reduction index) shares shared memory with at least two stages
  // of the largest tile (256x128x32: 54 KiB each).
  if ((s.Cin / s.groups) * volume(s.kernel) * 8 + 2 * 55296 > 227 * 1024)
    return no("the reduction (Cin/groups * kernel volume) is too deep for the shared k table");
  if (s.N * volume(s.out) / 128 > std::numeric_limits<unsigned>::max() / 2)
    return no("too many output positions for the grid");
  return true;
}

llvm::Expected<KernelSource> emitConvIgemm(const ConvSpec &s) {
  return emitConvIgemm(
      s, chooseTile(s.groups > 0 ? s.Cout / s.groups : s.Cout, s.N * volume(s.out), s.math));
}

llvm::Expected<KernelSource> emitConvIgemm(const ConvSpec &s, const ConvIgemmTile &tileIn) {
  std::string why;
  if (!convIgemmSupports(s, &why))
    return makeError("conv_igemm cannot run " + s.kernelName + ": " + why);
  // The output sizes must follow from the attributes (transposed: output_padding is folded
  // into `out`, so only a lower bound holds).
  for (int d = 0; d < 3; ++d) {
    int64_t span = s.dilation[d] * (s.kernel[d] - 1);
    int64_t expect = s.transposed ? s.in[d] - 1 - 2 * s.padding[d] + span + 1
                                  : (s.in[d] + 2 * s.padding[d] - span - 1) / s.stride[d] + 1;
    if (s.transposed ? s.out[d] < expect : s.out[d] != expect)
      return makeError(s.kernelName + ": output extent " + std::to_string(s.out[d]) +
                       " does not follow from the convolution attributes (expected " +
                       std::to_string(expect) + ")");
  }

  const int64_t coutG = s.Cout / s.groups, cinG = s.Cin / s.groups;
  ConvTile tile = tileIn;
  const int threads = 32 * tile.warpsM * tile.warpsN;
  // A loader: each warp copies groups of 8 rows; B loader: whole k rows per pass.
  if (tile.bm % (16 * tile.warpsM) || tile.bn % (8 * tile.warpsN) || tile.bk % 8 ||
      tile.bm % (8 * (threads / 32)) || threads % tile.bk || tile.bn % (threads / tile.bk) ||
      tile.stages < 2)
    return makeError(s.kernelName + ": conv_igemm tile " + std::to_string(tile.bm) + "x" +
                     std::to_string(tile.bn) + "x" + std::to_string(tile.bk) +
                     " does not fit its warps");
  // Shared memory: the pipeline stages plus the k table (8 bytes per reduction index).
  // Deep reductions give up stages before they give up the table.
  const int64_t kPadded = (cinG * volume(s.kernel) + tile.bk - 1) / tile.bk * tile.bk;
  auto smemBytes = [&](int stages) {
    return int64_t(stages) * (tile.bm + tile.bn) * (tile.bk + 4) * 4 + kPadded * 8;
  };
  constexpr int64_t kSmemLimit = 227 * 1024;
  while (tile.stages > 2 && smemBytes(tile.stages) > kSmemLimit)
    --tile.stages;
  if (smemBytes(tile.stages) > kSmemLimit)
    return makeError("conv_igemm cannot run " + s.kernelName +
                     ": the reduction is too deep for the shared k table");
  PrologueWriter w(s.kernelName, "conv_igemm.cuh");
  w.constant("kN", s.N);
  w.constant("kCin", s.Cin);
  w.constant("kCout", s.Cout);
  w.constant("kGroups", s.groups);
  static const char *const kDim[3] = {"D", "H", "W"};
  for (int d = 0; d < 3; ++d) {
    std::string D = kDim[d];
    w.constant("kIn" + D, s.in[d]);
    w.constant("kOut" + D, s.out[d]);
    w.constant("kK" + D, s.kernel[d]);
    w.constant("kS" + D, s.stride[d]);
    w.constant("kP" + D, s.padding[d]);
    w.constant("kD" + D, s.dilation[d]);
  }
  w.constantBool("kTransposed", s.transposed);
  w.constantBool("kHasBias", s.hasBias);
  w.constantBool("kStoreOutput", s.storeOutput);
  w.constantBool("kAccumulateStats", s.accumulateStats);
  w.constant("kBM", tile.bm);
  w.constant("kBN", tile.bn);
  w.constant("kBK", tile.bk);
  w.constant("kWarpsM", tile.warpsM);
  w.constant("kWarpsN", tile.warpsN);
  w.constant("kStages", tile.stages);
  w.constant("kMinBlocks", tile.minBlocks);
  w.constant("kMath", tensorCoreMathConstant(s.math));
  w.anchorEpilogue("Epilogue", s.epilogue);

  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "conv_igemm.cuh";
  k.source = w.finish();
  const int64_t outVol = volume(s.out), rows = s.N * outVol;
  k.launch.grid = {unsigned((rows + tile.bm - 1) / tile.bm),
                   unsigned((coutG + tile.bn - 1) / tile.bn), unsigned(s.groups)};
  k.launch.block = {unsigned(32 * tile.warpsM * tile.warpsN), 1, 1};
  k.launch.sharedBytes = unsigned(smemBytes(tile.stages));
  k.tileConfig = std::to_string(tile.bm) + "x" + std::to_string(tile.bn) + "x" +
                 std::to_string(tile.bk) + ", " + std::to_string(tile.warpsM * tile.warpsN) +
                 " warps, " + std::to_string(tile.stages) + " stages, " + tensorCoreMathName(s.math) +
                 (tile.minBlocks > 1 ? ", " + std::to_string(tile.minBlocks) + " blocks/SM" : "");
  k.flops = 2.0 * double(rows) * double(s.Cout) * double(cinG * volume(s.kernel));
  k.bytes = 4.0 * double(s.N * s.Cin * volume(s.in) + s.Cout * cinG * volume(s.kernel) +
                         (s.hasBias ? s.Cout : 0) + (s.storeOutput ? s.N * s.Cout * outVol : 0));
  if (s.accumulateStats) {
    k.bytes += 16.0 * double(s.N * s.Cout);
    k.workspace.push_back({4, 16 * s.N * s.Cout, WorkspaceNeed::Init::Zero,
                           "per-(n,c) sum and sum of squares (double)"});
  }
  return k;
}

} // namespace sinter
