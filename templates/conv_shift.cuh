//===- templates/conv_shift.cuh - convolution as per-tap GEMMs over shifted rows (sm_90a) ===//
//
// A stride-1 convolution (direct, or transposed, which is the direct one with mirrored
// taps) computed as kTaps GEMMs that share one accumulator: for tap t, output position o
// reads input o + off(t), so over a grid where positions are numbered in one flat order the
// tap's operand is the input's rows shifted by one constant. conv_stage.cuh writes the input
// channels last on a grid of extents (kPitchD, kPitchH, kPitchW) per image, the data at the
// start of each dim and zeros after it; output position (od, oh, ow) of image n is grid row
// q = ((n * kPitchD + od) * kPitchH + oh) * kPitchW + ow, and the input it reads for tap t is
// grid row q + tapOffset(t). A pitch P of a dim with input extent `in`, output extent `out`
// and tap offsets off(t) = kOff + kStep * t (input = output + off) makes that exact when
//   P >= out, P >= in, P > out - 1 + max off, and P >= in - min off:
// a read whose coordinate in that dim falls before the input borrows from the dim above and
// lands on column P + i >= in of the grid, a read past it lands on a column in [in, P) of
// the same row, and any cell with a coordinate past the input is zero (the emitter picks the
// smallest such P; for a transposed 3x3x3 convolution of stride 1 and no padding, P = out
// and no grid row is wasted). Reads before the first image fall outside the tensor map and
// read zeros. Grid rows past an output extent are computed and dropped.
//
// So each k tile (32 input channels of one tap) is two TMA boxes: A = 32 reduction indices
// of kBM output channels of the weight rows conv_pack.cuh wrote (k = chunk * kTaps * 32 +
// tap * 32 + channel), B = 32 channels of kBN consecutive grid rows from row q0 + tapOffset,
// both 128-byte rows in the 128-byte swizzle that wgmma's descriptors read (TF32 wgmma reads
// K-major operands only, hence channels last). The product is D[channel][position] = A B^T:
// output channels are the accumulator rows, grid rows its columns, so a warp's stores of one
// channel cover 8 consecutive positions (whole 32-byte sectors of y).
//
// Block: kBM / 64 consumer warpgroups and one producer warp (its first thread issues the
// copies of every k tile of every tile of the block, into a ring of kStages stages, each
// with a `full` barrier the copies complete and an `empty` one the consumers release); each
// consumer warpgroup multiplies 64 output channels by the whole B tile with wgmma m64nNk8
// (operands from shared memory). Persistent: block b takes tiles b, b + gridDim.x, ...; the
// ring runs on across tiles, so the producer fills the next tile's stages while the consumers
// store. Tiles are numbered with the output-channel tile fastest, then the group, then the position
// tile, so that blocks running together read the same grid rows.
//
// Epilogue per element: bias, `Epilogue`, store of y [N, Cout, outD, outH, outW], and with
// kAccumulateStats the per-(n, c) sum and sum of squares into slot 4 (double2 per (n, c);
// summed per thread in fp32, over the 4 lanes of a row, then one atomic per row and image).
//
// Slots: 2 bias, 3 y, 4 stats, 6 weight rows (tensor map 0: dims {kKPad, Cout}, box {32,
// kBM}), 7 the staged input (tensor map 1: dims {Cin, rows}, box {32, kBN}); the epilogue may
// read 5 and 8..15. Expects (namespace cfg): kN, kCin, kCout, kGroups, kOutD/H/W, kKD/H/W,
// kPitchD/H/W, kOffD/H/W, kStepD/H/W, kHasBias, kStoreOutput, kAccumulateStats, kBM, kBN,
// kStages, kEpilogueReadsTensors (see storeTile); struct Epilogue.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "mma.cuh"
#include "wgmma.cuh"

