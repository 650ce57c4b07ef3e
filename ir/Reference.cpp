//===- ir/Reference.cpp - the float64 CPU reference: driver and elementwise ops ------===//
//
// Binds the arguments, walks the ops in definition order dispatching on OpKind to the op
// families (ir/RefKernels.h), and frees every intermediate after its last use so that the
// full-size workloads fit in memory. Elementwise and view ops live here; unary and binary
// formulas come from the op table (ir/Ops.def) so the reference and the device expressions
// are declared side by side.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Reference.h"

#include "ir/Error.h"
#include "ir/RefKernels.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace sinter {
namespace ref {

void parallelFor(int64_t n, int64_t grain, unsigned threads,
                 llvm::function_ref<void(int64_t, int64_t)> fn) {
  if (n <= 0)
    return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = (n + grain - 1) / grain;
  unsigned workers = unsigned(std::min<int64_t>(threads ? threads : 1, chunks));
  if (workers <= 1) {
    fn(0, n);
    return;
  }
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (int64_t c; (c = next.fetch_add(1)) < chunks;)
      fn(c * grain, std::min(n, (c + 1) * grain));
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (unsigned i = 1; i < workers; ++i)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
}

RefTensor makeResult(const TensorType &type) {
  return RefTensor{type, std::vector<double>(size_t(type.numel()), 0.0)};
}

} // namespace ref

namespace {

using namespace ref;

constexpr int64_t kElementwiseGrain = 1 << 15;

RefTensor evalUnaryOp(const Op &op, const RefTensor &x, const TensorType &out, unsigned threads) {
  RefTensor y = makeResult(out);
  llvm::SmallVector<double, 2> p = op.unaryParams();
  OpKind kind = op.kind;
  parallelFor(int64_t(x.data.size()), kElementwiseGrain, threads, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      y.data[i] = evalUnary(kind, x.data[i], p[0], p[1]);
  });
  return y;
}

/// One binary operand: a tensor with strides aligned to the result's dims (0 where it
/// broadcasts), or a scalar constant.
struct BroadcastOperand {
  const double *data = nullptr;
  double scalar = 0;
  Shape strides; ///< per result dim
};

BroadcastOperand alignOperand(const RefTensor *t, double scalar, const TensorType &out) {
  BroadcastOperand o;
  o.scalar = scalar;
  o.strides.assign(out.rank(), 0);
  if (!t)
    return o;
  o.data = t->data.data();
  Shape s = contiguousStrides(t->type.shape);
  unsigned lead = out.rank() - t->type.rank();
  for (unsigned d = 0; d < t->type.rank(); ++d)
    o.strides[lead + d] = t->type.shape[d] == 1 ? 0 : s[d];
  return o;
}

RefTensor evalBinaryOp(const Op &op, llvm::ArrayRef<const RefTensor *> operands,
                       const TensorType &out, unsigned threads) {
  RefTensor y = makeResult(out);
  BroadcastOperand a = alignOperand(operands[0], op.operands[0].scalar, out);
  BroadcastOperand b = alignOperand(operands[1], op.operands[1].scalar, out);
  OpKind kind = op.kind;
  const Shape &shape = out.shape;
  int rank = int(out.rank());
  parallelFor(out.numel(), kElementwiseGrain, threads, [&](int64_t begin, int64_t end) {
    // Decompose the chunk's first index once, then step an odometer.
    Shape idx(rank, 0);
    int64_t rest = begin, offA = 0, offB = 0;
    for (int d = rank - 1; d >= 0; --d) {
      idx[d] = rest % shape[d];
      rest /= shape[d];
      offA += idx[d] * a.strides[d];
      offB += idx[d] * b.strides[d];
    }
    for (int64_t i = begin; i < end; ++i) {
      double va = a.data ? a.data[offA] : a.scalar;
      double vb = b.data ? b.data[offB] : b.scalar;
      y.data[i] = evalBinary(kind, va, vb);
      for (int d = rank - 1; d >= 0; --d) {
        offA += a.strides[d];
        offB += b.strides[d];
        if (++idx[d] < shape[d])
          break;
        offA -= a.strides[d] * shape[d];
        offB -= b.strides[d] * shape[d];
        idx[d] = 0;
      }
    }
  });
  return y;
}

