//===- templates/conv_mma.cuh - direct convolution on mma.sync for small channel groups ===//
//
// Convolution and transposed convolution (any stride), 1-, 2- or 3-D (spatial dims
// D, H, W; lower ranks have size-1 leading dims), with padding, dilation, groups, bias and
// output_padding (already in the output size), as TF32 m16n8k8 mma.sync products read
// straight from a box of the input in shared memory. It is conv_direct's engine for TF32:
// the same convolutions with few channels per group, where conv_igemm's 64- and 128-wide
// tiles would be mostly padding, but with the products on the tensor cores instead of FFMA.
//
// The product of one block: M = output positions, 16 consecutive along W per m16 tile;
// N = the group's output channels, in n8 tiles; K = (tap, input channel) pairs, tap-major,
// channels inner, in k8 steps (the last padded with zero weights). A strided transposed
// convolution is walked by output phase (Walk below): M = positions of a grid in which each
// position stands for one output per phase, N = (phase, output channel) pairs, K = the
// phases' "super-taps" x input channels; an mma whose k8 step and n8 tile never meet in the
// kernel is skipped. A thread's A element for
// row r and pair (tap, ci) is box[ci * kCS + pos(r) + tapOffset(tap)]: the input walk of a
// convolution (stride S) or of a transposed convolution (stride 1 after the phase split) is linear
// in the output position, so every offset is a compile-time constant or, for groups whose
// channels are not a multiple of 8, one of 2 * kKS per-thread constants held in registers. The
// channel stride kCS is 8 mod 32 words when a k8 step is one tap of 8 channels, so the 32 lanes of
// a fragment load (rows g, channels t) hit 32 banks; for other groups the emitter picks the residue
// with the fewest modelled conflicts.
//
// Work split: block (x, y, z) = (kTileLoop consecutive output tiles of kTD x kTH x kTW
// positions, group, batch n); each warp owns kMW m16 tiles of the block tile and all kNT
// n8 tiles (with kRowReuse, a warp holding several whole rows of the tile loads each A
// fragment once for every row and H tap that reads it). The block copies its input box (every
// channel of the group, the tile's positions plus the kernel's halo, zeros outside the input) with
// cp.async in aligned 16-, 8- or 4-byte pieces spread over all its threads, and with kDoubleBuffer
// the next tile's box while it computes on this one (without, when two boxes do not fit, each box
// after the previous tile: the weights are still staged once for all the block's tiles).
// The weights are staged once per block in fragment order (TF32-rounded) and kept in
// registers when kBInRegs. Epilogue, without a branch per element (elements outside the
// output are computed at a clamped position and dropped): per element, bias + epilogue
// functor, store (each store
// instruction writes 8 consecutive positions of 4 channels: whole 32-byte sectors where output
// rows are a multiple of 8 floats; otherwise, and when walking by W phase, the values are staged
// per warp and each channel's row of the tile is written by one instruction), per-(n, c) sums and
// sums of squares reduced over the lanes of a column, then over the block in shared memory, and
// added with one double atomic per (n, c, block).
//
// With SINTER_CONV_MMA_NORM defined the kernel also finishes a group norm whose groups lie
// within the convolution's groups (the kernel at the end of this file): each block keeps
// its units' epilogue values in its own shared memory, adds their statistics, and once all
// of a unit's (n, group) is counted normalises and stores them, so y reaches memory once,
// normalised, and never crosses L2 in between.
//
// Slots: 0 x, 1 w, 2 bias, 3 y, 4 stats (double[N*Cout*2]; with the norm followed by a
// count of the units done per (n, group) (unsigned) and the deal's kDealWords counters (see
// dealPlace), all zeroed by the planner), 5 and 8..15
// for the epilogue (as conv_direct.cuh), with the norm 6 gamma and 7 beta. The prologue
// defines, in namespace
// cfg, the constants used below and `struct Epilogue` (compiler/kernels/Emit.h: anchor
// epilogue); with the norm also norm_common.cuh's constants, kConvUnits and
// `struct Post` (the norm's chain, s = index within the plane).
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "common.cuh"
#include "mma.cuh"
#ifdef SINTER_CONV_MMA_NORM
#include "norm_common.cuh"
#endif

namespace sinter {
namespace conv_mma {

/// The walk along one spatial dim. A tile is T consecutive positions of the dim's grid; row
/// p of the grid and reduction tap j read box position kStep * (p - p0) + tap(j), where the
/// box starts at input position origin(p0). For a convolution and a stride-1 transposed
/// convolution the grid is the output and the taps are the kernel's (flipped when
/// transposed). A strided transposed convolution is walked by output phase: grid position p
/// stands for the S outputs o = S * (p + kBase) + phi - Pad, phi < S, which all read inputs
/// p + kBase - j for the kTaps "super-taps" j; phase phi and super-tap j meet kernel tap k
/// where k * Dil = j * S + phi (none elsewhere: a zero weight). The phases become columns of
/// the product (N = phases x output channels), so the input walk has stride 1 and no product
/// lands on a structural zero of the stride.
template <bool Transposed, int S, int Dil, int K, int Pad, int O, int T> struct Walk {
  static constexpr bool kPhased = Transposed && S > 1;
  static constexpr int kStep = Transposed ? 1 : S;
  static constexpr int kPhases = kPhased ? S : 1;
  static constexpr int kTaps = kPhased ? (K - 1) * Dil / S + 1 : K;
  static constexpr int kSpread =
      kPhased ? kTaps - 1 : (K - 1) * Dil; // box positions past a row's first
  static constexpr int kBox = kStep * (T - 1) + kSpread + 1;
  static constexpr int kBase = kPhased ? Pad / S : 0;
  static constexpr int kGrid = kPhased ? (O - 1 + Pad) / S - kBase + 1 : O;
  /// Box offset of reduction tap j.
  __host__ __device__ static constexpr int tap(int j) {
    return kPhased ? kSpread - j : (Transposed ? K - 1 - j : j) * Dil;
  }
  /// The kernel tap of reduction tap j in phase phi, or -1 where they do not meet.
  __host__ __device__ static constexpr int kernelTap(int j, int phi) {
    return !kPhased                                              ? j
           : (j * S + phi) % Dil == 0 && (j * S + phi) / Dil < K ? (j * S + phi) / Dil
                                                                 : -1;
  }
  /// Input position of box position 0 for the tile at grid position 0.
  __host__ __device__ static constexpr int origin0() {
    return !Transposed ? -Pad : kPhased ? kBase - kSpread : Pad - kSpread;
  }
  static __device__ __forceinline__ int origin(int p0) { return p0 * kStep + origin0(); }
  /// Output position of grid position p in phase phi.
  __host__ __device__ static constexpr int out(int p, int phi) {
    return kPhased ? S * (p + kBase) + phi - Pad : p;
  }
};

} // namespace conv_mma
} // namespace sinter

