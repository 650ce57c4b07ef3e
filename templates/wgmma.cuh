//===- templates/wgmma.cuh - Hopper tensor-core engine: wgmma fed by a copy warpgroup --===//
//
// The sm_90a main loop of the tensor-core templates (gemm.cuh when cfg::kEngine is 1). A
// block has one producer warpgroup and BM / 64 consumer warpgroups. The producer fills a
// ring of shared-memory stages with the template's own loader: TMA tensor copies issued by
// one thread (mainLoop's TMA), or every producer thread's cp.async copies. It waits for
// them, prepares the stage for 3xTF32 (below), makes the writes visible to the tensor
// cores' proxy and signals the stage's `full` mbarrier (TF32 through TMA: the copies
// complete it). Each consumer warpgroup multiplies
// its 64 rows of A by the whole B tile with wgmma.mma_async (operands read straight from
// shared memory through matrix descriptors, accumulators in registers) and releases a
// stage on its `empty` mbarrier once the wgmmas reading it have completed (TF32: one
// stage of wgmmas stays in flight; 3xTF32 sums each k tile apart, see mainLoop).
//
// Tiles are K-major: A [BM][32] and B [BN][32] floats per stage, each 128-byte row stored in
// the 128-byte swizzle (16-byte chunk c of row r at chunk c ^ (r % 8)), which is what the
// descriptors' swizzle mode 1 reads and keeps the copies and the tensor cores' reads free of
// bank conflicts. TF32 operands are read by the tensor cores as fp32 bit patterns whose low
// 13 bits are ignored (truncation: measured rel. L2 error 7.7e-4 against 2.9e-4 for the
// rounded operands of mma.sync; rounding in shared memory would cost a pass over each
// stage). 3xTF32 splits x into big = x with the low bits ignored and small = x - big
// (exact), rounded to TF32 (smallPart); the products small*big + big*small + big*big reach
// fp32 accuracy. B's small parts are stored beside the stage by the producer; A's are
// formed by each consumer in registers (wgmma with A from registers), which halves the
// producer's pass (measured: the pass cost 8192^3 3xTF32 69 -> 96 TFLOP/s when skipped).
//
// The accumulators of consumer warp w (0 .. 4 * BM / 64 - 1) hold rows 16 w + g (+8) and,
// for each n8 block i, columns 8 i + 2 t (+1) (g = lane / 4, t = lane % 4): the layout of
// mma.sync m16n8 tiles, so the templates' epilogues serve both engines unchanged.
//
// A block's work is a list of pieces (k tiles of a tile) from a schedule: one tile
// (OneTile), or, for a persistent launch, tiles in turn and a share of the last partial
// wave's k tiles (PersistentSchedule: stream-K). The producer runs through all pieces
// without a break, so the next tile's stages fill during the last one's epilogue; a tile
// whose k tiles two blocks share is completed through a workspace slot (handOffPartial,
// takePartial). With two consumer warpgroups the producer gives them its registers
// (setmaxnreg: 40 / 232).
//
// In a cluster of two blocks (mainLoop's CLUSTER; TF32 through TMA, one tile a block) each
// block's loader copies part of a stage and multicasts it into both blocks' stages (gemm.cuh:
// half of a B tile the two share); a stage is free again once both blocks' consumers have
// released it, so every consumer warp arrives on the stage's empty barrier in each block.
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "mma.cuh"

