//===- ir/RefNorm.cpp - reference normalisations -------------------------------------===//
//
// F.group_norm, F.layer_norm, F.instance_norm and F.batch_norm (inference, running stats)
// in float64. Statistics follow PyTorch: biased variance (divide by the count), eps inside
// the square root. Mean and variance are taken in two passes over each segment, which in
// float64 is exact enough to serve as the oracle for one-pass GPU statistics.
//
//===--------------------------------------------------------------------------------===//
#include "ir/RefKernels.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>

namespace sinter::ref {
namespace {

struct Moments {
  double mean = 0, var = 0;
};

Moments moments(const double *x, int64_t count) {
  Moments m;
  if (count == 0)
    return m;
  double sum = 0;
  for (int64_t i = 0; i < count; ++i)
    sum += x[i];
  m.mean = sum / double(count);
  double sq = 0;
  for (int64_t i = 0; i < count; ++i) {
    double d = x[i] - m.mean;
    sq += d * d;
  }
  m.var = sq / double(count);
  return m;
}

/// Normalises `segments` contiguous segments of `length` elements each; the affine
/// parameters of element e of segment s are at index affine(s, e) of gamma and beta.
template <typename AffineIndex>
void normaliseSegments(const RefTensor &x, RefTensor &y, int64_t segments, int64_t length,
                       double eps, const RefTensor *gamma, const RefTensor *beta,
                       AffineIndex affine, unsigned threads) {
  parallelFor(segments, 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const double *in = x.data.data() + s * length;
      double *out = y.data.data() + s * length;
      Moments m = moments(in, length);
      double inv = 1.0 / std::sqrt(m.var + eps);
      for (int64_t e = 0; e < length; ++e) {
        double v = (in[e] - m.mean) * inv;
        if (gamma) {
          int64_t a = affine(s, e);
          v = v * gamma->data[a] + beta->data[a];
        }
        out[e] = v;
      }
    }
  });
}

/// Elements per channel of an [N, C, *] tensor.
int64_t spatialSize(const TensorType &t) {
  int64_t s = 1;
  for (unsigned d = 2; d < t.rank(); ++d)
    s *= t.shape[d];
  return s;
}

} // namespace

RefTensor evalNorm(const Op &op, llvm::ArrayRef<const RefTensor *> operands, const TensorType &out,
                   unsigned threads) {
  const RefTensor &x = *operands[0];
  RefTensor y = makeResult(out);
  double eps = op.getFloat("eps");
  // Not a switch: only the four norms reach here, and a switch over OpKind must list all.
  if (op.kind == OpKind::GroupNorm) {
    const RefTensor *gamma = operands.size() > 1 ? operands[1] : nullptr;
    const RefTensor *beta = operands.size() > 2 ? operands[2] : nullptr;
    int64_t n = x.type.shape[0], c = x.type.shape[1], groups = op.getInt("groups");
    int64_t s = spatialSize(x.type), perGroup = c / groups;
    normaliseSegments(
        x, y, n * groups, perGroup * s, eps, gamma, beta,
        [&](int64_t seg, int64_t e) { return (seg % groups) * perGroup + e / s; }, threads);
    return y;
  }
  if (op.kind == OpKind::InstanceNorm) {
    const RefTensor *gamma = operands.size() > 1 ? operands[1] : nullptr;
    const RefTensor *beta = operands.size() > 2 ? operands[2] : nullptr;
    int64_t n = x.type.shape[0], c = x.type.shape[1], s = spatialSize(x.type);
    normaliseSegments(
        x, y, n * c, s, eps, gamma, beta, [&](int64_t seg, int64_t) { return seg % c; }, threads);
    return y;
  }
  if (op.kind == OpKind::LayerNorm) {
    const RefTensor *gamma = operands.size() > 1 ? operands[1] : nullptr;
    const RefTensor *beta = operands.size() > 2 ? operands[2] : nullptr;
    int64_t length = 1;
    for (int64_t d : op.getInts("normalized_shape"))
      length *= d;
    int64_t segments = length ? x.type.numel() / length : 0;
    normaliseSegments(
        x, y, segments, length, eps, gamma, beta, [](int64_t, int64_t e) { return e; }, threads);
    return y;
  }
  if (op.kind == OpKind::BatchNorm) {
    const RefTensor &mean = *operands[1], &var = *operands[2];
    const RefTensor *gamma = operands.size() > 3 ? operands[3] : nullptr;
    const RefTensor *beta = operands.size() > 4 ? operands[4] : nullptr;
    int64_t c = x.type.shape[1], s = spatialSize(x.type);
    int64_t planes = x.type.numel() / std::max<int64_t>(s, 1);
    parallelFor(planes, 64, threads, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        int64_t ch = p % c;
        double scale = 1.0 / std::sqrt(var.data[ch] + eps), shift = 0;
        if (gamma) {
          scale *= gamma->data[ch];
          shift = beta->data[ch];
        }
        const double *in = x.data.data() + p * s;
        double *o = y.data.data() + p * s;
        for (int64_t e = 0; e < s; ++e)
          o[e] = (in[e] - mean.data[ch]) * scale + shift;
      }
    });
    return y;
  }
  llvm_unreachable("evalNorm on a non-norm op");
}

} // namespace sinter::ref