namespace cfg {
using WD = sinter::conv_mma::Walk<kTransposed, kSD, kDD, kKD, kPadD, kOD, kTD>;
using WH = sinter::conv_mma::Walk<kTransposed, kSH, kDH, kKH, kPadH, kOH, kTH>;
using WW = sinter::conv_mma::Walk<kTransposed, kSW, kDW, kKW, kPadW, kOW, kTW>;
constexpr int kTaps = WD::kTaps * WH::kTaps * WW::kTaps;         // reduction taps
constexpr int kPhases = WD::kPhases * WH::kPhases * WW::kPhases; // output phases
constexpr int kCols = kPhases * kCoutG;  // product columns: (phase, output channel) pairs
constexpr int kKEntries = kCinG * kTaps; // (tap, channel) pairs of the reduction
constexpr int kKS = (kKEntries + 7) / 8; // k8 steps
constexpr int kNT = (kCols + 7) / 8;     // n8 tiles

/// The kernel tap (kd, kh, kw flattened) that reduction tap `tap` meets in output phase
/// `phase`, or -1 (a structural zero of a strided transposed convolution).
__host__ __device__ constexpr int kernelTap(int tap, int phase) {
  const int kd = WD::kernelTap(tap / (WW::kTaps * WH::kTaps), phase / (WW::kPhases * WH::kPhases));
  const int kh = WH::kernelTap(tap / WW::kTaps % WH::kTaps, phase / WW::kPhases % WH::kPhases);
  const int kw = WW::kernelTap(tap % WW::kTaps, phase % WW::kPhases);
  return kd < 0 || kh < 0 || kw < 0 ? -1 : (kd * kKH + kh) * kKW + kw;
}
/// Whether the products of k8 step s and n8 tile nt can be nonzero: false where the step is
/// one reduction tap and the tile one phase, and they never meet (so the mma is skipped).
__host__ __device__ constexpr bool blockUsed(int s, int nt) {
  return kPhases == 1 || kCinG % 8 != 0 || kCoutG % 8 != 0 ||
         kernelTap(8 * s / kCinG, 8 * nt / kCoutG) >= 0;
}
} // namespace cfg

