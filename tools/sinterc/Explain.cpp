//===- tools/sinterc/Explain.cpp - `sinterc explain`: the fusion plan, readable --------===//
//
// Runs the compiler's passes (no NVRTC, no GPU) and prints what compiler/Explain.h renders:
// the fusion groups, the kernels with templates, tiles, shapes, bytes, FLOPs and roofline
// floors, and with --why the patterns that did not apply; --dot writes Graphviz.
//
//===--------------------------------------------------------------------------------===//
#include "CompileFlags.h"
#include "Subcommand.h"

#include "ir/Error.h"

#include "compiler/Explain.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace sinter::tool {
namespace {

struct ExplainCmdOptions {
  std::string file;
  std::string dot;
  bool why = false;
  CompileFlags flags;
};

llvm::Error runExplain(const ExplainCmdOptions &opts) {
  auto input = loadForCompile(opts.file, opts.flags);
  if (!input)
    return input.takeError();
  const Graph *graph = &input->graph;
  const JitOptions *jopts = &input->options;
  auto result = runPipeline(*graph, {jopts->precision, jopts->arch, false});
  if (!result)
    return result.takeError();
  ExplainOptions eopts;
  eopts.arch = jopts->arch;
  eopts.precision = opts.flags.precision;
  eopts.why = opts.why;
  llvm::outs() << renderExplain(*result, eopts);
  if (!opts.dot.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(opts.dot, ec);
    if (ec)
      return makeError("cannot write " + opts.dot + ": " + ec.message());
    os << renderDot(*result);
  }
  return llvm::Error::success();
}

} // namespace

Subcommand registerExplain(CLI::App &app) {
  auto opts = std::make_shared<ExplainCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "explain", "Show the fusion plan: groups, kernels, shapes, bytes, FLOPs, roofline floors");
  sub->footer(
      "Nothing is compiled: the passes run on the host only. For each fusion group: its\n"
      "pattern and ops. For each kernel (launch order): template, tile configuration, math\n"
      "mode (ffma, tf32, 3xtf32), MB it must move through DRAM, GFLOP, and its roofline floor\n"
      "on --arch: max(FLOPs / rate of its math mode, bytes / DRAM bandwidth) from datasheet\n"
      "peaks (sm_80, sm_86, sm_89, sm_90, sm_90a). Then the baked shapes and launch of each.\n\n"
      "Examples:\n"
      "  sinterc explain s1.sir\n"
      "  sinterc explain s3.sir --why --dot s3.dot && dot -Tsvg s3.dot -o s3.svg\n");
  sub->add_option("file", opts->file, "The .sir file or .onnx model")->required();
  sub->add_flag("--why", opts->why,
                "Also say why each convolution runs on its engine, and list each pattern tried at "
                "an anchor and why it failed");
  sub->add_option("--dot", opts->dot, "Write the graph as Graphviz, fusion groups as clusters");
  addCompileFlags(sub, opts->flags, /*compiles=*/false);
  return {sub, [opts] { return runExplain(*opts); }};
}

} // namespace sinter::tool
