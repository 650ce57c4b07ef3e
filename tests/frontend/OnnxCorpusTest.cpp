//===- tests/frontend/OnnxCorpusTest.cpp - the corpus as the dynamo exporter writes it -===//
//
// Every graph of bench/corpus/small is written back as an ONNX model the way the dynamo
// exporter writes each op at opset 20 (torchlib's lowering: Gemm for linear, the
// InstanceNormalization pattern for group_norm, Mul(x, Sigmoid(x)) for silu, softplus's
// Where, Reciprocal(Sqrt) for rsqrt, Clip for hardtanh and clamp, ...) with the graph's
// params as initializers, then imported: the imported graph must fuse into the same groups
// and kernels as the .sir and compute the same on the float64 reference. The GPU machine
// checks the same with PyTorch's real exporters (bench/onnx_device_check.py).
//
//===--------------------------------------------------------------------------------===//
#include "tests/CorpusFiles.h"
#include "tests/frontend/ExporterModels.h"
#include "tests/frontend/OnnxTestUtil.h"

#include "ir/Parser.h"

#include "llvm/Support/Path.h"

#include <cstring>
#include <fstream>
#include <iterator>

using namespace sinter;
using namespace sinter::test;

namespace {

using B = OnnxBuilder;

/// `g` without a dropout that returns its result: the exporters drop dropout at inference,
/// where the .sir keeps a returned one as a copy. The dropped op's name goes to its operand.
Graph withoutReturnedDropout(const Graph &g) {
  Graph r = g;
  for (size_t i = 0; i < r.ops.size(); ++i) {
    Op &op = r.ops[i];
    if (op.kind != OpKind::Dropout || r.results != std::vector<ValueId>{op.result})
      continue;
    ValueId in = op.operands[0].value;
    std::string name = r.values[op.result].name;
    r.values[op.result].name = "dropped";
    r.values[in].name = name;
    r.results = {in};
    r.ops.erase(r.ops.begin() + long(i));
    // Printed and parsed again, the graph drops the value nobody defines any more.
    return OnnxTest::sir(printGraph(r));
  }
  return r;
}

/// The plan with the op kinds the importer writes for what ONNX cannot tell apart:
/// hardtanh is Clip, as clamp is; flatten is a Reshape.
std::string samePlan(std::string plan) {
  for (auto [from, to] : {std::pair{" hardtanh", " clamp"}, std::pair{" flatten", " reshape"}})
    for (size_t at; (at = plan.find(from)) != std::string::npos;)
      plan.replace(at, std::strlen(from), to);
  return plan;
}

class OnnxCorpus : public OnnxTest, public ::testing::WithParamInterface<std::string> {};

TEST_P(OnnxCorpus, ImportsFusesAndComputesAsTheSir) {
  auto graphs = parseSirFile(GetParam());
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  const Graph &g = (*graphs)[0];
  TensorMap weights = randomBindings(g, 5, /*params=*/true);
  B model = writeAsExporter(g, weights, Exporter::Dynamo);
  OnnxModel m = import(model, g.name + ".onnx");
  ASSERT_FALSE(m.graph.ops.empty());
  Graph want = withoutReturnedDropout(g);
  EXPECT_EQ(samePlan(plan(m.graph)), samePlan(plan(want)));
  // Constants the exporter stores as float32 (1.702, 0.044715) read back as written. A few
  // corpus graphs compute zeros (bench/corpus/sirbuild.py, zero_output).
  std::ifstream file(GetParam());
  std::string head((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  bool zero = head.find("\n# output zero:") != std::string::npos;
  expectSameResults(m, want, 1e-9, weights, zero);
}

std::vector<std::string> smallCorpus() { return sirFiles(corpusDir() + "/small"); }

INSTANTIATE_TEST_SUITE_P(Small, OnnxCorpus, ::testing::ValuesIn(smallCorpus()),
                         [](const auto &info) { return llvm::sys::path::stem(info.param).str(); });

} // namespace
