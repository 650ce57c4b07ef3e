//===- tests/gpu/GpuHarness.h - running a graph on the GPU against the reference ---===//
//
// The GPU tests all do the same: compile a graph with sinter, run it on random data with
// every output poisoned (NaN) beforehand, evaluate the float64 CPU reference on the same
// data, and compare each output by relative L2 error against the precision's tolerance
// (1e-5 when every kernel is fp32-accurate, 2e-3 when one uses TF32).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Jit.h"
#include "ir/Graph.h"
#include "ir/Reference.h"
#include "ir/Tensor.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace sinter::test {

/// Skips the current test, with a message, when no GPU is usable.
#define SINTER_REQUIRE_GPU()                                                                       \
  do {                                                                                             \
    if (!::sinter::gpuAvailable())                                                                 \
      GTEST_SKIP() << "no GPU: " << ::sinter::test::noGpuReason();                                 \
  } while (0)

std::string noGpuReason();

struct OutputError {
  std::string name;
  double relL2 = 0, maxAbs = 0;
  /// Outputs that are NaN/inf where the reference is finite, or finite where it is not.
  int64_t nonFinite = 0;
};

struct GpuRun {
  std::vector<OutputError> errors;
  double tolerance = 1e-5;
  int kernels = 0;
  std::string kernelList; ///< names and templates, for failure messages
};

/// Compiles and runs `graph` on random data from `seed`, compares with the reference.
/// Failures (compile, run) are reported through gtest and leave the result empty.
GpuRun runAndCompare(const Graph &graph, uint64_t seed, Precision precision = Precision::Auto,
                     unsigned referenceThreads = 0);
/// The same with the compile options given (e.g. JitOptions::normInKernelWherePossible),
/// and `edit`, where given, applied to the random inputs before both runs.
GpuRun runAndCompare(const Graph &graph, uint64_t seed, const JitOptions &options,
                     unsigned referenceThreads = 0,
                     const std::function<void(TensorMap &)> &edit = nullptr);

/// Parses `text` (one graph) and runs runAndCompare; asserts every output is within the
/// tolerance.
void expectMatchesReference(const std::string &text, uint64_t seed = 1,
                            Precision precision = Precision::Auto);

/// Relative L2 and max-abs error of `got` against `want`, over the outputs where `want` is
/// finite.
OutputError compare(const std::string &name, const std::vector<float> &got,
                    const std::vector<double> &want);

} // namespace sinter::test
