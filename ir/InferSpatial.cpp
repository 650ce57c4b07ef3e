//===- ir/InferSpatial.cpp - shape inference for anchors, pools and norms ----------===//
//
// The ops whose shapes need more than broadcasting or dropping dims: convolutions and
// transposed convolutions (rank-generic, with PyTorch's output-size formulas), linear and
// matmul (torch.matmul's promotion of 1-D operands and batch broadcasting), max/avg pools
// (PyTorch's ceil_mode rule that the last window must start inside the input or its left
// padding, and its limit of padding to half the kernel size) and the four norms (the shapes
// their affine and running-stat operands must have). ir/Verifier.cpp has already checked operand
// counts, attribute kinds and dtypes.
//
//===--------------------------------------------------------------------------------===//
#include "ir/InferCommon.h"

namespace sinter::infer {
namespace {

/// conv, conv_transpose and pools take x of rank 3, 4 or 5 (1-, 2- or 3-D spatial).
llvm::Error checkSpatialRank(const Ctx &c, const TensorType &x) {
  if (x.rank() < 3 || x.rank() > 5)
    return c.fail("expected x of rank 3, 4 or 5, got rank " + llvm::Twine(x.rank()));
  return llvm::Error::success();
}

/// The weight of a convolution has x's rank: [C, C', k...].
llvm::Error checkWeightRank(const Ctx &c, const TensorType &x, const TensorType &w) {
  if (w.rank() != x.rank())
    return c.fail("expected w of rank " + llvm::Twine(x.rank()) + " like x, got rank " +
                  llvm::Twine(w.rank()));
  return llvm::Error::success();
}

llvm::Expected<int64_t> groupsAttr(const Ctx &c) {
  int64_t groups = c.op.getInt("groups");
  if (groups < 1)
    return c.fail("groups must be >= 1, got " + llvm::Twine(groups));
  return groups;
}

/// Per-spatial-dim attributes of a convolution, already range-checked.
struct ConvAttrs {
  IntList stride, padding, dilation, outputPadding;
  int64_t groups = 1;
};

llvm::Expected<ConvAttrs> convAttrs(const Ctx &c, unsigned nd, bool transposed) {
  ConvAttrs a;
  llvm::Expected<IntList> stride = spatialAttr(c, "stride", nd, 1);
  if (!stride)
    return stride.takeError();
  llvm::Expected<IntList> padding = spatialAttr(c, "padding", nd, 0);
  if (!padding)
    return padding.takeError();
  if (transposed) {
    llvm::Expected<IntList> op = spatialAttr(c, "output_padding", nd, 0);
    if (!op)
      return op.takeError();
    a.outputPadding = *op;
  }
  llvm::Expected<IntList> dilation = spatialAttr(c, "dilation", nd, 1);
  if (!dilation)
    return dilation.takeError();
  llvm::Expected<int64_t> groups = groupsAttr(c);
  if (!groups)
    return groups.takeError();
  a.stride = *stride;
  a.padding = *padding;
  a.dilation = *dilation;
  a.groups = *groups;
  return a;
}

} // namespace

llvm::Expected<TensorType> inferConv(const Ctx &c) {
  const TensorType &x = c.type(0), &w = c.type(1);
  if (llvm::Error e = checkSpatialRank(c, x))
    return e;
  if (llvm::Error e = checkWeightRank(c, x, w))
    return e;
  unsigned nd = x.rank() - 2;
  llvm::Expected<ConvAttrs> a = convAttrs(c, nd, /*transposed=*/false);
  if (!a)
    return a.takeError();
  int64_t cout = w.shape[0];
  if (cout % a->groups != 0)
    return c.fail("groups=" + llvm::Twine(a->groups) +
                  " does not divide Cout=" + llvm::Twine(cout) + " (w[0])");
  if (x.shape[1] != w.shape[1] * a->groups)
    return c.fail("x has " + llvm::Twine(x.shape[1]) + " channels but w expects " +
                  llvm::Twine(w.shape[1] * a->groups) + " (w[1]=" + llvm::Twine(w.shape[1]) +
                  " times groups=" + llvm::Twine(a->groups) + ")");
  if (c.numOperands() == 3)
    if (llvm::Error e = expectShape(c, 2, "bias", {cout}))
      return e;
  Shape out{x.shape[0], cout};
  for (unsigned i = 0; i < nd; ++i) {
    int64_t in = x.shape[2 + i], k = w.shape[2 + i];
    int64_t s = a->stride[i], p = a->padding[i], d = a->dilation[i];
    int64_t o = floorDiv(in + 2 * p - d * (k - 1) - 1, s) + 1;
    if (o < 1)
      return c.fail("output size " + llvm::Twine(o) + " in spatial dim " + llvm::Twine(2 + i) +
                    " (input " + llvm::Twine(in) + ", kernel " + llvm::Twine(k) + ", padding " +
                    llvm::Twine(p) + ", dilation " + llvm::Twine(d) + ", stride " + llvm::Twine(s) +
                    ")");
    out.push_back(o);
  }
  return TensorType(x.dtype, out);
}

llvm::Expected<TensorType> inferConvTranspose(const Ctx &c) {
  const TensorType &x = c.type(0), &w = c.type(1);
  if (llvm::Error e = checkSpatialRank(c, x))
    return e;
  if (llvm::Error e = checkWeightRank(c, x, w))
    return e;
  unsigned nd = x.rank() - 2;
  llvm::Expected<ConvAttrs> a = convAttrs(c, nd, /*transposed=*/true);
  if (!a)
    return a.takeError();
  // The weight is [Cin, Cout/groups, k...].
  int64_t cin = w.shape[0];
  if (cin % a->groups != 0)
    return c.fail("groups=" + llvm::Twine(a->groups) + " does not divide Cin=" + llvm::Twine(cin) +
                  " (w[0])");
  if (x.shape[1] != cin)
    return c.fail("x has " + llvm::Twine(x.shape[1]) + " channels but w expects " +
                  llvm::Twine(cin) + " (w[0])");
  int64_t cout = w.shape[1] * a->groups;
  if (c.numOperands() == 3)
    if (llvm::Error e = expectShape(c, 2, "bias", {cout}))
      return e;
  Shape out{x.shape[0], cout};
  for (unsigned i = 0; i < nd; ++i) {
    int64_t in = x.shape[2 + i], k = w.shape[2 + i];
    int64_t s = a->stride[i], p = a->padding[i], d = a->dilation[i], op = a->outputPadding[i];
    // PyTorch: output padding must be smaller than either stride or dilation.
    if (op >= s && op >= d)
      return c.fail("output_padding=" + llvm::Twine(op) +
                    " must be smaller than stride=" + llvm::Twine(s) +
                    " or dilation=" + llvm::Twine(d) + " in spatial dim " + llvm::Twine(2 + i));
    int64_t o = (in - 1) * s - 2 * p + d * (k - 1) + op + 1;
    if (o < 1)
      return c.fail("output size " + llvm::Twine(o) + " in spatial dim " + llvm::Twine(2 + i) +
                    " (input " + llvm::Twine(in) + ", kernel " + llvm::Twine(k) + ", padding " +
                    llvm::Twine(p) + ", output_padding " + llvm::Twine(op) + ", dilation " +
                    llvm::Twine(d) + ", stride " + llvm::Twine(s) + ")");
    out.push_back(o);
  }
  return TensorType(x.dtype, out);
}

llvm::Expected<TensorType> inferLinear(const Ctx &c) {
  const TensorType &x = c.type(0), &w = c.type(1);
  if (x.rank() < 1)
    return c.fail("expected x of rank >= 1, got rank 0");
  if (w.rank() != 2)
    return c.fail("expected w of rank 2 ([N, K]), got rank " + llvm::Twine(w.rank()));
  int64_t n = w.shape[0], k = w.shape[1];
  if (x.shape.back() != k)
    return c.fail("x has K=" + llvm::Twine(x.shape.back()) +
                  " in its last dim but w expects K=" + llvm::Twine(k) + " (w[1])");
  if (c.numOperands() == 3)
    if (llvm::Error e = expectShape(c, 2, "bias", {n}))
      return e;
  Shape out(x.shape.begin(), x.shape.end() - 1);
  out.push_back(n);
  return TensorType(x.dtype, out);
}

llvm::Expected<TensorType> inferMatmul(const Ctx &c) {
  const TensorType &a = c.type(0), &b = c.type(1);
  if (a.rank() == 0 || b.rank() == 0)
    return c.fail("expected operands of rank >= 1, got ranks " + llvm::Twine(a.rank()) + " and " +
                  llvm::Twine(b.rank()));
  // torch.matmul: a 1-D a is a row [1, k], a 1-D b a column [k, 1]; the added dim is
  // removed from the result. Dims before the last two broadcast.
  Shape pa = a.shape, pb = b.shape;
  if (a.rank() == 1)
    pa.insert(pa.begin(), 1);
  if (b.rank() == 1)
    pb.push_back(1);
  int64_t ka = pa.back(), kb = pb[pb.size() - 2];
  if (ka != kb)
    return c.fail("contracted dims differ: a " + shapeStr(a.shape) + " has " + llvm::Twine(ka) +
                  ", b " + shapeStr(b.shape) + " has " + llvm::Twine(kb));
  llvm::ArrayRef<int64_t> batchA = llvm::ArrayRef<int64_t>(pa).drop_back(2);
  llvm::ArrayRef<int64_t> batchB = llvm::ArrayRef<int64_t>(pb).drop_back(2);
  std::optional<Shape> batch = broadcastShapes(batchA, batchB);
  if (!batch)
    return c.fail("batch dims " + shapeStr(batchA) + " and " + shapeStr(batchB) +
                  " do not broadcast");
  Shape out = *batch;
  if (a.rank() > 1)
    out.push_back(pa[pa.size() - 2]);
  if (b.rank() > 1)
    out.push_back(pb.back());
  return TensorType(a.dtype, out);
}

llvm::Expected<TensorType> inferPool(const Ctx &c) {
  const TensorType &x = c.type(0);
  if (llvm::Error e = checkSpatialRank(c, x))
    return e;
  unsigned nd = x.rank() - 2;
  bool isMax = c.op.kind == OpKind::MaxPool;
  llvm::Expected<IntList> kernel = spatialAttr(c, "kernel_size", nd, 1);
  if (!kernel)
    return kernel.takeError();
  llvm::Expected<IntList> stride = spatialAttr(c, "stride", nd, 1);
  if (!stride)
    return stride.takeError();
  llvm::Expected<IntList> padding = spatialAttr(c, "padding", nd, 0);
  if (!padding)
    return padding.takeError();
  IntList dilation(nd, 1);
  if (isMax) {
    llvm::Expected<IntList> d = spatialAttr(c, "dilation", nd, 1);
    if (!d)
      return d.takeError();
    dilation = *d;
  }
  bool ceilMode = c.op.getBool("ceil_mode");
  Shape out(x.shape.begin(), x.shape.begin() + 2);
  for (unsigned i = 0; i < nd; ++i) {
    int64_t in = x.shape[2 + i], k = (*kernel)[i], s = (*stride)[i], p = (*padding)[i],
            d = dilation[i];
    // PyTorch's shape checks (pool2d/pool3d_shape_check, max_pool1d) compare the padding
    // with half the kernel size, not the dilated extent, so dilation does not relax it.
    if (p > k / 2)
      return c.fail("padding=" + llvm::Twine(p) + " must be at most half of kernel_size=" +
                    llvm::Twine(k) + " in spatial dim " + llvm::Twine(2 + i));
    // F.avg_pool3d (pool3d_shape_check with check_input_size) alone also wants the
    // unpadded input to cover the kernel.
    if (!isMax && nd == 3 && in < k)
      return c.fail("input size " + llvm::Twine(in) + " is smaller than kernel_size=" +
                    llvm::Twine(k) + " in spatial dim " + llvm::Twine(2 + i) +
                    " (3-D average pooling needs the kernel inside the unpadded input)");
    int64_t o = floorDiv(in + 2 * p - d * (k - 1) - 1 + (ceilMode ? s - 1 : 0), s) + 1;
    // With ceil_mode the last window must start inside the input or its left padding.
    if (ceilMode && (o - 1) * s >= in + p)
      --o;
    if (o < 1) {
      std::string why = "(input " + std::to_string(in) + ", kernel " + std::to_string(k) +
                        ", padding " + std::to_string(p);
      if (isMax)
        why += ", dilation " + std::to_string(d);
      why += ", stride " + std::to_string(s) + ")";
      return c.fail("output size " + llvm::Twine(o) + " in spatial dim " + llvm::Twine(2 + i) +
                    " " + why);
    }
    out.push_back(o);
  }
  return TensorType(x.dtype, out);
}

namespace {

/// Operands from `first` on, called `names`, each have shape `shape`.
llvm::Error expectShapes(const Ctx &c, unsigned first, llvm::ArrayRef<llvm::StringRef> names,
                         llvm::ArrayRef<int64_t> shape) {
  for (unsigned i = 0; i < names.size() && first + i < c.numOperands(); ++i)
    if (llvm::Error e = expectShape(c, first + i, names[i], shape))
      return e;
  return llvm::Error::success();
}

llvm::Error checkChannelRank(const Ctx &c, const TensorType &x, unsigned minRank) {
  if (x.rank() < minRank)
    return c.fail("expected x of rank >= " + llvm::Twine(minRank) + ", got rank " +
                  llvm::Twine(x.rank()));
  return llvm::Error::success();
}

} // namespace

llvm::Expected<TensorType> inferGroupNorm(const Ctx &c) {
  const TensorType &x = c.type(0);
  if (llvm::Error e = checkChannelRank(c, x, 2))
    return e;
  int64_t groups = c.op.getInt("groups");
  if (groups < 1)
    return c.fail("groups must be >= 1, got " + llvm::Twine(groups));
  int64_t channels = x.shape[1];
  if (channels % groups != 0)
    return c.fail("groups=" + llvm::Twine(groups) + " does not divide C=" + llvm::Twine(channels));
  // F.group_norm (_verify_batch_size) rejects groups of one element: N * C/groups * spatial
  // must exceed 1.
  int64_t perGroup = x.shape[0] * (channels / groups);
  for (unsigned i = 2; i < x.rank(); ++i)
    perGroup *= x.shape[i];
  if (perGroup == 1)
    return c.fail("expected more than 1 value per group, got x of shape " + shapeStr(x.shape) +
                  " with groups=" + llvm::Twine(groups));
  if (llvm::Error e = expectShapes(c, 1, {"gamma", "beta"}, {channels}))
    return e;
  return x;
}

llvm::Expected<TensorType> inferLayerNorm(const Ctx &c) {
  const TensorType &x = c.type(0);
  IntList normalized = c.op.getInts("normalized_shape");
  if (normalized.empty())
    return c.fail("normalized_shape must not be empty");
  llvm::ArrayRef<int64_t> xs = x.shape;
  if (normalized.size() > xs.size() ||
      xs.take_back(normalized.size()) != llvm::ArrayRef<int64_t>(normalized))
    return c.fail("normalized_shape " + shapeStr(normalized) +
                  " does not match the trailing dims of x " + shapeStr(xs));
  if (llvm::Error e = expectShapes(c, 1, {"gamma", "beta"}, normalized))
    return e;
  return x;
}

llvm::Expected<TensorType> inferBatchNorm(const Ctx &c) {
  const TensorType &x = c.type(0);
  if (llvm::Error e = checkChannelRank(c, x, 2))
    return e;
  if (llvm::Error e = expectShapes(c, 1, {"mean", "var", "gamma", "beta"}, {x.shape[1]}))
    return e;
  return x;
}

llvm::Expected<TensorType> inferInstanceNorm(const Ctx &c) {
  const TensorType &x = c.type(0);
  if (llvm::Error e = checkChannelRank(c, x, 3))
    return e;
  // F.instance_norm normalises over the spatial dims: one element has no variance.
  int64_t spatial = 1;
  for (unsigned i = 2; i < x.rank(); ++i)
    spatial *= x.shape[i];
  if (spatial < 2)
    return c.fail("expected more than 1 spatial element, got x of shape " + shapeStr(x.shape));
  if (llvm::Error e = expectShapes(c, 1, {"gamma", "beta"}, {x.shape[1]}))
    return e;
  return x;
}

} // namespace sinter::infer
