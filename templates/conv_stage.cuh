//===- templates/conv_stage.cuh - a convolution's input, channels last on a padded grid ===//
//
// conv_shift.cuh multiplies a convolution as one GEMM per tap whose operand rows are a
// shifted window of the input. That needs the input channels last (a row of the operand is
// one position's channels, which is what TF32 wgmma reads: K-major) and every tap's window to
// be one run of consecutive rows. This kernel writes, once per run, x [N, C, D, H, W] as
// xs [N][kPitchD][kPitchH][kPitchW][kRowPitch]: position (d, h, w) of the input at
// (d, h, w) of a grid whose extents (the pitches) leave zeros after the data in every dim,
// channels C .. kRowPitch - 1 zero. conv_shift.cuh's header says why those zeros make every
// tap's window exact. Values are rounded to TF32 (nearest, ties away), which the tensor
// cores would otherwise truncate.
//
// One block per 64 positions of a grid row (n, d, h): 32 x 32 tiles of (channel, w) read
// along w and written along the channel through shared memory; rows outside the input are
// written as zeros.
//
// Slots: 0 x, kOutSlot xs. Expects in namespace cfg: kN, kC, kRowPitch (a multiple of 4),
// kInD/H/W, kPitchD/H/W (at least the input's extents), kOutSlot, kRound.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "mma.cuh"

namespace conv_stage {

using sinter::i64;

constexpr int kThreads = 256;
// Positions of a grid row per block: long rows (1-D convolutions) are split so that the
// grid has enough blocks.
constexpr int kSpanW = 64;
constexpr int kWBlocks = (cfg::kPitchW + kSpanW - 1) / kSpanW;
static_assert(cfg::kRowPitch % 4 == 0 && cfg::kRowPitch >= cfg::kC, "rows of whole 16 bytes");
static_assert((i64)cfg::kN * cfg::kPitchD * cfg::kPitchH * kWBlocks < (1ll << 31),
              "a block per piece of a grid row");
static_assert(cfg::kPitchD >= cfg::kInD && cfg::kPitchH >= cfg::kInH && cfg::kPitchW >= cfg::kInW,
              "the grid holds the input");

__device__ __forceinline__ float staged(float v) {
  if constexpr (cfg::kRound)
    return __uint_as_float(sinter::mma::toTf32Operand(v) & 0xffffe000u);
  return v;
}

} // namespace conv_stage

extern "C" __global__ void __launch_bounds__(conv_stage::kThreads)
    SINTER_KERNEL(const sinter::Buffers b) {
  using namespace conv_stage;
  __shared__ float tile[32][33];
  // Block: grid row (n * kPitchD + d) * kPitchH + h, positions w0 .. w0 + kSpanW - 1 of it.
  const int row = blockIdx.x / kWBlocks, w0 = blockIdx.x % kWBlocks * kSpanW;
  const int wEnd = w0 + kSpanW < cfg::kPitchW ? w0 + kSpanW : cfg::kPitchW;
  const int h = row % cfg::kPitchH, d = (row / cfg::kPitchH) % cfg::kPitchD;
  const int n = row / (cfg::kPitchH * cfg::kPitchD);
  float *out =
      sinter::slot<float>(b, cfg::kOutSlot) + ((i64)row * cfg::kPitchW + w0) * cfg::kRowPitch;
  const int tid = threadIdx.x;
  if (d >= cfg::kInD || h >= cfg::kInH) {
    float4 *o4 = reinterpret_cast<float4 *>(out);
    for (int i = tid; i < (wEnd - w0) * cfg::kRowPitch / 4; i += kThreads)
      o4[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    return;
  }
  const float *x = sinter::slot<const float>(b, 0) +
                   (((i64)n * cfg::kC * cfg::kInD + d) * cfg::kInH + h) * cfg::kInW;
  constexpr i64 kCStride = (i64)cfg::kInD * cfg::kInH * cfg::kInW;
  const int tx = tid & 31, ty = tid >> 5;
  for (int wc = w0; wc < wEnd; wc += 32)
    for (int c0 = 0; c0 < cfg::kRowPitch; c0 += 32) {
      // Read along w: rows of 32 channels' w runs (zeros past the input).
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int c = c0 + ty + 8 * j, w = wc + tx;
        tile[ty + 8 * j][tx] = c < cfg::kC && w < cfg::kInW ? staged(x[c * kCStride + w]) : 0.f;
      }
      __syncthreads();
      // Write along the channel: each position's run of 32 channels.
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int w = wc + ty + 8 * j, c = c0 + tx;
        if (w < wEnd && c < cfg::kRowPitch)
          out[(i64)(w - w0) * cfg::kRowPitch + c] = tile[tx][ty + 8 * j];
      }
      __syncthreads();
    }
}
