//===- compiler/Epilogue.cpp - CUDA functors from fused elementwise ops ------------===//
#include "compiler/Epilogue.h"

#include "ir/Error.h"

#include "llvm/ADT/STLExtras.h"

#include <cstdint>

namespace sinter {

IndexSpace IndexSpace::conv(llvm::ArrayRef<int64_t> shape) {
  IndexSpace s;
  s.shape.assign(shape.begin(), shape.end());
  s.runs = {{1, "n"}, {2, "c"}, {unsigned(shape.size()), "s"}};
  return s;
}

IndexSpace IndexSpace::gemm(llvm::ArrayRef<int64_t> shape) {
  IndexSpace s;
  s.shape.assign(shape.begin(), shape.end());
  s.runs = {{unsigned(shape.size()) - 1, "n"}, {unsigned(shape.size()), "c"}};
  return s;
}

IndexSpace IndexSpace::flat(llvm::ArrayRef<int64_t> shape) {
  IndexSpace s;
  s.shape.assign(shape.begin(), shape.end());
  s.runs = {{unsigned(shape.size()), "i"}};
  return s;
}

llvm::SmallVector<ValueId, 8> chainSideTensors(const Graph &graph, llvm::ArrayRef<int> ops,
                                               llvm::ArrayRef<ValueId> inputs,
                                               llvm::ArrayRef<ValueId> known) {
  llvm::SmallVector<ValueId, 8> sides;
  for (size_t j = 0; j < ops.size(); ++j)
    for (const Operand &o : graph.ops[ops[j]].operands) {
      if (o.isScalar() || llvm::is_contained(inputs, o.value) ||
          llvm::is_contained(known, o.value) || llvm::is_contained(sides, o.value))
        continue;
      // computed by an earlier op of the chain: kept in a register
      if (llvm::any_of(ops.take_front(j), [&](int k) { return graph.ops[k].result == o.value; }))
        continue;
      sides.push_back(o.value);
    }
  return sides;
}

int SlotMap::slotFor(ValueId value) {
  for (auto &[slot, v] : slots_)
    if (v == value)
      return slot;
  if (next_ > last_)
    return -1;
  slots_.push_back({next_, value});
  return next_++;
}

std::string broadcastOffset(const IndexSpace &space, llvm::ArrayRef<int64_t> operandShape) {
  unsigned rank = space.shape.size();
  unsigned lead = rank - operandShape.size();
  // Row-major strides of the operand, 0 on broadcast dims, aligned to the output's dims.
  Shape strides(rank, int64_t(0));
  int64_t stride = 1;
  for (int d = int(operandShape.size()) - 1; d >= 0; --d) {
    if (operandShape[d] != 1)
      strides[lead + d] = stride;
    stride *= operandShape[d];
  }
  int64_t operandElements = 1;
  for (int64_t e : operandShape)
    operandElements *= e;
  std::string expr;
  unsigned begin = 0;
  for (const auto &[end, var] : space.runs) {
    // A run's coordinates divide in 32 bits where the run and the operand fit them: a 64-bit
    // division by a constant is a long chain of wide multiplies, a 32-bit one two
    // instructions.
    int64_t runElements = 1;
    for (unsigned d = begin; d < end; ++d)
      runElements *= space.shape[d];
    const bool narrow = runElements <= INT32_MAX && operandElements <= INT32_MAX;
    const char *suffix = narrow ? "u" : "LL";
    // Within a run, dim d's coordinate is (var / inner) % extent. Neighbouring dims that the
    // operand lays out as the space does (d's stride is d + 1's times d + 1's extent) are one
    // coordinate: a run the operand holds whole is var itself, with no division.
    int64_t inner = 1;
    for (int d = int(end) - 1; d >= int(begin); --d) {
      if (strides[d] == 0) {
        inner *= space.shape[d];
        continue;
      }
      int lo = d;
      int64_t extent = space.shape[d];
      while (lo > int(begin) && strides[lo - 1] != 0 &&
             strides[lo - 1] == strides[lo] * space.shape[lo]) {
        --lo;
        extent *= space.shape[lo];
      }
      const bool divides = inner != 1 || lo != int(begin);
      std::string coord = (divides && narrow ? "(unsigned)" : "(sinter::i64)") + var;
      if (inner != 1)
        coord = "(" + coord + " / " + std::to_string(inner) + suffix + ")";
      if (lo != int(begin))
        coord = "(" + coord + " % " + std::to_string(extent) + suffix + ")";
      std::string term =
          strides[d] == 1 ? coord
                          : coord + " * " + std::to_string(strides[d]) + (divides ? suffix : "LL");
      expr += (expr.empty() ? "" : " + ") + term;
      inner *= extent;
      d = lo;
    }
    begin = end;
  }
  return expr.empty() ? "0" : expr;
}

namespace {

std::string paramsDecl(const Op &op) {
  llvm::SmallVector<double, 2> p = op.unaryParams();
  return "const float p0 = " + floatLiteral(p[0]) + ", p1 = " + floatLiteral(p[1]) + ";";
}

std::string load(int slot, const std::string &offset) {
  return "__ldg(static_cast<const float *>(b.p[" + std::to_string(slot) + "]) + (" + offset +
         "))";
}

/// The shape a per-channel batch_norm operand [C] broadcasts as against an output of
/// `rank`: [C, 1, ...] (channels are dim 1, not the last dim).
Shape perChannelShape(int64_t channels, unsigned rank) {
  Shape s{channels};
  for (unsigned i = 2; i < rank; ++i)
    s.push_back(1);
  return s;
}

/// Statements computing `out = op(inputs)` where the chain/tree inputs are already in local
/// variables; `operandExpr` gives the expression of each operand.
llvm::Expected<std::string>
opStatement(const Graph &graph, const Op &op, const std::string &out,
            llvm::function_ref<llvm::Expected<std::string>(unsigned)> operandExpr) {
  if (isUnary(op.kind)) {
    auto x = operandExpr(0);
    if (!x)
      return x.takeError();
    return "{ const float x = " + *x + "; " + paramsDecl(op) + " (void)p0; (void)p1; " + out +
           " = " + unaryDeviceExpr(op.kind).str() + "; }";
  }
  if (isBinary(op.kind)) {
    auto a = operandExpr(0);
    if (!a)
      return a.takeError();
    auto bb = operandExpr(1);
    if (!bb)
      return bb.takeError();
    // The operands are evaluated before `b` (the Buffers) is shadowed by the operand `b`.
    return "{ const float a_ = " + *a + ", b_ = " + *bb + "; { const float a = a_, b = b_; " +
           out + " = " + binaryDeviceExpr(op.kind).str() + "; } }";
  }
  if (op.kind == OpKind::BatchNorm) {
    llvm::SmallVector<std::string, 5> e;
    for (unsigned i = 0; i < op.operands.size(); ++i) {
      auto x = operandExpr(i);
      if (!x)
        return x.takeError();
      e.push_back(*x);
    }
    std::string s = "{ const float x = " + e[0] + ", mean = " + e[1] + ", var = " + e[2] +
                    "; float y = (x - mean) * rsqrtf(var + " + floatLiteral(op.getFloat("eps")) +
                    ");";
    if (e.size() == 5)
      s += " y = y * " + e[3] + " + " + e[4] + ";";
    return s + " " + out + " = y; }";
  }
  (void)graph;
  return makeError("codegen: " + op.name() + " is not an elementwise op");
}

/// The local variable holding `value` inside a Compute functor.
std::string localName(ValueId value) {
  std::string name = "v";
  name.append(std::to_string(value));
  return name;
}

/// Expression reading operand `operand` of `op` from memory (a slot) or as a constant.
llvm::Expected<std::string> sideOperand(const Graph &graph, const Op &op, unsigned index,
                                        const IndexSpace &space, SlotMap &slots) {
  const Operand &o = op.operands[index];
  if (o.isScalar())
    return floatLiteral(o.scalar);
  int slot = slots.slotFor(o.value);
  if (slot < 0)
    return makeError("codegen: " + op.name() + " %" + graph.values[op.result].name +
                     ": too many tensor operands fused into one kernel");
  Shape shape = graph.type(o.value).shape;
  // batch_norm's statistics and affine operands are per channel (dim 1), not numpy-aligned.
  if (op.kind == OpKind::BatchNorm && index > 0)
    shape = perChannelShape(shape[0], space.shape.size());
  return load(slot, broadcastOffset(space, shape));
}

} // namespace

llvm::Expected<FunctorBody> chainBody(const Graph &graph, llvm::ArrayRef<int> ops, ValueId input,
                                      const IndexSpace &space, SlotMap &slots) {
  FunctorBody body;
  if (ops.empty())
    return body;
  std::string code = "float t = v;";
  ValueId current = input;
  // A chain may read a value it computed earlier than the one before (Fusion's regions
  // whose paths meet again, e.g. y * hardswish(y)): the input is `v` throughout, and an
  // earlier step's value is kept in a local of its own.
  auto readLater = [&](size_t from, ValueId x) {
    for (size_t j = from + 1; j < ops.size(); ++j)
      for (const Operand &o : graph.ops[ops[j]].operands)
        if (!o.isScalar() && o.value == x)
          return true;
    return false;
  };
  llvm::SmallVector<ValueId, 4> kept;
  for (size_t j = 0; j < ops.size(); ++j) {
    const Op &op = graph.ops[ops[j]];
    auto operandExpr = [&](unsigned k) -> llvm::Expected<std::string> {
      const Operand &o = op.operands[k];
      if (!o.isScalar()) {
        if (o.value == current)
          return std::string("t");
        if (o.value == input)
          return std::string("v");
        if (llvm::is_contained(kept, o.value))
          return localName(o.value);
      }
      return sideOperand(graph, op, k, space, slots);
    };
    auto stmt = opStatement(graph, op, "t", operandExpr);
    if (!stmt)
      return stmt.takeError();
    code += "\n    " + *stmt;
    current = op.result;
    if (j + 2 < ops.size() && readLater(j + 1, current)) {
      code += "\n    const float " + localName(current) + " = t;";
      kept.push_back(current);
    }
  }
  body.code = code + "\n    return t;";
  return body;
}

llvm::Expected<std::string> computeBody(const Graph &graph, llvm::ArrayRef<int> members,
                                        ValueId output, SlotMap &slots) {
  IndexSpace space = IndexSpace::flat(graph.type(output).shape);
  llvm::SmallVector<int, 8> order(members.begin(), members.end());
  llvm::sort(order);
  std::string code;
  for (int i : order) {
    const Op &op = graph.ops[i];
    auto operandExpr = [&](unsigned k) -> llvm::Expected<std::string> {
      const Operand &o = op.operands[k];
      if (!o.isScalar()) {
        int def = graph.values[o.value].def;
        if (def >= 0 && llvm::is_contained(members, def))
          return localName(o.value);
      }
      return sideOperand(graph, op, k, space, slots);
    };
    std::string out = localName(op.result);
    auto stmt = opStatement(graph, op, out, operandExpr);
    if (!stmt)
      return stmt.takeError();
    code += "float " + out + ";\n    " + *stmt + "\n    ";
  }
  return code + "return " + localName(output) + ";";
}

} // namespace sinter
