//===- tools/sinterc/Run.cpp - `sinterc run`: a graph or a bundle on the GPU ----------===//
//
// Runs a .sir or .onnx (JIT-compiled through the kernel cache) or a bundle directory written
// by `sinterc compile` (Executable::load: no NVRTC). Arguments come from --inputs / --params
// safetensors files, then from the ONNX model's weights (or the bundle's params.safetensors);
// the ones still missing are drawn at random (ir/Random.h) from --seed, using
// the bundle's graph.sir for a bundle. Results go to --output as f32 safetensors and a
// one-line summary of each is printed. --bench N times N runs with CUDA events after a
// warm-up and prints median / min / max milliseconds with the bandwidth and FLOP rate they
// imply from the plan's bytes and FLOPs.
//
//===--------------------------------------------------------------------------------===//
#include "CompileFlags.h"
#include "Subcommand.h"

#include "ir/Error.h"

#include "ir/Random.h"
#include "ir/Safetensors.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>

namespace sinter::tool {
namespace {

struct RunCmdOptions {
  std::string target;
  std::string inputs, params, output;
  int bench = 0;
  uint64_t seed = 0;
  CompileFlags flags;
};

/// Device buffers for every bound buffer of a plan, freed at the end of the run.
struct DeviceBindings {
  const DriverApi &api;
  Bindings bindings;
  ~DeviceBindings() {
    for (auto &[name, p] : bindings)
      api.cuMemFree(p);
  }
};

llvm::Error bench(Executable &exe, const TensorMap &tensors, int iterations) {
  auto ctx = gpu();
  if (!ctx)
    return ctx.takeError();
  DeviceBindings dev{ctx->api, {}};
  for (const BufferSpec &b : exe.plan().buffers) {
    if (b.kind == BufferSpec::Kind::Workspace || b.aliasOf >= 0)
      continue;
    CUdeviceptr p = 0;
    if (auto err = cuCheck(ctx->api.cuMemAlloc(&p, size_t(std::max<int64_t>(b.bytes, 4))),
                           "allocating '" + b.name + "'"))
      return err;
    dev.bindings[b.name] = p;
    auto it = tensors.find(b.name);
    if (b.kind != BufferSpec::Kind::Output && it != tensors.end())
      if (auto err = cuCheck(ctx->api.cuMemcpyHtoD(p, it->second.data.data(), size_t(b.bytes)),
                             "uploading '" + b.name + "'"))
        return err;
  }
  auto times = exe.time(dev.bindings, iterations, /*warmup=*/3);
  if (!times)
    return times.takeError();
  std::vector<float> t = *times;
  std::sort(t.begin(), t.end());
  double median = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  double bytes = 0, flops = 0;
  for (const KernelSpec &k : exe.plan().kernels) {
    bytes += k.bytes;
    flops += k.flops;
  }
  llvm::outs() << llvm::format("bench %s on %s: %d runs after 3 warm-up, median %.4f ms, "
                               "min %.4f ms, max %.4f ms\n",
                               exe.plan().graphName.c_str(), ctx->info.name.c_str(), iterations,
                               median, double(t.front()), double(t.back()));
  llvm::outs() << llvm::format("  at the median: %.1f GB/s of %.1f MB moved, %.2f TFLOP/s of "
                               "%.2f GFLOP\n",
                               bytes / (median * 1e-3) / 1e9, bytes / 1e6,
                               flops / (median * 1e-3) / 1e12, flops / 1e9);
  return llvm::Error::success();
}

/// Random data for arguments of a bundle without graph.sir: U(-1, 1) by buffer.
void fillFromPlan(const ExecutablePlan &plan, uint64_t seed, TensorMap &tensors) {
  for (const BufferSpec &b : plan.buffers) {
    if ((b.kind != BufferSpec::Kind::Input && b.kind != BufferSpec::Kind::Param) ||
        b.aliasOf >= 0 || tensors.count(b.name))
      continue;
    HostTensor t(b.type.shape);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + std::hash<std::string>{}(b.name);
    for (float &v : t.data) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17; // xorshift64
      v = float(double(s >> 11) / double(1ull << 53) * 2 - 1);
    }
    tensors.emplace(b.name, std::move(t));
  }
}

llvm::Error runRun(const RunCmdOptions &opts) {
  if (opts.bench < 0)
    return makeError("--bench must be a positive number of runs");
  auto given = loadTensors({opts.inputs, opts.params});
  if (!given)
    return given.takeError();
  TensorMap tensors = std::move(*given);

  std::unique_ptr<Executable> exe;
  std::optional<Graph> graph;
  if (llvm::sys::fs::is_directory(opts.target)) {
    auto loaded = Executable::load(opts.target);
    if (!loaded)
      return loaded.takeError();
    exe = std::move(*loaded);
    std::string sir = opts.target + "/graph.sir";
    if (llvm::sys::fs::exists(sir)) {
      auto g = loadGraph(sir, "");
      if (!g)
        return g.takeError();
      graph = std::move(*g);
    }
    // A bundle compiled from an ONNX model carries its weights.
    std::string weights = opts.target + "/params.safetensors";
    if (llvm::sys::fs::exists(weights)) {
      auto w = readSafetensors(weights);
      if (!w)
        return w.takeError();
      addMissing(tensors, *w);
    }
  } else {
    auto input = loadForCompile(opts.target, opts.flags);
    if (!input)
      return input.takeError();
    graph = std::move(input->graph);
    addMissing(tensors, input->weights);
    auto jitted = jit(*graph, input->options);
    if (!jitted)
      return jitted.takeError();
    exe = std::move(*jitted);
  }
  // Arguments given in files are kept; the rest are drawn at random.
  if (graph)
    for (auto &[name, t] : randomBindings(*graph, opts.seed))
      tensors.emplace(name, std::move(t));
  else
    fillFromPlan(exe->plan(), opts.seed, tensors);

  auto outputs = exe->runHost(tensors);
  if (!outputs)
    return outputs.takeError();
  for (const auto &[name, t] : *outputs) {
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    size_t nans = 0;
    for (float v : t.data) {
      if (std::isnan(v)) {
        ++nans;
        continue;
      }
      sum += v, lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
    }
    llvm::outs() << llvm::format("%s %s: mean %.6g, min %.6g, max %.6g", name.c_str(),
                                 t.type.str().c_str(),
                                 sum / double(std::max<size_t>(1, t.data.size())), lo, hi);
    if (nans)
      llvm::outs() << ", " << nans << " NaN";
    llvm::outs() << "\n";
  }
  if (!opts.output.empty())
    if (auto err = writeSafetensors(
            opts.output, *outputs, {{"graph", exe->plan().graphName}, {"producer", "sinterc run"}}))
      return err;
  if (opts.bench > 0)
    return bench(*exe, tensors, opts.bench);
  return llvm::Error::success();
}

} // namespace

