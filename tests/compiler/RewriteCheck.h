//===- tests/compiler/RewriteCheck.h - what the graph-rewrite tests share -------------===//
#pragma once

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Random.h"
#include "ir/Reference.h"

#include <gtest/gtest.h>

#include <cmath>

namespace sinter::test {

/// The first graph of `text`, or an empty one (and a test failure) when it does not parse.
inline Graph parseGraph(const std::string &text) {
  auto graphs = parseSir(text, "t.sir");
  EXPECT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  return graphs ? std::move((*graphs)[0]) : Graph();
}

/// Expects `rewritten` to return what `original` returns under the same names and types.
inline void expectSameResultNames(const Graph &original, const Graph &rewritten) {
  ASSERT_EQ(rewritten.results.size(), original.results.size());
  for (size_t i = 0; i < rewritten.results.size(); ++i) {
    EXPECT_EQ(rewritten.values[rewritten.results[i]].name,
              original.values[original.results[i]].name);
    EXPECT_EQ(rewritten.type(rewritten.results[i]), original.type(original.results[i]));
  }
}

/// Expects `rewritten` to compute what `original` does on random data drawn with `seed`
/// (float64 reference): every result within relative L2 `tolerance`.
inline void expectSameResults(const Graph &original, const Graph &rewritten, uint64_t seed,
                              double tolerance) {
  TensorMap data = randomBindings(original, seed);
  auto a = evaluateReference(original, data), b = evaluateReference(rewritten, data);
  ASSERT_TRUE(bool(a)) << llvm::toString(a.takeError());
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  for (const auto &[name, t] : *a) {
    const RefTensor &u = b->at(name);
    ASSERT_EQ(t.data.size(), u.data.size()) << name;
    double d2 = 0, r2 = 0;
    for (size_t i = 0; i < t.data.size(); ++i) {
      d2 += (t.data[i] - u.data[i]) * (t.data[i] - u.data[i]);
      r2 += t.data[i] * t.data[i];
    }
    EXPECT_LE(std::sqrt(d2 / r2), tolerance) << name << "\n" << printGraph(rewritten);
  }
}

} // namespace sinter::test
