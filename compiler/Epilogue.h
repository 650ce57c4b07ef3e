//===- compiler/Epilogue.h - CUDA functors from fused elementwise ops --------------===//
//
// Fused elementwise ops reach the templates as small functors (compiler/kernels/Emit.h
// explains their three forms). This file writes their bodies from the graph: each op's
// device expression comes from the op table (ir/Ops.def), each tensor operand that is not
// computed in the functor is read from a Buffers slot with a broadcast index computed from
// the coordinates the template hands in.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/kernels/Emit.h"
#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace sinter {

/// How a functor's coordinates are given: the output shape is split into consecutive runs
/// of dims, each run addressed by one variable holding the row-major index within the run.
/// Conv epilogues: n = dim 0, c = dim 1, s = dims 2...; GEMM: n = all but the last dim,
/// c = the last; flat functors: i = all dims.
struct IndexSpace {
  Shape shape;
  llvm::SmallVector<std::pair<unsigned, std::string>, 3> runs; ///< (end dim, variable)

  static IndexSpace conv(llvm::ArrayRef<int64_t> shape);
  static IndexSpace gemm(llvm::ArrayRef<int64_t> shape);
  static IndexSpace flat(llvm::ArrayRef<int64_t> shape);
};

/// The buffer slots a kernel's fused chains read their tensors from (a residual input, a
/// gate, per-channel params): every template leaves slots 8..15 to them. The fuse pass keeps
/// each group's chains within kChainSlots tensors (compiler/Fusion.cpp).
constexpr int kFirstChainSlot = 8;
constexpr int kChainSlots = 8;
/// An elementwise tree's kernel reads its inputs from slots 0..14 and writes slot 15.
constexpr int kTreeInputSlots = 15;

/// The tensors the elementwise `ops` read besides `input` and what they compute themselves,
/// each once, in order of first use: what a functor of that chain binds to slots. Values
/// already in `known` are not listed again.
llvm::SmallVector<ValueId, 8> chainSideTensors(const Graph &graph, llvm::ArrayRef<int> ops,
                                               llvm::ArrayRef<ValueId> inputs,
                                               llvm::ArrayRef<ValueId> known = {});

/// Buffers slots handed out to the tensors a functor reads, starting at a template's first
/// free slot. The planner binds each slot to the value's buffer.
class SlotMap {
public:
  explicit SlotMap(int firstSlot, int lastSlot = kFirstChainSlot + kChainSlots - 1)
      : next_(firstSlot), last_(lastSlot) {}
  /// The slot of `value`, assigning the next free one on first use; -1 when none is left.
  int slotFor(ValueId value);
  llvm::ArrayRef<std::pair<int, ValueId>> slots() const { return slots_; }

private:
  int next_, last_;
  llvm::SmallVector<std::pair<int, ValueId>, 8> slots_;
};

/// Offset expression (in elements) of the element of a tensor of `operandShape`, broadcast
/// numpy-style to `space.shape`, at the space's current coordinates.
std::string broadcastOffset(const IndexSpace &space, llvm::ArrayRef<int64_t> operandShape);

/// The body of a functor that applies the chain `ops` (in order, each consuming the value
/// the previous produced, the first consuming `input`) to `v`. Fails when the side operands
/// need more slots than are left.
llvm::Expected<FunctorBody> chainBody(const Graph &graph, llvm::ArrayRef<int> ops,
                                      ValueId input, const IndexSpace &space, SlotMap &slots);

/// The body of a Compute functor producing `output` from the elementwise ops `members`
/// (a tree whose root defines `output`), reading everything else from slots.
llvm::Expected<std::string> computeBody(const Graph &graph, llvm::ArrayRef<int> members,
                                        ValueId output, SlotMap &slots);

} // namespace sinter
