//===- compiler/Fusion.h - partitioning a graph into fusion groups -----------------===//
//
// The fuse pass turns a verified graph into an ordered list of fusion groups. A group is
// an anchor (or a standalone op) plus the ops folded into it: an elementwise epilogue, and
// optionally a normalisation or reduction tail. Each group becomes one or a few kernels of
// one template family (compiler/Plan.h). Groups are listed in an order that respects data
// dependencies; values that cross group boundaries are materialised in memory, everything
// else lives in registers.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <string>
#include <vector>

namespace sinter {

/// What a fusion group computes, i.e. which template family serves it.
enum class GroupKind : uint8_t {
  Anchor,      ///< conv / conv_transpose / linear / matmul + epilogue (+ tail)
  Elementwise, ///< a tree of elementwise ops computed in one pass
  Reduction,   ///< sum / mean / max / min / logsumexp (+ epilogue)
  Softmax,     ///< softmax / log_softmax (+ epilogue)
  Pool,        ///< max_pool / avg_pool (+ epilogue)
  Norm,        ///< a normalisation of a materialised tensor (+ epilogue)
  View,        ///< reshape / flatten / dropout: no arithmetic
};

/// What follows the root's epilogue inside an anchor (or pool) group.
enum class TailKind : uint8_t {
  None,          ///< anchor + epilogue
  Norm,          ///< ... -> group_norm / instance_norm (a pool's: also layer_norm) -> elementwise*
  NormReduce,    ///< ... -> group_norm / instance_norm -> mean / sum over spatial (+C) dims
  RowNormReduce, ///< linear -> ... -> group_norm (2-D) -> elementwise* -> min/max/sum over dim 1
  Reduce,        ///< pool, group or instance norm -> elementwise* -> any reduction -> elementwise*
  Pool, ///< conv -> elementwise* -> max/avg pool whose windows tile the output -> elementwise*
  /// conv -> elementwise* -> softmax / log_softmax over the channels -> elementwise*, and
  /// optionally a Pool tail's pool and chain after that
  Softmax,
  /// conv -> elementwise* -> sum / mean / max / min / logsumexp over the channels (dim 1
  /// only) -> elementwise*
  ChannelReduce,
  /// conv -> elementwise* -> sum / mean over every spatial dim (and optionally the channels)
  /// -> elementwise*: the anchor's epilogue adds up each (n, c) plane, y is never stored
  PlaneReduce,
};

struct FusionGroup {
  std::string pattern; ///< debug name of the pattern (or standalone rule) that formed it
  GroupKind kind = GroupKind::Elementwise;
  TailKind tail = TailKind::None;
  int root = -1;                          ///< the anchor or standalone op
  llvm::SmallVector<int, 8> epilogue;     ///< elementwise ops after root, in chain order
  int norm = -1;                          ///< the tail's normalisation op
  llvm::SmallVector<int, 8> normEpilogue; ///< elementwise ops after the norm
  int reduce = -1;                        ///< the tail's reduction op
  /// Elementwise ops after a Reduce tail's reduction.
  llvm::SmallVector<int, 8> reduceEpilogue;
  int softmax = -1;                          ///< a Softmax tail's softmax
  llvm::SmallVector<int, 8> softmaxEpilogue; ///< elementwise ops after that softmax
  int pool = -1;                             ///< a Pool (or Softmax) tail's pool
  llvm::SmallVector<int, 8> poolEpilogue;    ///< elementwise ops after that pool
  /// Plain conv anchors (TailKind::None): also gather per-(n, c) sum and sum of squares of the
  /// output in the epilogue, for a norm+epilogue+reduce group that normalises that output.
  bool gatherStats = false;
  /// Elementwise groups: every op of the tree, in graph order (root is the last one).
  llvm::SmallVector<int, 8> members;
  ValueId output = -1; ///< the one value the group produces

  /// Every op of the group, in graph order.
  llvm::SmallVector<int, 16> ops() const;
};

/// One pattern that was tried at an op and did not apply, for `sinterc explain --why`.
struct FusionRejection {
  int op = -1;
  std::string pattern;
  std::string reason;
};

struct FusionResult {
  std::vector<FusionGroup> groups;
  std::vector<FusionRejection> rejections;
};

/// The ops a conv anchor's kernel may run after its epilogue (each may be null): a softmax
/// over the channels and then a pool, or a reduction over the channels.
struct ConvTailOps {
  const Op *softmax = nullptr, *pool = nullptr, *reduce = nullptr;
};

/// What the fuse pass asks of the planner.
struct FuseOptions {
  /// Whether the kernel of conv anchor `anchor` can run the `tail` ops after its epilogue;
  /// when it cannot, `why` says so. Unset: no conv takes any.
  std::function<bool(const Graph &, const Op &anchor, const ConvTailOps &tail, std::string &why)>
      anchorRunsTail;
};

/// Whether reduction `red` of a rank-`rank` [N, C, spatial...] tensor folds whole (n, c)
/// planes: every spatial dim, and optionally C too (`*withChannels`, where given), so that
/// per-(n, c) sums are all it needs.
bool foldsWholePlanes(const Op &red, unsigned rank, bool *withChannels = nullptr);

/// Partitions every op of `graph` (verified, canonicalized) into fusion groups, in an order
/// that respects data dependencies. Every op belongs to exactly one group.
FusionResult fuse(const Graph &graph, const FuseOptions &options = {});

} // namespace sinter
