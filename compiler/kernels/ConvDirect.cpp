//===- compiler/kernels/ConvDirect.cpp - direct FFMA convolution emitter -----------===//
//
// Checks a ConvSpec, picks the register blocking of templates/conv_direct.cuh for its shape
// and writes the prologue. The blocking: a thread computes kCB output channels times a
// kVH x kVW patch of positions (multiples of the stride for a transposed conv, so a thread
// owns whole phases). Shapes with few FMAs per input patch (S4) keep the first rule: the
// whole group's channels (16 beyond 32), kVW = the stride, kVH as tall as 96 accumulators
// allow, and a prefetching loop. Deeper shapes (S1, S2) are chosen by a small cost model of
// one SM: every FFMA takes a quarter cycle of issue, and every 4 bytes moved into a lane's
// register (broadcast weight loads from shared memory as much as input loads) take 1/32 of
// the 128-byte-per-cycle load path, which the old channel-heavy blocking saturated. The
// model prefers blockings with several positions per weight and float2 input rows. Tails
// the kernel runs itself constrain the blocking: a pool (s.pool) wants patches of whole
// windows (choosePooledTiling), a softmax or a reduction over the channels (s.softmax,
// s.channelReduce) every channel in one thread. A spec with s.math Tf32 is handed to conv_mma
// (ConvMma.cpp), the same convolution on mma.sync.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvDirect.h"

#include "compiler/kernels/ConvMma.h"
#include "ir/Error.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

namespace sinter {
namespace {

constexpr int kAccumulatorBudget = 96; // floats per thread kept in registers
constexpr int64_t kSharedWeightLimit = 40 * 1024;
// A thread with fewer FMAs than this per input patch cannot hide the patch's load latency
// behind its own work: it prefetches the next patch (measured on H200: S4, 144 FMAs per
// patch, 0.86 -> 0.74 ms; S1 and S2, 648 and 432, were 10% slower with the prefetch).
constexpr int64_t kPrefetchBelowFmas = 256;
constexpr int64_t kPrefetchPatchLimit = 64; // conv_direct.cuh's in-range mask, in elements
// Prefetching threads hold more registers; smaller blocks then fill an SM in finer steps.
// The plain loop: 256-thread blocks, two per SM (at most 128 registers, 16 warps), which
// holds 72 accumulators and a float2 patch; measured on H200, 8 warps with 96 accumulators
// (213 registers) ran S2 20% slower than 16 warps with 64.
constexpr int64_t kThreadsPrefetch = 128, kThreadsPlain = 256;
constexpr int64_t kPlainResidentThreads = 512;
constexpr int kDeepAccumulatorBudget = 72;

/// Output positions times taps a patch pairs along one blocked dim. `phase`: where the patch
/// starts, as (o + padding) mod stride of its first output (a transposed convolution's
/// patches start at phase 0, except a pooled kernel's: conv_direct.cuh's Dim).
int64_t pairsAlong(const ConvSpec &s, int d, int v, int phase = 0) {
  if (!s.transposed)
    return int64_t(v) * s.kernel[d];
  int64_t hits = 0;
  for (int j = 0; j < v; ++j)
    for (int64_t k = 0; k < s.kernel[d]; ++k)
      hits += (j + phase - k * s.dilation[d]) % s.stride[d] == 0;
  return hits;
}

/// The output size along one dim, without output_padding.
int64_t outputSize(const ConvSpec &s, int d) {
  int64_t span = s.dilation[d] * (s.kernel[d] - 1);
  if (s.transposed)
    return (s.in[d] - 1) * s.stride[d] - 2 * s.padding[d] + span + 1;
  return (s.in[d] + 2 * s.padding[d] - span - 1) / s.stride[d] + 1;
}

} // namespace

llvm::Error checkDirectConvSpec(const ConvSpec &s) {
  auto fail = [&](const llvm::Twine &why) { return makeError(s.kernelName + ": " + why); };
  if (s.kernelName.empty())
    return makeError("conv_direct: empty kernel name");
  if (s.spatialDims < 1 || s.spatialDims > 3)
    return fail("conv_direct supports 1 to 3 spatial dims, got " + llvm::Twine(s.spatialDims));
  if (s.N < 1 || s.Cin < 1 || s.Cout < 1 || s.groups < 1)
    return fail("sizes and groups must be positive");
  if (s.Cin % s.groups || s.Cout % s.groups)
    return fail("groups=" + llvm::Twine(s.groups) + " does not divide Cin=" + llvm::Twine(s.Cin) +
                " and Cout=" + llvm::Twine(s.Cout));
  if (s.N > 65535)
    return fail("batch " + llvm::Twine(s.N) + " exceeds the grid's z limit");
  for (int d = 0; d < 3; ++d) {
    bool real = d >= 3 - int(s.spatialDims);
    if (s.in[d] < 1 || s.kernel[d] < 1 || s.stride[d] < 1 || s.dilation[d] < 1 ||
        s.padding[d] < 0 || s.out[d] < 1)
      return fail("spatial dim " + llvm::Twine(d) + " has a non-positive size or attribute");
    if (!real && (s.in[d] != 1 || s.kernel[d] != 1 || s.out[d] != 1 || s.padding[d] != 0))
      return fail("unused spatial dim " + llvm::Twine(d) + " must have size 1");
    if (s.in[d] > (1 << 30) || s.out[d] > (1 << 30))
      return fail("spatial size too large");
    int64_t expect = outputSize(s, d);
    int64_t extra = s.out[d] - expect;
    int64_t maxExtra = s.transposed ? std::max(s.stride[d], s.dilation[d]) - 1 : 0;
    if (expect < 1 || extra < 0 || extra > maxExtra)
      return fail("output size " + llvm::Twine(s.out[d]) + " along spatial dim " + llvm::Twine(d) +
                  " does not follow from the input size and attributes");
  }
  if (s.in[1] * s.in[2] > (int64_t(1) << 31) - 1 || s.out[1] * s.out[2] > (int64_t(1) << 31) - 1)
    return fail("an H*W plane exceeds 2^31 elements");
  return llvm::Error::success();
}

namespace {

struct Tiling {
  int cb = 1, vh = 1, vw = 1, alignH = 0, alignW = 0, phaseH = 0, phaseW = 0;
  int64_t hBlocks = 1, wBlocks = 1, cBlocks = 1;
  bool prefetch = false, vecX = false, clampTiles = false;
  /// More accumulators than the plain loop's 128 registers hold (a softmax's channels, or
  /// windows on top): launched as the prefetching loop is, fewer blocks with more registers.
  bool wide = false;
};

/// Input positions a patch of v outputs reads along one blocked dim (the template's
/// conv_direct::Dim): {lowest offset, count}.
std::pair<int64_t, int64_t> patchSpan(const ConvSpec &s, int d, int v, int phase = 0) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t j = 0; j < v; ++j)
    for (int64_t k = 0; k < s.kernel[d]; ++k) {
      int64_t e = j + phase - k * s.dilation[d];
      if (s.transposed && e % s.stride[d] != 0)
        continue;
      int64_t off = s.transposed
                        ? (e >= 0 ? e / s.stride[d] : -((-e + s.stride[d] - 1) / s.stride[d]))
                        : j * s.stride[d] + k * s.dilation[d];
      lo = std::min(lo, off), hi = std::max(hi, off);
    }
  return {lo, hi - lo + 1};
}

