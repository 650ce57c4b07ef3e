//===- compiler/PlanAnchors.cpp - planning conv / conv_transpose / GEMM groups -----===//
//
// An anchor group becomes one to three kernels:
//  - anchor + epilogue: one kernel of conv_igemm, conv_direct (conv_mma under TF32) or gemm
//    (conv_igemm runs a strided transposed convolution as one kernel per output phase, so
//    each conv anchor kernel below may be several launches on the same buffers);
//  - norm tail: the anchor kernel also accumulates per-(n, c) sums and sums of squares.
//    Then either a normalise kernel reads the stored anchor output, or, when running a
//    direct conv again costs less than writing its output and reading it back, the anchor
//    runs again and normalises in its own epilogue, so its output never goes through
//    memory between the two;
//  - norm + reduction tail: only the statistics are needed; a small kernel derives the
//    reduced values from them and the anchor output is never written;
//  - GEMM row-norm tail: the GEMM epilogue normalises each group of columns in its tile
//    and reduces the row; the GEMM output is never written.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Epilogue.h"
#include "compiler/PlanBuilder.h"
#include "compiler/kernels/ConvDirect.h"
#include "compiler/kernels/ConvIgemm.h"
#include "compiler/kernels/ConvMma.h"
#include "compiler/kernels/ConvPhases.h"
#include "compiler/kernels/ConvShift.h"
#include "compiler/kernels/Gemm.h"
#include "compiler/kernels/Generic.h"
#include "compiler/kernels/Norm.h"
#include "ir/Error.h"

#include <algorithm>
#include <optional>

