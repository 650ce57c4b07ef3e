//===- templates/gemm.cuh - batched GEMM on tensor cores, with a row-group norm tail -----===//
//
// C = A * B (+ bias) with every size baked in: A [batch..., M, K] row-major, B either
// [N, K] (a linear layer's weight, kBTransposed) or [batch..., K, N]. Block tiles stream
// through a multi-stage cp.async pipeline (16-byte copies when rows allow, else 4-byte) and
// are multiplied with mma.sync m16n8k8 in TF32 or 3xTF32 (mma.cuh); accumulation is fp32.
// Epilogue per element: bias, the fused `Epilogue` functor, then either a store of C or the
// norm tail. The norm tail (kNormCols > 0) normalises each row's groups of kNormCols columns
// with their own mean and biased variance, both computed exactly from the final accumulators
// held in registers (two passes: mean first, then squared deviations), applies gamma/beta
// and `PostNorm`, and reduces each row (min/max/sum) across the tile before one atomic per
// row per block. Groups never straddle warps: the warp's column span is a multiple of
// kNormCols and each group is spread over the 4 lanes that share a row.
//
// Two engines compute the tile (cfg::kEngine): 0 is the mma.sync loop below (every warp
// copies and multiplies, sm_80 and later; the pipeline is mma.cuh's cpAsyncMainLoop, shared
// with conv_igemm.cuh); 1 is the sm_90a wgmma engine of wgmma.cuh (a
// producer warpgroup copies, BM / 64 consumer warpgroups multiply; B must be [N, K] and K a
// multiple of 4), whose consumer warps are laid out as kWarpsM = BM / 16 warps of one
// column span, so that the epilogue below serves both. With kTma (unbatched products) its
// producer copies A and B with TMA through the kernel's tensor maps 0 (A as [M][K]) and 1
// (B as [N][K]), which zero-fill what lies outside the matrices. With kPersistent
// (unbatched, one block per SM) the grid is one-dimensional and any number of blocks take
// the tiles in the grouped order, the last partial wave split by k tiles over all blocks
// over the last kStreamKSlots blocks (stream-K, wgmma.cuh): a persistent launch (min(tiles,
// SMs) blocks) or one of a block per whole tile and kStreamKSlots more. With kCluster 2 (TF32
// through TMA, a block per tile) the blocks run in clusters of two: blocks 2i and 2i + 1 hold
// tiles of the same tile column (the emitter's rules: even tile counts and kGroupM), so each
// copies its own A tile and half of the shared B tile, multicast into both blocks' stages.
//
// Slots: 0 A, 1 B, 2 bias, 3 C, 4 row reduction (float per row), 5 stream-K workspace
// (kStreamKSlots partial tiles of kBM x kBN floats, then a flag per slot; zeroed before each
// launch), 6 gamma, 7 beta.
// Expects from the prologue (namespace cfg): kM, kN, kK, kBatchDims, kBatchShape[],
// kBatchStrideA[], kBatchStrideB[], kBatchStrideC[], kBTransposed, kHasBias, kStoreOutput,
// kNormCols, kNormEps, kNormAffine, kRowReduce (0 none, 1 min, 2 max, 3 sum), kRowReduceScale
// (the sum's blocks add their partial sums times it: 1 / kN for a mean), kBM, kBN, kBK,
// kWarpsM, kWarpsN, kStages, kMinBlocks (resident blocks the registers must allow), kMath,
// kEngine, kTma, kGroupM (block order, above), kPersistent, kStreamKSlots, kCluster,
// kSharedBytes (the dynamic shared memory launched with, checked here); structs Epilogue and
// PostNorm.
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "mma.cuh"
#include "wgmma.cuh"