/// Taps along one dim that reach at least one of v outputs.
int64_t tapsUsed(const ConvSpec &s, int d, int v, int phase = 0) {
  int64_t n = 0;
  for (int64_t k = 0; k < s.kernel[d]; ++k) {
    bool hit = !s.transposed;
    for (int64_t j = 0; j < v && !hit; ++j)
      hit = (j + phase - k * s.dilation[d]) % s.stride[d] == 0;
    n += hit;
  }
  return n;
}

/// Whether every patch row starts at an even input column (then float2 loads are aligned):
/// the column base is wb * step + constant for column block wb.
bool evenPatchColumns(const ConvSpec &s, int vw, int alignW, int phaseW = 0) {
  auto [lo, width] = patchSpan(s, 2, vw, phaseW);
  if (width % 2 || s.in[2] % 2)
    return false;
  if (!s.transposed)
    return (int64_t(vw) * s.stride[2]) % 2 == 0 && (lo - s.padding[2]) % 2 == 0;
  int64_t step = vw / s.stride[2];
  // (ow0 + pad - phase) / S + lo at wb = 0
  int64_t base = (s.padding[2] - alignW - phaseW) / s.stride[2] + lo;
  return step % 2 == 0 && base % 2 == 0;
}

/// Whether the kernel's tail needs every channel of a position in one thread: a softmax or a
/// reduction over the channels (checkWholeChannelTail).
bool wholeChannels(const ConvSpec &s) { return s.softmax || s.channelReduce; }

