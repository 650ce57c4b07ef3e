//===- ir/RefGemm.cpp - reference linear and matmul ----------------------------------===//
//
// F.linear and torch.matmul in float64. Both reduce to C = A * B^T with A [M, K] and B
// [N, K] row-major, so every dot product walks two contiguous rows. The product is blocked
// for the cache (tiles of C, panels of K that stay in L2) and a 4x4 register block gives
// sixteen independent accumulators per step; tiles are spread over threads. matmul first
// transposes its right operand into that layout and broadcasts batch dims as torch does.
//
//===--------------------------------------------------------------------------------===//
#include "ir/RefKernels.h"

#include <algorithm>

namespace sinter::ref {
namespace {

constexpr int64_t kTileM = 64, kTileN = 64, kPanelK = 256;

/// One GEMM problem: C[M,N] = A[M,K] * B[N,K]^T, all row-major and contiguous.
struct GemmProblem {
  const double *a, *b;
  double *c;
  int64_t m, n, k;
};

/// C[i0:i1, j0:j1] = A * B^T (overwrites).
void gemmTile(const GemmProblem &p, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  for (int64_t i = i0; i < i1; ++i)
    std::fill(p.c + i * p.n + j0, p.c + i * p.n + j1, 0.0);
  for (int64_t k0 = 0; k0 < p.k; k0 += kPanelK) {
    int64_t k1 = std::min(p.k, k0 + kPanelK);
    int64_t i = i0;
    for (; i + 4 <= i1; i += 4) {
      const double *a0 = p.a + i * p.k, *a1 = a0 + p.k, *a2 = a1 + p.k, *a3 = a2 + p.k;
      int64_t j = j0;
      for (; j + 4 <= j1; j += 4) {
        const double *b0 = p.b + j * p.k, *b1 = b0 + p.k, *b2 = b1 + p.k, *b3 = b2 + p.k;
        double s[4][4] = {};
        for (int64_t kk = k0; kk < k1; ++kk) {
          double av[4] = {a0[kk], a1[kk], a2[kk], a3[kk]};
          double bv[4] = {b0[kk], b1[kk], b2[kk], b3[kk]};
          for (int r = 0; r < 4; ++r)
            for (int q = 0; q < 4; ++q)
              s[r][q] += av[r] * bv[q];
        }
        for (int r = 0; r < 4; ++r)
          for (int q = 0; q < 4; ++q)
            p.c[(i + r) * p.n + j + q] += s[r][q];
      }
      for (; j < j1; ++j)
        for (int r = 0; r < 4; ++r) {
          const double *ar = p.a + (i + r) * p.k, *bj = p.b + j * p.k;
          double s = 0;
          for (int64_t kk = k0; kk < k1; ++kk)
            s += ar[kk] * bj[kk];
          p.c[(i + r) * p.n + j] += s;
        }
    }
    for (; i < i1; ++i)
      for (int64_t j = j0; j < j1; ++j) {
        const double *ai = p.a + i * p.k, *bj = p.b + j * p.k;
        double s = 0;
        for (int64_t kk = k0; kk < k1; ++kk)
          s += ai[kk] * bj[kk];
        p.c[i * p.n + j] += s;
      }
  }
}

/// Runs every problem, all tiles of all problems sharing one thread pool.
void runGemms(llvm::ArrayRef<GemmProblem> problems, unsigned threads) {
  struct Tile {
    unsigned problem;
    int64_t i0, j0;
  };
  std::vector<Tile> tiles;
  for (unsigned p = 0; p < problems.size(); ++p)
    for (int64_t i = 0; i < problems[p].m; i += kTileM)
      for (int64_t j = 0; j < problems[p].n; j += kTileN)
        tiles.push_back({p, i, j});
  parallelFor(int64_t(tiles.size()), 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const GemmProblem &p = problems[tiles[t].problem];
      gemmTile(p, tiles[t].i0, std::min(p.m, tiles[t].i0 + kTileM), tiles[t].j0,
               std::min(p.n, tiles[t].j0 + kTileN));
    }
  });
}

} // namespace

RefTensor evalLinear(const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                     const TensorType &out, unsigned threads) {
  int64_t k = w.type.shape[1], n = w.type.shape[0];
  int64_t m = k ? x.type.numel() / k : out.numel() / std::max<int64_t>(n, 1);
  RefTensor y = makeResult(out);
  GemmProblem p{x.data.data(), w.data.data(), y.data.data(), m, n, k};
  runGemms(p, threads);
  if (bias)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        y.data[i * n + j] += bias->data[j];
  return y;
}

RefTensor evalMatmul(const RefTensor &a, const RefTensor &b, const TensorType &out,
                     unsigned threads) {
  // torch.matmul: a 1-D left operand is a row [1, K], a 1-D right operand a column [K, 1],
  // and the added dim is dropped from the result; leading dims broadcast as batch dims.
  Shape aShape = a.type.shape, bShape = b.type.shape;
  if (aShape.size() == 1)
    aShape.insert(aShape.begin(), 1);
  if (bShape.size() == 1)
    bShape.push_back(1);
  int64_t m = aShape[aShape.size() - 2], k = aShape.back(), n = bShape.back();
  Shape aBatch(aShape.begin(), aShape.end() - 2), bBatch(bShape.begin(), bShape.end() - 2);
  size_t batchRank = std::max(aBatch.size(), bBatch.size());
  aBatch.insert(aBatch.begin(), batchRank - aBatch.size(), 1);
  bBatch.insert(bBatch.begin(), batchRank - bBatch.size(), 1);
  Shape batch(batchRank, 1);
  for (size_t d = 0; d < batchRank; ++d)
    batch[d] = std::max(aBatch[d], bBatch[d]);

  // B^T per batch of b, so every dot product reads contiguous rows.
  int64_t bBatches = b.type.numel() / std::max<int64_t>(k * n, 1);
  std::vector<double> bt(b.data.size());
  for (int64_t q = 0; q < bBatches; ++q)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j)
        bt[(q * n + j) * k + kk] = b.data[(q * k + kk) * n + j];

  RefTensor y = makeResult(out);
  int64_t batches = 1;
  for (int64_t d : batch)
    batches *= d;
  Shape aStrides = contiguousStrides(aBatch), bStrides = contiguousStrides(bBatch);
  std::vector<GemmProblem> problems;
  for (int64_t t = 0; t < batches; ++t) {
    int64_t rest = t, ai = 0, bi = 0;
    for (int d = int(batchRank) - 1; d >= 0; --d) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      ai += (aBatch[d] == 1 ? 0 : idx) * aStrides[d];
      bi += (bBatch[d] == 1 ? 0 : idx) * bStrides[d];
    }
    problems.push_back(GemmProblem{a.data.data() + ai * m * k, bt.data() + bi * n * k,
                                   y.data.data() + t * m * n, m, n, k});
  }
  runGemms(problems, threads);
  return y;
}

} // namespace sinter::ref
