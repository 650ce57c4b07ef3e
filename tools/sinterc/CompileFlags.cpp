//===- tools/sinterc/CompileFlags.cpp - options shared by the compiling subcommands ---===//
//
// See CompileFlags.h. The progress display is a ProgressFn (runtime/Nvrtc.h) that prints
// `[3/7] k2_norm_apply: nvrtc 1.84 s` or `... : cache hit` as each kernel finishes, and only
// when stderr is a terminal, so scripts and tests reading stderr see nothing but errors.
//
//===--------------------------------------------------------------------------------===//
#include "CompileFlags.h"
#include "Subcommand.h"

#include "compiler/Plan.h"
#include "ir/Error.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <unistd.h>

namespace sinter::tool {

void addCompileFlags(CLI::App *sub, CompileFlags &flags, bool compiles) {
  sub->add_option("--graph", flags.graph, "The graph to use when the file holds several");
  sub->add_option("--arch", flags.arch,
                  "NVRTC target, e.g. sm_90a, sm_80 (default: the GPU's, else sm_90a)");
  sub->add_option("--precision", flags.precision,
                  "auto (PyTorch's defaults: TF32 convolutions, fp32 GEMMs), fp32 or tf32");
  if (!compiles)
    return;
  sub->add_flag("--no-cache", flags.noCache,
                "Compile every kernel with NVRTC, neither reading nor filling the cache");
  sub->add_option("--threads", flags.threads, "NVRTC threads (default: one per core)")
      ->check(CLI::NonNegativeNumber);
}

llvm::Expected<JitOptions> jitOptions(const CompileFlags &flags) {
  JitOptions o;
  if (!flags.arch.empty() && !llvm::Regex("^sm_[0-9]{2,3}a?$").match(flags.arch))
    return makeError("--arch '" + flags.arch + "' is not an arch like sm_90a or sm_80");
  auto precision = parsePrecision(flags.precision);
  if (!precision)
    return makeError("--precision '" + flags.precision + "' is not auto, fp32 or tf32");
  o.arch = flags.arch;
  o.arch = resolveArch(o);
  o.precision = *precision;
  o.useCache = !flags.noCache;
  o.threads = flags.threads;
  o.progress = terminalProgress();
  return o;
}

llvm::Expected<GraphToCompile> loadForCompile(llvm::StringRef file, const CompileFlags &flags) {
  auto loaded = loadGraphFile(file, flags.graph);
  if (!loaded)
    return loaded.takeError();
  auto options = jitOptions(flags);
  if (!options)
    return options.takeError();
  return GraphToCompile{std::move(loaded->graph), std::move(*options), std::move(loaded->weights)};
}

ProgressFn terminalProgress() {
  if (!::isatty(STDERR_FILENO))
    return {};
  return [](const CompileProgress &p) {
    llvm::errs() << "[" << p.done << "/" << p.total << "] " << p.kernelName << ": ";
    if (p.cacheHit)
      llvm::errs() << "cache hit\n";
    else
      llvm::errs() << llvm::format("nvrtc %.2f s\n", p.seconds);
  };
}

std::pair<double, double> compareTensors(const HostTensor &got, const std::vector<double> &want) {
  assert(got.data.size() == want.size() && "compared tensors differ in size");
  double diff2 = 0, ref2 = 0, maxAbs = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = double(got.data[i]) - want[i];
    diff2 += d * d;
    ref2 += want[i] * want[i];
    // A NaN must not hide behind std::max.
    maxAbs = std::isnan(d) || std::isnan(maxAbs) ? NAN : std::max(maxAbs, std::abs(d));
  }
  double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  return {rel, maxAbs};
}

} // namespace sinter::tool
