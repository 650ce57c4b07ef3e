//===- ir/RefReduce.cpp - reference reductions and softmax ---------------------------===//
//
// torch.sum/mean/amax/amin/logsumexp over a set of dims (negative dims count from the end,
// keepdim keeps them as size 1, an empty list reduces every dim as torch.sum(x, dim=[])
// does) and F.softmax/F.log_softmax along one dim, in float64. amax/amin propagate NaN like
// PyTorch; logsumexp subtracts the maximum first so large inputs do not overflow.
//
//===--------------------------------------------------------------------------------===//
#include "ir/RefKernels.h"

#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <limits>

namespace sinter::ref {
namespace {

/// Index space of a reduction: the kept dims (in order, giving the output order) and the
/// reduced dims, each with sizes and input strides.
struct ReduceSpace {
  Shape keptSize, keptStride, redSize, redStride;
  int64_t redCount = 1;
};

ReduceSpace reduceSpace(const TensorType &in, const IntList &dims) {
  unsigned rank = in.rank();
  llvm::SmallVector<bool, 6> reduced(rank, dims.empty());
  for (int64_t d : dims) {
    // A scalar (rank 0) accepts dim 0 or -1, as in PyTorch.
    if (rank == 0)
      continue;
    reduced[d < 0 ? d + rank : d] = true;
  }
  Shape strides = contiguousStrides(in.shape);
  ReduceSpace s;
  for (unsigned d = 0; d < rank; ++d) {
    Shape &size = reduced[d] ? s.redSize : s.keptSize;
    Shape &stride = reduced[d] ? s.redStride : s.keptStride;
    size.push_back(in.shape[d]);
    stride.push_back(strides[d]);
    if (reduced[d])
      s.redCount *= in.shape[d];
  }
  return s;
}

/// Offset of the `linear`-th position of the index space (sizes, strides).
int64_t offsetOf(int64_t linear, llvm::ArrayRef<int64_t> sizes, llvm::ArrayRef<int64_t> strides) {
  int64_t off = 0;
  for (int d = int(sizes.size()) - 1; d >= 0; --d) {
    off += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return off;
}

} // namespace

RefTensor evalReduction(const Op &op, const RefTensor &x, const TensorType &out, unsigned threads) {
  ReduceSpace s = reduceSpace(x.type, op.getInts("dims"));
  RefTensor y = makeResult(out);
  // Offsets of the reduced positions, shared by every output element.
  std::vector<int64_t> redOffsets(size_t(s.redCount));
  for (int64_t r = 0; r < s.redCount; ++r)
    redOffsets[r] = offsetOf(r, s.redSize, s.redStride);
  OpKind kind = op.kind;
  parallelFor(out.numel(), 64, threads, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      const double *base = x.data.data() + offsetOf(o, s.keptSize, s.keptStride);
      double acc = 0;
      if (kind == OpKind::Sum || kind == OpKind::Mean) {
        for (int64_t off : redOffsets)
          acc += base[off];
        if (kind == OpKind::Mean)
          acc /= double(s.redCount);
      } else if (kind == OpKind::Max || kind == OpKind::Min || kind == OpKind::Logsumexp) {
        bool isMin = kind == OpKind::Min;
        acc = isMin ? std::numeric_limits<double>::infinity()
                    : -std::numeric_limits<double>::infinity();
        for (int64_t off : redOffsets) {
          double v = base[off];
          if (std::isnan(v) || (isMin ? v < acc : v > acc))
            acc = v;
          if (std::isnan(acc))
            break;
        }
        if (kind == OpKind::Logsumexp && std::isfinite(acc)) {
          double sum = 0;
          for (int64_t off : redOffsets)
            sum += std::exp(base[off] - acc);
          acc += std::log(sum);
        }
      } else {
        llvm_unreachable("evalReduction on a non-reduction op");
      }
      y.data[o] = acc;
    }
  });
  return y;
}

RefTensor evalSoftmax(const Op &op, const RefTensor &x, const TensorType &out, unsigned threads) {
  int64_t rank = x.type.rank(), dim = op.getInt("dim");
  if (dim < 0)
    dim += std::max<int64_t>(rank, 1);
  int64_t length = rank ? x.type.shape[dim] : 1, inner = 1;
  for (int64_t d = dim + 1; d < rank; ++d)
    inner *= x.type.shape[d];
  int64_t outer = length * inner != 0 ? x.type.numel() / (length * inner) : 0;
  bool logForm = op.kind == OpKind::LogSoftmax;
  RefTensor y = makeResult(out);
  parallelFor(outer * inner, 64, threads, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t base = (row / inner) * length * inner + row % inner;
      const double *in = x.data.data() + base;
      double *o = y.data.data() + base;
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < length; ++i)
        max = std::max(max, in[i * inner]);
      if (std::isinf(max) && max < 0)
        max = 0; // every entry -inf: let exp give 0/0 = NaN as torch does
      double sum = 0;
      for (int64_t i = 0; i < length; ++i)
        sum += std::exp(in[i * inner] - max);
      double logSum = std::log(sum);
      for (int64_t i = 0; i < length; ++i)
        o[i * inner] = logForm ? in[i * inner] - max - logSum : std::exp(in[i * inner] - max) / sum;
    }
  });
  return y;
}

} // namespace sinter::ref
