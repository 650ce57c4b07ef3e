//===- compiler/PlanBuilder.h - shared state of the plan pass (internal) -----------===//
//
// The plan pass is split by group family (PlanAnchors.cpp, PlanStandalone.cpp); this class
// holds what they share: the buffer table, the launch list, and kernel naming.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Plan.h"
#include "compiler/kernels/Emit.h"

#include "llvm/ADT/DenseMap.h"

#include <map>

namespace sinter {

class PlanBuilder {
public:
  PlanBuilder(const Graph &graph, const FusionResult &fusion, const PlanOptions &options);

  /// Plans every group.
  llvm::Expected<PlanResult> run();

  /// The buffer holding `value`: an argument's or result's, else a workspace buffer made on
  /// first use.
  int bufferOf(ValueId value);
  /// Makes `value` a view of `target` (reshape, flatten, dropout): same memory, its own type.
  /// Returns the new buffer.
  int alias(ValueId value, int target);
  /// The buffer whose memory `buffer` is (itself, or what its chain of views ends at).
  int resolve(int buffer) const;
  /// Whether `value` already has a buffer (an argument, a result, or planned before).
  bool hasBuffer(ValueId value) const { return buffers_.count(value) != 0; }
  /// A new workspace buffer of `bytes` named `name`.
  int workspace(const std::string &name, int64_t bytes);
  /// Appends a fill of `buffer` with the 32-bit pattern `word`.
  void fill(int buffer, uint32_t word);
  /// Appends a launch of `source`, binding each (slot -> buffer). Workspace the emitter asks
  /// for on slots left unbound is allocated and initialised here.
  llvm::Error launch(llvm::Expected<KernelSource> source, int group, llvm::StringRef role,
                     MathMode math, const std::map<int, int> &slotBuffers);
  /// Records that `buffer` holds per-(n, c) {sum, sum of squares} (double) of `value`, as the
  /// kernel that wrote `value` gathered them; statsOf gives it back (-1: none).
  void setStatsOf(ValueId value, int buffer) { stats_[value] = buffer; }
  /// Records why group `group`'s anchor runs on its engine (explain --why).
  void noteEngine(int group, std::string why) {
    result_.engines.push_back({group, std::move(why)});
  }
  int statsOf(ValueId value) const {
    auto it = stats_.find(value);
    return it == stats_.end() ? -1 : it->second;
  }
  /// A stable, readable kernel name for a kernel of `group`.
  std::string kernelName(int group, llvm::StringRef suffix) const;
  /// The error prefix naming the group's root op.
  std::string where(int group) const;

  const Graph &graph;
  const FusionResult &fusion;
  const PlanOptions &options;

private:
  /// Bytes of the tensors the group's elementwise chains read besides the kernel's own
  /// operands, among those bound at `slots`.
  double chainSideBytes(int group, const std::map<int, int> &slots) const;

  PlanResult result_;
  llvm::DenseMap<ValueId, int> buffers_;
  llvm::DenseMap<ValueId, int> stats_;
};

/// The reduction kind of a reduction op (FusionClass::Reduction).
ReductionKind reductionKindOf(OpKind k);

/// Binds a norm's gamma and beta to slots 6 and 7 when it has them.
void bindAffine(PlanBuilder &b, const Op &norm, std::map<int, int> &slots);

/// conv / conv_transpose / linear / matmul groups.
llvm::Error planAnchorGroup(PlanBuilder &b, int group);
/// Elementwise, reduction, softmax, pool, norm and view groups.
llvm::Error planStandaloneGroup(PlanBuilder &b, int group);

} // namespace sinter
