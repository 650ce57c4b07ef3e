//===- tests/kernels_direct/Cases.h - the conv_direct and norm cases under test -----===//
//
// One list of specs shared by the CPU test (each must emit and compile through NVRTC) and
// by the dump tool that writes them, with their launch configuration, for the GPU harness
// (bench/kernels/direct_check.py). Small odd shapes cover every attribute of conv and
// conv_transpose in 1-, 2- and 3-D; the workload cases are S1, S2 (both passes) and S4 at
// full size.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/kernels/ConvDirect.h"
#include "compiler/kernels/ConvMma.h"
#include "compiler/kernels/Norm.h"
#include "compiler/kernels/Specs.h"

#include <string>
#include <vector>

namespace sinter::direct_cases {

inline const char *kGelu = "return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));";
inline const char *kRelu = "return v < 0.f ? 0.f : v;";
/// S2 pass 2: gelu, then the group norm's per-(n, c) affine map from slot 5.
inline const char *kGeluScaleShift =
    "const float g = 0.5f * v * (1.f + erff(v * 0.70710678118654752f));\n"
    "    const float2 ss = sinter::slot<const float2>(b, 5)[n * 64 + c];\n"
    "    return fmaf(g, ss.x, ss.y);";

struct ConvCase {
  ConvSpec spec;
  bool workload = false;
  std::string epilogueTag = "identity"; ///< identity, relu, gelu, gelu_ss: for the harness
};

inline ConvSpec conv(std::string name, bool transposed, unsigned dims, int64_t n, int64_t cin,
                     int64_t cout, int64_t groups, std::array<int64_t, 3> in,
                     std::array<int64_t, 3> k, std::array<int64_t, 3> stride,
                     std::array<int64_t, 3> pad, std::array<int64_t, 3> dil,
                     std::array<int64_t, 3> outPad, bool bias) {
  ConvSpec s;
  s.kernelName = std::move(name);
  s.transposed = transposed;
  s.spatialDims = dims;
  s.N = n, s.Cin = cin, s.Cout = cout, s.groups = groups;
  s.in = in, s.kernel = k, s.stride = stride, s.padding = pad, s.dilation = dil;
  s.hasBias = bias;
  for (int d = 0; d < 3; ++d) {
    int64_t span = dil[d] * (k[d] - 1);
    s.out[d] = transposed ? (in[d] - 1) * stride[d] - 2 * pad[d] + span + 1 + outPad[d]
                          : (in[d] + 2 * pad[d] - span - 1) / stride[d] + 1;
  }
  return s;
}

inline std::vector<ConvCase> convCases() {
  std::vector<ConvCase> cs;
  auto add = [&](ConvSpec s, const char *tag, bool stats, bool store = true) {
    ConvCase c;
    c.epilogueTag = tag;
    if (std::string(tag) == "relu")
      s.epilogue.code = kRelu;
    else if (std::string(tag) == "gelu")
      s.epilogue.code = kGelu;
    s.accumulateStats = stats;
    s.storeOutput = store;
    c.spec = std::move(s);
    cs.push_back(std::move(c));
  };
  // Convolutions.
  add(conv("c1d_pad", false, 1, 2, 3, 5, 1, {1, 1, 37}, {1, 1, 3}, {1, 1, 1}, {0, 0, 1}, {1, 1, 1},
           {0, 0, 0}, true),
      "relu", false);
  add(conv("c1d_s3_d2_g2", false, 1, 3, 4, 6, 2, {1, 1, 50}, {1, 1, 3}, {1, 1, 3}, {0, 0, 2},
           {1, 1, 2}, {0, 0, 0}, false),
      "identity", true);
  add(conv("c2d_s2_rect", false, 2, 2, 3, 7, 1, {1, 19, 23}, {1, 3, 5}, {1, 2, 2}, {0, 1, 2},
           {1, 1, 1}, {0, 0, 0}, true),
      "identity", true);
  add(conv("c2d_g3_d2", false, 2, 2, 6, 9, 3, {1, 17, 21}, {1, 3, 3}, {1, 1, 1}, {0, 2, 2},
           {1, 2, 2}, {0, 0, 0}, true),
      "gelu", false);
  add(conv("c2d_wide_cout", false, 2, 2, 5, 40, 1, {1, 12, 14}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1},
           {1, 1, 1}, {0, 0, 0}, true),
      "identity", true);
  add(conv("c3d_s122", false, 3, 2, 3, 4, 1, {7, 9, 11}, {3, 3, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1},
           {0, 0, 0}, true),
      "identity", true);
  add(conv("c3d_weights_l1", false, 3, 2, 64, 8, 1, {4, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1},
           {1, 1, 1}, {0, 0, 0}, false),
      "identity", false);
  // float2 input rows with an even padding (pairs wholly outside the row at both edges).
  add(conv("c2d_vec_pad2", false, 2, 2, 4, 8, 1, {1, 18, 22}, {1, 5, 5}, {1, 1, 1}, {0, 2, 2},
           {1, 1, 1}, {0, 0, 0}, true),
      "gelu", true);
  // Unpadded in H and W: the last blocks are clamped back inside the output (odd sizes, so
  // they overlap their neighbours), with and without a W stride.
  add(conv("c2d_clamp", false, 2, 2, 3, 8, 1, {1, 19, 25}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
           {1, 1, 1}, {0, 0, 0}, true),
      "relu", true);
  add(conv("c3d_clamp_s2", false, 3, 2, 4, 8, 1, {5, 19, 26}, {3, 3, 3}, {1, 2, 2}, {1, 0, 0},
           {1, 1, 1}, {0, 0, 0}, true),
      "identity", true);
  // Groups of 12 channels: not whole k8 steps (14 of them); conv_mma spilled such groups by
  // 108-552 bytes at 4 m16 tiles a warp, none at 2 (ConvMma.cpp, maxTilesPerWarp).
  add(conv("c2d_g12", false, 2, 2, 24, 24, 2, {1, 20, 36}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1},
           {1, 1, 1}, {0, 0, 0}, true),
      "relu", false);
  // Transposed convolutions.
  add(conv("t1d_s3_op2_g2", true, 1, 2, 4, 6, 2, {1, 1, 29}, {1, 1, 4}, {1, 1, 3}, {0, 0, 1},
           {1, 1, 1}, {0, 0, 2}, true),
      "identity", true);
  add(conv("t2d_s2_op1_g2", true, 2, 2, 6, 4, 2, {1, 13, 15}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1},
           {1, 1, 1}, {0, 1, 1}, true),
      "gelu", true);
  add(conv("t2d_s3_d2_p2", true, 2, 2, 3, 5, 1, {1, 11, 9}, {1, 3, 3}, {1, 3, 3}, {0, 2, 2},
           {1, 2, 2}, {0, 1, 1}, true),
      "identity", false);
  add(conv("t2d_s1_g8", true, 2, 3, 16, 16, 8, {1, 20, 33}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
           {1, 1, 1}, {0, 0, 0}, true),
      "gelu", true);
  // Like S2 at a small size: float2 rows and float2 stores, rows that do not divide the patch.
  add(conv("t2d_s1_vec", true, 2, 2, 16, 16, 2, {1, 11, 20}, {1, 3, 3}, {1, 1, 1}, {0, 0, 0},
           {1, 1, 1}, {0, 0, 0}, true),
      "gelu", true);
  // Forward convolutions whose groups are whole k8 steps, so conv_mma's warps share A
  // fragments across their tile rows (kRowReuse): 2-D with padding, 3-D with D taps.
  add(conv("c2d_g8_rows", false, 2, 2, 16, 16, 2, {1, 21, 37}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1},
           {1, 1, 1}, {0, 0, 0}, true),
      "relu", true);
  add(conv("c3d_g8_rows", false, 3, 2, 8, 8, 1, {6, 13, 19}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1},
           {1, 1, 1}, {0, 0, 0}, true),
      "identity", true);
  add(conv("t2d_depthwise_s2", true, 2, 2, 6, 6, 6, {1, 10, 10}, {1, 3, 3}, {1, 2, 2}, {0, 0, 0},
           {1, 1, 1}, {0, 1, 1}, false),
      "relu", false);
  add(conv("t3d_s2_p1_g4", true, 3, 2, 8, 8, 4, {5, 6, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1},
           {1, 1, 1}, {0, 0, 0}, true),
      "identity", true);
  add(conv("t3d_s212_op", true, 3, 1, 4, 6, 2, {4, 5, 6}, {2, 3, 3}, {2, 1, 2}, {0, 1, 1},
           {1, 1, 1}, {1, 0, 1}, false),
      "identity", true);

  // The workloads at full size.
  ConvCase s1;
  s1.spec = conv("s1_conv3d_stats", false, 3, 128, 3, 24, 1, {24, 32, 32}, {3, 3, 3}, {1, 1, 1},
                 {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, true);
  s1.spec.storeOutput = false;
  s1.spec.accumulateStats = true;
  s1.workload = true;
  cs.push_back(s1);

  ConvCase s2a;
  s2a.spec = conv("s2_convt2d_gelu_stats", true, 2, 128, 64, 64, 8, {1, 256, 256}, {1, 3, 3},
                  {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, true);
  s2a.spec.epilogue.code = kGelu;
  s2a.spec.storeOutput = false;
  s2a.spec.accumulateStats = true;
  s2a.epilogueTag = "gelu";
  s2a.workload = true;
  cs.push_back(s2a);

  ConvCase s2b = s2a;
  s2b.spec.kernelName = "s2_convt2d_gelu_norm";
  s2b.spec.epilogue.code = kGeluScaleShift;
  s2b.spec.storeOutput = true;
  s2b.spec.accumulateStats = false;
  s2b.epilogueTag = "gelu_ss";
  cs.push_back(s2b);

  ConvCase s4;
  s4.spec = conv("s4_convt3d_grouped", true, 3, 4, 32, 32, 4, {32, 64, 128}, {3, 3, 3}, {2, 2, 2},
                 {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, false);
  s4.workload = true;
  cs.push_back(s4);
  return cs;
}

/// Convolutions that pool their own output (ConvSpec::pool): max and average, 1-, 2- and
/// 3-D, floor and ceil sizes (rows past the last window, clipped last windows), transposed
/// with odd padding (patches at phase 1), windows that are not a multiple of the stride.
/// Checked by the CPU test only: the GPU harness's reference knows no pools (the corpus's
/// conv-pool graphs check them on the GPU).
inline std::vector<ConvSpec> pooledCases() {
  auto pooled = [](ConvSpec s, bool max, std::array<int64_t, 3> window, bool ceil,
                   const char *post) {
    ConvPoolTail p;
    p.max = max;
    p.window = window;
    for (int d = 0; d < 3; ++d)
      p.out[d] = ceil ? (s.out[d] + window[d] - 1) / window[d] : s.out[d] / window[d];
    p.post.code = post;
    s.epilogue.code = kRelu;
    s.pool = p;
    return s;
  };
  const char *sigmoid = "return 1.f / (1.f + __expf(-v));";
  return {
      pooled(conv("p1d_max3", false, 1, 2, 4, 8, 1, {1, 1, 40}, {1, 1, 5}, {1, 1, 1}, {0, 0, 2},
                  {1, 1, 1}, {0, 0, 0}, true),
             true, {1, 1, 3}, false, "return v;"),
      pooled(conv("p2d_avg2_floor", false, 2, 2, 3, 16, 1, {1, 19, 23}, {1, 3, 3}, {1, 1, 1},
                  {0, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
             false, {1, 2, 2}, false, sigmoid),
      pooled(conv("p2d_max2_ceil_g2", false, 2, 2, 6, 8, 2, {1, 17, 21}, {1, 3, 3}, {1, 1, 1},
                  {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, false),
             true, {1, 2, 2}, true, "return v;"),
      pooled(conv("p3d_avg2_ceil", false, 3, 2, 3, 16, 1, {7, 9, 11}, {3, 3, 3}, {1, 1, 1},
                  {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
             false, {2, 2, 2}, true, "return v;"),
      pooled(conv("pt2d_s2_p1_max2", true, 2, 2, 4, 8, 1, {1, 9, 10}, {1, 3, 3}, {1, 2, 2},
                  {0, 1, 1}, {1, 1, 1}, {0, 1, 1}, true),
             true, {1, 2, 2}, false, sigmoid),
      pooled(conv("pt3d_s2_p1_avg2_ceil", true, 3, 2, 3, 16, 1, {5, 6, 7}, {3, 3, 3}, {2, 2, 2},
                  {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
             false, {2, 2, 2}, true, "return v;"),
      // The corpus's convt3d_bn_avgpool_avgpool and convt3d_maxpool_maxpool_sum_c at full size.
      pooled(conv("pt3d_bn_avgpool_full", true, 3, 128, 3, 16, 1, {16, 32, 32}, {3, 3, 3},
                  {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
             false, {2, 2, 2}, true, "return v;"),
      pooled(conv("pt3d_maxpool_full", true, 3, 64, 16, 32, 1, {16, 32, 32}, {3, 3, 3}, {2, 2, 2},
                  {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
             true, {2, 2, 2}, false, "return v;"),
      pooled(conv("pt2d_s2_max3", true, 2, 2, 4, 6, 2, {1, 8, 9}, {1, 4, 4}, {1, 2, 2}, {0, 1, 1},
                  {1, 1, 1}, {0, 0, 0}, false),
             true, {1, 3, 3}, false, "return v;"),
  };
}

/// Convolutions followed by a softmax or log_softmax over their channels in the same kernel
/// (ConvSpec::softmax), alone and before a pool; CPU test only, as pooledCases.
inline std::vector<ConvSpec> softmaxCases() {
  auto withSoftmax = [](ConvSpec s, bool log, const char *post) {
    s.epilogue.code = kRelu;
    s.softmax = ConvChannelSoftmax{log, FunctorBody{post}};
    return s;
  };
  std::vector<ConvSpec> cs = {
      withSoftmax(conv("s2d_softmax32", false, 2, 2, 3, 32, 1, {1, 19, 23}, {1, 3, 3}, {1, 1, 1},
                       {0, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
                  false, "return 2.f * v;"),
      withSoftmax(conv("s1d_logsoftmax16", false, 1, 2, 4, 16, 1, {1, 1, 50}, {1, 1, 5}, {1, 1, 1},
                       {0, 0, 2}, {1, 1, 1}, {0, 0, 0}, false),
                  true, "return v;"),
      withSoftmax(conv("st2d_s2_softmax8", true, 2, 2, 3, 8, 1, {1, 9, 10}, {1, 4, 4}, {1, 2, 2},
                       {0, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
                  false, "return v;"),
  };
  ConvSpec pooled = withSoftmax(conv("s2d_softmax16_avgpool2", false, 2, 2, 3, 16, 1, {1, 17, 21},
                                     {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
                                true, "return v;");
  ConvPoolTail p;
  p.max = false;
  p.window = {1, 2, 2};
  p.out = {1, 8, 10};
  pooled.pool = p;
  cs.push_back(pooled);
  // 3-D with depth taps: 16 channels of 2x2 positions and their windows are more than the
  // plain loop's registers hold (the wide launch: 128 threads, fewer blocks).
  ConvSpec deep = withSoftmax(conv("s3d_softmax16_maxpool2", false, 3, 2, 3, 16, 1, {10, 14, 14},
                                   {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, true),
                              false, "return v;");
  p.max = true;
  p.window = {2, 2, 2};
  p.out = {4, 6, 6};
  deep.pool = p;
  cs.push_back(deep);
  return cs;
}

/// Reductions over the channels on conv_direct: every kind, 1-D to 3-D, a transposed stride-2
/// convolution (whole 2x2 phases a thread), with chains before and after.
inline std::vector<ConvSpec> channelReduceCases() {
  using Kind = ConvChannelReduce::Kind;
  auto withReduce = [](ConvSpec s, Kind kind, const char *post) {
    s.epilogue.code = kRelu;
    s.channelReduce = ConvChannelReduce{kind, FunctorBody{post}};
    return s;
  };
  return {
      withReduce(conv("r2d_sum16", false, 2, 2, 3, 16, 1, {1, 19, 23}, {1, 3, 3}, {1, 1, 1},
                      {0, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
                 Kind::Sum, "return 2.f * v;"),
      withReduce(conv("r1d_mean16", false, 1, 2, 4, 16, 1, {1, 1, 50}, {1, 1, 5}, {1, 1, 1},
                      {0, 0, 2}, {1, 1, 1}, {0, 0, 0}, false),
                 Kind::Mean, "return v;"),
      withReduce(conv("rt2d_s2_max8", true, 2, 2, 3, 8, 1, {1, 9, 10}, {1, 4, 4}, {1, 2, 2},
                      {0, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
                 Kind::Max, "return v;"),
      withReduce(conv("r3d_min16", false, 3, 2, 3, 16, 1, {10, 14, 14}, {3, 3, 3}, {1, 1, 1},
                      {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, true),
                 Kind::Min, "return v - 1.f;"),
      withReduce(conv("rt3d_lse16", true, 3, 2, 16, 16, 1, {6, 8, 8}, {3, 3, 3}, {1, 1, 1},
                      {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, true),
                 Kind::LogSumExp, "return v;"),
  };
}

/// Other blockings of the workload kernels, timed against the emitter's choice:
/// {channels, rows, threads, columns, prefetch, minBlocks} (ConvDirectTuning).
struct Variant {
  std::string base;
  ConvDirectTuning tuning;
};

inline std::vector<Variant> variants() {
  const char *s1 = "s1_conv3d_stats", *s2 = "s2_convt2d_gelu_stats", *s4 = "s4_convt3d_grouped";
  return {{s1, {6, 6, 128, 2, 0, 3}}, {s1, {12, 3, 256, 2, 0, 2}}, {s1, {8, 3, 128, 4, 0, 3}},
          {s1, {6, 3, 256, 4, 0, 2}}, {s1, {24, 3, 256, 1, 0, 2}}, {s2, {8, 2, 256, 4, 0, 2}},
          {s2, {8, 4, 128, 2, 0, 4}}, {s2, {8, 6, 256, 1, 0, 2}},  {s4, {8, 2, 128, 4, 0, 0}},
          {s4, {8, 4, 256, 2, 0, 0}}, {s4, {8, 4, 128, 2, 0, 1}}};
}

/// Forced conv_mma tiles ({td, th, tw, warps, tileLoop, doubleBuffer}), checked like the
/// chosen ones: tile loops (odd counts, a last block with fewer tiles) on shapes too small
/// for the emitter to loop, with one box buffer or two, fewer warps than four, tiles deeper
/// than one row.
struct MmaVariant {
  std::string base;
  ConvMmaTile tile;
};

inline std::vector<MmaVariant> mmaVariants() {
  return {{"c2d_g3_d2", {1, 2, 32, 4, 2}},
          {"t2d_s1_g8", {1, 4, 16, 2, 4}},
          {"c2d_wide_cout", {1, 4, 16, 4, 3}},
          {"c3d_clamp_s2", {2, 2, 16, 1, 2}},
          {"t2d_s1_vec", {1, 8, 16, 4, 5}},
          {"c1d_pad", {1, 1, 64, 4, 1}},
          {"s1_conv3d_stats", {1, 4, 32, 4, 4}},
          {"s1_conv3d_stats", {2, 2, 32, 4, 4}},
          {"c3d_s122", {2, 2, 16, 4, 3, false}},
          {"t2d_s1_g8", {1, 4, 16, 4, 2, false}},
          // S4 walked by phase: one m16 tile per warp (fewer registers, more warps per SM),
          // and a wider tile.
          {"s4_convt3d_grouped", {4, 2, 16, 8, 8}},
          {"s4_convt3d_grouped", {2, 2, 16, 4, 8}},
          {"s4_convt3d_grouped", {1, 4, 32, 4, 8}},
          {"s4_convt3d_grouped", {1, 1, 128, 4, 8}},
          {"s4_convt3d_grouped", {1, 2, 128, 8, 8}},
          {"s4_convt3d_grouped", {2, 1, 128, 8, 8}},
          // S2's storing pass with the fragments stored directly (its chosen tile stages
          // them: rows of 258 floats start off the sectors).
          {"s2_convt2d_gelu_norm", {1, 8, 32, 4, 8, true, false}},
          // Two tile rows per warp sharing A fragments, on a forward 2-D convolution.
          {"c2d_g8_rows", {1, 8, 16, 4, 2}},
          // S2's passes on 16-row tiles (four rows per warp sharing A fragments; the emitter
          // keeps tiles to 8 rows, see docs/kernels-direct.md, "Row reuse").
          {"s2_convt2d_gelu_stats", {1, 16, 16, 4, 8}},
          {"s2_convt2d_gelu_norm", {1, 16, 16, 4, 8, true, true}}};
}

struct NormCase {
  enum class Kind { Apply, ScaleShift, Reduce } kind;
  NormSpec spec;
  bool overChannels = false, mean = true, normalised = true;
  std::string postTag = "identity";
};

inline NormSpec norm(std::string name, int64_t n, int64_t c, int64_t l, int64_t groups,
                     bool affine) {
  NormSpec s;
  s.kernelName = std::move(name);
  s.N = n, s.C = c, s.L = l, s.groups = groups, s.affine = affine;
  return s;
}

inline std::vector<NormCase> normCases() {
  using K = NormCase::Kind;
  std::vector<NormCase> cs;
  NormCase a{K::Apply, norm("gn_apply_odd_relu", 3, 12, 75, 4, true)};
  a.spec.post.code = kRelu;
  a.postTag = "relu";
  cs.push_back(a);
  cs.push_back({K::Apply, norm("in_apply_vec4", 2, 6, 64, 6, false)});
  cs.push_back({K::Apply, norm("s2_gn_apply", 128, 64, 258 * 258, 8, true)});
  cs.push_back({K::ScaleShift, norm("gn_scale_shift", 3, 12, 75, 4, true)});
  cs.push_back({K::ScaleShift, norm("s2_gn_scale_shift", 128, 64, 258 * 258, 8, true)});
  NormCase r1{K::Reduce, norm("s1_gn_mean_all", 128, 24, 22 * 30 * 30, 8, true)};
  r1.overChannels = true;
  cs.push_back(r1);
  NormCase r2{K::Reduce, norm("gn_sum_spatial", 3, 12, 75, 3, true)};
  r2.mean = false;
  cs.push_back(r2);
  // Without affine parameters an instance norm's spatial mean is 0: use groups of 4 channels.
  NormCase r3{K::Reduce, norm("gn_mean_spatial_noaffine", 2, 40, 33, 10, false)};
  cs.push_back(r3);
  // The plain plane means and sums a convolution's epilogue gathered, then a chain.
  NormCase r4{K::Reduce, norm("plane_mean_relu", 3, 70, 45, 70, false)};
  r4.normalised = false;
  r4.spec.post.code = kRelu;
  r4.postTag = "relu";
  cs.push_back(r4);
  NormCase r5{K::Reduce, norm("plane_sum_over_channels", 4, 300, 17, 300, false)};
  r5.normalised = false, r5.overChannels = true, r5.mean = false;
  cs.push_back(r5);
  return cs;
}

} // namespace sinter::direct_cases
