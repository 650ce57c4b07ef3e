//===- tests/kernels_tc/TcCases.h - the specs the tensor-core tests exercise -------===//
//
// One list of conv_igemm and gemm specs shared by the NVRTC compile tests and by the dump
// that feeds the GPU harness (bench/kernels/tc_check.py): the two seed kernels (S0's
// transposed conv with ReLU and statistics, S3's linear with the group-norm tail and row
// minimum) and small shapes whose M, N and K are not multiples of the tiles, with strides,
// dilation, groups, 1-D/2-D/3-D, batching and both B layouts, and strided transposed
// convolutions (one kernel per output phase). `epilogue` names the functor
// so that the harness can apply the same function to its reference.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/kernels/ConvShift.h"
#include "compiler/kernels/Specs.h"

#include <string>
#include <vector>

namespace sinter::tc_test {

/// Functor bodies the harness knows by name.
inline FunctorBody functor(const std::string &name) {
  FunctorBody f;
  if (name == "relu")
    f.code = "return v > 0.f ? v : 0.f;";
  else if (name == "affine")
    f.code = "return v * 0.5f + 0.25f;";
  return f;
}

struct ConvCase {
  ConvSpec spec;
  std::string epilogue = "identity";
  bool bench = false;
};

struct GemmCase {
  GemmSpec spec;
  std::string epilogue = "identity", postNorm = "identity";
  bool bench = false;
};

inline ConvSpec convSpec(std::string name, bool transposed, unsigned dims, int64_t n, int64_t cin,
                         int64_t cout, int64_t groups, std::array<int64_t, 3> in,
                         std::array<int64_t, 3> k, std::array<int64_t, 3> stride,
                         std::array<int64_t, 3> pad, std::array<int64_t, 3> dil, MathMode math) {
  ConvSpec s;
  s.kernelName = std::move(name);
  s.transposed = transposed;
  s.spatialDims = dims;
  s.N = n;
  s.Cin = cin;
  s.Cout = cout;
  s.groups = groups;
  s.in = in;
  s.kernel = k;
  s.stride = stride;
  s.padding = pad;
  s.dilation = dil;
  s.math = math;
  for (int d = 0; d < 3; ++d) {
    int64_t span = dil[d] * (k[d] - 1);
    s.out[d] = transposed ? (in[d] - 1) * stride[d] - 2 * pad[d] + span + 1
                          : (in[d] + 2 * pad[d] - span - 1) / stride[d] + 1;
  }
  return s;
}

/// The W-tap runs a forced conv_shift tile of `s` is tried with: 1, and with the weights
/// copied by TMA the taps that can share a stage (ShiftMode::wTaps) where there are several.
inline std::vector<int> shiftWRuns(const ConvSpec &s) {
  const ShiftMode mode = shiftMode(s);
  if (mode.registerA || mode.wTaps == 1)
    return {1};
  return {1, mode.wTaps};
}

inline std::vector<ConvCase> convCases() {
  std::vector<ConvCase> cs;
  {
    // S0: ConvTranspose3d(64 -> 128, k 3) -> ReLU, statistics for the group norm.
    ConvCase c{convSpec("s0_convt3d_relu_stats", true, 3, 16, 64, 128, 1, {32, 32, 32}, {3, 3, 3},
                        {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, MathMode::Tf32),
               "relu", true};
    c.spec.accumulateStats = true;
    c.spec.epilogue = functor("relu");
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("conv2d_s2_bias", false, 2, 3, 5, 7, 1, {1, 13, 11}, {1, 3, 3}, {1, 2, 2},
                        {0, 1, 1}, {1, 1, 1}, MathMode::Tf32x3),
               "affine"};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("affine");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("conv1d_g2_dil2", false, 1, 2, 6, 10, 2, {1, 1, 37}, {1, 1, 5}, {1, 1, 1},
                        {0, 0, 3}, {1, 1, 2}, MathMode::Tf32x3),
               "relu"};
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("convt2d_g2_pad1", true, 2, 2, 8, 6, 2, {1, 9, 10}, {1, 3, 3}, {1, 1, 1},
                        {0, 1, 1}, {1, 1, 1}, MathMode::Tf32x3)};
    c.spec.hasBias = true;
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("conv3d_odd_tf32", false, 3, 2, 3, 5, 1, {5, 6, 7}, {2, 3, 3}, {1, 2, 1},
                        {1, 0, 1}, {2, 1, 1}, MathMode::Tf32),
               "relu"};
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    // Wide channels at an odd spatial size: 128-wide tiles with partial M and K tiles.
    ConvCase c{convSpec("convt3d_wide_dil2", true, 3, 2, 40, 136, 1, {7, 9, 11}, {3, 3, 3},
                        {1, 1, 1}, {1, 2, 0}, {2, 1, 2}, MathMode::Tf32x3),
               "identity"};
    c.spec.hasBias = true;
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  // Strided transposed convolutions: one kernel per output phase. Odd and even phase
  // extents, output_padding, padding at or above half the kernel, groups (16 channels each:
  // the 16-wide tile), a stride that shares no factor with the dilation (negative phase
  // offsets), a dim with fewer outputs than the stride, and one stride-1 dim next to
  // strided ones.
  {
    // 3-D k 3, stride 2, padding 1, output_padding (1, 0, 1): phase extents 5/5, 5/4, 4/4.
    ConvCase c{convSpec("convt3d_s2_op_relu_stats", true, 3, 2, 40, 48, 1, {5, 5, 4}, {3, 3, 3},
                        {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, MathMode::Tf32x3),
               "relu"};
    c.spec.out[0] += 1;
    c.spec.out[2] += 1;
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    // 2-D k 4, stride 2, padding 1, groups 2 (32 channels each), bias, TF32.
    ConvCase c{convSpec("convt2d_k4_s2_g2_bias", true, 2, 3, 64, 64, 2, {1, 7, 9}, {1, 4, 4},
                        {1, 2, 2}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
               "affine"};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("affine");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    // 2-D stride (2, 1), groups 4 of 16 output channels, padding 2 >= k / 2, statistics
    // only (y not stored).
    ConvCase c{convSpec("convt2d_s21_g4_16ch_stats", true, 2, 2, 128, 64, 4, {1, 6, 7}, {1, 3, 3},
                        {1, 2, 1}, {0, 2, 2}, {1, 1, 1}, MathMode::Tf32x3)};
    c.spec.storeOutput = false;
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    // 1-D stride 3, dilation 2 (s' = 3, dj = 2), k 4, padding 1: negative phase offsets.
    ConvCase c{convSpec("convt1d_s3_dil2", true, 1, 2, 48, 40, 1, {1, 1, 11}, {1, 1, 4}, {1, 1, 3},
                        {0, 0, 1}, {1, 1, 2}, MathMode::Tf32x3)};
    c.spec.hasBias = true;
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    // 3-D with one input depth: output depth 1 < stride 2, so only depth phase 0 exists.
    ConvCase c{convSpec("convt3d_thin_depth", true, 3, 2, 32, 40, 1, {1, 4, 5}, {3, 3, 3},
                        {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
               "relu"};
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  // Shallow reductions at corpus sizes, timed against cuDNN with several tiles: a 3x3 conv of
  // 32 -> 64 channels (K = 288) and the output phases of a stride-2 transposed conv of
  // 64 -> 128 channels (K = 256 a phase).
  cs.push_back({convSpec("conv2d_32x64_k3_128px", false, 2, 128, 32, 64, 1, {1, 128, 128},
                         {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                "identity", true});
  cs.push_back({convSpec("convt2d_s2_64x128_k4_32px", true, 2, 128, 64, 128, 1, {1, 32, 32},
                         {1, 4, 4}, {1, 2, 2}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                "identity", true});
  // Wide stride-1 convolutions, timed on conv_shift (_sh), the input-box engine (_wg) and
  // mma.sync: a shallow reduction (320 terms, where conv_shift loses) and one of 1152.
  cs.push_back({convSpec("conv1d_64x128_k5_4096", false, 1, 128, 64, 128, 1, {1, 1, 4096},
                         {1, 1, 5}, {1, 1, 1}, {0, 0, 2}, {1, 1, 1}, MathMode::Tf32),
                "identity", true});
  {
    ConvCase c{convSpec("conv2d_128x128_k3_128px", false, 2, 16, 128, 128, 1, {1, 128, 128},
                        {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
               "relu", true};
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  // KernelBench level 2's most common convolutions, timed on the input-box engine: 64 -> 128
  // channels on 128 x 128 images (problem 1 and five others) and 64 -> 64 on 256 x 256
  // (problem 54), no padding, with a bias and ReLU.
  {
    ConvCase c{convSpec("conv2d_64x128_k3_kb1", false, 2, 32, 64, 128, 1, {1, 128, 128}, {1, 3, 3},
                        {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, MathMode::Tf32),
               "relu", true};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("relu");
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("conv2d_64x64_k3_kb54", false, 2, 16, 64, 64, 1, {1, 256, 256}, {1, 3, 3},
                        {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, MathMode::Tf32),
               "relu", true};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("relu");
    cs.push_back(c);
  }
  // Stride-1 convolutions for conv_shift.cuh (staged grid, per-tap GEMMs): a grid larger
  // than the output in every dim (padding and dilation), partial output-channel tiles, groups
  // of whole 32-channel k tiles with images smaller than a tile, input channels padded to
  // the k tile (not a multiple of 32), a transposed convolution with padding and dilation, a
  // dense grid (8-byte pair stores), 1-D, and a store without statistics.
  {
    ConvCase c{convSpec("shift_conv3d_pad_dil", false, 3, 2, 64, 96, 1, {6, 7, 9}, {3, 3, 3},
                        {1, 1, 1}, {1, 2, 0}, {1, 2, 1}, MathMode::Tf32),
               "relu"};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("shift_conv2d_g2_small", false, 2, 3, 64, 128, 2, {1, 10, 12}, {1, 3, 3},
                        {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
               "affine"};
    c.spec.epilogue = functor("affine");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("shift_convt2d_pad_dil", true, 2, 2, 48, 64, 1, {1, 9, 11}, {1, 3, 3},
                        {1, 1, 1}, {0, 1, 2}, {1, 1, 2}, MathMode::Tf32)};
    c.spec.hasBias = true;
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("shift_convt3d_dense", true, 3, 3, 32, 64, 1, {6, 8, 14}, {3, 3, 3},
                        {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, MathMode::Tf32),
               "relu"};
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("shift_conv1d_store", false, 1, 4, 32, 64, 1, {1, 1, 300}, {1, 1, 5},
                        {1, 1, 1}, {0, 0, 2}, {1, 1, 1}, MathMode::Tf32)};
    c.spec.hasBias = true;
    cs.push_back(c);
  }
  // conv_shift's output phases and small groups: S4 at full size (8 phases x 8 channels a
  // group, 4 groups a k tile), a 2-D stride-2 k4 one of 8-channel groups whose 16 rows a
  // group share a warpgroup, a 1-D stride-3 dilated one of 16-channel groups (192 rows a
  // group), phases without groups (partial 128-row tiles), mixed strides, and small groups
  // of a stride-1 direct conv.
  cs.push_back({convSpec("s4_convt3d_grouped", true, 3, 4, 32, 32, 4, {32, 64, 128}, {3, 3, 3},
                         {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
                "identity", true});
  {
    ConvCase c{convSpec("phase_convt2d_s2_g8", true, 2, 3, 64, 32, 8, {1, 11, 13}, {1, 4, 4},
                        {1, 2, 2}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
               "relu"};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("phase_convt1d_s3_dil2_g2", true, 1, 2, 32, 128, 2, {1, 1, 37},
                        {1, 1, 4}, {1, 1, 3}, {0, 0, 2}, {1, 1, 2}, MathMode::Tf32)};
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("phase_convt3d_s2_dense", true, 3, 2, 40, 24, 1, {5, 6, 9}, {3, 3, 3},
                        {2, 2, 2}, {1, 0, 1}, {1, 1, 1}, MathMode::Tf32),
               "affine"};
    c.spec.epilogue = functor("affine");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("phase_convt3d_mixed", true, 3, 2, 32, 32, 1, {4, 7, 6}, {2, 3, 3},
                        {1, 2, 3}, {0, 1, 2}, {1, 1, 1}, MathMode::Tf32)};
    c.spec.hasBias = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("groups8_conv2d", false, 2, 2, 32, 64, 4, {1, 14, 15}, {1, 3, 3},
                        {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32)};
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  // Narrow output groups on the input-box engine's 8-, 16- and 32-wide tiles: 8 channels
  // from a deep reduction with a bias and statistics, 12 (a partial 16-wide tile) by output
  // phase, 24 (a partial 32-wide tile) in 3-D.
  {
    ConvCase c{convSpec("narrow8_conv2d_deep", false, 2, 2, 96, 8, 1, {1, 21, 37}, {1, 3, 3},
                        {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32),
               "relu"};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("narrow12_convt2d_s2", true, 2, 2, 64, 12, 1, {1, 9, 13}, {1, 4, 4},
                        {1, 2, 2}, {0, 1, 1}, {1, 1, 1}, MathMode::Tf32)};
    c.spec.hasBias = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("narrow24_conv3d", false, 3, 2, 40, 24, 1, {6, 7, 9}, {3, 3, 3}, {1, 1, 1},
                        {1, 1, 1}, {1, 1, 1}, MathMode::Tf32),
               "affine"};
    c.spec.epilogue = functor("affine");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  // Strided direct convolutions on the input-box engine (their boxes hold every input row
  // and column the outputs' taps read): 2-D with a bias and statistics, 3-D, 1-D with
  // dilation.
  {
    ConvCase c{convSpec("strided_conv2d_s2_k5", false, 2, 2, 24, 40, 1, {1, 19, 23}, {1, 5, 5},
                        {1, 2, 2}, {0, 2, 2}, {1, 1, 1}, MathMode::Tf32),
               "relu"};
    c.spec.hasBias = true;
    c.spec.epilogue = functor("relu");
    c.spec.accumulateStats = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("strided_conv3d_s2", false, 3, 2, 16, 24, 1, {7, 9, 11}, {3, 3, 3},
                        {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, MathMode::Tf32)};
    c.spec.hasBias = true;
    cs.push_back(c);
  }
  {
    ConvCase c{convSpec("strided_conv1d_s3_dil2", false, 1, 3, 32, 48, 1, {1, 1, 301}, {1, 1, 3},
                        {1, 1, 3}, {0, 0, 1}, {1, 1, 2}, MathMode::Tf32),
               "affine"};
    c.spec.epilogue = functor("affine");
    cs.push_back(c);
  }
  return cs;
}

inline std::vector<GemmCase> gemmCases() {
  std::vector<GemmCase> gs;
  {
    // S3: linear 8192 -> 8192 + bias, group norm over 16 columns, row minimum; y not stored.
    GemmCase g;
    g.spec.kernelName = "s3_linear_gn_min";
    g.spec.M = 1024;
    g.spec.N = 8192;
    g.spec.K = 8192;
    g.spec.hasBias = true;
    g.spec.normGroupCols = 16;
    g.spec.rowReduce = GemmSpec::RowReduce::Min;
    g.spec.storeOutput = false;
    g.bench = true;
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "matmul_batched_odd";
    g.spec.M = 77;
    g.spec.N = 53;
    g.spec.K = 45;
    g.spec.bTransposed = false;
    g.spec.batchShape = {3};
    g.spec.batchStrideA = {77 * 45};
    g.spec.batchStrideB = {0};
    g.spec.batchStrideC = {77 * 53};
    g.spec.hasBias = true;
    g.spec.epilogue = functor("affine");
    g.epilogue = "affine";
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "linear_norm_max_odd";
    g.spec.M = 100;
    g.spec.N = 96;
    g.spec.K = 70;
    g.spec.hasBias = true;
    g.spec.normGroupCols = 16;
    g.spec.rowReduce = GemmSpec::RowReduce::Max;
    g.spec.postNorm = functor("relu");
    g.postNorm = "relu";
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "linear_tf32_sum";
    g.spec.M = 300;
    g.spec.N = 260;
    g.spec.K = 264;
    g.spec.math = MathMode::Tf32;
    g.spec.rowReduce = GemmSpec::RowReduce::Sum;
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "matmul_batch2d_big";
    g.spec.M = 520;
    g.spec.N = 384;
    g.spec.K = 200;
    g.spec.bTransposed = false;
    g.spec.batchShape = {2, 3};
    g.spec.batchStrideA = {3 * 520 * 200, 520 * 200};
    g.spec.batchStrideB = {200 * 384, 0};
    g.spec.batchStrideC = {3 * 520 * 384, 520 * 384};
    gs.push_back(g);
  }
  {
    // Attention's P x V (bmm_attention): 64 columns, so the 128x64 mma.sync tile; B as [K, N].
    GemmCase g;
    g.spec.kernelName = "bmm_pv_n64";
    g.spec.M = 512;
    g.spec.N = 64;
    g.spec.K = 512;
    g.spec.bTransposed = false;
    g.spec.batchShape = {256};
    g.spec.batchStrideA = {512 * 512};
    g.spec.batchStrideB = {512 * 64};
    g.spec.batchStrideC = {512 * 64};
    g.bench = true;
    gs.push_back(g);
  }
  // Shapes for the wgmma engine (B as [N, K], K a multiple of 4): partial tiles in M and N,
  // a norm tail, a batch with a broadcast weight, and the 8192^3 benchmarks.
  {
    GemmCase g;
    g.spec.kernelName = "linear_odd_mn_relu";
    g.spec.M = 300;
    g.spec.N = 200;
    g.spec.K = 136;
    g.spec.hasBias = true;
    g.spec.epilogue = functor("relu");
    g.epilogue = "relu";
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "linear_norm32_max";
    g.spec.M = 257;
    g.spec.N = 256;
    g.spec.K = 96;
    g.spec.hasBias = true;
    g.spec.normGroupCols = 32;
    g.spec.rowReduce = GemmSpec::RowReduce::Max;
    g.spec.postNorm = functor("relu");
    g.postNorm = "relu";
    g.spec.storeOutput = false;
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "linear_batched_tf32";
    g.spec.M = 70;
    g.spec.N = 72;
    g.spec.K = 40;
    g.spec.math = MathMode::Tf32;
    g.spec.batchShape = {2, 3};
    g.spec.batchStrideA = {3 * 70 * 40, 70 * 40};
    g.spec.batchStrideB = {0, 0};
    g.spec.batchStrideC = {3 * 70 * 72, 70 * 72};
    gs.push_back(g);
  }
  // More tiles than the H200's 132 SMs, so that the persistent kernel splits its tail by k
  // tiles (stream-K) on the natural grid too: partial tiles in M, N and K, a bias and relu
  // (156 tiles of 128 x 128, 7 k tiles); a norm tail with the row minimum (136 tiles, 3 k
  // tiles); TF32 with a row sum (144 tiles of 128 x 256, 17 k tiles, dealt out whole on that
  // tile: split on 128 x 128) and TF32 with bias and affine (135 tiles of 128 x 256, 10 k
  // tiles). The harness also runs them on forced block counts.
  {
    GemmCase g;
    g.spec.kernelName = "linear_streamk_odd";
    g.spec.M = 1543;
    g.spec.N = 1500;
    g.spec.K = 200;
    g.spec.hasBias = true;
    g.spec.epilogue = functor("relu");
    g.epilogue = "relu";
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "linear_streamk_norm_min";
    g.spec.M = 2100;
    g.spec.N = 1024;
    g.spec.K = 96;
    g.spec.hasBias = true;
    g.spec.normGroupCols = 32;
    g.spec.rowReduce = GemmSpec::RowReduce::Min;
    g.spec.postNorm = functor("relu");
    g.postNorm = "relu";
    g.spec.storeOutput = false;
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "linear_streamk_tf32";
    g.spec.M = 2000;
    g.spec.N = 2304;
    g.spec.K = 520;
    g.spec.math = MathMode::Tf32;
    g.spec.rowReduce = GemmSpec::RowReduce::Sum;
    gs.push_back(g);
  }
  {
    GemmCase g;
    g.spec.kernelName = "linear_streamk_tf32_wide";
    g.spec.M = 1900;
    g.spec.N = 2200;
    g.spec.K = 300;
    g.spec.math = MathMode::Tf32;
    g.spec.hasBias = true;
    g.spec.epilogue = functor("affine");
    g.epilogue = "affine";
    gs.push_back(g);
  }
  {
    // TF32 in clusters of two (_wgcl): 8 x 4 tiles of 128 x 256, partial in M, N and K; the
    // last tile column's second half of B (rows 896 ..) lies wholly outside the matrix, so
    // its multicast copy is all zeros.
    GemmCase g;
    g.spec.kernelName = "linear_cluster_tf32";
    g.spec.M = 1000;
    g.spec.N = 800;
    g.spec.K = 300;
    g.spec.math = MathMode::Tf32;
    g.spec.hasBias = true;
    g.spec.epilogue = functor("relu");
    g.epilogue = "relu";
    gs.push_back(g);
  }
  for (MathMode m : {MathMode::Tf32, MathMode::Tf32x3}) {
    GemmCase g;
    g.spec.kernelName = m == MathMode::Tf32 ? "linear_8192_tf32" : "linear_8192_tf32x3";
    g.spec.M = g.spec.N = g.spec.K = 8192;
    g.spec.math = m;
    g.bench = true;
    gs.push_back(g);
  }
  return gs;
}

} // namespace sinter::tc_test
