//===- tests/frontend/tools/Sir2Onnx.cpp - a stand-in for torch.onnx.export ----------===//
//
// Writes a .sir graph as an ONNX model the way PyTorch's exporters write its ops (see
// tests/frontend/ExporterModels.h), with the params' values from a safetensors file:
//
//   sir2onnx G.sir PARAMS.safetensors OUT.onnx [--torchscript]
//
// The dynamo form stores the weights as external data (OUT.onnx.data), the TorchScript form
// inline. It lets bench/onnx_device_check.py run end to end where there is no PyTorch
// (bench/corpus/fake_torch's torch.onnx.export calls it); the real check needs the real
// exporters.
//
//===--------------------------------------------------------------------------------===//
#include "tests/frontend/ExporterModels.h"

#include "ir/Parser.h"
#include "ir/Safetensors.h"

#include <cstdio>
#include <cstring>

using namespace sinter;
using namespace sinter::test;

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sir2onnx G.sir PARAMS.safetensors OUT.onnx [--torchscript]\n");
    return 1;
  }
  bool torchscript = argc > 4 && std::strcmp(argv[4], "--torchscript") == 0;
  auto graphs = parseSirFile(argv[1]);
  if (!graphs) {
    std::fprintf(stderr, "sir2onnx: %s\n", llvm::toString(graphs.takeError()).c_str());
    return 1;
  }
  auto params = readSafetensors(argv[2]);
  if (!params) {
    std::fprintf(stderr, "sir2onnx: %s\n", llvm::toString(params.takeError()).c_str());
    return 1;
  }
  const Graph &g = (*graphs)[0];
  for (ValueId a : g.args)
    if (g.values[a].kind == ValueKind::Param && !params->count(g.values[a].name)) {
      std::fprintf(stderr, "sir2onnx: no value for param '%s'\n", g.values[a].name.c_str());
      return 1;
    }
  writeAsExporter(g, *params, torchscript ? Exporter::TorchScript : Exporter::Dynamo)
      .write(argv[3], /*external=*/!torchscript);
  return 0;
}