namespace sinter {
namespace sm90 {

constexpr int kProducerThreads = 128;
/// Registers a thread of mainLoop's producer and of its two consumer warpgroups keep
/// (setmaxnreg): 128 x 40 + 256 x 232 = 384 x 168, what a block of 384 threads launches with.
constexpr int kLoopProducerRegs = 40, kLoopConsumerRegs = 232;
static_assert(kProducerThreads * kLoopProducerRegs + 256 * kLoopConsumerRegs <= 384 * 168,
              "setmaxnreg: the consumers take no more than the producer gives back");

/// Float offset of element (r, k) in a K-major [rows][32] tile in the 128-byte swizzle.
__device__ __forceinline__ int swizzled(int r, int k) {
  return r * 32 + ((((k >> 2) ^ r) & 7) << 2) + (k & 3);
}

/// The 3xTF32 small part of x: x minus the TF32 value the tensor cores read from x (its low
/// 13 bits dropped), exact in fp32, returned rounded to TF32 by one add (see mma.cuh).
__device__ __forceinline__ float smallPart(float x) {
  return __uint_as_float(mma::toTf32Operand(x - __uint_as_float(__float_as_uint(x) & 0xffffe000u)));
}

/// The engine's copy of a ROWS x 32 K-major tile at (r0, k0) of a matrix with RMAX rows, KMAX
/// columns and row pitch LD (a multiple of 4) into the swizzled layout above, by producer
/// thread ptid: 16-byte chunks, eight threads per 128-byte row, zero-filled outside. Thread
/// ptid copies chunk ptid % 8 of rows ptid / 8 + 16 j (an 8-row tile: the first 64 threads),
/// which share one swizzle, so that its addresses are one base plus constant steps (the
/// producer's instruction count bounded the engine: measured 30% tensor-pipe use when each
/// chunk recomputed its address). r0 is a multiple of ROWS and k0 of 32, so that a matrix of
/// whole tiles needs no bounds tests.
template <int ROWS, i64 LD, i64 RMAX, i64 KMAX>
__device__ __forceinline__ void copyTileSwizzled(float *s, const float *g, i64 r0, i64 k0,
                                                 int ptid) {
  constexpr int kRowStep = kProducerThreads / 8;
  static_assert(ROWS % kRowStep == 0 || ROWS == 8, "whole rows per pass, or one 8-row pass");
  constexpr bool kWholeRows = RMAX % ROWS == 0, kWholeK = KMAX % 32 == 0;
  const int r = ptid >> 3, c = (ptid & 7) * 4;
  if (ROWS < kRowStep && r >= ROWS) // an 8-row tile: half the producer copies it
    return;
  float *dst = s + swizzled(r, c);
  const bool kOk = kWholeK || k0 + c < KMAX;
  const float *src = g + (r0 + r) * LD + k0 + c;
#pragma unroll
  for (int j = 0; j < (ROWS + kRowStep - 1) / kRowStep; ++j) {
    const bool ok = kOk && (kWholeRows || r0 + r + j * kRowStep < RMAX);
    if (kWholeRows && kWholeK)
      mma::cpAsync16(dst + j * kRowStep * 32, src + (i64)j * kRowStep * LD);
    else
      mma::cpAsync16(dst + j * kRowStep * 32, ok ? src + (i64)j * kRowStep * LD : g, ok ? 16 : 0);
  }
}

/// Matrix descriptor of a K-major tile in the 128-byte swizzle starting at shared address
/// `addr` (1024-byte aligned, plus 32 bytes per k8 step): groups of 8 rows 1024 bytes apart.
__device__ __forceinline__ unsigned long long descriptor(unsigned addr) {
  return (unsigned long long)((addr & 0x3ffff) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) |
         (1ull << 62);
}

__device__ __forceinline__ void mbarInit(unsigned bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbarArrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/// Waits until the phase of parity `parity` of the barrier has completed.
__device__ __forceinline__ void mbarWait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  } while (!done);
}

/// Arrives on the barrier (count 1) and adds `bytes` to the transaction bytes its current
/// phase waits for (the TMA copies that complete on it).
__device__ __forceinline__ void mbarArriveExpectTx(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

/// TMA copy of the box at (x, y) (x innermost, in elements) of the 2-D tensor map `map` to
/// shared address `dst`, its bytes completing on barrier `bar`. Outside the tensor the box
/// reads zeros.
__device__ __forceinline__ void tmaLoad2d(unsigned dst, const TensorMap &map, int x, int y,
                                          unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(bar)
               : "memory");
}

/// TMA copy of the box at (x, y, z) (x innermost, in elements) of the 3-D tensor map `map`, as
/// tmaLoad2d.
__device__ __forceinline__ void tmaLoad3d(unsigned dst, const TensorMap &map, int x, int y, int z,
                                          unsigned bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(z), "r"(bar)
               : "memory");
}

/// The same copy multicast to every block of the cluster in `mask` (bit i: rank i): each
/// receives the box at shared offset `dst` of its own, its bytes completing on its own
/// barrier at offset `bar`.
__device__ __forceinline__ void tmaLoad2dMulticast(unsigned dst, const TensorMap &map, int x,
                                                   int y, unsigned bar, unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(bar),
               "h"(mask)
               : "memory");
}

/// This block's rank in its thread-block cluster (0 in a launch without clusters).
__device__ __forceinline__ unsigned clusterRank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

/// The two halves of a barrier over every thread of the cluster: arriving releases this
/// thread's earlier memory operations, waiting acquires the others'.
__device__ __forceinline__ void clusterArrive() {
  asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
}
__device__ __forceinline__ void clusterWait() {
  asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

/// Arrives, when `on`, on the barrier at shared offset `bar` of the cluster's block of rank
/// `rank` (this block's own included). Predicated inside one asm (namedBarrierIf says why).
/// The arrival's default semantics (release at CTA scope) order nothing beyond the block:
/// what it reports, wgmma reads that wgmma.wait_group saw complete, needs no more, and
/// `.release.cluster` put a MEMBAR.ALL.GPU before every arrival (measured: TF32 8192^3 at
/// 229 TFLOP/s against 330-360 without clusters).
__device__ __forceinline__ void mbarArriveClusterIf(unsigned bar, unsigned rank, bool on) {
  asm volatile("{\n.reg .pred p;\n.reg .b32 remote;\nsetp.ne.b32 p, %2, 0;\n"
               "mapa.shared::cluster.u32 remote, %0, %1;\n"
               "@p mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
               "r"(rank), "r"((int)on)
               : "memory");
}

/// Orders this thread's ordinary shared-memory writes before later reads by the tensor cores.
__device__ __forceinline__ void fenceProxyAsync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Barrier `id` (1..15) over `threads` threads (a multiple of 32).
__device__ __forceinline__ void namedBarrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// Arrives at named barrier `id` without waiting: the other side of a producer-consumer
/// hand-off whose waiting side calls namedBarrier with the same count.
__device__ __forceinline__ void namedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// setmaxnreg: the calling warpgroup's registers a thread become N, given back to the block's
/// pool (INC false) or taken from it (INC true, waiting until the pool has them). Every warp
/// of the warpgroup calls it; the kernel is compiled for its launch bounds' share.
template <int N, bool INC> __device__ __forceinline__ void setMaxRegisters() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: 24 .. 256, a multiple of 8");
  if constexpr (INC)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
  else
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}

