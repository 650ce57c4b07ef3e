//===- tools/sinterc/CompileFlags.h - options shared by the compiling subcommands -----===//
//
// compile, explain, run and check all turn a graph into kernels, so they share the same
// flags (--graph, --arch, --precision, --no-cache, --threads), the same checks of their
// values, and the same progress display: one line per kernel on stderr when stderr is a
// terminal. This header declares those pieces; CompileFlags.cpp defines them.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Jit.h"
#include "ir/Tensor.h"

#include "llvm/Support/Error.h"

#include <CLI/CLI.hpp>

#include <string>

namespace sinter::tool {

/// The compiling flags as parsed.
struct CompileFlags {
  std::string graph;
  std::string arch;
  std::string precision = "auto";
  bool noCache = false;
  unsigned threads = 0;
};

/// Adds --graph, --arch, --precision, and when `compiles` (the subcommand runs NVRTC)
/// --no-cache and --threads to `sub`.
void addCompileFlags(CLI::App *sub, CompileFlags &flags, bool compiles = true);

/// JitOptions from the flags: checks the arch spelling and the precision name, resolves an
/// empty arch (the GPU's, else sm_90a) and installs the progress display.
llvm::Expected<JitOptions> jitOptions(const CompileFlags &flags);

/// A graph read from a .sir file or an ONNX model with the JIT options its command's
/// flags ask for: what compile, explain, run and check all start from.
struct GraphToCompile {
  Graph graph;
  JitOptions options;
  TensorMap weights; ///< an ONNX model's weights; empty for .sir
};
llvm::Expected<GraphToCompile> loadForCompile(llvm::StringRef file, const CompileFlags &flags);

/// The progress display: one line per kernel on stderr, only when stderr is a terminal.
ProgressFn terminalProgress();

/// The relative L2 error ||got - want|| / ||want|| and the max abs error of `got` against
/// `want` (same element count), as {relL2, maxAbs}. A NaN anywhere gives NaN.
std::pair<double, double> compareTensors(const HostTensor &got, const std::vector<double> &want);

} // namespace sinter::tool
