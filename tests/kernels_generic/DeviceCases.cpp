//===- tests/kernels_generic/DeviceCases.cpp - write the GPU harness's inputs -------===//
//
// generic_device_cases DIR: emits every case of Cases.cpp, compiles it with NVRTC for sm_90a
// and writes DIR/<case>.cu, DIR/<case>.cubin and DIR/cases.json (launch configuration,
// buffers, reference expression, tolerance). gpu_check.py runs them on the GPU machine, which
// needs neither this tool nor NVRTC. Exit 1 when a case does not compile.
//
//===--------------------------------------------------------------------------------===//
#include "tests/kernels_generic/Cases.h"
#include "tests/kernels_generic/NvrtcCompile.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace sinter;
using namespace sinter::testing;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: generic_device_cases DIR\n");
    return 1;
  }
  std::string dir = argv[1];
  auto cases = genericCases();
  if (!cases) {
    std::fprintf(stderr, "error: %s\n", llvm::toString(cases.takeError()).c_str());
    return 1;
  }
  nlohmann::json all = nlohmann::json::array();
  for (const GenericCase &c : *cases) {
    NvrtcOutput out = compileWithNvrtc(c.kernel.source, c.name, "sm_90a");
    if (!out.ok) {
      std::fprintf(stderr, "error: %s does not compile:\n%s\n", c.name.c_str(), out.log.c_str());
      return 1;
    }
    std::ofstream(dir + "/" + c.name + ".cu") << c.kernel.source;
    std::ofstream(dir + "/" + c.name + ".cubin", std::ios::binary)
        .write(out.cubin.data(), std::streamsize(out.cubin.size()));
    nlohmann::json buffers = nlohmann::json::array();
    for (const CaseBuffer &b : c.buffers)
      buffers.push_back({{"slot", b.slot},
                         {"shape", std::vector<int64_t>(b.shape.begin(), b.shape.end())},
                         {"dtype", b.dtype},
                         {"init", b.init},
                         {"scale", b.scale}});
    const LaunchConfig &l = c.kernel.launch;
    all.push_back({{"name", c.name},
                   {"template", c.kernel.templateName},
                   {"config", c.kernel.tileConfig},
                   {"grid", {l.grid[0], l.grid[1], l.grid[2]}},
                   {"block", {l.block[0], l.block[1], l.block[2]}},
                   {"shared", l.sharedBytes},
                   {"bytes", c.kernel.bytes},
                   {"buffers", buffers},
                   {"reference", c.reference},
                   {"tolerance", c.tolerance},
                   {"bench", c.bench}});
  }
  std::ofstream(dir + "/cases.json") << all.dump(1) << "\n";
  std::printf("wrote %zu cases to %s\n", cases->size(), dir.c_str());
  return 0;
}