/// Keeps the definitions of registers a wgmma reads (A fragments) before the next
/// wgmmaFence: the compiler may otherwise sink them past it, and ptxas then serialises the
/// wgmmas (C7513, "non wgmma instructions defining input registers").
template <int N> __device__ __forceinline__ void fenceOperands(unsigned (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+r"(r[i])::"memory");
}

/// bar.sync (or, with ARRIVE, bar.arrive: no waiting) of barrier ID over THREADS threads when
/// `on`: predicated inside one asm so that code around wgmmas has no branch (ptxas serialises
/// wgmmas next to divergent paths, C7520).
template <int ID, int THREADS, bool ARRIVE>
__device__ __forceinline__ void namedBarrierIf(bool on) {
  if constexpr (ARRIVE)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p bar.arrive %0, %1;\n}\n" ::"n"(ID),
                 "n"(THREADS), "r"((int)on)
                 : "memory");
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %2, 0;\n@p bar.sync %0, %1;\n}\n" ::"n"(ID),
                 "n"(THREADS), "r"((int)on)
                 : "memory");
}

__device__ __forceinline__ void wgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// One wgmma per width N (8, 16, 32, 64, 128, 256): d (64 x N, fp32) = A (64 x 8) * B (N x 8) +
// (accumulate ? d : 0), B through its descriptor, A through a descriptor or, from registers,
// as thread (warp w of the warpgroup, g = lane / 4, t = lane % 4) holding rows 16 w + g
// (a0, a2) and 16 w + g + 8 (a1, a3) at k = t (a0, a1) and t + 4 (a2, a3). The accumulators
// are N / 2 registers per thread, listed by the macros below.
#define SINTER_WG_D1(d, b) "+f"(d[b][0]), "+f"(d[b][1]), "+f"(d[b][2]), "+f"(d[b][3])
#define SINTER_WG_D8(d, b)                                                                    \
  SINTER_WG_D1(d, b), SINTER_WG_D1(d, b + 1), SINTER_WG_D1(d, b + 2), SINTER_WG_D1(d, b + 3), \
      SINTER_WG_D1(d, b + 4), SINTER_WG_D1(d, b + 5), SINTER_WG_D1(d, b + 6),                 \
      SINTER_WG_D1(d, b + 7)
#define SINTER_WG_D2(d, b) SINTER_WG_D1(d, b), SINTER_WG_D1(d, b + 1)
#define SINTER_WG_D4(d, b) SINTER_WG_D2(d, b), SINTER_WG_D2(d, b + 2)
#define SINTER_WG_N8(d) SINTER_WG_D1(d, 0)
#define SINTER_WG_N16(d) SINTER_WG_D2(d, 0)
#define SINTER_WG_N32(d) SINTER_WG_D4(d, 0)
#define SINTER_WG_N64(d) SINTER_WG_D8(d, 0)
#define SINTER_WG_N128(d) SINTER_WG_D8(d, 0), SINTER_WG_D8(d, 8)
#define SINTER_WG_N256(d) SINTER_WG_N128(d), SINTER_WG_D8(d, 16), SINTER_WG_D8(d, 24)
#define SINTER_WG_R8 "{%0, %1, %2, %3}"
#define SINTER_WG_R16 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define SINTER_WG_R32 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define SINTER_WG_R64 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define SINTER_WG_R128 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define SINTER_WG_R256 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}"
// R0 .. R5: the operand indices after the N / 2 accumulators. From shared memory: descA R0,
// descB R1, accumulate R2; A from registers: a R0 .. R3, descB R4, accumulate R5.
#define SINTER_WGMMA_TF32(N, R0, R1, R2, R3, R4, R5)                                               \
  __device__ __forceinline__ void wgmmaTf32(float(&d)[N / 8][4], unsigned long long descA,         \
                                            unsigned long long descB, int accumulate) {            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #R2 ", 0;\n"                                 \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " SINTER_WG_R##N         \
                 ", %" #R0 ", %" #R1 ", p, 1, 1;\n}\n"                                             \
                 : SINTER_WG_N##N(d)                                                               \
                 : "l"(descA), "l"(descB), "r"(accumulate));                                       \
  }                                                                                                \
  __device__ __forceinline__ void wgmmaTf32(float(&d)[N / 8][4], const unsigned(&a)[4],            \
                                            unsigned long long descB, int accumulate) {            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #R5 ", 0;\n"                                 \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 " SINTER_WG_R##N         \
                 ", {%" #R0 ", %" #R1 ", %" #R2 ", %" #R3 "}, %" #R4 ", p, 1, 1;\n}\n"             \
                 : SINTER_WG_N##N(d)                                                               \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(accumulate));       \
  }
