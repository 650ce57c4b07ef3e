//===- examples/onnx_model.cpp - an exported PyTorch model through sinter in C++ -----===//
//
// Imports an ONNX model (torch.onnx.export, either exporter), prints the graph sinter made
// of it and its fusion plan, compiles the kernels and, when a GPU is present, runs them with
// the model's own weights on random inputs:
//
//   onnx_model conv3d_gn_mean.onnx
//
//===--------------------------------------------------------------------------------===//
#include "compiler/Jit.h"
#include "frontend/OnnxImport.h"
#include "ir/Printer.h"
#include "ir/Random.h"

#include <cstdio>

using namespace sinter;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: onnx_model MODEL.onnx\n");
    return 1;
  }
  llvm::Expected<OnnxModel> model = importOnnx(argv[1]);
  if (!model) {
    std::fprintf(stderr, "import: %s\n", llvm::toString(model.takeError()).c_str());
    return 1;
  }
  std::printf("%s (opset %lld, %zu weights)\n%s", argv[1], (long long)model->opset,
              model->weights.size(), printGraph(model->graph).c_str());

  auto compiled = compileGraph(model->graph, JitOptions{});
  if (!compiled) {
    std::fprintf(stderr, "compile: %s\n", llvm::toString(compiled.takeError()).c_str());
    return 1;
  }
  for (const FusionGroup &g : compiled->pipeline.fusion.groups)
    std::printf("group %s\n", g.pattern.c_str());
  for (const PlannedKernel &k : compiled->pipeline.plan.kernels)
    std::printf("  kernel %-48s %s\n", k.source.name.c_str(), k.source.templateName.c_str());
  if (!gpuAvailable()) {
    std::printf("no GPU here: compiled only\n");
    return 0;
  }

  auto exe = Executable::create(compiled->pipeline.plan.plan, std::move(compiled->kernels));
  if (!exe) {
    std::fprintf(stderr, "load: %s\n", llvm::toString(exe.takeError()).c_str());
    return 1;
  }
  // The model's weights, and random inputs.
  TensorMap data = model->weights;
  for (auto &[name, t] : randomBindings(model->graph, /*seed=*/1, /*params=*/false))
    data.emplace(name, std::move(t));
  auto outputs = exe->get()->runHost(data);
  if (!outputs) {
    std::fprintf(stderr, "run: %s\n", llvm::toString(outputs.takeError()).c_str());
    return 1;
  }
  for (const auto &[name, t] : *outputs)
    std::printf("%s: %s, first value %g\n", name.c_str(), t.type.str().c_str(),
                t.data.empty() ? 0.0 : double(t.data[0]));
  return 0;
}