namespace gemm {

using sinter::i64;

constexpr bool kWgmma = cfg::kEngine == 1;
// Threads holding accumulators (the epilogue's threads), and all threads of the block.
constexpr int kThreads = 32 * cfg::kWarpsM * cfg::kWarpsN;
constexpr int kBlockThreads = kThreads + (kWgmma ? sinter::sm90::kProducerThreads : 0);
constexpr int kKTiles = (cfg::kK + cfg::kBK - 1) / cfg::kBK;
constexpr int kTilesM = (cfg::kM + cfg::kBM - 1) / cfg::kBM;
constexpr int kTilesN = (cfg::kN + cfg::kBN - 1) / cfg::kBN;
constexpr int kTiles = kTilesM * kTilesN;
constexpr int kTileFloats = cfg::kBM * cfg::kBN;
static_assert(cfg::kCluster == 1 ||
                  (cfg::kCluster == 2 && kWgmma && cfg::kTma && !cfg::kPersistent &&
                   kTilesM % 2 == 0 && kTilesN % 2 == 0 && cfg::kGroupM % 2 == 0),
              "clusters of two: blocks 2i and 2i + 1 share their tile column");
// Persistent (wgmma engine, no batch): gridDim.x blocks take the kTiles tiles in turn, the
// last partial wave split by k tiles over the last kStreamKSlots of them (stream-K,
// wgmma.cuh's PersistentSchedule); else one block per tile (grid: tile columns, tile rows,
// batch).
constexpr bool kPersistent = cfg::kPersistent;
using WgLayout = sinter::sm90::Layout<cfg::kBM, cfg::kBN, cfg::kStages, cfg::kMath>;
constexpr int kMI = cfg::kBM / cfg::kWarpsM / 16;
constexpr int kNI = cfg::kBN / cfg::kWarpsN / 8;
// 3xTF32 is meant to be fp32-accurate, but one fp32 accumulator chained through all of K
// (8192 for S3) gathers rounding error growing with sqrt(K): each k tile is accumulated on
// its own, from zero, and then added to the running sum.
constexpr bool kTwoLevel = cfg::kMath == sinter::mma::kMathTf32x3;
// 16-byte copies need rows whose length keeps every chunk aligned and inside the row.
constexpr int kAVec = cfg::kK % 4 == 0 ? 4 : 1;
constexpr int kBVec = (cfg::kBTransposed ? cfg::kK : cfg::kN) % 4 == 0 ? 4 : 1;

// Shared layouts: A [m][k]; B [n][k] when transposed, else [k][n]. Pads keep fragment loads
// conflict-free (row strides of 4 mod 32 words for [x][k], 8 mod 32 for [k][n]).
constexpr int kAStride = cfg::kBK + 4;
constexpr int kAStage = cfg::kBM * kAStride;
constexpr int kBStride = cfg::kBTransposed ? cfg::kBK + 4 : cfg::kBN + 8;
constexpr int kBStage = cfg::kBTransposed ? cfg::kBN * kBStride : cfg::kBK * kBStride;

static_assert(cfg::kBM % (16 * cfg::kWarpsM) == 0 && cfg::kBN % (8 * cfg::kWarpsN) == 0,
              "warp tiles are whole mma tiles");
static_assert(cfg::kBK % 8 == 0, "k tiles are whole mma steps");
static_assert(!kWgmma || (cfg::kBTransposed && cfg::kK % 4 == 0 && cfg::kBK == 32 &&
                          cfg::kWarpsM * 16 == cfg::kBM && cfg::kWarpsN == 1),
              "wgmma engine: B as [N, K], 16-byte rows, k tiles of 32, warps of 16 rows");
static_assert(!kPersistent || (kWgmma && cfg::kBatchDims == 0 && cfg::kMinBlocks == 1),
              "persistent: the wgmma engine, one block per SM, no batch");
static_assert(cfg::kStreamKSlots == 0 || kPersistent, "stream-K slots only when persistent");
static_assert(cfg::kSharedBytes == (kWgmma ? WgLayout::kBytes + (cfg::kRowReduce ? cfg::kBM * 4 : 0)
                                           : cfg::kStages * (kAStage + kBStage) * 4),
              "the emitter's shared memory is the template's");
static_assert(cfg::kNormCols == 0 ||
                  (cfg::kNormCols % 8 == 0 && (cfg::kBN / cfg::kWarpsN) % cfg::kNormCols == 0 &&
                   cfg::kN % cfg::kNormCols == 0),
              "norm groups are whole n8 tiles inside one warp");

/// Copies a ROWS x COLS tile (COLS contiguous in global memory, row pitch LD elements) at
/// (r0, c0) of a matrix with RMAX rows and CMAX columns into shared memory with row stride
/// SST, zero-filling outside the matrix.
template <int ROWS, int COLS, int VEC, int SST, i64 LD, i64 RMAX, i64 CMAX>
__device__ __forceinline__ void copyTile(float *s, const float *g, i64 r0, i64 c0, int tid) {
  namespace mma = sinter::mma;
  constexpr int kChunks = ROWS * COLS / VEC;
  static_assert(kChunks % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int p = 0; p < kChunks / kThreads; ++p) {
    const int i = tid + p * kThreads;
    const int r = i / (COLS / VEC), c = (i % (COLS / VEC)) * VEC;
    const i64 gr = r0 + r, gc = c0 + c;
    const bool ok = gr < RMAX && gc < CMAX;
    const float *src = ok ? g + gr * LD + gc : g;
    if constexpr (VEC == 4)
      mma::cpAsync16(s + r * SST + c, src, ok ? 16 : 0);
    else
      mma::cpAsync4(s + r * SST + c, src, ok);
  }
}

/// Barrier over the threads that hold accumulators (the wgmma engine's producer warpgroup
/// has left by the epilogue).
__device__ __forceinline__ void mathSync() {
  if constexpr (kWgmma)
    sinter::sm90::namedBarrier(2, kThreads);
  else
    __syncthreads();
}

/// Whether the batch strides of C up to dimension D are all even.
template <int D> constexpr bool evenStridesC() {
  if constexpr (D < 0)
    return true;
  else
    return cfg::kBatchStrideC[D] % 2 == 0 && evenStridesC<D - 1>();
}
/// Whether C's column pairs (2t, 2t + 1) are 8-byte aligned in every batch: float2 stores.
constexpr bool kPairStores = cfg::kN % 2 == 0 && evenStridesC<cfg::kBatchDims - 1>();

/// Adds dimension D's (and, recursively, the outer dimensions') share of the batch offsets.
/// The constexpr arrays are read only in constant expressions: device code may not use
/// host arrays, even constexpr ones.
template <int D> __device__ __forceinline__ void batchOffsets(int &rest, i64 &a, i64 &b, i64 &c) {
  if constexpr (D >= 0) {
    constexpr int kShape = (int)cfg::kBatchShape[D];
    constexpr i64 kSA = cfg::kBatchStrideA[D], kSB = cfg::kBatchStrideB[D],
                  kSC = cfg::kBatchStrideC[D];
    const int idx = rest % kShape;
    rest /= kShape;
    a += idx * kSA;
    b += idx * kSB;
    c += idx * kSC;
    batchOffsets<D - 1>(rest, a, b, c);
  }
}

/// The mma.sync engine: acc = this warp's share of A[m0.., :] * B[:, n0..], through a ring of
/// kStages cp.async stages that every thread copies into.
__device__ __forceinline__ void mmaSyncLoop(float (&acc)[kMI][kNI][4], float *smem,
                                            const float *A, const float *B, i64 m0, i64 n0,
                                            int tid) {
  namespace mma = sinter::mma;
  float *As = smem;
  float *Bs = smem + cfg::kStages * kAStage;
  auto loadTile = [&](int kt, int stage) {
    const i64 k0 = (i64)kt * cfg::kBK;
    copyTile<cfg::kBM, cfg::kBK, kAVec, kAStride, cfg::kK, cfg::kM, cfg::kK>(As + stage * kAStage,
                                                                             A, m0, k0, tid);
    if constexpr (cfg::kBTransposed)
      copyTile<cfg::kBN, cfg::kBK, kBVec, kBStride, cfg::kK, cfg::kN, cfg::kK>(Bs + stage * kBStage,
                                                                               B, n0, k0, tid);
    else
      copyTile<cfg::kBK, cfg::kBN, kBVec, kBStride, cfg::kN, cfg::kK, cfg::kN>(Bs + stage * kBStage,
                                                                               B, k0, n0, tid);
  };

  const int lane = tid & 31, warp = tid >> 5;
  const int wm = (warp % cfg::kWarpsM) * (cfg::kBM / cfg::kWarpsM);
  const int wn = (warp / cfg::kWarpsM) * (cfg::kBN / cfg::kWarpsN);
  constexpr int kBNs = cfg::kBTransposed ? kBStride : 1; // B smem: distance between n
  constexpr int kBKs = cfg::kBTransposed ? 1 : kBStride; // B smem: distance between k
  mma::cpAsyncMainLoop<cfg::kStages, kKTiles, 1, kTwoLevel>(
      acc, [&](int kt, int stage, int) { loadTile(kt, stage); },
      [&](float(&sums)[kMI][kNI][4], int st, int) {
        mma::warpTileStep<kMI, kNI, cfg::kBK, kAStride, 1, kBNs, kBKs, cfg::kMath>(
            sums, As + st * kAStage + wm * kAStride, Bs + st * kBStage + wn * kBNs, lane);
      });
}

/// Row and column (in tiles) of tile `id` in the block order: with kGroupM > 1, consecutive
/// tiles walk kGroupM tile rows down before moving one tile column right, so that the blocks
/// running at once share A's and B's k tiles in L2 instead of all of B's columns.
__device__ __forceinline__ void tilePosition(int id, int &tileRow, int &tileCol) {
  if constexpr (cfg::kGroupM > 1) {
    constexpr int kPerGroup = cfg::kGroupM * kTilesN;
    const int first = id / kPerGroup * cfg::kGroupM;
    const int rows = min(kTilesM - first, cfg::kGroupM);
    tileRow = first + id % kPerGroup % rows;
    tileCol = id % kPerGroup / rows;
  } else {
    tileRow = id / kTilesN;
    tileCol = id % kTilesN;
  }
}

/// The epilogue of one tile at (m0, n0) of batch `batch` (C at `C`), by accumulator thread
/// tid: bias, Epilogue, the norm tail, the store of C and the row reduction, whose per-row
/// partials go through `red` (kWarpsN * kBM floats of shared memory).
__device__ __forceinline__ void epilogue(float (&acc)[kMI][kNI][4], i64 m0, i64 n0, int batch,
                                         float *C, int tid, const sinter::Buffers &b, float *red) {
  const int lane = tid & 31, warp = tid >> 5;
  const int wnI = warp / cfg::kWarpsM;
  const int wm = warp % cfg::kWarpsM * (cfg::kBM / cfg::kWarpsM);
  const int wn = wnI * (cfg::kBN / cfg::kWarpsN);

  // Thread holds rows wm + mi*16 + g (+8), columns wn + ni*8 + 2t (+1).
  const int g = lane >> 2, t = lane & 3;
  const float *bias = sinter::slot<const float>(b, 2);
  // The bias of n8 block ni's two columns col0, col0 + 1 (one 8-byte load where N is even).
  auto biasPair = [&](i64 col0, float(&bv)[2]) {
    bv[0] = bv[1] = 0.f;
    if constexpr (cfg::kHasBias) {
      if (cfg::kN % 2 == 0 && col0 < cfg::kN) {
        const float2 p = *reinterpret_cast<const float2 *>(bias + col0);
        bv[0] = p.x;
        bv[1] = p.y;
      } else {
        if (col0 < cfg::kN)
          bv[0] = bias[col0];
        if (col0 + 1 < cfg::kN)
          bv[1] = bias[col0 + 1];
      }
    }
  };
  // Bias and Epilogue of the element at (row, col).
  auto biased = [&](float v, i64 row, i64 col, float bv) {
    if (cfg::kHasBias && col < cfg::kN)
      v += bv;
    if (row < cfg::kM && col < cfg::kN)
      v = Epilogue{}(v, (int)(batch * cfg::kM + row), (int)col, batch, b);
    return v;
  };
  // Where the values are only stored, bias and Epilogue are applied as they are stored, so
  // that each value dies at once; else in a pass of their own. Both go column by column, a
  // bias pair loaded once for the thread's rows: with the rows outside, the compiler kept a
  // thread's 64 bias values of a 256-wide tile live across its rows, and the wgmma engine's
  // 128 x 256 TF32 kernels spilled.
  constexpr bool kBiasAtStore = cfg::kStoreOutput && cfg::kNormCols == 0 && cfg::kRowReduce == 0;
  if constexpr (!kBiasAtStore) {
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni) {
      const i64 col0 = n0 + wn + ni * 8 + 2 * t;
      float bv[2];
      biasPair(col0, bv);
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const i64 row = m0 + wm + mi * 16 + g + h * 8;
#pragma unroll
          for (int j = 0; j < 2; ++j)
            acc[mi][ni][h * 2 + j] = biased(acc[mi][ni][h * 2 + j], row, col0 + j, bv[j]);
        }
    }
  }

  if constexpr (cfg::kNormCols > 0) {
    // Groups of kNormCols columns: kNormCols / 8 n8 tiles, spread over the 4 lanes of a row.
    constexpr int kTilesPerGroup = cfg::kNormCols / 8 > 0 ? cfg::kNormCols / 8 : 1;
    constexpr float kInv = 1.0f / cfg::kNormCols;
    const float *gamma = sinter::slot<const float>(b, 6);
    const float *beta = sinter::slot<const float>(b, 7);
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int gi = 0; gi < kNI / kTilesPerGroup; ++gi) {
          float s = 0.f;
#pragma unroll
          for (int q = 0; q < kTilesPerGroup; ++q)
            s += acc[mi][gi * kTilesPerGroup + q][h * 2] +
                 acc[mi][gi * kTilesPerGroup + q][h * 2 + 1];
          s += __shfl_xor_sync(0xffffffffu, s, 1);
          s += __shfl_xor_sync(0xffffffffu, s, 2);
          const float mean = s * kInv;
          float d2 = 0.f;
#pragma unroll
          for (int q = 0; q < kTilesPerGroup; ++q)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
              const float d = acc[mi][gi * kTilesPerGroup + q][h * 2 + j] - mean;
              d2 += d * d;
            }
          d2 += __shfl_xor_sync(0xffffffffu, d2, 1);
          d2 += __shfl_xor_sync(0xffffffffu, d2, 2);
          const float rstd = rsqrtf(d2 * kInv + cfg::kNormEps);
          const i64 row = m0 + wm + mi * 16 + g + h * 8;
