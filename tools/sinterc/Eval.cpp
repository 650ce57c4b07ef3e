//===- tools/sinterc/Eval.cpp - `sinterc eval`: the float64 CPU reference ------------===//
//
// Runs a graph through the CPU reference interpreter (ir/Reference.h) on tensors read from
// safetensors files (an ONNX model's params default to its own weights) and writes the
// results, rounded to f32, as a safetensors file named by the returned values. It needs no
// GPU: it is the oracle that `sinterc check` and the tests compare the GPU against, and what
// tests/torch/crosscheck.py compares with PyTorch.
//
//===--------------------------------------------------------------------------------===//
#include "Subcommand.h"

#include "ir/Random.h"
#include "ir/Reference.h"
#include "ir/Safetensors.h"

#include <memory>

namespace sinter::tool {
namespace {

struct EvalOptions {
  std::string file;
  std::string graph;
  std::string inputs;
  std::string params;
  std::string output;
  unsigned threads = 0;
  int64_t seed = -1;
};

llvm::Error runEval(const EvalOptions &opts) {
  auto loaded = loadGraphFile(opts.file, opts.graph);
  if (!loaded)
    return loaded.takeError();
  const Graph *graph = &loaded->graph;
  auto bindings = loadTensors({opts.inputs, opts.params});
  if (!bindings)
    return bindings.takeError();
  // An ONNX model's weights bind every param the files do not.
  addMissing(*bindings, loaded->weights);
  if (opts.seed >= 0)
    // Arguments not given in a file are drawn at random; bound ones are kept.
    for (auto &[name, t] : randomBindings(*graph, uint64_t(opts.seed)))
      bindings->emplace(name, std::move(t));
  ReferenceOptions ropts;
  ropts.threads = opts.threads;
  auto results = evaluateReference(*graph, *bindings, ropts);
  if (!results)
    return results.takeError();
  return writeSafetensors(opts.output, toTensorMap(*results),
                          {{"graph", graph->name}, {"producer", "sinterc eval"}});
}

} // namespace

Subcommand registerEval(CLI::App &app) {
  auto opts = std::make_shared<EvalOptions>();
  CLI::App *sub =
      app.add_subcommand("eval", "Evaluate a graph with the float64 CPU reference (no GPU needed)");
  sub->footer(
      "Tensors are bound by name: the graph argument %x is the tensor 'x' of --inputs or\n"
      "--params (either file may hold any argument; a name in both is an error). Results\n"
      "are computed in float64 and written as f32 under the returned values' names. An\n"
      "ONNX model's params default to the weights stored in the model.\n\n"
      "Example:\n"
      "  sinterc eval s0.sir --inputs x.safetensors --params w.safetensors --output o.safetensors\n"
      "  sinterc eval s0.sir --seed 7 --output o.safetensors   # random data for every argument\n");
  sub->add_option("file", opts->file, "The .sir file or .onnx model")->required();
  sub->add_option("--graph", opts->graph, "The graph to run when the file holds several");
  sub->add_option("--inputs", opts->inputs, "Safetensors file with the per-call inputs");
  sub->add_option("--params", opts->params, "Safetensors file with the params (weights)");
  sub->add_option("--output,-o", opts->output, "Safetensors file to write the results to")
      ->required();
  sub->add_option("--threads", opts->threads, "Worker threads (default: all hardware threads)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--seed", opts->seed,
                  "Draw every argument missing from the files at random with this seed "
                  "(ir/Random.h: PyTorch-like init for weights, N(0,1) inputs)")
      ->check(CLI::NonNegativeNumber);
  return {sub, [opts] { return runEval(*opts); }};
}

} // namespace sinter::tool
