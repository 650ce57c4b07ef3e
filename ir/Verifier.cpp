//===- ir/Verifier.cpp - graph verification and shape inference --------------------===//
//
// verifyGraph checks a graph's SSA structure, then infers every op's result type in order.
// inferOpType first runs the checks that follow from the op table alone (operand counts,
// which operands may be numbers, attribute names, kinds, enum values and required ones,
// operand dtypes), then the op's own rule, computed exactly as PyTorch computes the shape of
// the function IR.md names for it. Elementwise ops, reductions, softmax and views are
// inferred here; the ops with spatial dims, the norms and the GEMM-like anchors live in
// ir/InferSpatial.cpp. Every message starts with the op's name and says what was expected.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Verifier.h"

#include "ir/InferCommon.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <cassert>

namespace sinter {
namespace infer {

DType Ctx::dtype() const {
  for (const Operand &o : op.operands)
    if (!o.isScalar())
      return graph.type(o.value).dtype;
  llvm_unreachable("the generic checks require one value operand");
}

std::optional<Shape> broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right; a missing dim acts as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t floorDiv(int64_t a, int64_t b) {
  assert(b > 0 && "floorDiv by a non-positive divisor");
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

llvm::Expected<int64_t> wrapDim(const Ctx &c, int64_t dim, unsigned rank, llvm::StringRef what) {
  // PyTorch lets a scalar be indexed as if it had one dim.
  int64_t r = rank == 0 ? 1 : int64_t(rank);
  if (dim < -r || dim >= r)
    return c.fail(what + " " + llvm::Twine(dim) + " out of range for rank " + llvm::Twine(rank));
  return dim < 0 ? dim + r : dim;
}

llvm::Expected<IntList> spatialAttr(const Ctx &c, llvm::StringRef name, unsigned nd, int64_t min) {
  // The generic checks made sure the written value is an int or a list of ints.
  if (const AttrValue *v = c.op.findAttr(name))
    if (const IntList *list = std::get_if<IntList>(v))
      if (list->size() != 1 && list->size() != nd)
        return c.fail(name + ": expected " +
                      (nd == 1 ? llvm::Twine("1 value") : "1 or " + llvm::Twine(nd) + " values") +
                      ", got " + llvm::Twine(list->size()));
  IntList values = c.op.getSpatial(name, nd);
  for (int64_t v : values)
    if (v < min)
      return c.fail(name + " must be >= " + llvm::Twine(min) + ", got " + llvm::Twine(v));
  return values;
}

llvm::Error expectShape(const Ctx &c, unsigned i, llvm::StringRef what,
                        llvm::ArrayRef<int64_t> expected) {
  llvm::ArrayRef<int64_t> got = c.type(i).shape;
  if (got == expected)
    return llvm::Error::success();
  return c.fail("expected " + what + " of shape " + shapeStr(expected) + ", got " + shapeStr(got));
}

} // namespace infer

namespace {

using namespace infer;

/// Norms take their optional operands (gamma and beta) together or not at all.
bool optionalOperandsAllOrNone(OpKind kind) {
  return kind == OpKind::GroupNorm || kind == OpKind::LayerNorm || kind == OpKind::InstanceNorm ||
         kind == OpKind::BatchNorm;
}

/// Operand counts, numbers only where the op takes them, one dtype for all value operands.
llvm::Error checkOperands(const Ctx &c) {
  const OpInfo &row = c.op.info();
  unsigned n = c.numOperands();
  if (optionalOperandsAllOrNone(c.op.kind)) {
    if (n != row.minOperands && n != row.maxOperands)
      return c.fail("expected " + llvm::Twine(row.minOperands) + " or " +
                    llvm::Twine(row.maxOperands) +
                    " operands (gamma and beta come together), got " + llvm::Twine(n));
  } else if (n < row.minOperands || n > row.maxOperands) {
    std::string counts = std::to_string(row.minOperands);
    if (row.maxOperands != row.minOperands)
      counts += " or " + std::to_string(row.maxOperands);
    return c.fail("expected " + counts + (row.maxOperands == 1 ? " operand" : " operands") +
                  ", got " + llvm::Twine(n));
  }
  bool binary = isBinary(c.op.kind);
  unsigned numbers = 0;
  for (unsigned i = 0; i < n; ++i) {
    const Operand &o = c.op.operands[i];
    if (!o.isScalar())
      continue;
    if (!binary)
      return c.fail("operand " + llvm::Twine(i) + " must be a tensor, got the number " +
                    formatDouble(o.scalar));
    ++numbers;
  }
  if (numbers == n)
    return c.fail("expected at least one tensor operand, got only numbers");
  std::optional<DType> first;
  for (const Operand &o : c.op.operands) {
    if (o.isScalar())
      continue;
    DType d = c.graph.type(o.value).dtype;
    if (first && *first != d)
      return c.fail("operand dtypes " + dtypeName(*first) + " and " + dtypeName(d) + " differ");
    first = d;
  }
  return llvm::Error::success();
}

/// Each written attribute is in the schema and of its kind; required ones are present.
llvm::Error checkAttrs(const Ctx &c) {
  const OpInfo &row = c.op.info();
  llvm::StringSet<> seen;
  for (const Attr &a : c.op.attrs) {
    const AttrSpec *spec = row.findAttr(a.name);
    if (!spec)
      return c.fail("unknown attribute '" + a.name + "'");
    if (!seen.insert(a.name).second)
      return c.fail("attribute '" + a.name + "' given twice");
    const AttrValue &v = a.value;
    llvm::StringRef expected;
    switch (spec->kind) {
    case AttrKind::Int:
      if (!std::holds_alternative<int64_t>(v))
        expected = "an int";
      break;
    case AttrKind::Float:
      if (!std::holds_alternative<double>(v) && !std::holds_alternative<int64_t>(v))
        expected = "a number";
      break;
    case AttrKind::Bool:
      if (!std::holds_alternative<bool>(v))
        expected = "a bool";
      break;
    case AttrKind::Ints:
      if (!std::holds_alternative<IntList>(v) && !std::holds_alternative<int64_t>(v))
        expected = "a list of ints";
      break;
    case AttrKind::Spatial:
      if (!std::holds_alternative<IntList>(v) && !std::holds_alternative<int64_t>(v))
        expected = "an int or a list of ints";
      break;
    case AttrKind::Enum: {
      const std::string *s = std::get_if<std::string>(&v);
      if (!s || llvm::find(spec->choices, *s) == spec->choices.end()) {
        std::string choices;
        for (size_t i = 0; i < spec->choices.size(); ++i)
          choices += (i == 0                          ? ""
                      : i + 1 == spec->choices.size() ? " or "
                                                      : ", ") +
                     ("\"" + spec->choices[i] + "\"");
        return c.fail("attribute '" + a.name + "' must be one of " + choices + ", got " +
                      attrValueStr(v));
      }
      break;
    }
    }
    if (!expected.empty())
      return c.fail("attribute '" + a.name + "' must be " + expected + ", got " + attrValueStr(v));
  }
  for (const AttrSpec &spec : row.attrs)
    if (spec.required && !c.op.hasAttr(spec.name))
      return c.fail("missing required attribute '" + spec.name + "'");
  return llvm::Error::success();
}

llvm::Expected<TensorType> inferUnary(const Ctx &c) {
  // clamp's bounds default to -inf and inf, but torch.clamp wants at least one of them.
  if (c.op.kind == OpKind::Clamp && !c.op.hasAttr("min") && !c.op.hasAttr("max"))
    return c.fail("expected at least one of 'min' and 'max'");
  return c.type(0);
}

llvm::Expected<TensorType> inferBinary(const Ctx &c) {
  // A number operand is an f32[] for broadcasting and never changes the dtype.
  Shape a, b;
  if (!c.op.operands[0].isScalar())
    a = c.type(0).shape;
  if (!c.op.operands[1].isScalar())
    b = c.type(1).shape;
  std::optional<Shape> out = broadcastShapes(a, b);
  if (!out)
    return c.fail("shapes " + shapeStr(a) + " and " + shapeStr(b) + " do not broadcast");
  return TensorType(c.dtype(), *out);
}

llvm::Expected<TensorType> inferReduction(const Ctx &c) {
  const TensorType &x = c.type(0);
  IntList dims = c.op.getInts("dims");
  if (dims.empty())
    return c.fail("dims must not be empty");
  llvm::SmallVector<bool, 6> reduced(std::max(x.rank(), 1u), false);
  for (int64_t d : dims) {
    llvm::Expected<int64_t> w = wrapDim(c, d, x.rank(), "dim");
    if (!w)
      return w.takeError();
    if (reduced[*w])
      return c.fail("dim " + llvm::Twine(*w) + " appears more than once in dims");
    reduced[*w] = true;
  }
  bool keepdim = c.op.getBool("keepdim");
  Shape out;
  for (unsigned i = 0; i < x.rank(); ++i) {
    if (!reduced[i])
      out.push_back(x.shape[i]);
    else if (keepdim)
      out.push_back(1);
  }
  return TensorType(x.dtype, out);
}

llvm::Expected<TensorType> inferSoftmax(const Ctx &c) {
  const TensorType &x = c.type(0);
  if (llvm::Expected<int64_t> w = wrapDim(c, c.op.getInt("dim"), x.rank(), "dim"); !w)
    return w.takeError();
  return x;
}

llvm::Expected<TensorType> inferReshape(const Ctx &c) {
  const TensorType &x = c.type(0);
  IntList shape = c.op.getInts("shape");
  int inferred = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0)
        return c.fail("more than one -1 in shape " + shapeStr(shape));
      inferred = int(i);
    } else if (shape[i] < 0) {
      return c.fail("invalid size " + llvm::Twine(shape[i]) + " in shape " + shapeStr(shape));
    } else {
      known *= shape[i];
    }
  }
  int64_t numel = x.numel();
  // As torch.reshape: the -1 takes whatever makes the element counts agree exactly.
  bool fits = inferred >= 0 ? known != 0 && numel % known == 0 : known == numel;
  if (!fits)
    return c.fail("shape " + shapeStr(shape) + " is invalid for input of " + llvm::Twine(numel) +
                  " elements");
  Shape out(shape.begin(), shape.end());
  if (inferred >= 0)
    out[inferred] = numel / known;
  return TensorType(x.dtype, out);
}