#pragma unroll
          for (int q = 0; q < kTilesPerGroup; ++q)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
              const int ni = gi * kTilesPerGroup + q;
              const i64 col = n0 + wn + ni * 8 + 2 * t + j;
              float v = (acc[mi][ni][h * 2 + j] - mean) * rstd;
              if (col < cfg::kN) {
                if constexpr (cfg::kNormAffine)
                  v = v * gamma[col] + beta[col];
                if (row < cfg::kM)
                  v = PostNorm{}(v, (int)(batch * cfg::kM + row), (int)col, batch, b);
              }
              acc[mi][ni][h * 2 + j] = v;
            }
        }
  }

  if constexpr (cfg::kStoreOutput) {
    // The bias pairs are loaded kChunk n8 blocks at a time, ahead of the chunk's stores: a
    // load after a store to C may read what it wrote (as far as the compiler knows), so
    // loads interleaved with the stores each waited out a round trip to L2 (measured:
    // gemm_unary_mix 4.5% slower, its tiles' products being short). All of a 128-wide
    // tile's pairs at once; 8 of a 256-wide one's (16 pairs beside its 128 accumulators
    // spilled).
    constexpr int kChunk = kNI <= 16 ? kNI : 8;
    static_assert(kNI % kChunk == 0, "whole chunks of n8 blocks");
    float bv[kChunk][2];
#pragma unroll
    for (int ni = 0; ni < kNI; ++ni) {
      const i64 col = n0 + wn + ni * 8 + 2 * t;
      if constexpr (kBiasAtStore) {
        if (ni % kChunk == 0) {
#pragma unroll
          for (int q = 0; q < kChunk; ++q)
            biasPair(col + q * 8, bv[q]);
        }
      }
#pragma unroll
      for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const i64 row = m0 + wm + mi * 16 + g + h * 8;
          if (row >= cfg::kM)
            continue;
          float v0 = acc[mi][ni][h * 2], v1 = acc[mi][ni][h * 2 + 1];
          if constexpr (kBiasAtStore) {
            v0 = biased(v0, row, col, bv[ni % kChunk][0]);
            v1 = biased(v1, row, col + 1, bv[ni % kChunk][1]);
          }
          float *dst = C + row * cfg::kN + col;
          if (kPairStores && col < cfg::kN) {
            *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1);
          } else {
            if (col < cfg::kN)
              dst[0] = v0;
            if (col + 1 < cfg::kN)
              dst[1] = v1;
          }
        }
    }
  }

  if constexpr (cfg::kRowReduce != 0) {
    // Per row: over this thread's columns, the 4 lanes of the row, then the warps along N
    // (through shared memory), then one atomic per row per block.
    auto combine = [](float a, float c) {
      if constexpr (cfg::kRowReduce == 1)
        return fminf(a, c);
      else if constexpr (cfg::kRowReduce == 2)
        return fmaxf(a, c);
      else
        return a + c;
    };
    constexpr float kIdentity =
        cfg::kRowReduce == 1 ? sinter::kInf : (cfg::kRowReduce == 2 ? -sinter::kInf : 0.f);
    mathSync(); // the last tile's partials are read out
#pragma unroll
    for (int mi = 0; mi < kMI; ++mi)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float r = kIdentity;
#pragma unroll
        for (int ni = 0; ni < kNI; ++ni)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            const i64 col = n0 + wn + ni * 8 + 2 * t + j;
            if (col < cfg::kN)
              r = combine(r, acc[mi][ni][h * 2 + j]);
          }
        r = combine(r, __shfl_xor_sync(0xffffffffu, r, 1));
        r = combine(r, __shfl_xor_sync(0xffffffffu, r, 2));
        if (t == 0)
          red[wnI * cfg::kBM + wm + mi * 16 + g + h * 8] = r;
      }
    mathSync();
    float *out = sinter::slot<float>(b, 4);
    for (int r = tid; r < cfg::kBM; r += kThreads) {
      const i64 row = m0 + r;
      if (row >= cfg::kM)
        continue;
      float v = red[r];
#pragma unroll
      for (int i = 1; i < cfg::kWarpsN; ++i)
        v = combine(v, red[i * cfg::kBM + r]);
      float *dst = out + batch * cfg::kM + row;
      if constexpr (cfg::kRowReduce == 1)
        sinter::atomicMinFloat(dst, v);
      else if constexpr (cfg::kRowReduce == 2)
        sinter::atomicMaxFloat(dst, v);
      else
        atomicAdd(dst, cfg::kRowReduceScale == 1.f ? v : v * cfg::kRowReduceScale);
    }
  }
}

