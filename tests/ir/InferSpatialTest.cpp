//===- tests/ir/InferSpatialTest.cpp - shapes of convs, pools, norms, linear, matmul ---===//
//
// Each expected shape is computed by hand in a comment from the PyTorch formula:
//   conv:           out = floor((in + 2p - d(k-1) - 1) / s) + 1
//   conv_transpose: out = (in-1)s - 2p + d(k-1) + output_padding + 1
//   pools:          out = floor((in + 2p - d(k-1) - 1 [+ s-1 if ceil]) / s) + 1, and with
//                   ceil_mode one less when the last window would start at or past in + p.
//
//===--------------------------------------------------------------------------------===//
#include "InferTestUtil.h"

#include <gtest/gtest.h>

using namespace sinter;
using namespace sinter::testing;

namespace {

TEST(InferConv, Shapes1d2d3d) {
  // 1-D, groups 2: (7 - 2 - 1)/1 + 1 = 5.
  EXPECT_EQ(infer(OpKind::Conv, {{1, 4, 7}, {6, 2, 3}, {6}}, {{"groups", I(2)}}), "f32[1,6,5]");
  // 2-D: H floor((10 + 2 - 2 - 1)/2) + 1 = 5; W floor((12 + 2 - 2*4 - 1)/1) + 1 = 6.
  EXPECT_EQ(infer(OpKind::Conv, {{2, 3, 10, 12}, {8, 3, 3, 5}},
                  {{"stride", L({2, 1})}, {"padding", I(1)}, {"dilation", L({1, 2})}}),
            "f32[2,8,5,6]");
  // S1: 24 - 2 = 22, 32 - 2 = 30.
  EXPECT_EQ(infer(OpKind::Conv, {{128, 3, 24, 32, 32}, {24, 3, 3, 3, 3}, {24}}),
            "f32[128,24,22,30,30]");
  // 3-D strided with a one-element list: floor((9 + 0 - 2 - 1)/3) + 1 = 3.
  EXPECT_EQ(infer(OpKind::Conv, {{1, 1, 9, 9, 9}, {1, 1, 3, 3, 3}}, {{"stride", L({3})}}),
            "f32[1,1,3,3,3]");
  // Depthwise: groups = C.
  EXPECT_EQ(infer(OpKind::Conv, {{1, 8, 5, 5}, {8, 1, 3, 3}}, {{"groups", I(8)}}), "f32[1,8,3,3]");
}

TEST(InferConv, Errors) {
  EXPECT_EQ(infer(OpKind::Conv, {{4, 8}, {8, 8}}),
            "conv: expected x of rank 3, 4 or 5, got rank 2");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 3, 3, 3, 3}, {2, 2, 1, 1, 1, 1}}),
            "conv: expected x of rank 3, 4 or 5, got rank 6");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5, 5}, {2, 2, 3}}),
            "conv: expected w of rank 4 like x, got rank 3");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5, 5, 5}, {2, 2, 3, 3, 3}}, {{"stride", L({1, 2})}}),
            "conv: stride: expected 1 or 3 values, got 2");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"padding", L({1, 1})}}),
            "conv: padding: expected 1 value, got 2");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"stride", I(0)}}),
            "conv: stride must be >= 1, got 0");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5, 5}, {2, 2, 3, 3}}, {{"padding", L({1, -1})}}),
            "conv: padding must be >= 0, got -1");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"dilation", I(0)}}),
            "conv: dilation must be >= 1, got 0");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {2, 2, 3}}, {{"groups", I(0)}}),
            "conv: groups must be >= 1, got 0");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 6, 5}, {3, 2, 3}}, {{"groups", I(2)}}),
            "conv: groups=2 does not divide Cout=3 (w[0])");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 64, 8, 8}, {8, 16, 3, 3}}, {{"groups", I(2)}}),
            "conv: x has 64 channels but w expects 32 (w[1]=16 times groups=2)");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 2, 5}, {4, 2, 3}, {2}}),
            "conv: expected bias of shape [4], got [2]");
  EXPECT_EQ(infer(OpKind::Conv, {{1, 1, 2}, {1, 1, 3}}),
            "conv: output size 0 in spatial dim 2 (input 2, kernel 3, padding 0, dilation 1, "
            "stride 1)");
  // floor((4 + 0 - 2*2 - 1)/2) + 1 = floor(-1/2) + 1 = 0, in the last of three dims.
  EXPECT_EQ(infer(OpKind::Conv, {{1, 1, 9, 9, 4}, {1, 1, 1, 1, 3}},
                  {{"stride", I(2)}, {"dilation", L({1, 1, 2})}}),
            "conv: output size 0 in spatial dim 4 (input 4, kernel 3, padding 0, dilation 2, "
            "stride 2)");
}

