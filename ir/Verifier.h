//===- ir/Verifier.h - verification and shape inference ----------------------------===//
//
// Checks every rule of the op catalog (../shared/design/IR.md): operand counts, attribute
// values, operand types and shapes, and infers each op's result type, the way PyTorch
// would compute it.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/Support/Error.h"

namespace sinter {

/// Infers the result type of `op` from its operands' (already inferred) types and its
/// attributes. Errors are one line that starts with the op's name and says what is wrong,
/// e.g. "group_norm: groups=7 does not divide C=128"; the caller adds the location.
llvm::Expected<TensorType> inferOpType(const Graph &graph, const Op &op);

/// Verifies a whole graph: SSA structure (operands defined before use, results returned),
/// and every op, setting each result's type. Errors are prefixed with the op's location
/// (Graph::locStr), e.g. "s0.sir:6:8: group_norm: groups=7 does not divide C=128".
llvm::Error verifyGraph(Graph &graph);

} // namespace sinter