namespace conv_shift {

using sinter::i64;

constexpr int kCinG = cfg::kCin / cfg::kGroups;
constexpr int kCoutG = cfg::kCout / cfg::kGroups;
constexpr int kTaps = cfg::kKD * cfg::kKH * cfg::kKW;
constexpr int kChunks = (kCinG + 31) / 32;
constexpr int kKTiles = kChunks * kTaps;
constexpr int kPlane = cfg::kPitchH * cfg::kPitchW;
constexpr int kGridVol = cfg::kPitchD * kPlane; // grid rows per image
constexpr i64 kRows = (i64)cfg::kN * kGridVol;
constexpr int kOutHW = cfg::kOutH * cfg::kOutW;
constexpr i64 kOutVol = (i64)cfg::kOutD * kOutHW;
// The grid is the output itself: a grid row's image and position need one division.
constexpr bool kDense =
    cfg::kPitchD == cfg::kOutD && cfg::kPitchH == cfg::kOutH && cfg::kPitchW == cfg::kOutW;
// Column pairs (2t, 2t + 1) are one 8-byte store: same image, adjacent positions; and a
// tile spans at most two images.
constexpr bool kPairs = kDense && kGridVol % 2 == 0 && kGridVol >= cfg::kBN;
constexpr int kMTiles = (kCoutG + cfg::kBM - 1) / cfg::kBM;
// Every accumulator row is an output channel of the group (no row test in the epilogue).
constexpr bool kWholeM = kCoutG % cfg::kBM == 0;
constexpr int kPTiles = int((kRows + cfg::kBN - 1) / cfg::kBN);
constexpr int kTileCount = kPTiles * cfg::kGroups * kMTiles;
constexpr int kConsumers = cfg::kBM / 64 * 128;
// The consumer warpgroups first (warpgroups start at warp indices divisible by 4), then one
// producer warp, of which one thread works.
constexpr int kBlockThreads = kConsumers + 32;
constexpr unsigned kStageBytes = (cfg::kBM + cfg::kBN) * 32 * 4;

static_assert(cfg::kBM == 64 || cfg::kBM == 128, "one or two consumer warpgroups");
static_assert(cfg::kBN == 64 || cfg::kBN == 128 || cfg::kBN == 256, "wgmma widths, TMA boxes");
static_assert(cfg::kStages >= 2, "a ring of stages");
static_assert(cfg::kGroups == 1 || kCinG % 32 == 0, "a group's k tiles read its own channels");
static_assert(cfg::kPitchD >= cfg::kOutD && cfg::kPitchH >= cfg::kOutH &&
                  cfg::kPitchW >= cfg::kOutW,
              "every output position is a grid row");
static_assert(kRows + kGridVol < (1ll << 31), "grid rows are TMA coordinates (32-bit)");

/// Grid-row offset of tap `tap` (flat over kKD x kKH x kKW): input = output + kOff + kStep *
/// t per dim.
__device__ __forceinline__ int tapOffset(int tap) {
  const int td = tap / (cfg::kKH * cfg::kKW), th = (tap / cfg::kKW) % cfg::kKH, tw = tap % cfg::kKW;
  return ((cfg::kOffD + cfg::kStepD * td) * cfg::kPitchH + (cfg::kOffH + cfg::kStepH * th)) *
             cfg::kPitchW +
         cfg::kOffW + cfg::kStepW * tw;
}

/// One tile: grid rows row0 .. row0 + kBN - 1, output channels m0 .. of group grp.
struct Tile {
  int row0, grp, m0;
};

__device__ __forceinline__ Tile tileAt(int t) {
  Tile tl;
  tl.m0 = (t % kMTiles) * cfg::kBM;
  const int rest = t / kMTiles;
  tl.grp = rest % cfg::kGroups;
  tl.row0 = rest / cfg::kGroups * cfg::kBN;
  return tl;
}

/// The producer (one thread): both boxes of every k tile of every tile of this block.
__device__ __forceinline__ void produce(const sinter::TensorMaps &tm, unsigned smem0,
                                        unsigned fullBar, unsigned emptyBar) {
  namespace sm90 = sinter::sm90;
  int it = 0;
  for (int t = blockIdx.x; t < kTileCount; t += gridDim.x) {
    const Tile tl = tileAt(t);
    const int wRow = tl.grp * kCoutG + tl.m0, ch0 = tl.grp * kCinG;
    for (int kt = 0; kt < kKTiles; ++kt, ++it) {
      const int s = it % cfg::kStages;
      if (it >= cfg::kStages)
        sm90::mbarWait(emptyBar + s * 8, (it / cfg::kStages - 1) & 1);
      const unsigned a = smem0 + s * kStageBytes, bar = fullBar + s * 8;
      const int c = kt / kTaps, tap = kt - c * kTaps;
      sm90::mbarArriveExpectTx(bar, kStageBytes);
      sm90::tmaLoad2d(a, tm.m[0], kt * 32, wRow, bar);
      sm90::tmaLoad2d(a + cfg::kBM * 128, tm.m[1], ch0 + c * 32, tl.row0 + tapOffset(tap), bar);
    }
  }
}

/// Image and position in y of grid row q; false for rows outside the output.
__device__ __forceinline__ bool gridRow(int q, int &n, i64 &sp) {
  n = q / kGridVol;
  const int r = q - n * kGridVol;
  if constexpr (kDense) {
    sp = r;
    return q < kRows;
  } else {
    const int od = r / kPlane, r2 = r - od * kPlane;
    const int oh = r2 / cfg::kPitchW, ow = r2 - oh * cfg::kPitchW;
    sp = ((i64)od * cfg::kOutH + oh) * cfg::kOutW + ow;
    return q < kRows && od < cfg::kOutD && oh < cfg::kOutH && ow < cfg::kOutW;
  }
}

/// The epilogue of tile tl: consumer thread tid holds channels m0 + 16 warp + g (+8) and
/// grid rows row0 + 8 i + 2 t (+1).
template <int NI>
__device__ __forceinline__ void storeTile(float (&acc)[NI][4], const Tile &tl, int tid,
                                          const sinter::Buffers &b) {
  const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
  const float *bias = sinter::slot<const float>(b, 2);
  float *y = sinter::slot<float>(b, 3);
  double *stats = sinter::slot<double>(b, 4);
  int c[2];
  bool rowOk[2];
  float bv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int cl = tl.m0 + warp * 16 + g + 8 * h;
    rowOk[h] = kWholeM || cl < kCoutG;
    c[h] = tl.grp * kCoutG + (rowOk[h] ? cl : 0);
    bv[h] = cfg::kHasBias ? bias[c[h]] : 0.f;
  }
  // Statistics of the tile's first image and the next (the tile spans at most two when an
  // image has at least kBN grid rows; others go straight to memory).
  const int n0 = tl.row0 / kGridVol;
  float sum[2][2] = {{0.f, 0.f}, {0.f, 0.f}}, sq[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
  auto finish = [&](float v, int h, int n, i64 sp) {
    if constexpr (cfg::kStoreOutput)
      y[((i64)n * cfg::kCout + c[h]) * kOutVol + sp] = v;
    if constexpr (cfg::kAccumulateStats) {
      if (n == n0) {
        sum[h][0] += v;
        sq[h][0] += v * v;
      } else if (n == n0 + 1) {
        sum[h][1] += v;
        sq[h][1] += v * v;
      } else {
        atomicAdd(&stats[((i64)n * cfg::kCout + c[h]) * 2 + 0], (double)v);
        atomicAdd(&stats[((i64)n * cfg::kCout + c[h]) * 2 + 1], (double)v * v);
      }
    }
  };
#pragma unroll
  for (int i = 0; i < NI; ++i) {
    if constexpr (kPairs) {
      int n;
      i64 sp;
      if (!gridRow(tl.row0 + 8 * i + 2 * t, n, sp))
        continue;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (!rowOk[h])
          continue;
        const float v0 = Epilogue{}(acc[i][2 * h] + bv[h], n, c[h], sp, b);
        const float v1 = Epilogue{}(acc[i][2 * h + 1] + bv[h], n, c[h], sp + 1, b);
        if constexpr (cfg::kStoreOutput) {
          // One 8-byte store (S0's kernel 0.998 -> 0.846 ms against the float2 assignment,
          // which reaches the PTX as two 4-byte stores), except after an epilogue that reads
          // tensors: around the 8-byte stores the compiler reloaded those for every element
          // (convt3d_wide_bn_silu's batch norm: 516 loads per thread and tile against 260,
          // 0.520 -> 0.562 ms).
          float *p = y + ((i64)n * cfg::kCout + c[h]) * kOutVol + sp;
          if constexpr (cfg::kEpilogueReadsTensors)
            *reinterpret_cast<float2 *>(p) = make_float2(v0, v1);
          else
            sinter::storePair(p, v0, v1);
        }
        if constexpr (cfg::kAccumulateStats) {
          // Registers are indexed by constants only (a run-time index moves them to local
          // memory).
          const bool first = n == n0;
          sum[h][0] += first ? v0 + v1 : 0.f;
          sq[h][0] += first ? v0 * v0 + v1 * v1 : 0.f;
          sum[h][1] += first ? 0.f : v0 + v1;
          sq[h][1] += first ? 0.f : v0 * v0 + v1 * v1;
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        int n;
        i64 sp;
        if (!gridRow(tl.row0 + 8 * i + 2 * t + j, n, sp))
          continue;
#pragma unroll
        for (int h = 0; h < 2; ++h)
          if (rowOk[h])
            finish(Epilogue{}(acc[i][2 * h + j] + bv[h], n, c[h], sp, b), h, n, sp);
      }
    }
  }
  if constexpr (cfg::kAccumulateStats) {
    const int last =
        int((tl.row0 + cfg::kBN - 1 < kRows ? tl.row0 + cfg::kBN - 1 : kRows - 1) / kGridVol);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int slot = 0; slot < 2; ++slot) {
        float s = sum[h][slot], q = sq[h][slot];
        s += __shfl_xor_sync(0xffffffffu, s, 1);
        s += __shfl_xor_sync(0xffffffffu, s, 2);
        q += __shfl_xor_sync(0xffffffffu, q, 1);
        q += __shfl_xor_sync(0xffffffffu, q, 2);
        if (t == 0 && rowOk[h] && n0 + slot <= last) {
          const i64 at = ((i64)(n0 + slot) * cfg::kCout + c[h]) * 2;
          atomicAdd(&stats[at], (double)s);
          atomicAdd(&stats[at + 1], (double)q);
        }
      }
  }
}

