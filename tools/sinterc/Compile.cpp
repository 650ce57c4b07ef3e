//===- tools/sinterc/Compile.cpp - `sinterc compile`: a graph to a bundle of cubins ----===//
//
// Offline compilation: runs the whole pipeline and NVRTC (through the kernel cache) without
// a GPU and writes a bundle (runtime/Bundle.h): manifest.json with the plan, arch,
// precision, versions and cache keys, one cubin per kernel, the .cu sources with
// --keep-source, and graph.sir, the canonical text of the graph compiled, so that
// `sinterc run DIR` can draw the same random data as for the .sir, and for an ONNX model
// params.safetensors, its weights. Executable::load(DIR) then runs it with NVRTC never
// called.
//
//===--------------------------------------------------------------------------------===//
#include "CompileFlags.h"
#include "Subcommand.h"

#include "ir/Error.h"

#include "ir/Printer.h"
#include "ir/Safetensors.h"
#include "runtime/Bundle.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace sinter::tool {
namespace {

struct CompileCmdOptions {
  std::string file;
  std::string out;
  bool keepSource = false;
  CompileFlags flags;
};

llvm::Error runCompile(const CompileCmdOptions &opts) {
  auto input = loadForCompile(opts.file, opts.flags);
  if (!input)
    return input.takeError();
  const Graph *graph = &input->graph;
  auto compiled = compileGraph(*graph, input->options);
  if (!compiled)
    return compiled.takeError();
  const ExecutablePlan &plan = compiled->pipeline.plan.plan;
  if (auto err = writeBundle(opts.out, plan, compiled->kernels, opts.keepSource))
    return err;
  std::error_code ec;
  llvm::raw_fd_ostream sir(opts.out + "/graph.sir", ec);
  if (ec)
    return makeError("cannot write " + opts.out + "/graph.sir: " + ec.message());
  sir << printGraph(*graph);
  // An ONNX model's weights travel with the bundle: `sinterc run DIR` binds them.
  if (!input->weights.empty())
    if (auto err = writeSafetensors(opts.out + "/params.safetensors", input->weights,
                                    {{"graph", graph->name}, {"producer", "sinterc compile"}}))
      return err;

  size_t hits = 0;
  for (const CompiledKernel &k : compiled->kernels)
    hits += k.cacheHit;
  llvm::outs() << "compiled " << graph->name << " for " << plan.arch << " (precision "
               << plan.precision << "): " << compiled->kernels.size() << " kernels, " << hits
               << " from the cache, " << llvm::format("%.2f s", compiled->compileSeconds) << "\n";
  for (const CompiledKernel &k : compiled->kernels)
    llvm::outs() << "  " << k.name << ".cubin  " << formatBytes(k.cubin.size()) << "  "
                 << k.templateName << "  regs " << k.resources.registers << "\n";
  llvm::outs() << "wrote " << opts.out << "/manifest.json\n";
  return llvm::Error::success();
}

} // namespace

Subcommand registerCompile(CLI::App &app) {
  auto opts = std::make_shared<CompileCmdOptions>();
  CLI::App *sub = app.add_subcommand(
      "compile", "Compile a graph to a bundle directory of cubins (no GPU needed)");
  sub->footer(
      "The bundle holds manifest.json (graph signature, kernels in launch order with their\n"
      "launch configurations, workspace, arch, precision, NVRTC and sinter versions, cache\n"
      "keys, cubin checksums), one <kernel>.cubin per kernel and graph.sir (and for a .onnx\n"
      "model params.safetensors, its weights); --keep-source\n"
      "adds each kernel's .cu. `sinterc run DIR` and Executable::load(DIR) run it without\n"
      "NVRTC, on a GPU of the bundle's arch only. Kernels go through the kernel cache\n"
      "(see sinter-cache) unless --no-cache.\n\n"
      "Examples:\n"
      "  sinterc compile s0.sir -o s0.bundle\n"
      "  sinterc compile s3.sir --arch sm_80 --precision fp32 -o s3.a100 --keep-source\n");
  sub->add_option("file", opts->file, "The .sir file or .onnx model")->required();
  sub->add_option("-o,--output", opts->out, "The bundle directory to write")->required();
  sub->add_flag("--keep-source", opts->keepSource, "Write each kernel's CUDA source too");
  addCompileFlags(sub, opts->flags);
  return {sub, [opts] { return runCompile(*opts); }};
}

} // namespace sinter::tool
