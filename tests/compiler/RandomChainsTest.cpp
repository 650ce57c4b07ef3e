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

// conv2d_r12n213_gelu_rsub: a stride-2 grouped convolution on conv_direct whose 8x1 patches
// leave clamped last tiles at an odd output column; the emitter asked for float2 rows there
// (an even input column), which the template's static_assert refuses. It loads them one by
// one now.
TEST(RandomChains, AStride2ConvWithClampedTilesAtAnOddColumn) {
  Graph g = parseOne("graph g(%x: f32[4,64,64,64], %w: param f32[128,4,2,2], %b: param "
                     "f32[128]) { %y = conv(%x, %w, %b) {stride = 2, groups = 16} "
                     "%o = gelu(%y) return %o }");
  test::expectCompiles(g);
}

} // namespace