/// Evaluates one op whose operand tensors are `operands` (null for scalar constants).
RefTensor evalOp(const Op &op, llvm::ArrayRef<const RefTensor *> operands, const TensorType &out,
                 unsigned threads) {
  auto optional = [&](unsigned i) { return operands.size() > i ? operands[i] : nullptr; };
  switch (op.kind) {
  case OpKind::Conv:
    return evalConv(op, *operands[0], *operands[1], optional(2), out, threads);
  case OpKind::ConvTranspose:
    return evalConvTranspose(op, *operands[0], *operands[1], optional(2), out, threads);
  case OpKind::Linear:
    return evalLinear(*operands[0], *operands[1], optional(2), out, threads);
  case OpKind::Matmul:
    return evalMatmul(*operands[0], *operands[1], out, threads);
#define OP(Id, ...)
#define UNARY(Id, ...) case OpKind::Id:
#include "ir/Ops.def"
    return evalUnaryOp(op, *operands[0], out, threads);
#define OP(Id, ...)
#define BINARY(Id, ...) case OpKind::Id:
#include "ir/Ops.def"
    return evalBinaryOp(op, operands, out, threads);
  case OpKind::Sum:
  case OpKind::Mean:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Logsumexp:
    return evalReduction(op, *operands[0], out, threads);
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return evalSoftmax(op, *operands[0], out, threads);
  case OpKind::GroupNorm:
  case OpKind::LayerNorm:
  case OpKind::BatchNorm:
  case OpKind::InstanceNorm:
    return evalNorm(op, operands, out, threads);
  case OpKind::MaxPool:
  case OpKind::AvgPool:
    return evalPool(op, *operands[0], out, threads);
  case OpKind::Reshape:
  case OpKind::Flatten:
  case OpKind::Dropout:
    // Row-major data is unchanged by a view; dropout is the identity at inference.
    assert(operands[0]->type.numel() == out.numel() && "a view keeps the element count");
    return RefTensor{out, operands[0]->data};
  }
  llvm_unreachable("unknown op");
}

} // namespace

llvm::Expected<RefMap> evaluateReference(const Graph &g, const TensorMap &bindings,
                                         const ReferenceOptions &opts) {
  for (const Value &v : g.values)
    if (v.type.dtype != DType::F32)
      return makeError("reference: only f32 graphs are supported, %" + v.name + " is " +
                       dtypeName(v.type.dtype));
  unsigned threads =
      opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());

  std::vector<RefTensor> values(g.values.size());
  for (ValueId id : g.args) {
    const Value &arg = g.value(id);
    auto it = bindings.find(arg.name);
    if (it == bindings.end())
      return makeError("missing tensor '" + arg.name + "' (" +
                       (arg.kind == ValueKind::Param ? "param " : "input ") + arg.type.str() + ")");
    const HostTensor &t = it->second;
    if (t.type.shape != arg.type.shape)
      return makeError("tensor '" + arg.name + "' has shape " + shapeStr(t.type.shape) +
                       ", graph expects " + arg.type.str());
    if (int64_t(t.data.size()) != t.numel())
      return makeError("tensor '" + arg.name + "' holds " + llvm::Twine(t.data.size()) +
                       " values, its shape " + shapeStr(t.type.shape) + " needs " +
                       llvm::Twine(t.numel()));
    RefTensor &v = values[id];
    v = makeResult(arg.type);
    parallelFor(t.numel(), kElementwiseGrain, threads, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        v.data[i] = double(t.data[i]);
    });
  }

  // The last op reading each value; returned values are kept to the end.
  std::vector<int> lastUse(g.values.size(), -1);
  for (size_t i = 0; i < g.ops.size(); ++i)
    for (const Operand &o : g.ops[i].operands)
      if (!o.isScalar())
        lastUse[o.value] = int(i);
  for (ValueId r : g.results)
    lastUse[r] = int(g.ops.size());

  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op &op = g.ops[i];
    llvm::SmallVector<const RefTensor *, 5> operands;
    for (const Operand &o : op.operands)
      operands.push_back(o.isScalar() ? nullptr : &values[o.value]);
    values[op.result] = evalOp(op, operands, g.type(op.result), threads);
    for (const Operand &o : op.operands)
      if (!o.isScalar() && lastUse[o.value] == int(i))
        values[o.value] = RefTensor{};
  }

  // Moved out, not copied: a full-size S2 result is 4 GB. A value returned twice is moved once.
  RefMap results;
  for (ValueId r : g.results)
    if (!results.count(g.value(r).name))
      results[g.value(r).name] = std::move(values[r]);
  return results;
}

HostTensor toHostTensor(const RefTensor &t) {
  HostTensor h(t.type.shape);
  for (size_t i = 0; i < t.data.size(); ++i)
    h.data[i] = float(t.data[i]);
  return h;
}

TensorMap toTensorMap(const RefMap &results) {
  TensorMap out;
  for (const auto &[name, t] : results)
    out.emplace(name, toHostTensor(t));
  return out;
}

} // namespace sinter
