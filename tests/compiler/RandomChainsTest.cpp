//===- tests/compiler/RandomChainsTest.cpp - graphs the random chains found ---------===//
//
// bench/corpus/random_chains.py draws KernelBench-like chains nobody wrote by hand. Each
// graph here is a small form of one it found that did not compile, named after it; the
// ctest RandomChainsCompile (CMakeLists.txt) compiles a fixed draw of full-size ones.
//
//===--------------------------------------------------------------------------------===//
#include "CompileCheck.h"

#include "ir/Parser.h"

#include <gtest/gtest.h>

using namespace sinter;

namespace {

Graph parseOne(const std::string &text) {
  auto graphs = parseSir(text, "t.sir");
  EXPECT_TRUE(bool(graphs)) << (graphs ? "" : llvm::toString(graphs.takeError()));
  return graphs ? graphs->front() : Graph{};
}

// convt3d_r2n39_mulc: a stride-3 transposed convolution on conv_shift's phase walk (W phases
// that do not divide a warpgroup's 64 rows, so no staged lines) whose epilogue reads a
// per-channel tensor: the staged lines' batch size was worked out (and asserted) anyway.
TEST(RandomChains, AStride3TransposedConvWhoseEpilogueReadsATensor) {
  Graph g = parseOne("graph g(%x: f32[2,64,6,6,6], %w: param f32[64,32,3,3,3], %b: param f32[32], "
                     "%p: param f32[32,1,1,1]) { %y = conv_transpose(%x, %w, %b) {stride = 3} "
                     "%o = mul(%y, %p) return %o }");
  test::expectCompiles(g);
}

} // namespace
