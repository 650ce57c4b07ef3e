//===- compiler/kernels/ConvMma.cpp - direct convolution on mma.sync emitter -------===//
//
// Checks a ConvSpec for templates/conv_mma.cuh, picks its block tile and writes the
// prologue. The tile is chosen by a small model of one block tile's SM cycles: each m16
// tile and k8 step reads its A fragment from shared memory (4 wavefronts, the engine's
// bound while the group has at most two n8 tiles; fewer where a warp's tile rows share
// them, reusedRows), each n8 tile's mma takes about 2 cycles, the epilogue about 8 per
// (m16, n8) tile, and the box copy 1/16 cycle per float; the total over all tiles
// (positions past the output's end included) is minimised. Tiles whose staged stores would
// be written in runs shorter than 32 floats are not candidates where longer ones exist.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/kernels/ConvMma.h"

#include "compiler/kernels/ConvDirect.h"
#include "ir/Error.h"
#include "ir/Ops.h"

#include <algorithm>
#include <array>

namespace sinter {
namespace {

constexpr int64_t kMaxCoutG = 64;         // eight n8 tiles
constexpr int64_t kMaxFragments = 128;    // k8 steps x n8 tiles: 32 KiB of staged weights
constexpr int64_t kSmemLimit = 48 * 1024; // per block, so that four blocks share an SM
// Accumulators, per-lane k offsets (groups that are not whole k8 steps) and statistics per
// thread: at 128 registers, S1's 48 + 22 + 12 spilled, and 36 + 22 + 12 did with 16-byte
// box pieces.
constexpr int64_t kThreadValues = 64;
constexpr int64_t kWeightRegs = 48; // weight fragment words kept in registers
constexpr int kThreadsPerSm = 512;  // the register cap: 128 per thread
// A norm finished in the kernel (ConvSpec::normTail), as measured on S2 (H100, 2026-11-27,
// docs/kernels-direct.md "y held in shared memory"): units of 2 tiles (1 tile: 3.56-3.63 ms,
// the per-unit waits and barriers not amortised; 3 tiles: 2.50 at 4 blocks an SM against
// 2.47), one box buffer (two cost a block an SM: 2.74), so that the box, the weights and
// three held tile slots take at most 45 KiB and five blocks of 128 threads share an SM (the
// register cap then 96; at four blocks an SM 2.60). Elsewhere than sm_90a four (an A100's
// 164 KiB of shared memory holds four such blocks; at 96 registers sm_80 spilled).
constexpr int kNormTileLoop = 2;
constexpr int64_t kNormSmemLimit = 45 * 1024;
constexpr int kNormThreadsPerSm = 640, kNormThreadsPerSmOther = 512;
// The fewest spatial tiles per (n, group) and the fewest (n, group) tasks: measured on the
// design that kept y in L2 (2026-11-26, H200): S2 (1024 tasks of 297 tiles) gained 10%,
// corpus graphs of 27-64 tiles per task took 0.71-0.89x of the two kernels,
// conv2d_grouped_gn_silu_large (256 of 256) 0.99x and convt2d_grouped_in_tanh_large (64 of
// 400) 0.89x. Not measured again on the held design: the rule still rests on those graphs.
constexpr int64_t kNormMinTiles = 256;
constexpr int64_t kNormMinTasks = 512;
// The most units per (n, group): the kernel needs that many blocks resident at once (its
// LaunchConfig::coResident), which an H100 or H200 holds five times over and an A100 (108
// SMs, four such blocks an SM) close to twice.
constexpr int64_t kNormMaxUnits = 256;
// Counters of the template's dealPlace (its kDealWords), after the done counts.
constexpr int64_t kNormDealWords = 280;

/// The walk along spatial dim d (the template's Walk): grid positions, output phases and
/// reduction taps. The grid is the output, except along a strided dim of a transposed
/// convolution, walked by output phase: grid position p stands for outputs
/// S * (p + base) + phi - pad, phi < S, which read inputs p + base - j for `taps` super-taps j.
struct Axis {
  bool phased;
  int64_t S, K, dil, pad, out;
  Axis(const ConvSpec &s, int d)
      : phased(s.transposed && s.stride[d] > 1), S(s.stride[d]), K(s.kernel[d]), dil(s.dilation[d]),
        pad(s.padding[d]), out(s.out[d]) {}
  int64_t step(bool transposed) const { return transposed ? 1 : S; }
  int64_t phases() const { return phased ? S : 1; }
  int64_t taps() const { return phased ? (K - 1) * dil / S + 1 : K; }
  int64_t spread() const { return phased ? taps() - 1 : (K - 1) * dil; }
  int64_t base() const { return phased ? pad / S : 0; }
  int64_t grid() const { return phased ? (out - 1 + pad) / S - base() + 1 : out; }
  /// Box offset of reduction tap j.
  int64_t tapOffset(bool transposed, int64_t j) const {
    return phased ? spread() - j : (transposed ? K - 1 - j : j) * dil;
  }
  /// Whether reduction tap j meets a kernel tap in phase phi.
  bool meets(int64_t j, int64_t phi) const {
    return !phased || ((j * S + phi) % dil == 0 && (j * S + phi) / dil < K);
  }
  /// Input position of box position 0 for the tile at grid position 0.
  int64_t origin0(bool transposed) const {
    return !transposed ? -pad : phased ? base() - spread() : pad - spread();
  }
};

/// The walks along D, H and W.
std::array<Axis, 3> axes(const ConvSpec &s) { return {Axis(s, 0), Axis(s, 1), Axis(s, 2)}; }

/// The (d, h, w) coordinates of index i of a D x H x W grid (W fastest) with extents h and w
/// along H and W: how reduction taps and output phases are numbered.
std::array<int64_t, 3> unflatten(int64_t i, int64_t h, int64_t w) {
  return {i / (h * w), i / w % h, i % w};
}

struct Geometry {
  int64_t cinG, coutG, taps, phases, ks, nt;
  int64_t used; // (k8 step, n8 tile) pairs whose products can be nonzero
};

Geometry geometry(const ConvSpec &s) {
  Geometry g;
  g.cinG = s.Cin / s.groups;
  g.coutG = s.Cout / s.groups;
  std::array<Axis, 3> ax = axes(s);
  g.taps = ax[0].taps() * ax[1].taps() * ax[2].taps();
  g.phases = ax[0].phases() * ax[1].phases() * ax[2].phases();
  g.ks = (g.cinG * g.taps + 7) / 8;
  g.nt = (g.phases * g.coutG + 7) / 8;
  // As the template's blockUsed: a whole-8 step is one reduction tap, a whole-8 tile one
  // phase; they are skipped where the tap meets no kernel tap in that phase along some dim.
  g.used = g.ks * g.nt;
  if (g.cinG % 8 == 0 && g.coutG % 8 == 0) {
    g.used = 0;
    for (int64_t k = 0; k < g.ks; ++k)
      for (int64_t n = 0; n < g.nt; ++n) {
        std::array<int64_t, 3> j = unflatten(8 * k / g.cinG, ax[1].taps(), ax[2].taps());
        std::array<int64_t, 3> f = unflatten(8 * n / g.coutG, ax[1].phases(), ax[2].phases());
        g.used += ax[0].meets(j[0], f[0]) && ax[1].meets(j[1], f[1]) && ax[2].meets(j[2], f[2]);
      }
  }
  return g;
}

/// Input positions a tile of t grid positions reads along dim d (the template's Walk::kBox).
int64_t boxExtent(const ConvSpec &s, int d, int64_t t) {
  Axis a(s, d);
  return a.step(s.transposed) * (t - 1) + a.spread() + 1;
}

/// Floats per box row in shared memory: the row copied in aligned pieces (16, 8 or 4 bytes,
/// as the input row length allows), starting up to a piece before the tile's first column
/// (the template's kRowStride).
int64_t boxRowStride(const ConvSpec &s, int64_t tw) {
  int64_t piece = s.in[2] % 4 == 0 ? 4 : s.in[2] % 2 == 0 ? 2 : 1;
  int64_t origin = Axis(s, 2).origin0(s.transposed);
  int64_t lead = (origin % piece + piece) % piece;
  return (lead + boxExtent(s, 2, tw) + piece - 1) / piece * piece;
}

/// The largest channel-stride residue channelResidue returns.
constexpr int64_t kMaxResidue = 28;

/// The whole rows of the block tile each warp holds (its m16 tiles are every column block of
/// them), or 0 where a warp's tiles are not whole rows (the template's kWR, there 1).
int64_t warpRows(const ConvMmaTile &t) {
  int64_t mcols = t.tw / 16, mw = int64_t(t.td) * t.th * mcols / t.warps;
  return mw % mcols == 0 ? mw / mcols : 0;
}

/// Consecutive outputs per channel a warp writes with one staged store pass: kRun m16 tiles
/// (a whole row of the block tile where the warp holds whole rows) in every W phase.
int64_t stagedRun(const ConvSpec &s, const ConvMmaTile &t) {
  return 16 * (warpRows(t) ? t.tw / 16 : 1) * Axis(s, 2).phases();
}

/// Shared memory of a tile: the input box(es), the weight fragments, the block's statistics
/// and, where the walk is by W phase or the tile stages its stores and the output is
/// stored, each warp's staged columns (every W phase of every channel, 16 x kRun rows and 4
/// floats of padding: the template's kStageLd).
/// With residue < 0, the most any channel stride residue needs.
int64_t smemBytes(const ConvSpec &s, const ConvMmaTile &t, int buffers, int64_t residue = -1) {
  Geometry g = geometry(s);
  int64_t plane = boxExtent(s, 0, t.td) * boxExtent(s, 1, t.th) * boxRowStride(s, t.tw);
  int64_t cs = (plane + 31) / 32 * 32 + (residue < 0 ? kMaxResidue : residue);
  int64_t fixed = buffers * g.cinG * cs + g.ks * g.nt * 64;
  if (s.normTail) {
    // Each warp's statistics (the template's Layout::kRedFloats), then the ring of
    // kTileLoop + 1 held tile slots (Layout::kY on): every (phase, channel) column of a
    // tile, columns kYCS = 4 mod 16 floats apart.
    int64_t yPlane = int64_t(t.td) * t.th * t.tw;
    int64_t ycs = yPlane + (4 - yPlane % 16 + 16) % 16;
    int64_t red = int64_t(t.warps) * 2 * g.coutG;
    return 4 * (fixed + (red + 3) / 4 * 4 + (t.tileLoop + 1) * g.phases * g.coutG * ycs);
  }
  Axis w(s, 2);
  int64_t run = stagedRun(s, t) / w.phases(); // 16 x the template's kRun
  int64_t stage =
      (w.phased || t.stageStores) && s.storeOutput ? t.warps * w.phases() * g.coutG * (run + 4) : 0;
  return 4 * (fixed + 2 * g.coutG + stage);
}

/// The channel stride of the box, mod 32 words (the template's kCS = whole 32-word lines
/// past the plane + this). A fragment load's 32 lanes read rows g (consecutive box positions
/// along W) of the four (tap, channel) pairs of lanes t: with whole-8-channel k8 steps the
/// pairs are channels t of one tap and 8 puts them 8 banks apart; otherwise the pairs mix
/// taps and channels, and the residue (a multiple of 4, so 16-byte pieces stay aligned) with
/// the fewest modelled wavefronts over all k8 steps is taken, 8 on ties. (S1: 43 wavefronts
/// for 22 loads with 8, 29 with 12.)
int64_t channelResidue(const ConvSpec &s, const ConvMmaTile &t) {
  Geometry g = geometry(s);
  if (g.cinG % 8 == 0)
    return 8;
  int64_t bd = boxExtent(s, 0, t.td), bh = boxExtent(s, 1, t.th), rs = boxRowStride(s, t.tw);
  int64_t plane = bd * bh * rs, step = s.transposed ? 1 : s.stride[2];
  std::array<Axis, 3> ax = axes(s);
  auto tapOff = [&](int d, int64_t j) { return ax[d].tapOffset(s.transposed, j); };
  auto wavefronts = [&](int64_t residue) {
    int64_t cs = (plane + 31) / 32 * 32 + residue, total = 0;
    auto offset = [&](int64_t e) -> int64_t {
      if (e >= g.cinG * g.taps)
        return 0;
      std::array<int64_t, 3> j = unflatten(e / g.cinG, ax[1].taps(), ax[2].taps());
      return e % g.cinG * cs + (tapOff(0, j[0]) * bh + tapOff(1, j[1])) * rs + tapOff(2, j[2]);
    };
    for (int64_t k = 0; k < g.ks; ++k)
      for (int64_t h = 0; h < 2; ++h) {
        // Distinct words per bank: the load's wavefronts.
        std::array<llvm::SmallVector<int64_t, 4>, 32> banks;
        for (int64_t lane = 0; lane < 32; ++lane) {
          int64_t word = (lane / 4) * step + offset(8 * k + lane % 4 + 4 * h);
          auto &b = banks[word % 32];
          if (std::find(b.begin(), b.end(), word) == b.end())
            b.push_back(word);
        }
        size_t most = 0;
        for (const auto &b : banks)
          most = std::max(most, b.size());
        total += int64_t(most);
      }
    return total;
  };
  int64_t best = 8, bestCost = wavefronts(8);
  for (int64_t r = 0; r <= kMaxResidue; r += 4) {
    int64_t c = wavefronts(r);
    if (c < bestCost)
      best = r, bestCost = c;
  }
  return best;
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Grid positions along dim d: the output's, or per phase of a strided transposed conv.
int64_t gridExtent(const ConvSpec &s, int d) { return Axis(s, d).grid(); }

int64_t spatialTiles(const ConvSpec &s, const ConvMmaTile &t) {
  return ceilDiv(gridExtent(s, 0), t.td) * ceilDiv(gridExtent(s, 1), t.th) *
         ceilDiv(gridExtent(s, 2), t.tw);
}

/// Weight fragments in registers when few enough, and not where by-phase columns that are
/// not whole n8 tiles need the registers for their own bookkeeping (t2d_s3_d2_p2 spilled 48
/// bytes with its 24 weight words in registers, none without).
bool weightsInRegisters(const Geometry &g) {
  return 2 * g.used <= kWeightRegs && !(g.phases > 1 && g.coutG % 8);
}

/// Box rows a warp's A fragments read per column block, D tap, W tap and channel chunk
/// where the template reuses them across its tile rows (kRowReuse: whole-8-channel k8 steps,
/// an H walk of stride 1, the warp holding wr > 1 whole consecutive rows of the tile), else
/// 0. Without reuse each of the wr rows reads one box row per H tap.
int64_t reusedRows(const ConvSpec &s, const ConvMmaTile &t) {
  Geometry g = geometry(s);
  Axis h(s, 1);
  int64_t wr = warpRows(t);
  if (g.cinG % 8 || h.step(s.transposed) != 1 || h.taps() < 2 || wr < 2 || t.th % wr)
    return 0;
  int64_t rows = 0;
  for (int64_t u = 0; u < wr + h.spread(); ++u) {
    bool read = false;
    for (int64_t j = 0; j < h.taps(); ++j) {
      int64_t row = u - h.tapOffset(s.transposed, j); // the tile row that reads box row u
      read |= row >= 0 && row < wr;
    }
    rows += read;
  }
  return rows;
}

/// Whether some A fragment serves more than one (tile row, H tap) pair of a warp (with a
/// dilation of at least the warp's rows, every pair reads a box row of its own).
bool sharesFragments(const ConvSpec &s, const ConvMmaTile &t) {
  int64_t rows = reusedRows(s, t);
  return rows && rows < warpRows(t) * Axis(s, 1).taps();
}

/// Modelled cycles of all block tiles (see the file header).
double tileCost(const ConvSpec &s, const ConvMmaTile &t) {
  Geometry g = geometry(s);
  int64_t mtiles = t.td * t.th * (t.tw / 16);
  double loads = 4.0 * g.ks; // A fragment wavefronts per m16 tile
  if (int64_t rows = reusedRows(s, t))
    loads *= double(rows) / double(warpRows(t) * Axis(s, 1).taps());
  double compute = double(mtiles) * std::max<double>(loads, 2.0 * g.used);
  if (!weightsInRegisters(g))
    compute += double(t.warps) * g.used * 2;
  double epilogue = 8.0 * mtiles * g.nt;
  double box = double(g.cinG) * boxExtent(s, 0, t.td) * boxExtent(s, 1, t.th) *
                   boxRowStride(s, t.tw) / 16.0 +
               100.0;
  return double(spatialTiles(s, t)) * (compute + epilogue + box);
}

/// Tiles with 4 warps (or fewer when the output is too small for 4 m16 tiles), at most 4
/// m16 tiles per warp and kThreadValues per thread, within the shared memory limit.
/// The most m16 tiles a warp can hold within kThreadValues (0: not even one).
int64_t maxTilesPerWarp(const ConvSpec &s) {
  Geometry g = geometry(s);
  // By phase with channels that are not whole n8 tiles, each lane's columns have their own
  // phases and output offsets (t2d_s3_d2_p2 spilled 56 bytes at two m16 tiles without them).
  int64_t fixed = (g.cinG % 8 ? 2 * g.ks : 0) + (s.accumulateStats ? 4 * g.nt : 0) +
                  (g.phases > 1 && g.coutG % 8 ? 4 * g.nt : 0);
  // Groups of more than 8 channels that are not whole k8 steps: at 4 m16 tiles a warp ptxas
  // spilled 2-D 3x3 convolutions of 10, 12 and 20 channels a group by 108-1120 bytes; at 2,
  // 12 none, 10 up to 36 (two n8 tiles) and 20 up to 336; at 1 (nearly) none, but slower
  // than 2 (2026-11-27, sm_90a, 128 registers; conv2d_g12_bn_relu 0.369 ms at 4, 0.303 at 1,
  // 0.269 at 2 on an H100). From 20 k8 steps on, 1 (conv2d_g20_relu: 0.740 ms at 2 with 336
  // bytes spilled, 0.380 at 1, H200). 3-D ones of 3-6 channels (27 taps) fit 4.
  const int64_t most = g.cinG % 8 && g.cinG > 8 ? (g.ks >= 20 ? 1 : 2) : 4;
  return std::min<int64_t>(most, std::max<int64_t>(0, kThreadValues - fixed) / (4 * g.nt));
}

/// Whether the emitter stages a kernel's stores: output rows whose length is not a multiple
/// of 8 floats start off the 32-byte sectors, so the fragments' 8-position runs write partial
/// sectors; staged, each channel's row of the tile is written whole.
bool stagesStores(const ConvSpec &s) { return s.storeOutput && s.out[2] % 8 != 0; }

std::vector<ConvMmaTile> candidates(const ConvSpec &s) {
  int64_t maxMw = maxTilesPerWarp(s);
  std::vector<ConvMmaTile> out;
  int64_t maxTw = std::min<int64_t>(64, ceilDiv(gridExtent(s, 2), 16) * 16);
  for (int tw = 16; tw <= maxTw; tw += 16)
    for (int th = 1; th <= std::min<int64_t>(8, gridExtent(s, 1)); ++th)
      for (int td = 1; td <= std::min<int64_t>(4, gridExtent(s, 0)); ++td) {
        int64_t mtiles = int64_t(td) * th * (tw / 16);
        for (int warps : {4, 2, 1}) {
          if (mtiles % warps || mtiles / warps > maxMw)
            continue;
          ConvMmaTile t{td, th, tw, warps, 1};
          t.stageStores = stagesStores(s); // (its staging counts against the limit)
          if (smemBytes(s, t, 1) <= kSmemLimit)
            out.push_back(t);
          break;
        }
      }
  // Staged stores written in runs of at least 32 floats where such a tile exists: S2's
  // storing pass took 3.84 ms on a 1x16x16 tile (runs of 16) against 2.56 on 1x8x32 (H100).
  auto shortRuns = [&](const ConvMmaTile &t) { return t.stageStores && stagedRun(s, t) < 32; };
  if (std::any_of(out.begin(), out.end(), [&](const ConvMmaTile &t) { return !shortRuns(t); }))
    out.erase(std::remove_if(out.begin(), out.end(), shortRuns), out.end());
  // Fewer than four warps only where no 4-warp tile exists (tiny outputs).
  bool four =
      std::any_of(out.begin(), out.end(), [](const ConvMmaTile &t) { return t.warps == 4; });
  if (four)
    out.erase(
        std::remove_if(out.begin(), out.end(), [](const ConvMmaTile &t) { return t.warps != 4; }),
        out.end());
  return out;
}

} // namespace

bool convMmaSupports(const ConvSpec &s, std::string *whyNot) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  if (s.groups < 1 || s.Cin % s.groups || s.Cout % s.groups)
    return no("groups do not divide the channels");
  Geometry g = geometry(s);
  if (g.coutG > kMaxCoutG)
    return no("more than " + std::to_string(kMaxCoutG) + " output channels per group");
  if (g.phases * g.coutG > kMaxCoutG)
    return no("more than " + std::to_string(kMaxCoutG) +
              " (output phase, channel) columns per group");
  if (g.ks * g.nt > kMaxFragments)
    return no("the group's weights exceed " + std::to_string(kMaxFragments * 256 / 1024) +
              " KiB of fragments");
  if (maxTilesPerWarp(s) == 0)
    return no("the accumulators, lane offsets and statistics of one m16 tile exceed " +
              std::to_string(kThreadValues) + " values per thread");
  if (candidates(s).empty())
    return no("the input box of the smallest tile exceeds " + std::to_string(kSmemLimit / 1024) +
              " KiB");
  return true;
}

bool convMmaFinishesNorm(const ConvSpec &s, int64_t normGroups, std::string *whyNot,
                         bool evenWhereSlower) {
  auto no = [&](const std::string &why) {
    if (whyNot)
      *whyNot = why;
    return false;
  };
  if (normGroups < 1 || s.Cout % normGroups)
    return no("the norm's groups do not divide the channels");
  Geometry g = geometry(s);
  if (g.coutG % (s.Cout / normGroups))
    return no("a norm group spans several convolution groups");
  // The spec as the emitter will see it, so that the tile (and with it the units per (n,
  // group)) is the one the kernel gets: the held slots' shared memory can make it smaller
  // than the plain convolution's. (The norm's eps and affine parameters do not change it.)
  ConvSpec stats = s;
  stats.accumulateStats = true;
  stats.storeOutput = true;
  if (!stats.normTail)
    stats.normTail = ConvNormTail{normGroups, 1e-5, true, {}};
  if (!convMmaSupports(stats, nullptr))
    return no("conv_mma cannot run the convolution with statistics");
  if (s.N * s.groups < kNormMinTasks && !evenWhereSlower)
    return no("fewer than " + std::to_string(kNormMinTasks) +
              " (n, group)s: the two kernels are as fast");
  const int64_t tiles = spatialTiles(s, chooseConvMmaTile(stats));
  if (tiles < kNormMinTiles && !evenWhereSlower)
    return no("fewer than " + std::to_string(kNormMinTiles) +
              " tiles per (n, group): the two kernels are faster");
  if ((tiles + kNormTileLoop - 1) / kNormTileLoop > kNormMaxUnits)
    return no("more than " + std::to_string(kNormMaxUnits * kNormTileLoop) +
              " tiles per (n, group): more units than a GPU holds blocks at once");
  if (s.normTail && (!s.storeOutput || !s.accumulateStats))
    return no("the norm needs the output stored and its statistics");
  return true;
}

double convMmaUsefulShare(const ConvSpec &s) {
  Geometry g = geometry(s);
  // Useful: one product per kernel tap and (input, output) channel pair, per grid position
  // (by phase too: each kernel tap meets exactly one (super-tap, phase) pair along each dim).
  double useful = double(g.cinG) * g.coutG * s.kernel[0] * s.kernel[1] * s.kernel[2];
  return useful / (64.0 * g.used);
}

ConvMmaTile chooseConvMmaTile(const ConvSpec &s) {
  std::vector<ConvMmaTile> all = candidates(s);
  assert(!all.empty() && "chooseConvMmaTile needs a supported spec");
  ConvMmaTile best = all.front();
  double bestCost = tileCost(s, best);
  for (const ConvMmaTile &t : all) {
    double c = tileCost(s, t);
    if (c < bestCost * (1 - 1e-9)) {
      best = t;
      bestCost = c;
    }
  }
  // Consecutive tiles per block, while the grid keeps at least 2048 blocks (some 16 per SM,
  // so that whole blocks per SM leave at most ~6% of imbalance): the weights are staged once
  // per block. The next box is copied while the current one is used when two boxes fit;
  // otherwise after it (measured on H200: a 16-channel x 27-tap group with one tile per
  // block gathered its weights from L2 in 252 M sectors, 8x the FFMA kernel's traffic; S1's
  // kernel 0.193 ms with 4 tiles per block, 0.161 with 8).
  int64_t blocks = spatialTiles(s, best) * s.groups * s.N;
  while (best.tileLoop < 8 && blocks / (2 * best.tileLoop) >= 2048 &&
         2 * best.tileLoop <= spatialTiles(s, best))
    best.tileLoop *= 2;
  // With the norm finished in the kernel a unit of work is kTileLoop tiles of one (n, group),
  // whose values the block holds in shared memory until the (n, group) is complete.
  if (s.normTail)
    best.tileLoop = kNormTileLoop;
  best.doubleBuffer = smemBytes(s, best, 2) <= (s.normTail ? kNormSmemLimit : kSmemLimit);
  return best;
}

namespace {

/// What every conv_mma kernel needs of the spec, whatever the tile.
llvm::Error checkMmaSpec(const ConvSpec &s) {
  if (llvm::Error err = checkDirectConvSpec(s))
    return err;
  if (s.math != MathMode::Tf32)
    return makeError(s.kernelName + ": conv_mma computes in TF32 only");
  if (s.pool || s.softmax)
    return makeError(s.kernelName +
                     ": conv_mma has no pool or softmax tail (conv_direct runs them)");
  if (s.channelReduce)
    return makeError(s.kernelName + ": conv_mma has no reduction over the channels "
                                    "(conv_igemm's wgmma engine runs it)");
  std::string why;
  if (!convMmaSupports(s, &why))
    return makeError(s.kernelName + ": conv_mma cannot run this convolution: " + why);
  // (Whether it pays is the planner's question; the kernel only needs what makes it correct.)
  if (s.normTail && !convMmaFinishesNorm(s, s.normTail->groups, &why, true))
    return makeError(s.kernelName + ": conv_mma cannot finish this norm: " + why);
  return llvm::Error::success();
}

/// The kernel of a checked spec on tile t (checked here).
llvm::Expected<KernelSource> emitOnTile(const ConvSpec &s, const ConvMmaTile &t) {
  Geometry g = geometry(s);
  int64_t mtiles = int64_t(t.td) * t.th * (t.tw / 16);
  if (t.tw < 16 || t.tw % 16 || t.th < 1 || t.td < 1 || t.tileLoop < 1 ||
      (t.warps != 1 && t.warps != 2 && t.warps != 4 && t.warps != 8) || mtiles % t.warps)
    return makeError(s.kernelName + ": conv_mma tile " + std::to_string(t.td) + "x" +
                     std::to_string(t.th) + "x" + std::to_string(t.tw) + " does not split into " +
                     std::to_string(t.warps) + " warps of whole m16 tiles");
  int buffers = (t.tileLoop > 1 || s.normTail) && t.doubleBuffer ? 2 : 1;
  int64_t residue = channelResidue(s, t);
  int64_t smem = smemBytes(s, t, buffers, residue);
  if (smem > 200 * 1024)
    return makeError(s.kernelName + ": conv_mma tile needs " + std::to_string(smem) +
                     " bytes of shared memory");
  int64_t tilesD = ceilDiv(gridExtent(s, 0), t.td), tilesH = ceilDiv(gridExtent(s, 1), t.th),
          tilesW = ceilDiv(gridExtent(s, 2), t.tw);
  int64_t gridX = ceilDiv(tilesD * tilesH * tilesW, t.tileLoop);
  // Tile indices (blockIdx.x * kTileLoop + i) are 32-bit in the template.
  if (tilesD * tilesH * tilesW + t.tileLoop > 0x7fffffff || s.groups > 65535 || s.N > 65535)
    return makeError(s.kernelName + ": conv_mma grid too large");

  PrologueWriter w(s.kernelName, "conv_mma.cuh");
  writeDirectConvShape(w, s);
  int threads = 32 * t.warps;
  const int64_t convUnits = gridX, tasks = s.N * s.groups;
  if (s.normTail) {
    if (tasks * convUnits > 0x7fffffff) // (unit indices are 32-bit in the template)
      return makeError(s.kernelName + ": conv_mma with its norm has too many work units");
    w.constant("kC", s.Cout);
    w.constant("kL", volume(s.out));
    w.constant("kGroups", s.normTail->groups);
    w.constant("kCG", s.Cout / s.normTail->groups);
    w.constantBool("kAffine", s.normTail->affine);
    w.constant("kConvUnits", convUnits);
    w.constant("kDealWords", kNormDealWords);
  }
  w.constant("kThreads", threads);
  // (The norm's 5 blocks were measured with 128 threads; other blocks keep the usual cap.)
  const int perSm = !s.normTail || threads != 128 ? kThreadsPerSm
                    : s.wgmma                     ? kNormThreadsPerSm
                                                  : kNormThreadsPerSmOther;
  w.constant("kMinBlocks", std::max(1, perSm / threads));
  w.constant("kTD", t.td);
  w.constant("kTH", t.th);
  w.constant("kTW", t.tw);
  w.constant("kTilesD", tilesD);
  w.constant("kTilesH", tilesH);
  w.constant("kTilesW", tilesW);
  w.constant("kTileLoop", t.tileLoop);
  w.constant("kChannelResidue", residue);
  w.constantBool("kDoubleBuffer", buffers == 2);
  w.constantBool("kBInRegs", weightsInRegisters(g));
  w.constantBool("kStageStores", t.stageStores);
  w.code("namespace cfg {");
  w.anchorEpilogue("Epilogue", s.epilogue);
  if (s.normTail) {
    // eps stays a double: the moments are finished in double (norm_common.cuh).
    w.code("constexpr double kEps = " + formatDouble(s.normTail->eps) + ";");
    w.anchorEpilogue("Post", s.normTail->post);
  }
  w.code("} // namespace cfg");
  if (s.normTail)
    w.code("#define SINTER_CONV_MMA_NORM 1");

  KernelSource k;
  k.name = s.kernelName;
  k.templateName = "conv_mma.cuh";
  k.source = w.finish();
  k.launch.grid = {unsigned(gridX), unsigned(s.groups), unsigned(s.N)};
  if (s.normTail) {
    // Units of work taken in turn by every block the GPU holds, at least kConvUnits of them
    // (the template's kernel: a block's two units in flight must be of different tasks).
    k.launch.grid = {unsigned(tasks * convUnits), 1, 1};
    k.launch.coResident = unsigned(convUnits);
  }
  k.launch.block = {unsigned(threads), 1, 1};
  k.launch.sharedBytes = unsigned(smem);
  k.tileConfig =
      "direct tf32 mma.sync: " + std::to_string(t.td) + "x" + std::to_string(t.th) + "x" +
      std::to_string(t.tw) + " positions x " + std::to_string(g.coutG) + " channels" +
      (g.phases > 1 ? " x " + std::to_string(g.phases) + " output phases" : "") + " per tile, " +
      std::to_string(g.ks) + " k8 steps" +
      (g.used < g.ks * g.nt ? " (" + std::to_string(g.used) + " of " + std::to_string(g.ks * g.nt) +
                                  " step x tile products)"
                            : "") +
      ", " + std::to_string(threads) + " threads, " + std::to_string(t.tileLoop) +
      (t.tileLoop == 1 ? " tile per block"
       : buffers == 2  ? " tiles per block (next box copied during the products)"
                       : " tiles per block (one box buffer)") +
      ", weights in " + (weightsInRegisters(g) ? "registers" : "shared memory") +
      (sharesFragments(s, t)
           ? ", A fragments shared by each warp's " + std::to_string(warpRows(t)) + " tile rows"
           : "") +
      ((Axis(s, 2).phased || t.stageStores) && s.storeOutput
           ? ", stores staged per warp and written by whole tile rows"
           : "") +
      (s.normTail ? "; group norm finished in the kernel: units of " + std::to_string(t.tileLoop) +
                        " tiles of one (n, group) taken in turn by every resident block, their "
                        "values held in shared memory until the (n, group) is complete"
                  : "");
  setDirectConvCost(s, k);
  if (s.normTail) {
    // After the statistics: a done count per (n, group) (unsigned), then the counters that
    // deal the blocks their places (the template's kDealWords).
    WorkspaceNeed &stats = k.workspace.back();
    stats.bytes += roundUp(4 * tasks, 8) + 4 * kNormDealWords;
    stats.what += ", then a count of the units done per (n, group) and the deal's " +
                  std::to_string(kNormDealWords) + " counters (unsigned)";
    k.flops += 2.0 * s.N * s.Cout * volume(s.out);
    k.bytes += s.normTail->affine ? 8.0 * s.Cout : 0;
  }
  return k;
}

} // namespace

llvm::Expected<KernelSource> emitConvMma(const ConvSpec &s) {
  if (llvm::Error err = checkMmaSpec(s))
    return err;
  return emitOnTile(s, chooseConvMmaTile(s));
}

llvm::Expected<KernelSource> emitConvMma(const ConvSpec &s, const ConvMmaTile &t) {
  if (llvm::Error err = checkMmaSpec(s))
    return err;
  return emitOnTile(s, t);
}

} // namespace sinter