/// The first rule (kept for shallow patches, where it was measured best with prefetching).
/// The channels a thread takes on a shallow patch: the group's (16 beyond 32), shrunk in steps
/// of 4 while the smallest patch's `registers` exceed kAccumulatorBudget. A softmax or a
/// reduction over the channels needs them all in one thread: never shrunk.
int shallowChannels(const ConvSpec &s, int64_t coutG, llvm::function_ref<int64_t(int)> registers) {
  int cb = int(wholeChannels(s) || coutG <= 32 ? coutG : 16);
  while (!wholeChannels(s) && cb > 4 && registers(cb) > kAccumulatorBudget)
    cb = std::max(4, (cb / 2 + 3) / 4 * 4);
  return cb;
}

Tiling shallowTiling(const ConvSpec &s, int64_t coutG) {
  Tiling t;
  int sh = s.transposed ? int(s.stride[1]) : 1;
  t.vw = s.transposed ? int(s.stride[2]) : 1;
  // Keep at least one full phase of rows; shrink the channel block if even that is too much.
  t.cb = shallowChannels(s, coutG, [&](int cb) { return int64_t(cb) * t.vw * sh; });
  int64_t rows = s.out[1] + t.alignH;
  int maxVh = std::max(sh, std::min(8, kAccumulatorBudget / (t.cb * t.vw)) / sh * sh);
  maxVh = int(std::min<int64_t>(maxVh, (rows + sh - 1) / sh * sh));
  // Among heights from half the largest up, take the one with the fewest idle rows.
  int best = maxVh;
  int64_t bestRows = (rows + maxVh - 1) / maxVh * maxVh;
  for (int vh = maxVh; vh >= std::max(sh, maxVh / 2); vh -= sh) {
    int64_t covered = (rows + vh - 1) / vh * vh;
    if (covered < bestRows) {
      best = vh;
      bestRows = covered;
    }
  }
  t.vh = best;
  return t;
}

/// Whether the plain loop may clamp the last blocks back inside the output (see the template):
/// an unpadded convolution at least one patch tall and wide.
bool canClampTiles(const ConvSpec &s, int vh, int vw) {
  return !s.transposed && s.padding[1] == 0 && s.padding[2] == 0 && s.out[1] >= vh &&
         s.out[2] >= vw;
}

/// Whether the plain loop loads patch rows as float2. Clamped tiles need an even origin too:
/// the template asks for an even output column kOW - kVW, which is what it has run with;
/// a stride-2 convolution's odd column would start at an even input column as well, but
/// that was never run (random chain conv2d_r12n213: 8x1 patches of a 128-wide output failed
/// the template's static_assert).
bool useFloat2Rows(const ConvSpec &s, int vh, int vw, int alignW, int phaseW = 0) {
  return evenPatchColumns(s, vw, alignW, phaseW) &&
         (!canClampTiles(s, vh, vw) || (s.out[2] - vw) % 2 == 0);
}

/// Modelled SM cycles per useful FMA of a blocking (see the file header), idle rows, columns
/// and channels of the last blocks included. A checked load costs about 6 instructions
/// (address, bounds predicate, zeroing), one from a clamped tile 1 (SASS of S1, run 3).
double blockingCost(const ConvSpec &s, int64_t coutG, int cb, int vh, int vw, int alignH,
                    int alignW, int phaseH = 0, int phaseW = 0) {
  double fmas = double(cb) * pairsAlong(s, 1, vh, phaseH) * pairsAlong(s, 2, vw, phaseW);
  int64_t taps = tapsUsed(s, 1, vh, phaseH) * tapsUsed(s, 2, vw, phaseW);
  int64_t ph = patchSpan(s, 1, vh, phaseH).second, pw = patchSpan(s, 2, vw, phaseW).second;
  bool float2 = s.pool ? evenPatchColumns(s, vw, alignW, phaseW) : useFloat2Rows(s, vh, vw, alignW);
  int vec = float2 ? 2 : 1;
  int64_t loadInstrs = ph * ((pw + vec - 1) / vec);
  // Lanes of a warp are consecutive column blocks: one load instruction spans `step` lines.
  int64_t step = s.transposed ? vw / s.stride[2] : vw * s.stride[2];
  double moveCycles = double(cb) * taps + double(loadInstrs) * std::max<int64_t>(1, step);
  double loadCost = canClampTiles(s, vh, vw) && !s.pool ? 1.0 : 6.0;
  double issueCycles = (fmas + double(taps) * ((cb + 3) / 4) + loadCost * loadInstrs) / 4;
  int64_t rows = s.out[1] + alignH, cols = s.out[2] + alignW;
  double idle = double((rows + vh - 1) / vh * vh) / rows * double((cols + vw - 1) / vw * vw) /
                cols * double((coutG + cb - 1) / cb * cb) / coutG;
  return std::max(moveCycles, issueCycles) / fmas * idle;
}

