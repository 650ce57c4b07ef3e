//===- tests/kernels_generic/Cases.cpp - the generic kernels' test cases ------------===//
//
// The specs behind Cases.h. Sizes are odd on purpose (not multiples of any team or tile) and
// every kernel mode of reduce.cuh and softmax.cuh appears at least once, with and without
// splitting; a few large cases double as timing points against PyTorch.
//
//===--------------------------------------------------------------------------------===//
#include "tests/kernels_generic/Cases.h"

#include "compiler/kernels/Generic.h"
#include "ir/Error.h"

#include <functional>

namespace sinter::testing {

namespace {

using Shape6 = llvm::SmallVector<int64_t, 6>;

/// Load and Post functors with a known Python equivalent.
const FunctorBody kLoadAffine{"return v * 0.5f - 0.25f;"};
const FunctorBody kPostAffine{"return v * 2.0f + 1.0f;"};

std::string pyTuple(llvm::ArrayRef<int64_t> v) {
  std::string s = "(";
  for (int64_t x : v)
    s += std::to_string(x) + ",";
  return s + ")";
}

/// PyTorch's pooled size, ceil_mode folded in.
int64_t poolOut(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
  if (ceil && (out - 1) * s >= in + p)
    --out;
  return out;
}

/// The PyTorch function of a reduction kind.
const char *reduceFunction(ReduceSpec::Kind kind) {
  using K = ReduceSpec::Kind;
  return kind == K::Sum    ? "torch.sum"
         : kind == K::Mean ? "torch.mean"
         : kind == K::Max  ? "torch.amax"
         : kind == K::Min  ? "torch.amin"
                           : "torch.logsumexp";
}

/// The shape a reduction over `dims` of `shape` leaves ([1] when every dim is reduced).
Shape6 keptShape(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> dims) {
  Shape6 kept;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!llvm::is_contained(dims, int64_t(d)))
      kept.push_back(shape[d]);
  if (kept.empty())
    kept.push_back(1);
  return kept;
}

class CaseList {
public:
  llvm::Error add(std::string name, llvm::Expected<KernelSource> kernel,
                  std::vector<CaseBuffer> buffers, std::string reference, std::string bench = "",
                  double tolerance = 1e-5) {
    if (!kernel)
      return withContext(kernel.takeError(), "case " + name);
    GenericCase c;
    c.name = std::move(name);
    c.kernel = std::move(*kernel);
    c.buffers = std::move(buffers);
    c.reference = std::move(reference);
    c.bench = std::move(bench);
    c.tolerance = tolerance;
    for (const WorkspaceNeed &need : c.kernel.workspace) {
      bool bound = false;
      for (const CaseBuffer &b : c.buffers)
        bound |= b.slot == need.slot;
      if (!bound)
        c.buffers.push_back({need.slot, {need.bytes}, "u8", "zero_once"});
    }
    cases.push_back(std::move(c));
    return llvm::Error::success();
  }
  std::vector<GenericCase> cases;
};

CaseBuffer in(int slot, Shape6 shape, std::string init = "randn", double scale = 1.0) {
  return {slot, std::move(shape), "f32", std::move(init), scale};
}
CaseBuffer out(int slot, Shape6 shape) { return {slot, std::move(shape), "f32", "out", 1.0}; }

llvm::Error elementwiseCases(CaseList &list) {
  ElementwiseSpec s;
  s.kernelName = "ew_bcast_odd";
  s.numel = 105;
  s.computeBody = "const float *x = sinter::slot<const float>(b, 0);\n"
                  "    const float *y = sinter::slot<const float>(b, 1);\n"
                  "    return x[i] * y[i % 7] + 1.f;";
  if (auto err = list.add(s.kernelName, emitElementwise(s),
                          {in(0, {5, 3, 7}), in(1, {7}), out(3, {5, 3, 7})}, "in0 * in1 + 1"))
    return err;
  s.kernelName = "ew_vec4_tanh";
  s.numel = 192;
  s.outSlot = 15;
  s.computeBody = "const float *x = sinter::slot<const float>(b, 0);\n"
                  "    const float *y = sinter::slot<const float>(b, 1);\n"
                  "    return tanhf(x[i]) * y[(i / 8) % 6];";
  if (auto err =
          list.add(s.kernelName, emitElementwise(s),
                   {in(0, {4, 6, 8}), in(1, {6, 1}), out(15, {4, 6, 8})}, "torch.tanh(in0) * in1"))
    return err;
  s.kernelName = "ew_relu_big";
  s.numel = int64_t(1) << 24;
  s.outSlot = 3;
  s.computeBody = "return fmaxf(__ldg(sinter::slot<const float>(b, 0) + i), 0.f) * 2.f;";
  return list.add(s.kernelName, emitElementwise(s), {in(0, {s.numel}), out(3, {s.numel})},
                  "torch.relu(in0) * 2", "torch.relu(t0)");
}

llvm::Error reduceCases(CaseList &list) {
  struct R {
    const char *name;
    Shape6 shape;
    Shape6 dims;
    ReduceSpec::Kind kind;
    bool affine;
    const char *init;
    const char *bench;
    double tolerance;
  };
  using K = ReduceSpec::Kind;
  const R cases[] = {
      {"red_sum_inner_small", {37, 19}, {1}, K::Sum, false, "randn", "", 1e-5},
      {"red_sum_inner_rows", {1000, 300}, {1}, K::Sum, true, "randn", "", 1e-5},
      {"red_mean_middle", {7, 33, 5, 9}, {1, 2}, K::Mean, false, "randn", "", 1e-5},
      {"red_max_outer", {129, 31, 3}, {0}, K::Max, false, "randn", "", 0},
      {"red_min_two_groups", {6, 11, 13, 17}, {0, 2}, K::Min, true, "randn", "", 1e-6},
      {"red_lse_inner", {50, 777}, {1}, K::LogSumExp, false, "randn", "", 1e-5},
      {"red_lse_outer", {333, 41}, {0}, K::LogSumExp, true, "randn", "", 1e-5},
      {"red_sum_all_1e7", {3, 3333337}, {0, 1}, K::Sum, false, "rand", "torch.sum(t0)", 1e-5},
      {"red_sum_all_randn_1e7", {2, 5000011}, {0, 1}, K::Sum, false, "randn", "", 1e-4},
      {"red_sum_dim0_4096",
       {4096, 4096},
       {0},
       K::Sum,
       false,
       "randn",
       "torch.sum(t0, dim=0)",
       1e-5},
      {"red_sum_dim1_4096",
       {4096, 4096},
       {1},
       K::Sum,
       false,
       "randn",
       "torch.sum(t0, dim=1)",
       1e-5},
      {"red_mean_split_outer", {100000, 3}, {0}, K::Mean, false, "rand", "", 1e-5},
      // Over the channels of images: blocks of several 32-output groups.
      {"red_sum_channels", {9, 16, 33, 35}, {1}, K::Sum, true, "randn", "", 1e-5},
      {"red_max_channels_128", {128, 16, 32, 32}, {1}, K::Max, false, "randn",
       "torch.amax(t0, dim=1)", 0},
      {"red_max_split_inner", {5, 200003}, {1}, K::Max, false, "randn", "", 0},
      {"red_lse_split_size1", {1, 4, 250007}, {1, 2}, K::LogSumExp, false, "randn", "", 1e-5},
      {"red_sum_size1_dim", {4, 1, 6}, {1}, K::Sum, true, "randn", "", 1e-6},
      {"red_max_nan", {64, 70}, {1}, K::Max, false, "randn_nan", "", 0},
      {"red_min_nan_outer", {70, 64}, {0}, K::Min, false, "randn_nan", "", 0},
      {"red_mean_hw_big",
       {64, 256, 3136},
       {2},
       K::Mean,
       false,
       "randn",
       "torch.mean(t0, dim=2)",
       1e-5},
  };
  for (const R &c : cases) {
    ReduceSpec s;
    s.kernelName = c.name;
    s.inShape = c.shape;
    s.dims = c.dims;
    s.kind = c.kind;
    if (c.affine) {
      s.load = kLoadAffine;
      s.post = kPostAffine;
    }
    Shape6 outShape = keptShape(c.shape, c.dims);
    const char *fn = reduceFunction(c.kind);
    std::string x = c.affine ? "(in0 * 0.5 - 0.25)" : "in0";
    std::string ref = std::string(fn) + "(" + x + ", dim=" + pyTuple(c.dims) + ")";
    if (c.affine)
      ref = ref + " * 2 + 1";
    if (auto err = list.add(c.name, emitReduce(s), {in(0, c.shape, c.init), out(3, outShape)}, ref,
                            c.bench, c.tolerance))
      return err;
  }
  return llvm::Error::success();
}

llvm::Error softmaxCases(CaseList &list) {
  struct S {
    const char *name;
    Shape6 shape;
    int64_t dim;
    bool log, affine;
    const char *bench;
  };
  const S cases[] = {
      // Rows of up to 8192 held in registers (mode 4): scalars on a team of 8 and of 32,
      // float4s with the last step short, float2s, 32 a thread at 8192; longer rows in two
      // passes (mode 0).
      {"sm_row_5", {37, 5}, 1, false, false, ""},
      {"sm_row_33_log", {41, 33}, 1, true, false, ""},
      {"sm_row_2000_affine", {13, 2000}, 1, false, true, ""},
      {"sm_row_1026_log", {7, 1026}, 1, true, true, ""},
      {"sm_row_8192_log", {64, 8192}, 1, true, false, ""},
      {"sm_row_20000_log", {3, 20000}, 1, true, false, ""},
      {"sm_rows_65536x512", {65536, 512}, 1, false, false, "torch.softmax(t0, dim=1)"},
      {"sm_mid", {6, 17, 23}, 1, false, false, ""},
      {"sm_outer_log", {1000, 3, 5}, 0, true, true, ""},
      {"sm_rows_4096", {4096, 4096}, 1, false, false, "torch.softmax(t0, dim=1)"},
      {"sm_cols_4096", {4096, 4096}, 0, false, false, "torch.softmax(t0, dim=0)"},
      // Channels of images: lines held in registers, float4 / float2 / scalar vectors.
      {"sm_channels_vec4", {6, 16, 1028}, 1, false, true, ""},
      {"sm_channels_vec2_log", {5, 24, 1026}, 1, true, false, ""},
      {"sm_channels_odd", {2, 7, 4099}, 1, false, false, ""},
      {"sm_channels_64_log", {3, 64, 2001}, 1, true, true, ""},
      {"sm_channels_128x16x64x64", {128, 16, 64, 64}, 1, false, false, "torch.softmax(t0, dim=1)"},
      // Longer channel lines split over the warps of a block, held in registers: 65 (17 a
      // thread, the last warp's part short), 128 on odd planes, 1000 on 32 warps.
      {"sm_channels_65_split_log", {2, 65, 2100}, 1, true, true, ""},
      {"sm_channels_128_split", {3, 128, 4099}, 1, false, false, ""},
      {"sm_channels_1000_split", {2, 1000, 2050}, 1, false, true, ""},
      {"sm_channels_32x128x129x129",
       {32, 128, 129, 129},
       1,
       false,
       false,
       "torch.softmax(t0, dim=1)"},
  };
  for (const S &c : cases) {
    SoftmaxSpec s;
    s.kernelName = c.name;
    s.shape = c.shape;
    s.dim = c.dim;
    s.log = c.log;
    if (c.affine) {
      s.load = kLoadAffine;
      s.post = kPostAffine;
    }
    std::string x = c.affine ? "(in0 * 0.5 - 0.25)" : "in0";
    std::string ref = std::string(c.log ? "torch.log_softmax(" : "torch.softmax(") + x +
                      ", dim=" + std::to_string(c.dim) + ")" + (c.affine ? " * 2 + 1" : "");
    if (auto err = list.add(c.name, emitSoftmax(s), {in(0, c.shape, "randn", 3.0), out(3, c.shape)},
                            ref, c.bench))
      return err;
  }
  return llvm::Error::success();
}

/// A pooling case: its shape, window and whether Load / Post are kLoadAffine / kPostAffine.
struct PoolCase {
  const char *name;
  bool max;
  Shape6 shape; // [N, C, spatial...]
  Shape6 k, s, p, d;
  bool ceil, countIncludePad, affine;
  const char *bench = "";
};

/// The spec of pool case c (Load set when affine, Post left to the caller) and its output shape.
PoolSpec poolSpecOf(const PoolCase &c, Shape6 &outShape) {
  PoolSpec s;
  s.kernelName = c.name;
  s.max = c.max;
  s.spatialDims = c.shape.size() - 2;
  s.N = c.shape[0];
  s.C = c.shape[1];
  outShape = {c.shape[0], c.shape[1]};
  for (unsigned i = 0; i < s.spatialDims; ++i) {
    unsigned d = 3 - s.spatialDims + i;
    s.in[d] = c.shape[2 + i];
    s.kernel[d] = c.k[i];
    s.stride[d] = c.s[i];
    s.padding[d] = c.p[i];
    s.dilation[d] = c.d[i];
    s.out[d] = poolOut(s.in[d], c.k[i], c.s[i], c.p[i], c.d[i], c.ceil);
    outShape.push_back(s.out[d]);
  }
  s.countIncludePad = c.countIncludePad;
  if (c.affine)
    s.load = kLoadAffine;
  return s;
}

/// PyTorch's pooling of case c over in0 (with its Load when affine), without Post.
std::string poolReference(const PoolCase &c) {
  std::string x = c.affine ? "(in0 * 0.5 - 0.25)" : "in0";
  std::string fn =
      std::string(c.max ? "F.max_pool" : "F.avg_pool") + std::to_string(c.shape.size() - 2) + "d";
  return fn + "(" + x + ", " + pyTuple(c.k) + ", " + pyTuple(c.s) + ", " + pyTuple(c.p) +
         (c.max ? ", dilation=" + pyTuple(c.d) : "") +
         ", ceil_mode=" + (c.ceil ? "True" : "False") +
         (c.max ? ""
                : std::string(", count_include_pad=") + (c.countIncludePad ? "True" : "False")) +
         ")";
}

llvm::Error poolCases(CaseList &list) {
  using P = PoolCase;
  const P cases[] = {
      {"maxpool2d_dil_pad_ceil",
       true,
       {2, 3, 11, 13},
       {3, 2},
       {2, 1},
       {1, 1},
       {2, 1},
       true,
       true,
       false},
      {"maxpool1d_ceil", true, {2, 5, 17}, {4}, {3}, {2}, {1}, true, true, true},
      {"maxpool3d_dil",
       true,
       {1, 2, 7, 8, 9},
       {2, 3, 2},
       {2, 2, 1},
       {1, 1, 0},
       {1, 2, 2},
       false,
       true,
       false},
      {"avgpool2d_cip_ceil",
       false,
       {2, 3, 10, 11},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       true,
       true,
       false},
      {"avgpool2d_nocip_ceil",
       false,
       {2, 3, 10, 11},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       true,
       false,
       false},
      {"avgpool3d_nocip_ceil",
       false,
       {2, 2, 5, 6, 7},
       {2, 3, 3},
       {2, 2, 3},
       {1, 1, 1},
       {1, 1, 1},
       true,
       false,
       false},
      {"avgpool1d_cip", false, {3, 4, 19}, {5}, {2}, {2}, {1}, false, true, true},
      {"maxpool2d_big",
       true,
       {32, 64, 112, 112},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       false,
       true,
       false,
       "F.max_pool2d(t0, 3, 2, 1)"},
  };
  for (const P &c : cases) {
    Shape6 outShape;
    PoolSpec s = poolSpecOf(c, outShape);
    if (c.affine)
      s.post = kPostAffine;
    std::string ref = poolReference(c) + (c.affine ? " * 2 + 1" : "");
    if (auto err = list.add(c.name, emitPool(s), {in(0, c.shape), out(3, outShape)}, ref, c.bench))
      return err;
  }
  return llvm::Error::success();
}

/// Reductions of a pool's result that compute each pooled element from its window (the pooled
/// tensor is never written): both kernel modes, with and without a split, 1-D to 3-D pools.
llvm::Error pooledReduceCases(CaseList &list) {
  using K = ReduceSpec::Kind;
  struct PR {
    PoolCase pool;
    Shape6 dims; // of the pooled tensor
    K kind;
    const char *bench;
  };
  const PR cases[] = {
      {{"poolred_max2d_mean_hw",
        true,
        {3, 5, 18, 22},
        {2, 2},
        {2, 2},
        {0, 0},
        {1, 1},
        false,
        true,
        true},
       {2, 3},
       K::Mean,
       ""},
      {{"poolred_avg3d_sum_c",
        false,
        {2, 6, 5, 6, 7},
        {2, 3, 3},
        {2, 2, 3},
        {1, 1, 1},
        {1, 1, 1},
        true,
        false,
        false},
       {1},
       K::Sum,
       ""},
      {{"poolred_max1d_dil_lse_split", true, {2, 3, 40001}, {3}, {2}, {1}, {2}, false, true, true},
       {2},
       K::LogSumExp,
       ""},
      {{"poolred_max2d_mean_big",
        true,
        {128, 64, 128, 128},
        {2, 2},
        {2, 2},
        {0, 0},
        {1, 1},
        false,
        true,
        false},
       {2, 3},
       K::Mean,
       "torch.mean(F.max_pool2d(t0, 2), dim=(2, 3))"},
  };
  for (const PR &c : cases) {
    Shape6 pooledShape;
    ReduceSpec s;
    s.kernelName = c.pool.name;
    s.pooled = poolSpecOf(c.pool, pooledShape);
    s.inShape = pooledShape;
    s.dims = c.dims;
    s.kind = c.kind;
    if (c.pool.affine) {
      s.load = kLoadAffine;
      s.post = kPostAffine;
    }
    Shape6 outShape = keptShape(pooledShape, c.dims);
    std::string pooled = poolReference(c.pool);
    if (c.pool.affine)
      pooled = "(" + pooled + " * 0.5 - 0.25)";
    std::string ref = std::string(reduceFunction(c.kind)) + "(" + pooled +
                      ", dim=" + pyTuple(c.dims) + ")" + (c.pool.affine ? " * 2 + 1" : "");
    if (auto err = list.add(c.pool.name, emitReduce(s), {in(0, c.pool.shape), out(3, outShape)},
                            ref, c.bench))
      return err;
  }
  return llvm::Error::success();
}

/// Row norms whose rows are a pool's result computed from its windows as a row is loaded:
/// group norms of pooled images (affine index = channel) and a layer norm over the pooled
/// plane, scalar and float4 rows.
llvm::Error pooledNormCases(CaseList &list) {
  struct PN {
    PoolCase pool;
    int64_t groups; ///< 0: a layer norm over each pooled (n, c) plane
    const char *bench;
  };
  const PN cases[] = {
      {{"poolgn_max2d_vec4",
        true,
        {3, 6, 16, 16},
        {2, 2},
        {2, 2},
        {0, 0},
        {1, 1},
        false,
        true,
        true},
       3,
       ""},
      {{"poolgn_avg3d_odd",
        false,
        {2, 4, 7, 9, 5},
        {2, 2, 3},
        {2, 2, 2},
        {1, 0, 1},
        {1, 1, 1},
        true,
        false,
        false},
       2,
       ""},
      {{"poolln_max2d_ceil",
        true,
        {2, 5, 13, 11},
        {3, 3},
        {2, 2},
        {1, 1},
        {1, 1},
        true,
        true,
        false},
       0,
       ""},
      {{"poolgn_max2d_big",
        true,
        {128, 128, 64, 64},
        {2, 2},
        {2, 2},
        {0, 0},
        {1, 1},
        false,
        true,
        false},
       4,
       "F.group_norm(F.max_pool2d(t0, 2), 4, t6, t7, 1e-5)"},
  };
  for (const PN &c : cases) {
    Shape6 pooledShape;
    RowNormSpec s;
    s.kernelName = c.pool.name;
    s.pooled = poolSpecOf(c.pool, pooledShape);
    const int64_t N = pooledShape[0], C = pooledShape[1],
                  L = s.pooled->out[0] * s.pooled->out[1] * s.pooled->out[2];
    s.eps = 1e-5;
    if (c.groups == 0) {
      s.rows = N * C;
      s.width = L;
    } else {
      s.rows = N * c.groups;
      s.width = C / c.groups * L;
      s.affineGroups = c.groups;
      s.affineDiv = L;
    }
    if (c.pool.affine) {
      s.load = kLoadAffine;
      s.post = kPostAffine;
    }
    const int64_t params = c.groups == 0 ? L : C;
    std::vector<CaseBuffer> bufs{in(0, c.pool.shape, "randn", 3.0), out(3, pooledShape),
                                 in(6, {params}), in(7, {params})};
    std::string x = poolReference(c.pool);
    if (c.pool.affine)
      x = "(" + x + " * 0.5 - 0.25)";
    std::string normalized;
    for (size_t d = 2; d < pooledShape.size(); ++d)
      normalized += std::to_string(pooledShape[d]) + ",";
    std::string ref =
        c.groups == 0 ? "F.layer_norm(" + x + ", (" + normalized + "), in6.reshape(" + normalized +
                            "), in7.reshape(" + normalized + "), 1e-5)"
                      : "F.group_norm(" + x + ", " + std::to_string(c.groups) + ", in6, in7, 1e-5)";
    if (c.pool.affine)
      ref = "(" + ref + ") * 2 + 1";
    if (auto err = list.add(c.pool.name, emitRowNorm(s), bufs, ref, c.bench))
      return err;
  }
  return llvm::Error::success();
}

llvm::Error normCases(CaseList &list) {
  struct St {
    const char *name;
    int64_t N, C, L;
    bool affine;
    const char *bench;
  };
  const St stats[] = {{"stats_vec4", 2, 3, 1028, false, ""},
                      {"stats_odd_affine", 3, 5, 999, true, ""},
                      {"stats_split", 1, 4, int64_t(1) << 20, false, ""},
                      {"stats_s0_size", 16, 128, 39304, false, "torch.var_mean(t0, dim=2)"}};
  for (const St &c : stats) {
    ChannelStatsSpec s;
    s.kernelName = c.name;
    s.N = c.N;
    s.C = c.C;
    s.L = c.L;
    if (c.affine)
      s.load = kLoadAffine;
    std::string x = std::string(c.affine ? "(in0 * 0.5 - 0.25)" : "in0") + ".reshape(" +
                    std::to_string(c.N) + ", " + std::to_string(c.C) + ", -1)";
    std::string ref = "torch.stack([" + x + ".sum(-1), (" + x + " ** 2).sum(-1)], -1)";
    if (auto err = list.add(
            c.name, emitChannelStats(s),
            {in(0, {c.N, c.C, c.L}, "randn", 2.0), {4, {c.N * c.C * 2}, "f64", "zero_each", 1.0}},
            ref, c.bench))
      return err;
  }
  // Row norms held in registers: layer norms (affine index = position) and group norms of
  // [N, C, L] (rows = N * groups, affine index = channel), teams from 1 thread to a block.
  struct Rn {
    const char *name;
    int64_t N, C, L, groups; ///< groups == 0: a layer norm over rows of C * L
    bool affine, functors;
    const char *bench;
  };
  const Rn norms[] = {
      {"ln_7_affine", 37, 7, 1, 0, true, false, ""},
      {"ln_100_post", 65, 100, 1, 0, false, true, ""},
      {"ln_5000_affine", 9, 5000, 1, 0, true, false, ""},
      {"ln_30000_wide_team", 3, 30000, 1, 0, true, true, ""},
      {"ln_4096x1024", 4096, 1024, 1, 0, true, false, "F.layer_norm(t0, (1024,), t6, t7, 1e-5)"},
      {"gn2d_groups_of_8", 131, 64, 1, 8, true, false, ""},
      {"gn2d_groups_of_4096", 7, 8192, 1, 2, true, true, ""},
      {"gn_odd_plane", 3, 6, 13, 3, true, false, ""},
      {"gn_1024x8192_16", 1024, 8192, 1, 16, true, false, "F.group_norm(t0, 16, t6, t7, 1e-5)"}};
  for (const Rn &c : norms) {
    RowNormSpec s;
    s.kernelName = c.name;
    s.affine = c.affine;
    s.eps = 1e-5;
    if (c.groups == 0) {
      s.rows = c.N;
      s.width = c.C * c.L;
    } else {
      s.rows = c.N * c.groups;
      s.width = c.C / c.groups * c.L;
      s.affineGroups = c.groups;
      s.affineDiv = c.L;
    }
    if (c.functors) {
      s.load = kLoadAffine;
      s.post = kPostAffine;
    }
    Shape6 shape = c.L == 1 ? Shape6{c.N, c.C} : Shape6{c.N, c.C, c.L};
    std::vector<CaseBuffer> bufs{in(0, shape, "randn", 3.0), out(3, shape)};
    int64_t params = c.groups == 0 ? c.C * c.L : c.C;
    if (c.affine) {
      bufs.push_back(in(6, {params}));
      bufs.push_back(in(7, {params}));
    }
    std::string x = c.functors ? "(in0 * 0.5 - 0.25)" : "in0";
    std::string gb = c.affine ? "in6, in7" : "None, None";
    std::string ref =
        c.groups == 0
            ? "F.layer_norm(" + x + ", (" + std::to_string(s.width) + ",), " + gb + ", 1e-5)"
            : "F.group_norm(" + x + ", " + std::to_string(c.groups) + ", " + gb + ", 1e-5)";
    if (c.functors)
      ref = "(" + ref + ") * 2 + 1";
    if (auto err = list.add(c.name, emitRowNorm(s), bufs, ref, c.bench))
      return err;
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<GenericCase>> genericCases() {
  CaseList list;
  for (auto fn : {elementwiseCases, reduceCases, softmaxCases, poolCases, pooledReduceCases,
                  normCases, pooledNormCases})
    if (llvm::Error err = fn(list))
      return err;
  return std::move(list.cases);
}

} // namespace sinter::testing
