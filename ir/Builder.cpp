//===- ir/Builder.cpp - the C++ API for building graphs ----------------------------===//
//
// Each typed method appends one op and stores only the attributes that differ from the op
// table's defaults. Types are inferred eagerly where possible (Val::type), but the verdict
// on the graph is build()'s, which names the values that the user left unnamed and then runs
// the same verifyGraph as the parser.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Builder.h"

#include "ir/Error.h"
#include "ir/Verifier.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cassert>

namespace sinter {

Val Val::name(llvm::StringRef newName) const {
  assert(owner && "naming a default-constructed Val");
  owner->graph.values[valueId].name = newName.str();
  owner->named[valueId] = true;
  return *this;
}

std::optional<TensorType> Val::type() const {
  assert(owner && "asking the type of a default-constructed Val");
  if (!owner->typed[valueId])
    return std::nullopt;
  return owner->graph.values[valueId].type;
}

GraphBuilder::GraphBuilder(llvm::StringRef graphName) { graph.name = graphName.str(); }

void GraphBuilder::check(Val v) const {
  assert(v.owner == this && "a Val of another builder, or a default-constructed one");
  (void)v;
}

Val GraphBuilder::addArgument(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, DType dtype,
                              ValueKind kind) {
  ValueId id = ValueId(graph.values.size());
  graph.values.push_back(Value{name.str(), TensorType(dtype, shape), kind, -1});
  graph.args.push_back(id);
  named.push_back(true);
  // An argument is typed as declared; verifyGraph rejects dims below 1 at build().
  typed.push_back(llvm::all_of(shape, [](int64_t d) { return d >= 1; }));
  return Val(this, id);
}

Val GraphBuilder::input(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, DType dtype) {
  return addArgument(name, shape, dtype, ValueKind::Input);
}

Val GraphBuilder::param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, DType dtype) {
  return addArgument(name, shape, dtype, ValueKind::Param);
}

Op &GraphBuilder::start(OpKind kind, llvm::ArrayRef<ValOrNumber> operands) {
  ValueId result = ValueId(graph.values.size());
  graph.values.push_back(Value{"", TensorType(), ValueKind::Result, int(graph.ops.size())});
  named.push_back(false);
  typed.push_back(false);
  Op op{kind, {}, {}, result, {}};
  for (const ValOrNumber &o : operands) {
    if (o.val) {
      check(*o.val);
      op.operands.push_back(Operand::ofValue(o.val->id()));
    } else {
      op.operands.push_back(Operand::ofScalar(o.number));
    }
  }
  graph.ops.push_back(std::move(op));
  return graph.ops.back();
}

Val GraphBuilder::finish() {
  const Op &op = graph.ops.back();
  bool operandsTyped =
      llvm::all_of(op.operands, [&](const Operand &o) { return o.isScalar() || typed[o.value]; });
  if (operandsTyped) {
    // Errors are dropped here: build() reports the first one, with its location.
    llvm::Expected<TensorType> type = inferOpType(graph, op);
    if (type) {
      graph.values[op.result].type = std::move(*type);
      typed[op.result] = true;
    } else {
      llvm::consumeError(type.takeError());
    }
  }
  return Val(this, op.result);
}

namespace {

/// A spatial attribute as a list, and whether all its entries are equal.
IntList spatialList(const AttrValue &v) {
  if (const int64_t *i = std::get_if<int64_t>(&v))
    return {*i};
  return std::get<IntList>(v);
}

bool uniform(const IntList &l) {
  return llvm::all_of(l, [&](int64_t x) { return x == l.front(); });
}

/// Whether two spatial values mean the same for every rank ({2} and {2, 2} do).
bool sameSpatial(const AttrValue &a, const AttrValue &b) {
  IntList la = spatialList(a), lb = spatialList(b);
  if (la.empty() || lb.empty())
    return la == lb;
  if (uniform(la) && uniform(lb))
    return la.front() == lb.front();
  return la == lb;
}

} // namespace

void GraphBuilder::setUnlessDefault(Op &op, llvm::StringRef name, AttrValue value) {
  const AttrSpec *spec = op.info().findAttr(name);
  assert(spec && "the builder sets only attributes of the op's schema");
  if (spec->hasDefault) {
    const AttrValue *def = &spec->defaultValue;
    if (!spec->defaultFrom.empty())
      def = op.findAttr(spec->defaultFrom);
    if (def) {
      bool same = spec->kind == AttrKind::Spatial ? sameSpatial(*def, value) : *def == value;
      if (same)
        return;
    }
  }
  op.setAttr(name, std::move(value));
}