/// Consumer thread tid (0 .. kConsumers - 1): every tile of this block.
__device__ __forceinline__ void consume(unsigned smem0, unsigned fullBar, unsigned emptyBar,
                                        int tid, const sinter::Buffers &b) {
  namespace sm90 = sinter::sm90;
  const int wg = tid / 128;
  int it = 0;
  for (int t = blockIdx.x; t < kTileCount; t += gridDim.x) {
    float acc[cfg::kBN / 8][4];
#pragma unroll
    for (int i = 0; i < cfg::kBN / 8; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[i][r] = 0.f;
    for (int kt = 0; kt < kKTiles; ++kt, ++it) {
      const int s = it % cfg::kStages;
      sm90::mbarWait(fullBar + s * 8, (it / cfg::kStages) & 1);
      const unsigned a = smem0 + s * kStageBytes + wg * 64 * 128;
      const unsigned bt = smem0 + s * kStageBytes + cfg::kBM * 128;
      sm90::wgmmaFence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        sm90::wgmmaTf32(acc, sm90::descriptor(a + kk * 32), sm90::descriptor(bt + kk * 32), 1);
      sm90::wgmmaCommit();
      sm90::wgmmaWait<1>();
      if (kt > 0)
        sm90::mbarArrive(emptyBar + ((it - 1) % cfg::kStages) * 8);
    }
    sm90::wgmmaWait<0>();
    sm90::mbarArrive(emptyBar + ((it - 1) % cfg::kStages) * 8);
    storeTile(acc, tileAt(t), tid, b);
  }
}

} // namespace conv_shift

extern "C" __global__ void __launch_bounds__(conv_shift::kBlockThreads, 1)
    SINTER_KERNEL(const sinter::Buffers b, const __grid_constant__ sinter::TensorMaps tm) {
  using namespace conv_shift;
  namespace sm90 = sinter::sm90;
  extern __shared__ __align__(16) float smem[];
  const unsigned smem0 = sinter::mma::smemAddr(sm90::alignedBase(smem));
  const unsigned fullBar = smem0 + cfg::kStages * kStageBytes,
                 emptyBar = fullBar + cfg::kStages * 8;
  if (threadIdx.x == 0) {
    for (int s = 0; s < cfg::kStages; ++s) {
      sm90::mbarInit(fullBar + s * 8, 1);
      sm90::mbarInit(emptyBar + s * 8, kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x >= kConsumers) {
    if (threadIdx.x == kConsumers)
      produce(tm, smem0, fullBar, emptyBar);
    return;
  }
  consume(smem0, fullBar, emptyBar, threadIdx.x, b);
}
