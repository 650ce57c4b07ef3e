//===- tests/frontend/ExporterModels.h - models as the PyTorch exporters write them --===//
//
// Builders shared by the pattern and fuzz tests: GroupNorm and GELU as torch.onnx.export
// writes them at opset 20 (the dynamo exporter's torchlib functions before its optimizer
// folds anything, and the TorchScript exporter's symbolic functions after its constant
// folding), the five workloads of ../shared/workloads at any size, and any sinter graph
// written back op by op as the exporter writes each op (ExporterWriter).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "tests/frontend/OnnxBuilder.h"

#include "ir/Graph.h"
#include "ir/Tensor.h"

#include <algorithm>

namespace sinter::test {

enum class Exporter { Dynamo, TorchScript };

/// GroupNorm(groups) of `x` (shape `xs`) with params `gamma`, `beta` into `out`, as the
/// exporter writes it at opset 20.
inline void groupNorm(OnnxBuilder &b, Exporter e, const std::string &x, llvm::ArrayRef<int64_t> xs,
                      int64_t groups, const std::string &gamma, const std::string &beta,
                      const std::string &out, float eps = 1e-5f) {
  int64_t c = xs[1];
  std::string p = out + "_gn_";
  if (e == Exporter::Dynamo) {
    // torchlib's aten_native_group_norm, before the exporter's optimizer folds anything.
    b.constantInts(p + "neg1", {-1});
    b.node("Constant", {}, {p + "g"});
    OnnxBuilder::tensorAttr(b.graph().mutable_node(b.graph().node_size() - 1)[0], "value")
        ->set_data_type(onnx::TensorProto::INT64);
    b.graph()
        .mutable_node(b.graph().node_size() - 1)
        ->mutable_attribute(0)
        ->mutable_t()
        ->add_int64_data(groups);
    b.node("Reshape", {p + "g", p + "neg1"}, {p + "group"});
    b.constantInts(p + "zero", {0});
    auto &cat = b.node("Concat", {p + "zero", p + "group", p + "neg1"}, {p + "shape"});
    OnnxBuilder::attrInt(cat, "axis", 0);
    b.node("Reshape", {x, p + "shape"}, {p + "r"});
    b.constant(p + "one", {1.0f});
    b.node("CastLike", {p + "one", x}, {p + "one_like"});
    b.node("Expand", {p + "one_like", p + "group"}, {p + "wi"});
    b.constant(p + "zerof", {0.0f});
    b.node("CastLike", {p + "zerof", x}, {p + "zero_like"});
    b.node("Expand", {p + "zero_like", p + "group"}, {p + "bi"});
    auto &in = b.node("InstanceNormalization", {p + "r", p + "wi", p + "bi"}, {p + "n"});
    OnnxBuilder::attrFloat(in, "epsilon", eps);
    b.node("Shape", {x}, {p + "xshape"});
    auto &back = b.node("Reshape", {p + "n", p + "xshape"}, {p + "y"});
    OnnxBuilder::attrInt(back, "allowzero", 1);
    b.node("Constant", {}, {p + "c1"});
    OnnxBuilder::attrInt(b.graph().mutable_node(b.graph().node_size() - 1)[0], "value_int", 1);
    b.graph()
        .mutable_node(b.graph().node_size() - 1)
        ->mutable_attribute(0)
        ->set_type(onnx::AttributeProto::INT);
    b.constantInts(p + "rankm1", {int64_t(xs.size()) - 1});
    b.node("Squeeze", {p + "rankm1"}, {p + "rankm1s"});
    b.node("Range", {p + "c1", p + "rankm1s", p + "c1"}, {p + "axes"});
    b.node("Unsqueeze", {gamma, p + "axes"}, {p + "w"});
    b.node("CastLike", {p + "w", p + "y"}, {p + "wc"});
    b.node("Mul", {p + "y", p + "wc"}, {p + "mul"});
    b.node("Unsqueeze", {beta, p + "axes"}, {p + "bb"});
    b.node("CastLike", {p + "bb", p + "mul"}, {p + "bc"});
    b.node("Add", {p + "mul", p + "bc"}, {out});
    // The mean and rstd outputs of native_group_norm: computed, then unused.
    b.constantInts(p + "ax2", {2});
    b.node("ReduceMean", {p + "r", p + "ax2"}, {p + "mean"});
    b.node("Sub", {p + "r", p + "mean"}, {p + "centered"});
    return;
  }
  // The TorchScript exporter: constant shapes, Constant scale/bias, Shape(x) for the way
  // back, and the per-channel affine unsqueezed into new initializers.
  b.constantInts(p + "shape", {0, groups, -1});
  b.node("Reshape", {x, p + "shape"}, {p + "r"});
  b.constant(p + "ones", std::vector<float>(size_t(groups), 1.0f), {groups});
  b.constant(p + "zeros", std::vector<float>(size_t(groups), 0.0f), {groups});
  auto &in = b.node("InstanceNormalization", {p + "r", p + "ones", p + "zeros"}, {p + "n"});
  OnnxBuilder::attrFloat(in, "epsilon", eps);
  b.node("Shape", {x}, {p + "xshape"});
  b.node("Reshape", {p + "n", p + "xshape"}, {p + "y"});
  std::vector<int64_t> wshape{c};
  for (size_t d = 2; d < xs.size(); ++d)
    wshape.push_back(1);
  // The exporter folds Unsqueeze(weight) into initializers with generated names; the test
  // copies the values of the named params.
  const onnx::TensorProto *g = nullptr, *bt = nullptr;
  for (const onnx::TensorProto &t : b.graph().initializer()) {
    if (t.name() == gamma)
      g = &t;
    if (t.name() == beta)
      bt = &t;
  }
  std::vector<float> gv(g->float_data().begin(), g->float_data().end());
  std::vector<float> bv(bt->float_data().begin(), bt->float_data().end());
  b.weight("onnx::Mul_" + out, wshape, gv);
  b.weight("onnx::Add_" + out, wshape, bv);
  b.node("Mul", {p + "y", "onnx::Mul_" + out}, {p + "mul"});
  b.node("Add", {p + "mul", "onnx::Add_" + out}, {out});
}

/// F.gelu(x) as the exporters write it below opset 20 (erf) or with approximate="tanh".
inline void geluFormula(OnnxBuilder &b, Exporter e, const std::string &x, bool tanh,
                        const std::string &out) {
  std::string p = out + "_gelu_";
  if (!tanh) {
    b.constant(p + "sqrt2", {1.4142135623730951f});
    b.node("Div", {x, p + "sqrt2"}, {p + "d"});
    b.node("Erf", {p + "d"}, {p + "erf"});
    b.constant(p + "one", {1.0f});
    b.node("Add", {p + "erf", p + "one"}, {p + "a"});
    b.constant(p + "half", {0.5f});
    if (e == Exporter::Dynamo) {
      b.node("Mul", {p + "half", p + "a"}, {p + "h"});
      b.node("Mul", {x, p + "h"}, {out});
    } else {
      b.node("Mul", {x, p + "a"}, {p + "xa"});
      b.node("Mul", {p + "xa", p + "half"}, {out});
    }
    return;
  }
  b.constant(p + "three", {3.0f});
  b.node("Pow", {x, p + "three"}, {p + "cube"});
  b.constant(p + "k", {0.044715f});
  b.node("Mul", {p + "k", p + "cube"}, {p + "kc"});
  b.node("Add", {x, p + "kc"}, {p + "s"});
  b.constant(p + "c", {0.7978845608028654f});
  b.node("Mul", {p + "c", p + "s"}, {p + "u"});
  b.node("Tanh", {p + "u"}, {p + "t"});
  b.constant(p + "one", {1.0f});
  b.node("Add", {p + "t", p + "one"}, {p + "a"});
  b.constant(p + "half", {0.5f});
  b.node("Mul", {p + "half", p + "a"}, {p + "h"});
  b.node("Mul", {x, p + "h"}, {out});
}

/// S0: ConvTranspose3d -> ReLU -> GroupNorm(8), at x = [n, cin, d, d, d].
inline OnnxBuilder s0(Exporter e, int64_t n, int64_t cin, int64_t cout, int64_t d) {
  OnnxBuilder b;
  b.input("x", {n, cin, d, d, d});
  b.ramp("w", {cin, cout, 3, 3, 3}, 0.01f, 0.001f);
  b.ramp("gamma", {cout}, 0.8f, 0.01f);
  b.ramp("beta", {cout});
  auto &ct = b.node("ConvTranspose", {"x", "w"}, {"y"});
  OnnxBuilder::attrInts(ct, "strides", {1, 1, 1});
  OnnxBuilder::attrInts(ct, "pads", {0, 0, 0, 0, 0, 0});
  b.node("Relu", {"y"}, {"r"});
  groupNorm(b, e, "r", {n, cout, d + 2, d + 2, d + 2}, 8, "gamma", "beta", "o");
  b.output("o");
  return b;
}

/// S1: Conv3d(bias) -> GroupNorm(8) -> mean over C, D, H, W.
inline OnnxBuilder s1(Exporter e, int64_t n, int64_t d, int64_t h) {
  OnnxBuilder b(20);
  b.input("x", {n, 3, d, h, h});
  b.ramp("w", {24, 3, 3, 3, 3}, 0.01f, 0.001f);
  b.ramp("b", {24});
  b.ramp("gamma", {24}, 0.8f, 0.01f);
  b.ramp("beta", {24});
  b.node("Conv", {"x", "w", "b"}, {"y"});
  groupNorm(b, e, "y", {n, 24, d - 2, h - 2, h - 2}, 8, "gamma", "beta", "n");
  b.ints("axes", {4}, {1, 2, 3, 4});
  auto &m = b.node("ReduceMean", {"n", "axes"}, {"o"});
  OnnxBuilder::attrInt(m, "keepdims", 0);
  b.output("o");
  return b;
}

/// S2: ConvTranspose2d(groups 8, bias) -> GELU -> GroupNorm(8).
inline OnnxBuilder s2(Exporter e, int64_t n, int64_t h) {
  OnnxBuilder b(20);
  b.input("x", {n, 64, h, h});
  b.ramp("w", {64, 8, 3, 3}, 0.01f, 0.001f);
  b.ramp("b", {64});
  b.ramp("gamma", {64}, 0.8f, 0.01f);
  b.ramp("beta", {64});
  auto &ct = b.node("ConvTranspose", {"x", "w", "b"}, {"y"});
  OnnxBuilder::attrInt(ct, "group", 8);
  b.node("Gelu", {"y"}, {"g"});
  groupNorm(b, e, "g", {n, 64, h + 2, h + 2}, 8, "gamma", "beta", "o");
  b.output("o");
  return b;
}

/// S3: Linear -> GroupNorm(512) -> min over features (keepdim) -> + bias[1,N,1,1].
inline OnnxBuilder s3(Exporter e, int64_t m, int64_t k, int64_t n) {
  OnnxBuilder b(20);
  b.input("x", {m, k});
  b.ramp("w", {n, k}, 0.01f, 0.0001f);
  b.ramp("b", {n});
  b.ramp("gamma", {n}, 0.8f, 0.01f);
  b.ramp("beta", {n});
  b.ramp("bias", {1, n, 1, 1});
  auto &g = b.node("Gemm", {"x", "w", "b"}, {"y"});
  OnnxBuilder::attrInt(g, "transB", 1);
  OnnxBuilder::attrFloat(g, "alpha", 1.0f);
  OnnxBuilder::attrFloat(g, "beta", 1.0f);
  groupNorm(b, e, "y", {m, n}, 512, "gamma", "beta", "n");
  b.ints("axes", {1}, {1});
  auto &r = b.node("ReduceMin", {"n", "axes"}, {"m"});
  OnnxBuilder::attrInt(r, "keepdims", 1);
  b.node("Add", {"m", "bias"}, {"o"});
  b.output("o");
  return b;
}

/// S4: grouped strided ConvTranspose3d.
inline OnnxBuilder s4(int64_t n, int64_t d, int64_t h, int64_t w) {
  OnnxBuilder b(20);
  b.input("x", {n, 32, d, h, w});
  b.ramp("w", {32, 8, 3, 3, 3}, 0.01f, 0.001f);
  auto &ct = b.node("ConvTranspose", {"x", "w"}, {"y"});
  OnnxBuilder::attrInts(ct, "strides", {2, 2, 2});
  OnnxBuilder::attrInts(ct, "pads", {1, 1, 1, 1, 1, 1});
  OnnxBuilder::attrInt(ct, "group", 4);
  b.output("y");
  return b;
}

/// Writes a sinter graph back as an ONNX model the way `e` exports each op at opset 20 (its
/// GroupNorm pattern; the dynamo exporter's torchlib forms for the rest), params as
/// initializers with the values of `weights`.
class ExporterWriter {
public:
  ExporterWriter(const Graph &g, const TensorMap &weights, Exporter e)
      : g(g), weights(weights), exporter(e) {}

