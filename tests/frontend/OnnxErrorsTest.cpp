//===- tests/frontend/OnnxErrorsTest.cpp - what the importer refuses, and how --------===//
//
// Every refusal is one llvm::Error naming the file and, where there is one, the node with
// its op type and the opset. The fuzz cases truncate and bit-flip valid models (with inline
// and external weights): the importer must answer each with a model or an error, never crash.
//
//===--------------------------------------------------------------------------------===//
#include "tests/frontend/ExporterModels.h"
#include "tests/frontend/OnnxTestUtil.h"

#include "llvm/Support/MemoryBuffer.h"

#include <random>

using namespace sinter;
using namespace sinter::test;

namespace {

using B = OnnxBuilder;

class OnnxErrors : public OnnxTest {
protected:
  std::string m() const { return path("m.onnx"); }
};

TEST_F(OnnxErrors, UnsupportedOpNamesTheNode) {
  B b;
  b.input("x", {2, 3});
  b.node("LSTM", {"x"}, {"y"}, "lstm0");
  b.output("y");
  EXPECT_EQ(importError(b),
            m() + ": node 'lstm0' (LSTM, opset 20): op type 'LSTM' is not supported");
}

TEST_F(OnnxErrors, OtherDomainsAreNotSupported) {
  B b;
  b.input("x", {2, 3});
  b.node("FusedGemm", {"x"}, {"y"}, "fg").set_domain("com.microsoft");
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": node 'fg' (FusedGemm, opset 20): op type 'FusedGemm' of "
                                  "domain 'com.microsoft' is not supported");
}

TEST_F(OnnxErrors, UnsupportedAttributeValueNamesTheNode) {
  B b;
  b.input("x", {1, 2, 6, 6});
  b.ramp("w", {2, 2, 3, 3});
  auto &n = b.node("Conv", {"x", "w"}, {"y"}, "c1");
  B::attrInts(n, "pads", {0, 0, 1, 1});
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": node 'c1' (Conv, opset 20): asymmetric pads (begin [0,0], "
                                  "end [1,1]) are not supported");
}

TEST_F(OnnxErrors, DataMovingTransposeIsNotSupported) {
  B b;
  b.input("x", {2, 3});
  b.node("Relu", {"x"}, {"r"});
  auto &t = b.node("Transpose", {"r"}, {"y"}, "t");
  B::attrInts(t, "perm", {1, 0});
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": node 't' (Transpose, opset 20): a transpose that moves data "
                                  "(perm [1,0] of [2,3]) is not supported");
}

TEST_F(OnnxErrors, TransposePermThatRepeatsADimIsRefused) {
  // Only size-1 dims: without the permutation check this passed through as a reshape.
  B b;
  b.input("x", {1, 1});
  b.node("Relu", {"x"}, {"r"});
  auto &t = b.node("Transpose", {"r"}, {"y"}, "t");
  B::attrInts(t, "perm", {0, 0});
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": node 't' (Transpose, opset 20): invalid perm [0,0]");
}

TEST_F(OnnxErrors, OpNewerThanTheModelsOpset) {
  B b(17);
  b.input("x", {2, 3});
  b.node("Gelu", {"x"}, {"y"}, "g");
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": node 'g' (Gelu, opset 17): Gelu needs opset 20 or later");
}

TEST_F(OnnxErrors, IntegerCastOfComputedTensor) {
  B b;
  b.input("x", {2, 3});
  auto &c = b.node("Cast", {"x"}, {"y"}, "cast");
  B::attrInt(c, "to", onnx::TensorProto::INT64);
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": node 'cast' (Cast, opset 20): cast of a computed f32 tensor "
                                  "to int64 is not supported");
}

TEST_F(OnnxErrors, NonFloatInputs) {
  B b;
  b.input("ids", {2, 3}, onnx::TensorProto::INT64);
  b.output("ids");
  EXPECT_EQ(importError(b), m() + ": graph input 'ids' has type int64[2,3]; sinter imports "
                                  "float32 inputs only");
}

TEST_F(OnnxErrors, DynamicDims) {
  B b;
  b.input("x", {1, 3});
  b.graph()
      .mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_param("batch");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": graph input 'x' has a dynamic dim 'batch' at axis 0 "
                                  "(float[batch,3]); export with static shapes (no "
                                  "dynamic_shapes / dynamic_axes)");
}

TEST_F(OnnxErrors, Float16WeightsThatAreUsed) {
  B b;
  b.input("x", {2, 3});
  onnx::TensorProto *t = b.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT16);
  t->add_dims(3);
  t->set_raw_data(std::string(6, '\0'));
  b.node("Mul", {"x", "w"}, {"y"});
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": initializer 'w': data type float16 is not supported");
  // The same weight, unused, does not matter.
  b.graph().mutable_node(0)->set_input(1, "x");
  EXPECT_EQ(importError(b), "");
}

