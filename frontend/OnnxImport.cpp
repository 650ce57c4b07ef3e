//===- frontend/OnnxImport.cpp - reading a model and walking its nodes ---------------===//
//
// importOnnx in order: parse the ModelProto with the protobuf classes generated from
// libonnx's onnx.proto; check the IR version and the default domain's opset; rewrite the
// patterns only ONNX can express (OnnxRewrite.cpp); bind initializers as constants and the
// graph inputs (f32, static shapes) as the graph's inputs; mark the nodes some graph output
// depends on; then, in file order, fold each live node whose inputs are constant or lower it
// by its op type's rule; finally name the outputs, check them against the types the model
// declares, and finish the graph (GroupNorm re-formed, dead code dropped, values ordered).
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxImporter.h"

#include "ir/Error.h"
#include "onnx.pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>

namespace sinter {

using namespace onnximport;

bool isOnnxPath(llvm::StringRef path) { return path.endswith_insensitive(".onnx"); }

namespace {

constexpr int64_t kMinOpset = 13, kMaxOpset = 21;

/// The graph's name: the file's stem made into an identifier.
std::string graphNameOf(llvm::StringRef fileName) {
  std::string name;
  for (char ch : llvm::sys::path::stem(fileName))
    name += llvm::isAlnum(ch) || ch == '_' ? ch : '_';
  if (name.empty() || llvm::isDigit(name[0]))
    name = "g" + name;
  return name;
}

/// "f32[16,64]" for a tensor type of the model, with "?" for a dim it does not fix.
std::string describe(const onnx::TypeProto_Tensor &t) {
  std::string s = onnxTypeName(t.elem_type()) + "[";
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const auto &d = t.shape().dim(i);
    s += (i ? "," : "") + (d.has_dim_value() ? std::to_string(d.dim_value())
                                             : (d.has_dim_param() ? d.dim_param() : "?"));
  }
  return s + "]";
}

/// The static shape of graph input `v`, or an error naming it.
llvm::Expected<Shape> inputShape(const std::string &file, const onnx::ValueInfoProto &v) {
  std::string who = file + ": graph input '" + printable(v.name()) + "'";
  if (!v.has_type() || !v.type().has_tensor_type())
    return makeError(who + " is not a tensor");
  const onnx::TypeProto_Tensor &t = v.type().tensor_type();
  if (t.elem_type() != onnx::TensorProto::FLOAT)
    return makeError(who + " has type " + describe(t) + "; sinter imports float32 inputs only");
  if (!t.has_shape())
    return makeError(who + " has no shape; export with static shapes");
  Shape shape;
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const auto &d = t.shape().dim(i);
    if (!d.has_dim_value())
      return makeError(who + " has a dynamic dim " +
                       (d.has_dim_param() ? "'" + printable(d.dim_param()) + "' " : "") +
                       "at axis " + llvm::Twine(i) + " (" + describe(t) +
                       "); export with static shapes (no dynamic_shapes / dynamic_axes)");
    if (d.dim_value() < 1 || d.dim_value() > (int64_t(1) << 31))
      return makeError(who + " has dim " + llvm::Twine(d.dim_value()) + " at axis " +
                       llvm::Twine(i));
    shape.push_back(d.dim_value());
  }
  if (checkedNumel(shape, kMaxElements) < 0)
    return makeError(who + " is too large (" + describe(t) + ")");
  return shape;
}

const LowerRule *findRule(llvm::StringRef key) {
  for (llvm::ArrayRef<LowerRule> rules : {nnRules(), normRules(), mathRules()})
    for (const LowerRule &r : rules)
      if (key == r.opType)
        return &r;
  return nullptr;
}

