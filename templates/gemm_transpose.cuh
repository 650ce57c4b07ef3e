//===- templates/gemm_transpose.cuh - a matmul's B turned K-major for the wgmma engine ---===//
//
// The wgmma engine reads 32-bit operands K-major only: A as [M][K] and B as [N][K]. A
// matmul's B is [batch..., K, N], so before such a product runs on the engine this kernel
// writes each of its kMatrices distinct [kRows][kCols] matrices (K x N) of slot 0 as
// [kCols][kRows] (N x K) into slot 1, at the same matrix offsets (so the product's batch
// strides hold for the copy). A block moves one 32 x 32 piece through a shared tile whose
// rows are 33 floats apart: a warp reads 32 consecutive floats of a source row and writes
// 32 consecutive floats of a destination row, both whole 128-byte lines, and the tile's
// column reads hit 32 banks.
//
// Launch: grid (pieces of a matrix, kMatrices), block (32, 8). Expects in namespace cfg:
// kRows, kCols, kMatrices.
//
//===--------------------------------------------------------------------------------===//

extern "C" __global__ void __launch_bounds__(256) SINTER_KERNEL(const sinter::Buffers b) {
  using sinter::i64;
  constexpr int kPiecesC = (cfg::kCols + 31) / 32;
  constexpr i64 kMatrix = (i64)cfg::kRows * cfg::kCols;
  static_assert(cfg::kMatrices >= 1 && cfg::kMatrices <= 65535, "one grid row per matrix");
  __shared__ float tile[32][33];
  const int piece = blockIdx.x;
  const int r0 = piece / kPiecesC * 32, c0 = piece % kPiecesC * 32;
  const float *__restrict__ src = sinter::slot<const float>(b, 0) + blockIdx.y * kMatrix;
  float *__restrict__ dst = sinter::slot<float>(b, 1) + blockIdx.y * kMatrix;
  const int tx = threadIdx.x, ty = threadIdx.y;
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const int r = r0 + ty + j, c = c0 + tx;
    if (r < cfg::kRows && c < cfg::kCols)
      tile[ty + j][tx] = __ldg(src + (i64)r * cfg::kCols + c);
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < 32; j += 8) {
    const int c = c0 + ty + j, r = r0 + tx;
    if (c < cfg::kCols && r < cfg::kRows)
      dst[(i64)c * cfg::kRows + r] = tile[tx][ty + j];
  }
}