namespace sinter {
namespace conv_mma {

// With the norm finished in the kernel (SINTER_CONV_MMA_NORM), each block keeps the
// epilogue's values of its unit (kTileLoop tiles of one (n, group)) in its own shared memory,
// in a ring of held tile slots, and normalises and stores them once the unit's (n, group) is
// complete; y never goes to L2 unnormalised.
#ifdef SINTER_CONV_MMA_NORM
constexpr bool kHoldY = true;

__device__ __forceinline__ unsigned loadAcquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ void addRelease(unsigned *p, unsigned v) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

#else
constexpr bool kHoldY = false;
#endif

/// The input box of a tile and the block's shared memory (offsets in floats): the box
/// buffers, the weight fragments, the block's statistics, then each warp's staged stores or,
/// with the norm, the ring of held tile slots.
struct Layout {
  static constexpr int kBD = cfg::WD::kBox, kBH = cfg::WH::kBox, kBW = cfg::WW::kBox;
  // Box rows are copied in pieces of kPiece floats (16, 8 or 4 bytes: what the input row
  // length allows), aligned in the input: a tile's first input column is the constant
  // origin(0) plus a multiple of 16 * step, so the box starts kLead columns before it.
  static constexpr int kPiece = cfg::kIW % 4 == 0 ? 4 : cfg::kIW % 2 == 0 ? 2 : 1;
  static constexpr int kLead = (cfg::WW::origin0() % kPiece + kPiece) % kPiece;
  static constexpr int kPieces = (kLead + kBW + kPiece - 1) / kPiece; // per box row
  static constexpr int kRowStride = kPieces * kPiece;
  static constexpr int kPlane = kBD * kBH * kRowStride;
  // Channel stride: whole 32-word lines past the plane plus the emitter's residue (8 for
  // whole-8-channel k8 steps; else the one with the fewest bank conflicts it models).
  static constexpr int kCS = (kPlane + 31) / 32 * 32 + cfg::kChannelResidue;
  static_assert(cfg::kChannelResidue % 4 == 0, "box channels must stay 16-byte aligned");
  static constexpr int kBoxFloats = cfg::kCinG * kCS;
  // Two box buffers with kDoubleBuffer: the next tile's box (with the norm, also the next
  // unit's first) is copied while the current one is used.
  static constexpr int kBuffers = (cfg::kTileLoop > 1 || kHoldY) && cfg::kDoubleBuffer ? 2 : 1;
  static constexpr int kFragWords = cfg::kKS * cfg::kNT * 64;
  static constexpr int kWeights = kBuffers * kBoxFloats;
  static constexpr int kRed = kWeights + kFragWords;
  // Held y: a ring of kTileLoop + 1 tile slots, each [column][td][th][tw] with columns kYCS
  // apart, kYCS = 4 mod 16 so that a fragment's 32 lanes (columns 2t, positions g) write 32
  // banks. A block's tiles take the slots in turn; a unit's values are normalised before
  // its slots come round again (the kernel at the end of this file).
  static constexpr int kYPlane = cfg::kTD * cfg::kTH * cfg::kTW;
  static constexpr int kYCS = kYPlane + (4 - kYPlane % 16 + 16) % 16;
  static constexpr int kYTile = cfg::kCols * kYCS;
  static constexpr int kYSlots = cfg::kTileLoop + 1;
  // The block's statistics: [kCoutG][2] added to by every warp, or with the norm, where a
  // block adds its statistics once a unit, [warp][kCoutG][2] written by each warp and
  // summed by 2 x kCoutG threads (the shared-memory float adds are CAS loops, which cost S2
  // 2.4%).
  static constexpr int kRedFloats = (kHoldY ? cfg::kThreads / 32 : 1) * 2 * cfg::kCoutG;
  static constexpr int kY = kRed + (kRedFloats + 3) / 4 * 4;
};

/// Grid origin of spatial tile st (the output origin, unless the walk is by phase).
__device__ __forceinline__ void tileOrigin(int st, int &pd0, int &ph0, int &pw0) {
  pw0 = (st % cfg::kTilesW) * cfg::kTW;
  ph0 = (st / cfg::kTilesW % cfg::kTilesH) * cfg::kTH;
  pd0 = st / (cfg::kTilesW * cfg::kTilesH) * cfg::kTD;
}

/// The box of spatial tile st of image n and group grp into buf, piece by piece over the
/// whole block (a piece lies wholly inside the input row or wholly outside it; outside ones
/// are zero-filled).
///
/// With 16-byte pieces and whole box rows per pass of the block (kRowsPerPass, at most an
/// eighth of the threads idle), each thread keeps one piece column of the box and walks the
/// rows kRowsPerPass apart, stepping its row coordinates instead of dividing a flat piece
/// index into them for every piece (S2: 39 instructions per piece before, 24 after; its
/// statistics pass 2.30 -> 2.11 ms on an H100). With 4-byte pieces the row walk was slower
/// (convt2d_grouped_dil_in_relu 0.437 -> 0.476 ms), so those keep the flat loop.
__device__ __forceinline__ void loadBox(const float *__restrict__ x, const int n, const int grp,
                                        const int st, float *buf) {
  using namespace cfg;
  constexpr int kBD = Layout::kBD, kBH = Layout::kBH, kPiece = Layout::kPiece;
  constexpr int kLead = Layout::kLead, kPieces = Layout::kPieces;
  constexpr int kRowStride = Layout::kRowStride, kCS = Layout::kCS;
  const float *xg = x + (i64)(n * kCin + grp * kCinG) * kID * kIH * kIW;
  constexpr int kRows = kCinG * kBD * kBH, kRowsPerPass = kThreads / kPieces;
  constexpr bool kRowWalk =
      kPiece == 4 && kRowsPerPass >= 1 && (kThreads - kRowsPerPass * kPieces) * 8 <= kThreads;
  int pd0, ph0, pw0;
  tileOrigin(st, pd0, ph0, pw0);
  const int id0 = WD::origin(pd0), ih0 = WH::origin(ph0);
  const int iw0 = WW::origin(pw0) - kLead;
  if constexpr (kRowWalk) {
    // Offsets within the group's input: 32 bits where they fit.
    constexpr i64 kExtent = (i64)kCinG * kID * kIH * kIW;
    using Off = typename sinter::Select<(kExtent < (1ll << 31)), int, long long>::Type;
    const int q = threadIdx.x % kPieces, r0 = threadIdx.x / kPieces;
    if (r0 >= kRowsPerPass)
      return; // the block's last few threads, short of a whole column
    const int iw = iw0 + q * kPiece;
    const bool colOk = unsigned(iw) < unsigned(kIW);
    // The thread's rows step by kRowsPerPass = (kDCi, kDBd, kDBh) in the radices (kBD, kBH),
    // and so do its input row (id, ih) and its source and destination offsets, with a
    // carry when ih or id leaves the box: no division or multiplication per piece (S2:
    // 25 instructions a piece with the coordinates turned into offsets each time).
    constexpr int kDBh = kRowsPerPass % kBH, kDBd = kRowsPerPass / kBH % kBD;
    constexpr int kDCi = kRowsPerPass / (kBH * kBD);
    constexpr Off kInH = kIW, kInD = (Off)kIH * kIW, kInC = (Off)kID * kIH * kIW;
    int ih = ih0 + r0 % kBH, id = id0 + r0 / kBH % kBD;
    const int ci0 = r0 / (kBH * kBD);
    Off off = ci0 * kInC + (Off)id * kInD + (Off)ih * kInH + iw;
    unsigned dst = sinter::mma::smemAddr(buf) +
                   4u * unsigned(ci0 * kCS + r0 % (kBH * kBD) * kRowStride + q * kPiece);
    // The whole box's depth is in the input or not when it is one deep.
    const bool rowOk = colOk && (kBD > 1 || unsigned(id) < unsigned(kID));
    // (Opaque: else the compiler rebuilds the group's base address for every piece.)
    const float *base =
        reinterpret_cast<const float *>(sinter::opaque(reinterpret_cast<unsigned long long>(xg)));
#pragma unroll 2
    for (int r = r0; r < kRows; r += kRowsPerPass) {
      const bool ok =
          rowOk && unsigned(ih) < unsigned(kIH) && (kBD == 1 || unsigned(id) < unsigned(kID));
      // (A piece outside the input reads nothing; its source stays the group's base.)
      const float *src = base + (ok ? off : Off(0));
      sinter::mma::cpAsync16(dst, src, ok ? 16 : 0);
      ih += kDBh, id += kDBd;
      off += kDCi * kInC + kDBd * kInD + kDBh * kInH;
      dst += 4u * unsigned(kDCi * kCS + (kDBd * kBH + kDBh) * kRowStride);
      if (ih >= ih0 + kBH) { // (a channel's box rows are consecutive: no carry in dst)
        ih -= kBH, ++id, off += kInD - kBH * kInH;
        if constexpr (kBD == 1)
          id = id0, off += kInC - kInD, dst += 4u * unsigned(kCS - kBH * kRowStride);
      }
      if constexpr (kBD > 1) {
        if (id >= id0 + kBD)
          id -= kBD, off += kInC - kBD * kInD, dst += 4u * unsigned(kCS - kBD * kBH * kRowStride);
      }
      // (Opaque: otherwise the compiler rederives the coordinates from r by division.)
      ih = sinter::opaque(ih), id = sinter::opaque(id);
    }
  } else {
    for (int e = threadIdx.x; e < kCinG * kBD * kBH * kPieces; e += kThreads) {
      const int q = e % kPieces, r = e / kPieces;
      const int bh = r % kBH, bd = r / kBH % kBD, ci = r / (kBH * kBD);
      const int id = id0 + bd, ih = ih0 + bh, iw = iw0 + q * kPiece;
      const bool ok = id >= 0 && id < kID && ih >= 0 && ih < kIH && iw >= 0 && iw < kIW;
      const float *src = ok ? xg + (((i64)ci * kID + id) * kIH + ih) * kIW + iw : x;
      float *dst = buf + ci * kCS + r % (kBD * kBH) * kRowStride + q * kPiece;
      if constexpr (kPiece == 4)
        sinter::mma::cpAsync16(dst, src, ok ? 16 : 0);
      else if constexpr (kPiece == 2)
        sinter::mma::cpAsync8(dst, src, ok);
      else
        sinter::mma::cpAsync4(dst, src, ok);
    }
  }
}

/// What the kernel finishing a norm adds to convTiles: the box of the tile after the unit
/// (the next unit's first; false when there is none) and work to do once the unit's first
/// tile is held (normalising the block's previous unit).
struct NoHooks {
  __device__ bool nextUnit(int &, int &, int &) const { return false; }
  __device__ void afterFirstTile() const {}
};

/// One block's share of the convolution: spatial tiles st0 .. st0 + kTileLoop - 1 (those that
/// exist) of image n and group grp, with their epilogue, stores and statistics; the first
/// tile's box goes to box buffer buf0 (already copying when boxIssued), the next ones to the
/// following buffers. With the norm in the kernel the epilogue's values go to the held y
/// slots slot0, slot0 + 1, ... (mod Layout::kYSlots) instead of y, and the box after the
/// unit's last tile is copied as hooks.nextUnit says. Returns the buffer that box went to.
template <class Hooks = NoHooks>
__device__ __forceinline__ int convTiles(const Buffers &b, const int n, const int grp,
                                         const int st0, const bool stageWeights = true,
                                         const int slot0 = 0, const int buf0 = 0,
                                         const bool boxIssued = false, const Hooks &hooks = {}) {
  using namespace cfg;
  constexpr int kBoxFloats = Layout::kBoxFloats, kBuffers = Layout::kBuffers;
  constexpr int kRowStride = Layout::kRowStride, kCS = Layout::kCS, kLead = Layout::kLead;
  constexpr int kBH = Layout::kBH, kFragWords = Layout::kFragWords;
  constexpr int kWarps = kThreads / 32;
  constexpr int kMCols = kTW / 16; // m16 tiles along W
  constexpr int kMTiles = kTD * kTH * kMCols;
  constexpr int kMW = kMTiles / kWarps;
  static_assert(kTW % 16 == 0 && kMTiles % kWarps == 0, "m16 tiles must split over the warps");
  // Row reuse: where a warp's m16 tiles are kWR > 1 whole consecutive rows of the block tile
  // (every column block of each) and the H walk has stride 1, the product loop loads each A
  // fragment once for all the (row, H tap) pairs that read it: (kWR + spread) box rows
  // instead of kWR x H taps per column block (S2, 2 rows x 3 taps: 4 loads instead of 6).
  // For groups of whole k8 steps (one tap per step) only.
  constexpr int kWR = kMW % kMCols == 0 ? kMW / kMCols : 1;
  constexpr bool kRowReuse =
      kCinG % 8 == 0 && WH::kStep == 1 && WH::kTaps > 1 && kWR > 1 && kTH % kWR == 0;
  static_assert(kCin % kCinG == 0 && kCout % kCoutG == 0, "bad channel counts");

  extern __shared__ __align__(16) float smem[];
  unsigned *sB = reinterpret_cast<unsigned *>(smem + Layout::kWeights); // [kKS][kNT][32][2]
  float *sRed = smem + Layout::kRed; // [kCoutG][2] (with the norm [warp][kCoutG][2])
  // A walk by W phase writes every S-th output of a column. Its stores are staged instead:
  // per warp, one (D, H) phase pair's columns (every W phase of every channel) of kRun m16
  // tiles (a whole row of the block tile where the warp holds whole rows), [column][row]
  // with rows kStageLd apart (fragment writes hit 32 banks), then written as runs of
  // 16 * kRun * S consecutive outputs per channel. Storing the fragments directly, S4's
  // kernel used 11.6 of each 32-byte sector it wrote (H100: 2.2 ms). With kStageStores
  // (the emitter's choice) the stores of a walk without W phases are staged the same way.
  constexpr bool kStaged = (WW::kPhased || kStageStores) && kStoreOutput && !kHoldY;
  constexpr int kRun = kStaged && kMW % kMCols == 0 ? kMCols : 1;
  constexpr int kStageLd = 16 * kRun + 4, kStageCols = WW::kPhases * kCoutG;
  float *sStage = sRed + 2 * kCoutG + (threadIdx.x / 32) * (kStageCols * kStageLd);
  // Where every column's phase is fixed per n8 tile, a lane's staged elements lie at
  // compile-time offsets from its own place (column 2t, row g): one register, kept opaque,
  // instead of the warp's, t's and g's terms recomputed for each store (S2: 5 integer
  // instructions per element, sunk by the compiler into each store's condition).
  constexpr bool kStageFixed = kPhases == 1 || kCoutG % 8 == 0;
  const int stageLane =
      kStaged ? sinter::opaque(
                    int(sStage - smem) +
                    (kStageFixed ? 2 * (threadIdx.x % 4) * kStageLd + threadIdx.x % 32 / 4 : 0))
              : 0;

  // Held y: this lane's place (column 2t, position g) in a slot; its elements lie at
  // compile-time offsets from it plus the slot's and the m16 tile's place.
  const int yBase = kHoldY ? sinter::opaque(Layout::kY + 2 * int(threadIdx.x % 4) * Layout::kYCS +
                                            int(threadIdx.x % 32 / 4))
                           : 0;

  const float *__restrict__ x = sinter::slot<const float>(b, 0);
  const float *__restrict__ w = sinter::slot<const float>(b, 1);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane >> 2, t = lane & 3;
  const int tiles = min(kTileLoop, kTilesD * kTilesH * kTilesW - st0);

  if (tiles > 0 && !boxIssued)
    loadBox(x, n, grp, st0, smem + buf0 * kBoxFloats);
  sinter::mma::cpAsyncCommit();

  // Weights in fragment order: word (s, nt, lane, h) is B[k = 8s + lane%4 + 4h][n = 8nt +
  // lane/4], i.e. weight (tap, ci) = divmod(k, kCinG) for column (phase, co) = divmod(n,
  // kCoutG) of the group: the kernel tap that tap and phase meet, zero where none. (Read in
  // memory order and scattered, 8 loads in flight per thread, S1's kernel was 5-10% slower.)
  constexpr int kKernelTaps = kKD * kKH * kKW;
  for (int e = threadIdx.x; stageWeights && e < kFragWords; e += kThreads) {
    const int h = e & 1, l = (e >> 1) & 31, nt = (e >> 6) % kNT, s = e / (64 * kNT);
    const int k = 8 * s + (l & 3) + 4 * h, col = 8 * nt + (l >> 2);
    float v = 0.f;
    if constexpr (kPhases == 1) {
      // (As before the walk by phase, to the instruction: a differently compiled gather
      // loop cost a deep group 4-14%.)
      if (k < kKEntries && col < kCoutG) {
        const int tap = k / kCinG, ci = k % kCinG;
        v = __ldg(w + (kTransposed ? ((i64)(grp * kCinG + ci) * kCoutG + col) * kKernelTaps + tap
                                   : ((i64)(grp * kCoutG + col) * kCinG + ci) * kKernelTaps + tap));
      }
    } else {
      const int kt = k < kKEntries && col < kCols ? kernelTap(k / kCinG, col / kCoutG) : -1;
      if (kt >= 0) {
        const int ci = k % kCinG, co = col % kCoutG;
        v = __ldg(w + (kTransposed ? ((i64)(grp * kCinG + ci) * kCoutG + co) * kKernelTaps + kt
                                   : ((i64)(grp * kCoutG + co) * kCinG + ci) * kKernelTaps + kt));
      }
    }
    sB[e] = sinter::mma::toTf32(v);
  }
  if constexpr (kAccStats)
    for (int e = threadIdx.x; e < Layout::kRedFloats; e += kThreads)
      sRed[e] = 0.f;

  // Box offset of reduction tap index tap (jd, jh, jw) and of k entry e (0 for the padding
  // entries, whose weights are zero).
  auto tapOffset = [](int tap) {
    const int jw = tap % WW::kTaps, jh = tap / WW::kTaps % WH::kTaps,
              jd = tap / (WW::kTaps * WH::kTaps);
    return (WD::tap(jd) * kBH + WH::tap(jh)) * kRowStride + WW::tap(jw);
  };
  auto entryOffset = [&](int e) {
    return e < kKEntries ? e % kCinG * kCS + tapOffset(e / kCinG) : 0;
  };
  // Groups of fewer than 8 (or not a multiple of 8) channels: a k8 step mixes taps, so a
  // lane's two offsets per step are its own; whole-8 groups: t * kCS + a constant.
  constexpr bool kWholeSteps = kCinG % 8 == 0;
  int koff[kWholeSteps ? 1 : kKS][2];
  if constexpr (!kWholeSteps) {
#pragma unroll
    for (int s = 0; s < kKS; ++s) {
      koff[s][0] = entryOffset(8 * s + t);
      koff[s][1] = entryOffset(8 * s + t + 4);
    }
  }
  auto kOffset = [&](int s, int h) {
    if constexpr (kWholeSteps)
      return (8 * s % kCinG + 4 * h) * kCS + tapOffset(8 * s / kCinG) + t * kCS;
    else
      return koff[s][h];
  };

  // Place of this warp's i-th m16 tile in the block tile: depth, row, first column.
  auto mtilePlace = [&](int i, int &td, int &th, int &tw) {
    const int mt = warp * kMW + i;
    td = mt / (kMCols * kTH), th = mt / kMCols % kTH, tw = mt % kMCols * 16;
  };
  // Whether box row u (of the warp's first tile row) is read by one of its kWR rows.
  auto rowRead = [](int u) {
    for (int jh = 0; jh < WH::kTaps; ++jh)
      if (u - WH::tap(jh) >= 0 && u - WH::tap(jh) < kWR)
        return true;
    return false;
  };
  // Box position of row g of each of this warp's m16 tiles.
  int rowOff[kMW];
#pragma unroll
  for (int i = 0; i < kMW; ++i) {
    int td, th, tw;
    mtilePlace(i, td, th, tw);
    rowOff[i] = (WD::kStep * td * kBH + WH::kStep * th) * kRowStride + kLead + WW::kStep * (tw + g);
  }

  const cfg::Epilogue epilogue;
  float *__restrict__ y = sinter::slot<float>(b, 3);
  const float *__restrict__ bias = sinter::slot<const float>(b, 2);
  // This lane's column 8nt + 2t + q of the product: its output phase and its channel within
  // the group (both constant per n8 tile when the group's channels are whole n8 tiles); a
  // phase of kPhases or more marks a padding column.
  auto column = [&](int nt, int q, int &phase, int &cg) {
    if constexpr (kPhases == 1) {
      cg = 8 * nt + 2 * t + q, phase = cg < kCoutG ? 0 : 1;
    } else if constexpr (kCoutG % 8 == 0) {
      phase = 8 * nt / kCoutG, cg = 8 * nt % kCoutG + 2 * t + q;
    } else {
      const int col = 8 * nt + 2 * t + q;
      phase = col / kCoutG, cg = col % kCoutG;
    }
  };
  float bv[kNT][2];
#pragma unroll
  for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      int phase, cg;
      column(nt, q, phase, cg);
      bv[nt][q] = kHasBias && phase < kPhases ? __ldg(bias + grp * kCoutG + cg) : 0.f;
    }
  // red[nt][q][0..1]: this lane's sum and sum of squares for column 8nt + 2t + q.
  float red[kNT][2][2];
#pragma unroll
  for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
    for (int q = 0; q < 2; ++q)
      red[nt][q][0] = red[nt][q][1] = 0.f;

