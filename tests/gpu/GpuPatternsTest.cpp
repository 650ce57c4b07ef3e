//===- tests/gpu/GpuPatternsTest.cpp - every fusion pattern on the GPU -------------===//
//
// One graph per fusion pattern and plan variant (stored anchor output vs recomputed anchor,
// statistics-only tails, the GEMM row-norm tail, epilogues with broadcast operands), at
// small odd shapes, against the float64 CPU reference. The test also checks that the
// pattern it means to exercise is the one the compiler chose.
//
//===--------------------------------------------------------------------------------===//
#include "GpuHarness.h"

#include "compiler/Pipeline.h"
#include "ir/Parser.h"

namespace sinter::test {
namespace {

struct PatternCase {
  const char *name;
  const char *pattern; ///< the fusion pattern the first group must use
  int kernels;         ///< launches expected
  const char *sir;
};

const PatternCase kPatternCases[] = {
    // Tensor-core convolutions whose weight rows are not 16-byte pieces as stored (transposed,
    // or K = 3 * 27) first write them with conv_pack.cuh: one launch more.
    {"convT3d_relu_groupnorm_tensorcores", "conv+epilogue+norm+epilogue", 3,
     "graph g(%x: f32[2,40,5,7,6], %w: param f32[40,48,3,3,3], %ga: param f32[48], %be: param "
     "f32[48]) { %y = conv_transpose(%x, %w) %r = relu(%y) %o = group_norm(%r, %ga, %be) "
     "{groups = 6} return %o }"},
    {"convT2d_gelu_groupnorm_recompute", "conv+epilogue+norm+epilogue", 3,
     "graph g(%x: f32[3,16,13,11], %w: param f32[16,2,3,3], %b: param f32[16], %ga: param "
     "f32[16], %be: param f32[16]) { %y = conv_transpose(%x, %w, %b) {groups = 8} %g = gelu(%y) "
     "%o = group_norm(%g, %ga, %be) {groups = 4} %s = sigmoid(%o) return %s }"},
    // 297 tiles per (n, conv group) but 4 of them, too few for conv_mma to finish the norm
    // in its kernel (512; S2's full-size GPU workload test covers that kernel): statistics,
    // then the normalise kernel.
    {"convT2d_gelu_groupnorm_large_planes", "conv+epilogue+norm+epilogue", 2,
     "graph g(%x: f32[2,16,256,256], %w: param f32[16,8,3,3], %b: param f32[16], %ga: param "
     "f32[16], %be: param f32[16]) { %y = conv_transpose(%x, %w, %b) {groups = 2} %g = gelu(%y) "
     "%o = group_norm(%g, %ga, %be) {groups = 4} %s = sigmoid(%o) return %s }"},
    {"conv3d_groupnorm_mean", "conv+epilogue+norm+reduce", 2,
     "graph g(%x: f32[3,3,9,10,11], %w: param f32[12,3,3,3,3], %b: param f32[12], %ga: param "
     "f32[12], %be: param f32[12]) { %y = conv(%x, %w, %b) %n = group_norm(%y, %ga, %be) "
     "{groups = 4} %o = mean(%n) {dims = [1, 2, 3, 4]} return %o }"},
    {"conv3d_tensorcores_groupnorm_mean", "conv+epilogue+norm+reduce", 3,
     "graph g(%x: f32[5,3,7,9,10], %w: param f32[40,3,3,3,3], %b: param f32[40], %ga: param "
     "f32[40], %be: param f32[40]) { %y = conv(%x, %w, %b) %n = group_norm(%y, %ga, %be) "
     "{groups = 8} %o = mean(%n) {dims = [1, 2, 3, 4]} return %o }"},
    {"conv2d_instancenorm_sum_spatial", "conv+epilogue+norm+reduce", 2,
     "graph g(%x: f32[2,5,12,13], %w: param f32[6,5,3,3], %ga: param f32[6], %be: param f32[6]) "
     "{ %y = conv(%x, %w) {padding = 1} %t = tanh(%y) %n = instance_norm(%t, %ga, %be) %o = "
     "sum(%n) {dims = [-1, -2], keepdim = true} return %o }"},
    {"linear_groupnorm_min_add", "linear+epilogue+rownorm+reduce", 2,
     "graph g(%x: f32[37,53], %w: param f32[96,53], %b: param f32[96], %ga: param f32[96], %be: "
     "param f32[96], %bias: param f32[1,96,1,1]) { %y = linear(%x, %w, %b) %n = group_norm(%y, "
     "%ga, %be) {groups = 6} %m = min(%n) {dims = [1], keepdim = true} %o = add(%m, %bias) "
     "return %o }"},
    // A matmul's B is [K, N]; on sm_90a, where the wgmma engine pays for the copy,
    // gemm_transpose.cuh writes it as [N, K] first (one launch more): a product whose B is
    // shared by the batch (one product of 750 rows), one whose B broadcasts over one batch dim
    // only (a batched product of two B matrices), ragged M and N; the row-norm tail with a mean
    // on the copy (64-column groups), and on mma.sync where the product is too small to pay.
    {"matmul_broadcast_b_transposed_relu", "anchor+epilogue", 2,
     "graph g(%x: f32[3,250,516], %w: param f32[516,300]) { %y = matmul(%x, %w) %o = relu(%y) "
     "return %o }"},
    {"bmm_partly_broadcast_b_transposed_gelu", "anchor+epilogue", 2,
     "graph g(%a: f32[2,3,130,260], %b: f32[3,260,200]) { %y = matmul(%a, %b) %o = gelu(%y) "
     "return %o }"},
    {"matmul_groupnorm_gelu_mean_transposed", "linear+epilogue+rownorm+reduce", 2,
     "graph g(%x: f32[256,1024], %w: param f32[1024,512], %ga: param f32[512], %be: param "
     "f32[512]) { %y = matmul(%x, %w) %n = group_norm(%y, %ga, %be) {groups = 8} %g = gelu(%n) "
     "%o = mean(%g) {dims = [1]} return %o }"},
    {"matmul_groupnorm_mean_small", "linear+epilogue+rownorm+reduce", 1,
     "graph g(%x: f32[70,132], %w: param f32[132,96], %ga: param f32[96], %be: param f32[96]) "
     "{ %y = matmul(%x, %w) %n = group_norm(%y, %ga, %be) {groups = 6} %o = mean(%n) {dims = "
     "[-1], keepdim = true} return %o }"},
    {"linear_gelu_broadcast_epilogue", "anchor+epilogue", 1,
     "graph g(%x: f32[33,70], %w: param f32[41,70], %s: param f32[41]) { %y = linear(%x, %w) %g "
     "= gelu(%y) %o = mul(%g, %s) return %o }"},
    {"conv_batchnorm_relu_epilogue", "anchor+epilogue", 1,
     "graph g(%x: f32[2,3,17,19], %w: param f32[8,3,3,3], %m: param f32[8], %v: param f32[8], "
     "%ga: param f32[8], %be: param f32[8]) { %y = conv(%x, %w) {stride = 2} %n = batch_norm(%y, "
     "%m, %v, %ga, %be) %o = relu(%n) return %o }"},
    {"elementwise_tree_broadcast", "elementwise", 1,
     "graph g(%x: f32[4,9,13], %c: param f32[9,1]) { %a = mul(%x, %c) %b = exp(%x) %s = add(%a, "
     "%b) %o = leaky_relu(%s) return %o }"},
    {"reduction_epilogue", "reduction+epilogue", 1,
     "graph g(%x: f32[6,70,9]) { %s = sum(%x) {dims = [1]} %o = relu(%s) return %o }"},
    {"softmax_epilogue", "softmax+epilogue", 1,
     "graph g(%x: f32[5,33]) { %s = softmax(%x) {dim = 1} %o = mul(%s, 3.0) return %o }"},
    {"pool_epilogue", "pool+epilogue", 1,
     "graph g(%x: f32[2,3,11,12]) { %p = avg_pool(%x) {kernel_size = 2} %o = sigmoid(%p) return "
     "%o }"},
    // conv_direct's tails: a pool whose chain reads a tensor of the pooled plane (ceil_mode's
    // clipped windows), a softmax over the channels of a stride-2 transposed convolution (whole
    // 2x2 phases a thread) whose chain reads per-channel and per-position tensors, and a
    // 1-D log_softmax before an average over windows of 3.
    {"conv_relu_maxpool_ceil_broadcast", "conv+epilogue+pool+epilogue", 1,
     "graph g(%x: f32[2,3,13,15], %w: param f32[8,3,3,3], %b: param f32[8], %t: param f32[7,8]) "
     "{ %y = conv(%x, %w, %b) {padding = 1} %r = relu(%y) %p = max_pool(%r) {kernel_size = 2, "
     "ceil_mode = true} %o = add(%p, %t) return %o }"},
    {"convT_s2_softmax_broadcast", "conv+epilogue+softmax+epilogue", 1,
     "graph g(%x: f32[2,3,7,9], %w: param f32[3,8,3,3], %c: param f32[8,1,1], %t: param "
     "f32[13,17]) { %y = conv_transpose(%x, %w) {stride = 2, padding = 1} %s = softmax(%y) {dim "
     "= 1} %m = mul(%s, %c) %o = add(%m, %t) return %o }"},
    {"conv1d_logsoftmax_avgpool3", "conv+epilogue+softmax+epilogue+pool+epilogue", 1,
     "graph g(%x: f32[3,4,41], %w: param f32[6,4,3]) { %y = conv(%x, %w) %s = log_softmax(%y) "
     "{dim = 1} %p = avg_pool(%s) {kernel_size = 3, ceil_mode = true} %o = tanh(%p) return %o }"},
    // conv_igemm's input-box engine reduces over the channels in its epilogue (the weight rows
    // first: two launches): a logsumexp kept as a dim then a tensor of the plane; a min without
    // keepdim over 48 of a 64-wide tile's channels, the chain after it reading an [H, W]
    // tensor; a stride-1 transposed mean; a 3-D max over dim -4; a 1-D sum of 128 channels.
    {"conv_logsumexp_c_relu_add", "conv+epilogue+creduce+epilogue", 2,
     "graph g(%x: f32[3,16,21,23], %w: param f32[64,16,3,3], %b: param f32[64], %t: param "
     "f32[1,21,23]) { %y = conv(%x, %w, %b) {padding = 1} %l = logsumexp(%y) {dims = [1], "
     "keepdim = true} %r = relu(%l) %o = add(%r, %t) return %o }"},
    {"conv_gelu_min_c_tanh_mul", "conv+epilogue+creduce+epilogue", 2,
     "graph g(%x: f32[2,16,19,26], %w: param f32[48,16,3,3], %t: param f32[17,24]) { %y = "
     "conv(%x, %w) %g = gelu(%y) %m = min(%g) {dims = [1]} %a = tanh(%m) %o = mul(%a, %t) "
     "return %o }"},
    {"convT_mean_c_sigmoid", "conv+epilogue+creduce+epilogue", 2,
     "graph g(%x: f32[2,32,9,11], %w: param f32[32,64,3,3], %b: param f32[64]) { %y = "
     "conv_transpose(%x, %w, %b) {padding = 1} %m = mean(%y) {dims = [1], keepdim = true} %o = "
     "sigmoid(%m) return %o }"},
    {"conv3d_scale_max_c_sub", "conv+epilogue+creduce+epilogue", 2,
     "graph g(%x: f32[2,16,7,9,10], %w: param f32[32,16,3,3,3], %b: param f32[32]) { %y = "
     "conv(%x, %w, %b) {padding = 1} %s = mul(%y, 0.5) %m = max(%s) {dims = [-4]} %o = sub(%m, "
     "1.0) return %o }"},
    {"conv1d_sum_c_128", "conv+epilogue+creduce+epilogue", 2,
     "graph g(%x: f32[3,32,40], %w: param f32[128,32,5], %b: param f32[128]) { %y = conv(%x, "
     "%w, %b) {padding = 2} %s = sum(%y) {dims = [1], keepdim = true} return %s }"},
    // A strided transposed convolution that conv_shift's phase walk would run leaves it for
    // the input-box engine's phase kernels when a reduction over the channels follows (the
    // pack kernel, then one kernel a phase).
    {"convT_s2_wgmma_min_c_gelu", "conv+epilogue+creduce+epilogue", 5,
     "graph g(%x: f32[2,64,9,11], %w: param f32[64,128,3,3], %b: param f32[128]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, padding = 1, output_padding = 1} %m = min(%y) "
     "{dims = [1], keepdim = true} %o = gelu(%m) return %o }"},
    // conv_direct reduces over the channels one thread holds: a sum whose chain reads an
    // [H, W] tensor, a logsumexp over a stride-2 transposed convolution's whole 2x2 phases,
    // and a 3-D min on clamped edge tiles.
    {"conv_direct_relu_sum_c_mul", "conv+epilogue+creduce+epilogue", 1,
     "graph g(%x: f32[2,3,13,15], %w: param f32[6,3,3,3], %b: param f32[6], %t: param "
     "f32[13,15]) { %y = conv(%x, %w, %b) {padding = 1} %r = relu(%y) %m = sum(%r) {dims = [1]} "
     "%o = mul(%m, %t) return %o }"},
    {"convT_s2_direct_logsumexp_c_tanh", "conv+epilogue+creduce+epilogue", 1,
     "graph g(%x: f32[2,3,7,9], %w: param f32[3,8,3,3], %b: param f32[8]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, padding = 1} %l = logsumexp(%y) {dims = [1], "
     "keepdim = true} %o = tanh(%l) return %o }"},
    {"conv3d_direct_min_c_clamped", "conv+epilogue+creduce+epilogue", 1,
     "graph g(%x: f32[2,3,6,8,9], %w: param f32[5,3,3,3,3]) { %y = conv(%x, %w) %m = min(%y) "
     "{dims = [-4]} %o = add(%m, 0.5) return %o }"},
    // conv_igemm's input-box engine pools in its epilogue on tiles of whole windows (the
    // weight rows first: two launches): 2x2 max in ceil mode, the chain after it reading a
    // tensor of the pooled plane (4 x 32 tiles); a 4x4 average after a chain that reads a
    // tensor of y's shape and a per-channel one; a 1-D max over 8 in ceil mode (1 x 128
    // tiles, alternating warpgroups); a grouped convolution's ceil-mode 2x2 average; 4x2
    // windows in ceil mode; 2x2 windows of an 8-wide plane (16 x 8 tiles).
    {"conv_relu_maxpool2_ceil_input_box", "conv+epilogue+pool+epilogue", 2,
     "graph g(%x: f32[2,16,21,23], %w: param f32[64,16,3,3], %b: param f32[64], %t: param "
     "f32[11,12]) { %y = conv(%x, %w, %b) {padding = 1} %r = relu(%y) %p = max_pool(%r) "
     "{kernel_size = 2, ceil_mode = true} %o = add(%p, %t) return %o }"},
    {"conv_residual_gelu_avgpool4_input_box", "conv+epilogue+pool+epilogue", 2,
     "graph g(%x: f32[2,16,30,34], %w: param f32[64,16,3,3], %res: f32[2,64,28,32], %c: param "
     "f32[64,1,1]) { %y = conv(%x, %w) %a = add(%y, %res) %m = mul(%a, %c) %g = gelu(%m) %p = "
     "avg_pool(%g) {kernel_size = 4} %o = sigmoid(%p) return %o }"},
    {"conv1d_maxpool8_ceil_input_box", "conv+epilogue+pool+epilogue", 2,
     "graph g(%x: f32[3,32,100], %w: param f32[128,32,5], %b: param f32[128]) { %y = conv(%x, "
     "%w, %b) {padding = 2} %p = max_pool(%y) {kernel_size = 8, ceil_mode = true} %o = tanh(%p) "
     "return %o }"},
    {"conv_grouped_avgpool2_ceil_input_box", "conv+epilogue+pool+epilogue", 2,
     "graph g(%x: f32[2,32,19,21], %w: param f32[64,16,3,3], %b: param f32[64]) { %y = conv(%x, "
     "%w, %b) {padding = 1, groups = 2} %s = sub(%y, 0.5) %p = avg_pool(%s) {kernel_size = 2, "
     "ceil_mode = true} return %p }"},
    {"conv_hardswish_maxpool4x2_ceil_input_box", "conv+epilogue+pool+epilogue", 2,
     "graph g(%x: f32[2,16,23,21], %w: param f32[96,16,3,3]) { %y = conv(%x, %w) {padding = 1} "
     "%h = hardswish(%y) %p = max_pool(%h) {kernel_size = [4, 2], ceil_mode = true} %o = "
     "mish(%p) return %o }"},
    {"conv_narrow_maxpool2_input_box", "conv+epilogue+pool+epilogue", 2,
     "graph g(%x: f32[2,16,30,8], %w: param f32[64,16,3,3], %b: param f32[64]) { %y = conv(%x, "
     "%w, %b) {padding = 1} %p = max_pool(%y) {kernel_size = 2} %o = relu(%p) return %o }"},
    // A standalone group or instance norm whose chain flows into a reduction: statistics, the
    // per-(n, c) scale and shift, then a reduction that normalises as it loads (the chain
    // reading the norm's own input and a per-channel tensor; a mean over the spatial dims).
    {"groupnorm_residual_logsumexp_c", "norm+epilogue+reduce", 3,
     "graph g(%x: f32[3,8,5,7], %ga: param f32[8], %be: param f32[8], %t: param f32[8,1,1]) { "
     "%n = group_norm(%x, %ga, %be) {groups = 4} %a = tanh(%n) %r = add(%a, %x) %m = mul(%r, "
     "%t) %o = logsumexp(%m) {dims = [1], keepdim = true} %s = relu(%o) return %s }"},
    // The same after a convolution whose output is also the residual: the convolution gathers
    // the statistics as it stores y, so no pass of their own.
    {"conv_groupnorm_residual_max_c", "norm+epilogue+reduce", 3,
     "graph g(%x: f32[2,3,11,13], %w: param f32[8,3,3,3], %b: param f32[8], %ga: param f32[8], "
     "%be: param f32[8]) { %y = conv(%x, %w, %b) {padding = 1} %n = group_norm(%y, %ga, %be) "
     "{groups = 2} %g = gelu(%n) %r = add(%g, %y) %o = max(%r) {dims = [1]} return %o }"},
    {"instancenorm_mean_spatial", "norm+epilogue+reduce", 3,
     "graph g(%x: f32[2,6,4,5,3]) { %n = instance_norm(%x) %e = exp(%n) %o = mean(%e) {dims = "
     "[2, 3, 4]} return %o }"},
    // A sum or mean over every spatial dim (and optionally C) after a convolution: its
    // epilogue adds up each (n, c) plane (no y stored), then norm_reduce.cuh turns the sums
    // into the output and runs the chain after the reduction. On conv_direct (a chain reading
    // a per-channel tensor), mma.sync (strided, keepdim), the input-box engine, conv_mma
    // (groups of 8 channels, over C too), conv_shift (128 -> 128) and a strided transposed 3-D
    // convolution by output phase.
    {"conv_direct_relu_sum_hw_add_tanh", "conv+epilogue+sreduce+epilogue", 2,
     "graph g(%x: f32[2,3,11,13], %w: param f32[8,3,3,3], %b: param f32[8], %t: param f32[8]) "
     "{ %y = conv(%x, %w, %b) %r = relu(%y) %s = sum(%r) {dims = [2, 3]} %a = add(%s, %t) %o = "
     "tanh(%a) return %o }"},
    // Stride 2 on the input-box engine: its weight rows, the conv with the plane sums, the
    // mean.
    {"conv_s2_hardsigmoid_mean_keepdim_mul", "conv+epilogue+sreduce+epilogue", 3,
     "graph g(%x: f32[2,16,19,21], %w: param f32[32,16,3,3], %b: param f32[32], %t: param "
     "f32[32,1,1]) { %y = conv(%x, %w, %b) {stride = 2, padding = 1} %h = hardsigmoid(%y) %m = "
     "mean(%h) {dims = [-1, -2], keepdim = true} %o = mul(%m, %t) return %o }"},
    {"conv_wgmma_gelu_mean_hw", "conv+epilogue+sreduce+epilogue", 3,
     "graph g(%x: f32[3,16,20,24], %w: param f32[64,16,3,3], %b: param f32[64]) { %y = conv(%x, "
     "%w, %b) {padding = 1} %g = gelu(%y) %m = mean(%g) {dims = [2, 3]} return %m }"},
    {"convT_grouped_tanh_sum_all", "conv+epilogue+sreduce+epilogue", 2,
     "graph g(%x: f32[2,32,17,15], %w: param f32[32,8,3,3], %b: param f32[32]) { %y = "
     "conv_transpose(%x, %w, %b) {groups = 4} %t = tanh(%y) %s = sum(%t) {dims = [1, 2, 3]} "
     "return %s }"},
    // 130-wide output rows: input boxes of 4.3 floats a channel per output, so conv_shift
    // (on 22-wide rows the input-box engine takes it).
    {"conv_shift_wide_mean_relu", "conv+epilogue+sreduce+epilogue", 4,
     "graph g(%x: f32[2,128,20,132], %w: param f32[128,128,3,3], %b: param f32[128]) { %y = "
     "conv(%x, %w, %b) %m = mean(%y) {dims = [2, 3]} %o = relu(%m) return %o }"},
    {"convT3d_s2_relu_mean_dhw", "conv+epilogue+sreduce+epilogue", 10,
     "graph g(%x: f32[2,32,5,6,7], %w: param f32[32,32,3,3,3], %b: param f32[32]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, padding = 1} %r = relu(%y) %m = mean(%r) {dims = "
     "[2, 3, 4]} return %m }"},
    // A norm whose chain ends in a reduction over the planes leaves the convolution (which
    // gathers its statistics as it stores y) and normalises as the reduction reads y; the
    // statistics-only tail of a mean of the normalised planes takes a chain after it.
    {"conv_instancenorm_lrelu_max_hw", "norm+epilogue+reduce", 3,
     "graph g(%x: f32[2,5,14,15], %w: param f32[12,5,4,4]) { %y = conv(%x, %w) {stride = 2, "
     "padding = 1} %n = instance_norm(%y) %a = leaky_relu(%n) {negative_slope = 0.2} %m = "
     "max(%a) {dims = [2, 3]} return %m }"},
    {"conv3d_groupnorm_mean_exp", "conv+epilogue+norm+reduce", 2,
     "graph g(%x: f32[3,3,9,10,11], %w: param f32[12,3,3,3,3], %b: param f32[12], %ga: param "
     "f32[12], %be: param f32[12]) { %y = conv(%x, %w, %b) %n = group_norm(%y, %ga, %be) "
     "{groups = 4} %m = mean(%n) {dims = [2, 3, 4], keepdim = true} %o = exp(%m) return %o }"},
    // A softmax over the channels in the wgmma input-box engine's epilogue (every channel in
    // one tile column): a chain reading a per-channel tensor, a 1-D log_softmax on rows of 1000
    // (one-row tiles, the last of each row partial), and a stride-2 transposed 3-D convolution
    // by output phase. A 1-D convolution on one-row tiles with statistics (group norm).
    {"conv_wgmma_softmax_c_mul", "conv+epilogue+softmax+epilogue", 2,
     "graph g(%x: f32[2,16,19,23], %w: param f32[48,16,3,3], %b: param f32[48], %t: param "
     "f32[48,1,1]) { %y = conv(%x, %w, %b) {padding = 1} %r = relu(%y) %s = softmax(%r) {dim = "
     "1} %o = mul(%s, %t) return %o }"},
    {"conv1d_rows_log_softmax_tanh", "conv+epilogue+softmax+epilogue", 2,
     "graph g(%x: f32[3,16,1000], %w: param f32[32,16,7], %b: param f32[32]) { %y = conv(%x, %w, "
     "%b) {padding = 3} %s = log_softmax(%y) {dim = -2} %o = tanh(%s) return %o }"},
    {"convT3d_s2_wgmma_softmax_c", "conv+epilogue+softmax+epilogue", 9,
     "graph g(%x: f32[2,32,5,6,7], %w: param f32[32,32,3,3,3], %b: param f32[32]) { %y = "
     "conv_transpose(%x, %w, %b) {stride = 2, padding = 1} %s = softmax(%y) {dim = 1} return %s }"},
    {"conv1d_rows_groupnorm", "conv+epilogue+norm+epilogue", 3,
     "graph g(%x: f32[2,16,1500], %w: param f32[64,16,5], %b: param f32[64], %ga: param f32[64], "
     "%be: param f32[64]) { %y = conv(%x, %w, %b) {padding = 2} %n = group_norm(%y, %ga, %be) "
     "{groups = 8} return %n }"},
    // A sum or mean over a product's features after per-feature affine ops becomes a product
    // with the weight's feature sum (canonicalize, compiler/FoldReduce.h; at sizes where the
    // model says it pays, about 2e9 multiply-adds): a linear layer with a
    // per-feature subtraction and a kept dim (the feature sum, the bias's sum, the [M, 1]
    // product, then the logsumexp), and a batched matmul by a [K, N] matrix with tensors and
    // numbers on both sides, its dim dropped (a vector product, written straight into the
    // result that views it: no copy kernel).
    {"linear_sub_mean_folded", "anchor+epilogue", 5,
     "graph g(%x: f32[2048,1000], %w: param f32[1030,1000], %b: param f32[1030], %s: param "
     "f32[1030]) { %y = linear(%x, %w, %b) %d = sub(%y, %s) %m = mean(%d) {dims = [1], keepdim = "
     "true} %l = logsumexp(%m) {dims = [1], keepdim = true} return %l }"},
    {"matmul_affine_sum_folded", "anchor+epilogue", 7,
     "graph g(%a: f32[4,500,1030], %b: f32[1030,1040], %s: param f32[1040], %t: param "
     "f32[1,1040]) { %y = matmul(%a, %b) %p = mul(%s, %y) %q = add(%p, 1.5) %r = div(%q, %t) %n "
     "= neg(%r) %o = sum(%n) {dims = [-1]} return %o }"},
    // The same for a transposed convolution without padding and a mean over its planes:
    // the input's plane sums times the weight's tap sums (a [N, Cin] x [Cin, Cout] product).
    {"convT_gap_bias_lse_folded", "anchor+epilogue", 6,
     "graph g(%x: f32[8,64,64,64], %w: param f32[64,128,3,3], %b: param f32[128], %c: param "
     "f32[128,1,1]) { %y = conv_transpose(%x, %w, %b) %m = mean(%y) {dims = [2, 3], keepdim = "
     "true} %a = add(%m, %c) %l = logsumexp(%a) {dims = [1], keepdim = true} %t = sum(%l) {dims "
     "= [2, 3]} %o = mul(%t, 10.0) return %o }"},
    {"standalone_groupnorm_epilogue", "norm+epilogue", 2,
     "graph g(%x: f32[2,8,5,7], %ga: param f32[8], %be: param f32[8]) { %e = exp(%x) %n = "
     "group_norm(%e, %ga, %be) {groups = 2} %o = tanh(%n) return %o }"},
};

/// Test logs name the case instead of dumping its bytes.
void PrintTo(const PatternCase &c, std::ostream *os) { *os << c.name; }

class GpuPattern : public ::testing::TestWithParam<PatternCase> {};

TEST_P(GpuPattern, FusesAsExpectedAndMatchesReference) {
  const PatternCase &c = GetParam();
  // The plan needs no GPU: check it everywhere.
  auto graphs = parseSir(c.sir, "pattern.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  auto result = runPipeline(graphs->front(), {});
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  bool found = false;
  for (const FusionGroup &g : result->fusion.groups)
    found |= g.pattern == c.pattern;
  EXPECT_TRUE(found) << "no group used pattern " << c.pattern;
  EXPECT_EQ(int(result->plan.kernels.size()), c.kernels);

  SINTER_REQUIRE_GPU();
  expectMatchesReference(c.sir, 21);
  expectMatchesReference(c.sir, 4242);
}

INSTANTIATE_TEST_SUITE_P(Patterns, GpuPattern, ::testing::ValuesIn(kPatternCases),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
} // namespace sinter::test