void GraphBuilder::setSpatial(Op &op, llvm::StringRef name, const Spatial &value) {
  if (!value.given())
    return;
  if (value.values.size() == 1)
    setUnlessDefault(op, name, value.values.front());
  else
    setUnlessDefault(op, name, value.values);
}

Val GraphBuilder::conv(Val x, Val w, const ConvOptions &o) {
  Op &op = start(OpKind::Conv, {x, w});
  setSpatial(op, "stride", o.stride);
  setSpatial(op, "padding", o.padding);
  setSpatial(op, "dilation", o.dilation);
  setUnlessDefault(op, "groups", o.groups);
  return finish();
}

Val GraphBuilder::conv(Val x, Val w, Val bias, const ConvOptions &o) {
  Op &op = start(OpKind::Conv, {x, w, bias});
  setSpatial(op, "stride", o.stride);
  setSpatial(op, "padding", o.padding);
  setSpatial(op, "dilation", o.dilation);
  setUnlessDefault(op, "groups", o.groups);
  return finish();
}

Val GraphBuilder::conv_transpose(Val x, Val w, const ConvTransposeOptions &o) {
  Op &op = start(OpKind::ConvTranspose, {x, w});
  setSpatial(op, "stride", o.stride);
  setSpatial(op, "padding", o.padding);
  setSpatial(op, "output_padding", o.output_padding);
  setSpatial(op, "dilation", o.dilation);
  setUnlessDefault(op, "groups", o.groups);
  return finish();
}

Val GraphBuilder::conv_transpose(Val x, Val w, Val bias, const ConvTransposeOptions &o) {
  Op &op = start(OpKind::ConvTranspose, {x, w, bias});
  setSpatial(op, "stride", o.stride);
  setSpatial(op, "padding", o.padding);
  setSpatial(op, "output_padding", o.output_padding);
  setSpatial(op, "dilation", o.dilation);
  setUnlessDefault(op, "groups", o.groups);
  return finish();
}

Val GraphBuilder::linear(Val x, Val w) {
  start(OpKind::Linear, {x, w});
  return finish();
}

Val GraphBuilder::linear(Val x, Val w, Val bias) {
  start(OpKind::Linear, {x, w, bias});
  return finish();
}

Val GraphBuilder::matmul(Val a, Val b) {
  start(OpKind::Matmul, {a, b});
  return finish();
}

Val GraphBuilder::unary(OpKind kind, Val x) {
  start(kind, {x});
  return finish();
}

Val GraphBuilder::relu(Val x) { return unary(OpKind::Relu, x); }
Val GraphBuilder::sigmoid(Val x) { return unary(OpKind::Sigmoid, x); }
Val GraphBuilder::tanh(Val x) { return unary(OpKind::Tanh, x); }
Val GraphBuilder::silu(Val x) { return unary(OpKind::Silu, x); }
Val GraphBuilder::hardswish(Val x) { return unary(OpKind::Hardswish, x); }
Val GraphBuilder::hardsigmoid(Val x) { return unary(OpKind::Hardsigmoid, x); }
Val GraphBuilder::mish(Val x) { return unary(OpKind::Mish, x); }
Val GraphBuilder::exp(Val x) { return unary(OpKind::Exp, x); }
Val GraphBuilder::log(Val x) { return unary(OpKind::Log, x); }
Val GraphBuilder::abs(Val x) { return unary(OpKind::Abs, x); }
Val GraphBuilder::neg(Val x) { return unary(OpKind::Neg, x); }
Val GraphBuilder::sqrt(Val x) { return unary(OpKind::Sqrt, x); }
Val GraphBuilder::rsqrt(Val x) { return unary(OpKind::Rsqrt, x); }
Val GraphBuilder::erf(Val x) { return unary(OpKind::Erf, x); }

Val GraphBuilder::gelu(Val x, const GeluOptions &o) {
  Op &op = start(OpKind::Gelu, {x});
  setUnlessDefault(op, "approximate",
                   std::string(o.approximate == GeluApproximate::Tanh ? "tanh" : "none"));
  return finish();
}

Val GraphBuilder::hardtanh(Val x, const HardtanhOptions &o) {
  Op &op = start(OpKind::Hardtanh, {x});
  setUnlessDefault(op, "min_val", o.min_val);
  setUnlessDefault(op, "max_val", o.max_val);
  return finish();
}

Val GraphBuilder::leaky_relu(Val x, const LeakyReluOptions &o) {
  Op &op = start(OpKind::LeakyRelu, {x});
  setUnlessDefault(op, "negative_slope", o.negative_slope);
  return finish();
}

Val GraphBuilder::softplus(Val x, const SoftplusOptions &o) {
  Op &op = start(OpKind::Softplus, {x});
  setUnlessDefault(op, "beta", o.beta);
  setUnlessDefault(op, "threshold", o.threshold);
  return finish();
}

