//===- ir/Reference.h - the float64 CPU reference interpreter ----------------------===//
//
// The oracle every GPU kernel is tested against: it evaluates a verified graph op by op in
// float64, with PyTorch's semantics for every op of ../shared/design/IR.md (the function each
// row names), from f32 inputs. It favours obvious correctness over speed, but is blocked and
// multithreaded enough that the five workloads at full size finish in minutes on a 16-core
// machine. Intermediate tensors are freed after their last use.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Tensor.h"

#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace sinter {

/// A float64 tensor: the reference's working form of every value.
struct RefTensor {
  TensorType type;
  std::vector<double> data; ///< row-major, type.numel() elements
};

/// Results by value name (without '%').
using RefMap = std::map<std::string, RefTensor>;

struct ReferenceOptions {
  unsigned threads = 0; ///< worker threads; 0 = all hardware threads
};

/// Evaluates a verified graph in float64. `bindings` holds every argument (inputs and
/// params) by name; extra entries are ignored. Returns each returned value by name. Errors:
/// a missing binding, a binding whose shape differs from the argument's type, a graph with
/// non-f32 values.
llvm::Expected<RefMap> evaluateReference(const Graph &g, const TensorMap &bindings,
                                         const ReferenceOptions &opts = {});

/// Rounds a reference result to f32, the form results are stored and compared in.
HostTensor toHostTensor(const RefTensor &t);

/// The results of evaluateReference rounded to f32.
TensorMap toTensorMap(const RefMap &results);

} // namespace sinter
