//===- tests/runtime/TestKernels.h - tiny kernels and scratch folders for the tests --===//
//
// The runtime tests need real CUDA sources that go through NVRTC with the embedded templates
// (common.cuh gives the kernel ABI), and a fresh directory per test for caches and bundles.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/KernelSource.h"

#include "llvm/Support/FileSystem.h"

#include <filesystem>
#include <string>

namespace sinter::test {

/// y[i] = scale * x[i] + w[i] for i < n, with x in slot 0, w in slot 1 and y in slot 3.
inline KernelSource axpyKernel(const std::string &name, float scale = 2.0f, int n = 1000) {
  KernelSource k;
  k.name = name;
  k.templateName = "common.cuh";
  k.source = "#include \"common.cuh\"\n"
             "#define SINTER_KERNEL " +
             name +
             "\n"
             "namespace cfg { constexpr int kN = " +
             std::to_string(n) + "; constexpr float kScale = " + std::to_string(scale) +
             "f; }\n"
             "extern \"C\" __global__ void SINTER_KERNEL(const sinter::Buffers b) {\n"
             "  const float *x = sinter::slot<const float>(b, 0);\n"
             "  const float *w = sinter::slot<const float>(b, 1);\n"
             "  float *y = sinter::slot<float>(b, 3);\n"
             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
             "  if (i < cfg::kN) y[i] = cfg::kScale * x[i] + w[i];\n"
             "}\n";
  k.launch.grid = {unsigned((n + 255) / 256), 1, 1};
  k.launch.block = {256, 1, 1};
  return k;
}

/// A scratch directory removed when the object goes.
class TempDir {
public:
  explicit TempDir(const char *prefix = "sinter-runtime-test") {
    llvm::SmallString<128> path;
    if (llvm::sys::fs::createUniqueDirectory(prefix, path))
      path = "/tmp/sinter-runtime-test-fallback";
    path_ = std::string(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

} // namespace sinter::test