  // This lane's B fragment of k8 step s and n8 tile nt, from the staged weights.
  auto bFragment = [&](int s, int nt, unsigned(&f)[2]) {
    const uint2 v = reinterpret_cast<const uint2 *>(sB)[(s * kNT + nt) * 32 + lane];
    f[0] = v.x, f[1] = v.y;
  };
  unsigned breg[kBInRegs ? kKS : 1][kNT][2];
  // The box of the tile after tile it: the unit's next, or the next unit's first (held y).
  auto loadNext = [&](int it, float *buf) {
    int nn = n, ng = grp, ns = st0 + it + 1;
    if (it + 1 < tiles || hooks.nextUnit(nn, ng, ns))
      loadBox(x, nn, ng, ns, buf);
  };
  for (int it = 0; it < tiles; ++it) {
    if constexpr (kBuffers > 1)
      loadNext(it, smem + (buf0 + it + 1) % kBuffers * kBoxFloats);
    else if (!kHoldY && it > 0)
      loadBox(x, n, grp, st0 + it, smem); // one buffer: after the last tile's products
    sinter::mma::cpAsyncCommit();
    if constexpr (kBuffers > 1)
      sinter::mma::cpAsyncWait<1>();
    else
      sinter::mma::cpAsyncWait<0>();
    __syncthreads();
    if constexpr (kBInRegs) {
      if (it == 0) {
#pragma unroll
        for (int s = 0; s < kKS; ++s)
#pragma unroll
          for (int nt = 0; nt < kNT; ++nt)
            if (blockUsed(s, nt))
              bFragment(s, nt, breg[s][nt]);
      }
    }
    const float *buf = smem + (buf0 + it) % kBuffers * kBoxFloats;

    // The accumulators start at the bias: one add an output less in the epilogue.
    float acc[kMW][kNT][4];
#pragma unroll
    for (int i = 0; i < kMW; ++i)
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          acc[i][nt][r] = bv[nt][r & 1];
    // This lane's A fragment: rows g and g + 8 of k entries t (box offset o0 from p) and
    // t + 4 (o1). Rounded to TF32, not truncated: on the H200, truncating A saved 11% of S2's
    // statistics pass but made its sums 8x less accurate (6.6e-4 against 8.2e-5).
    auto aFragment = [&](const float *p, int o0, int o1, unsigned(&a)[4]) {
      a[0] = sinter::mma::toTf32Operand(p[o0]);
      a[1] = sinter::mma::toTf32Operand(p[o0 + 8 * WW::kStep]);
      a[2] = sinter::mma::toTf32Operand(p[o1]);
      a[3] = sinter::mma::toTf32Operand(p[o1 + 8 * WW::kStep]);
    };
    // This lane's B fragments of k8 step s.
    auto bFragments = [&](int s, unsigned(&bf)[kNT][2]) {
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        if (!blockUsed(s, nt))
          continue;
        if constexpr (kBInRegs)
          bf[nt][0] = breg[s][nt][0], bf[nt][1] = breg[s][nt][1];
        else
          bFragment(s, nt, bf[nt]);
      }
    };
    if constexpr (kRowReuse) {
      // The warp's m16 tiles are kWR consecutive rows x kMCols column blocks, and the H walk
      // has stride 1, so tile row j with H tap jh reads box row j + WH::tap(jh): each A
      // fragment (box row u, column block c, D tap, W tap, channel chunk) is loaded once and
      // multiplied into every (row, H tap) pair that reads it.
      const float *p = buf + rowOff[0];
#pragma unroll
      for (int jd = 0; jd < WD::kTaps; ++jd)
#pragma unroll
        for (int jw = 0; jw < WW::kTaps; ++jw)
#pragma unroll
          for (int ch = 0; ch < kCinG / 8; ++ch)
#pragma unroll
            for (int u = 0; u < kWR + WH::kSpread; ++u) {
              if (!rowRead(u))
                continue;
#pragma unroll
              for (int c = 0; c < kMCols; ++c) {
                unsigned a[4];
                const int o = (WD::tap(jd) * kBH + u) * kRowStride + WW::tap(jw) +
                              16 * WW::kStep * c + (8 * ch + t) * kCS;
                aFragment(p, o, o + 4 * kCS, a);
#pragma unroll
                for (int jh = 0; jh < WH::kTaps; ++jh) {
                  const int j = u - WH::tap(jh);
                  if (j < 0 || j >= kWR)
                    continue;
                  const int s = ((jd * WH::kTaps + jh) * WW::kTaps + jw) * (kCinG / 8) + ch;
                  unsigned bf[kNT][2];
                  bFragments(s, bf);
#pragma unroll
                  for (int nt = 0; nt < kNT; ++nt)
                    if (blockUsed(s, nt))
                      sinter::mma::mmaTf32(acc[j * kMCols + c][nt], a, bf[nt]);
                }
              }
            }
    } else {
#pragma unroll
      for (int s = 0; s < kKS; ++s) {
        unsigned bf[kNT][2];
        bFragments(s, bf);
        const int o0 = kOffset(s, 0), o1 = kOffset(s, 1);
#pragma unroll
        for (int i = 0; i < kMW; ++i) {
          unsigned a[4];
          aFragment(buf + rowOff[i], o0, o1, a);
#pragma unroll
          for (int nt = 0; nt < kNT; ++nt)
            if (blockUsed(s, nt))
              sinter::mma::mmaTf32(acc[i][nt], a, bf[nt]);
        }
      }
    }

