//===- tools/sinterc/Subcommand.h - how sinterc's subcommands plug in ---------------===//
//
// sinterc is a set of subcommands (verify, eval, compile, explain, run, check), one per file
// in this folder. Each file defines one `register<Name>` function that adds its subcommand,
// options and help text to the CLI11 app and returns the action to run when the user picks
// it; main.cpp lists the register functions. Adding a subcommand is one new file and one
// line in that list.
//
// Actions report bad input (a missing file, a malformed graph, a failed check) as an
// llvm::Error: main prints `sinterc: <message>` and exits 1. An error made with
// internalError() exits 2, as does any exception that escapes.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"
#include "ir/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace sinter::tool {

/// Runs a chosen subcommand after the command line was parsed.
using Action = std::function<llvm::Error()>;

/// One registered subcommand: its CLI11 node and what to run when it is chosen.
struct Subcommand {
  CLI::App *app = nullptr;
  Action run;
};

// One per file of this folder; main.cpp calls each in the order `sinterc --help` lists them.
Subcommand registerVerify(CLI::App &app);
Subcommand registerEval(CLI::App &app);
Subcommand registerCompile(CLI::App &app);
Subcommand registerExplain(CLI::App &app);
Subcommand registerRun(CLI::App &app);
Subcommand registerCheck(CLI::App &app);

/// An error that is sinter's fault, not the user's: main exits 2 on it.
class InternalError : public llvm::ErrorInfo<InternalError> {
public:
  static char ID;
  explicit InternalError(std::string message) : text(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override { os << text; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string text;
};

/// An InternalError carrying `message`.
llvm::Error internalError(const llvm::Twine &message);

/// A graph to work on, with the values of its params when the file has them.
struct LoadedGraph {
  Graph graph;
  /// An ONNX model's weights (empty for a .sir file): used for every param that no
  /// --params file binds.
  TensorMap weights;
};

/// Reads the graph of `path`: a .sir file (parsed and verified; `graphName` picks a graph,
/// or the only one when empty) or an ONNX model (.onnx, imported with its weights; a
/// `graphName` must then be the imported graph's name).
llvm::Expected<LoadedGraph> loadGraphFile(llvm::StringRef path, llvm::StringRef graphName);

/// loadGraphFile without the weights.
llvm::Expected<Graph> loadGraph(llvm::StringRef path, llvm::StringRef graphName);

/// Adds to `tensors` each of `weights` that it lacks: files given on the command line
/// override a model's own weights.
void addMissing(TensorMap &tensors, const TensorMap &weights);

/// Reads the safetensors files `paths` (empty entries skipped) into one map; a name that
/// appears in two files is an error.
llvm::Expected<TensorMap> loadTensors(llvm::ArrayRef<std::string> paths);

} // namespace sinter::tool
