//===- compiler/kernels/ConvShift.cpp - stride-1 convolutions as per-tap GEMMs on wgmma ===//
//
// Picks the staged grid (the smallest pitch per dim that keeps every tap's window exact),
// the tile, and writes the three kernels: the weight rows, the staged input and the
// product. The rules the grid must follow are derived in templates/conv_shift.cuh's header.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvShift.h"
#include "compiler/kernels/ConvIgemm.h"
#include "compiler/kernels/Emit.h"

#include "ir/Error.h"

#include <algorithm>
#include <limits>

namespace sinter {

namespace {

constexpr int64_t kSmemLimit = 227 * 1024;
constexpr int64_t kMaxStages = 6;
// Grids wasting more than this share of their rows leave the convolution to the other
// engines (a valid convolution of small images: (in / out)^dims).
constexpr double kMaxGridWaste = 1.5;
// The shallowest reduction (Cin / groups x taps) conv_shift is chosen for.
constexpr int64_t kMinReduction = 1024;
// SMs of the GPUs the tile choice aims at (H100/H200): fewer than two waves of 256-row tiles
// take 128-row ones.
constexpr int64_t kSms = 132;

int64_t stageBytes(const ConvShiftTile &t) { return int64_t(t.bm + t.bn) * 32 * 4; }

int64_t sharedBytes(const ConvShiftTile &t) {
  return int64_t(t.stages) * stageBytes(t) + 2 * int64_t(t.stages) * 8 + 1024;
}

int64_t tileCount(const ConvSpec &s, const ShiftGrid &g, const ConvShiftTile &t) {
  const int64_t coutG = s.Cout / s.groups;
  return (g.rows(s) + t.bn - 1) / t.bn * s.groups * ((coutG + t.bm - 1) / t.bm);
}

/// "34x34x34" over the spatial dims in use.
std::string gridName(const ConvSpec &s, const ShiftGrid &g) {
  std::string text;
  for (unsigned d = 3 - std::min(s.spatialDims, 3u); d < 3; ++d)
    text += (text.empty() ? "" : "x") + std::to_string(g.pitch[d]);
  return text;
}

KernelSource emitStage(const ConvSpec &s, const ShiftGrid &g) {
  const std::string name = s.kernelName + "_stage";
  PrologueWriter w(name, "conv_stage.cuh");
  w.constant("kN", s.N);
  w.constant("kC", s.Cin);
  w.constant("kRowPitch", g.rowPitch);
  static const char *const kDim[3] = {"D", "H", "W"};
  for (int d = 0; d < 3; ++d) {
    w.constant(std::string("kIn") + kDim[d], s.in[d]);
    w.constant(std::string("kPitch") + kDim[d], g.pitch[d]);
  }
  w.constant("kOutSlot", kConvStageSlot);
  w.constantBool("kRound", true);
  KernelSource k;
  k.name = name;
  k.templateName = "conv_stage.cuh";
  k.source = w.finish();
  // One block per 64 positions of a grid row (conv_stage.cuh's kSpanW).
  k.launch.grid = {unsigned(s.N * g.pitch[0] * g.pitch[1] * ((g.pitch[2] + 63) / 64)), 1, 1};
  k.launch.block = {256, 1, 1};
  k.tileConfig = "input channels last on a " + gridName(s, g) + " grid, rows of " +
                 std::to_string(g.rowPitch) + " floats, TF32-rounded";
  const int64_t staged = g.rows(s) * g.rowPitch * 4;
  k.bytes = 4.0 * double(s.N * s.Cin * volume(s.in)) + double(staged);
  k.workspace.push_back({kConvStageSlot, staged, WorkspaceNeed::Init::None,
                         "the input channels last on the padded grid (conv_stage.cuh)"});
  return k;
}

} // namespace

int maxStages(const ConvShiftTile &t) {
  return int(std::min<int64_t>(kMaxStages, (kSmemLimit - 1024) / (stageBytes(t) + 16)));
}

ShiftGrid shiftGrid(const ConvSpec &s) {
  ShiftGrid g;
  for (int d = 0; d < 3; ++d) {
    // Direct: input = out - pad + dil * t; transposed (stride 1): input = out + pad - dil * t.
    g.off[d] = s.transposed ? s.padding[d] : -s.padding[d];
    g.step[d] = s.transposed ? -s.dilation[d] : s.dilation[d];
    const int64_t last = g.off[d] + g.step[d] * (s.kernel[d] - 1);
    const int64_t offMin = std::min(g.off[d], last), offMax = std::max(g.off[d], last);
    g.pitch[d] =
        std::max({s.out[d], s.in[d], s.out[d] + offMax, s.in[d] - std::min<int64_t>(offMin, 0)});
  }
  g.rowPitch = roundUp(s.Cin, 4);
  return g;
}

bool convShiftSupports(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  for (int d = 0; d < 3; ++d) {
    if (s.stride[d] != 1)
      return no("a stride above 1");
    if (s.in[d] < 1 || s.out[d] < 1 || s.kernel[d] < 1 || s.dilation[d] < 1 || s.padding[d] < 0)
      return no("a non-positive size or dilation, or a negative padding");
  }
  if (s.groups < 1 || s.Cin % s.groups || s.Cout % s.groups)
    return no("groups do not divide the channels");
  if (s.groups > 1 && (s.Cin / s.groups) % 32)
    return no("groups whose input channels are not whole 32-channel k tiles");
  // Each k tile copies a box of 32 channels (zeros past Cin); not measured on fewer.
  if (s.Cin / s.groups < 32)
    return no("fewer than 32 input channels per group");
  const ShiftGrid g = shiftGrid(s);
  if (g.rows(s) + volume(g.pitch) >= (int64_t(1) << 31))
    return no("too many grid rows for 32-bit TMA coordinates");
  return true;
}

std::optional<ConvShiftTile> convShiftTile(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return std::nullopt;
  };
  if (!s.wgmma)
    return no("the target has no wgmma (sm_90a)");
  if (s.math != MathMode::Tf32)
    return no("not TF32");
  std::string why;
  if (!convShiftSupports(s, &why))
    return no(why);
  const int64_t cinG = s.Cin / s.groups, coutG = s.Cout / s.groups;
  if (roundUp(cinG, 32) * 4 > cinG * 5)
    return no("input channels that pad the 32-deep k tiles by more than a quarter");
  // 64-channel tiles read as many input rows per product as 128-channel ones read for two:
  // measured L2-bound (a 32 -> 64 channel 3x3 conv 1.03 ms against 0.63 on the input-box
  // engine, H200), so narrower groups stay there; 96 or 192 channels still fill 3/4 of the
  // 128-channel tiles.
  if (roundUp(coutG, 128) * 3 > coutG * 4)
    return no("output channels per group that fill under 3/4 of 128-channel tiles");
  // Each tile's epilogue (the stores and statistics of 128 x 256 outputs) runs while no
  // product does: with a shallow reduction it outweighs the faster products (H200, kernel
  // harness: Conv1d(64 -> 128, k 5), 320 terms, 0.54 ms against 0.25 on the input-box
  // engine; Conv2d(64 -> 128, k 3) on 128 px, 576 terms, 0.60 on the best tile against 0.56;
  // Conv2d(128 -> 128, k 3), 1152 terms, 0.47 against 0.50; S0, 1728 terms, 0.85 against
  // 1.56). Between 576 and 1152 terms is not measured.
  if (cinG * volume(s.kernel) < kMinReduction)
    return no("a reduction of fewer than " + std::to_string(kMinReduction) +
              " terms (each tile's epilogue would outweigh its faster products)");
  const ShiftGrid g = shiftGrid(s);
  if (double(g.rows(s)) > kMaxGridWaste * double(s.N * volume(s.out)))
    return no("the padded grid would compute over half as many rows again as there are outputs");
  ConvShiftTile t;
  if (tileCount(s, g, t) < 2 * kSms)
    t.bn = 128;
  t.stages = maxStages(t);
  return t;
}