TEST(InferConvTranspose, Shapes1d2d3d) {
  // 1-D: (5-1)*2 - 2 + 1*2 + 1 + 1 = 10.
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{2, 4, 5}, {4, 3, 3}},
                  {{"stride", I(2)}, {"padding", I(1)}, {"output_padding", I(1)}}),
            "f32[2,3,10]");
  // output_padding may reach dilation - 1 when stride is 1: (4-1) + 3*1 + 2 + 1 = 9.
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 2, 4}, {2, 1, 2}},
                  {{"output_padding", I(2)}, {"dilation", I(3)}}),
            "f32[1,1,9]");
  // 2-D, groups 2 (Cout = 3*2): H (6-1)*2 - 0 + 2*2 + 1 + 1 = 16; W (7-1)*3 - 2 + 2*1 + 2 + 1 = 21.
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 4, 6, 7}, {4, 3, 3, 2}, {6}},
                  {{"stride", L({2, 3})},
                   {"padding", L({0, 1})},
                   {"output_padding", L({1, 2})},
                   {"dilation", I(2)},
                   {"groups", I(2)}}),
            "f32[1,6,16,21]");
  // S0: 31 + 2 + 1 = 34.
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{16, 64, 32, 32, 32}, {64, 128, 3, 3, 3}}),
            "f32[16,128,34,34,34]");
  // S2: groups 8, Cout = 8*8; 255 + 2 + 1 = 258.
  EXPECT_EQ(
      infer(OpKind::ConvTranspose, {{128, 64, 256, 256}, {64, 8, 3, 3}, {64}}, {{"groups", I(8)}}),
      "f32[128,64,258,258]");
  // S4: 31*2 - 2 + 2 + 1 = 63, 63*2 - 2 + 3 = 127, 127*2 - 2 + 3 = 255; Cout = 8*4.
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{4, 32, 32, 64, 128}, {32, 8, 3, 3, 3}},
                  {{"stride", I(2)}, {"padding", I(1)}, {"groups", I(4)}}),
            "f32[4,32,63,127,255]");
  // 3-D with per-dim output_padding and dilation: D (2-1)*2 + 1*1 + 1 + 1 = 5;
  // H (3-1)*1 + 2*1 + 1 + 1 = 6; W (4-1)*3 - 2 + 1*1 + 0 + 1 = 9.
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 2, 2, 3, 4}, {2, 5, 2, 2, 2}},
                  {{"stride", L({2, 1, 3})},
                   {"padding", L({0, 0, 1})},
                   {"dilation", L({1, 2, 1})},
                   {"output_padding", L({1, 1, 0})}}),
            "f32[1,5,5,6,9]");
}

TEST(InferConvTranspose, Errors) {
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{4, 8}, {8, 8}}),
            "conv_transpose: expected x of rank 3, 4 or 5, got rank 2");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 4, 5, 5}, {4, 2, 3, 3}}, {{"stride", L({1, 2, 2})}}),
            "conv_transpose: stride: expected 1 or 2 values, got 3");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 4, 5}, {4, 2, 3}}, {{"output_padding", I(-1)}}),
            "conv_transpose: output_padding must be >= 0, got -1");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 4, 5, 5}, {4, 2, 3, 3}},
                  {{"stride", I(2)}, {"output_padding", L({1, 2})}}),
            "conv_transpose: output_padding=2 must be smaller than stride=2 or dilation=1 in "
            "spatial dim 3");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 4, 5}, {4, 2, 3}}, {{"output_padding", I(1)}}),
            "conv_transpose: output_padding=1 must be smaller than stride=1 or dilation=1 in "
            "spatial dim 2");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 6, 5}, {6, 2, 3}}, {{"groups", I(4)}}),
            "conv_transpose: groups=4 does not divide Cin=6 (w[0])");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 32, 5}, {64, 2, 3}}),
            "conv_transpose: x has 32 channels but w expects 64 (w[0])");
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 4, 5}, {4, 2, 3}, {2}}, {{"groups", I(2)}}),
            "conv_transpose: expected bias of shape [4], got [2]");
  // (1-1)*1 - 2 + 0 + 0 + 1 = -1.
  EXPECT_EQ(infer(OpKind::ConvTranspose, {{1, 1, 1}, {1, 1, 1}}, {{"padding", I(1)}}),
            "conv_transpose: output size -1 in spatial dim 2 (input 1, kernel 1, padding 1, "
            "output_padding 0, dilation 1, stride 1)");
}

