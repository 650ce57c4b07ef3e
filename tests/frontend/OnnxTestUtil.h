//===- tests/frontend/OnnxTestUtil.h - importing test models, comparing with .sir ----===//
//
// The frontend tests state each case as an ONNX model (OnnxBuilder) and the .sir graph it
// must mean. The fixture writes the model to a scratch folder, imports it, and offers the
// three comparisons the tests make: the imported graph printed without origins against the
// .sir's (same ops, attributes and names), both evaluated by the float64 reference on the
// same inputs and the model's weights, and both fused and planned (same groups, same kernels).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/Pipeline.h"
#include "frontend/OnnxImport.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Random.h"
#include "ir/Reference.h"
#include "tests/frontend/OnnxBuilder.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>

namespace sinter::test {

class OnnxTest : public ::testing::Test {
public:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sinter-onnx", dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(llvm::StringRef name) const { return (dir + "/" + name).str(); }

  /// Writes `b` as `name` (external data with `external`) and imports it.
  llvm::Expected<OnnxModel> tryImport(const OnnxBuilder &b, const std::string &name = "m.onnx",
                                      bool external = false) {
    b.write(path(name), external);
    return importOnnx(path(name));
  }
  /// The same, failing the test on an import error.
  OnnxModel import(const OnnxBuilder &b, const std::string &name = "m.onnx",
                   bool external = false) {
    auto m = tryImport(b, name, external);
    if (!m) {
      ADD_FAILURE() << "import failed: " << llvm::toString(m.takeError());
      return {};
    }
    return std::move(*m);
  }
  /// The message of a failed import ("" when it succeeded).
  std::string importError(const OnnxBuilder &b, const std::string &name = "m.onnx") {
    auto m = tryImport(b, name);
    if (m)
      return "";
    return llvm::toString(m.takeError());
  }

  static Graph sir(llvm::StringRef text) {
    auto graphs = parseSir(text, "expected.sir");
    if (!graphs) {
      ADD_FAILURE() << llvm::toString(graphs.takeError());
      return {};
    }
    return std::move((*graphs)[0]);
  }

  /// The graph's text without the origin comments and without attributes written at
  /// their default value (`eps = 1e-5`, `stride = 1`): what the graph means, not how it was
  /// spelled.
  static std::string text(Graph g) {
    for (Op &op : g.ops) {
      op.origin.clear();
      llvm::SmallVector<Attr, 4> kept;
      for (const Attr &a : op.attrs) {
        const AttrSpec *spec = op.info().findAttr(a.name);
        AttrValue v = a.value;
        if (auto *list = std::get_if<IntList>(&v);
            list && spec->kind == AttrKind::Spatial && !list->empty() &&
            llvm::all_of(*list, [&](int64_t x) { return x == (*list)[0]; }))
          v = (*list)[0];
        bool isDefault = spec && spec->hasDefault && spec->defaultFrom.empty() &&
                         (v == spec->defaultValue ||
                          (std::holds_alternative<double>(v) &&
                           std::holds_alternative<double>(spec->defaultValue) &&
                           std::get<double>(v) == std::get<double>(spec->defaultValue)));
        if (!isDefault)
          kept.push_back(a);
      }
      op.attrs = kept;
    }
    return printGraph(g);
  }

  /// The float initializers of `b` as tensors (to bind a .sir's params by name when the
  /// model names them otherwise).
  static TensorMap initializers(const OnnxBuilder &b) {
    TensorMap out;
    for (const onnx::TensorProto &t : b.model.graph().initializer()) {
      if (t.data_type() != onnx::TensorProto::FLOAT)
        continue;
      Shape shape(t.dims().begin(), t.dims().end());
      out[t.name()] =
          HostTensor(shape, std::vector<float>(t.float_data().begin(), t.float_data().end()));
    }
    return out;
  }

  /// Evaluates the model and `expected` on the same random inputs (seed 1) and the model's
  /// weights (a .sir param binds the weight of the same name); every output must agree to
  /// `tolerance` relative L2.
  /// With `zeroOutputs` (a graph that computes zeros, e.g. x - mean over a dim of size 1), every
  /// output must be exactly zero instead of nonzero.
  static void expectSameResults(const OnnxModel &m, const Graph &expected, double tolerance = 1e-12,
                                const TensorMap &extra = {}, bool zeroOutputs = false) {
    TensorMap bindings = randomBindings(expected, 1, /*params=*/false);
    for (const auto &[name, t] : m.weights)
      bindings.emplace(name, t);
    for (const auto &[name, t] : extra)
      bindings.emplace(name, t);
    for (auto &[name, t] : randomBindings(m.graph, 1, /*params=*/false))
      bindings.emplace(name, t);
    auto got = evaluateReference(m.graph, bindings);
    ASSERT_TRUE(bool(got)) << llvm::toString(got.takeError());
    auto want = evaluateReference(expected, bindings);
    ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
    ASSERT_EQ(got->size(), want->size());
    for (const auto &[name, w] : *want) {
      auto it = got->find(name);
      ASSERT_NE(it, got->end()) << "no output " << name;
      ASSERT_EQ(it->second.type, w.type) << name;
      double d2 = 0, r2 = 0;
      for (size_t i = 0; i < w.data.size(); ++i) {
        double d = it->second.data[i] - w.data[i];
        d2 += d * d;
        r2 += w.data[i] * w.data[i];
      }
      double rel = std::sqrt(d2 / std::max(r2, 1e-300));
      if (zeroOutputs) {
        EXPECT_EQ(r2, 0) << "output " << name << " should be zero (the graph says why)";
        EXPECT_EQ(d2, 0) << "output " << name;
        continue;
      }
      EXPECT_LE(rel, tolerance) << "output " << name;
      EXPECT_GT(r2, 0) << "output " << name << " is all zeros: the test compares nothing";
    }
  }

  /// The fusion groups (pattern and op kinds) and the launches (template and role, in
  /// order) the compiler plans for `g`: what must agree between an imported model and its
  /// .sir, whatever the intermediate values are named.
  static std::string plan(const Graph &g) {
    auto r = runPipeline(g, {});
    if (!r) {
      ADD_FAILURE() << llvm::toString(r.takeError());
      return "";
    }
    std::string s;
    for (const FusionGroup &grp : r->fusion.groups) {
      s += "group " + grp.pattern + ":";
      for (int op : grp.ops())
        s += " " + r->graph.ops[op].name().str();
      s += "\n";
    }
    for (const Step &step : r->plan.plan.steps) {
      if (step.kind == Step::Kind::Fill) {
        s += "  fill\n";
        continue;
      }
      const PlannedKernel &k = r->plan.kernels[step.kernel];
      s += "  launch " + k.source.templateName + " (" + k.role + ") " + k.source.tileConfig + "\n";
    }
    return s;
  }

  llvm::SmallString<128> dir;
};

} // namespace sinter::test
