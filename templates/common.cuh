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

} // namespace sinter
