//===- tests/gpu/GpuHarness.cpp - running a graph on the GPU against the reference -===//
#include "GpuHarness.h"

#include "ir/Parser.h"
#include "ir/Random.h"
#include "runtime/Driver.h"

#include <cmath>

namespace sinter::test {

std::string noGpuReason() {
  auto ctx = gpu();
  if (ctx)
    return "a GPU is present";
  return llvm::toString(ctx.takeError());
}

OutputError compare(const std::string &name, const std::vector<float> &got,
                    const std::vector<double> &want) {
  OutputError e;
  e.name = name;
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
    if (std::isfinite(got[i]) != std::isfinite(want[i]))
      ++e.nonFinite;
    if (!std::isfinite(got[i]) || !std::isfinite(want[i]))
      continue;
    double d = double(got[i]) - want[i];
    num += d * d;
    den += want[i] * want[i];
    e.maxAbs = std::max(e.maxAbs, std::fabs(d));
  }
  e.relL2 = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  return e;
}

namespace {

/// Device buffers for one run, freed on destruction.
struct DeviceBuffers {
  const DriverApi &api;
  Bindings bindings;
  ~DeviceBuffers() {
    for (auto &[name, ptr] : bindings)
      api.cuMemFree(ptr);
  }
};

} // namespace

GpuRun runAndCompare(const Graph &graph, uint64_t seed, Precision precision,
                     unsigned referenceThreads) {
  JitOptions options;
  options.precision = precision;
  return runAndCompare(graph, seed, options, referenceThreads);
}

GpuRun runAndCompare(const Graph &graph, uint64_t seed, const JitOptions &options,
                     unsigned referenceThreads, const std::function<void(TensorMap &)> &edit) {
  GpuRun run;
  auto compiled = compileGraph(graph, options);
  if (!compiled) {
    ADD_FAILURE() << "compile: " << llvm::toString(compiled.takeError());
    return run;
  }
  run.tolerance = referenceTolerance(compiled->pipeline.plan);
  for (const PlannedKernel &k : compiled->pipeline.plan.kernels) {
    run.kernelList += "  " + k.source.name + " (" + k.source.templateName + ", " +
                      k.source.tileConfig + ")\n";
  }
  run.kernels = int(compiled->kernels.size());
  const ExecutablePlan plan = compiled->pipeline.plan.plan;
  auto exe = Executable::create(plan, std::move(compiled->kernels));
  if (!exe) {
    ADD_FAILURE() << "load: " << llvm::toString(exe.takeError());
    return run;
  }
  auto api = driver();
  if (!api) {
    ADD_FAILURE() << llvm::toString(api.takeError());
    return run;
  }
  TensorMap data = randomBindings(graph, seed);
  if (edit)
    edit(data);
  DeviceBuffers dev{*api, {}};
  for (const BufferSpec &b : plan.buffers) {
    if (b.kind == BufferSpec::Kind::Workspace || b.aliasOf >= 0)
      continue;
    CUdeviceptr ptr = 0;
    if (auto err = cuCheck(api->cuMemAlloc(&ptr, std::max<int64_t>(b.bytes, 4)), "test alloc")) {
      ADD_FAILURE() << llvm::toString(std::move(err));
      return run;
    }
    dev.bindings[b.name] = ptr;
    if (b.kind == BufferSpec::Kind::Output) {
      // Poison: an element the kernels forget to write stays NaN and fails the comparison.
      llvm::consumeError(cuCheck(api->cuMemsetD32Async(ptr, 0x7fc00000u, b.bytes / 4, nullptr),
                                 "poison"));
    } else {
      const HostTensor &t = data.at(b.name);
      llvm::consumeError(
          cuCheck(api->cuMemcpyHtoD(ptr, t.data.data(), t.data.size() * 4), "upload"));
    }
  }
  if (auto err = exe->get()->run(dev.bindings, nullptr)) {
    ADD_FAILURE() << "run: " << llvm::toString(std::move(err));
    return run;
  }
  if (auto err = cuCheck(api->cuCtxSynchronize(), "synchronize")) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return run;
  }
  ReferenceOptions ropts;
  ropts.threads = referenceThreads;
  auto ref = evaluateReference(graph, data, ropts);
  if (!ref) {
    ADD_FAILURE() << "reference: " << llvm::toString(ref.takeError());
    return run;
  }
  for (const BufferSpec &b : plan.buffers) {
    if (b.kind != BufferSpec::Kind::Output)
      continue;
    std::vector<float> got(b.bytes / 4);
    llvm::consumeError(
        cuCheck(api->cuMemcpyDtoH(got.data(), dev.bindings[b.name], b.bytes), "download"));
    run.errors.push_back(compare(b.name, got, ref->at(b.name).data));
  }
  return run;
}

void expectMatchesReference(const std::string &text, uint64_t seed, Precision precision) {
  auto graphs = parseSir(text, "test.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  ASSERT_EQ(graphs->size(), 1u);
  GpuRun run = runAndCompare(graphs->front(), seed, precision);
  ASSERT_FALSE(run.errors.empty()) << "no outputs compared";
  for (const OutputError &e : run.errors) {
    EXPECT_EQ(e.nonFinite, 0) << e.name << ": unwritten or non-finite outputs\n"
                              << run.kernelList;
    EXPECT_LT(e.relL2, run.tolerance) << e.name << ": max abs error " << e.maxAbs << "\n"
                                      << run.kernelList;
  }
}

} // namespace sinter::test