TEST_F(OnnxErrors, OpsetsOutsideThirteenToTwentyOne) {
  for (int64_t opset : {12, 22}) {
    B b(opset);
    b.input("x", {2});
    b.node("Relu", {"x"}, {"y"});
    b.output("y");
    EXPECT_EQ(importError(b),
              m() + ": opset " + std::to_string(opset) + " is not supported (opsets 13 to 21 are)");
  }
}

TEST_F(OnnxErrors, FilesThatAreNotModels) {
  std::string garbage = path("garbage.onnx");
  { std::ofstream(garbage) << "graph m(%x: f32[2]) {\n  return %x\n}\n"; }
  auto e = importOnnx(garbage);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()),
            garbage + ": not a valid ONNX model (the protobuf does not parse: the file is "
                      "truncated or corrupt)");
  std::string empty = path("empty.onnx");
  { std::ofstream(empty) << ""; }
  e = importOnnx(empty);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()),
            empty + ": not an ONNX model (no graph, or IR version 0)");
  e = importOnnx(path("missing.onnx"));
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()),
            "cannot read " + path("missing.onnx") + ": No such file or directory");
}

TEST_F(OnnxErrors, ExternalDataProblems) {
  B b;
  b.input("x", {2, 4});
  b.ramp("w", {4, 4});
  b.node("MatMul", {"x", "w"}, {"y"});
  b.output("y");
  b.write(path("m.onnx"), /*external=*/true);
  ASSERT_TRUE(bool(importOnnx(path("m.onnx"))));
  // A truncated data file.
  { std::ofstream(path("m.onnx.data")) << "short"; }
  auto e = importOnnx(path("m.onnx"));
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()),
            m() + ": initializer 'w': external data [0, 64) lies outside 'm.onnx.data' (5 bytes)");
  // A missing one.
  llvm::sys::fs::remove(path("m.onnx.data"));
  e = importOnnx(path("m.onnx"));
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()), m() +
                                               ": initializer 'w': cannot read external data "
                                               "file " +
                                               path("m.onnx.data") + ": No such file or directory");
  // A location outside the model's folder.
  onnx::ModelProto model = b.model;
  onnx::TensorProto *t = model.mutable_graph()->mutable_initializer(0);
  t->clear_float_data();
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *loc = t->add_external_data();
  loc->set_key("location");
  loc->set_value("../../etc/passwd");
  std::string bytes = model.SerializeAsString();
  e = importOnnxBytes(bytes, "m.onnx", dir);
  ASSERT_FALSE(bool(e));
  EXPECT_EQ(llvm::toString(e.takeError()),
            "m.onnx: initializer 'w': external data location '../../etc/passwd' must be a "
            "relative path inside the model's folder");
}

TEST_F(OnnxErrors, MalformedGraphs) {
  B b;
  b.input("x", {2, 3});
  b.node("Relu", {"later"}, {"y"}, "r");
  b.node("Relu", {"x"}, {"later"}, "l");
  b.output("y");
  EXPECT_EQ(importError(b), m() + ": node 'r' (Relu, opset 20): input 'later' is not a graph "
                                  "input, an initializer or the output of an earlier node");
  B c;
  c.input("x", {2, 3});
  c.node("Relu", {"x"}, {"y"});
  c.output("z");
  EXPECT_EQ(importError(c), m() + ": graph output 'z' is not computed by any node");
  B d;
  d.input("x", {2, 3});
  d.node("Relu", {"x"}, {"y"});
  d.output("y", {3, 2});
  EXPECT_EQ(importError(d), m() + ": graph output 'y' is declared float[3,2] but the graph "
                                  "computes f32[2,3]");
  B e;
  e.input("x", {2, 3});
  auto &dr = e.node("Dropout", {"x"}, {"y", "mask"}, "drop");
  (void)dr;
  e.node("Relu", {"mask"}, {"z"});
  e.output("y");
  e.output("z");
  EXPECT_EQ(importError(e), m() + ": node 'drop' (Dropout, opset 20): the dropout mask (output "
                                  "1) is used; only inference is supported");
}

//===----------------------------------------------------------------------------------===//
// Fuzzing: truncated and bit-flipped models.