SINTER_WGMMA_TF32(8, 4, 5, 6, 7, 8, 9)
SINTER_WGMMA_TF32(16, 8, 9, 10, 11, 12, 13)
SINTER_WGMMA_TF32(32, 16, 17, 18, 19, 20, 21)
SINTER_WGMMA_TF32(64, 32, 33, 34, 35, 36, 37)
SINTER_WGMMA_TF32(128, 64, 65, 66, 67, 68, 69)
SINTER_WGMMA_TF32(256, 128, 129, 130, 131, 132, 133)
#undef SINTER_WGMMA_TF32
#undef SINTER_WG_R8
#undef SINTER_WG_R16
#undef SINTER_WG_R32
#undef SINTER_WG_R64
#undef SINTER_WG_R128
#undef SINTER_WG_R256
#undef SINTER_WG_N8
#undef SINTER_WG_N16
#undef SINTER_WG_N32
#undef SINTER_WG_N64
#undef SINTER_WG_N128
#undef SINTER_WG_N256
#undef SINTER_WG_D4
#undef SINTER_WG_D2
#undef SINTER_WG_D8
#undef SINTER_WG_D1

/// Shared-memory plan of the engine: STAGES stages of A [BM][32] and B [BN][32] floats (and
/// for 3xTF32 B's small parts [BN][32]), then the full, empty and (TMA with 3xTF32) landed
/// barriers, then two work words per stage (mainLoop). A template's own scratch may follow
/// at kEnd.
template <int BM, int BN, int STAGES, int MATH> struct Layout {
  static constexpr int kRaw = (BM + BN) * 32; // floats
  static constexpr int kStage = MATH == mma::kMathTf32x3 ? kRaw + BN * 32 : kRaw; // floats
  static constexpr int kBarriers = STAGES * kStage * 4;                  // byte offset
  static constexpr int kWords = kBarriers + 3 * STAGES * 8;              // byte offset
  static constexpr int kEnd = kWords + 2 * STAGES * 8;                   // byte offset
  /// Dynamic shared memory to request: the engine's, and 1 KiB for alignment.
  static constexpr int kBytes = kEnd + 1024;
};

/// The 1024-byte aligned start of the engine's shared memory.
__device__ __forceinline__ float *alignedBase(float *smem) {
  const unsigned a = mma::smemAddr(smem);
  return smem + (((a + 1023u) & ~1023u) - a) / 4;
}

/// A piece of a block's work: k tiles [k0, k1) of tile `tile` (numbered by the template).
struct Work {
  int tile, k0, k1;
};

/// Which k tiles of its tile a piece holds: all, the first ones (a later block has the rest),
/// or the later ones (an earlier block has the first).
enum class Part : int { Whole, Head, Tail };

/// One tile, all of its k tiles: the schedule of a launch of one block per tile.
template <int KTILES> struct OneTile {
  int tile;
  static constexpr int range = -1; // no tail range (PersistentSchedule's)
  static constexpr bool kPieces = false;  // one piece: no piece loop in the consumers
  bool done = false;
  __device__ explicit OneTile(int t) : tile(t) {}
  __device__ bool next(Work &w) {
    if (done)
      return false;
    done = true;
    w = {tile, 0, KTILES};
    return true;
  }
  /// The consumers' view (PersistentSchedule's): one piece, all of its tile.
  __device__ int kTiles() const { return KTILES; }
  __device__ int pieceEnd(int) const { return KTILES; }
  __device__ bool headAt(int) const { return false; }
};