    if constexpr (kHoldY && kBuffers == 1) {
      // One buffer: the next box is copied during this tile's epilogue, once every warp's
      // products are done with it.
      __syncthreads();
      loadNext(it, smem);
      sinter::mma::cpAsyncCommit();
    }

    // Epilogue of this tile: d0/d1 are row g, columns 2t and 2t + 1; d2/d3 row g + 8. A row
    // is a grid position; each column's phase places it in the output (which a phase may
    // miss at the grid's edges).
    int pd0, ph0, pw0;
    tileOrigin(st0 + it, pd0, ph0, pw0);
#pragma unroll
    for (int i0 = 0; i0 < kMW; i0 += kRun) {
      int td, th, tw;
      mtilePlace(i0, td, th, tw);
      const int pd = pd0 + td, ph = ph0 + th;
      if (pd >= WD::kGrid || ph >= WH::kGrid)
        continue; // (the same for the whole warp)
      const int yLane =
          yBase + (slot0 + it) % Layout::kYSlots * Layout::kYTile + (td * kTH + th) * kTW + tw;
      // Element r of n8 tile nt of m16 tile i0 + ii, when its column's (D, H) phase pair is
      // dh (any when dh < 0): bias, epilogue, statistics, and the store or its staging.
      auto element = [&](int ii, int nt, int r, int dh) {
        const int q = r & 1, row = 16 * ii + g + 8 * (r >> 1);
        int phase, cg;
        column(nt, q, phase, cg);
        if (dh >= 0 && phase / WW::kPhases != dh)
          return; // (another pass of the staging loop)
        const int od = WD::out(pd, phase / (WW::kPhases * WH::kPhases));
        const int oh = WH::out(ph, phase / WW::kPhases % WH::kPhases);
        const int ow = WW::out(pw0 + tw + row, phase % WW::kPhases);
        // Elements outside the output (and padding columns) are computed at position 0 of
        // the group's first channel and then dropped: without a branch per element the
        // compiler interleaves the epilogues of a tile's elements.
        const bool ok = !(kCols % 8 != 0 && phase >= kPhases) && ow < kOW &&
                        !(WW::kPhased && ow < 0) && !(WD::kPhased && (od < 0 || od >= kOD)) &&
                        !(WH::kPhased && (oh < 0 || oh >= kOH));
        // (Only the epilogue's arguments are clamped: the store, taken only when ok, keeps
        // the unclamped address, so the stores of a tile share one base.)
        const i64 at = ((i64)od * kOH + oh) * kOW + ow;
        const int co = grp * kCoutG + cg;
        const float v = epilogue(acc[i0 + ii][nt][r], n, ok ? co : grp * kCoutG, ok ? at : 0, b);
        if constexpr (kHoldY) {
          // Every position of the tile is held (those outside the output are never stored);
          // a padding column has no place.
          if (kCols % 8 == 0 || phase < kPhases)
            smem[yLane + ((phase * kCoutG + cg - 2 * t) * Layout::kYCS + row - g)] = v;
        } else if (ok) {
          if constexpr (kStaged) {
            // (cg - 2t and row - g are constants here)
            const int col = (phase % WW::kPhases) * kCoutG + cg;
            if constexpr (kStageFixed)
              smem[stageLane + (col - 2 * t) * kStageLd + row - g] = v;
            else
              sStage[col * kStageLd + row] = v;
          } else if constexpr (kStoreOutput)
            y[((i64)n * kCout + co) * kOD * kOH * kOW + at] = v;
        }
        if constexpr (kAccStats) {
          const float m = ok ? v : 0.f;
          red[nt][q][0] += m;
          red[nt][q][1] = fmaf(m, m, red[nt][q][1]);
        }
      };
      if constexpr (!kStaged) {
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
          for (int r = 0; r < 4; ++r)
            element(0, nt, r, -1);
      } else {
#pragma unroll
        for (int dh = 0; dh < kPhases / WW::kPhases; ++dh) {
#pragma unroll
          for (int ii = 0; ii < kRun; ++ii)
#pragma unroll
            for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
              for (int r = 0; r < 4; ++r)
                element(ii, nt, r, dh);
          __syncwarp();
          // The staged runs: channel c's outputs of grid rows pw0 + tw .. + 16 * kRun - 1 in
          // every W phase, consecutive in the output (positions outside it were not staged).
          constexpr int kRunLen = 16 * kRun * WW::kPhases;
          const int od = WD::out(pd, dh / WH::kPhases), oh = WH::out(ph, dh % WH::kPhases);
          if (od >= 0 && od < kOD && oh >= 0 && oh < kOH) {
            float *yrow =
                y + ((i64)n * kCout + grp * kCoutG) * kOD * kOH * kOW + ((i64)od * kOH + oh) * kOW;
#pragma unroll
            for (int l0 = 0; l0 < kRunLen; l0 += 32) {
              const int l = l0 + lane, j = l / WW::kPhases, fw = l % WW::kPhases;
              const int ow = WW::out(pw0 + tw + j, fw);
              if (l < kRunLen && ow >= 0 && ow < kOW)
#pragma unroll 8
                for (int c = 0; c < kCoutG; ++c)
                  yrow[(i64)c * kOD * kOH * kOW + ow] = sStage[(fw * kCoutG + c) * kStageLd + j];
            }
          }
          __syncwarp();
        }
      }
    }
    if (it == 0)
      hooks.afterFirstTile();
    __syncthreads(); // the next iteration's copy overwrites this buffer
  }
  if constexpr (!kHoldY)
    sinter::mma::cpAsyncWait<0>();

