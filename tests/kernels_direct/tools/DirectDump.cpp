//===- tests/kernels_direct/tools/DirectDump.cpp - kernels for the GPU harness ------===//
//
// Writes every case of Cases.h as DIR/<kernel>.cu plus DIR/cases.json (each spec, its launch
// configuration, FLOPs and bytes) so that bench/kernels/direct_check.py can compile, run and
// check them on the GPU machine against PyTorch in float64.
//
//===--------------------------------------------------------------------------------===//
#include "../Cases.h"

#include "compiler/kernels/ConvDirect.h"
#include "compiler/kernels/ConvMma.h"
#include "compiler/kernels/Norm.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>

using namespace sinter;
using namespace sinter::direct_cases;

namespace {

nlohmann::json launchJson(const KernelSource &k) {
  return {{"name", k.name},
          {"grid", k.launch.grid},
          {"block", k.launch.block},
          {"flops", k.flops},
          {"bytes", k.bytes},
          {"tile", k.tileConfig},
          {"shared", k.launch.sharedBytes}};
}

nlohmann::json convJson(const KernelSource &k, const ConvCase &c) {
  const ConvSpec &s = c.spec;
  nlohmann::json j = launchJson(k);
  j["kind"] = "conv";
  j["transposed"] = s.transposed;
  j["dims"] = s.spatialDims;
  j["N"] = s.N, j["Cin"] = s.Cin, j["Cout"] = s.Cout, j["groups"] = s.groups;
  j["in"] = s.in, j["out"] = s.out, j["kernel"] = s.kernel;
  j["stride"] = s.stride, j["padding"] = s.padding, j["dilation"] = s.dilation;
  j["bias"] = s.hasBias, j["store"] = s.storeOutput, j["stats"] = s.accumulateStats;
  j["epilogue"] = c.epilogueTag, j["workload"] = c.workload;
  return j;
}

bool writeFile(const std::string &path, const std::string &text) {
  std::ofstream f(path);
  f << text;
  return bool(f);
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: direct_dump DIR\n";
    return 1;
  }
  std::string dir = argv[1];
  nlohmann::json out = nlohmann::json::array();
  for (const ConvCase &c : convCases()) {
    llvm::Expected<KernelSource> k = emitConvDirect(c.spec);
    if (!k) {
      std::cerr << llvm::toString(k.takeError()) << "\n";
      return 2;
    }
    nlohmann::json j = convJson(*k, c);
    if (!writeFile(dir + "/" + k->name + ".cu", k->source))
      return 2;
    out.push_back(j);
  }
  // conv_mma: every case it supports, in TF32, on the chosen tile and on forced ones.
  auto dumpMma = [&](const ConvCase &c, const std::string &name, const ConvMmaTile *tile) {
    ConvSpec s = c.spec;
    s.kernelName = name;
    s.math = MathMode::Tf32;
    llvm::Expected<KernelSource> k = tile ? emitConvMma(s, *tile) : emitConvMma(s);
    if (!k) {
      std::cerr << llvm::toString(k.takeError()) << "\n";
      return false;
    }
    nlohmann::json j = convJson(*k, c);
    j["math"] = "tf32";
    j["workload"] = false;
    j["time"] = c.workload; // forced tiles of S1/S2 are timed beside the chosen one
    out.push_back(j);
    return writeFile(dir + "/" + k->name + ".cu", k->source);
  };
  for (const ConvCase &c : convCases()) {
    if (!convMmaSupports(c.spec, nullptr))
      continue;
    if (!dumpMma(c, c.spec.kernelName + "__mma", nullptr))
      return 2;
  }
  for (const MmaVariant &v : mmaVariants())
    for (const ConvCase &c : convCases()) {
      if (c.spec.kernelName != v.base)
        continue;
      const ConvMmaTile &t = v.tile;
      std::string name = v.base + "__mma_" + std::to_string(t.td) + "x" + std::to_string(t.th) +
                         "x" + std::to_string(t.tw) + "_w" + std::to_string(t.warps) + "_l" +
                         std::to_string(t.tileLoop) + (t.doubleBuffer ? "" : "_b1") +
                         (t.stageStores ? "_st" : "");
      if (!dumpMma(c, name, &t))
        return 2;
    }
  std::map<std::string, int> seen;
  for (const Variant &v : variants()) {
    for (const ConvCase &c : convCases()) {
      if (c.spec.kernelName != v.base)
        continue;
      ConvSpec s = c.spec;
      const ConvDirectTuning &t = v.tuning;
      s.kernelName += "__cb" + std::to_string(t.channelsPerThread) + "_vh" +
                      std::to_string(t.rowsPerThread) + "_vw" + std::to_string(t.colsPerThread) +
                      "_t" + std::to_string(t.threads) + "_p" + std::to_string(t.prefetch + 1) +
                      "_mb" + std::to_string(t.minBlocks);
      if (int repeat = seen[s.kernelName]++)
        s.kernelName += "_again" + std::to_string(repeat);
      llvm::Expected<KernelSource> k = emitConvDirect(s, v.tuning);
      if (!k) {
        std::cerr << llvm::toString(k.takeError()) << "\n";
        return 2;
      }
      nlohmann::json j = launchJson(*k);
      j["kind"] = "conv_variant";
      j["variant_of"] = v.base;
      j["tile"] = k->tileConfig;
      if (!writeFile(dir + "/" + k->name + ".cu", k->source))
        return 2;
      out.push_back(j);
    }
  }
  for (const NormCase &c : normCases()) {
    llvm::Expected<KernelSource> k =
        c.kind == NormCase::Kind::Apply ? emitNormApply(c.spec)
        : c.kind == NormCase::Kind::ScaleShift
            ? emitNormScaleShift(c.spec)
            : emitNormReduce(c.spec, c.overChannels, c.mean, c.normalised);
    if (!k) {
      std::cerr << llvm::toString(k.takeError()) << "\n";
      return 2;
    }
    const NormSpec &s = c.spec;
    nlohmann::json j = launchJson(*k);
    j["kind"] = c.kind == NormCase::Kind::Apply        ? "norm_apply"
                : c.kind == NormCase::Kind::ScaleShift ? "norm_scale_shift"
                                                       : "norm_reduce";
    j["N"] = s.N, j["C"] = s.C, j["L"] = s.L, j["groups"] = s.groups, j["eps"] = s.eps;
    j["affine"] = s.affine, j["post"] = c.postTag;
    j["over_channels"] = c.overChannels, j["mean"] = c.mean, j["normalised"] = c.normalised;
    if (!writeFile(dir + "/" + k->name + ".cu", k->source))
      return 2;
    out.push_back(j);
  }
  if (!writeFile(dir + "/cases.json", out.dump(1)))
    return 2;
  std::cout << "wrote " << out.size() << " kernels to " << dir << "\n";
  return 0;
}