/// The cost model's cheapest blocking (cb, vh, vw set, the rest as in `base`): channel blocks
/// that divide the group (for a softmax or reduction over the channels, the whole group), heights
/// and widths in steps of stepH and stepW up to 8 and 4, among those `allowed` accepts. Nothing
/// when it accepts none.
std::optional<Tiling> cheapestBlocking(const ConvSpec &s, int64_t coutG, int stepH, int stepW,
                                       const Tiling &base,
                                       llvm::function_ref<bool(int, int, int)> allowed) {
  std::optional<Tiling> pick;
  double best = 1e30;
  for (int cb = 1; cb <= (wholeChannels(s) ? coutG : std::min<int64_t>(coutG, 32)); ++cb) {
    if (coutG % cb || (wholeChannels(s) && cb != coutG))
      continue;
    for (int vw = stepW; vw <= std::max(stepW, 4); vw += stepW)
      for (int vh = stepH; vh <= std::max(stepH, 8); vh += stepH) {
        if (!allowed(cb, vh, vw))
          continue;
        double c =
            blockingCost(s, coutG, cb, vh, vw, base.alignH, base.alignW, base.phaseH, base.phaseW);
        // Exact ties go to more channels per thread (fewer re-reads of the input); the
        // model is not finer than a few percent, but S1 measured (6, 6, 2) 2% faster
        // than (12, 3, 2), which it ranks 0.5% apart.
        if (!pick || c < best * (1 - 1e-9) || (c <= best * (1 + 1e-9) && cb > pick->cb)) {
          best = std::min(best, c);
          pick = base;
          pick->cb = cb, pick->vh = vh, pick->vw = vw;
        }
      }
  }
  return pick;
}

/// Whether blocking `t` takes the prefetching loop: when its patch feeds few FMAs (or as
/// tuned), and the patch fits the loop's in-range mask (the loop keeps a patch's flags in one
/// 64-bit mask and two patches in registers: wider patches, a strided 1x1 convolution blocked
/// 8 x 4, take the plain loop).
bool usePrefetch(const ConvSpec &s, const Tiling &t, const ConvDirectTuning &tuning) {
  int64_t fmas = t.cb * pairsAlong(s, 1, t.vh, t.phaseH) * pairsAlong(s, 2, t.vw, t.phaseW);
  bool prefetch = tuning.prefetch != 0 ? tuning.prefetch > 0 : fmas < kPrefetchBelowFmas;
  return prefetch &&
         patchSpan(s, 1, t.vh, t.phaseH).second * patchSpan(s, 2, t.vw, t.phaseW).second <=
             kPrefetchPatchLimit;
}

Tiling chooseTiling(const ConvSpec &s, const ConvDirectTuning &tuning) {
  int64_t coutG = s.Cout / s.groups;
  int sh = s.transposed ? int(s.stride[1]) : 1;
  int sw = s.transposed ? int(s.stride[2]) : 1;
  int alignH = s.transposed ? int(s.padding[1] % s.stride[1]) : 0;
  int alignW = s.transposed ? int(s.padding[2] % s.stride[2]) : 0;
  Tiling t = shallowTiling(s, coutG);
  t.alignH = alignH, t.alignW = alignW;
  if (t.cb * pairsAlong(s, 1, t.vh) * pairsAlong(s, 2, t.vw) >= kPrefetchBelowFmas) {
    // Deep patches: the cheapest of whole phases within the deep budget that stay deep.
    auto deep = cheapestBlocking(s, coutG, sh, sw, t, [&](int cb, int vh, int vw) {
      return cb * vh * vw <= kDeepAccumulatorBudget &&
             cb * pairsAlong(s, 1, vh) * pairsAlong(s, 2, vw) >= kPrefetchBelowFmas;
    });
    if (deep)
      t = *deep;
  }
  if (tuning.channelsPerThread > 0)
    t.cb = int(std::min<int64_t>(tuning.channelsPerThread, coutG));
  if (tuning.rowsPerThread > 0)
    t.vh = (tuning.rowsPerThread + sh - 1) / sh * sh;
  if (tuning.colsPerThread > 0)
    t.vw = (tuning.colsPerThread + sw - 1) / sw * sw;
  t.prefetch = usePrefetch(s, t, tuning);
  // The prefetching loop reads patches element by element. An unpadded convolution's last
  // blocks are moved back inside the output (clamped tiles) so that no load needs a check;
  // their origin must then be even too for float2 rows.
  t.clampTiles = !t.prefetch && canClampTiles(s, t.vh, t.vw);
  t.vecX = !t.prefetch && useFloat2Rows(s, t.vh, t.vw, alignW);
  int64_t rows = s.out[1] + alignH;
  t.hBlocks = (rows + t.vh - 1) / t.vh;
  t.wBlocks = (s.out[2] + alignW + t.vw - 1) / t.vw;
  t.cBlocks = (coutG + t.cb - 1) / t.cb;
  return t;
}

