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

using namespace sinter;
using namespace sinter::test;

namespace {

using B = OnnxBuilder;

/// Writes `g` as the dynamo exporter would, params with the values of `weights`.
class Writer {
public:
  Writer(const Graph &g, const TensorMap &weights) : g(g), weights(weights) {}

  B run() {
    for (ValueId a : g.args) {
      const Value &v = g.value(a);
      if (v.kind == ValueKind::Input)
        b.input(v.name, v.type.shape);
      else
        b.weight(v.name, v.type.shape, weights.at(v.name).data);
    }
    for (const Op &op : g.ops)
      lower(op);
    for (ValueId r : g.results)
      b.output(g.value(r).name, g.type(r).shape);
    return b;
  }

private:
  const Graph &g;
  const TensorMap &weights;
  B b;
  int fresh = 0;

  std::string name(const Operand &o) {
    if (!o.isScalar())
      return g.value(o.value).name;
    return b.constant("c" + std::to_string(fresh++), {float(o.scalar)});
  }
  std::string out(const Op &op) const { return g.value(op.result).name; }
  std::string tmp() { return "t" + std::to_string(fresh++); }
  std::string ints(const IntList &v) {
    std::string n = "i" + std::to_string(fresh++);
    b.ints(n, {int64_t(v.size())}, std::vector<int64_t>(v.begin(), v.end()));
    return n;
  }
  static void listAttr(onnx::NodeProto &n, const std::string &attr, const IntList &v) {
    auto *a = n.add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  static IntList twice(const IntList &v) {
    IntList r = v;
    r.append(v.begin(), v.end());
    return r;
  }
  onnx::NodeProto &node(const std::string &type, std::initializer_list<std::string> in,
                        const std::string &result) {
    return b.node(type, in, {result});
  }

  void unary(const Op &op, const char *type) { node(type, {name(op.operands[0])}, out(op)); }

  void lower(const Op &op) {
    const std::string x = op.operands.empty() ? "" : name(op.operands[0]);
    unsigned nd = op.operands.empty() || op.operands[0].isScalar()
                      ? 0
                      : std::max(2u, g.type(op.operands[0].value).rank()) - 2;
    switch (op.kind) {
    case OpKind::Conv:
    case OpKind::ConvTranspose: {
      bool t = op.kind == OpKind::ConvTranspose;
      onnx::NodeProto &n = b.node(t ? "ConvTranspose" : "Conv", {}, {out(op)});
      for (const Operand &o : op.operands)
        n.add_input(name(o));
      listAttr(n, "strides", op.getSpatial("stride", nd));
      listAttr(n, "pads", twice(op.getSpatial("padding", nd)));
      listAttr(n, "dilations", op.getSpatial("dilation", nd));
      if (t)
        listAttr(n, "output_padding", op.getSpatial("output_padding", nd));
      B::attrInt(n, "group", op.getInt("groups"));
      return;
    }
    case OpKind::Linear: {
      onnx::NodeProto &n = b.node("Gemm", {}, {out(op)});
      for (const Operand &o : op.operands)
        n.add_input(name(o));
      B::attrInt(n, "transB", 1);
      return;
    }
    case OpKind::Matmul:
      node("MatMul", {x, name(op.operands[1])}, out(op));
      return;
    case OpKind::Relu:
      return unary(op, "Relu");
    case OpKind::Sigmoid:
      return unary(op, "Sigmoid");
    case OpKind::Tanh:
      return unary(op, "Tanh");
    case OpKind::Exp:
      return unary(op, "Exp");
    case OpKind::Log:
      return unary(op, "Log");
    case OpKind::Abs:
      return unary(op, "Abs");
    case OpKind::Neg:
      return unary(op, "Neg");
    case OpKind::Sqrt:
      return unary(op, "Sqrt");
    case OpKind::Erf:
      return unary(op, "Erf");
    case OpKind::Hardswish:
      return unary(op, "HardSwish");
    case OpKind::Mish:
      return unary(op, "Mish");
    case OpKind::Silu: {
      std::string s = tmp();
      node("Sigmoid", {x}, s);
      node("Mul", {x, s}, out(op));
      return;
    }
    case OpKind::Rsqrt: {
      std::string s = tmp();
      node("Sqrt", {x}, s);
      node("Reciprocal", {s}, out(op));
      return;
    }
    case OpKind::Hardsigmoid: {
      auto &n = node("HardSigmoid", {x}, out(op));
      B::attrFloat(n, "alpha", float(1.0 / 6));
      B::attrFloat(n, "beta", 0.5f);
      return;
    }
    case OpKind::Gelu: {
      auto &n = node("Gelu", {x}, out(op));
      B::attrString(n, "approximate", op.getEnum("approximate"));
      return;
    }
    case OpKind::LeakyRelu: {
      auto &n = node("LeakyRelu", {x}, out(op));
      B::attrFloat(n, "alpha", float(op.getFloat("negative_slope")));
      return;
    }
    case OpKind::Elu: {
      std::string one = b.constant("c" + std::to_string(fresh++), {1.0f}), s = tmp(), e = tmp();
      node("Mul", {x, one}, s);
      auto &n = node("Elu", {s}, e);
      B::attrFloat(n, "alpha", float(op.getFloat("alpha")));
      node("Mul", {e, one}, out(op));
      return;
    }
    case OpKind::Softplus: {
      // torchlib: Where(x * beta > threshold, x, Softplus(x * beta) / beta).
      std::string beta = b.constant("c" + std::to_string(fresh++), {float(op.getFloat("beta"))});
      std::string th = b.constant("c" + std::to_string(fresh++), {float(op.getFloat("threshold"))});
      std::string s = tmp(), sp = tmp(), d = tmp(), c = tmp();
      node("Mul", {x, beta}, s);
      node("Softplus", {s}, sp);
      node("Div", {sp, beta}, d);
      node("Greater", {s, th}, c);
      node("Where", {c, x, d}, out(op));
      return;
    }
    case OpKind::Hardtanh:
    case OpKind::Clamp: {
      bool h = op.kind == OpKind::Hardtanh;
      std::string lo = h || op.hasAttr("min")
                           ? b.constant("c" + std::to_string(fresh++),
                                        {float(op.getFloat(h ? "min_val" : "min"))})
                           : "";
      std::string hi = h || op.hasAttr("max")
                           ? b.constant("c" + std::to_string(fresh++),
                                        {float(op.getFloat(h ? "max_val" : "max"))})
                           : "";
      node("Clip", {x, lo, hi}, out(op));
      return;
    }
    case OpKind::Add:
      node("Add", {x, name(op.operands[1])}, out(op));
      return;
    case OpKind::Sub:
      node("Sub", {x, name(op.operands[1])}, out(op));
      return;
    case OpKind::Mul:
      node("Mul", {x, name(op.operands[1])}, out(op));
      return;
    case OpKind::Div:
      node("Div", {x, name(op.operands[1])}, out(op));
      return;
    case OpKind::Maximum:
      node("Max", {x, name(op.operands[1])}, out(op));
      return;
    case OpKind::Minimum:
      node("Min", {x, name(op.operands[1])}, out(op));
      return;
    case OpKind::Sum:
    case OpKind::Mean:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Logsumexp: {
      const char *type = op.kind == OpKind::Sum    ? "ReduceSum"
                         : op.kind == OpKind::Mean ? "ReduceMean"
                         : op.kind == OpKind::Max  ? "ReduceMax"
                         : op.kind == OpKind::Min  ? "ReduceMin"
                                                   : "ReduceLogSumExp";
      auto &n = node(type, {x, ints(op.getInts("dims"))}, out(op));
      B::attrInt(n, "keepdims", op.getBool("keepdim"));
      return;
    }
    case OpKind::Softmax:
    case OpKind::LogSoftmax: {
      auto &n = node(op.kind == OpKind::Softmax ? "Softmax" : "LogSoftmax", {x}, out(op));
      B::attrInt(n, "axis", op.getInt("dim"));
      return;
    }
    case OpKind::GroupNorm: {
      const Shape &xs = g.type(op.operands[0].value).shape;
      groupNorm(b, Exporter::Dynamo, x, xs, op.getInt("groups"), name(op.operands[1]),
                name(op.operands[2]), out(op), float(op.getFloat("eps")));
      return;
    }
    case OpKind::LayerNorm: {
      auto &n = b.node("LayerNormalization", {}, {out(op), "", ""});
      for (const Operand &o : op.operands)
        n.add_input(name(o));
      B::attrInt(n, "axis", -int64_t(op.getInts("normalized_shape").size()));
      B::attrFloat(n, "epsilon", float(op.getFloat("eps")));
      return;
    }
    case OpKind::BatchNorm:
    case OpKind::InstanceNorm: {
      bool bn = op.kind == OpKind::BatchNorm;
      int64_t c = g.type(op.operands[0].value).shape[1];
      std::string gamma, beta;
      size_t affine = bn ? 3 : 1;
      if (op.operands.size() > affine) {
        gamma = name(op.operands[affine]);
        beta = name(op.operands[affine + 1]);
      } else {
        gamma = b.constant("c" + std::to_string(fresh++), std::vector<float>(size_t(c), 1.0f), {c});
        beta = b.constant("c" + std::to_string(fresh++), std::vector<float>(size_t(c), 0.0f), {c});
      }
      onnx::NodeProto &n =
          bn ? node("BatchNormalization",
                    {x, gamma, beta, name(op.operands[1]), name(op.operands[2])}, out(op))
             : node("InstanceNormalization", {x, gamma, beta}, out(op));
      B::attrFloat(n, "epsilon", float(op.getFloat("eps")));
      return;
    }
    case OpKind::MaxPool:
    case OpKind::AvgPool: {
      bool mx = op.kind == OpKind::MaxPool;
      auto &n = node(mx ? "MaxPool" : "AveragePool", {x}, out(op));
      listAttr(n, "kernel_shape", op.getSpatial("kernel_size", nd));
      listAttr(n, "strides", op.getSpatial("stride", nd));
      listAttr(n, "pads", twice(op.getSpatial("padding", nd)));
      if (mx)
        listAttr(n, "dilations", op.getSpatial("dilation", nd));
      else
        B::attrInt(n, "count_include_pad", op.getBool("count_include_pad"));
      B::attrInt(n, "ceil_mode", op.getBool("ceil_mode"));
      return;
    }
    case OpKind::Reshape:
    case OpKind::Flatten: {
      const Shape &s = g.type(op.result).shape;
      node("Reshape", {x, ints(IntList(s.begin(), s.end()))}, out(op));
      return;
    }
    case OpKind::Dropout:
      node("Identity", {x}, out(op));
      return;
    }
  }
};

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
  B model = Writer(g, weights).run();
  OnnxModel m = import(model, g.name + ".onnx");
  ASSERT_FALSE(m.graph.ops.empty());
  Graph want = withoutReturnedDropout(g);
  EXPECT_EQ(samePlan(plan(m.graph)), samePlan(plan(want)));
  // Constants the exporter stores as float32 (1.702, 0.044715) read back as written.
  expectSameResults(m, want, 1e-9, weights);
}

std::vector<std::string> smallCorpus() { return sirFiles(corpusDir() + "/small"); }

INSTANTIATE_TEST_SUITE_P(Small, OnnxCorpus, ::testing::ValuesIn(smallCorpus()),
                         [](const auto &info) { return llvm::sys::path::stem(info.param).str(); });

} // namespace