  if constexpr (kAccStats) {
    // Over the 8 lanes of a column (same t), then over the block in shared memory: added
    // there, or with the norm written per warp and summed below.
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int m = 0; m < 2; ++m) {
          float v = red[nt][q][m];
          v += __shfl_xor_sync(0xffffffffu, v, 4);
          v += __shfl_xor_sync(0xffffffffu, v, 8);
          v += __shfl_xor_sync(0xffffffffu, v, 16);
          int phase, cg;
          column(nt, q, phase, cg);
          if (g == 0 && phase < kPhases) {
            if constexpr (kHoldY)
              sRed[warp * 2 * kCoutG + 2 * cg + m] = v;
            else
              atomicAdd(sRed + 2 * cg + m, v);
          }
        }
    __syncthreads();
    double *stats = sinter::slot<double>(b, 4);
    for (int e = threadIdx.x; e < 2 * kCoutG; e += kThreads) {
      float v = sRed[e];
      if constexpr (kHoldY)
#pragma unroll
        for (int w = 1; w < kWarps; ++w)
          v += sRed[w * 2 * kCoutG + e];
      atomicAdd(stats + ((i64)n * kCout + grp * kCoutG) * 2 + e, (double)v);
    }
  }
  return (buf0 + max(tiles, 0)) % kBuffers;
}