Val GraphBuilder::elu(Val x, const EluOptions &o) {
  Op &op = start(OpKind::Elu, {x});
  setUnlessDefault(op, "alpha", o.alpha);
  return finish();
}

Val GraphBuilder::clamp(Val x, const ClampOptions &o) {
  Op &op = start(OpKind::Clamp, {x});
  // A bound given is stored even when infinite: torch.clamp needs at least one written.
  if (o.min)
    op.setAttr("min", *o.min);
  if (o.max)
    op.setAttr("max", *o.max);
  return finish();
}

Val GraphBuilder::binary(OpKind kind, ValOrNumber a, ValOrNumber b) {
  start(kind, {a, b});
  return finish();
}

Val GraphBuilder::add(ValOrNumber a, ValOrNumber b) { return binary(OpKind::Add, a, b); }
Val GraphBuilder::sub(ValOrNumber a, ValOrNumber b) { return binary(OpKind::Sub, a, b); }
Val GraphBuilder::mul(ValOrNumber a, ValOrNumber b) { return binary(OpKind::Mul, a, b); }
Val GraphBuilder::div(ValOrNumber a, ValOrNumber b) { return binary(OpKind::Div, a, b); }
Val GraphBuilder::maximum(ValOrNumber a, ValOrNumber b) { return binary(OpKind::Maximum, a, b); }
Val GraphBuilder::minimum(ValOrNumber a, ValOrNumber b) { return binary(OpKind::Minimum, a, b); }

Val GraphBuilder::reduce(OpKind kind, Val x, const ReduceOptions &o) {
  Op &op = start(kind, {x});
  // Empty dims means "not given": verifyGraph reports the missing required attribute.
  if (!o.dims.empty())
    op.setAttr("dims", o.dims);
  setUnlessDefault(op, "keepdim", o.keepdim);
  return finish();
}

Val GraphBuilder::sum(Val x, const ReduceOptions &o) { return reduce(OpKind::Sum, x, o); }
Val GraphBuilder::mean(Val x, const ReduceOptions &o) { return reduce(OpKind::Mean, x, o); }
Val GraphBuilder::max(Val x, const ReduceOptions &o) { return reduce(OpKind::Max, x, o); }
Val GraphBuilder::min(Val x, const ReduceOptions &o) { return reduce(OpKind::Min, x, o); }
Val GraphBuilder::logsumexp(Val x, const ReduceOptions &o) {
  return reduce(OpKind::Logsumexp, x, o);
}

Val GraphBuilder::softmax(Val x, int64_t dim) {
  Op &op = start(OpKind::Softmax, {x});
  op.setAttr("dim", dim);
  return finish();
}

Val GraphBuilder::log_softmax(Val x, int64_t dim) {
  Op &op = start(OpKind::LogSoftmax, {x});
  op.setAttr("dim", dim);
  return finish();
}