/// The blocking of a pooled kernel: patches of whole windows along H and W (and whole phases of
/// a transposed convolution). As in chooseTiling, shallow patches take the group's channels
/// (16 beyond 32) on one window's patch and prefetch, their accumulators and windows' values
/// within kAccumulatorBudget; deeper ones are chosen by the cost model over the rows and
/// columns the windows cover, within about the deep budget.
/// Measured on an H100 (docs/kernels-direct.md, "Pools in the convolution's kernel").
Tiling choosePooledTiling(const ConvSpec &s, const ConvDirectTuning &tuning) {
  const ConvPoolTail &p = *s.pool;
  int64_t coutG = s.Cout / s.groups;
  int sh = s.transposed ? int(s.stride[1]) : 1;
  int sw = s.transposed ? int(s.stride[2]) : 1;
  int stepH = int(std::lcm<int64_t>(sh, p.window[1]));
  int stepW = int(std::lcm<int64_t>(sw, p.window[2]));
  Tiling t;
  t.phaseH = s.transposed ? int(s.padding[1] % s.stride[1]) : 0;
  t.phaseW = s.transposed ? int(s.padding[2] % s.stride[2]) : 0;
  auto registers = [&](int cb, int vh, int vw) {
    return cb * vh * vw + cb * (vh / p.window[1]) * (vw / p.window[2]);
  };
  t.vh = stepH, t.vw = stepW;
  t.cb = shallowChannels(s, coutG, [&](int cb) { return registers(cb, stepH, stepW); });
  bool shallow = registers(t.cb, t.vh, t.vw) <= kAccumulatorBudget &&
                 t.cb * pairsAlong(s, 1, t.vh, t.phaseH) * pairsAlong(s, 2, t.vw, t.phaseW) <
                     kPrefetchBelowFmas;
  if (!shallow) {
    // The windows' values come on top of the plain loop's patch and weights: 8 more than its
    // accumulators are allowed, none with depth taps, whose loop holds more (a 3-D kernel at 80
    // spilled 48 bytes at 128 registers).
    const int budget = kDeepAccumulatorBudget + (s.kernel[0] > 1 ? 0 : 8);
    auto deep = cheapestBlocking(s, coutG, stepH, stepW, t, [&](int cb, int vh, int vw) {
      return registers(cb, vh, vw) <= budget;
    });
    if (deep) {
      t = *deep;
    } else { // no blocking within the budgets: the smallest (the checks bound it)
      t.cb = wholeChannels(s) ? t.cb : 1;
      t.wide = true;
    }
  }
  if (tuning.channelsPerThread > 0)
    t.cb = int(std::min<int64_t>(tuning.channelsPerThread, coutG));
  t.prefetch = usePrefetch(s, t, tuning);
  t.vecX = !t.prefetch && evenPatchColumns(s, t.vw, 0, t.phaseW);
  // Rows and columns past the last window (a floor-mode pool) are not computed.
  int64_t rows = std::min(s.out[1], p.out[1] * p.window[1]);
  int64_t cols = std::min(s.out[2], p.out[2] * p.window[2]);
  t.hBlocks = (rows + t.vh - 1) / t.vh;
  t.wBlocks = (cols + t.vw - 1) / t.vw;
  t.cBlocks = (coutG + t.cb - 1) / t.cb;
  return t;
}

