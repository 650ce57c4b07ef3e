//===- compiler/kernels/ConvShift.cpp - stride-1 convolutions as per-tap GEMMs on wgmma ===//
//
// Picks the staged grid (the smallest pitch per dim that keeps every tap's window exact),
// the tile, and writes the three kernels: the weight rows, the staged input and the
// product. The rules the grid must follow are derived in templates/conv_shift.cuh's header.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvShift.h"
#include "compiler/kernels/ConvIgemm.h"
#include "compiler/kernels/ConvPhases.h"
#include "compiler/kernels/Emit.h"
#include "compiler/kernels/TensorCoreMath.h"

#include "ir/Error.h"

#include <algorithm>
#include <limits>

namespace sinter {

namespace {

constexpr int64_t kSmemLimit = sharedPerBlock(1);
constexpr int64_t kMaxStages = 6;
constexpr int64_t kMaxRegisterAStages = 16;
// Grids wasting more than this share of their rows leave the convolution to the other
// engines (a valid convolution of small images: (in / out)^dims).
constexpr double kMaxGridWaste = 1.5;
// The shallowest reduction (Cin / groups x taps) conv_shift is chosen for, unless the
// input-box engine's boxes copy more than kMaxBoxFloatsPerPosition floats a channel per
// output position (wgmmaBoxFloatsPerPosition). Measured on an H200 (2026-11-28, full-size
// corpus graphs and the kernel harness, against the input-box engine): 3x3 convolutions
// with 64 output channels on 254-256-wide rows (3.1-3.2) ran 0.57-0.90x on conv_shift; a
// 64 -> 128 one on 126-wide rows (4.03) 0.44 ms on the input-box engine against 0.59 on
// conv_shift's best tile; a ConvTranspose2d 64 -> 64 on 130-wide rows (4.28) 0.518 on
// conv_shift against 0.642; 258-wide rows (8.27) and 3-D boxes (6.75-9.6) 1.22-1.70x.
constexpr int64_t kMinReduction = 1024;
constexpr double kMaxBoxFloatsPerPosition = 4.2;
// SMs of the GPUs the tile choice aims at (H100/H200): fewer than two waves of 256-row tiles
// take 128-row ones.
constexpr int64_t kSms = 132;

/// The k8 steps of a k tile each consumer warpgroup runs (conv_shift.cuh's kSliceSteps).
int64_t sliceSteps(const ConvSpec &s, const ShiftRows &r) {
  if (r.groupsPerK == 1)
    return 4;
  return (r.rowsG >= 64 ? 1 : 64 / r.rowsG) * (s.Cin / s.groups) / 8;
}

/// The W taps a stage of tile t holds: with the weights in registers the mode's (a box of
/// at most 256 rows, one TMA copy), else the tile's.
int64_t stageTaps(const ShiftMode &m, const ConvShiftTile &t) {
  if (m.registerA)
    return m.wRun > 1 && t.bn + 8 <= 256 ? m.wRun : 1;
  return t.wRun;
}

/// Grid rows of the B box of a stage: kBN, or kBN + 8 where the W taps share it (every
/// tap's kBN rows start within the first 8).
int64_t boxRows(const ShiftMode &m, const ConvShiftTile &t) {
  return stageTaps(m, t) > 1 ? t.bn + 8 : t.bn;
}

/// Rows of one TMA copy of a box of `rows` rows (a multiple of 8): the box in the fewest
/// equal pieces of whole 8-row swizzle atoms within TMA's 256 rows (264 = 3 x 88).
int64_t boxCopyRows(int64_t rows) {
  for (int64_t pieces = 1;; ++pieces)
    if (rows % pieces == 0 && rows / pieces <= 256 && (rows / pieces) % 8 == 0)
      return rows / pieces;
}

int64_t stageBytes(const ShiftMode &m, const ConvShiftTile &t) {
  return int64_t((m.registerA ? 0 : t.bm * stageTaps(m, t)) + boxRows(m, t)) * 32 * 4;
}

int64_t stagingBytes(const ShiftMode &m, const ConvShiftTile &t) {
  return m.stagedLines ? int64_t(t.bm) * (t.bn + 8) * 4 : 0;
}

int64_t sharedBytes(const ShiftMode &m, const ConvShiftTile &t) {
  return int64_t(t.stages) * stageBytes(m, t) + 2 * int64_t(t.stages) * 8 + stagingBytes(m, t) +
         1024;
}

int64_t tileCount(const ConvSpec &s, const ShiftGrid &g, const ConvShiftTile &t) {
  const ShiftRows r = shiftRows(s, g);
  return (g.rows(s) + t.bn - 1) / t.bn * r.kGroups * ((r.rowsK + t.bm - 1) / t.bm);
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

/// conv_shift_rows.cuh: the product rows of the phase walk or of small groups.
KernelSource emitShiftRows(const ConvSpec &s, const ShiftGrid &g, const ShiftRows &r,
                           int64_t kPad) {
  const std::string name = s.kernelName + "_rows";
  PrologueWriter w(name, "conv_shift_rows.cuh");
  w.constant("kCin", s.Cin);
  w.constant("kCout", s.Cout);
  w.constant("kGroups", s.groups);
  w.constantBool("kTransposed", s.transposed);
  static const char *const kDim[3] = {"D", "H", "W"};
  for (int d = 0; d < 3; ++d) {
    const std::string D = kDim[d];
    w.constant("kWK" + D, s.kernel[d]);
    w.constant("kK" + D, g.taps[d]);
    w.constant("kS" + D, g.phases[d]);
    w.constant("kDil" + D, g.phases[d] > 1 ? s.dilation[d] : 1);
  }
  w.constant("kKGroups", r.kGroups);
  w.constant("kRowsK", r.rowsK);
  w.constant("kCinK", r.cinK);
  w.constant("kKPad", kPad);
  w.constant("kThreads", kWeightRowsThreads);
  w.constant("kOutSlot", kConvPackSlot);
  return weightRowsKernel(s, name, "conv_shift_rows.cuh", w.finish(), r.kGroups * r.rowsK * kPad,
                          std::to_string(r.kGroups * r.rowsK) + " product rows of " +
                              std::to_string(kPad) + " weights, TF32-rounded",
                          "the weights as conv_shift's product rows (conv_shift_rows.cuh)");
}

} // namespace

int64_t blockThreads(const ConvShiftTile &t, int storers) {
  // With storing warpgroups the producer is a whole warpgroup (setmaxnreg works on those).
  return t.bm / 64 * 128 + storers * 128 + (storers ? 128 : 32);
}

int64_t consumerRegisters(const ConvSpec &s, const ConvShiftTile &t) {
  const ShiftGrid g = shiftGrid(s);
  return t.bn / 2 +
         (shiftMode(s).registerA ? 4 * sliceSteps(s, shiftRows(s, g)) * volume(g.taps) : 0);
}

ShiftRegisters shiftRegisters(const ConvSpec &s, const ConvShiftTile &t, int storers) {
  ShiftRegisters r;
  if (!storers) {
    // ptxas's share for the launch bounds, in 128-thread granules.
    const int64_t threads = roundUp(blockThreads(t, 0), 128);
    r.consumer = std::min<int64_t>(255, 65536 / threads / 8 * 8);
    return r;
  }
  // setmaxnreg only moves registers within what the block was launched with: the launch
  // bounds' share a thread (in 8-register units) times the block. A storer holds about four
  // words per element of a line it stores (storeStagedLines' per-column offsets and phase
  // masks) beside ~56 for the rest; the producer's one working thread needs few; the
  // consumers get what is left (setmaxnreg's ceiling is 256). A block whose targets overdraw
  // its registers would wait in setmaxnreg.inc for ever.
  const int64_t threads = blockThreads(t, storers), consumers = t.bm / 64 * 128;
  const int64_t launched = threads * std::min<int64_t>(255, 65536 / threads / 8 * 8);
  const int64_t perLane = shiftGrid(s).phases[2] * t.bn / 32;
  r.producer = 40;
  r.storer = roundUp(56 + 4 * perLane, 8);
  r.consumer = std::min<int64_t>(240, (launched - 128 * r.producer - 128 * storers * r.storer) /
                                          consumers / 8 * 8);
  return r;
}

bool registersFit(const ConvSpec &s, const ConvShiftTile &t, int storers) {
  // A consumer's accumulators and weight fragments beside the ~32 registers the rest takes
  // (ptxas serialised the wgmmas of 128 x 256 and 256 x 128 tiles with weights in registers
  // when they did not fit: C7512).
  return consumerRegisters(s, t) <= shiftRegisters(s, t, storers).consumer - 32;
}

int storeWarpgroups(const ConvSpec &s, const ConvShiftTile &t) {
  // Plain stores (no epilogue math, no statistics) are bound by memory: one storing
  // warpgroup, writing each block's slices one after the other, beat one per consumer (S4,
  // H200: 0.496 ms against 0.578, and 0.53 without storers). With epilogue work the lines
  // are bound by the storers' issue: one per consumer (8 phase-walk corpus graphs with
  // activations, norms' statistics or pools: 1.26x over one storer, 1.01x over none).
  const int n = s.epilogue.isIdentity() && !s.accumulateStats ? 1 : t.bm / 64;
  return shiftMode(s).stagedLines && blockThreads(t, n) <= 1024 && registersFit(s, t, n) ? n : 0;
}

ShiftMode shiftMode(const ConvSpec &s) {
  const ShiftGrid g = shiftGrid(s);
  const ShiftRows r = shiftRows(s, g);
  ShiftMode m;
  m.registerA = r.groupsPerK > 1 && sliceSteps(s, r) * volume(g.taps) <= 8;
  m.stagedLines = g.phased() && 64 % g.phases[2] == 0 && g.phases[2] <= 32 &&
                  volume(s.out) < (int64_t(1) << 31);
  // The W taps of a stage from one box (measured on H100s against one box a tap, same
  // calls): S4 (8 taps a tile) 0.754 -> 0.732 ms; convt2d_s2_g8_gn_relu (4 taps, statistics
  // in the epilogue) 0.910 -> 0.919, so from 8 taps a tile on. The taps' first rows are
  // |step| apart (1 in a phase walk, the dilation otherwise) and must lie within the box's
  // 8 extra rows.
  if (g.taps[2] > 1 && std::abs(g.step[2]) * (g.taps[2] - 1) <= 8)
    m.wTaps = int(g.taps[2]);
  if (m.registerA && volume(g.taps) >= 8)
    m.wRun = m.wTaps;
  return m;
}

int maxStages(const ConvSpec &s, const ConvShiftTile &t) {
  const ShiftMode m = shiftMode(s);
  // With the weights in registers a stage is one small box: enough of them hold the next
  // tile's k tiles while the current tile's epilogue runs.
  const int64_t cap = m.registerA ? kMaxRegisterAStages : kMaxStages;
  return int(
      std::min<int64_t>(cap, (kSmemLimit - 1024 - stagingBytes(m, t)) / (stageBytes(m, t) + 16)));
}

ShiftGrid shiftGrid(const ConvSpec &s) {
  ShiftGrid g;
  for (int d = 0; d < 3; ++d) {
    if (s.transposed && s.stride[d] > 1) {
      // Output o = S * p + phi + base with base = S * P0 - pad, P0 = floor(pad / S), reads
      // input p + P0 - j at tap j (conv_shift.cuh's header).
      const int64_t S = s.stride[d], p0 = s.padding[d] / S;
      g.phases[d] = S;
      g.taps[d] = (s.kernel[d] - 1) * s.dilation[d] / S + 1;
      g.base[d] = S * p0 - s.padding[d];
      g.extent[d] = (s.out[d] - 1 + s.padding[d]) / S - p0 + 1;
      g.off[d] = p0;
      g.step[d] = -1;
    } else {
      // Direct: input = out - pad + dil * t; transposed (stride 1): input = out + pad - dil * t.
      g.taps[d] = s.kernel[d];
      g.extent[d] = s.out[d];
      g.off[d] = s.transposed ? s.padding[d] : -s.padding[d];
      g.step[d] = s.transposed ? -s.dilation[d] : s.dilation[d];
    }
    const int64_t last = g.off[d] + g.step[d] * (g.taps[d] - 1);
    const int64_t offMin = std::min(g.off[d], last), offMax = std::max(g.off[d], last);
    g.pitch[d] = std::max(
        {g.extent[d], s.in[d], g.extent[d] + offMax, s.in[d] - std::min<int64_t>(offMin, 0)});
  }
  g.rowPitch = roundUp(s.Cin, 4);
  return g;
}

ShiftRows shiftRows(const ConvSpec &s, const ShiftGrid &g) {
  ShiftRows r;
  const int64_t cinG = s.Cin / s.groups;
  if (cinG == 8 || cinG == 16)
    r.groupsPerK = std::min<int64_t>(32 / cinG, s.groups);
  r.kGroups = s.groups / r.groupsPerK;
  r.cinK = cinG * r.groupsPerK;
  r.rowsG = s.Cout / s.groups * volume(g.phases);
  r.rowsK = r.rowsG * r.groupsPerK;
  return r;
}

bool convShiftSupports(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  for (int d = 0; d < 3; ++d) {
    if (s.stride[d] != 1 && !s.transposed)
      return no("a direct convolution with a stride above 1");
    if (s.in[d] < 1 || s.out[d] < 1 || s.kernel[d] < 1 || s.dilation[d] < 1 || s.padding[d] < 0 ||
        s.stride[d] < 1)
      return no("a non-positive size, stride or dilation, or a negative padding");
  }
  if (s.groups < 1 || s.Cin % s.groups || s.Cout % s.groups)
    return no("groups do not divide the channels");
  // The phase walk would multiply zero rows for every grid row of such a phase (3/4 of the
  // products of a 2-D stride 2, dilation 2); conv_igemm's phase kernels give it one tap.
  if (s.transposed && !everyPhaseHasTaps(s))
    return no("an output phase that no tap reaches (kernel shorter than the stride, or "
              "dilation sharing a factor with it)");
  const int64_t cinG = s.Cin / s.groups;
  const ShiftGrid g = shiftGrid(s);
  const ShiftRows r = shiftRows(s, g);
  if (r.groupsPerK > 1) {
    // Small groups share a k tile: a warpgroup's 64 rows must meet whole groups (or lie in
    // one) and never two k groups.
    if (r.cinK != 32 || s.groups % r.groupsPerK)
      return no("groups of " + std::to_string(cinG) +
                " input channels that do not fill whole 32-channel k tiles");
    if (r.rowsK % 64 || (r.rowsG % 64 && 64 % r.rowsG))
      return no("small groups whose product rows (output channels x phases: " +
                std::to_string(r.rowsG) + " a group) do not fill 64-row slices");
  } else {
    if (s.groups > 1 && cinG % 32)
      return no("groups whose input channels are not whole 32-channel k tiles");
    // Each k tile copies a box of 32 channels (zeros past Cin); not measured on fewer.
    if (cinG < 32)
      return no("fewer than 32 input channels per group (other than groups of 8 or 16)");
  }
  if (g.rows(s) + volume(g.pitch) >= (int64_t(1) << 31))
    return no("too many grid rows for 32-bit TMA coordinates");
  return true;
}

ConvShiftTile convShiftDefaultTile(const ConvSpec &s) {
  const ShiftGrid g = shiftGrid(s);
  const ShiftRows r = shiftRows(s, g);
  ConvShiftTile t;
  if (g.phased() || r.groupsPerK > 1) {
    // Staged lines take bm x (bn + 8) floats of shared memory beside the stages: 128 x 128
    // keeps 4 of them (the wide phase walk: 0.345-0.360 ms against 0.38-0.59 on other tiles
    // for a stride-2 k4 64 -> 128 ConvTranspose2d, H200), 9 with the weights in registers
    // (S4 0.549-0.552 ms against 0.645-0.822 on 64/128/256 x 64 and 64 x 128/256, kernel
    // harness with the predicated line stores). Two or more blocks an SM with fewer stages
    // lost on S4 (64 x 128 on 4 stages 0.94 ms, 64 x 64 on 4 or 6 0.77-0.88).
    t.bm = r.rowsK % 128 == 0 || r.groupsPerK == 1 ? 128 : 64;
    t.bn = 128;
  }
  t.stages = maxStages(s, t);
  return t;
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
  const ShiftGrid g = shiftGrid(s);
  const ShiftRows r = shiftRows(s, g);
  const int64_t cinG = s.Cin / s.groups, coutG = s.Cout / s.groups;
  // Small groups are measured only in the phase walk (S4: 8-channel groups, 8 phases);
  // without phases conv_mma keeps them.
  if (r.groupsPerK > 1 && !g.phased())
    return no("groups of " + std::to_string(cinG) +
              " input channels without a stride (conv_mma's; conv_shift's not measured there)");
  if (r.groupsPerK == 1 && roundUp(cinG, 32) * 4 > cinG * 5)
    return no("input channels that pad the 32-deep k tiles by more than a quarter");
  // The phase walk is asked only for convolutions the planner already sent to conv_igemm;
  // the rules below were measured on the stride-1 walk. The narrow and shallow rules leave
  // such convolutions to the input-box engine. Where its boxes copy over
  // kMaxBoxFloatsPerPosition floats a channel for each output (a tile's 128 positions
  // spanning several full rows of a plane that is not a multiple of 128 wide, or 3-D boxes of
  // three planes), the staged grid wins anyway: 64-channel tiles of 256 grid rows (128 x 128
  // for wider groups) whose stages hold the W taps' rows in one box. The input-box engine
  // keeps reductions and softmaxes over the channels, which conv_shift does not fuse.
  const ShiftMode mode = shiftMode(s);
  const bool narrow = roundUp(coutG, 128) * 3 > coutG * 4;
  const bool shallow = cinG * volume(s.kernel) < kMinReduction;
  const bool largeBoxes = !g.phased() && wgmmaBoxFloatsPerPosition(s) > kMaxBoxFloatsPerPosition;
  std::optional<ConvShiftTile> boxBound;
  if (largeBoxes && (narrow || shallow) && !mode.registerA && mode.wTaps > 1 && !s.channelReduce &&
      !s.softmax) {
    if (coutG <= 64)
      boxBound = ConvShiftTile{64, 256, 0, mode.wTaps};
    else
      boxBound = ConvShiftTile{128, 128, 0, mode.wTaps};
  }
  if (!g.phased() && !boxBound) {
    // 64-channel tiles read as many input rows per product as 128-channel ones read for two:
    // measured L2-bound (a 32 -> 64 channel 3x3 conv 1.03 ms against 0.63 on the input-box
    // engine, H200), so narrower groups stay there; 96 or 192 channels still fill 3/4 of the
    // 128-channel tiles.
    if (narrow)
      return no("output channels per group that fill under 3/4 of 128-channel tiles");
    // Each tile's epilogue (the stores and statistics of 128 x 256 outputs) runs while no
    // product does: with a shallow reduction it outweighs the faster products (H200, kernel
    // harness: Conv1d(64 -> 128, k 5), 320 terms, 0.54 ms against 0.25 on the input-box
    // engine; Conv2d(64 -> 128, k 3) on 128 px, 576 terms, 0.60 on the best tile against
    // 0.56; Conv2d(128 -> 128, k 3), 1152 terms, 0.47 against 0.50; S0, 1728 terms, 0.85
    // against 1.56). Between 576 and 1152 terms is not measured.
    if (shallow)
      return no("a reduction of fewer than " + std::to_string(kMinReduction) +
                " terms (each tile's epilogue would outweigh its faster products)");
  }
  // Each grid row holds one output per phase.
  if (double(g.rows(s) * volume(g.phases)) > kMaxGridWaste * double(s.N * volume(s.out)))
    return no("the padded grid would compute over half as many rows again as there are outputs");
  // Wide and deep ones too stay where the input-box engine's boxes are small: it has
  // overtaken conv_shift there since it alternates its warpgroups (H200, 2026-11-28:
  // conv2d_wide_relu_gn, 128 -> 128 on 64-wide rows, 0.453 ms against 0.504;
  // convt2d_kb11_bn_tanh_maxpool_gn 1.184 against 1.199; a 128 -> 128 3x3 on 128-wide rows
  // in the harness 0.399 against 0.494).
  if (!g.phased() && !largeBoxes && convWgmmaTile(s))
    return no("input boxes of at most 4.2 floats a channel per output (the input-box "
              "engine's, faster there)");
  if (g.phased())
    return convShiftDefaultTile(s);
  if (boxBound) {
    boxBound->stages = maxStages(s, *boxBound);
    return boxBound;
  }
  ConvShiftTile t;
  if (tileCount(s, g, t) < 2 * kSms)
    t.bn = 128;
  t.stages = maxStages(s, t);
  return t;
}

llvm::Expected<std::vector<KernelSource>> emitConvShift(const ConvSpec &s,
                                                        const ConvShiftTile &tile) {
  if ((tile.bm != 64 && tile.bm != 128 && tile.bm != 256) ||
      (tile.bn != 64 && tile.bn != 128 && tile.bn != 256) || tile.bm * tile.bn > 128 * 256 ||
      tile.stages < 2)
    return makeError(s.kernelName + ": not a conv_shift tile (64, 128 or 256 x 64, 128 or 256, "
                                    "at most 128 x 256, at least 2 stages)");
  const ShiftMode mode = shiftMode(s);
  if (tile.wRun != 1 && mode.registerA)
    return makeError(s.kernelName + ": conv_shift holds these weights in registers and shares "
                                    "their stages between W taps by itself (a tile's wRun of 1)");
  if (tile.wRun != 1 && tile.wRun != mode.wTaps)
    return makeError(s.kernelName + ": conv_shift cannot share a stage between " +
                     std::to_string(tile.wRun) + " W taps (" + std::to_string(mode.wTaps) +
                     " can)");
  if (sharedBytes(mode, tile) > kSmemLimit)
    return makeError(s.kernelName + ": conv_shift's stages do not fit shared memory");
  std::string why;
  if (!convShiftSupports(s, &why))
    return makeError("conv_shift cannot run " + s.kernelName + ": " + why);
  const ShiftGrid g = shiftGrid(s);
  const ShiftRows r = shiftRows(s, g);
  if (r.groupsPerK > 1 && r.rowsK % tile.bm)
    return makeError(s.kernelName +
                     ": conv_shift's small groups need tiles of whole k groups' "
                     "rows (" +
                     std::to_string(r.rowsK) + " rows, tile of " + std::to_string(tile.bm) + ")");
  if (mode.registerA && !registersFit(s, tile, 0))
    return makeError(s.kernelName + ": conv_shift's " + std::to_string(consumerRegisters(s, tile)) +
                     " accumulator and weight registers do not fit a " + std::to_string(tile.bm) +
                     "-row tile's threads");
  const int storers = storeWarpgroups(s, tile);
  if (tileCount(s, g, tile) > std::numeric_limits<int>::max())
    return makeError(s.kernelName + ": too many conv_shift tiles for 32-bit tile indices");
  const int64_t cinG = s.Cin / s.groups;
  const int64_t taps = volume(g.taps), kPad = (r.cinK + 31) / 32 * taps * 32;
  // The phase walk and small groups need product rows conv_pack.cuh does not write.
  const bool productRows = g.phased() || r.groupsPerK > 1;

  std::vector<KernelSource> kernels;
  kernels.push_back(productRows ? emitShiftRows(s, g, r, kPad)
                                : emitConvWeightRows(s, kPad, 32, true));
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
    w.constant("kK" + D, g.taps[d]);
    w.constant("kPitch" + D, g.pitch[d]);
    w.constant("kOff" + D, g.off[d]);
    w.constant("kStep" + D, g.step[d]);
    w.constant("kS" + D, g.phases[d]);
    w.constant("kBase" + D, g.base[d]);
  }
  w.constantBool("kPhased", g.phased());
  w.constant("kKGroups", r.kGroups);
  w.constant("kCinK", r.cinK);
  w.constant("kRowsK", r.rowsK);
  w.constantBool("kRegisterA", mode.registerA);
  w.constantBool("kStagedLines", mode.stagedLines);
  w.constant("kStoreWarpgroups", storers);
  // setmaxnreg's targets; 0 (unused) without storers.
  const ShiftRegisters regs = storers ? shiftRegisters(s, tile, storers) : ShiftRegisters{};
  w.constant("kProducerRegs", regs.producer);
  w.constant("kStorerRegs", regs.storer);
  w.constant("kConsumerRegs", regs.consumer);
  w.constantBool("kHasBias", s.hasBias);
  w.constantBool("kStoreOutput", s.storeOutput);
  w.constantBool("kAccumulateStats", s.accumulateStats);
  w.constant("kBM", tile.bm);
  w.constant("kBN", tile.bn);
  w.constant("kStages", tile.stages);
  w.constant("kBoxRows", boxRows(mode, tile));
  w.constant("kBoxCopyRows", boxCopyRows(boxRows(mode, tile)));
  // How the epilogue stores column pairs depends on it (conv_shift.cuh, storeTile).
  w.constantBool("kEpilogueReadsTensors", s.epilogue.readsTensors());
  w.anchorEpilogue("Epilogue", s.epilogue);

  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "conv_shift.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned(tileCount(s, g, tile)), 1, 1};
  k.launch.persistent = true;
  k.launch.block = {unsigned(blockThreads(tile, storers)), 1, 1};
  k.launch.sharedBytes = unsigned(sharedBytes(mode, tile));
  TensorMapSpec rows;
  rows.slot = kConvPackSlot;
  rows.dims = {uint64_t(kPad), uint64_t(r.kGroups * r.rowsK)};
  rows.strides = {uint64_t(kPad) * 4};
  rows.box = {32, uint32_t(tile.bm)};
  rows.swizzle128 = true;
  TensorMapSpec staged;
  staged.slot = kConvStageSlot;
  staged.dims = {uint64_t(s.Cin), uint64_t(g.rows(s))};
  staged.strides = {uint64_t(g.rowPitch) * 4};
  staged.box = {32, uint32_t(boxCopyRows(boxRows(mode, tile)))};
  staged.swizzle128 = true;
  k.launch.tensorMaps = {rows, staged};
  k.tileConfig = "shifted rows, " + std::to_string(tile.bm) + "x" + std::to_string(tile.bn) +
                 "x32 over a " + gridName(s, g) + " grid";
  if (g.phased())
    k.tileConfig += " (" + std::to_string(volume(g.phases)) + " output phases as rows)";
  if (r.groupsPerK > 1)
    k.tileConfig += ", " + std::to_string(r.groupsPerK) + " groups a k tile";
  if (mode.registerA)
    k.tileConfig += ", weights in registers";
  if (boxRows(mode, tile) > tile.bn)
    k.tileConfig +=
        ", each stage the " + std::to_string(stageTaps(mode, tile)) + " W taps' rows in one box";
  if (mode.stagedLines)
    k.tileConfig += ", output lines staged";
  k.tileConfig += ", wgmma, " + std::to_string(tile.bm / 64) + " warpgroups + " +
                  (storers ? std::to_string(storers) + " storing + a TMA warpgroup"
                           : std::string("a TMA warp")) +
                  ", " + std::to_string(tile.stages) + " stages, tf32";
  const int64_t outVol = volume(s.out);
  // Useful products: each output's taps (a phased transposed convolution: each input's taps,
  // whole, which counts the few that land in the padding too).
  k.flops = g.phased() ? 2.0 * double(s.N * volume(s.in)) * double(s.Cin) *
                             double(s.Cout / s.groups * volume(s.kernel))
                       : 2.0 * double(s.N * outVol) * double(s.Cout) * double(cinG * taps);
  k.bytes = 4.0 * double(g.rows(s) * g.rowPitch + r.kGroups * r.rowsK * kPad +
                         (s.hasBias ? s.Cout : 0) + (s.storeOutput ? s.N * s.Cout * outVol : 0));
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