Val GraphBuilder::group_norm(Val x, const GroupNormOptions &o) {
  Op &op = start(OpKind::GroupNorm, {x});
  if (o.groups)
    op.setAttr("groups", *o.groups);
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::group_norm(Val x, Val gamma, Val beta, const GroupNormOptions &o) {
  Op &op = start(OpKind::GroupNorm, {x, gamma, beta});
  if (o.groups)
    op.setAttr("groups", *o.groups);
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::layer_norm(Val x, const LayerNormOptions &o) {
  Op &op = start(OpKind::LayerNorm, {x});
  if (!o.normalized_shape.empty())
    op.setAttr("normalized_shape", o.normalized_shape);
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::layer_norm(Val x, Val gamma, Val beta, const LayerNormOptions &o) {
  Op &op = start(OpKind::LayerNorm, {x, gamma, beta});
  if (!o.normalized_shape.empty())
    op.setAttr("normalized_shape", o.normalized_shape);
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::batch_norm(Val x, Val mean, Val var, const NormOptions &o) {
  Op &op = start(OpKind::BatchNorm, {x, mean, var});
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::batch_norm(Val x, Val mean, Val var, Val gamma, Val beta, const NormOptions &o) {
  Op &op = start(OpKind::BatchNorm, {x, mean, var, gamma, beta});
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::instance_norm(Val x, const NormOptions &o) {
  Op &op = start(OpKind::InstanceNorm, {x});
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::instance_norm(Val x, Val gamma, Val beta, const NormOptions &o) {
  Op &op = start(OpKind::InstanceNorm, {x, gamma, beta});
  setUnlessDefault(op, "eps", o.eps);
  return finish();
}

Val GraphBuilder::max_pool(Val x, const MaxPoolOptions &o) {
  Op &op = start(OpKind::MaxPool, {x});
  // kernel_size first: stride's default refers to it.
  setSpatial(op, "kernel_size", o.kernel_size);
  setSpatial(op, "stride", o.stride);
  setSpatial(op, "padding", o.padding);
  setSpatial(op, "dilation", o.dilation);
  setUnlessDefault(op, "ceil_mode", o.ceil_mode);
  return finish();
}

Val GraphBuilder::avg_pool(Val x, const AvgPoolOptions &o) {
  Op &op = start(OpKind::AvgPool, {x});
  setSpatial(op, "kernel_size", o.kernel_size);
  setSpatial(op, "stride", o.stride);
  setSpatial(op, "padding", o.padding);
  setUnlessDefault(op, "ceil_mode", o.ceil_mode);
  setUnlessDefault(op, "count_include_pad", o.count_include_pad);
  return finish();
}

Val GraphBuilder::reshape(Val x, llvm::ArrayRef<int64_t> shape) {
  Op &op = start(OpKind::Reshape, {x});
  op.setAttr("shape", IntList(shape.begin(), shape.end()));
  return finish();
}

Val GraphBuilder::flatten(Val x, const FlattenOptions &o) {
  Op &op = start(OpKind::Flatten, {x});
  setUnlessDefault(op, "start_dim", o.start_dim);
  setUnlessDefault(op, "end_dim", o.end_dim);
  return finish();
}

Val GraphBuilder::dropout(Val x, double p) {
  Op &op = start(OpKind::Dropout, {x});
  setUnlessDefault(op, "p", p);
  return finish();
}

Val GraphBuilder::op(OpKind kind, llvm::ArrayRef<ValOrNumber> operands,
                     llvm::ArrayRef<Attr> attrs) {
  Op &op = start(kind, operands);
  // Stored as given (defaults too), in schema order; names outside the schema are kept
  // for verifyGraph to report.
  for (const Attr &a : attrs) {
    if (op.info().findAttr(a.name) && !op.hasAttr(a.name))
      op.setAttr(a.name, a.value);
    else
      op.attrs.push_back(a);
  }
  return finish();
}

void GraphBuilder::output(Val v) {
  check(v);
  graph.results.push_back(v.id());
}

namespace {

bool isIdent(llvm::StringRef s) {
  if (s.empty() || !(llvm::isAlpha(s[0]) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char ch) { return llvm::isAlnum(ch) || ch == '_'; });
}

bool isValueName(llvm::StringRef s) {
  return !s.empty() &&
         llvm::all_of(s, [](char ch) { return llvm::isAlnum(ch) || ch == '_' || ch == '.'; });
}

} // namespace

llvm::Expected<Graph> GraphBuilder::build() const {
  Graph g = graph;
  if (!isIdent(g.name))
    return makeError("invalid graph name '" + g.name + "'");
  llvm::StringSet<> taken;
  for (size_t i = 0; i < g.values.size(); ++i) {
    if (!named[i])
      continue;
    const std::string &name = g.values[i].name;
    if (!isValueName(name))
      return makeError("invalid value name '" + name + "' (expected [A-Za-z0-9_.]+)");
    if (!taken.insert(name).second)
      return makeError("%" + llvm::Twine(name) + ": value name defined more than once");
  }
  unsigned counter = 0;
  for (size_t i = 0; i < g.values.size(); ++i) {
    if (named[i])
      continue;
    std::string name;
    do
      name = (llvm::Twine("t") + llvm::Twine(counter++)).str();
    while (taken.contains(name));
    taken.insert(name);
    g.values[i].name = name;
  }
  if (g.results.empty())
    return makeError("graph " + g.name + ": no outputs (call GraphBuilder::output)");
  if (llvm::Error e = verifyGraph(g))
    return e;
  return g;
}

Val operator+(Val a, Val b) { return a.builder()->add(a, b); }
Val operator+(Val a, double b) { return a.builder()->add(a, b); }
Val operator+(double a, Val b) { return b.builder()->add(a, b); }
Val operator-(Val a, Val b) { return a.builder()->sub(a, b); }
Val operator-(Val a, double b) { return a.builder()->sub(a, b); }
Val operator-(double a, Val b) { return b.builder()->sub(a, b); }
Val operator*(Val a, Val b) { return a.builder()->mul(a, b); }
Val operator*(Val a, double b) { return a.builder()->mul(a, b); }
Val operator*(double a, Val b) { return b.builder()->mul(a, b); }
Val operator/(Val a, Val b) { return a.builder()->div(a, b); }
Val operator/(Val a, double b) { return a.builder()->div(a, b); }
Val operator/(double a, Val b) { return b.builder()->div(a, b); }
Val operator-(Val x) { return x.builder()->neg(x); }

} // namespace sinter