/// The work of block `block` of `blocks` (gridDim.x, any number) over TILES tiles of KTILES
/// k tiles each. Whole tiles are dealt in turn: block b takes tiles b, b + blocks, ... Where
/// that would leave a partial wave, the last S + r tiles are not dealt out whole (S =
/// min(splitBlocks, blocks), r = TILES % S, when TILES > S and r > 0): their k tiles, tile
/// after tile, are cut into S contiguous ranges of (nearly) equal length, one for each of the
/// last S blocks, taken after their whole tiles (stream-K). With S = blocks (a persistent
/// launch) every block ends within a k tile of the same total; with blocks = TILES - r (one
/// block per whole tile, then S more) the whole tiles are one a block and the last S blocks
/// share the rest. Since the tail holds at least S tiles, a range is at least KTILES long,
/// so a tile is shared by at most two blocks: b ends its range with the tile's first k tiles
/// (a Head) and b + 1 starts its range with the rest (a Tail). Consecutive blocks run
/// consecutive tiles, which share A and B in L2.
template <int TILES, int KTILES> struct PersistentSchedule {
  static constexpr bool kPieces = true;
  int tile, step, tail; // the next whole tile, the block count, the first tile of the tail
  int unit, unitEnd;    // this block's k tiles of the tail, counted from its first tile
  int wholeK, skew;     // k tiles of the block's whole tiles; its tail start within a tile
  int range;            // which of the S tail ranges is this block's (-1: none)
  // __host__ and constexpr so that a test can walk it at compile time.
  __host__ __device__ constexpr PersistentSchedule(int block, int blocks, int splitBlocks)
      : tile(block), step(blocks), tail(TILES), unit(0), unitEnd(0), wholeK(0), skew(0), range(-1) {
    const int split = splitBlocks < blocks ? splitBlocks : blocks;
    const int rest = split > 0 ? TILES % split : 0;
    if (split > 0 && TILES > split && rest != 0) {
      tail = TILES - split - rest;
      if (block >= blocks - split) {
        range = block - (blocks - split);
        const long long units = (long long)(split + rest) * KTILES;
        unit = int(units * range / split);
        unitEnd = int(units * (range + 1) / split);
        skew = unit % KTILES;
      }
    }
    wholeK = block < tail ? (tail - block + blocks - 1) / blocks * KTILES : 0;
  }
  __host__ __device__ constexpr bool next(Work &w) {
    if (tile < tail) {
      w = {tile, 0, KTILES};
      tile += step;
      return true;
    }
    if (unit >= unitEnd)
      return false;
    const int t = unit / KTILES, k0 = unit - t * KTILES;
    const int k1 = k0 + unitEnd - unit < KTILES ? k0 + unitEnd - unit : KTILES;
    w = {tail + t, k0, k1};
    unit += k1 - k0;
    return true;
  }
  /// The consumers' view, from the few numbers above (the producer's walk kept by every
  /// consumer thread spilled the 3xTF32 registers; branches on the producer's words made
  /// ptxas serialise the wgmmas): the block's k tiles in all, and for a piece starting at
  /// its it-th k tile, the k tile after the piece's last and whether the piece is a Head
  /// (the block's last piece, ending inside its tile).
  __host__ __device__ constexpr int kTiles() const { return wholeK + unitEnd - unit; }
  __host__ __device__ constexpr int pieceEnd(int it) const {
    const int kt = (it < wholeK ? it : it + skew) % KTILES; // the k tile within its tile
    return it + KTILES - kt < kTiles() ? it + KTILES - kt : kTiles();
  }
  __host__ __device__ constexpr bool headAt(int it) const {
    return unit < unitEnd && unitEnd % KTILES != 0 && pieceEnd(it) == kTiles();
  }
};

/// The stream-K hand-off of a tile's partial sums, by the consumer threads (ctid 0 ..
/// THREADS - 1) of two blocks: the block that computes the tile's later k tiles (its Tail,
/// first in its range) stores its sums in a workspace slot of its own, in register order
/// (float4 i of thread ctid at i * THREADS + ctid: each warp writes 512 contiguous bytes),
/// then raises the slot's flag; the block that computes the first k tiles (its Head, last in
/// its range) waits for the flag and takes the slot (same thread layout, so each thread reads
/// back its own elements): before its Head as the sums' start (ADD false), or after it, added
/// (ADD true; see mainLoop for which). The slot bypasses L1 both ways. `sync` is a barrier
/// over the consumer threads.
template <int N, int THREADS, class Sync>
__device__ __forceinline__ void handOffPartial(const float (&acc)[N][4], float *slot, int *flag,
                                               int ctid, Sync &&sync) {
  float4 *p = reinterpret_cast<float4 *>(slot) + ctid;
#pragma unroll
  for (int i = 0; i < N; ++i)
    __stcg(p + i * THREADS, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]));
  // Every thread's stores are ordered before the flag (the threadfence pattern: fence, block
  // barrier, one release).
  __threadfence();
  sync();
  if (ctid == 0)
    asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(flag), "r"(1) : "memory");
}

template <bool ADD, int N, int THREADS, class Sync>
__device__ __forceinline__ void takePartial(float (&acc)[N][4], const float *slot, int *flag,
                                            int ctid, Sync &&sync) {
  if (ctid == 0) {
    int up = 0;
    do
      asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(up) : "l"(flag) : "memory");
    while (!up);
    // Down again for the next launch (the planner also zero-fills the workspace before it).
    *flag = 0;
  }
  sync();
  const float4 *p = reinterpret_cast<const float4 *>(slot) + ctid;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const float4 v = __ldcg(p + i * THREADS);
    acc[i][0] = ADD ? acc[i][0] + v.x : v.x;
    acc[i][1] = ADD ? acc[i][1] + v.y : v.y;
    acc[i][2] = ADD ? acc[i][2] + v.z : v.z;
    acc[i][3] = ADD ? acc[i][3] + v.w : v.w;
  }
}

