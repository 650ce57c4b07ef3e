//===- tools/sinterc/Check.cpp - `sinterc check`: GPU against the float64 reference ----===//
//
// Draws random data for every argument (ir/Random.h: random weights, inputs and norm
// gamma/beta, so that a normalised output is not trivially zero; an ONNX model's params and
// --params are used as given), runs the graph on the GPU
// and in the float64 CPU reference, and prints the relative L2 and max-abs error of every
// output. The tolerance follows the plan: 1e-5 when every kernel is fp32-accurate (FFMA or
// 3xTF32), 2e-3 when one multiplies in single TF32. Over the tolerance, or a NaN, is a failed
// check: exit status 1.
//
//===--------------------------------------------------------------------------------===//
#include "CompileFlags.h"
#include "Subcommand.h"

#include "ir/Error.h"

#include "ir/Random.h"
#include "ir/Reference.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <memory>

namespace sinter::tool {
namespace {

struct CheckCmdOptions {
  std::string file;
  uint64_t seed = 0;
  std::string params;
  unsigned refThreads = 0;
  double tolerance = 0; ///< 0: the precision's tolerance
  CompileFlags flags;
};

llvm::Error runCheck(const CheckCmdOptions &opts) {
  auto input = loadForCompile(opts.file, opts.flags);
  if (!input)
    return input.takeError();
  const Graph *graph = &input->graph;
  auto compiled = compileGraph(*graph, input->options);
  if (!compiled)
    return compiled.takeError();
  bool tf32 = false;
  for (const PlannedKernel &k : compiled->pipeline.plan.kernels)
    tf32 |= k.math == MathMode::Tf32;
  double tolerance =
      opts.tolerance > 0 ? opts.tolerance : referenceTolerance(compiled->pipeline.plan);

  auto exe = Executable::create(compiled->pipeline.plan.plan, std::move(compiled->kernels));
  if (!exe)
    return exe.takeError();
  // Inputs are random; params come from --params, then the model's weights, then random.
  auto given = loadTensors({opts.params});
  if (!given)
    return given.takeError();
  TensorMap bindings = std::move(*given);
  addMissing(bindings, input->weights);
  for (auto &[name, t] : randomBindings(*graph, opts.seed))
    bindings.emplace(name, std::move(t));
  auto got = (*exe)->runHost(bindings);
  if (!got)
    return got.takeError();
  ReferenceOptions ropts;
  ropts.threads = opts.refThreads;
  auto want = evaluateReference(*graph, bindings, ropts);
  if (!want)
    return want.takeError();

  llvm::outs() << "check " << graph->name << " (seed " << opts.seed << ", precision "
               << opts.flags.precision << (tf32 ? ", a TF32 kernel" : ", fp32-accurate")
               << "): tolerance " << llvm::format("%.0e", tolerance) << " relative L2\n";
  std::string firstFailure;
  for (const auto &[name, ref] : *want) {
    auto it = got->find(name);
    if (it == got->end())
      return internalError("the GPU run produced no output '" + name + "'");
    auto [rel, maxAbs] = compareTensors(it->second, ref.data);
    bool ok = !std::isnan(rel) && !std::isnan(maxAbs) && rel <= tolerance;
    llvm::outs() << llvm::format("  %-12s %-28s rel L2 %.3e  max abs %.3e  %s\n", name.c_str(),
                                 ref.type.str().c_str(), rel, maxAbs, ok ? "ok" : "FAIL");
    if (!ok && firstFailure.empty())
      firstFailure = llvm::formatv("check failed: {0} output '{1}' has relative L2 error {2:e2} "
                                   "over the tolerance {3:e0}",
                                   graph->name, name, rel, tolerance)
                         .str();
  }
  if (!firstFailure.empty())
    return makeError(firstFailure);
  return llvm::Error::success();
}

} // namespace

Subcommand registerCheck(CLI::App &app) {
  auto opts = std::make_shared<CheckCmdOptions>();
  CLI::App *sub =
      app.add_subcommand("check", "Compare the GPU result with the float64 CPU reference");
  sub->footer(
      "Every argument is drawn at random from --seed (weights, inputs, and norm gamma/beta\n"
      "too), except params given by --params or stored in an ONNX model. Prints each\n"
      "output's relative L2 error ||gpu - ref|| / ||ref|| and max abs\n"
      "error; exits 1 when one is over the tolerance: 1e-5 when every kernel is\n"
      "fp32-accurate, 2e-3 when one multiplies in TF32 (--precision auto allows TF32\n"
      "convolutions, fp32 forbids TF32, tf32 allows it everywhere). The reference runs on\n"
      "the CPU in float64: on the full-size workloads it takes a while.\n\n"
      "Examples:\n"
      "  sinterc check s3.sir\n"
      "  sinterc check s0.sir --precision fp32 --seed 7\n");
  sub->add_option("file", opts->file, "The .sir file or .onnx model")->required();
  sub->add_option("--seed", opts->seed, "Seed of the random data (default 0)");
  sub->add_option("--params", opts->params,
                  "Safetensors file with params to use instead of random (or the model's) ones");
  sub->add_option("--tolerance", opts->tolerance,
                  "Relative L2 error allowed (default: the precision's, 1e-5 or 2e-3)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--ref-threads", opts->refThreads,
                  "Threads of the CPU reference (default: all hardware threads)");
  addCompileFlags(sub, opts->flags);
  return {sub, [opts] { return runCheck(*opts); }};
}

} // namespace sinter::tool