#ifdef SINTER_CONV_MMA_NORM
/// Unit `unit` of the norm's work: tiles st0 .. st0 + tiles - 1 of task `task`, the (n, grp)
/// of the convolution. Tasks are group-major, so that a block's next unit is usually of the
/// same group and keeps its staged weights.
struct Unit {
  int task, n, grp, st0, tiles;
  __device__ explicit Unit(int unit)
      : task(unit / cfg::kConvUnits), n(task % cfg::kN), grp(task / cfg::kN),
        st0(unit % cfg::kConvUnits * cfg::kTileLoop),
        tiles(min(cfg::kTileLoop, cfg::kTilesD * cfg::kTilesH * cfg::kTilesW - st0)) {}
};

/// The outputs of unit `unit`, held in slots slot0, slot0 + 1, ... (mod
/// Layout::kYSlots), normalised and stored once every unit of its (n, group) is counted
/// (the caller has waited): y = Post(v * scale[c] + shift[c]), the maps made here from the
/// statistics every unit added (read from L2), the stores hinted to leave L2 first. Where no
/// dim is walked by phase and the tile splits evenly, each thread keeps one pair of
/// positions of the tile (so its addresses and bounds are fixed per tile) and walks the
/// channels: an 8-byte shared load, two FMAs and one 8-byte store per 2 outputs, a warp's
/// store covering whole runs of the row (per-output index arithmetic cost S2 about 20
/// instructions an output, 20% of the kernel); otherwise one output at a time.
__device__ __forceinline__ void normalizeHeld(const Buffers &b, const int unit, const int slot0) {
  using namespace cfg;
  constexpr i64 kPlaneOut = (i64)kOD * kOH * kOW;
  const Unit u(unit);
  const int n = u.n, grp = u.grp, st0 = u.st0, tiles = u.tiles;
  extern __shared__ __align__(16) float smem[];
  __shared__ float2 maps[kCoutG];
  // The maps are on the block's path (every thread waits for them at the barrier below):
  // one channel's sums a lane where the norm's groups allow (one L2 round trip, 2 loads a
  // lane), and no double division or square root (finishMoments).
  if (threadIdx.x < kCoutG) {
    const int c = grp * kCoutG + threadIdx.x;
    const double *stats = slot<const double>(b, 4);
    double gamma, beta; // (read first: their loads then overlap the sums')
    norm::affineParams(b, c, gamma, beta);
    if constexpr (kCG <= 32 && (kCG & (kCG - 1)) == 0 && kCoutG <= 32) {
      constexpr unsigned kLanes = kCoutG == 32 ? ~0u : (1u << kCoutG) - 1;
      maps[threadIdx.x] =
          norm::scaleShift(gamma, beta, norm::groupMomentsLanes<true>(stats, n, c, kLanes));
    } else {
      maps[threadIdx.x] =
          norm::scaleShift(gamma, beta, norm::groupMoments<true>(stats, n, c / kCG));
    }
  }
  __syncthreads();
  float *y = slot<float>(b, 3) + ((i64)n * kCout + grp * kCoutG) * kPlaneOut;
  const unsigned long long pol = mma::l2Policy(false);
  constexpr int kQ = kTW / 2, kP = kTD * kTH; // pairs along W, positions (td, th)
  constexpr bool kPairs = kPhases == 1 && kOW % 2 == 0 && kThreads % (kQ * kP) == 0 &&
                          kCoutG % (kThreads / (kQ * kP)) == 0;
  if constexpr (kPairs) {
    constexpr int kStep = kThreads / (kQ * kP); // channels a pass
    const int q = threadIdx.x % kQ, pos = threadIdx.x / kQ % kP, c0 = threadIdx.x / (kQ * kP);
    const int td = pos / kTH, th = pos % kTH;
    for (int it = 0; it < tiles; ++it) {
      int pd0, ph0, pw0;
      tileOrigin(st0 + it, pd0, ph0, pw0);
      const int od = pd0 + td, oh = ph0 + th, ow = pw0 + 2 * q;
      if (od >= kOD || oh >= kOH || ow >= kOW) // (kOW even: the pair is whole)
        continue;
      const float *held = smem + Layout::kY + (slot0 + it) % Layout::kYSlots * Layout::kYTile +
                          c0 * Layout::kYCS + pos * kTW + 2 * q;
      const i64 s = ((i64)od * kOH + oh) * kOW + ow;
      // The pair's place in channel c0; the other channels' lie at constant offsets from it.
      float *const y0 = y + c0 * kPlaneOut + s;
#pragma unroll
      for (int k = 0; k < kCoutG / kStep; ++k) {
        const int cg = c0 + k * kStep, c = grp * kCoutG + cg;
        const float2 v = *reinterpret_cast<const float2 *>(held + k * kStep * Layout::kYCS);
        const float2 ss = maps[cg];
        mma::storeL2(y0 + k * kStep * kPlaneOut,
                     make_float2(Post{}(fmaf(v.x, ss.x, ss.y), n, c, s, b),
                                 Post{}(fmaf(v.y, ss.x, ss.y), n, c, s + 1, b)),
                     pol);
      }
    }
  } else {
    constexpr int kItems = kCols * kTD * kTH * kTW;
    for (int it = 0; it < tiles; ++it) {
      int pd0, ph0, pw0;
      tileOrigin(st0 + it, pd0, ph0, pw0);
      const float *held = smem + Layout::kY + (slot0 + it) % Layout::kYSlots * Layout::kYTile;
      for (int e = threadIdx.x; e < kItems; e += kThreads) {
        const int tw = e % kTW, row = e / kTW;
        const int th = row % kTH, td = row / kTH % kTD, col = row / (kTH * kTD);
        const int phase = col / kCoutG, cg = col % kCoutG;
        const int od = WD::out(pd0 + td, phase / (WW::kPhases * WH::kPhases));
        const int oh = WH::out(ph0 + th, phase / WW::kPhases % WH::kPhases);
        const int ow = WW::out(pw0 + tw, phase % WW::kPhases);
        if (od < 0 || od >= kOD || oh < 0 || oh >= kOH || ow < 0 || ow >= kOW)
          continue;
        const float2 ss = maps[cg];
        const i64 s = ((i64)od * kOH + oh) * kOW + ow;
        const float v = held[col * Layout::kYCS + (td * kTH + th) * kTW + tw];
        mma::storeL2(y + cg * kPlaneOut + s,
                     Post{}(fmaf(v, ss.x, ss.y), n, grp * kCoutG + cg, s, b), pol);
      }
    }
  }
  __syncthreads(); // (maps and the slots are rewritten next)
}

