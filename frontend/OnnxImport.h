//===- frontend/OnnxImport.h - ONNX models into sinter graphs ------------------------===//
//
// importOnnx reads an ONNX model (as torch.onnx.export writes it, with either exporter) and
// returns the equivalent sinter graph with the values of its weights. What it accepts:
//  - opsets 13 to 21 of the default domain; the ops docs/onnx.md lists, each lowered to the
//    catalog op(s) with the same PyTorch meaning;
//  - f32 graph inputs with static shapes; they become the graph's inputs, under their ONNX
//    names (made into valid .sir names);
//  - initializers and Constant nodes, inline or as external data (model.onnx +
//    model.onnx.data, the dynamo exporter's layout); those an op consumes as a tensor become
//    params whose values come back in OnnxModel::weights, single numbers that feed a binary
//    op become scalar operands;
//  - shape sub-graphs (Shape, Gather, Concat, Constant, Unsqueeze, Range, Expand, ... feeding
//    Reshape and friends), which are folded to constants while importing.
// Nodes that do not lead to a graph output are ignored. The exporters' decompositions that
// need the weights' values to recognise (GroupNorm as Reshape -> InstanceNormalization with
// unit scale -> Reshape -> Mul -> Add, softplus's threshold as Greater/Where) are re-formed
// into the catalog's op here; those that do not (GELU's erf and tanh formulas, silu,
// hardswish, mish, logsumexp) are re-formed for every graph by the compiler's canonicalize.
//
// Everything else is an error naming the model file and the node: its name, op type and
// the opset, e.g. "m.onnx: node 'lstm0' (LSTM, opset 20): op type 'LSTM' is not supported".
// A truncated or corrupt file is an error, never a crash.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace sinter {

/// A model imported from ONNX.
struct OnnxModel {
  /// Verified and typed; named after the file (its stem made into an identifier). Every op
  /// records the ONNX node(s) it came from in Op::origin.
  Graph graph;
  /// The value of every param of `graph`, by name.
  TensorMap weights;
  /// The default domain's opset the model imports.
  int64_t opset = 0;
  /// producer_name and producer_version, e.g. "pytorch 2.11.0".
  std::string producer;
};

/// Whether `path` names an ONNX model: it ends in ".onnx".
bool isOnnxPath(llvm::StringRef path);

/// Reads and imports the model at `path`; external data files are found next to it.
llvm::Expected<OnnxModel> importOnnx(llvm::StringRef path);

/// Imports a model from its serialized bytes. `fileName` names it in errors and gives the
/// graph its name; external data files are read relative to `dataDir` (when empty, a model
/// with external data is an error).
llvm::Expected<OnnxModel> importOnnxBytes(llvm::StringRef bytes, llvm::StringRef fileName,
                                          llvm::StringRef dataDir);

} // namespace sinter