/// The main loop over the work `sched` gives this block (OneTile, PersistentSchedule): for
/// each piece, k tiles w.k0 .. w.k1 - 1 of tile w.tile. Without TMA, `load(tile, kt, aTile,
/// bTile, ptid)` is called by each producer thread (ptid 0..127) and issues that thread's
/// cp.async copies of k tile kt of the tile into the swizzled tiles. With TMA, `load(tile, kt,
/// aTile, bTile, bar)` is called by producer thread 0 alone and issues the tile's tensor copies
/// (A: BM x 32, B: BN x 32 floats, in the 128-byte swizzle) completing on barrier `bar`, whose
/// expected bytes are set here. The producer walks the pieces without a break, so that the
/// next piece's stages fill while the consumers finish the last; with each stage it leaves a
/// work word (the tile and the piece's Part) for the consumers, who follow the k tiles by
/// count. Consumer threads start each piece's sums at zero and call `finish(tile, part,
/// range, ctid)` with the sums in acc (see the header), `range` the block's tail range
/// (PersistentSchedule) and ctid their index among the consumer threads, after which acc is
/// theirs to change; producer threads return when their copies are issued. In 3xTF32 a
/// Head's sums start from `start(range, ctid)` instead (which fills acc with the other
/// block's part of the tile); in TF32, where acc is the wgmmas' accumulator and loads into it
/// made ptxas serialise them (C7515), they start at zero and finish must add that part.
template <int BM, int BN, int KTILES, int STAGES, int MATH, bool TMA, int CLUSTER, class Schedule,
          class Load, class Start, class Finish>
