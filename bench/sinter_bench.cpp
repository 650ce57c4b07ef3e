//===- bench/sinter_bench.cpp - timing sinter on a graph, for the side-by-side -----===//
//
// The sinter half of bench/side_by_side.py. For one .sir graph and one safetensors file of
// inputs and params it measures what a user pays: the cold compile (an empty kernel cache),
// the warm load (every kernel from the cache, modules loaded), and the run time: CUDA events
// around each run of the whole graph, outputs poisoned with NaN before every run (outside the
// timed region), after warm-up runs; median, min and max over the iterations, once with the
// kernels launched one by one on a stream (as PyTorch eager does) and once as a replayed
// CUDA graph. The last run's
// outputs are written as safetensors so the script can compare them with PyTorch. One JSON
// object on stdout.
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Jit.h"
#include "ir/Parser.h"
#include "ir/Safetensors.h"
#include "runtime/Driver.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

using namespace sinter;

namespace {

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

int fail(llvm::Error err) {
  std::fprintf(stderr, "sinter_bench: %s\n", llvm::toString(std::move(err)).c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"Times a sinter-compiled graph: cold compile, warm load, and runs."};
  std::string sir, inputs, output, cacheDir, graphName, precision = "auto";
  int iterations = 50, warmup = 5;
  app.add_option("graph", sir, "the .sir file")->required()->check(CLI::ExistingFile);
  app.add_option("--inputs", inputs, "safetensors with every input and param")->required();
  app.add_option("--output", output, "where to write the outputs (safetensors)");
  app.add_option("--cache-dir", cacheDir, "kernel cache for the run (emptied first)")->required();
  app.add_option("--graph", graphName, "graph name when the file holds several");
  app.add_option("--precision", precision, "auto, fp32 or tf32");
  app.add_option("--iterations", iterations, "timed runs");
  app.add_option("--warmup", warmup, "untimed runs first");
  CLI11_PARSE(app, argc, argv);

  auto graphs = parseSirFile(sir);
  if (!graphs)
    return fail(graphs.takeError());
  auto graph = selectGraph(std::move(*graphs), graphName, sir);
  if (!graph)
    return fail(graph.takeError());
  auto prec = parsePrecision(precision);
  if (!prec) {
    std::fprintf(stderr, "sinter_bench: unknown precision '%s'\n", precision.c_str());
    return 1;
  }
  auto data = readSafetensors(inputs);
  if (!data)
    return fail(data.takeError());
  auto api = driver();
  if (!api)
    return fail(api.takeError());
  auto ctx = gpu();
  if (!ctx)
    return fail(ctx.takeError());

  std::filesystem::remove_all(cacheDir);
  JitOptions opts;
  opts.precision = *prec;
  opts.cacheDir = cacheDir;
  auto t0 = std::chrono::steady_clock::now();
  auto cold = compileGraph(*graph, opts);
  if (!cold)
    return fail(cold.takeError());
  double coldSeconds = secondsSince(t0);

  t0 = std::chrono::steady_clock::now();
  auto warm = compileGraph(*graph, opts);
  if (!warm)
    return fail(warm.takeError());
  ExecutablePlan plan = warm->pipeline.plan.plan;
  auto exe = Executable::create(plan, std::move(warm->kernels));
  if (!exe)
    return fail(exe.takeError());
  double warmSeconds = secondsSince(t0);

  Bindings bindings;
  std::vector<const BufferSpec *> outputs;
  for (const BufferSpec &b : plan.buffers) {
    if (b.kind == BufferSpec::Kind::Workspace || b.aliasOf >= 0)
      continue;
    CUdeviceptr p = 0;
    if (auto err = cuCheck(api->cuMemAlloc(&p, b.bytes), "allocating '" + b.name + "'"))
      return fail(std::move(err));
    bindings[b.name] = p;
    if (b.kind == BufferSpec::Kind::Output) {
      outputs.push_back(&b);
      continue;
    }
    auto it = data->find(b.name);
    if (it == data->end() || it->second.type.shape != b.type.shape) {
      std::fprintf(stderr, "sinter_bench: %s: no tensor '%s' of shape %s\n", inputs.c_str(),
                   b.name.c_str(), shapeStr(b.type.shape).c_str());
      return 1;
    }
    if (auto err = cuCheck(api->cuMemcpyHtoD(p, it->second.data.data(), b.bytes), "upload"))
      return fail(std::move(err));
  }

  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;
  if (auto err = cuCheck(api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream"))
    return fail(std::move(err));
  if (auto err = cuCheck(api->cuEventCreate(&start, CU_EVENT_DEFAULT), "event"))
    return fail(std::move(err));
  if (auto err = cuCheck(api->cuEventCreate(&stop, CU_EVENT_DEFAULT), "event"))
    return fail(std::move(err));
  // One timed run: poison the outputs (untimed), then events around the graph's launches,
  // issued either step by step on the stream or as one replay of a captured CUDA graph.
  auto timeRuns = [&](bool replay) -> llvm::Expected<std::vector<float>> {
    std::vector<float> ms;
    for (int i = 0; i < warmup + iterations; ++i) {
      for (const BufferSpec *b : outputs)
        if (auto err = cuCheck(api->cuMemsetD32Async(bindings[b->name], 0x7fc00000u,
                                                     b->bytes / 4, stream),
                               "poisoning outputs"))
          return err;
      if (auto err = cuCheck(api->cuEventRecord(start, stream), "event record"))
        return err;
      if (auto err = replay ? exe->get()->launchGraph(stream) : exe->get()->run(bindings, stream))
        return err;
      if (auto err = cuCheck(api->cuEventRecord(stop, stream), "event record"))
        return err;
      if (auto err = cuCheck(api->cuEventSynchronize(stop), "running the graph"))
        return err;
      float t = 0;
      if (auto err = cuCheck(api->elapsedTime(&t, start, stop), "event timer"))
        return err;
      if (i >= warmup)
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    return ms;
  };
  if (auto err = exe->get()->captureGraph(bindings, stream))
    return fail(std::move(err));
  auto graphMs = timeRuns(true);
  if (!graphMs)
    return fail(graphMs.takeError());
  // The stream-launched runs come last, so the outputs written below are theirs.
  auto streamMs = timeRuns(false);
  if (!streamMs)
    return fail(streamMs.takeError());
  const std::vector<float> &sorted = *streamMs;

  // Per kernel: one more run with events around every step, for the breakdown.
  nlohmann::json kernels = nlohmann::json::array();
  for (const PlannedKernel &k : cold->pipeline.plan.kernels)
    kernels.push_back({{"name", k.source.name},
                       {"template", k.source.templateName},
                       {"tile", k.source.tileConfig},
                       {"role", k.role},
                       {"flops", k.source.flops},
                       {"bytes", k.source.bytes}});

  if (!output.empty()) {
    TensorMap out;
    for (const BufferSpec *b : outputs) {
      HostTensor t;
      t.type = b->type;
      t.data.resize(b->bytes / 4);
      if (auto err = cuCheck(api->cuMemcpyDtoH(t.data.data(), bindings[b->name], b->bytes),
                             "download"))
        return fail(std::move(err));
      out[b->name] = std::move(t);
    }
    if (auto err = writeSafetensors(output, out))
      return fail(std::move(err));
  }
  for (auto &[name, p] : bindings)
    api->cuMemFree(p);

  nlohmann::json j = {{"graph", graph->name},
                      {"device", ctx->info.name},
                      {"arch", ctx->info.arch},
                      {"precision", precision},
                      {"kernels", kernels},
                      {"launches", plan.kernels.size()},
                      {"cold_compile_s", coldSeconds},
                      {"warm_load_s", warmSeconds},
                      {"ms_median", sorted[sorted.size() / 2]},
                      {"ms_min", sorted.front()},
                      {"ms_max", sorted.back()},
                      {"graph_ms_median", (*graphMs)[graphMs->size() / 2]},
                      {"graph_ms_min", graphMs->front()},
                      {"iterations", iterations}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