/// Models with every part the importer reads: attributes, Constant tensors, initializers,
/// shape arithmetic, the GroupNorm pattern and external data.
std::vector<B> fuzzSeeds() {
  std::vector<B> seeds;
  {
    B b;
    b.input("x", {2, 4, 5, 5});
    b.ramp("w", {8, 4, 3, 3});
    b.ramp("bias", {8});
    auto &c = b.node("Conv", {"x", "w", "bias"}, {"y"});
    B::attrInts(c, "pads", {1, 1, 1, 1});
    b.constantInts("shape", {0, 2, -1});
    b.node("Reshape", {"y", "shape"}, {"r"});
    b.constant("ones", {1, 1}, {2});
    b.constant("zeros", {0, 0}, {2});
    b.node("InstanceNormalization", {"r", "ones", "zeros"}, {"n"});
    b.node("Shape", {"y"}, {"ys"});
    b.node("Reshape", {"n", "ys"}, {"back"});
    b.ramp("g", {8, 1, 1});
    b.node("Mul", {"back", "g"}, {"o"});
    b.output("o", {2, 8, 5, 5});
    seeds.push_back(b);
  }
  {
    B b(18);
    b.input("x", {3, 6});
    b.ramp("w", {5, 6});
    auto &g = b.node("Gemm", {"x", "w"}, {"y"});
    B::attrInt(g, "transB", 1);
    b.constant("two", {2.0f});
    b.node("Mul", {"y", "two"}, {"s"});
    b.node("Softplus", {"s"}, {"sp"});
    b.node("Div", {"sp", "two"}, {"d"});
    b.constant("t", {10.0f});
    b.node("Greater", {"s", "t"}, {"c"});
    b.node("Where", {"c", "y", "d"}, {"sw"});
    b.ints("axes", {1}, {1});
    b.node("ReduceLogSumExp", {"sw", "axes"}, {"o"});
    auto &mp = b.node("MaxPool", {"x"}, {"unused"});
    B::attrInts(mp, "kernel_shape", {2});
    b.output("o");
    seeds.push_back(b);
  }
  // The exporters' GroupNorm and GELU, and the pools and norms of the catalog.
  seeds.push_back(s0(Exporter::Dynamo, 1, 2, 8, 2));
  seeds.push_back(s3(Exporter::TorchScript, 2, 4, 1024));
  {
    B b(18);
    b.input("x", {1, 4, 6, 6});
    geluFormula(b, Exporter::Dynamo, "x", true, "g");
    auto &ap = b.node("AveragePool", {"g"}, {"a"});
    B::attrInts(ap, "kernel_shape", {3, 3});
    B::attrInts(ap, "pads", {1, 1, 1, 1});
    B::attrInt(ap, "ceil_mode", 1);
    b.ramp("ls", {6});
    b.ramp("lb", {6});
    b.node("LayerNormalization", {"a", "ls", "lb"}, {"l"});
    b.ramp("bs", {4});
    b.ramp("bb", {4});
    b.ramp("m", {4});
    b.weight("v", {4}, {1, 2, 3, 4});
    b.node("BatchNormalization", {"l", "bs", "bb", "m", "v"}, {"n"});
    b.constant("lo", {-1.0f});
    b.node("Clip", {"n", "lo"}, {"o"});
    b.output("o");
    seeds.push_back(b);
  }
  return seeds;
}

TEST_F(OnnxErrors, FuzzedModelsNeverCrashTheImporter) {
  std::mt19937_64 rng(20261123);
  int imported = 0, refused = 0;
  std::string lastError;
  auto check = [&](const std::string &bytes, const std::string &what) {
    auto m = importOnnxBytes(bytes, "fuzz.onnx", dir);
    if (m) {
      ++imported;
      // What imports is a verified graph with a value for every param.
      for (ValueId a : m->graph.args) {
        if (m->graph.values[a].kind == ValueKind::Param) {
          EXPECT_EQ(m->weights.count(m->graph.values[a].name), 1u) << what;
        }
      }
      EXPECT_FALSE(printGraph(m->graph).empty());
      return;
    }
    ++refused;
    std::string msg = llvm::toString(m.takeError());
    lastError = msg;

    EXPECT_FALSE(msg.empty()) << what;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << what << ": " << msg;
    EXPECT_EQ(msg.rfind("fuzz.onnx", 0), 0u) << what << ": " << msg;
  };
  std::vector<B> seeds = fuzzSeeds();
  for (size_t s = 0; s < seeds.size(); ++s) {
    // Both storage layouts: inline, and weights in fuzz.onnx.data next to the model.
    for (bool external : {false, true}) {
      seeds[s].write(path("fuzz.onnx"), external);
      auto buf = llvm::MemoryBuffer::getFile(path("fuzz.onnx"));
      ASSERT_TRUE(bool(buf));
      std::string bytes = (*buf)->getBuffer().str();
      int before = refused;
      check(bytes, "seed " + std::to_string(s)); // the seed itself imports
      ASSERT_EQ(refused, before) << "seed " << s << " must import: " << lastError;
      for (size_t len = 0; len < bytes.size(); len += 1 + bytes.size() / 97)
        check(bytes.substr(0, len), "seed " + std::to_string(s) + " cut at " + std::to_string(len));
      for (int k = 0; k < 500; ++k) {
        std::string mutated = bytes;
        int flips = 1 + int(rng() % 3);
        for (int f = 0; f < flips; ++f)
          mutated[rng() % mutated.size()] ^= char(1u << (rng() % 8));
        check(mutated, "seed " + std::to_string(s) + " mutation " + std::to_string(k));
      }
    }
  }
  // Both outcomes occur: the fuzzing reaches past the protobuf parser.
  EXPECT_GT(imported, 100);
  EXPECT_GT(refused, 100);
}

} // namespace
