//===- tests/compiler/PlanGuard.h - what a degenerate launch looks like -------------===//
//
// A performance cliff in a plan is visible without a GPU: a kernel whose blocks each get less
// than a warp's worth of elements (a grid of one block per element), a block smaller than a
// warp, or a kernel with work enough to fill the GPU launched on a small fraction of it. The
// thresholds are deliberately loose: they catch orders of magnitude, not tuning.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Plan.h"

#include <string>
#include <vector>

namespace sinter::test {

/// Resident threads of an H100/H200 at full occupancy (132 multiprocessors x 2048).
constexpr double kGpuThreads = 132.0 * 2048;

/// One line per degenerate launch of `plan`; empty when there is none.
inline std::vector<std::string> degenerateLaunches(const PlanResult &plan) {
  std::vector<std::string> problems;
  for (const PlannedKernel &k : plan.kernels) {
    const LaunchConfig &l = k.source.launch;
    const double threads = double(l.block[0]) * l.block[1] * l.block[2];
    const double blocks = double(l.grid[0]) * l.grid[1] * l.grid[2];
    // The floats the kernel must move at least (inputs, weights, outputs once each).
    const double elements = k.source.bytes / 4;
    std::string what =
        k.source.name + " (" + k.source.templateName + ", " + k.source.tileConfig + "): ";
    if (threads < 32)
      problems.push_back(what + "a block of " + std::to_string(int(threads)) +
                         " threads, less than a warp");
    if (elements >= 32.0 * 1024 && elements / blocks < 32)
      problems.push_back(what + std::to_string(int64_t(blocks)) + " blocks for " +
                         std::to_string(int64_t(elements)) +
                         " elements: less than a warp's worth of work a block");
    // Work to fill the GPU (64 MiB through memory, or a GFLOP) on less than a tenth of it.
    const bool large = k.source.bytes >= 64.0 * (1 << 20) || k.source.flops >= 1e9;
    if (large && blocks * threads < kGpuThreads / 10)
      problems.push_back(what + std::to_string(int64_t(blocks * threads)) + " threads for " +
                         std::to_string(int64_t(k.source.bytes) >> 20) + " MiB and " +
                         std::to_string(k.source.flops / 1e9) +
                         " GFLOP: far fewer than the GPU holds");
  }
  return problems;
}

} // namespace sinter::test