TEST(InferLinear, ShapesAndErrors) {
  EXPECT_EQ(infer(OpKind::Linear, {{4, 5, 16}, {8, 16}, {8}}), "f32[4,5,8]");
  EXPECT_EQ(infer(OpKind::Linear, {{16}, {8, 16}}), "f32[8]");
  EXPECT_EQ(infer(OpKind::Linear, {{1024, 8192}, {8192, 8192}, {8192}}), "f32[1024,8192]");
  EXPECT_EQ(infer(OpKind::Linear, {{}, {8, 16}}), "linear: expected x of rank >= 1, got rank 0");
  EXPECT_EQ(infer(OpKind::Linear, {{4, 16}, {16}}),
            "linear: expected w of rank 2 ([N, K]), got rank 1");
  EXPECT_EQ(infer(OpKind::Linear, {{4, 15}, {8, 16}}),
            "linear: x has K=15 in its last dim but w expects K=16 (w[1])");
  EXPECT_EQ(infer(OpKind::Linear, {{4, 16}, {8, 16}, {16}}),
            "linear: expected bias of shape [8], got [16]");
}

TEST(InferMatmul, TorchMatmulRules) {
  EXPECT_EQ(infer(OpKind::Matmul, {{3}, {3}}), "f32[]");
  EXPECT_EQ(infer(OpKind::Matmul, {{2, 3}, {3, 4}}), "f32[2,4]");
  EXPECT_EQ(infer(OpKind::Matmul, {{2, 3}, {3}}), "f32[2]");
  EXPECT_EQ(infer(OpKind::Matmul, {{3}, {3, 4}}), "f32[4]");
  EXPECT_EQ(infer(OpKind::Matmul, {{3}, {2, 3, 4}}), "f32[2,4]");
  EXPECT_EQ(infer(OpKind::Matmul, {{2, 3, 4}, {4}}), "f32[2,3]");
  // Batch dims [5,1] and [4] broadcast to [5,4].
  EXPECT_EQ(infer(OpKind::Matmul, {{5, 1, 2, 3}, {4, 3, 6}}), "f32[5,4,2,6]");
  EXPECT_EQ(infer(OpKind::Matmul, {{3}, {4}}),
            "matmul: contracted dims differ: a [3] has 3, b [4] has 4");
  EXPECT_EQ(infer(OpKind::Matmul, {{2, 3}, {4, 5}}),
            "matmul: contracted dims differ: a [2,3] has 3, b [4,5] has 4");
  EXPECT_EQ(infer(OpKind::Matmul, {{2, 2, 3}, {3, 3, 4}}),
            "matmul: batch dims [2] and [3] do not broadcast");
  EXPECT_EQ(infer(OpKind::Matmul, {{}, {3}}),
            "matmul: expected operands of rank >= 1, got ranks 0 and 1");
}

TEST(InferPool, MaxPoolShapes) {
  // floor((5 - 2)/2) + 1 = 2; ceil: floor((5 - 2 + 1)/2) + 1 = 3, last window starts at 4 < 5.
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 5, 5}}, {{"kernel_size", I(2)}}), "f32[1,1,2,2]");
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 5, 5}}, {{"kernel_size", I(2)}, {"ceil_mode", B(true)}}),
            "f32[1,1,3,3]");
  // ceil with padding 1: floor((5 + 2 - 1 - 1 + 1)/2) + 1 = 4, but window 4 would start at
  // (4-1)*2 = 6 >= 5 + 1, so 3 (the same as without ceil_mode: floor(5/2) + 1).
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 5}},
                  {{"kernel_size", I(2)}, {"padding", I(1)}, {"ceil_mode", B(true)}}),
            "f32[1,1,3]");
  // Dilation 2: 10 - 2*2 - 1 + 1 = 6 with stride 1.
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 2, 10}},
                  {{"kernel_size", I(3)}, {"stride", I(1)}, {"dilation", I(2)}}),
            "f32[1,2,6]");
  // 3-D with per-dim kernel, stride defaulting to it.
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 4, 6, 8}}, {{"kernel_size", L({2, 3, 4})}}),
            "f32[1,1,2,2,2]");
}