/// What a pool tail needs (ConvPoolTail): windows that tile the output from its origin, a
/// pooled size that follows from them, FFMA math, the output stored and no statistics, and a
/// blocking whose whole windows fit the register budget.
llvm::Error checkPoolTail(const ConvSpec &s) {
  auto fail = [&](const llvm::Twine &why) { return makeError(s.kernelName + ": " + why); };
  const ConvPoolTail &p = *s.pool;
  if (!s.storeOutput || s.accumulateStats || s.normTail)
    return fail("a pooled convolution stores the pooled tensor only, without statistics");
  for (int d = 0; d < 3; ++d) {
    if (p.window[d] < 1 || p.out[d] < 1)
      return fail("pool window and pooled size must be positive");
    // The windows start at multiples of the window inside the output; the last may be
    // clipped (ceil_mode), rows past the last window are dropped (floor).
    if ((p.out[d] - 1) * p.window[d] >= s.out[d] ||
        p.out[d] * p.window[d] < s.out[d] - p.window[d] + 1)
      return fail("pooled size " + llvm::Twine(p.out[d]) + " along spatial dim " + llvm::Twine(d) +
                  " does not follow from windows of " + llvm::Twine(p.window[d]) + " over " +
                  llvm::Twine(s.out[d]));
  }
  int sh = s.transposed ? int(s.stride[1]) : 1, sw = s.transposed ? int(s.stride[2]) : 1;
  int64_t winH = std::lcm<int64_t>(sh, p.window[1]), winW = std::lcm<int64_t>(sw, p.window[2]);
  if (winH * winW + winH * winW / (p.window[1] * p.window[2]) > kDeepAccumulatorBudget)
    return fail("pool windows of " + llvm::Twine(p.window[1]) + "x" + llvm::Twine(p.window[2]) +
                " do not fit one thread's accumulators");
  return llvm::Error::success();
}

/// What a softmax or a reduction over the channels needs (ConvChannelSoftmax,
/// ConvChannelReduce): one group, the output stored without statistics, and all channels of
/// the smallest patch (one phase or window) within one thread's accumulators; a reduction
/// takes neither a softmax nor a pool.
llvm::Error checkWholeChannelTail(const ConvSpec &s) {
  auto fail = [&](const llvm::Twine &why) { return makeError(s.kernelName + ": " + why); };
  const char *what = s.softmax ? "a softmax" : "a reduction";
  if (s.channelReduce && (s.softmax || s.pool))
    return fail("a reduction over the channels takes no softmax or pool in the same kernel");
  if (s.groups != 1)
    return fail(llvm::Twine(what) + " over the channels of a grouped convolution spans its groups");
  if (!s.storeOutput || s.accumulateStats || s.normTail)
    return fail(llvm::Twine(what) + " over the channels is stored, without statistics");
  int64_t vh = s.transposed ? s.stride[1] : 1, vw = s.transposed ? s.stride[2] : 1;
  int64_t windows = 0;
  if (s.pool) {
    vh = std::lcm<int64_t>(vh, s.pool->window[1]), vw = std::lcm<int64_t>(vw, s.pool->window[2]);
    windows = vh * vw / (s.pool->window[1] * s.pool->window[2]);
  }
  if (s.Cout * (vh * vw + windows) > kAccumulatorBudget)
    return fail(llvm::Twine(what) + " over " + llvm::Twine(s.Cout) + " channels of " +
                llvm::Twine(vh) + "x" + llvm::Twine(vw) +
                " positions does not fit one thread's accumulators");
  return llvm::Error::success();
}

/// Resident blocks the prefetching loop's registers should allow: its live values are the
/// accumulators, two patches (current and next), one tap's weights and about 24 addresses,
/// flags and counters. Left free, ptxas gave the corpus's 16-channel 2x2 transposed kernels
/// 131-136 registers (three blocks of 128 threads); capped at 128 (four blocks) they do not
/// spill and ran 3-5% faster (H100). S4 (64 + 12 + 8 + 24 = 108) gets four blocks too; at
/// five (102 registers) it ran the same and some of its variants spilled.
int64_t prefetchMinBlocks(const ConvSpec &s, const Tiling &t, int64_t threads) {
  int64_t patch = patchSpan(s, 1, t.vh).second * patchSpan(s, 2, t.vw).second;
  int64_t regs = int64_t(t.cb) * t.vh * t.vw + 2 * patch + t.cb + 24;
  // A pooled kernel also holds its windows' values and the depth loop's state.
  if (s.pool)
    regs += int64_t(t.cb) * (t.vh / s.pool->window[1]) * (t.vw / s.pool->window[2]) + 16;
  return std::clamp<int64_t>(65536 / (threads * regs), 1, 8);
}

} // namespace