Subcommand registerRun(CLI::App &app) {
  auto opts = std::make_shared<RunCmdOptions>();
  CLI::App *sub =
      app.add_subcommand("run", "Run a graph (.sir or .onnx, JIT) or a compiled bundle on the GPU");
  sub->footer(
      "An ONNX model's params default to its weights. Arguments still missing are drawn at\n"
      "random from --seed (weights as\n"
      "PyTorch initialises them, inputs N(0,1), norm gamma/beta random). A bundle directory\n"
      "from `sinterc compile` is loaded without NVRTC; it must match the GPU's arch.\n"
      "--bench N times N runs (CUDA events, 3 warm-up runs first) and prints median/min/max\n"
      "ms and the achieved GB/s and TFLOP/s from the plan's bytes and FLOPs.\n\n"
      "Examples:\n"
      "  sinterc run s0.sir --bench 20\n"
      "  sinterc run s0.bundle --inputs x.safetensors --params w.safetensors -o out.safetensors\n");
  sub->add_option("target", opts->target, "The .sir file, .onnx model or a bundle directory")
      ->required();
  sub->add_option("--inputs", opts->inputs, "Safetensors file with per-call inputs");
  sub->add_option("--params", opts->params, "Safetensors file with the params (weights)");
  sub->add_option("-o,--output", opts->output, "Write the results to this safetensors file");
  sub->add_option("--bench", opts->bench, "Time N runs after a warm-up")
      ->check(CLI::PositiveNumber);
  sub->add_option("--seed", opts->seed, "Seed of the random arguments (default 0)");
  addCompileFlags(sub, opts->flags);
  return {sub, [opts] { return runRun(*opts); }};
}

} // namespace sinter::tool
