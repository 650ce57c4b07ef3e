//===- templates/mma.cuh - tensor-core and async-copy primitives in inline PTX -----===//
//
// The handful of PTX instructions the tensor-core templates (gemm.cuh, conv_igemm.cuh) are
// built from: the m16n8k8 TF32 mma.sync, the round-to-nearest TF32 conversion, the 3xTF32
// split that makes TF32 products fp32-accurate, and cp.async (4- and 16-byte, with zero
// fill) with its commit/wait groups. Inline PTX rather than libcu++ keeps NVRTC fast and
// needs no include path; everything here runs on sm_80 and later.
//
//===--------------------------------------------------------------------------------===//
#pragma once

namespace sinter {
namespace mma {

/// Round an fp32 value to TF32 (nearest, ties away from zero), returned as fp32 bits. Two
/// integer operations: cvt.rna.tf32.f32 issues on the slow conversion pipe, and these run
/// once per fragment element per warp, in the inner loop. Infinities stay infinite; NaN
/// payloads may change, NaN stays NaN.
__device__ __forceinline__ unsigned toTf32(float x) {
  return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
}

/// TF32 operand for the tensor core without the masking op: adding half a TF32 ulp rounds to
/// nearest (ties away) in the bits the tensor core reads; it ignores the 13 low bits, which
/// keep garbage here. Only for values fed straight to mmaTf32, never for arithmetic.
__device__ __forceinline__ unsigned toTf32Operand(float x) { return __float_as_uint(x) + 0x1000u; }

/// 3xTF32 split: big = tf32(x), small = x - big, exact in fp32 and below half a TF32 ulp of
/// x. The tensor core reads only the top 19 bits of `small`; what it drops is under 2^-22
/// of x, so small needs no rounding of its own.
__device__ __forceinline__ void splitTf32(float x, unsigned &big, unsigned &small) {
  big = toTf32(x);
  small = __float_as_uint(x - __uint_as_float(big));
}

/// d += a * b for one m16n8k8 tile; a, b hold TF32 bit patterns, c/d fp32.
/// Fragment layout (g = lane / 4, t = lane % 4): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4),
/// a3 (g + 8, t + 4); b0 (k = t, n = g), b1 (k = t + 4, n = g); d0 (g, 2t), d1 (g, 2t + 1),
/// d2 (g + 8, 2t), d3 (g + 8, 2t + 1).
__device__ __forceinline__ void mmaTf32(float (&d)[4], const unsigned (&a)[4],
                                        const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// Shared-memory address of a generic pointer, as cp.async wants it.
__device__ __forceinline__ unsigned smemAddr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Copy 4 bytes global -> shared asynchronously; when !valid the destination is zero-filled
/// and the source is not read (it must still be a mapped address: pass the tensor base).
__device__ __forceinline__ void cpAsync4(void *smem, const void *gmem, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smemAddr(smem)), "l"(gmem),
               "r"(valid ? 4 : 0));
}

/// Copy 8 bytes global -> shared asynchronously (both 8-byte aligned); zero-fill as cpAsync4.
__device__ __forceinline__ void cpAsync8(void *smem, const void *gmem, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smemAddr(smem)), "l"(gmem),
               "r"(valid ? 8 : 0));
}

/// Copy 16 bytes global -> shared asynchronously (both 16-byte aligned), bypassing L1.
__device__ __forceinline__ void cpAsync16(void *smem, const void *gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smemAddr(smem)), "l"(gmem));
}

/// cpAsync16 of which only `bytes` (< 16) are read and the rest zero-filled, to shared
/// address `smem` (smemAddr's form) or to a shared pointer.
__device__ __forceinline__ void cpAsync16(unsigned smem, const void *gmem, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem),
               "r"(bytes));
}
__device__ __forceinline__ void cpAsync16(void *smem, const void *gmem, int bytes) {
  cpAsync16(smemAddr(smem), gmem, bytes);
}

/// An L2 eviction policy for the cache-hinted stores below: evict_last keeps the
/// lines ahead of normal and evict_first ones, evict_first lets them go first.
__device__ __forceinline__ unsigned long long l2Policy(bool evictLast) {
  unsigned long long p;
  if (evictLast)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  else
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

/// Global stores under L2 policy `pol`.
__device__ __forceinline__ void storeL2(float *p, float v, unsigned long long pol) {
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(p), "f"(v), "l"(pol) : "memory");
}
__device__ __forceinline__ void storeL2(float *p, float2 v, unsigned long long pol) {
  asm volatile("st.global.L2::cache_hint.v2.f32 [%0], {%1, %2}, %3;" ::"l"(p), "f"(v.x), "f"(v.y),
               "l"(pol)
               : "memory");
}

/// ldmatrix of four 8x8 b16 matrices, read as 8 rows of four 32-bit words each: lane l
/// passes the address of row l % 8 of matrix l / 8 (16-byte aligned) and gets in r[j] word
/// (lane % 4) of row (lane / 4) of matrix j, which is the m16n8k8 TF32 fragment layout.
__device__ __forceinline__ void ldmatrixX4(unsigned (&r)[4], const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smemAddr(row)));
}

/// Two-matrix ldmatrix (lanes 0-15 pass the row addresses).
__device__ __forceinline__ void ldmatrixX2(unsigned (&r)[2], const void *row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smemAddr(row)));
}

__device__ __forceinline__ void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }

