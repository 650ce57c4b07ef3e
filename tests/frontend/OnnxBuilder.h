//===- tests/frontend/OnnxBuilder.h - writing ONNX models in tests -------------------===//
//
// The frontend tests need ONNX models without PyTorch or Python: OnnxBuilder writes them
// with the protobuf classes the importer reads (generated from libonnx's onnx.proto), node
// by node, the way the exporters do: graph inputs and outputs with static shapes,
// initializers (inline, or moved to a `.data` file next to the model as the dynamo exporter
// stores them), Constant nodes, and attributes of every kind the importer reads.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "onnx.pb.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

namespace sinter::test {

class OnnxBuilder {
public:
  explicit OnnxBuilder(int64_t opset = 20, const std::string &producer = "pytorch") {
    model.set_ir_version(10);
    model.set_producer_name(producer);
    model.set_producer_version("2.11.0");
    auto *o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model.mutable_graph()->set_name("main_graph");
  }

  onnx::GraphProto &graph() { return *model.mutable_graph(); }

  /// A graph input (float32 unless `elemType` says otherwise).
  void input(const std::string &name, llvm::ArrayRef<int64_t> shape,
             int elemType = onnx::TensorProto::FLOAT) {
    valueInfo(graph().add_input(), name, shape, elemType);
  }
  /// A graph output; `shape` empty leaves it undeclared.
  void output(const std::string &name, llvm::ArrayRef<int64_t> shape = {}) {
    valueInfo(graph().add_output(), name, shape, onnx::TensorProto::FLOAT);
  }

  /// A float32 initializer.
  void weight(const std::string &name, llvm::ArrayRef<int64_t> shape,
              const std::vector<float> &values) {
    onnx::TensorProto *t = graph().add_initializer();
    fill(*t, name, shape, values);
  }
  /// A float32 initializer with values a + b * i (i the flat index), never all equal.
  void ramp(const std::string &name, llvm::ArrayRef<int64_t> shape, float a = 0.1f,
            float b = 0.01f) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      v[size_t(i)] = a + b * float(i % 97) - 0.4f * float(i % 2);
    weight(name, shape, v);
  }
  /// An int64 initializer.
  void ints(const std::string &name, llvm::ArrayRef<int64_t> shape,
            const std::vector<int64_t> &values) {
    onnx::TensorProto *t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : shape)
      t->add_dims(d);
    for (int64_t v : values)
      t->add_int64_data(v);
  }

  /// Appends a node; returns it for attributes.
  onnx::NodeProto &node(const std::string &op, std::initializer_list<std::string> inputs,
                        std::initializer_list<std::string> outputs, const std::string &name = "") {
    onnx::NodeProto *n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? "node_" + op + "_" + std::to_string(graph().node_size() - 1) : name);
    for (const std::string &i : inputs)
      n->add_input(i);
    for (const std::string &o : outputs)
      n->add_output(o);
    return *n;
  }

  /// A Constant node holding a float32 tensor (a scalar when `shape` is empty).
  std::string constant(const std::string &out, const std::vector<float> &values,
                       llvm::ArrayRef<int64_t> shape = {}) {
    onnx::NodeProto &n = node("Constant", {}, {out});
    fill(*tensorAttr(n, "value"), "", shape, values);
    return out;
  }
  /// A Constant node holding an int64 list.
  std::string constantInts(const std::string &out, const std::vector<int64_t> &values) {
    onnx::NodeProto &n = node("Constant", {}, {out});
    onnx::TensorProto *t = tensorAttr(n, "value");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    for (int64_t v : values)
      t->add_int64_data(v);
    return out;
  }

  static void attrInt(onnx::NodeProto &n, const std::string &name, int64_t v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attrFloat(onnx::NodeProto &n, const std::string &name, float v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attrInts(onnx::NodeProto &n, const std::string &name,
                       std::initializer_list<int64_t> v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  static void attrString(onnx::NodeProto &n, const std::string &name, const std::string &v) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static onnx::TensorProto *tensorAttr(onnx::NodeProto &n, const std::string &name) {
    auto *a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    return a->mutable_t();
  }

  std::string bytes() const { return model.SerializeAsString(); }

  /// Writes the model to `path`. With `external`, every float initializer of more than
  /// `threshold` elements goes to `path + ".data"` (raw little-endian, 16-byte aligned), as
  /// the dynamo exporter writes weights.
  void write(const std::string &path, bool external = false, int64_t threshold = 0) const {
    onnx::ModelProto m = model;
    if (external) {
      std::string data;
      std::string location = path.substr(path.find_last_of('/') + 1) + ".data";
      for (onnx::TensorProto &t : *m.mutable_graph()->mutable_initializer()) {
        if (t.data_type() != onnx::TensorProto::FLOAT || t.float_data_size() <= threshold)
          continue;
        while (data.size() % 16)
          data += '\0';
        size_t offset = data.size();
        data.append(reinterpret_cast<const char *>(t.float_data().data()),
                    size_t(t.float_data_size()) * 4);
        size_t length = data.size() - offset;
        t.clear_float_data();
        t.set_data_location(onnx::TensorProto::EXTERNAL);
        auto add = [&](const std::string &k, const std::string &v) {
          auto *e = t.add_external_data();
          e->set_key(k);
          e->set_value(v);
        };
        add("location", location);
        add("offset", std::to_string(offset));
        add("length", std::to_string(length));
      }
      std::ofstream(path + ".data", std::ios::binary) << data;
    }
    std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  }

  onnx::ModelProto model;

private:
  static void valueInfo(onnx::ValueInfoProto *v, const std::string &name,
                        llvm::ArrayRef<int64_t> shape, int elemType) {
    v->set_name(name);
    auto *t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elemType);
    if (shape.empty())
      return;
    auto *s = t->mutable_shape();
    for (int64_t d : shape)
      s->add_dim()->set_dim_value(d);
  }
  static void fill(onnx::TensorProto &t, const std::string &name, llvm::ArrayRef<int64_t> shape,
                   const std::vector<float> &values) {
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : shape)
      t.add_dims(d);
    for (float v : values)
      t.add_float_data(v);
  }
};

} // namespace sinter::test
