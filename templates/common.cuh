//===- templates/common.cuh - the kernel ABI and small device helpers --------------===//
//
// Every sinter kernel takes a `sinter::Buffers` argument passed by value, an array of device
// pointers whose slots each template documents (inputs, weights, outputs, workspace). The
// runtime fills the slots from the launch list; the generated prologue names the kernel
// through SINTER_KERNEL and sets the template's constants. Kernels that copy through TMA
// take a second argument, `const __grid_constant__ sinter::TensorMaps`, which the runtime
// encodes at each launch from the launch's tensor-map list (kernel-abi.md).
//
// This header, like every template, includes no system or libcu++ headers so that NVRTC
// compiles it fast and without an include path.
//
//===--------------------------------------------------------------------------------===//
#pragma once

namespace sinter {

constexpr int kMaxBuffers = 16;

/// The one kernel argument: device pointers by slot.
struct Buffers {
  void *p[kMaxBuffers];
};

/// The optional second kernel argument: up to four TMA tensor maps (CUtensorMap, opaque
/// 128-byte objects encoded by the driver), in the order of the launch's list.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};
struct TensorMaps {
  TensorMap m[4];
};

template <class T> __device__ __forceinline__ T *slot(const Buffers &b, int i) {
  return static_cast<T *>(b.p[i]);
}

using i64 = long long;

/// Sum over a warp (all lanes get the result).
__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ double warpSum(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warpMin(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fminf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Atomic min/max on floats through the integer order of their bit patterns (no NaN input).
__device__ __forceinline__ void atomicMinFloat(float *addr, float v) {
  if (v >= 0.f)
    atomicMin(reinterpret_cast<int *>(addr), __float_as_int(v));
  else
    atomicMax(reinterpret_cast<unsigned *>(addr), __float_as_uint(v));
}

__device__ __forceinline__ void atomicMaxFloat(float *addr, float v) {
  if (v >= 0.f)
    atomicMax(reinterpret_cast<int *>(addr), __float_as_int(v));
  else
    atomicMin(reinterpret_cast<unsigned *>(addr), __float_as_uint(v));
}

/// A when Cond, else B: std::conditional, which NVRTC's headers do not offer. The templates
/// pick the narrowest integer type an extent allows with it.
template <bool Cond, class A, class B> struct Select { using Type = A; };
template <class A, class B> struct Select<false, A, B> { using Type = B; };

/// The same value, through an empty asm the compiler cannot see into: a loop-invariant value
/// passed through it stays in a register instead of being recomputed inside the loop (ptxas
/// rematerializes cheap index arithmetic under register pressure).
__device__ __forceinline__ unsigned opaque(unsigned v) {
  asm volatile("" : "+r"(v));
  return v;
}
__device__ __forceinline__ int opaque(int v) {
  asm volatile("" : "+r"(v));
  return v;
}
__device__ __forceinline__ unsigned long long opaque(unsigned long long v) {
  asm volatile("" : "+l"(v));
  return v;
}
__device__ __forceinline__ long long opaque(long long v) {
  asm volatile("" : "+l"(v));
  return v;
}

/// One 8-byte store of (a, b) at p (8-byte aligned). A float2 store through a cast pointer
/// can reach the PTX as two 4-byte stores (seen in conv_shift.cuh's epilogue); this cannot.
/// No memory clobber: it is meant for results the kernel does not read back.
__device__ __forceinline__ void storePair(float *p, float a, float b) {
  asm volatile("st.global.v2.f32 [%0], {%1, %2};\n" ::"l"(p), "f"(a), "f"(b));
}

// NVRTC knows no __builtin_huge_valf; a bit cast is constexpr in both NVRTC and nvcc.
constexpr float kInf = __builtin_bit_cast(float, 0x7f800000u);

/// The kinds of a reduction over a convolution's channels (a kernel's kCReduce constant; 0:
/// none). ChannelFold runs the first four; a logsumexp takes two passes (its kernel's).
enum : int { kFoldSum = 1, kFoldMean = 2, kFoldMax = 3, kFoldMin = 4, kFoldLogSumExp = 5 };

/// A running sum, mean (the sum over `count`) or extreme (NaN propagates, as torch.amax and
/// amin) over the channels of one position, held in registers.
template <int KIND> struct ChannelFold {
  static_assert(KIND >= kFoldSum && KIND <= kFoldMin, "a one-pass ChannelFold kind");
  float a = KIND == kFoldMax ? -kInf : (KIND == kFoldMin ? kInf : 0.f);

  __device__ __forceinline__ void add(float x) {
    if constexpr (KIND == kFoldSum || KIND == kFoldMean) {
      a += x;
    } else if constexpr (KIND == kFoldMax) {
      if (x > a || x != x)
        a = x;
    } else {
      if (x < a || x != x)
        a = x;
    }
  }

  /// Merges the states of the WIDTH consecutive lanes (a power of two) that share a result;
  /// every lane of the warp must call it.
  template <int WIDTH> __device__ __forceinline__ void mergeLanes() {
#pragma unroll
    for (int o = 1; o < WIDTH; o <<= 1)
      add(__shfl_xor_sync(0xffffffffu, a, o));
  }

  __device__ __forceinline__ float result(int count) const {
    return KIND == kFoldMean ? a / float(count) : a;
  }
};

/// What a logsumexp subtracts before its exponentials: the maximum m, or 0 where m is
/// infinite (all -inf: the sum is 0 and the result -inf; some +inf: the result +inf), as
/// torch.logsumexp does.
__device__ __forceinline__ float logSumExpShift(float m) { return fabsf(m) == kInf ? 0.f : m; }

/// 1 / y by rcp.approx (relative error about 1 ulp; 0 for y = inf), where the IEEE division
/// costs a Newton step and a slow-path branch: sigmoid and silu's denominator.
__device__ __forceinline__ float rcpApprox(float y) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
  return r;
}

/// 2^x by ex2.approx (relative error about 2 ulp; 0 below the normal floats).
__device__ __forceinline__ float ex2Approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

/// e^x as 2^(x log2 e) by ex2.approx: about 2 ulp, plus the product's rounding, a relative
/// error of at most |x| x 2^-24.
__device__ __forceinline__ float expApprox(float x) { return ex2Approx(x * 1.44269504088896341f); }

/// gelu's exact form, x * Phi(x), without erff. With a = |x| (at most 13.5: beyond,
/// Phi(-a) is below the floats), Phi(-a) = t * 2^(Q(t) - a^2 / (2 ln 2)) with
/// t = 1 / (1 + 0.2725 a) and Q the degree-8 polynomial below, whose fit is good to 6e-8 in
/// log2; Phi(x) = 1 - Phi(-a) for x >= 0. Coefficients, the fit and the fp32 error model:
/// tools/numerics/fit_gelu.py. Relative error in fp32 (rcp.approx and ex2.approx included):
/// 9e-7 for x >= -2, where 0.5 x (1 + erff(x / sqrt 2)) has 8e-7; 2e-6 down to x = -6, where
/// that form loses every digit to 1 + erff cancelling (it is 1.00 off at -6, 5e-4 at -4).
/// 18 instructions against about 30 for the erff form, whose two ranges select every
/// coefficient (S2's convolution epilogue is issue-bound on it).
__device__ __forceinline__ float geluErf(float x) {
  const float a = fminf(fabsf(x), 13.5f);
  const float t = rcpApprox(fmaf(0.2725f, a, 1.f));
  float q = -0.3440597653388977f;
  q = fmaf(q, t, 1.6401296854019165f);
  q = fmaf(q, t, -2.925260066986084f);
  q = fmaf(q, t, 2.3816442489624023f);
  q = fmaf(q, t, -1.2166870832443237f);
  q = fmaf(q, t, 0.6829286813735962f);
  q = fmaf(q, t, 0.5312337875366211f);
  q = fmaf(q, t, 1.4519288539886475f);
  q = fmaf(q, t, -3.2018585205078125f);
  // 2^(Q - a^2 / (2 ln 2)); 0 where that is below the normal floats
  const float e = ex2Approx(fmaf(a * a, -0.72134752044448170f, q));
  const float h = t * e; // Phi(-a)
  return x * (x >= 0.f ? 1.f - h : h);
}

/// mish(x) = x * tanh(softplus(x)) without log1pf and tanhf: with u = e^x,
/// tanh(log(1 + u)) = n / (n + 2) for n = u (u + 2), so one ex2 and one rcp (relative error
/// a few ulp, no cancellation on either side: for x << 0 the ratio is ~u, for x >> 0 it is
/// 1 - 2 / (n + 2)); x itself past 20, where the ratio is 1 in floats, as PyTorch's
/// threshold does. About 10 instructions against about 100 for the log1pf / tanhf form
/// (PTX of sm_90a), whose dependent chain held convolution epilogues back.
__device__ __forceinline__ float mish(float x) {
  const float u = expApprox(fminf(x, 20.f));
  const float n = u * (u + 2.f);
  return x > 20.f ? x : x * (n * rcpApprox(n + 2.f));
}

} // namespace sinter