llvm::Expected<TensorType> inferFlatten(const Ctx &c) {
  const TensorType &x = c.type(0);
  llvm::Expected<int64_t> start = wrapDim(c, c.op.getInt("start_dim"), x.rank(), "start_dim");
  if (!start)
    return start.takeError();
  llvm::Expected<int64_t> end = wrapDim(c, c.op.getInt("end_dim"), x.rank(), "end_dim");
  if (!end)
    return end.takeError();
  if (*start > *end)
    return c.fail("start_dim " + llvm::Twine(c.op.getInt("start_dim")) + " comes after end_dim " +
                  llvm::Twine(c.op.getInt("end_dim")));
  // torch.flatten of a scalar gives a one-element vector.
  if (x.rank() == 0)
    return TensorType(x.dtype, {1});
  Shape out(x.shape.begin(), x.shape.begin() + *start);
  int64_t merged = 1;
  for (int64_t i = *start; i <= *end; ++i)
    merged *= x.shape[i];
  out.push_back(merged);
  out.append(x.shape.begin() + *end + 1, x.shape.end());
  return TensorType(x.dtype, out);
}

llvm::Expected<TensorType> inferDropout(const Ctx &c) {
  double p = c.op.getFloat("p");
  if (!(p >= 0 && p <= 1))
    return c.fail("p must be in [0, 1], got " + formatDouble(p));
  return c.type(0);
}

} // namespace