TEST(InferPool, AvgPoolShapes) {
  // floor((8 + 2 - 3)/2) + 1 = 4; ceil: floor((8 + 2 - 3 + 1)/2) + 1 = 5, start 8 < 9.
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 8}},
                  {{"kernel_size", I(3)}, {"stride", I(2)}, {"padding", I(1)}}),
            "f32[1,1,4]");
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 8}},
                  {{"kernel_size", I(3)},
                   {"stride", I(2)},
                   {"padding", I(1)},
                   {"ceil_mode", B(true)},
                   {"count_include_pad", B(false)}}),
            "f32[1,1,5]");
  // 2-D, per-dim: H floor((6 - 3)/3) + 1 = 2, W floor((7 - 2)/2) + 1 = 3; ceil W:
  // floor((7 - 2 + 1)/2) + 1 = 4, start 6 < 7.
  EXPECT_EQ(infer(OpKind::AvgPool, {{2, 3, 6, 7}}, {{"kernel_size", L({3, 2})}}), "f32[2,3,2,3]");
  EXPECT_EQ(
      infer(OpKind::AvgPool, {{2, 3, 6, 7}}, {{"kernel_size", L({3, 2})}, {"ceil_mode", B(true)}}),
      "f32[2,3,2,4]");
}

TEST(InferPool, Errors) {
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 8}}, {{"kernel_size", I(2)}}),
            "max_pool: expected x of rank 3, 4 or 5, got rank 2");
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 5, 5}}, {{"kernel_size", I(0)}}),
            "max_pool: kernel_size must be >= 1, got 0");
  EXPECT_EQ(
      infer(OpKind::MaxPool, {{1, 1, 5, 5}}, {{"kernel_size", I(2)}, {"stride", L({1, 2, 3})}}),
      "max_pool: stride: expected 1 or 2 values, got 3");
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 5}}, {{"kernel_size", I(2)}, {"stride", I(0)}}),
            "avg_pool: stride must be >= 1, got 0");
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 5}}, {{"kernel_size", I(2)}, {"dilation", I(0)}}),
            "max_pool: dilation must be >= 1, got 0");
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 5}}, {{"kernel_size", I(2)}, {"dilation", I(1)}}),
            "avg_pool: unknown attribute 'dilation'");
  EXPECT_EQ(
      infer(OpKind::MaxPool, {{1, 1, 9, 9}}, {{"kernel_size", L({3, 5})}, {"padding", L({1, 3})}}),
      "max_pool: padding=3 must be at most half of kernel_size=5 in spatial dim 3");
  // Dilation does not relax the limit (PyTorch checks kernel_size / 2 >= padding):
  // padding 1 works, padding 2 does not although the dilated kernel spans 5.
  // floor((10 + 2 - 2*2 - 1)/3) + 1 = 3.
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 10}},
                  {{"kernel_size", I(3)}, {"padding", I(1)}, {"dilation", I(2)}}),
            "f32[1,1,3]");
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 10}},
                  {{"kernel_size", I(3)}, {"padding", I(2)}, {"dilation", I(2)}}),
            "max_pool: padding=2 must be at most half of kernel_size=3 in spatial dim 2");
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 9}}, {{"kernel_size", I(3)}, {"padding", I(2)}}),
            "avg_pool: padding=2 must be at most half of kernel_size=3 in spatial dim 2");
  // Only 3-D average pooling wants the unpadded input to cover the kernel; 2-D takes the
  // same sizes: floor((2 + 2 - 3)/1) + 1 = 2.
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 5, 2, 5}},
                  {{"kernel_size", I(3)}, {"stride", I(1)}, {"padding", I(1)}}),
            "avg_pool: input size 2 is smaller than kernel_size=3 in spatial dim 3 (3-D average "
            "pooling needs the kernel inside the unpadded input)");
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 2, 5}},
                  {{"kernel_size", I(3)}, {"stride", I(1)}, {"padding", I(1)}}),
            "f32[1,1,2,5]");
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 5, 2, 5}},
                  {{"kernel_size", I(3)}, {"stride", I(1)}, {"padding", I(1)}}),
            "f32[1,1,5,2,5]");
  // floor((2 - 2 - 1)/3) + 1 = 0.
  EXPECT_EQ(infer(OpKind::MaxPool, {{1, 1, 2}}, {{"kernel_size", I(3)}}),
            "max_pool: output size 0 in spatial dim 2 (input 2, kernel 3, padding 0, dilation 1, "
            "stride 3)");
  EXPECT_EQ(infer(OpKind::AvgPool, {{1, 1, 4, 2}}, {{"kernel_size", I(3)}}),
            "avg_pool: output size 0 in spatial dim 3 (input 2, kernel 3, padding 0, stride 3)");
}

