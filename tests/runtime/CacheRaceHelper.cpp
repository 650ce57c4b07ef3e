//===- tests/runtime/CacheRaceHelper.cpp - one of two processes racing on a cache ---===//
//
// Run as `cache_race_helper <cache dir> <start time, unix ms>`: waits for the start time,
// then compiles four fixed kernels through the cache. KernelCacheTest starts two of these at
// once so that both compile every key and race to publish it. Exits 0 when every kernel came
// back (from NVRTC or the cache) with a cubin.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/KernelCache.h"
#include "tests/runtime/TestKernels.h"

#include <chrono>
#include <cstdio>
#include <thread>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cache_race_helper <cache dir> <start unix ms>\n");
    return 2;
  }
  auto cache = sinter::KernelCache::open(argv[1]);
  if (!cache) {
    std::fprintf(stderr, "%s\n", llvm::toString(cache.takeError()).c_str());
    return 1;
  }
  std::vector<sinter::KernelSource> ks;
  for (int i = 0; i < 4; ++i)
    ks.push_back(sinter::test::axpyKernel("race_" + std::to_string(i), float(i)));
  auto start =
      std::chrono::system_clock::time_point(std::chrono::milliseconds(std::atoll(argv[2])));
  std::this_thread::sleep_until(start);
  sinter::CompileOptions o;
  o.codegenVersion = "race";
  auto out = sinter::compileAll(ks, o, cache->get(), 2);
  if (!out) {
    std::fprintf(stderr, "%s\n", llvm::toString(out.takeError()).c_str());
    return 1;
  }
  for (const auto &k : *out) {
    if (k.cubin.empty())
      return 1;
    std::printf("%s %s\n", k.name.c_str(), k.cacheHit ? "hit" : "miss");
  }
  return 0;
}
