//===- frontend/OnnxImporter.cpp - naming, params, inputs, attributes, emitting -----===//
//
// The pieces every lowering and folding rule uses (OnnxImporter.h): value names made
// valid and unique, constants turned into params (once each) or scalar operands, ONNX
// attributes read with their kinds checked, and sinter ops appended with their types
// inferred on the spot, so that a rule sees the shapes of what it has emitted so far.
//
//===--------------------------------------------------------------------------------===//
#include "frontend/OnnxImporter.h"

#include "ir/Error.h"
#include "ir/Verifier.h"
#include "onnx.pb.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sinter::onnximport {

std::string printable(llvm::StringRef text) {
  std::string out;
  for (char ch : text.take_front(120))
    out += (unsigned char)ch < 0x20 || ch == 0x7f ? '?' : ch;
  if (text.size() > 120)
    out += "...";
  return out;
}

std::string nodeLabel(const onnx::NodeProto &node, int index) {
  std::string who =
      node.name().empty() ? "#" + std::to_string(index) : "'" + printable(node.name()) + "'";
  return "node " + who + " (" + printable(node.op_type()) + ")";
}

double fromFloat(float f) {
  if (!std::isfinite(f))
    return double(f);
  // Up to 6 significant digits: a number written in the source (1.702, 0.044715, 1e-05).
  // A float that needs more is a value in its own right (a trained scale) and stays exact.
  char buf[32];
  for (int digits = 1; digits <= 6; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, double(f));
    double d = std::strtod(buf, nullptr);
    if (float(d) == f)
      return d;
  }
  return double(f);
}

std::string Importer::validName(llvm::StringRef wanted) {
  std::string base;
  for (char ch : wanted.take_front(200))
    base += llvm::isAlnum(ch) || ch == '_' || ch == '.' ? ch : '_';
  return base.empty() ? "v" : base;
}

std::string Importer::uniqueName(llvm::StringRef wanted, bool reservedOk) {
  std::string base = validName(wanted);
  auto free = [&](const std::string &n) {
    return !taken.contains(n) && (reservedOk || !reserved.contains(n));
  };
  std::string name = base;
  for (unsigned k = 1; !free(name); ++k)
    name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

ValueId Importer::addValue(const std::string &name, TensorType type, ValueKind kind) {
  Value v;
  v.name = name;
  v.type = std::move(type);
  v.kind = kind;
  graph.values.push_back(std::move(v));
  return ValueId(graph.values.size() - 1);
}

llvm::Expected<ValueId> Importer::paramFor(const Binding &b) {
  assert(b.isConst() && "paramFor takes a constant");
  auto it = paramOf.find(b.constant);
  if (it != paramOf.end())
    return it->second;
  if (!b.constant->isFloat())
    return makeError("the integer tensor '" + printable(b.paramName) +
                     "' is used as data; sinter computes in f32");
  std::string name = uniqueName(b.paramName.empty() ? "const" : b.paramName);
  ValueId v = addValue(name, TensorType(DType::F32, b.constant->shape), ValueKind::Param);
  graph.args.push_back(v);
  weights[name] = HostTensor(b.constant->shape, b.constant->toF32());
  paramOf[b.constant] = v;
  return v;
}

llvm::Error NodeCtx::fail(const llvm::Twine &message) const {
  // The origin reads "node 'n' (Op)"; errors add the opset inside the parentheses.
  // "node 'n' (Op)" becomes "node 'n' (Op, opset 20)"; a re-formed group of nodes gets
  // the opset at the end.
  std::string where = origin;
  if (llvm::count(where, '(') == 1 && where.back() == ')')
    where.insert(where.size() - 1, ", opset " + std::to_string(opset));
  else
    where += " (opset " + std::to_string(opset) + ")";
  return makeError(im.file + ": " + where + ": " + message);
}

unsigned NodeCtx::numInputs() const { return unsigned(node.input_size()); }

bool NodeCtx::has(unsigned i) const { return i < numInputs() && !node.input(int(i)).empty(); }

const Binding &NodeCtx::in(unsigned i) const {
  assert(has(i) && "input absent");
  auto it = im.env.find(node.input(int(i)));
  assert(it != im.env.end() && "the driver checks that every input is bound");
  return it->second;
}

const ConstTensor *NodeCtx::constant(unsigned i) const {
  return has(i) ? in(i).constant.get() : nullptr;
}

llvm::Expected<const ConstTensor *> NodeCtx::requireConst(unsigned i, llvm::StringRef what) const {
  if (!has(i))
    return fail("input " + llvm::Twine(i) + " (" + what + ") is missing");
  if (const ConstTensor *c = constant(i))
    return c;
  return fail(what + " (input " + llvm::Twine(i) + ", '" + printable(node.input(int(i))) +
              "') must be a constant; it is computed at run time");
}

llvm::Expected<ValueId> NodeCtx::value(unsigned i) const {
  if (!has(i))
    return fail("input " + llvm::Twine(i) + " is missing");
  const Binding &b = in(i);
  if (!b.isConst())
    return b.value;
  auto p = im.paramFor(b);
  if (!p)
    return fail(llvm::toString(p.takeError()));
  return *p;
}

llvm::Expected<Operand> NodeCtx::binaryOperand(unsigned i, llvm::ArrayRef<int64_t> other) const {
  const ConstTensor *c = constant(i);
  // A one-element constant of no higher rank than the other side broadcasts to nothing
  // new: it is the number itself.
  if (c && c->numel() == 1 && c->shape.size() <= other.size())
    return Operand::ofScalar(c->kind == ElemKind::F32 ? fromFloat(c->f32[0]) : c->num(0));
  auto v = value(i);
  if (!v)
    return v.takeError();
  return Operand::ofValue(*v);
}

Shape NodeCtx::shape(unsigned i) const {
  const Binding &b = in(i);
  return b.isConst() ? b.constant->shape : type(b.value).shape;
}

const onnx::AttributeProto *NodeCtx::attr(llvm::StringRef name) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

llvm::Expected<int64_t> NodeCtx::getInt(llvm::StringRef name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() == onnx::AttributeProto::INT ||
      (a->type() == onnx::AttributeProto::UNDEFINED && a->has_i()))
    return a->i();
  return fail("attribute '" + name + "' must be an int");
}