llvm::Expected<TensorType> inferOpType(const Graph &graph, const Op &op) {
  Ctx c{graph, op};
  assert(llvm::all_of(op.operands,
                      [&](const Operand &o) {
                        return o.isScalar() || size_t(o.value) < graph.values.size();
                      }) &&
         "operand out of range (verifyGraph checks this)");
  if (llvm::Error e = checkOperands(c))
    return e;
  if (llvm::Error e = checkAttrs(c))
    return e;
  switch (op.kind) {
  case OpKind::Conv:
    return inferConv(c);
  case OpKind::ConvTranspose:
    return inferConvTranspose(c);
  case OpKind::Linear:
    return inferLinear(c);
  case OpKind::Matmul:
    return inferMatmul(c);
#define OP(Id, ...)
#define UNARY(Id, ...) case OpKind::Id:
#include "ir/Ops.def"
    return inferUnary(c);
#define OP(Id, ...)
#define BINARY(Id, ...) case OpKind::Id:
#include "ir/Ops.def"
    return inferBinary(c);
  case OpKind::Sum:
  case OpKind::Mean:
  case OpKind::Max:
  case OpKind::Min:
  case OpKind::Logsumexp:
    return inferReduction(c);
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    return inferSoftmax(c);
  case OpKind::GroupNorm:
    return inferGroupNorm(c);
  case OpKind::LayerNorm:
    return inferLayerNorm(c);
  case OpKind::BatchNorm:
    return inferBatchNorm(c);
  case OpKind::InstanceNorm:
    return inferInstanceNorm(c);
  case OpKind::MaxPool:
  case OpKind::AvgPool:
    return inferPool(c);
  case OpKind::Reshape:
    return inferReshape(c);
  case OpKind::Flatten:
    return inferFlatten(c);
  case OpKind::Dropout:
    return inferDropout(c);
  }
  llvm_unreachable("unknown op kind");
}

