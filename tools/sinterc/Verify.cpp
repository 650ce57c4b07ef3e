//===- tools/sinterc/Verify.cpp - `sinterc verify`: parse, verify, print typed -------===//
//
// Parses a .sir file, verifies every graph and infers every type, then prints the graph(s)
// back with each op's inferred `: type`. An ONNX model is imported and printed the same way,
// each op followed by the model's node(s) it came from. It is the quickest way to see what
// shapes a graph produces, or where and why it is malformed.
//
//===--------------------------------------------------------------------------------===//
#include "Subcommand.h"

#include "frontend/OnnxImport.h"
#include "ir/Error.h"
#include "ir/Parser.h"
#include "ir/Printer.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace sinter::tool {
namespace {

struct VerifyOptions {
  std::string file;
  std::string graph;
};

llvm::Error runVerify(const VerifyOptions &opts) {
  if (isOnnxPath(opts.file)) {
    auto model = importOnnx(opts.file);
    if (!model)
      return model.takeError();
    if (!opts.graph.empty() && opts.graph != model->graph.name)
      return makeError(opts.file + ": the imported graph is named '" + model->graph.name +
                       "', not '" + opts.graph + "'");
    int64_t values = 0;
    for (const auto &[name, t] : model->weights)
      values += t.numel();
    llvm::outs() << "# " << opts.file << ": ONNX opset " << model->opset
                 << (model->producer.empty() ? "" : ", from " + model->producer) << "; "
                 << model->weights.size() << " params with their values in the file (" << values
                 << " numbers)\n"
                 << printGraph(model->graph);
    return llvm::Error::success();
  }
  auto graphs = parseSirFile(opts.file);
  if (!graphs)
    return graphs.takeError();
  if (opts.graph.empty()) {
    // Without --graph the whole file is verified and printed.
    for (size_t i = 0; i < graphs->size(); ++i)
      llvm::outs() << (i ? "\n" : "") << printGraph((*graphs)[i]);
    return llvm::Error::success();
  }
  auto graph = selectGraph(std::move(*graphs), opts.graph, opts.file);
  if (!graph)
    return graph.takeError();
  llvm::outs() << printGraph(*graph);
  return llvm::Error::success();
}

} // namespace

Subcommand registerVerify(CLI::App &app) {
  auto opts = std::make_shared<VerifyOptions>();
  CLI::App *sub = app.add_subcommand(
      "verify", "Parse a .sir file (or import a .onnx model), verify it and print every graph "
                "with its inferred types");
  sub->footer("Example:\n  sinterc verify s0.sir\n  sinterc verify models.sir --graph block1\n"
              "Errors name file:line:col, e.g. 's0.sir:6:8: group_norm: groups=7 does not "
              "divide C=128'.\n");
  sub->add_option("file", opts->file, "The .sir file or .onnx model")->required();
  sub->add_option("--graph", opts->graph,
                  "Print only the graph of this name (default: every graph of the file)");
  return {sub, [opts] { return runVerify(*opts); }};
}

} // namespace sinter::tool
