//===- tools/sinterc/Verify.cpp - `sinterc verify`: parse, verify, print typed -------===//
//
// Parses a .sir file, verifies every graph and infers every type, then prints the graph(s)
// back with each op's inferred `: type`. It is the quickest way to see what shapes a graph
// produces, or where and why it is malformed.
//
//===--------------------------------------------------------------------------------===//
#include "Subcommand.h"

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
      "verify", "Parse a .sir file, verify it and print every graph with its inferred types");
  sub->footer("Example:\n  sinterc verify s0.sir\n  sinterc verify models.sir --graph block1\n"
              "Errors name file:line:col, e.g. 's0.sir:6:8: group_norm: groups=7 does not "
              "divide C=128'.\n");
  sub->add_option("file", opts->file, "The .sir file")->required();
  sub->add_option("--graph", opts->graph,
                  "Print only the graph of this name (default: every graph of the file)");
  return {sub, [opts] { return runVerify(*opts); }};
}

} // namespace sinter::tool