TEST(InferNorm, GroupNorm) {
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 128, 4, 4}, {128}, {128}}, {{"groups", I(8)}}),
            "f32[2,128,4,4]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{1024, 8192}}, {{"groups", I(512)}, {"eps", F(1e-5)}}),
            "f32[1024,8192]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 128, 4}}, {{"groups", I(7)}}),
            "group_norm: groups=7 does not divide C=128");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 128, 4}}, {{"groups", I(0)}}),
            "group_norm: groups must be >= 1, got 0");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{128}}, {{"groups", I(8)}}),
            "group_norm: expected x of rank >= 2, got rank 1");
  // One element per group is rejected, as F.group_norm does (N * C/groups * spatial == 1).
  EXPECT_EQ(infer(OpKind::GroupNorm, {{1, 4, 1}}, {{"groups", I(4)}}),
            "group_norm: expected more than 1 value per group, got x of shape [1,4,1] with "
            "groups=4");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 4}}, {{"groups", I(4)}}), "f32[2,4]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 128, 4}, {64}, {128}}, {{"groups", I(8)}}),
            "group_norm: expected gamma of shape [128], got [64]");
  EXPECT_EQ(infer(OpKind::GroupNorm, {{2, 128, 4}, {128}, {1, 128}}, {{"groups", I(8)}}),
            "group_norm: expected beta of shape [128], got [1,128]");
}

TEST(InferNorm, LayerNorm) {
  EXPECT_EQ(
      infer(OpKind::LayerNorm, {{2, 3, 32}, {3, 32}, {3, 32}}, {{"normalized_shape", L({3, 32})}}),
      "f32[2,3,32]");
  EXPECT_EQ(infer(OpKind::LayerNorm, {{2, 3, 32}}, {{"normalized_shape", I(32)}}), "f32[2,3,32]");
  EXPECT_EQ(infer(OpKind::LayerNorm, {{2, 3, 32}}, {{"normalized_shape", L({64})}}),
            "layer_norm: normalized_shape [64] does not match the trailing dims of x [2,3,32]");
  EXPECT_EQ(infer(OpKind::LayerNorm, {{32}}, {{"normalized_shape", L({2, 32})}}),
            "layer_norm: normalized_shape [2,32] does not match the trailing dims of x [32]");
  EXPECT_EQ(infer(OpKind::LayerNorm, {{2, 32}}, {{"normalized_shape", L({})}}),
            "layer_norm: normalized_shape must not be empty");
  EXPECT_EQ(
      infer(OpKind::LayerNorm, {{2, 3, 32}, {32}, {3, 32}}, {{"normalized_shape", L({3, 32})}}),
      "layer_norm: expected gamma of shape [3,32], got [32]");
}

TEST(InferNorm, BatchNormAndInstanceNorm) {
  EXPECT_EQ(infer(OpKind::BatchNorm, {{4, 6, 5}, {6}, {6}}), "f32[4,6,5]");
  EXPECT_EQ(infer(OpKind::BatchNorm, {{4, 6}, {6}, {6}, {6}, {6}}, {{"eps", F(1e-3)}}), "f32[4,6]");
  EXPECT_EQ(infer(OpKind::BatchNorm, {{4, 6, 5}, {6}, {5}}),
            "batch_norm: expected var of shape [6], got [5]");
  EXPECT_EQ(infer(OpKind::BatchNorm, {{4, 6, 5}, {6}, {6}, {6}, {3}}),
            "batch_norm: expected beta of shape [6], got [3]");
  EXPECT_EQ(infer(OpKind::BatchNorm, {{6}, {6}, {6}}),
            "batch_norm: expected x of rank >= 2, got rank 1");
  EXPECT_EQ(infer(OpKind::InstanceNorm, {{2, 3, 5}}), "f32[2,3,5]");
  EXPECT_EQ(infer(OpKind::InstanceNorm, {{2, 3, 4, 4, 4}, {3}, {3}}), "f32[2,3,4,4,4]");
  EXPECT_EQ(infer(OpKind::InstanceNorm, {{2, 3}}),
            "instance_norm: expected x of rank >= 3, got rank 2");
  EXPECT_EQ(infer(OpKind::InstanceNorm, {{2, 3, 1, 1}}),
            "instance_norm: expected more than 1 spatial element, got x of shape [2,3,1,1]");
  EXPECT_EQ(infer(OpKind::InstanceNorm, {{2, 3, 5}, {3}, {4}}),
            "instance_norm: expected beta of shape [3], got [4]");
}

} // namespace