llvm::Expected<OnnxModel> importModel(onnx::ModelProto &model, llvm::StringRef fileName,
                                      llvm::StringRef dataDir) {
  std::string file = fileName.str();
  if (model.ir_version() < 3 || !model.has_graph())
    return makeError(file + ": not an ONNX model (no graph, or IR version " +
                     llvm::Twine(model.ir_version()) + ")");
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset < 0)
    return makeError(file + ": the model imports no opset of the default ONNX domain");
  if (opset < kMinOpset || opset > kMaxOpset)
    return makeError(file + ": opset " + llvm::Twine(opset) + " is not supported (opsets " +
                     llvm::Twine(kMinOpset) + " to " + llvm::Twine(kMaxOpset) + " are)");
  onnx::GraphProto &g = *model.mutable_graph();
  if (g.sparse_initializer_size())
    return makeError(file + ": sparse initializers are not supported");

  std::map<int, std::string> origins;
  rewriteOnnx(g, origins);

  Importer im;
  im.file = file;
  im.opset = opset;
  im.graph.name = graphNameOf(fileName);
  im.graph.file = file;
  ExternalData external(dataDir.str());

  for (const onnx::ValueInfoProto &o : g.output())
    im.reserved.insert(Importer::validName(o.name()));
  // Liveness: the nodes some graph output depends on.
  for (const onnx::ValueInfoProto &o : g.output())
    im.live.insert(o.name());
  std::vector<bool> liveNode(size_t(g.node_size()), false);
  for (int i = g.node_size() - 1; i >= 0; --i) {
    const onnx::NodeProto &n = g.node(i);
    if (llvm::none_of(n.output(), [&](const std::string &o) { return im.live.contains(o); }))
      continue;
    liveNode[size_t(i)] = true;
    for (const std::string &in : n.input())
      if (!in.empty())
        im.live.insert(in);
  }

  for (const onnx::TensorProto &t : g.initializer()) {
    if (t.name().empty())
      return makeError(file + ": an initializer has no name");
    if (im.env.count(t.name()))
      return makeError(file + ": initializer '" + printable(t.name()) + "' is defined twice");
    // Weights nothing computes with are not read (nor are their types a problem).
    if (!im.live.contains(t.name())) {
      im.env[t.name()] = Binding{-1, nullptr, t.name()};
      continue;
    }
    auto c = decodeTensor(t, external);
    if (!c)
      return withContext(c.takeError(), file + ": initializer '" + printable(t.name()) + "'");
    im.env[t.name()] = Binding{-1, std::make_shared<const ConstTensor>(std::move(*c)), t.name()};
  }
  for (const onnx::ValueInfoProto &in : g.input()) {
    // Older exporters list the initializers among the inputs too.
    if (im.env.count(in.name()))
      continue;
    auto shape = inputShape(file, in);
    if (!shape)
      return shape.takeError();
    ValueId v =
        im.addValue(im.uniqueName(in.name()), TensorType(DType::F32, *shape), ValueKind::Input);
    im.graph.args.push_back(v);
    im.env[in.name()] = Binding{v, nullptr, ""};
  }

  for (int i = 0; i < g.node_size(); ++i) {
    if (!liveNode[size_t(i)])
      continue;
    const onnx::NodeProto &n = g.node(i);
    auto label = origins.find(i);
    NodeCtx ctx(im, n, label != origins.end() ? label->second : nodeLabel(n, i), opset);
    ctx.external = &external;
    bool ours = n.domain() == "sinter.ai";
    if (!(n.domain().empty() || n.domain() == "ai.onnx" || ours))
      return ctx.fail("op type '" + printable(n.op_type()) + "' of domain '" +
                      printable(n.domain()) + "' is not supported");
    for (const std::string &in : n.input())
      if (!in.empty() && !im.env.count(in))
        return ctx.fail("input '" + printable(in) +
                        "' is not a graph input, an initializer or the output of an earlier "
                        "node");
    for (const std::string &out : n.output())
      if (!out.empty() && im.env.count(out))
        return ctx.fail("output '" + printable(out) + "' is defined more than once");
    if (!ours) {
      auto folded = tryFold(ctx);
      if (!folded)
        return folded.takeError();
      if (*folded)
        continue;
    }
    const LowerRule *rule = findRule(ours ? "sinter.ai:" + n.op_type() : n.op_type());
    if (!rule)
      return ctx.fail("op type '" + printable(n.op_type()) + "' is not supported");
    if (opset < rule->sinceOpset)
      return ctx.fail(n.op_type() + " needs opset " + llvm::Twine(rule->sinceOpset) + " or later");
    for (unsigned k = 0; k < rule->minInputs; ++k)
      if (!ctx.has(k))
        return ctx.fail("input " + llvm::Twine(k) + " is missing");
    if (ctx.numInputs() > rule->maxInputs)
      return ctx.fail("expected at most " + llvm::Twine(rule->maxInputs) + " inputs, got " +
                      llvm::Twine(ctx.numInputs()));
    if (auto err = rule->lower(ctx))
      return err;
    for (unsigned k = 0; k < ctx.numOutputs(); ++k)
      if (ctx.used(k) && !im.env.count(n.output(int(k))))
        return ctx.fail("output " + llvm::Twine(k) + " is not supported");
  }

  // Outputs: each names a computed value, which takes the output's name.
  for (const onnx::ValueInfoProto &o : g.output()) {
    std::string who = file + ": graph output '" + printable(o.name()) + "'";
    auto it = im.env.find(o.name());
    if (it == im.env.end())
      return makeError(who + " is not computed by any node");
    if (it->second.isConst())
      return makeError(who + " is a constant; there is nothing to compute");
    ValueId v = it->second.value;
    Value &val = im.graph.values[v];
    if (val.isArgument())
      return makeError(who + " is the graph input or weight '" + val.name + "' unchanged");
    if (llvm::is_contained(im.graph.results, v))
      return makeError(who + " is the same value as another output");
    std::string wanted = Importer::validName(o.name());
    if (val.name != wanted) {
      // Another value holding the name (an input, an intermediate) gives it up.
      for (Value &other : im.graph.values)
        if (other.name == wanted)
          other.name = im.uniqueName(wanted + "_");
      val.name = wanted;
      im.taken.insert(wanted);
    }
    if (o.has_type() && o.type().has_tensor_type()) {
      const onnx::TypeProto_Tensor &t = o.type().tensor_type();
      if (t.has_elem_type() && t.elem_type() != onnx::TensorProto::FLOAT)
        return makeError(who + " is declared " + describe(t) + "; sinter computes float32");
      if (t.has_shape()) {
        bool agrees = t.shape().dim_size() == int(val.type.rank());
        for (int d = 0; agrees && d < t.shape().dim_size(); ++d)
          agrees = !t.shape().dim(d).has_dim_value() ||
                   t.shape().dim(d).dim_value() == val.type.shape[size_t(d)];
        if (!agrees)
          return makeError(who + " is declared " + describe(t) + " but the graph computes " +
                           val.type.str());
      }
    }
    im.graph.results.push_back(v);
  }
  if (im.graph.results.empty())
    return makeError(file + ": the model has no outputs");

  if (auto err = finishGraph(im))
    return err;
  OnnxModel out;
  out.graph = std::move(im.graph);
  out.weights = std::move(im.weights);
  out.opset = opset;
  out.producer = printable(model.producer_name());
  if (!model.producer_version().empty())
    out.producer += " " + printable(model.producer_version());
  return out;
}

} // namespace

llvm::Expected<OnnxModel> importOnnxBytes(llvm::StringRef bytes, llvm::StringRef fileName,
                                          llvm::StringRef dataDir) {
  if (bytes.size() > size_t(INT_MAX))
    return makeError(fileName + ": the model is larger than 2 GiB, protobuf's limit (store "
                                "the weights as external data)");
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    return makeError(fileName + ": not a valid ONNX model (the protobuf does not parse: the "
                                "file is truncated or corrupt)");
  return importModel(model, fileName, dataDir);
}

llvm::Expected<OnnxModel> importOnnx(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf)
    return makeError("cannot read " + path + ": " + buf.getError().message());
  llvm::StringRef dir = llvm::sys::path::parent_path(path);
  return importOnnxBytes((*buf)->getBuffer(), path, dir.empty() ? "." : dir);
}

} // namespace sinter
