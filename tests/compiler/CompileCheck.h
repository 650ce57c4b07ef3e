//===- tests/compiler/CompileCheck.h - every kernel of a graph compiles -------------===//
#pragma once

#include "compiler/Jit.h"

#include <gtest/gtest.h>

namespace sinter::test {

/// Compiles every kernel of `g` with NVRTC for sm_90a and sm_80 (no cache, no GPU).
inline void expectCompiles(const Graph &g) {
  for (const char *arch : {"sm_90a", "sm_80"}) {
    JitOptions opts;
    opts.arch = arch;
    opts.useCache = false;
    auto compiled = compileGraph(g, opts);
    EXPECT_TRUE(bool(compiled)) << arch << ": "
                                << (compiled ? "" : llvm::toString(compiled.takeError()));
  }
}

} // namespace sinter::test
