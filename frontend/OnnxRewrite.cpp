//===- frontend/OnnxRewrite.cpp - exporter patterns only ONNX can express ------------===//
//
// Two rewrites run on the ONNX graph itself, before anything is lowered, because what
// they match has no counterpart in the catalog until it is re-formed:
//  - the dynamo exporter writes F.softplus(x, beta, threshold) as
//      s = Mul(x, beta); Where(Greater(s, threshold), x, Div(Softplus(s), beta))
//    (without the Mul and Div when beta is 1). The Where node becomes one node of the
//    importer's private domain "sinter.ai", Softplus(x) {beta, threshold}, which lowers to
//    the catalog's softplus; the nodes it absorbed die unless something else reads them;
//  - a Pad with zero pads is an Identity, and a constant-zero Pad of the spatial dims
//    feeding only convolutions (or average pools without pads of their own) moves into
//    their pads (the padded zeros become padding the pool counts, count_include_pad = 1).
// Numbers are read from Constant nodes and initializers, through Cast, CastLike and
// Identity.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxImporter.h"

#include "onnx.pb.h"

#include "llvm/ADT/StringMap.h"

#include <cmath>

namespace sinter::onnximport {
namespace {

class Rewriter {
public:
  explicit Rewriter(onnx::GraphProto &g) : g(g) {
    for (int i = 0; i < g.node_size(); ++i)
      for (const std::string &out : g.node(i).output())
        if (!out.empty())
          producer[out] = i;
    for (const onnx::TensorProto &t : g.initializer())
      initializer[t.name()] = &t;
    for (int i = 0; i < g.node_size(); ++i)
      for (const std::string &in : g.node(i).input())
        if (!in.empty())
          consumers[in].push_back(i);
    for (const onnx::ValueInfoProto &o : g.output())
      consumers[o.name()].push_back(-1);
  }

  void run(std::map<int, std::string> &origins);

private:
  onnx::GraphProto &g;
  llvm::StringMap<int> producer;
  llvm::StringMap<const onnx::TensorProto *> initializer;
  llvm::StringMap<llvm::SmallVector<int, 2>> consumers;

  const onnx::NodeProto *producerOf(const std::string &name, llvm::StringRef opType) const {
    auto it = producer.find(name);
    if (it == producer.end() || g.node(it->second).op_type() != opType ||
        !(g.node(it->second).domain().empty() || g.node(it->second).domain() == "ai.onnx"))
      return nullptr;
    return &g.node(it->second);
  }

  /// The elements of a small constant named `name`, if it is one.
  std::optional<ConstTensor> constant(const std::string &name, int depth = 0) const;
  std::optional<double> scalar(const std::string &name) const {
    auto t = constant(name);
    if (!t || t->numel() != 1)
      return std::nullopt;
    return t->num(0);
  }