  OnnxBuilder run() {
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
  Exporter exporter;
  OnnxBuilder b;
  int fresh = 0; // generated names start with "__", which the corpus's value names do not

  std::string name(const Operand &o) {
    if (!o.isScalar())
      return g.value(o.value).name;
    return b.constant("__c" + std::to_string(fresh++), {float(o.scalar)});
  }
  std::string out(const Op &op) const { return g.value(op.result).name; }
  std::string tmp() { return "__t" + std::to_string(fresh++); }
  std::string ints(const IntList &v) {
    std::string n = "__i" + std::to_string(fresh++);
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
      OnnxBuilder::attrInt(n, "group", op.getInt("groups"));
      return;
    }
    case OpKind::Linear: {
      onnx::NodeProto &n = b.node("Gemm", {}, {out(op)});
      for (const Operand &o : op.operands)
        n.add_input(name(o));
      OnnxBuilder::attrInt(n, "transB", 1);
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
      OnnxBuilder::attrFloat(n, "alpha", float(1.0 / 6));
      OnnxBuilder::attrFloat(n, "beta", 0.5f);
      return;
    }
    case OpKind::Gelu: {
      auto &n = node("Gelu", {x}, out(op));
      OnnxBuilder::attrString(n, "approximate", op.getEnum("approximate"));
      return;
    }
    case OpKind::LeakyRelu: {
      auto &n = node("LeakyRelu", {x}, out(op));
      OnnxBuilder::attrFloat(n, "alpha", float(op.getFloat("negative_slope")));
      return;
    }
    case OpKind::Elu: {
      std::string one = b.constant("__c" + std::to_string(fresh++), {1.0f}), s = tmp(), e = tmp();
      node("Mul", {x, one}, s);
      auto &n = node("Elu", {s}, e);
      OnnxBuilder::attrFloat(n, "alpha", float(op.getFloat("alpha")));
      node("Mul", {e, one}, out(op));
      return;
    }
    case OpKind::Softplus: {
      // torchlib: Where(x * beta > threshold, x, Softplus(x * beta) / beta).
      std::string beta = b.constant("__c" + std::to_string(fresh++), {float(op.getFloat("beta"))});
      std::string th =
          b.constant("__c" + std::to_string(fresh++), {float(op.getFloat("threshold"))});
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
                           ? b.constant("__c" + std::to_string(fresh++),
                                        {float(op.getFloat(h ? "min_val" : "min"))})
                           : "";
      std::string hi = h || op.hasAttr("max")
                           ? b.constant("__c" + std::to_string(fresh++),
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
      OnnxBuilder::attrInt(n, "keepdims", op.getBool("keepdim"));
      return;
    }
    case OpKind::Softmax:
    case OpKind::LogSoftmax: {
      auto &n = node(op.kind == OpKind::Softmax ? "Softmax" : "LogSoftmax", {x}, out(op));
      OnnxBuilder::attrInt(n, "axis", op.getInt("dim"));
      return;
    }
    case OpKind::GroupNorm: {
      const Shape &xs = g.type(op.operands[0].value).shape;
      groupNorm(b, exporter, x, xs, op.getInt("groups"), name(op.operands[1]),
                name(op.operands[2]), out(op), float(op.getFloat("eps")));
      return;
    }
    case OpKind::LayerNorm: {
      auto &n = b.node("LayerNormalization", {}, {out(op), "", ""});
      for (const Operand &o : op.operands)
        n.add_input(name(o));
      OnnxBuilder::attrInt(n, "axis", -int64_t(op.getInts("normalized_shape").size()));
      OnnxBuilder::attrFloat(n, "epsilon", float(op.getFloat("eps")));
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
        gamma =
            b.constant("__c" + std::to_string(fresh++), std::vector<float>(size_t(c), 1.0f), {c});
        beta =
            b.constant("__c" + std::to_string(fresh++), std::vector<float>(size_t(c), 0.0f), {c});
      }
      onnx::NodeProto &n =
          bn ? node("BatchNormalization",
                    {x, gamma, beta, name(op.operands[1]), name(op.operands[2])}, out(op))
             : node("InstanceNormalization", {x, gamma, beta}, out(op));
      OnnxBuilder::attrFloat(n, "epsilon", float(op.getFloat("eps")));
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
        OnnxBuilder::attrInt(n, "count_include_pad", op.getBool("count_include_pad"));
      OnnxBuilder::attrInt(n, "ceil_mode", op.getBool("ceil_mode"));
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

inline OnnxBuilder writeAsExporter(const Graph &g, const TensorMap &weights, Exporter e) {
  return ExporterWriter(g, weights, e).run();
}

} // namespace sinter::test
