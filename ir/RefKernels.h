//===- ir/RefKernels.h - the CPU reference's op families (internal) ----------------===//
//
// Private to ir/Reference*.cpp and ir/Ref*.cpp: one evaluation function per op family. Each
// takes the op (for its attributes), its operand tensors and the result type the verifier
// inferred, and returns the result in float64. Operand shapes are trusted: the graph is
// verified before evaluation.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Reference.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace sinter::ref {

/// Runs fn(begin, end) over [0, n) split into chunks of about `grain` items, on up to
/// `threads` threads; chunks are handed out dynamically so uneven work balances.
void parallelFor(int64_t n, int64_t grain, unsigned threads,
                 llvm::function_ref<void(int64_t begin, int64_t end)> fn);

/// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
inline int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

/// A zero-filled result of `type`.
RefTensor makeResult(const TensorType &type);

// RefConv.cpp
RefTensor evalConv(const Op &op, const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                   const TensorType &out, unsigned threads);
RefTensor evalConvTranspose(const Op &op, const RefTensor &x, const RefTensor &w,
                            const RefTensor *bias, const TensorType &out, unsigned threads);

// RefGemm.cpp
RefTensor evalLinear(const RefTensor &x, const RefTensor &w, const RefTensor *bias,
                     const TensorType &out, unsigned threads);
RefTensor evalMatmul(const RefTensor &a, const RefTensor &b, const TensorType &out,
                     unsigned threads);

// RefNorm.cpp
RefTensor evalNorm(const Op &op, llvm::ArrayRef<const RefTensor *> operands, const TensorType &out,
                   unsigned threads);

// RefReduce.cpp
RefTensor evalReduction(const Op &op, const RefTensor &x, const TensorType &out, unsigned threads);
RefTensor evalSoftmax(const Op &op, const RefTensor &x, const TensorType &out, unsigned threads);

// RefPool.cpp
RefTensor evalPool(const Op &op, const RefTensor &x, const TensorType &out, unsigned threads);

} // namespace sinter::ref