__device__ __forceinline__ void mainLoop(float (&acc)[BN / 8][4], float *base, int tid,
                                         Schedule sched, Load &&load, Start &&start,
                                         Finish &&finish) {
  using L = Layout<BM, BN, STAGES, MATH>;
  static_assert(BM % 64 == 0 && BM <= 128, "one or two consumer warpgroups of 64 rows");
  static_assert(BN == 64 || BN == 128 || BN == 256, "wgmma widths instantiated above");
  static_assert(STAGES >= 2, "a ring needs two stages");
  constexpr int kConsumers = BM / 64 * 128;
  constexpr bool kX3 = MATH == mma::kMathTf32x3;
  static_assert(CLUSTER == 1 || (CLUSTER == 2 && TMA && !kX3 && !Schedule::kPieces),
                "clusters: TF32 copied by TMA, one tile a block");
  // A stage's empty barrier: every consumer thread arrives once its wgmmas have read the
  // stage; in a cluster, every consumer warp of each block (one lane a block), since the
  // stage's multicast copies write every block's stage.
  constexpr int kEmptyArrivals = CLUSTER > 1 ? CLUSTER * kConsumers / 32 : kConsumers;
  // TF32 with TMA: the copies complete the full barrier themselves (one arrival, with the
  // bytes expected); otherwise every producer thread arrives once its stage is ready.
  constexpr int kFullArrivals = TMA && !kX3 ? 1 : kProducerThreads;
  constexpr unsigned kTileBytes = (BM + BN) * 32 * 4;
  const unsigned smem0 = mma::smemAddr(base);
  const unsigned fullBar = smem0 + L::kBarriers, emptyBar = fullBar + STAGES * 8,
                 landedBar = emptyBar + STAGES * 8;
  int2 *words = reinterpret_cast<int2 *>(reinterpret_cast<char *>(base) + L::kWords);
  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      mbarInit(fullBar + s * 8, kFullArrivals);
      mbarInit(emptyBar + s * 8, kEmptyArrivals);
      mbarInit(landedBar + s * 8, 1);
    }
    // The barriers' initialisation is visible to the TMA unit's completions (and the other
    // blocks of the cluster).
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if constexpr (CLUSTER > 1) {
    // No block copies into another's stages or arrives on its barriers before they exist.
    clusterArrive();
    clusterWait();
  } else {
    __syncthreads();
  }
  // Releases stage s to the producers: this block's alone, or in a cluster every block's
  // (lane r of each consumer warp arrives at rank r; wgmma.wait_group is warp-synchronous,
  // so the whole warp's reads are done).
  auto release = [&](int s) {
    if constexpr (CLUSTER > 1) {
      const unsigned lane = tid & 31;
      mbarArriveClusterIf(emptyBar + s * 8, lane, lane < CLUSTER);
    } else {
      mbarArrive(emptyBar + s * 8);
    }
  };

  // Stages are used in turn over all the block's k tiles: the it-th k tile (counted over
  // every piece) goes to stage it % STAGES in that stage's use it / STAGES, whose parity the
  // barrier waits name.
  //
  // Two consumer warpgroups (384 threads, launched with 168 registers a thread) take the
  // producer's spare registers: producer 40, consumers 232, the block's 64512 in all. Within
  // 168 the 3xTF32 consumers (64 accumulators, 64 per-k-tile sums, 32 A parts) spilled once
  // they also looped over pieces, so 3xTF32 and every PersistentSchedule (the piece loop)
  // shift. A TF32 block per tile (OneTile) fits 168 without the shift (154) and ran faster
  // so: 8192^3 on an H100, 9 alternating rounds, median 348.9 against 336.6 TFLOP/s, faster
  // in 7 of the 9 (the rounds swing 294-366 with the card's clock).
  constexpr bool kShiftRegisters = kConsumers == 256 && (kX3 || Schedule::kPieces);
  if (tid < kProducerThreads) {
    if constexpr (kShiftRegisters)
      setMaxRegisters<kLoopProducerRegs, false>();
    // k tile it's work word, written by producer thread 0 once its stage is free, before the
    // arrival that publishes the stage (which releases it to the consumers). The words of a
    // stage's uses alternate between two places, so that the word of a piece's last k tile
    // stays until the piece is finished: the place is written again two uses later, after
    // the consumers released the next use, which belongs to a later piece.
    // The word: the tile, and the Part with the block's tail range + 1 (0: none) above it.
    auto word = [&](int it, const Work &w) {
      const Part part = w.k0 > 0 ? Part::Tail : w.k1 < KTILES ? Part::Head : Part::Whole;
      words[(it / STAGES & 1) * STAGES + it % STAGES] =
          make_int2(w.tile, int(part) | (sched.range + 1) << 2);
    };
    if constexpr (TMA && !kX3) {
      if (tid == 0) {
        int it = 0;
        for (Work w; sched.next(w);)
          for (int kt = w.k0; kt < w.k1; ++kt, ++it) {
            const int s = it % STAGES;
            if (it >= STAGES)
              mbarWait(emptyBar + s * 8, (it / STAGES - 1) & 1);
            float *stage = base + s * L::kStage;
            word(it, w);
            mbarArriveExpectTx(fullBar + s * 8, kTileBytes);
            load(w.tile, kt, stage, stage + BM * 32, fullBar + s * 8);
          }
      }
      if constexpr (CLUSTER > 1) {
        // No block leaves while another may still arrive on its barriers.
        clusterArrive();
        clusterWait();
      }
      return;
    }
    // Ready stage it % STAGES for the tensor cores: every producer's copies (TMA: the
    // tile's tensor copies) have landed; for 3xTF32 write the small parts.
    auto publish = [&](int it) {
      const int s = it % STAGES;
      if constexpr (TMA)
        mbarWait(landedBar + s * 8, (it / STAGES) & 1);
      if constexpr (kX3) {
        if constexpr (!TMA)
          namedBarrier(1, kProducerThreads);
        const float4 *raw = reinterpret_cast<const float4 *>(base + s * L::kStage + BM * 32);
        float4 *small = reinterpret_cast<float4 *>(base + s * L::kStage + L::kRaw);
        // All loads first: the pass is latency-bound, and it bounded the whole engine
        // (ncu: the producer busy for the whole kernel, half of it here, with the consumers
        // waiting on `full`).
        constexpr int kPer = BN * 32 / 4 / kProducerThreads;
        float4 v[kPer];
#pragma unroll
        for (int j = 0; j < kPer; ++j)
          v[j] = raw[tid + j * kProducerThreads];
#pragma unroll
        for (int j = 0; j < kPer; ++j)
          small[tid + j * kProducerThreads] = make_float4(smallPart(v[j].x), smallPart(v[j].y),
                                                          smallPart(v[j].z), smallPart(v[j].w));
      }
      fenceProxyAsync();
      mbarArrive(fullBar + s * 8);
    };
    // k tile it - 1 is published after k tile it's copies are issued, so that they overlap.
    // Waiting for stage it's release needs k tile it - STAGES + 1 published: with two stages
    // that is k tile it - 1 itself, which is then published first.
    int it = 0;
    for (Work w; sched.next(w);)
      for (int kt = w.k0; kt < w.k1; ++kt, ++it) {
        const int s = it % STAGES;
        if (it >= STAGES) {
          if constexpr (STAGES == 2) {
            if constexpr (!TMA)
              mma::cpAsyncWait<0>();
            publish(it - 1);
          }
          mbarWait(emptyBar + s * 8, (it / STAGES - 1) & 1);
        }
        float *stage = base + s * L::kStage;
        if (tid == 0)
          word(it, w);
        if constexpr (TMA) {
          if (tid == 0) {
            mbarArriveExpectTx(landedBar + s * 8, kTileBytes);
            load(w.tile, kt, stage, stage + BM * 32, landedBar + s * 8);
          }
        } else {
          load(w.tile, kt, stage, stage + BM * 32, tid);
          mma::cpAsyncCommit();
        }
        if (it > 0 && (STAGES > 2 || it < STAGES)) {
          if constexpr (!TMA)
            mma::cpAsyncWait<1>();
          publish(it - 1);
        }
      }
    if (it > 0) {
      if constexpr (!TMA)
        mma::cpAsyncWait<0>();
      publish(it - 1);
    }
    return;
  }

  if constexpr (kShiftRegisters)
    setMaxRegisters<kLoopConsumerRegs, true>();
  const int wg = tid / 128 - 1;
  const int kTotal = sched.kTiles();
  // Pieces in the loop's structure, the piece's k tiles in an inner loop and its finish after
  // it: with the finish under a branch inside one loop over all k tiles, ptxas serialised
  // the wgmmas (C7520, "compiler-inserted WG.AR in divergent path").
  for (int it = 0; it < kTotal;) {
    const int itEnd = sched.pieceEnd(it);
    if (kX3 && sched.headAt(it)) {
      start(sched.range, tid - kProducerThreads);
    } else {
#pragma unroll
      for (int i = 0; i < BN / 8; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          acc[i][r] = 0.f;
    }
    for (const int itFirst = it; it < itEnd; ++it) {
      const int s = it % STAGES;
      mbarWait(fullBar + s * 8, (it / STAGES) & 1);
      const unsigned a = smem0 + (s * L::kStage + wg * 64 * 32) * 4;
      const unsigned b = smem0 + (s * L::kStage + BM * 32) * 4;
      if constexpr (kX3) {
        // A's parts are formed in registers from the stage (the producer forms only B's
        // small parts): thread (w, g, t) reads its fragment rows 16 w + g (+8), k = 8 kk + t
        // (+4). All three products take A from registers, so the tensor cores read only B
        // from shared memory (A through descriptors cost a quarter of the shared-memory
        // bandwidth).
        const float *aTile = base + s * L::kStage + wg * 64 * 32;
        const int lane = tid & 31, row = (tid / 32 % 4) * 16 + lane / 4, t = lane % 4;
        unsigned aBig[4][4], aSmall[4][4];
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const int k = kk * 8 + t;
          const float v[4] = {aTile[swizzled(row, k)], aTile[swizzled(row + 8, k)],
                              aTile[swizzled(row, k + 4)], aTile[swizzled(row + 8, k + 4)]};
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            aBig[kk][i] = __float_as_uint(v[i]) & 0xffffe000u;
            aSmall[kk][i] = __float_as_uint(smallPart(v[i]));
          }
        }
        // The tensor cores' fp32 accumulation drifts over a long K (rel. error 6e-5 at K
        // 8192 in one chain): each k tile is summed from zero, its 12 products into `part`,
        // and added to acc with ordinary rounding. The other consumer warpgroup keeps the
        // tensor cores busy while this one waits and adds.
        const unsigned bSmall = smem0 + (s * L::kStage + L::kRaw) * 4;
        float part[BN / 8][4];
        // Two consumer warpgroups take turns at issuing a k tile's products (barrier 3: the
        // first has issued k tile it, the second may; barrier 4: the second has, the first
        // may issue it + 1), so that the tensor cores run one warpgroup's products while the
        // other waits for its own, adds them and forms its next A parts; issued together,
        // both finished together and left the tensor cores idle during that work. The turns
        // run on across pieces.
        if constexpr (kConsumers == 256) {
          namedBarrierIf<3, kConsumers, false>(wg == 1);
          namedBarrierIf<4, kConsumers, false>(wg == 0 && it > 0);
        }
        wgmmaFence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          wgmmaTf32(part, aSmall[kk], descriptor(b + kk * 32), kk > 0);
          wgmmaTf32(part, aBig[kk], descriptor(bSmall + kk * 32), 1);
          wgmmaTf32(part, aBig[kk], descriptor(b + kk * 32), 1);
        }
        wgmmaCommit();
        if constexpr (kConsumers == 256) {
          namedBarrierIf<3, kConsumers, true>(wg == 0);
          namedBarrierIf<4, kConsumers, true>(wg == 1 && it + 1 < kTotal);
        }
        wgmmaWait<0>();
        mbarArrive(emptyBar + s * 8);
#pragma unroll
        for (int i = 0; i < BN / 8; ++i)
#pragma unroll
          for (int r = 0; r < 4; ++r)
            acc[i][r] += part[i][r];
      } else {
        wgmmaFence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
          wgmmaTf32(acc, descriptor(a + kk * 32), descriptor(b + kk * 32), 1);
        wgmmaCommit();
        wgmmaWait<1>();
        // The stage before: its wgmmas have completed.
        if (it > itFirst)
          release((it - 1) % STAGES);
      }
    }
    if constexpr (!kX3) {
      // The piece's last stage: its wgmmas are the ones still in flight.
      wgmmaWait<0>();
      release((it - 1) % STAGES);
      // The block's last arrival on another block's barrier (one piece: static_assert above).
      if constexpr (CLUSTER > 1)
        clusterArrive();
    }
    const int2 word = words[((it - 1) / STAGES & 1) * STAGES + (it - 1) % STAGES];
    finish(word.x, Part(word.y & 3), (word.y >> 2) - 1, tid - kProducerThreads);
  }
  if constexpr (CLUSTER > 1)
    clusterWait();
}

} // namespace sm90
} // namespace sinter