/// Counters of dealPlace, after the done counts: [256] arrivals per SM, [8] blocks per rank,
/// [8] places taken per rank, [1] blocks arrived; the emitter sizes the workspace for
/// cfg::kDealWords of them.
static_assert(cfg::kDealWords >= 256 + 8 + 8 + 1, "the deal's counters do not fit");

/// The block's place in the deal, by rank: a block's rank is its arrival order on its SM
/// (0 .. 7, the last shared by any more), and places are rank-major, so that the blocks at
/// consecutive places, whose units make up a task, are of one rank. The warp schedulers
/// favour an SM's older blocks: measured on S2 (H100), the youngest of an SM's five blocks
/// spent 0.38 of its time in the products and epilogue and the oldest 0.31 (the same work),
/// and every block waited for the slowest block of its task. A permutation of 0 .. G - 1
/// whatever the ranks: each block counts itself in its rank, all wait until every block has
/// (the launch is cooperative: all G are resident), and a rank's places follow those of the
/// lower ranks. Thread 0 only.
__device__ __forceinline__ int dealPlace(unsigned *ws, const int G) {
  unsigned smid;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
  const unsigned rank = min(atomicAdd(&ws[smid % 256], 1u), 7u);
  atomicAdd(&ws[256 + rank], 1u);
  addRelease(&ws[272], 1u); // (after this block's rank count)
  while (loadAcquire(&ws[272]) < unsigned(G))
    __nanosleep(64);
  unsigned before = 0;
  for (unsigned r = 0; r < rank; ++r)
    before += loadAcquire(&ws[256 + r]);
  return int(before + atomicAdd(&ws[264 + rank], 1u));
}

/// Waits (thread 0, then the block) until every unit of `unit`'s task is counted.
__device__ __forceinline__ void waitTask(const unsigned *done, const int unit) {
  if (threadIdx.x == 0)
    while (loadAcquire(done + Unit(unit).task) < unsigned(cfg::kConvUnits))
      __nanosleep(64);
  __syncthreads();
}

#endif

} // namespace conv_mma
} // namespace sinter

extern "C" __global__ void __launch_bounds__(cfg::kThreads, cfg::kMinBlocks)
    SINTER_KERNEL(const sinter::Buffers b) {
  using namespace cfg;
  using namespace sinter::conv_mma;
#ifndef SINTER_CONV_MMA_NORM
  convTiles(b, blockIdx.z, blockIdx.y, blockIdx.x * kTileLoop);
#else
  // The group norm finished in this kernel. The work is kTasks x kConvUnits units (tiles r *
  // kTileLoop .. of task t's (n, group): unit t * kConvUnits + r), taken by the blocks in
  // turn: the block at place p of the deal (below) computes units p, p + G, p + 2G, ... (G =
  // gridDim.x). A unit's epilogue values stay in the block's held slots; its statistics are
  // added and the unit counted in done[t] (released by thread 0, ordered after every
  // thread's statistics by the barrier before it). Once the block's next unit has its first
  // tile held, the block waits until the previous unit's task is complete and normalises and
  // stores the previous unit. The next unit's first box is copied during the last tile of the
  // current one.
  //
  // No deadlock when all G blocks are resident and G >= kConvUnits (LaunchConfig::
  // coResident: the runtime launches every block the GPU holds, cooperatively, and checks
  // that they are enough): a block's two units in flight are then of different tasks, and
  // the lowest incomplete task's units are each computed, never waiting on it, by resident
  // blocks.
  unsigned *done = reinterpret_cast<unsigned *>(sinter::slot<double>(b, 4) + 2 * kN * kCout);
  constexpr int kConvGroups = kCout / kCoutG, kTasks = kN * kConvGroups;
  constexpr int kUnits = kTasks * kConvUnits;
  struct Hooks {
    const sinter::Buffers &b;
    const unsigned *done;
    int next, held, heldSlot;
    __device__ bool nextUnit(int &n, int &grp, int &st) const {
      if (next >= kUnits)
        return false;
      const Unit u(next);
      n = u.n, grp = u.grp, st = u.st0;
      return true;
    }
    __device__ void afterFirstTile() const {
      if (held >= 0) {
        waitTask(done, held);
        normalizeHeld(b, held, heldSlot);
      }
    }
  };
  const int G = int(gridDim.x);
  // The block's place in the deal (dealPlace: by rank; an SM's blocks, one of each rank,
  // then hold units of different (n, group)s).
  __shared__ int place;
  if (threadIdx.x == 0)
    place = dealPlace(done + kTasks, G);
  __syncthreads();
  int unit = place, staged = -1, slot = 0, buf = 0;
  Hooks hooks{b, done, unit + G, -1, 0};
  bool issued = false;
  while (unit < kUnits) {
    const Unit u(unit);
    hooks.next = unit + G;
    buf = convTiles(b, u.n, u.grp, u.st0, u.grp != staged, slot, buf, issued, hooks);
    issued = hooks.next < kUnits;
    staged = u.grp;
    __syncthreads(); // (every thread's statistics before the count's release)
    if (threadIdx.x == 0)
      addRelease(done + u.task, 1u);
    hooks.held = unit, hooks.heldSlot = slot;
    slot = (slot + u.tiles) % Layout::kYSlots;
    unit = hooks.next;
  }
  sinter::mma::cpAsyncWait<0>();
  if (hooks.held >= 0) {
    waitTask(done, hooks.held);
    normalizeHeld(b, hooks.held, hooks.heldSlot);
  }
#endif
}