bool convDirectRunsTails(const ConvSpec &s, std::string *why) {
  llvm::Error err = checkDirectConvSpec(s);
  if (!err && s.pool)
    err = checkPoolTail(s);
  if (!err && wholeChannels(s))
    err = checkWholeChannelTail(s);
  if (!err)
    return true;
  std::string msg = llvm::toString(std::move(err));
  if (why)
    *why = msg;
  return false;
}

llvm::Expected<KernelSource> emitConvDirect(const ConvSpec &s) {
  return emitConvDirect(s, ConvDirectTuning());
}

llvm::Expected<KernelSource> emitConvDirect(const ConvSpec &s, const ConvDirectTuning &tuning) {
  if (s.math == MathMode::Tf32)
    return emitConvMma(s);
  if (llvm::Error err = checkDirectConvSpec(s))
    return err;
  if (s.math != MathMode::Ffma)
    return makeError(s.kernelName + ": conv_direct computes in fp32 FMA or, on conv_mma, TF32");
  if (s.pool)
    if (llvm::Error err = checkPoolTail(s))
      return err;
  if (wholeChannels(s))
    if (llvm::Error err = checkWholeChannelTail(s))
      return err;
  Tiling t = s.pool ? choosePooledTiling(s, tuning) : chooseTiling(s, tuning);
  int64_t cinG = s.Cin / s.groups;
  int64_t taps = s.kernel[0] * s.kernel[1] * s.kernel[2];
  bool weightsShared = cinG * taps * t.cb * 4 <= kSharedWeightLimit;
  int64_t spatialThreads = (s.pool ? s.pool->out[0] : s.out[0]) * t.hBlocks * t.wBlocks;
  bool prefetch = t.prefetch;
  const bool wide = t.wide || (wholeChannels(s) && t.cb * t.vh * t.vw > kDeepAccumulatorBudget);
  int64_t threads = tuning.threads > 0 ? tuning.threads
                    : prefetch || wide ? kThreadsPrefetch
                                       : kThreadsPlain;
  threads = std::min<int64_t>(threads, (spatialThreads + 31) / 32 * 32);
  int64_t gridX = (spatialThreads + threads - 1) / threads;
  int64_t gridY = s.groups * t.cBlocks;
  if (gridX > 0x7fffffff || gridY > 65535)
    return makeError(s.kernelName + ": conv_direct grid too large");

  PrologueWriter w(s.kernelName, "conv_direct.cuh");
  writeDirectConvShape(w, s);
  w.constantBool("kWeightsShared", weightsShared);
  w.constantBool("kPipeline", prefetch);
  w.constant("kThreads", threads);
  int64_t minBlocks = tuning.minBlocks > 0 ? tuning.minBlocks
                      : (prefetch || wide) && (s.pool || wholeChannels(s))
                          // registers are shared per SM quarter, by warp
                          ? prefetchMinBlocks(s, t, roundUp(threads, 128))
                          : prefetch ? prefetchMinBlocks(s, t, threads)
                                     : std::max<int64_t>(1, kPlainResidentThreads / threads);
  w.constant("kMinBlocks", minBlocks);
  w.constant("kVecX", t.vecX ? 2 : 1);
  w.constantBool("kClampTiles", t.clampTiles);
  w.constantBool("kVecStore", s.storeOutput && !s.pool && !s.channelReduce && t.vw % 2 == 0 &&
                                  s.out[2] % 2 == 0 && t.alignW % 2 == 0);
  w.constant("kCB", t.cb);
  w.constant("kVH", t.vh);
  w.constant("kVW", t.vw);
  w.constant("kAlignH", t.alignH);
  w.constant("kAlignW", t.alignW);
  w.constant("kHBlocks", t.hBlocks);
  w.constant("kWBlocks", t.wBlocks);
  w.constant("kCBlocks", t.cBlocks);
  w.constantBool("kPool", s.pool.has_value());
  w.constantBool("kPoolMax", s.pool && s.pool->max);
  w.constantBool("kSoftmax", s.softmax.has_value());
  w.constantBool("kSoftmaxLog", s.softmax && s.softmax->log);
  w.constant("kCReduce", s.channelReduce ? channelFoldConstant(s.channelReduce->kind) : 0);
  w.constant("kPhaseH", t.phaseH);
  w.constant("kPhaseW", t.phaseW);
  static const char *dimNames[3] = {"D", "H", "W"};
  for (int d = 0; d < 3; ++d) {
    w.constant(std::string("kPK") + dimNames[d], s.pool ? s.pool->window[d] : 1);
    w.constant(std::string("kPO") + dimNames[d], s.pool ? s.pool->out[d] : 1);
  }
  w.code("namespace cfg {");
  w.anchorEpilogue("Epilogue", s.epilogue);
  w.anchorEpilogue("PoolEpilogue", s.pool ? s.pool->post : FunctorBody());
  w.anchorEpilogue("SoftmaxEpilogue", s.softmax ? s.softmax->post : FunctorBody());
  w.anchorEpilogue("CReduceEpilogue", s.channelReduce ? s.channelReduce->post : FunctorBody());
  w.code("} // namespace cfg");

  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "conv_direct.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned(gridX), unsigned(gridY), unsigned(s.N)};
  k.launch.block = {unsigned(threads), 1, 1};
  k.tileConfig = "direct ffma: " + std::to_string(t.cb) + " channels x " + std::to_string(t.vh) +
                 "x" + std::to_string(t.vw) + " positions per thread, " + std::to_string(threads) +
                 " threads" + (prefetch ? ", prefetching" : "") + (t.vecX ? ", float2 rows" : "") +
                 (t.clampTiles ? ", clamped edge tiles" : "") + ", weights in " +
                 (weightsShared ? "shared memory" : "L1");
  if (s.softmax)
    k.tileConfig += std::string(", then a ") + (s.softmax->log ? "log_softmax" : "softmax") +
                    " over its " + std::to_string(s.Cout) + " channels";
  if (s.channelReduce)
    k.tileConfig += std::string(", then a ") + reductionName(s.channelReduce->kind) + " over its " +
                    std::to_string(s.Cout) + " channels";
  if (s.pool) {
    const auto &win = s.pool->window;
    k.tileConfig += std::string(", then its ") + (s.pool->max ? "max" : "average") + " pool over " +
                    (s.spatialDims == 3 ? std::to_string(win[0]) + "x" : "") +
                    (s.spatialDims >= 2 ? std::to_string(win[1]) + "x" : "") +
                    std::to_string(win[2]) + " windows";
  }
  setDirectConvCost(s, k);
  return k;
}