llvm::Expected<double> NodeCtx::getFloat(llvm::StringRef name, double dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() == onnx::AttributeProto::FLOAT ||
      (a->type() == onnx::AttributeProto::UNDEFINED && a->has_f()))
    return fromFloat(a->f());
  if (a->type() == onnx::AttributeProto::INT)
    return double(a->i());
  return fail("attribute '" + name + "' must be a float");
}

llvm::Expected<std::string> NodeCtx::getString(llvm::StringRef name, llvm::StringRef dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt.str();
  if (a->type() == onnx::AttributeProto::STRING ||
      (a->type() == onnx::AttributeProto::UNDEFINED && a->has_s()))
    return a->s();
  return fail("attribute '" + name + "' must be a string");
}

llvm::Expected<std::optional<IntList>> NodeCtx::getInts(llvm::StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  if (a->type() == onnx::AttributeProto::INTS || a->type() == onnx::AttributeProto::UNDEFINED)
    return IntList(a->ints().begin(), a->ints().end());
  return fail("attribute '" + name + "' must be a list of ints");
}

llvm::Expected<std::optional<ConstTensor>> NodeCtx::getTensor(llvm::StringRef name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  if (!a->has_t())
    return fail("attribute '" + name + "' must be a tensor");
  static ExternalData none("");
  auto t = decodeTensor(a->t(), external ? *external : none);
  if (!t)
    return fail("attribute '" + name + "': " + llvm::toString(t.takeError()));
  return std::optional<ConstTensor>(std::move(*t));
}

llvm::Error NodeCtx::onlyAttrs(llvm::ArrayRef<llvm::StringRef> known) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (!llvm::is_contained(known, llvm::StringRef(a.name())))
      return fail("attribute '" + printable(a.name()) + "' is not supported");
  return llvm::Error::success();
}

unsigned NodeCtx::numOutputs() const { return unsigned(node.output_size()); }

bool NodeCtx::used(unsigned i) const {
  return i < numOutputs() && !node.output(int(i)).empty() && im.live.contains(node.output(int(i)));
}

llvm::Error NodeCtx::onlyFirstOutputUsed() const {
  for (unsigned i = 1; i < numOutputs(); ++i)
    if (used(i))
      return fail("output " + llvm::Twine(i) + " ('" + printable(node.output(int(i))) +
                  "') is used; only the first output is supported");
  return llvm::Error::success();
}

llvm::Expected<ValueId> NodeCtx::emit(OpKind kind, llvm::ArrayRef<Operand> operands,
                                      llvm::ArrayRef<Attr> attrs, llvm::StringRef suffix) {
  std::string base = numOutputs() ? node.output(0) : std::string("v");
  if (!suffix.empty())
    base += "_" + suffix.str();
  Op op;
  op.kind = kind;
  op.operands.assign(operands.begin(), operands.end());
  for (const Attr &a : attrs)
    op.setAttr(a.name, a.value);
  op.origin = origin;
  std::string name = im.uniqueName(base, /*reservedOk=*/suffix.empty());
  ValueId r = im.addValue(name, TensorType(), ValueKind::Result);
  op.result = r;
  im.graph.values[r].def = int(im.graph.ops.size());
  im.graph.ops.push_back(std::move(op));
  auto type = inferOpType(im.graph, im.graph.ops.back());
  if (!type)
    return fail(llvm::toString(type.takeError()));
  im.graph.values[r].type = *type;
  return r;
}

void NodeCtx::bind(unsigned i, ValueId v) {
  if (i < numOutputs() && !node.output(int(i)).empty())
    im.env[node.output(int(i))] = Binding{v, nullptr, ""};
}

void NodeCtx::bindConst(unsigned i, ConstTensor t, std::string paramName) {
  if (i >= numOutputs() || node.output(int(i)).empty())
    return;
  const std::string &out = node.output(int(i));
  im.env[out] = Binding{-1, std::make_shared<const ConstTensor>(std::move(t)),
                        paramName.empty() ? out : std::move(paramName)};
}

} // namespace sinter::onnximport