/// Wait until at most N committed groups are still in flight.
template <int N> __device__ __forceinline__ void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// Arrives on the mbarrier at shared address `bar` once this thread's cp.async copies so far
/// have landed, without waiting for them (.noinc: the barrier's count includes the arrival).
__device__ __forceinline__ void cpAsyncArriveNoinc(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/// How a tile product is computed (values of cfg::kMath): one TF32 product, or 3xTF32.
constexpr int kMathTf32 = 1;
constexpr int kMathTf32x3 = 2;

/// One warp's share of a block-tile step: acc[MI][NI] (m16n8 tiles) += A(16MI x 8) * B(8 x 8NI)
/// for every k8 slice of a BK-deep shared-memory stage. The stage's layouts are given by
/// strides so that one routine serves [m][k] and [k][m] tiles alike: element (m, k) of A is
/// As[m * AM + k * AK], element (n, k) of B is Bs[n * BN_ + k * BK_]. The strides are chosen
/// by the templates so that the 32 lanes of each fragment load hit 32 different banks.
/// B fragments of a k8 slice are loaded (and split) once, A fragments one m16 row at a time,
/// which keeps few fragment registers live next to the accumulators.
template <int MI, int NI, int BKD, int AM, int AK, int BN_, int BK_, int MATH>
__device__ __forceinline__ void warpTileStep(float (&acc)[MI][NI][4], const float *As,
                                             const float *Bs, int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int kk = 0; kk < BKD; kk += 8) {
    unsigned bb[NI][2], bs[NI][2];
#pragma unroll
    for (int ni = 0; ni < NI; ++ni) {
      const float *p = Bs + (ni * 8 + g) * BN_ + (kk + t) * BK_;
      const float b0 = p[0], b1 = p[4 * BK_];
      if constexpr (MATH == kMathTf32x3) {
        splitTf32(b0, bb[ni][0], bs[ni][0]);
        splitTf32(b1, bb[ni][1], bs[ni][1]);
      } else {
        bb[ni][0] = toTf32(b0);
        bb[ni][1] = toTf32(b1);
      }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi) {
      const float *p = As + (mi * 16 + g) * AM + (kk + t) * AK;
      const float a[4] = {p[0], p[8 * AM], p[4 * AK], p[8 * AM + 4 * AK]};
      unsigned ab[4], as[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        if constexpr (MATH == kMathTf32x3)
          splitTf32(a[r], ab[r], as[r]);
        else
          ab[r] = toTf32(a[r]);
      }
#pragma unroll
      for (int ni = 0; ni < NI; ++ni) {
        if constexpr (MATH == kMathTf32x3) {
          // Small terms first so that they are not lost against the big product.
          mmaTf32(acc[mi][ni], as, bb[ni]);
          mmaTf32(acc[mi][ni], ab, bs[ni]);
        }
        mmaTf32(acc[mi][ni], ab, bb[ni]);
      }
    }
  }
}

/// The mma.sync engines' main loop over KTILES k tiles (gemm.cuh and conv_igemm.cuh, engine
/// 0): a ring of STAGES shared-memory stages that every thread copies into with cp.async, one
/// commit group per k tile. k tile kt waits for its stage (this thread's groups but the newest
/// STAGES - 2 done, then a block barrier: every thread's copies landed and the stage of kt - 1
/// read), then the copies of k tile kt + STAGES - 1 go into that freed stage in PARTS parts,
/// part q issued right before part q of kt's products: `load(k tile, stage, q)` issues this
/// thread's copies, `step(sums, stage, q)` adds its share of the products. Interleaved, the
/// loaders' address arithmetic and the mma instructions overlap (conv_igemm: with two warps a
/// scheduler a burst of copies before the products left the tensor pipe idle). acc starts at
/// zero; with TWO_LEVEL (3xTF32) every k tile is summed from zero and then added to acc with
/// ordinary rounding, so that the tensor cores' fp32 accumulation does not drift over a long
/// K. Returns with every copy landed (no barrier).
template <int STAGES, int KTILES, int PARTS, bool TWO_LEVEL, int MI, int NI, class Load, class Step>
__device__ __forceinline__ void cpAsyncMainLoop(float (&acc)[MI][NI][4], Load &&load, Step &&step) {
  static_assert(STAGES >= 2 && PARTS >= 1, "a ring of two stages or more, one part or more");
  auto zero = [](float(&v)[MI][NI][4]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
      for (int j = 0; j < NI; ++j)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          v[i][j][r] = 0.f;
  };
  zero(acc);
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < KTILES) {
#pragma unroll
      for (int q = 0; q < PARTS; ++q)
        load(s, s, q);
    }
    cpAsyncCommit();
  }
  for (int kt = 0; kt < KTILES; ++kt) {
    cpAsyncWait<STAGES - 2>();
    __syncthreads();
    const int next = kt + STAGES - 1;
    const bool more = next < KTILES;
    const int ns = next % STAGES, st = kt % STAGES;
    auto parts = [&](float(&sums)[MI][NI][4]) {
#pragma unroll
      for (int q = 0; q < PARTS; ++q) {
        if (more)
          load(next, ns, q);
        step(sums, st, q);
      }
    };
    if constexpr (TWO_LEVEL) {
      float part[MI][NI][4];
      zero(part);
      parts(part);
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
          for (int r = 0; r < 4; ++r)
            acc[i][j][r] += part[i][j][r];
    } else {
      parts(acc);
    }
    cpAsyncCommit();
  }
  cpAsyncWait<0>();
}

} // namespace mma
} // namespace sinter