void writeDirectConvShape(PrologueWriter &w, const ConvSpec &s) {
  w.constantBool("kTransposed", s.transposed);
  w.constant("kN", s.N);
  w.constant("kCin", s.Cin);
  w.constant("kCout", s.Cout);
  w.constant("kCinG", s.Cin / s.groups);
  w.constant("kCoutG", s.Cout / s.groups);
  static const char *dimNames[3] = {"D", "H", "W"};
  for (int d = 0; d < 3; ++d) {
    std::string n = dimNames[d];
    w.constant("kI" + n, s.in[d]);
    w.constant("kO" + n, s.out[d]);
    w.constant("kK" + n, s.kernel[d]);
    w.constant("kS" + n, s.stride[d]);
    w.constant("kPad" + n, s.padding[d]);
    w.constant("kD" + n, s.dilation[d]);
  }
  w.constantBool("kHasBias", s.hasBias);
  w.constantBool("kStoreOutput", s.storeOutput);
  w.constantBool("kAccStats", s.accumulateStats);
}

void setDirectConvCost(const ConvSpec &s, KernelSource &k) {
  int64_t cinG = s.Cin / s.groups, coutG = s.Cout / s.groups;
  int64_t taps = s.kernel[0] * s.kernel[1] * s.kernel[2];
  int64_t inSpatial = s.in[0] * s.in[1] * s.in[2], outSpatial = s.out[0] * s.out[1] * s.out[2];
  // Every (input, tap) or (output, tap) pair is one FMA, ignoring taps that fall off the edge.
  k.flops = s.transposed ? 2.0 * s.N * s.Cin * inSpatial * coutG * taps
                         : 2.0 * s.N * s.Cout * outSpatial * cinG * taps;
  k.bytes = 4.0 * (s.N * s.Cin * inSpatial + s.Cout * cinG * taps + (s.hasBias ? s.Cout : 0));
  if (s.storeOutput)
    k.bytes +=
        4.0 * s.N *
        (s.channelReduce ? outSpatial : s.Cout * (s.pool ? volume(s.pool->out) : outSpatial));
  if (s.accumulateStats) {
    k.bytes += 16.0 * s.N * s.Cout;
    k.workspace.push_back({4, 16 * s.N * s.Cout, WorkspaceNeed::Init::Zero,
                           "per-(n,c) sum and sum of squares (double)"});
  }
}

} // namespace sinter