llvm::Expected<std::vector<KernelSource>> emitConvShift(const ConvSpec &s,
                                                        const ConvShiftTile &tile) {
  if ((tile.bm != 64 && tile.bm != 128) || (tile.bn != 64 && tile.bn != 128 && tile.bn != 256) ||
      tile.stages < 2)
    return makeError(s.kernelName + ": not a conv_shift tile (64 or 128 x 64, 128 or 256, at "
                                    "least 2 stages)");
  if (sharedBytes(tile) > kSmemLimit)
    return makeError(s.kernelName + ": conv_shift's stages do not fit shared memory");
  std::string why;
  if (!convShiftSupports(s, &why))
    return makeError("conv_shift cannot run " + s.kernelName + ": " + why);
  const ShiftGrid g = shiftGrid(s);
  if (tileCount(s, g, tile) > std::numeric_limits<int>::max())
    return makeError(s.kernelName + ": too many conv_shift tiles for 32-bit tile indices");
  const int64_t cinG = s.Cin / s.groups;
  const int64_t taps = volume(s.kernel), kPad = (cinG + 31) / 32 * taps * 32;

  std::vector<KernelSource> kernels;
  kernels.push_back(emitConvWeightRows(s, kPad, 32, true));
  kernels.push_back(emitStage(s, g));

  PrologueWriter w(s.kernelName, "conv_shift.cuh");
  w.constant("kN", s.N);
  w.constant("kCin", s.Cin);
  w.constant("kCout", s.Cout);
  w.constant("kGroups", s.groups);
  static const char *const kDim[3] = {"D", "H", "W"};
  for (int d = 0; d < 3; ++d) {
    const std::string D = kDim[d];
    w.constant("kOut" + D, s.out[d]);
    w.constant("kK" + D, s.kernel[d]);
    w.constant("kPitch" + D, g.pitch[d]);
    w.constant("kOff" + D, g.off[d]);
    w.constant("kStep" + D, g.step[d]);
  }
  w.constantBool("kHasBias", s.hasBias);
  w.constantBool("kStoreOutput", s.storeOutput);
  w.constantBool("kAccumulateStats", s.accumulateStats);
  w.constant("kBM", tile.bm);
  w.constant("kBN", tile.bn);
  w.constant("kStages", tile.stages);
  // How the epilogue stores column pairs depends on it (conv_shift.cuh, storeTile).
  w.constantBool("kEpilogueReadsTensors", s.epilogue.readsTensors());
  w.anchorEpilogue("Epilogue", s.epilogue);

  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "conv_shift.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned(tileCount(s, g, tile)), 1, 1};
  k.launch.persistent = true;
  k.launch.block = {unsigned(tile.bm / 64 * 128 + 32), 1, 1};
  k.launch.sharedBytes = unsigned(sharedBytes(tile));
  TensorMapSpec rows;
  rows.slot = kConvPackSlot;
  rows.dims = {uint64_t(kPad), uint64_t(s.Cout)};
  rows.strides = {uint64_t(kPad) * 4};
  rows.box = {32, uint32_t(tile.bm)};
  rows.swizzle128 = true;
  TensorMapSpec staged;
  staged.slot = kConvStageSlot;
  staged.dims = {uint64_t(s.Cin), uint64_t(g.rows(s))};
  staged.strides = {uint64_t(g.rowPitch) * 4};
  staged.box = {32, uint32_t(tile.bn)};
  staged.swizzle128 = true;
  k.launch.tensorMaps = {rows, staged};
  k.tileConfig = "shifted rows, " + std::to_string(tile.bm) + "x" + std::to_string(tile.bn) +
                 "x32 over a " + gridName(s, g) + " grid, wgmma, " + std::to_string(tile.bm / 64) +
                 " warpgroups + a TMA warp, " + std::to_string(tile.stages) + " stages, tf32";
  const int64_t outVol = volume(s.out);
  k.flops = 2.0 * double(s.N * outVol) * double(s.Cout) * double(cinG * taps);
  k.bytes = 4.0 * double(g.rows(s) * g.rowPitch + s.Cout * kPad + (s.hasBias ? s.Cout : 0) +
                         (s.storeOutput ? s.N * s.Cout * outVol : 0));
  if (s.accumulateStats) {
    k.bytes += 16.0 * double(s.N * s.Cout);
    k.workspace.push_back({4, 16 * s.N * s.Cout, WorkspaceNeed::Init::Zero,
                           "per-(n,c) sum and sum of squares (double)"});
  }
  k.workspace.push_back(kernels[0].workspace.front());
  k.workspace.push_back(kernels[1].workspace.front());
  kernels.push_back(std::move(k));
  return kernels;
}

} // namespace sinter
