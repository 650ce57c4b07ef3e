//===- examples/convt3d_relu_gn.cpp - ConvTranspose3d -> ReLU -> GroupNorm in C++ --===//
//
// Builds the S0 workload with GraphBuilder, compiles it with sinter (fused kernels, shapes
// baked in, NVRTC, on-disk cache), runs it on random data and prints a few numbers. With
// --small it uses a reduced batch so it finishes in a blink; without a GPU it still compiles
// and says so. It includes sinter as an outside project does (examples/CMakeLists.txt).
//
//===--------------------------------------------------------------------------------===//
#include <sinter/sinter.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace sinter;

int main(int argc, char **argv) {
  bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  int64_t batch = small ? 2 : 16;

  GraphBuilder b("convt3d_relu_gn");
  Val x = b.input("x", {batch, 64, 32, 32, 32});
  Val w = b.param("w", {64, 128, 3, 3, 3});
  Val gamma = b.param("gamma", {128});
  Val beta = b.param("beta", {128});
  Val y = b.conv_transpose(x, w, {.stride = {1}, .padding = {0}});
  Val o = b.group_norm(b.relu(y), gamma, beta, {.groups = 8, .eps = 1e-5}).name("o");
  b.output(o);
  llvm::Expected<Graph> graph = b.build();
  if (!graph) {
    std::fprintf(stderr, "build: %s\n", llvm::toString(graph.takeError()).c_str());
    return 1;
  }

  JitOptions options; // precision auto, arch of the GPU, default cache
  auto start = std::chrono::steady_clock::now();
  auto compiled = compileGraph(*graph, options);
  if (!compiled) {
    std::fprintf(stderr, "compile: %s\n", llvm::toString(compiled.takeError()).c_str());
    return 1;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("compiled %zu kernels in %.2f s:\n", compiled->kernels.size(), seconds);
  for (const PlannedKernel &k : compiled->pipeline.plan.kernels)
    std::printf("  %-48s %-22s %s\n", k.source.name.c_str(), k.source.templateName.c_str(),
                k.role.c_str());
  if (!gpuAvailable()) {
    std::printf("no GPU here: compiled only\n");
    return 0;
  }

  auto exe = Executable::create(compiled->pipeline.plan.plan, std::move(compiled->kernels));
  if (!exe) {
    std::fprintf(stderr, "load: %s\n", llvm::toString(exe.takeError()).c_str());
    return 1;
  }
  TensorMap data = randomBindings(*graph, /*seed=*/1);
  auto outputs = exe->get()->runHost(data);
  if (!outputs) {
    std::fprintf(stderr, "run: %s\n", llvm::toString(outputs.takeError()).c_str());
    return 1;
  }
  const HostTensor &out = outputs->at("o");
  double sum = 0, sumsq = 0;
  for (float v : out.data) {
    sum += v;
    sumsq += double(v) * v;
  }
  double n = double(out.data.size());
  std::printf("o: %s, mean %.4f, std %.4f\n", out.type.str().c_str(), sum / n,
              std::sqrt(sumsq / n - (sum / n) * (sum / n)));
  return 0;
}