namespace sinter {
namespace {

ConvSpec makeConvSpec(const Graph &g, const Op &op) {
  const TensorType &x = g.type(op.operands[0].value);
  const TensorType &w = g.type(op.operands[1].value);
  const TensorType &y = g.type(op.result);
  unsigned sd = x.rank() - 2;
  ConvSpec s;
  s.transposed = op.kind == OpKind::ConvTranspose;
  s.spatialDims = sd;
  s.N = x.shape[0];
  s.Cin = x.shape[1];
  s.Cout = y.shape[1];
  s.groups = op.getInt("groups");
  IntList stride = op.getSpatial("stride", sd), padding = op.getSpatial("padding", sd),
          dilation = op.getSpatial("dilation", sd);
  for (unsigned i = 0; i < sd; ++i) {
    unsigned d = 3 - sd + i;
    s.in[d] = x.shape[2 + i];
    s.out[d] = y.shape[2 + i];
    s.kernel[d] = w.shape[2 + i];
    s.stride[d] = stride[i];
    s.padding[d] = padding[i];
    s.dilation[d] = dilation[i];
  }
  s.hasBias = op.operands.size() == 3;
  return s;
}

/// Tensor cores pay off once a group fills a 32-wide tile of output channels and the
/// reduction is at least two 32-deep steps; below that the direct FFMA kernel, which reuses
/// each input value from registers instead of gathering an im2col tile, is faster (S1, with
/// 24 channels and 81 reduction terms, runs in 0.53 ms on tensor cores and 0.34 ms direct).
/// The reduction counted is that of one conv_igemm kernel: for a strided transposed
/// convolution, the mean over its output phases (Cin/groups * taps / stride volume).
/// Groups of 16 to 31 channels stay direct below kNarrowIgemmDepth reduction terms: with
/// tensor cores for them (from 128 terms, on a 128x16 or 128x32 tile) four corpus graphs of
/// 144 to 432 terms ran 1.4-1.6x slower on an H200 (docs/performance.md, 2026-11-23). Deeper
/// ones leave FFMA far behind: random chains of 16 or 24 output channels from 64 to 256 input
/// channels (1024-3456 terms) ran 3-10x slower than PyTorch eager on conv_direct.
constexpr int64_t kNarrowIgemmDepth = 512;

/// Narrow groups on sm_90a's wgmma engines (the input-box engine with 8-, 16- or 32-wide
/// tiles, conv_shift), fitted to 66 random chains on an H200 against the build before in the
/// same run (2026-11-29, docs/performance.md "Thirtieth session"):
/// - 16 to 31 channels of a strided transposed convolution from kNarrowPhasedIgemmDepth:
///   seven at 128-400 terms ran 1.18-9.6x faster than on conv_direct (conv_shift's phase
///   walk, or the input-box engine by phase).
/// - 8 to 15 channels from kTinyIgemmDepth, by output phase from kTinyPhasedIgemmDepth. An
///   8-wide wgmma reads each A value for 8 products, as FFMA does, so only deep reductions
///   gain: 1.32-6.1x at 1296-6400 terms, 0.26-0.97x at 72-432 (12 graphs); by phase 1.02-1.9x
///   at 216-1600 (one 0.82x at 400), 0.42x and 0.97x at 81 and 64.
/// - Neither on mma.sync (sm_80, 3xTF32): 8-channel groups ran 0.39-1.06x there at
///   256-2304 terms.
constexpr int64_t kNarrowPhasedIgemmDepth = 128;
constexpr int64_t kTinyIgemmDepth = 1024, kTinyPhasedIgemmDepth = 192;

constexpr int64_t kMinIgemmChannels = 32, kMinNarrowIgemmChannels = 16, kMinTinyIgemmChannels = 8,
                  kMinIgemmDepth = 64;

/// Whether `s` in TF32 runs on one of sm_90a's wgmma engines rather than on mma.sync.
bool runsOnWgmmaEngine(ConvSpec s, const PlanOptions &o) {
  if (!s.wgmma || o.precision == Precision::Fp32)
    return false;
  s.math = MathMode::Tf32;
  return convWgmmaTile(s).has_value() || convShiftTile(s).has_value();
}

/// Why groups of `s`'s output channels stay off the implicit GEMM at its reduction depth, or
/// nothing where the depth is enough (the channel and depth rules above).
std::optional<std::string> channelDepthRule(const ConvSpec &s, const PlanOptions &o) {
  const int64_t coutG = s.Cout / s.groups, depth = convIgemmMeanReduction(s);
  const bool phased = s.transposed && s.strided();
  const std::string have = std::to_string(coutG) + " output channels a group and " +
                           std::to_string(depth) + " reduction terms";
  if (coutG < kMinTinyIgemmChannels)
    return have + ": the implicit GEMM takes groups of at least " +
           std::to_string(kMinTinyIgemmChannels) + " channels";
  if (depth < kMinIgemmDepth)
    return have + ": under the implicit GEMM's " + std::to_string(kMinIgemmDepth) + " terms";
  if (coutG >= kMinIgemmChannels)
    return std::nullopt;
  if (coutG >= kMinNarrowIgemmChannels) {
    if (depth >= kNarrowIgemmDepth ||
        (phased && depth >= kNarrowPhasedIgemmDepth && runsOnWgmmaEngine(s, o)))
      return std::nullopt;
    return have + ": groups of " + std::to_string(kMinNarrowIgemmChannels) + "-" +
           std::to_string(kMinIgemmChannels - 1) + " channels take tensor cores from " +
           std::to_string(kNarrowIgemmDepth) + " terms (by output phase from " +
           std::to_string(kNarrowPhasedIgemmDepth) + " on sm_90a's wgmma engines in TF32)";
  }
  if (depth >= (phased ? kTinyPhasedIgemmDepth : kTinyIgemmDepth) && runsOnWgmmaEngine(s, o))
    return std::nullopt;
  return have + ": groups of " + std::to_string(kMinTinyIgemmChannels) + "-" +
         std::to_string(kMinNarrowIgemmChannels - 1) + " channels take tensor cores only on " +
         "sm_90a's wgmma engines in TF32, from " + std::to_string(kTinyIgemmDepth) +
         " terms (by output phase from " + std::to_string(kTinyPhasedIgemmDepth) + ")";
}

/// A strided transposed convolution with output phases that no tap reaches runs those phases
/// as kernels of one tap of zeros (ConvIgemm.cpp): products that count for nothing and every
/// stride-th word of the output stored by each kernel. Below this mean reduction it stays on
/// conv_direct. Fitted to 20 random chains on an H200 (2026-11-29, against conv_direct in the
/// same runs): means of 64-72 terms ran 0.73-0.92x (two 1.02x and 1.29x), 108 and more
/// 1.28-11.6x (one exception: a stride-3 kernel of 2 taps, 113 terms, memory-bound, 0.89x).
constexpr int64_t kMinTaplessIgemmDepth = 96;

bool useIgemm(const ConvSpec &s, const PlanOptions &o, std::string *whyNot = nullptr) {
  const int64_t depth = convIgemmMeanReduction(s);
  if (auto rule = channelDepthRule(s, o)) {
    if (whyNot)
      *whyNot = *rule;
    return false;
  }
  if (depth < kMinTaplessIgemmDepth && s.transposed && !everyPhaseHasTaps(s)) {
    if (whyNot)
      *whyNot = std::to_string(depth) +
                " reduction terms and output phases that no tap "
                "reaches, under the implicit GEMM's " +
                std::to_string(kMinTaplessIgemmDepth) + " terms for such convolutions";
    return false;
  }
  std::string why;
  if (convIgemmSupports(s, &why))
    return true;
  if (whyNot)
    *whyNot = "the implicit GEMM cannot take it: " + why;
  return false;
}

/// Strided transposed convolutions of small channel groups (8 or 16 input channels) with at
/// least 4 output phases go to conv_shift's phase walk on sm_90a where TF32 is allowed and
/// convShiftTile takes them: useIgemm leaves them (fewer than 32 output channels a group) and
/// conv_mma lost on them (useDirectMma), so without this they run on FFMA. The caller treats
/// the choice as conv_igemm's (emitConvIgemm hands it to conv_shift). Measured on an H200
/// against conv_direct: S4 (8 phases) 0.552 ms against 0.612, convt2d_s2_g8_gn_relu (4
/// phases, statistics) 0.788 against 0.986; convt1d_s2_g16_tanh (2 phases, 1.5 taps a phase)
/// lost, 0.542 against 0.487: its product, bound by a per-output epilogue on 8 consumer
/// warps, costs about the same per output while FFMA's shallow reduction costs less.
constexpr int64_t kMinShiftSmallGroupPhases = 4;

bool useShiftSmallGroups(const ConvSpec &s, const PlanOptions &o) {
  const int64_t cinG = s.Cin / std::max<int64_t>(s.groups, 1);
  if (!s.wgmma || o.precision == Precision::Fp32 || !s.transposed || (cinG != 8 && cinG != 16) ||
      s.stride[0] * s.stride[1] * s.stride[2] < kMinShiftSmallGroupPhases)
    return false;
  ConvSpec t = s;
  t.math = MathMode::Tf32;
  return convShiftTile(t).has_value();
}

/// Below this share of useful products (ConvMma.h) a direct convolution stays on FFMA: a
/// depthwise convolution fills 1/8 of each n8 tile and is memory-bound either way.
constexpr double kMinMmaUsefulShare = 0.3;
/// Below this reduction depth (input channels per group x taps) too, unless the group's
/// channels fill whole k8 steps: on an H200 the 2-D convolutions of 3 channels x 9 taps (27
/// terms padded to 32, per-lane offsets) ran 1.5x slower on conv_mma than on FFMA, which
/// reuses each input value for every output channel from registers (corpus: conv2d_in_div,
/// conv2d_softmax_c_maxpool); 8 channels x 3 taps (conv1d_dil_s2_gn_gelu_avgpool) and depths
/// of 72 and more (S1, S2, five corpus graphs) ran 1.05-1.6x faster.
constexpr int64_t kMinMmaReduction = 64;

/// Whether the target has TF32 mma.sync (sm_80 and later).
bool hasTf32Mma(llvm::StringRef arch) {
  unsigned v = 0;
  return arch.consume_front("sm_") && !arch.take_while(llvm::isDigit).getAsInteger(10, v) &&
         v >= 80;
}

/// A convolution that conv_igemm does not take runs direct: on conv_mma's TF32 tensor cores
/// where the precision allows TF32, the target has them and the shape passes the two
/// thresholds above on a four-warp tile, else in FFMA. (Tiles of fewer warps, where the
/// weights and box of a deep group leave no room for more in shared memory, lost too:
/// convt3d_lse_hswish_sub_clamp, 16 channels x 27 taps on 64-thread blocks, ran 1.66x
/// slower than on FFMA. 1-D outputs too short for four m16 tiles are exempt.)
/// The decision is made once per group, before the tail picks the passes, so it is made for
/// the statistics pass, whose per-thread sums leave the least room: a shape that fits only
/// without them (many channels, a deep mixed-tap reduction) stays on FFMA in every pass.
bool useDirectMma(const ConvSpec &s, const PlanOptions &o, std::string *whyNot = nullptr) {
  auto no = [&](std::string why) {
    if (whyNot)
      *whyNot = std::move(why);
    return false;
  };
  ConvSpec stats = s;
  stats.accumulateStats = true;
  if (o.precision == Precision::Fp32)
    return no("the fp32 precision allows no TF32");
  if (!hasTf32Mma(o.arch))
    return no(o.arch + " has no TF32 mma.sync");
  std::string why;
  if (!convMmaSupports(stats, &why))
    return no(why);
  // conv_mma walks a strided transposed convolution by output phase, but there it lost: S4
  // (8 x 8 channels per group, 8 phases as columns) took 0.88-1.29 ms on seven tiles against
  // 0.66-0.68 ms on FFMA (H100, 2026-11-25; docs/kernels-direct.md, "conv_mma by phase").
  if (s.transposed && s.strided())
    return no("a strided transposed convolution measured faster on FFMA");
  int64_t cinG = s.Cin / s.groups, depth = cinG * s.kernel[0] * s.kernel[1] * s.kernel[2];
  if (convMmaUsefulShare(s) < kMinMmaUsefulShare)
    return no("under " + std::to_string(int(kMinMmaUsefulShare * 100)) +
              "% of mma.sync's products would be useful");
  if (depth < kMinMmaReduction && cinG % 8)
    return no("a shallow reduction (" + std::to_string(depth) +
              " terms) of channels that do not fill k8 steps");
  if (chooseConvMmaTile(stats).warps != 4 && s.spatialDims != 1)
    return no("a four-warp tile does not fit shared memory");
  return true;
}

/// Sustained rates the recompute decision uses: the direct FFMA template reaches about 30
/// TFLOP/s on H100/H200 (docs/kernels-direct.md); conv_mma, counting its padded products,
/// 35 on S2's statistics pass, where the per-element epilogue (GELU, statistics) and not the
/// products set the time (docs/kernels-direct.md, "conv_mma"); DRAM about 3 TB/s. (With row
/// reuse and the branch-free epilogue that pass ran 49 TFLOP/s on an H100, timed with an
/// experimental GELU; at that rate S2's two plans tie, 1.58 + 2.54 ms against about 2.45 +
/// 1.5, so the rate was left and S2 keeps storing: "Row reuse" in the same doc.)
constexpr double kDirectConvFlopsPerSecond = 25e12;
constexpr double kDirectMmaFlopsPerSecond = 35e12;
constexpr double kDramBytesPerSecond = 3e12;

/// The FLOPs of a direct convolution's useful products (a transposed one's by output phase).
double directConvFlops(const ConvSpec &s) {
  int64_t kvol = s.kernel[0] * s.kernel[1] * s.kernel[2];
  double flops = 2.0 * s.N * s.Cout * double(s.out[0] * s.out[1] * s.out[2]) *
                 double(s.Cin / s.groups) * double(kvol);
  if (s.transposed)
    flops /= double(s.stride[0] * s.stride[1] * s.stride[2]);
  return flops;
}

/// Whether running the anchor a second time (and normalising in its epilogue) is cheaper
/// than writing its output and reading it back in a normalise kernel.
bool recomputeIsCheaper(const ConvSpec &s, bool igemm, int64_t xBytes, int64_t yBytes) {
  if (igemm)
    return false;
  double flops = directConvFlops(s);
  double rate = kDirectConvFlopsPerSecond;
  if (s.math == MathMode::Tf32) {
    flops /= convMmaUsefulShare(s);
    rate = kDirectMmaFlopsPerSecond;
  }
  double again = std::max(flops / rate, xBytes / kDramBytesPerSecond);
  return again < 2.0 * yBytes / kDramBytesPerSecond;
}

/// Whether a convolution that conv_mma would run (`mma`, TF32) is cheaper on conv_direct in
/// FFMA with its tails (a softmax and a pool, or a reduction over the channels) in the kernel,
/// by the rates above: FFMA's slower products against y's trips through DRAM for the
/// standalone softmax (read and write), pool or reduction (read, smaller write). Measured on
/// an H100: conv3d_softmax_maxpool_maxpool (3 channels x 27 taps, y 0.94 GB) 1.974 -> 1.250 ms
/// on conv_direct (the model: 1.53 against 2.17); conv3d_div_maxpool_mean_bias_sum (8 x 27,
/// y 0.10 GB) 0.198 on conv_mma against 0.363 (the model: 0.45 against 0.39).
bool tailMovesToDirect(const Graph &g, const Op &anchor, const ConvTailOps &tail,
                       const ConvSpec &mma) {
  const Op *softmax = tail.softmax, *pool = tail.pool, *reduce = tail.reduce;
  double flops = directConvFlops(mma);
  double xBytes = double(g.type(anchor.operands[0].value).bytes());
  double yBytes = double(g.type(anchor.result).bytes());
  double outBytes = double(g.type(reduce    ? reduce->result
                                  : pool    ? pool->result
                                  : softmax ? softmax->result
                                            : anchor.result)
                               .bytes());
  double direct =
      std::max(flops / kDirectConvFlopsPerSecond, (xBytes + outBytes) / kDramBytesPerSecond);
  double onMma = std::max(flops / convMmaUsefulShare(mma) / kDirectMmaFlopsPerSecond,
                          (xBytes + yBytes) / kDramBytesPerSecond);
  if (softmax)
    onMma += 2.0 * yBytes / kDramBytesPerSecond;
  if (pool || reduce)
    onMma += (yBytes + outBytes) / kDramBytesPerSecond;
  return direct < onMma;
}

MathMode convMath(bool igemm, bool directMma, Precision p) {
  if (!igemm)
    return directMma ? MathMode::Tf32 : MathMode::Ffma;
  return p == Precision::Fp32 ? MathMode::Tf32x3 : MathMode::Tf32;
}

/// Appends the launches of one pass of the conv anchor `s`: one kernel, or with conv_igemm
/// on a strided transposed convolution one per output phase, in order, on the same slots.
llvm::Error launchConv(PlanBuilder &b, const ConvSpec &s, bool igemm, int gi, llvm::StringRef role,
                       const std::map<int, int> &slots) {
  if (!igemm)
    return b.launch(emitConvDirect(s), gi, role, s.math, slots);
  // On sm_90a (spec.wgmma) emitConvIgemm puts wide, deep TF32 convolutions of stride 1 on
  // conv_shift (per-tap GEMMs over the staged input) and the other TF32 convolutions whose
  // input walk has stride 1 on the wgmma engine (an input box per channel chunk, no im2col
  // gathers); the rest stay on mma.sync (docs/kernels-tensorcore.md).
  auto kernels = emitConvIgemm(s);
  if (!kernels)
    return withContext(kernels.takeError(), b.where(gi));
  assert(!slots.count(kConvPackSlot) && !slots.count(kConvStageSlot) &&
         "conv kernels read nothing else from the rows' and the staged input's slots");
  // Kernels that prepare an operand for the ones after them: the weight rows (conv_pack.cuh,
  // from the weight alone) and the input staged channels last (conv_stage.cuh, from x alone),
  // each written into a workspace of its own.
  const Op &anchor = b.graph.ops[b.fusion.groups[gi].root];
  std::map<int, int> all = slots;
  std::map<std::string, std::map<int, int>> prepSlots;
  auto isPack = [](const KernelSource &k) {
    return k.templateName == "conv_pack.cuh" || k.templateName == "conv_shift_rows.cuh";
  };
  for (const KernelSource &k : *kernels) {
    const bool pack = isPack(k);
    if (!pack && k.templateName != "conv_stage.cuh")
      continue;
    const WorkspaceNeed &out = k.workspace.front();
    const int operand = pack ? 1 : 0;
    all[out.slot] = b.workspace(b.graph.values[anchor.operands[operand].value].name +
                                    (pack ? ".rows" : ".staged"),
                                out.bytes);
    prepSlots[k.templateName] = {{operand, all.at(operand)}, {out.slot, all[out.slot]}};
  }
  for (KernelSource &k : *kernels) {
    auto prep = prepSlots.find(k.templateName);
    const bool isPrep = prep != prepSlots.end();
    const char *what = isPack(k) ? "weight rows" : "input staging";
    if (auto err = b.launch(std::move(k), gi, isPrep ? what : role,
                            isPrep ? MathMode::Ffma : s.math, isPrep ? prep->second : all))
      return err;
  }
  return llvm::Error::success();
}

/// The conv anchor's fixed slots plus the epilogue's extra operands.
std::map<int, int> convSlots(PlanBuilder &b, const Op &op, const SlotMap &extra) {
  std::map<int, int> slots{{0, b.bufferOf(op.operands[0].value)},
                           {1, b.bufferOf(op.operands[1].value)}};
  if (op.operands.size() == 3)
    slots[2] = b.bufferOf(op.operands[2].value);
  for (auto [slot, value] : extra.slots())
    slots[slot] = b.bufferOf(value);
  return slots;
}

NormSpec makeNormSpec(const Graph &g, const Op &norm, std::string name) {
  const TensorType &t = g.type(norm.operands[0].value);
  NormSpec n;
  n.kernelName = std::move(name);
  n.N = t.shape[0];
  n.C = t.shape[1];
  n.L = t.numel() / (n.N * n.C);
  n.groups = norm.kind == OpKind::GroupNorm ? norm.getInt("groups") : n.C;
  n.eps = norm.getFloat("eps");
  n.affine = norm.operands.size() == 3;
  return n;
}

/// A conv_mma anchor that finishes its group norm itself (ConvSpec::normTail): one kernel
/// stores the epilogue's values into the norm's output, sums them, and normalises each
/// (n, group) in place once it is complete, while it is still in L2. Against storing y and
/// normalising it in a second kernel this saves y's round trip through DRAM (S2: 4.4 GB,
/// about 1 ms on an H200); against recomputing, the second convolution pass.
llvm::Error planConvNormInKernel(PlanBuilder &b, int gi, ConvSpec spec, const NormSpec &ns) {
  const Graph &g = b.graph;
  const FusionGroup &grp = b.fusion.groups[gi];
  const Op &anchor = g.ops[grp.root];
  const Op &norm = g.ops[grp.norm];
  // One slot map for both chains: they share the kernel's slots 8..15.
  SlotMap extra(kFirstChainSlot);
  auto before = chainBody(g, grp.epilogue, anchor.result,
                          IndexSpace::conv(g.type(anchor.result).shape), extra);
  if (!before)
    return withContext(before.takeError(), b.where(gi));
  auto after = chainBody(g, grp.normEpilogue, norm.result,
                         IndexSpace::conv(g.type(norm.result).shape), extra);
  if (!after)
    return withContext(after.takeError(), b.where(gi));
  spec.kernelName = b.kernelName(gi, "");
  spec.epilogue = *before;
  spec.accumulateStats = true;
  spec.normTail = ConvNormTail{ns.groups, ns.eps, ns.affine, *after};
  auto kernel = emitConvDirect(spec);
  if (!kernel)
    return withContext(kernel.takeError(), b.where(gi));
  // Slot 4: the statistics, then the kernel's counters (its need says
  // how many bytes), zeroed before every run.
  int stats = b.workspace(g.values[norm.operands[0].value].name + ".stats",
                          kernel->workspace.front().bytes);
  b.fill(stats, kFillZero);
  std::map<int, int> slots = convSlots(b, anchor, extra);
  slots[3] = b.bufferOf(grp.output);
  slots[4] = stats;
  bindAffine(b, norm, slots);
  return b.launch(std::move(kernel), gi, "anchor + epilogue + group norm", spec.math, slots);
}

/// The conv anchor's spec with the planner's engine choice made: whether it runs on
/// conv_igemm (or conv_shift), and its math mode (FFMA on conv_direct, TF32 on conv_mma).
/// `why`, where given, receives the choice and its reason in one sentence (explain --why).
ConvSpec plannedConvSpec(const Graph &g, const Op &anchor, const PlanOptions &o, bool &igemm,
                         std::string *why = nullptr) {
  ConvSpec spec = makeConvSpec(g, anchor);
  spec.wgmma = o.arch == "sm_90a";
  std::string notIgemm, notMma;
  const bool implicit = useIgemm(spec, o, &notIgemm);
  const bool shiftSmall = !implicit && useShiftSmallGroups(spec, o);
  igemm = implicit || shiftSmall;
  const bool mma = !igemm && useDirectMma(spec, o, &notMma);
  spec.math = convMath(igemm, mma, o.precision);
  if (why) {
    const int64_t coutG = spec.Cout / spec.groups;
    *why = implicit ? "tensor cores (implicit GEMM): " + std::to_string(coutG) +
                          " output channels a group and " +
                          std::to_string(convIgemmMeanReduction(spec)) + " reduction terms"
           : shiftSmall ? "tensor cores (conv_shift's phase walk): a strided transposed "
                          "convolution of " +
                              std::to_string(spec.Cin / spec.groups) + "-channel groups"
           : mma ? "direct on TF32 mma.sync (conv_mma): " + notIgemm
                 : "direct in FFMA (conv_direct): " + notIgemm + "; not on mma.sync: " + notMma;
  }
  return spec;
}

/// The pool tail of `pool` (its windows, the pooled size) without its chain.
ConvPoolTail makePoolTail(const Graph &g, const Op &pool) {
  const TensorType &out = g.type(pool.result);
  unsigned sd = out.rank() - 2;
  IntList window = pool.getSpatial("kernel_size", sd);
  ConvPoolTail p;
  p.max = pool.kind == OpKind::MaxPool;
  for (unsigned i = 0; i < sd; ++i) {
    p.window[3 - sd + i] = window[i];
    p.out[3 - sd + i] = out.shape[2 + i];
  }
  return p;
}

/// norm_reduce.cuh for group gi's reduction over whole planes (grp.reduce, over the spatial
/// dims and maybe C) from the per-(n, c) sums in workspace `sums`, with the chain after it:
/// of the normalised tensor (`normalised`: the group's norm, its gamma and beta) or of the
/// values the sums were gathered from.
llvm::Error launchPlaneReduce(PlanBuilder &b, int gi, NormSpec &ns, bool normalised, int sums,
                              const std::string &role) {
  const Graph &g = b.graph;
  const FusionGroup &grp = b.fusion.groups[gi];
  const Op &red = g.ops[grp.reduce];
  bool overChannels = false;
  foldsWholePlanes(red, g.type(red.operands[0].value).rank(), &overChannels);
  SlotMap post(kFirstChainSlot);
  auto postBody = chainBody(g, grp.reduceEpilogue, red.result,
                            IndexSpace::flat(g.type(red.result).shape), post);
  if (!postBody)
    return withContext(postBody.takeError(), b.where(gi));
  ns.post = *postBody;
  std::map<int, int> slots{{4, sums}, {3, b.bufferOf(grp.output)}};
  if (normalised)
    bindAffine(b, g.ops[grp.norm], slots);
  for (auto [slot, value] : post.slots())
    slots[slot] = b.bufferOf(value);
  return b.launch(emitNormReduce(ns, overChannels, red.kind == OpKind::Mean, normalised), gi,
                  role, MathMode::Ffma, slots);
}

/// A pass of conv anchor `spec` that stores nothing and adds up, per (n, c), its epilogue's
/// values (and, unless `sumsOnly`, their squares) into workspace `stats`: the statistics a
/// norm needs before anything is normalised, or the plane sums of a reduction.
llvm::Error launchStatsPass(PlanBuilder &b, int gi, ConvSpec spec, bool igemm, const SlotMap &extra,
                            int stats, bool sumsOnly, llvm::StringRef suffix,
                            llvm::StringRef role) {
  spec.kernelName = b.kernelName(gi, suffix);
  spec.storeOutput = false;
  spec.accumulateStats = true;
  spec.sumsOnly = sumsOnly;
  std::map<int, int> slots = convSlots(b, b.graph.ops[b.fusion.groups[gi].root], extra);
  slots[4] = stats;
  return launchConv(b, spec, igemm, gi, role, slots);
}

} // namespace

bool convRunsTail(const Graph &graph, const Op &anchor, const ConvTailOps &ops,
                  const PlanOptions &options, std::string &why) {
  bool igemm = false;
  ConvSpec spec = plannedConvSpec(graph, anchor, options, igemm);
  const Op *softmax = ops.softmax, *pool = ops.pool;
  // The wgmma input-box engine runs a reduction, or a softmax without a pool, over the
  // channels one tile holds.
  if (igemm && (ops.reduce || (softmax && !pool))) {
    if (ops.reduce)
      spec.channelReduce = ConvChannelReduce();
    else
      spec.softmax = ConvChannelSoftmax{softmax->kind == OpKind::LogSoftmax, FunctorBody()};
    return convIgemmRunsChannelTail(spec, &why);
  }
  const char *tail = ops.reduce ? "reduce over the channels"
                     : softmax  ? "take a softmax over the channels"
                                : "pool";
  // It pools on tiles of whole windows where they fit (convIgemmRunsPool).
  if (igemm && pool && !softmax) {
    spec.pool = makePoolTail(graph, *pool);
    return convIgemmRunsPool(spec, &why);
  }
  if (igemm) {
    why = std::string("the convolution runs on conv_igemm, which does not ") + tail +
          " in its kernel (conv_direct does)";
    return false;
  }
  if (spec.math == MathMode::Tf32) {
    if (!tailMovesToDirect(graph, anchor, ops, spec)) {
      why = std::string("the convolution runs on conv_mma, which does not ") + tail +
            " in its kernel; by the model, conv_mma and a separate kernel cost less than " +
            "conv_direct in FFMA with it";
      return false;
    }
    spec.math = MathMode::Ffma;
  }
  spec.kernelName = "conv_direct"; // names the template in `why`
  if (softmax)
    spec.softmax = ConvChannelSoftmax{softmax->kind == OpKind::LogSoftmax, FunctorBody()};
  if (pool)
    spec.pool = makePoolTail(graph, *pool);
  if (ops.reduce)
    spec.channelReduce = ConvChannelReduce();
  return convDirectRunsTails(spec, &why);
}

namespace {

llvm::Error planConvGroup(PlanBuilder &b, int gi) {
  const Graph &g = b.graph;
  const FusionGroup &grp = b.fusion.groups[gi];
  const Op &anchor = g.ops[grp.root];
  bool igemm = false;
  std::string why;
  ConvSpec spec = plannedConvSpec(g, anchor, b.options, igemm, &why);
  b.noteEngine(gi, std::move(why));
  const TensorType &yt = g.type(anchor.result);
  IndexSpace space = IndexSpace::conv(yt.shape);
  SlotMap extra(kFirstChainSlot);
  auto epi = chainBody(g, grp.epilogue, anchor.result, space, extra);
  if (!epi)
    return withContext(epi.takeError(), b.where(gi));
  spec.epilogue = *epi;

  if (grp.tail == TailKind::None) {
    spec.kernelName = b.kernelName(gi, "");
    std::map<int, int> slots = convSlots(b, anchor, extra);
    slots[3] = b.bufferOf(grp.output);
    if (!grp.gatherStats)
      return launchConv(b, spec, igemm, gi, "anchor + epilogue", slots);
    // A norm+epilogue+reduce group normalises this output: its statistics come from here.
    int stats = b.workspace(g.values[grp.output].name + ".stats", spec.N * spec.Cout * 16);
    b.fill(stats, kFillZero);
    spec.accumulateStats = true;
    slots[4] = stats;
    b.setStatsOf(grp.output, stats);
    return launchConv(b, spec, igemm, gi, "anchor + epilogue + statistics", slots);
  }

  if (grp.tail == TailKind::Pool || grp.tail == TailKind::Softmax) {
    // The fuse pass took these ops because convRunsTail said this kernel runs them: conv_direct,
    // or conv_igemm's wgmma engine for a softmax or a pool (not both).
    if (!igemm && spec.math == MathMode::Tf32 &&
        tailMovesToDirect(g, anchor,
                          {grp.softmax >= 0 ? &g.ops[grp.softmax] : nullptr,
                           grp.pool >= 0 ? &g.ops[grp.pool] : nullptr, nullptr},
                          spec)) {
      spec.math = MathMode::Ffma;
      b.noteEngine(gi, "moved to conv_direct in FFMA: its softmax or pool in the kernel saves "
                       "more than FFMA's products cost (tailMovesToDirect)");
    }
    if (igemm ? grp.pool >= 0 && grp.softmax >= 0 : spec.math != MathMode::Ffma)
      return makeError(b.where(gi) + ": a softmax and a pool tail need the convolution on " +
                       "conv_direct, one of them on conv_direct or conv_igemm's wgmma engine");
    std::string role = "anchor + epilogue";
    if (grp.softmax >= 0) {
      const Op &softmax = g.ops[grp.softmax];
      auto post = chainBody(g, grp.softmaxEpilogue, softmax.result,
                            IndexSpace::conv(g.type(softmax.result).shape), extra);
      if (!post)
        return withContext(post.takeError(), b.where(gi));
      spec.softmax = ConvChannelSoftmax{softmax.kind == OpKind::LogSoftmax, *post};
      role += spec.softmax->log ? " + log_softmax" : " + softmax";
    }
    if (grp.pool >= 0) {
      const Op &pool = g.ops[grp.pool];
      spec.pool = makePoolTail(g, pool);
      auto post = chainBody(g, grp.poolEpilogue, pool.result,
                            IndexSpace::conv(g.type(pool.result).shape), extra);
      if (!post)
        return withContext(post.takeError(), b.where(gi));
      spec.pool->post = *post;
      role += spec.pool->max ? " + max pool" : " + average pool";
    }
    spec.kernelName = b.kernelName(gi, "");
    std::map<int, int> slots = convSlots(b, anchor, extra);
    slots[3] = b.bufferOf(grp.output);
    return launchConv(b, spec, igemm, gi, role, slots);
  }

  if (grp.tail == TailKind::ChannelReduce) {
    // The fuse pass took the reduction because convRunsTail said this kernel runs it: conv_igemm's
    // wgmma engine, or conv_direct in FFMA (conv_mma's convolutions move there where the
    // model says so).
    const Op &red = g.ops[grp.reduce];
    if (!igemm && spec.math == MathMode::Tf32 &&
        tailMovesToDirect(g, anchor, {nullptr, nullptr, &red}, spec)) {
      spec.math = MathMode::Ffma;
      b.noteEngine(gi, "moved to conv_direct in FFMA: its reduction over the channels in the "
                       "kernel saves more than FFMA's products cost (tailMovesToDirect)");
    }
    // The chain after the reduction indexes the reduced tensor by n and its position s
    // (without keepdim there is no channel dim to index).
    const Shape &rs = g.type(red.result).shape;
    IndexSpace space;
    space.shape = rs;
    space.runs = {{1, "n"}, {unsigned(rs.size()), "s"}};
    auto post = chainBody(g, grp.reduceEpilogue, red.result, space, extra);
    if (!post)
      return withContext(post.takeError(), b.where(gi));
    const ReductionKind kind = reductionKindOf(red.kind);
    spec.channelReduce = ConvChannelReduce{kind, *post};
    spec.kernelName = b.kernelName(gi, "");
    std::map<int, int> slots = convSlots(b, anchor, extra);
    slots[3] = b.bufferOf(grp.output);
    return launchConv(
        b, spec, igemm, gi,
        std::string("anchor + epilogue + ") + reductionName(kind) + " over the channels", slots);
  }

  if (grp.tail == TailKind::PlaneReduce) {
    // The epilogue adds up each (n, c) plane (the statistics a norm tail gathers); y is never
    // stored, and one small kernel turns the sums into the reduction and its chain.
    const Op &red = g.ops[grp.reduce];
    int sums = b.workspace(g.values[anchor.result].name + ".sums", spec.N * spec.Cout * 16);
    b.fill(sums, kFillZero);
    if (auto err = launchStatsPass(b, gi, spec, igemm, extra, sums, true, "sums",
                                   "anchor + epilogue + plane sums"))
      return err;
    NormSpec ns;
    ns.kernelName = b.kernelName(gi, "reduce");
    ns.N = spec.N, ns.C = spec.Cout, ns.groups = spec.Cout, ns.affine = false;
    ns.L = yt.numel() / (spec.N * spec.Cout);
    return launchPlaneReduce(b, gi, ns, false, sums,
                             std::string(reductionName(reductionKindOf(red.kind))) +
                                 " from the plane sums");
  }

  const Op &norm = g.ops[grp.norm];
  ValueId normIn = norm.operands[0].value;
  NormSpec ns = makeNormSpec(g, norm, "");
  if (grp.tail == TailKind::Norm && !igemm && spec.math == MathMode::Tf32 &&
      convMmaFinishesNorm(spec, ns.groups, nullptr, b.options.normInKernelWherePossible))
    return planConvNormInKernel(b, gi, spec, ns);
  int stats = b.workspace(g.values[normIn].name + ".stats", ns.N * ns.C * 2 * 8);
  b.fill(stats, kFillZero);

  if (grp.tail == TailKind::NormReduce) {
    // Statistics only: the anchor output is never written.
    if (auto err =
            launchStatsPass(b, gi, spec, igemm, extra, stats, false, "stats", "anchor statistics"))
      return err;
    ns.kernelName = b.kernelName(gi, "reduce");
    return launchPlaneReduce(b, gi, ns, true, stats, "reduce from statistics");
  }

  assert(grp.tail == TailKind::Norm && "conv groups have no row-norm tail");
  IndexSpace outSpace = IndexSpace::conv(g.type(norm.result).shape);
  int64_t xBytes = g.type(anchor.operands[0].value).bytes();
  bool recompute = recomputeIsCheaper(spec, igemm, xBytes, yt.bytes());
  if (!recompute) {
    spec.kernelName = b.kernelName(gi, "stats");
    spec.accumulateStats = true;
    std::map<int, int> slots = convSlots(b, anchor, extra);
    slots[3] = b.bufferOf(normIn);
    slots[4] = stats;
    if (auto err = launchConv(b, spec, igemm, gi, "anchor + epilogue + statistics", slots))
      return err;
    SlotMap post(kFirstChainSlot);
    auto postBody = chainBody(g, grp.normEpilogue, norm.result, outSpace, post);
    if (!postBody)
      return withContext(postBody.takeError(), b.where(gi));
    ns.kernelName = b.kernelName(gi, "normalize");
    ns.post = *postBody;
    std::map<int, int> nslots{{0, b.bufferOf(normIn)}, {3, b.bufferOf(grp.output)}, {4, stats}};
    bindAffine(b, norm, nslots);
    for (auto [slot, value] : post.slots())
      nslots[slot] = b.bufferOf(value);
    return b.launch(emitNormApply(ns), gi, "normalise + epilogue", MathMode::Ffma, nslots);
  }

  // Recompute: statistics pass, per-(n,c) scale and shift, then the anchor again with the
  // normalisation in its epilogue.
  if (auto err =
          launchStatsPass(b, gi, spec, igemm, extra, stats, false, "stats", "anchor statistics"))
    return err;
  int scaleShift = b.workspace(g.values[normIn].name + ".scale_shift", ns.N * ns.C * 8);
  ns.kernelName = b.kernelName(gi, "scale_shift");
  std::map<int, int> sslots{{4, stats}, {5, scaleShift}};
  bindAffine(b, norm, sslots);
  if (auto err =
          b.launch(emitNormScaleShift(ns), gi, "norm scale and shift", MathMode::Ffma, sslots))
    return err;
  // The epilogue: the anchor's chain, the normalisation as one FMA, the norm's chain.
  SlotMap extra2(kFirstChainSlot);
  auto before = chainBody(g, grp.epilogue, anchor.result, space, extra2);
  auto after = chainBody(g, grp.normEpilogue, norm.result, outSpace, extra2);
  if (!before)
    return withContext(before.takeError(), b.where(gi));
  if (!after)
    return withContext(after.takeError(), b.where(gi));
  std::string code = "float t = v;\n    { auto f = [&](float v) { " + before->code +
                     " }; t = f(t); }\n    { const float2 ss = __ldg(reinterpret_cast<const "
                     "float2 *>(b.p[5]) + (sinter::i64)n * " +
                     std::to_string(ns.C) +
                     " + c); t = t * ss.x + ss.y; }\n    { auto f = [&](float v) { " + after->code +
                     " }; t = f(t); }\n    return t;";
  ConvSpec applySpec = spec;
  applySpec.kernelName = b.kernelName(gi, "normalize");
  applySpec.epilogue.code = code;
  std::map<int, int> aslots = convSlots(b, anchor, extra2);
  aslots[3] = b.bufferOf(grp.output);
  aslots[5] = scaleShift;
  return launchConv(b, applySpec, igemm, gi, "anchor recomputed + normalise", aslots);
}

/// The batch shape of a matmul output and each operand's batch strides (0 = broadcast).
void matmulBatch(const TensorType &a, const TensorType &bt, GemmSpec &s) {
  auto batchOf = [](const TensorType &t) {
    Shape s;
    if (t.rank() > 2)
      s.assign(t.shape.begin(), t.shape.end() - 2);
    return s;
  };
  Shape ba = batchOf(a), bb = batchOf(bt);
  size_t rank = std::max(ba.size(), bb.size());
  while (ba.size() < rank)
    ba.insert(ba.begin(), 1);
  while (bb.size() < rank)
    bb.insert(bb.begin(), 1);
  int64_t sa = s.M * s.K, sb = s.K * s.N, sc = s.M * s.N;
  llvm::SmallVector<int64_t, 4> stA(rank), stB(rank), stC(rank);
  for (int d = int(rank) - 1; d >= 0; --d) {
    int64_t out = std::max(ba[d], bb[d]);
    stA[d] = ba[d] == 1 ? 0 : sa;
    stB[d] = bb[d] == 1 ? 0 : sb;
    stC[d] = sc;
    sa *= ba[d];
    sb *= bb[d];
    sc *= out;
    s.batchShape.insert(s.batchShape.begin(), out);
  }
  s.batchStrideA = stA;
  s.batchStrideB = stB;
  s.batchStrideC = stC;
}

/// A product with one output column (a linear layer of one feature, or a matmul by a vector
/// or a [K, 1] matrix shared by every row): a dot product per row. On the GEMM engine its
/// tiles are 64 rows of which one column is used, so a [2048, 8192] x [8192] product ran on
/// 32 blocks; as a sum over the rows of x with the vector applied as each element is loaded
/// (reduce.cuh, fp32 FMAs with compensated sums, split over blocks where rows are long) it
/// streams x at the memory's rate. Returns false (no launch) for other products.
llvm::Expected<bool> planGemv(PlanBuilder &b, int gi) {
  const Graph &g = b.graph;
  const FusionGroup &grp = b.fusion.groups[gi];
  const Op &anchor = g.ops[grp.root];
  const TensorType &at = g.type(anchor.operands[0].value);
  const TensorType &bt = g.type(anchor.operands[1].value);
  const TensorType &yt = g.type(anchor.result);
  if (grp.tail != TailKind::None || at.rank() < 1)
    return false;
  const int64_t K = at.shape.back();
  bool column = anchor.kind == OpKind::Linear
                    ? bt.shape[0] == 1
                    : bt.rank() == 1 || (bt.rank() == 2 && bt.shape[1] == 1 && at.rank() >= 2);
  if (!column || K < 2)
    return false;
  // The vector and the bias take two of the chain's slots here.
  llvm::SmallVector<ValueId, 2> own;
  for (size_t i = 1; i < anchor.operands.size(); ++i)
    own.push_back(anchor.operands[i].value);
  if (own.size() + chainSideTensors(g, grp.epilogue, {anchor.result}, own).size() >
      size_t(kChainSlots))
    return false;
  SlotMap extra(kFirstChainSlot);
  int wSlot = extra.slotFor(anchor.operands[1].value);
  ReduceSpec spec;
  spec.kernelName = b.kernelName(gi, "");
  spec.inShape = {at.numel() / K, K};
  spec.dims = {1};
  spec.kind = ReductionKind::Sum;
  spec.load.code = "return v * __ldg(static_cast<const float *>(b.p[" + std::to_string(wSlot) +
                   "]) + i % " + std::to_string(K) + "ll);";
  int biasSlot = anchor.operands.size() == 3 ? extra.slotFor(anchor.operands[2].value) : -1;
  auto epi = chainBody(g, grp.epilogue, anchor.result, IndexSpace::flat(yt.shape), extra);
  if (!epi)
    return withContext(epi.takeError(), b.where(gi));
  spec.post = *epi;
  if (biasSlot >= 0)
    spec.post.code = "v += __ldg(static_cast<const float *>(b.p[" + std::to_string(biasSlot) +
                     "]));\n    " + spec.post.code;
  std::map<int, int> slots{{0, b.bufferOf(anchor.operands[0].value)}, {3, b.bufferOf(grp.output)}};
  for (auto [slot, value] : extra.slots())
    slots[slot] = b.bufferOf(value);
  if (auto err = b.launch(emitReduce(spec), gi, "anchor + epilogue (a dot product per row)",
                          MathMode::Ffma, slots))
    return err;
  return true;
}

llvm::Error planGemmGroup(PlanBuilder &b, int gi) {
  const Graph &g = b.graph;
  const FusionGroup &grp = b.fusion.groups[gi];
  const Op &anchor = g.ops[grp.root];
  const TensorType &at = g.type(anchor.operands[0].value);
  const TensorType &bt = g.type(anchor.operands[1].value);
  const TensorType &yt = g.type(anchor.result);
  auto gemv = planGemv(b, gi);
  if (!gemv)
    return gemv.takeError();
  if (*gemv)
    return llvm::Error::success();
  GemmSpec s;
  s.math = b.options.precision == Precision::Tf32 ? MathMode::Tf32 : MathMode::Tf32x3;
  s.wgmma = b.options.arch == "sm_90a";
  Shape full = yt.shape; // the output as [batch..., M, N], for epilogue indexing
  if (anchor.kind == OpKind::Linear) {
    s.K = at.shape.back();
    s.N = bt.shape[0];
    s.M = at.numel() / s.K;
    s.bTransposed = true;
    s.hasBias = anchor.operands.size() == 3;
    if (full.size() == 1)
      full.insert(full.begin(), 1);
  } else {
    s.bTransposed = false;
    s.M = at.rank() == 1 ? 1 : at.shape[at.rank() - 2];
    s.K = at.shape.back();
    s.N = bt.rank() == 1 ? 1 : bt.shape.back();
    TensorType a2 = at, b2 = bt;
    if (at.rank() == 1)
      a2.shape.insert(a2.shape.begin(), 1);
    if (bt.rank() == 1)
      b2.shape.push_back(1);
    matmulBatch(a2, b2, s);
    full.assign(s.batchShape.begin(), s.batchShape.end());
    full.push_back(s.M);
    full.push_back(s.N);
    // A B shared by every batch (a weight) and an A with every batch dim of its own: the
    // batch is more rows of one product, as for linear (one tile numbering, so TMA copies
    // and the persistent schedule apply). The epilogue's row index is the same flattened row.
    bool bShared = true, aWhole = true;
    for (size_t d = 0; d < s.batchShape.size(); ++d) {
      bShared &= s.batchStrideB[d] == 0;
      aWhole &= s.batchStrideA[d] != 0 || s.batchShape[d] == 1;
    }
    if (bShared && aWhole) {
      for (int64_t d : s.batchShape)
        s.M *= d;
      s.batchShape.clear();
      s.batchStrideA.clear();
      s.batchStrideB.clear();
      s.batchStrideC.clear();
    }
  }
  // With a 1-D operand the output lacks the M or N dim, so tensors fused into the epilogue
  // would broadcast against other dims than the kernel's (row, column) coordinates.
  if (anchor.kind == OpKind::Matmul && (at.rank() == 1 || bt.rank() == 1)) {
    llvm::SmallVector<ValueId, 8> chain{anchor.result};
    for (int op : grp.epilogue) {
      for (const Operand &o : g.ops[op].operands)
        if (!o.isScalar() && !llvm::is_contained(chain, o.value))
          return makeError(b.where(gi) + ": a matmul with a 1-D operand cannot take a fused "
                                         "epilogue that reads tensors");
      chain.push_back(g.ops[op].result);
    }
  }
  IndexSpace space = IndexSpace::gemm(full);
  SlotMap extra(kFirstChainSlot);
  auto epi = chainBody(g, grp.epilogue, anchor.result, space, extra);
  if (!epi)
    return withContext(epi.takeError(), b.where(gi));
  s.epilogue = *epi;
  std::map<int, int> slots{{0, b.bufferOf(anchor.operands[0].value)},
                           {1, b.bufferOf(anchor.operands[1].value)}};
  if (s.hasBias)
    slots[2] = b.bufferOf(anchor.operands[2].value);
  // A matmul's B is [batch..., K, N], which the wgmma engine cannot read (32-bit operands are
  // K-major only). Where the engine pays for the copy, gemm_transpose.cuh writes B as [N, K]
  // into a workspace first and the product reads that like a linear layer's weight.
  auto launchProduct = [&](llvm::StringRef role) -> llvm::Error {
    if (gemmTransposesB(s)) {
      auto copy = emitGemmTranspose(s);
      if (!copy)
        return withContext(copy.takeError(), b.where(gi));
      int bt = b.workspace(g.values[anchor.operands[1].value].name + ".t",
                           copy->workspace.front().bytes);
      if (auto err = b.launch(std::move(copy), gi, "B transposed", MathMode::Ffma,
                              {{0, slots.at(1)}, {1, bt}}))
        return err;
      s.bTransposed = true;
      slots[1] = bt;
    }
    return b.launch(emitGemm(s), gi, role, s.math, slots);
  };

  if (grp.tail == TailKind::None) {
    s.kernelName = b.kernelName(gi, "");
    slots[3] = b.bufferOf(grp.output);
    for (auto [slot, value] : extra.slots())
      slots[slot] = b.bufferOf(value);
    return launchProduct("anchor + epilogue");
  }

  assert(grp.tail == TailKind::RowNormReduce && "GEMM groups take only the row-norm tail");
  const Op &norm = g.ops[grp.norm];
  const Op &red = g.ops[grp.reduce];
  s.kernelName = b.kernelName(gi, "");
  s.storeOutput = false;
  s.normGroupCols = s.N / norm.getInt("groups");
  s.normEps = norm.getFloat("eps");
  s.normAffine = norm.operands.size() == 3;
  auto post = chainBody(g, grp.normEpilogue, norm.result, space, extra);
  if (!post)
    return withContext(post.takeError(), b.where(gi));
  s.postNorm = *post;
  uint32_t init = kFillZero;
  if (red.kind == OpKind::Min) {
    s.rowReduce = GemmSpec::RowReduce::Min;
    init = kFillPlusInf;
  } else if (red.kind == OpKind::Max) {
    s.rowReduce = GemmSpec::RowReduce::Max;
    init = kFillMinusInf;
  } else {
    s.rowReduce = red.kind == OpKind::Mean ? GemmSpec::RowReduce::Mean : GemmSpec::RowReduce::Sum;
  }
  int out = b.bufferOf(grp.output);
  b.fill(out, init);
  slots[4] = out;
  bindAffine(b, norm, slots);
  for (auto [slot, value] : extra.slots())
    slots[slot] = b.bufferOf(value);
  return launchProduct("GEMM + row norm + row reduction");
}

} // namespace

llvm::Error planAnchorGroup(PlanBuilder &b, int group) {
  OpKind k = b.graph.ops[b.fusion.groups[group].root].kind;
  if (k == OpKind::Conv || k == OpKind::ConvTranspose)
    return planConvGroup(b, group);
  return planGemmGroup(b, group);
}

void bindAffine(PlanBuilder &b, const Op &norm, std::map<int, int> &slots) {
  if (norm.operands.size() == 3) {
    slots[6] = b.bufferOf(norm.operands[1].value);
    slots[7] = b.bufferOf(norm.operands[2].value);
  }
}

} // namespace sinter