  bool softplus(int w, std::map<int, std::string> &origins);
  bool pad(int p, std::map<int, std::string> &origins);
};

std::optional<ConstTensor> Rewriter::constant(const std::string &name, int depth) const {
  if (depth > 4)
    return std::nullopt;
  ExternalData none("");
  if (auto it = initializer.find(name); it != initializer.end()) {
    if (it->second->dims_size() > 1 || (it->second->dims_size() == 1 && it->second->dims(0) > 16))
      return std::nullopt;
    auto t = decodeTensor(*it->second, none);
    if (!t) {
      llvm::consumeError(t.takeError());
      return std::nullopt;
    }
    return std::move(*t);
  }
  auto it = producer.find(name);
  if (it == producer.end())
    return std::nullopt;
  const onnx::NodeProto &n = g.node(it->second);
  if (!(n.domain().empty() || n.domain() == "ai.onnx"))
    return std::nullopt;
  if ((n.op_type() == "Cast" || n.op_type() == "CastLike" || n.op_type() == "Identity") &&
      n.input_size() >= 1)
    return constant(n.input(0), depth + 1);
  if (n.op_type() != "Constant")
    return std::nullopt;
  for (const onnx::AttributeProto &a : n.attribute()) {
    if (a.name() == "value" && a.has_t()) {
      auto t = decodeTensor(a.t(), none);
      if (!t) {
        llvm::consumeError(t.takeError());
        return std::nullopt;
      }
      return std::move(*t);
    }
    ConstTensor t;
    if (a.name() == "value_float") {
      t = ConstTensor::zeros(ElemKind::F32, {});
      t.f32[0] = a.f();
      return t;
    }
    if (a.name() == "value_int") {
      t = ConstTensor::zeros(ElemKind::I64, {});
      t.i64[0] = a.i();
      return t;
    }
    if (a.name() == "value_ints") {
      t = ConstTensor::zeros(ElemKind::I64, {int64_t(a.ints_size())});
      for (int i = 0; i < a.ints_size(); ++i)
        t.i64[size_t(i)] = a.ints(i);
      return t;
    }
  }
  return std::nullopt;
}

/// The node index of `n` within `g`.
int indexOf(const onnx::GraphProto &g, const onnx::NodeProto *n) { return int(n - &g.node(0)); }

bool Rewriter::softplus(int wi, std::map<int, std::string> &origins) {
  onnx::NodeProto &w = *g.mutable_node(wi);
  if (w.input_size() != 3 || w.output_size() != 1)
    return false;
  const onnx::NodeProto *gt = producerOf(w.input(0), "Greater");
  if (!gt || gt->input_size() != 2)
    return false;
  std::optional<double> threshold = scalar(gt->input(1));
  if (!threshold)
    return false;
  const std::string &s = gt->input(0);
  // s is x * beta, or x itself when beta is 1.
  std::string x = s;
  double beta = 1;
  llvm::SmallVector<const onnx::NodeProto *, 5> absorbed{gt};
  if (const onnx::NodeProto *mul = producerOf(s, "Mul"); mul && mul->input_size() == 2) {
    for (int k : {0, 1})
      if (auto b = scalar(mul->input(k)); b && mul->input(1 - k) == w.input(1)) {
        beta = *b;
        x = mul->input(1 - k);
        absorbed.push_back(mul);
      }
  }
  if (w.input(1) != x || beta == 0)
    return false;
  // The else branch: Softplus(s) / beta, or Softplus(s) when beta is 1.
  std::string sp = w.input(2);
  if (const onnx::NodeProto *div = producerOf(sp, "Div"); div && div->input_size() == 2) {
    auto b = scalar(div->input(1));
    if (!b || *b != beta)
      return false;
    absorbed.push_back(div);
    sp = div->input(0);
  } else if (beta != 1) {
    return false;
  }
  const onnx::NodeProto *softplusNode = producerOf(sp, "Softplus");
  if (!softplusNode || softplusNode->input_size() != 1 || softplusNode->input(0) != s)
    return false;
  absorbed.push_back(softplusNode);
  absorbed.push_back(&w);

  std::string label = "nodes";
  llvm::sort(absorbed, [&](auto *a, auto *b) { return indexOf(g, a) < indexOf(g, b); });
  for (size_t k = 0; k < absorbed.size(); ++k)
    label += (k ? ", " : " ") + nodeLabel(*absorbed[k], indexOf(g, absorbed[k])).substr(5);
  origins[wi] = label + " as softplus";

  w.set_op_type("Softplus");
  w.set_domain("sinter.ai");
  w.clear_input();
  w.add_input(x);
  w.clear_attribute();
  onnx::AttributeProto *a = w.add_attribute();
  a->set_name("beta");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(float(beta));
  a = w.add_attribute();
  a->set_name("threshold");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(float(*threshold));
  return true;
}

bool Rewriter::pad(int pi, std::map<int, std::string> &origins) {
  onnx::NodeProto &p = *g.mutable_node(pi);
  if (p.input_size() < 2 || p.input_size() > 3 || p.output_size() != 1)
    return false;
  for (const onnx::AttributeProto &a : p.attribute())
    if (a.name() != "mode" || (a.s() != "constant"))
      return false;
  if (p.input_size() == 3 && !p.input(2).empty()) {
    auto v = scalar(p.input(2));
    if (!v || *v != 0)
      return false;
  }
  auto pads = constant(p.input(1));
  if (!pads || pads->numel() % 2 || pads->numel() == 0)
    return false;
  int64_t rank = pads->numel() / 2;
  IntList b, e;
  for (int64_t d = 0; d < rank; ++d) {
    b.push_back(pads->integer(size_t(d)));
    e.push_back(pads->integer(size_t(rank + d)));
  }
  auto toIdentity = [&] {
    origins[pi] = nodeLabel(p, pi) + " with zero pads";
    p.set_op_type("Identity");
    p.clear_attribute();
    std::string x = p.input(0);
    p.clear_input();
    p.add_input(x);
  };
  if (llvm::all_of(b, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(e, [](int64_t v) { return v == 0; })) {
    toIdentity();
    return true;
  }
  if (rank < 3 || b != e || b[0] || b[1] || llvm::any_of(b, [](int64_t v) { return v < 0; }))
    return false;
  auto users = consumers.find(p.output(0));
  if (users == consumers.end())
    return false;
  for (int u : users->second) {
    if (u < 0)
      return false;
    const onnx::NodeProto &n = g.node(u);
    if ((n.op_type() != "Conv" && n.op_type() != "AveragePool") || n.input(0) != p.output(0))
      return false;
    for (const onnx::AttributeProto &a : n.attribute()) {
      if (a.name() == "auto_pad" && a.s() != "NOTSET")
        return false;
      if (a.name() == "pads" && (a.ints_size() != 2 * (rank - 2) ||
                                 (n.op_type() == "AveragePool" &&
                                  llvm::any_of(a.ints(), [](int64_t v) { return v != 0; }))))
        return false;
    }
  }
  for (int u : users->second) {
    onnx::NodeProto &n = *g.mutable_node(u);
    onnx::AttributeProto *padsAttr = nullptr;
    for (onnx::AttributeProto &a : *n.mutable_attribute())
      if (a.name() == "pads")
        padsAttr = &a;
    if (!padsAttr) {
      padsAttr = n.add_attribute();
      padsAttr->set_name("pads");
      padsAttr->set_type(onnx::AttributeProto::INTS);
      for (int64_t k = 0; k < 2 * (rank - 2); ++k)
        padsAttr->add_ints(0);
    }
    for (int64_t d = 2; d < rank; ++d) {
      padsAttr->set_ints(int(d - 2), padsAttr->ints(int(d - 2)) + b[size_t(d)]);
      padsAttr->set_ints(int(rank - 2 + d - 2),
                         padsAttr->ints(int(rank - 2 + d - 2)) + b[size_t(d)]);
    }
    if (n.op_type() == "AveragePool") {
      onnx::AttributeProto *cip = nullptr;
      for (onnx::AttributeProto &a : *n.mutable_attribute())
        if (a.name() == "count_include_pad")
          cip = &a;
      if (!cip) {
        cip = n.add_attribute();
        cip->set_name("count_include_pad");
        cip->set_type(onnx::AttributeProto::INT);
      }
      cip->set_i(1);
    }
    origins[u] = nodeLabel(n, u) + " with " + nodeLabel(p, pi) + " folded in";
  }
  toIdentity();
  return true;
}

void Rewriter::run(std::map<int, std::string> &origins) {
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &n = g.node(i);
    if (!(n.domain().empty() || n.domain() == "ai.onnx"))
      continue;
    if (n.op_type() == "Where")
      softplus(i, origins);
    else if (n.op_type() == "Pad")
      pad(i, origins);
  }
}

} // namespace

void rewriteOnnx(onnx::GraphProto &graph, std::map<int, std::string> &origins) {
  if (graph.node_size() == 0)
    return;
  Rewriter(graph).run(origins);
}

} // namespace sinter::onnximport