/// The kernel's body on engine E (cfg::kEngine; a template so that sm_80 builds never
/// instantiate the wgmma engine).
template <int E>
__device__ __forceinline__ void run(const sinter::Buffers &b, const sinter::TensorMaps &tm,
                                    float *smem) {
  namespace sm90 = sinter::sm90;
  float acc[kMI][kNI][4];
  if constexpr (E == 0) {
    // mma.sync: one tile per block, every thread copies and multiplies.
    int tileRow, tileCol;
    tilePosition(blockIdx.y * kTilesN + blockIdx.x, tileRow, tileCol);
    const i64 m0 = (i64)tileRow * cfg::kBM, n0 = (i64)tileCol * cfg::kBN;
    const int batch = blockIdx.z;
    i64 offA = 0, offB = 0, offC = 0;
    int rest = batch;
    batchOffsets<cfg::kBatchDims - 1>(rest, offA, offB, offC);
    mmaSyncLoop(acc, smem, sinter::slot<const float>(b, 0) + offA,
                sinter::slot<const float>(b, 1) + offB, m0, n0, threadIdx.x);
    // The pipeline buffers become the row reduction's scratch.
    epilogue(acc, m0, n0, batch, sinter::slot<float>(b, 3) + offC, threadIdx.x, b, smem);
  } else {
    // wgmma: a producer warpgroup copies, the consumer warpgroups multiply and finish each
    // piece of work.
    float *base = sm90::alignedBase(smem);
    const int batch = kPersistent ? 0 : blockIdx.z;
    // Stream-K hand-offs: slot i of the workspace (slot 5) holds block i's partial tile, the
    // flags follow all the slots. A Head starts from the next block's slot.
    auto partials = [&] { return sinter::slot<float>(b, 5); };
    auto flags = [&] {
      return reinterpret_cast<int *>(partials() + (i64)cfg::kStreamKSlots * kTileFloats);
    };
    auto sync = [] { mathSync(); };
    // A Head's sums, from the slot of the next tail range: its start in 3xTF32, added after it
    // in TF32 (mainLoop says why). A Tail writes its own range's slot.
    auto start = [&](int range, int ctid) {
      if constexpr (cfg::kStreamKSlots > 0)
        sm90::takePartial<false, kNI, kThreads>(acc[0], partials() + (i64)(range + 1) * kTileFloats,
                                                flags() + range + 1, ctid, sync);
    };
    // What only the consumers' finish uses is worked out there, after each piece's k loop.
    auto finish = [&](int tile, sm90::Part part, int range, int ctid) {
      if constexpr (cfg::kStreamKSlots > 0) {
        if (part == sm90::Part::Tail) { // handed to the block that has the first k tiles
          sm90::handOffPartial<kNI, kThreads>(acc[0], partials() + (i64)range * kTileFloats,
                                              flags() + range, ctid, sync);
          return;
        }
        if (!kTwoLevel && part == sm90::Part::Head)
          sm90::takePartial<true, kNI, kThreads>(
              acc[0], partials() + (i64)(range + 1) * kTileFloats, flags() + range + 1, ctid, sync);
      }
      int tileRow, tileCol;
      tilePosition(tile, tileRow, tileCol);
      i64 offA = 0, offB = 0, offC = 0;
      int rest = batch;
      batchOffsets<cfg::kBatchDims - 1>(rest, offA, offB, offC);
      // The row reduction's scratch follows the engine's shared memory.
      epilogue(acc, (i64)tileRow * cfg::kBM, (i64)tileCol * cfg::kBN, batch,
               sinter::slot<float>(b, 3) + offC, ctid, b, base + WgLayout::kEnd / 4);
    };
    i64 offA = 0, offB = 0, offC = 0;
    int rest = batch;
    batchOffsets<cfg::kBatchDims - 1>(rest, offA, offB, offC);
    const float *A = sinter::slot<const float>(b, 0) + offA;
    const float *B = sinter::slot<const float>(b, 1) + offB;
    auto go = [&](auto sched) {
      if constexpr (cfg::kTma) {
        // A and B through tensor maps 0 and 1 ([K innermost, rows], boxes 32 x kBM / 32 x kBN).
        auto load = [&](int t, int kt, float *as, float *bs, unsigned bar) {
          int tileRow, tileCol;
          tilePosition(t, tileRow, tileCol);
          sm90::tmaLoad2d(sinter::mma::smemAddr(as), tm.m[0], kt * cfg::kBK, tileRow * cfg::kBM,
                          bar);
          if constexpr (cfg::kCluster > 1) {
            // This block's part of the B tile (map 1's box is kBN / kCluster rows), to both.
            constexpr int kPart = cfg::kBN / cfg::kCluster;
            const int rank = int(sm90::clusterRank());
            sm90::tmaLoad2dMulticast(sinter::mma::smemAddr(bs + rank * kPart * cfg::kBK), tm.m[1],
                                     kt * cfg::kBK, tileCol * cfg::kBN + rank * kPart, bar,
                                     (1u << cfg::kCluster) - 1);
          } else {
            sm90::tmaLoad2d(sinter::mma::smemAddr(bs), tm.m[1], kt * cfg::kBK,
                            tileCol * cfg::kBN, bar);
          }
        };
        sm90::mainLoop<cfg::kBM + 0 * E, cfg::kBN, kKTiles, cfg::kStages, cfg::kMath, true,
                       cfg::kCluster>(
            acc[0], base, threadIdx.x, sched, load, start, finish);
      } else {
        auto load = [&](int t, int kt, float *as, float *bs, int ptid) {
          int tileRow, tileCol;
          tilePosition(t, tileRow, tileCol);
          const i64 k0 = (i64)kt * cfg::kBK;
          sm90::copyTileSwizzled<cfg::kBM, cfg::kK, cfg::kM, cfg::kK>(
              as, A, (i64)tileRow * cfg::kBM, k0, ptid);
          sm90::copyTileSwizzled<cfg::kBN, cfg::kK, cfg::kN, cfg::kK>(
              bs, B, (i64)tileCol * cfg::kBN, k0, ptid);
        };
        sm90::mainLoop<cfg::kBM + 0 * E, cfg::kBN, kKTiles, cfg::kStages, cfg::kMath, false, 1>(
            acc[0], base, threadIdx.x, sched, load, start, finish);
      }
    };
    if constexpr (kPersistent)
      go(sm90::PersistentSchedule<kTiles, kKTiles>(blockIdx.x, gridDim.x, cfg::kStreamKSlots));
    else
      go(sm90::OneTile<kKTiles>(blockIdx.y * kTilesN + blockIdx.x));
  }
}

} // namespace gemm

// SINTER_GEMM_CLUSTER: the prologue's __cluster_dims__ where kCluster > 1.
#ifndef SINTER_GEMM_CLUSTER
#define SINTER_GEMM_CLUSTER
#endif
extern "C" __global__ void __launch_bounds__(gemm::kBlockThreads, cfg::kMinBlocks)
    SINTER_GEMM_CLUSTER
    SINTER_KERNEL(const sinter::Buffers b, const __grid_constant__ sinter::TensorMaps tm) {
  extern __shared__ __align__(16) float smem[];
  gemm::run<cfg::kEngine>(b, tm, smem);
}