namespace {

/// The graph's arguments, ops and results form an SSA program: every value is defined
/// exactly once (as an argument or by one op), used only after its definition, and named
/// uniquely; argument shapes have no empty or negative dims.
llvm::Error checkStructure(const Graph &g) {
  size_t numValues = g.values.size();
  llvm::StringSet<> names;
  for (const Value &v : g.values) {
    if (v.name.empty())
      return makeError("graph " + g.name + ": a value has no name");
    if (!names.insert(v.name).second)
      return makeError("%" + v.name + ": value name defined more than once");
  }
  // defined[v]: v's definition has been seen while walking args then ops in order.
  std::vector<bool> defined(numValues, false);
  for (ValueId a : g.args) {
    if (a < 0 || size_t(a) >= numValues)
      return makeError("graph " + g.name + ": argument refers to no value (id " + llvm::Twine(a) +
                       ")");
    const Value &v = g.values[a];
    if (!v.isArgument() || v.def != -1 || defined[a])
      return makeError("%" + v.name + ": listed as an argument but defined otherwise");
    for (size_t d = 0; d < v.type.rank(); ++d)
      if (v.type.shape[d] < 1)
        return makeError("%" + v.name + ": dim " + llvm::Twine(d) + " of " + v.type.str() +
                         " must be >= 1");
    defined[a] = true;
  }
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op &op = g.ops[i];
    if (op.result < 0 || size_t(op.result) >= numValues)
      return makeError("graph " + g.name + ": op " + llvm::Twine(i) + " (" + op.name() +
                       ") has no result value");
    std::string loc = g.locStr(op);
    for (size_t k = 0; k < op.operands.size(); ++k) {
      ValueId v = op.operands[k].value;
      if (op.operands[k].isScalar())
        continue;
      if (size_t(v) >= numValues)
        return makeError(loc + ": " + op.name() + ": operand " + llvm::Twine(k) +
                         " refers to no value (id " + llvm::Twine(v) + ")");
      if (!defined[v])
        return makeError(loc + ": " + op.name() + ": operand %" + g.values[v].name +
                         " is used before its definition");
    }
    const Value &r = g.values[op.result];
    if (r.isArgument() || r.def != int(i) || defined[op.result])
      return makeError(loc + ": " + op.name() + ": result %" + r.name +
                       " is defined more than once");
    defined[op.result] = true;
  }
  for (size_t v = 0; v < numValues; ++v)
    if (!defined[v])
      return makeError("%" + g.values[v].name + ": value is neither an argument nor an op result");
  if (g.results.empty())
    return makeError("graph " + g.name + ": returns no value");
  for (ValueId r : g.results)
    if (r < 0 || size_t(r) >= numValues)
      return makeError("graph " + g.name + ": returns a value that does not exist (id " +
                       llvm::Twine(r) + ")");
  return llvm::Error::success();
}

} // namespace

llvm::Error verifyGraph(Graph &graph) {
  if (llvm::Error e = checkStructure(graph))
    return e;
  for (const Op &op : graph.ops) {
    llvm::Expected<TensorType> type = inferOpType(graph, op);
    if (!type)
      return withContext(type.takeError(), graph.locStr(op));
    graph.values[op.result].type = std::move(*type);
  }
  return llvm::Error::success();
}

} // namespace sinter
