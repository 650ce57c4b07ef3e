//===- ir/Graph.cpp - graphs, values and ops -----------------------------------------===//
#include "ir/Graph.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>

namespace sinter {

const AttrValue *Op::findAttr(llvm::StringRef attrName) const {
  for (const Attr &a : attrs)
    if (a.name == attrName)
      return &a.value;
  return nullptr;
}

void Op::setAttr(llvm::StringRef attrName, AttrValue value) {
  const OpInfo &row = info();
  int index = row.attrIndex(attrName);
  assert(index >= 0 && "setAttr: attribute not in the op's schema");
  for (Attr &a : attrs)
    if (a.name == attrName) {
      a.value = std::move(value);
      return;
    }
  auto pos = attrs.begin();
  while (pos != attrs.end() && row.attrIndex(pos->name) < index)
    ++pos;
  attrs.insert(pos, Attr{attrName.str(), std::move(value)});
}

namespace {

/// The written value of `name`, else its default (following `=@other`).
const AttrValue &resolve(const Op &op, llvm::StringRef name) {
  if (const AttrValue *v = op.findAttr(name))
    return *v;
  const AttrSpec *spec = op.info().findAttr(name);
  assert(spec && "attribute not in the op's schema");
  assert(spec->hasDefault && "required attribute missing (the verifier checks this)");
  if (!spec->defaultFrom.empty())
    return resolve(op, spec->defaultFrom);
  return spec->defaultValue;
}

} // namespace

int64_t Op::getInt(llvm::StringRef n) const { return std::get<int64_t>(resolve(*this, n)); }

double Op::getFloat(llvm::StringRef n) const {
  const AttrValue &v = resolve(*this, n);
  if (auto *i = std::get_if<int64_t>(&v))
    return double(*i);
  return std::get<double>(v);
}

bool Op::getBool(llvm::StringRef n) const { return std::get<bool>(resolve(*this, n)); }

std::string Op::getEnum(llvm::StringRef n) const {
  return std::get<std::string>(resolve(*this, n));
}

IntList Op::getInts(llvm::StringRef n) const {
  const AttrValue &v = resolve(*this, n);
  if (auto *i = std::get_if<int64_t>(&v))
    return {*i};
  return std::get<IntList>(v);
}

IntList Op::getSpatial(llvm::StringRef n, unsigned spatialDims) const {
  const AttrValue &v = resolve(*this, n);
  if (auto *i = std::get_if<int64_t>(&v))
    return IntList(spatialDims, *i);
  const IntList &list = std::get<IntList>(v);
  if (list.size() == 1)
    return IntList(spatialDims, list[0]);
  assert(list.size() == spatialDims && "spatial attribute length (the verifier checks this)");
  return list;
}

llvm::SmallVector<double, 2> Op::unaryParams() const {
  llvm::SmallVector<double, 2> params;
  for (const AttrSpec &spec : info().attrs) {
    switch (spec.kind) {
    case AttrKind::Float:
      params.push_back(getFloat(spec.name));
      break;
    case AttrKind::Int:
      params.push_back(double(getInt(spec.name)));
      break;
    case AttrKind::Bool:
      params.push_back(getBool(spec.name) ? 1.0 : 0.0);
      break;
    case AttrKind::Enum: {
      std::string v = getEnum(spec.name);
      double index = 0;
      for (size_t i = 0; i < spec.choices.size(); ++i)
        if (spec.choices[i] == v)
          index = double(i);
      params.push_back(index);
      break;
    }
    case AttrKind::Ints:
    case AttrKind::Spatial:
      break;
    }
  }
  while (params.size() < 2)
    params.push_back(0.0);
  return params;
}

ValueId Graph::lookup(llvm::StringRef valueName) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == valueName)
      return ValueId(i);
  return -1;
}

std::string Graph::locStr(const Op &op) const {
  if (op.loc.valid())
    return (file.empty() ? std::string("<input>") : file) + ":" + std::to_string(op.loc.line) +
           ":" + std::to_string(op.loc.col);
  if (!op.origin.empty())
    return (file.empty() ? std::string() : file + ": ") + op.origin;
  return "%" + values[op.result].name;
}

std::string joinOrigins(const Graph &graph, llvm::ArrayRef<int> ops) {
  llvm::SmallVector<int, 8> sorted(ops.begin(), ops.end());
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  llvm::SmallVector<llvm::StringRef, 8> seen;
  for (int i : sorted) {
    const std::string &o = graph.ops[i].origin;
    if (o.empty() || std::find(seen.begin(), seen.end(), o) != seen.end())
      continue;
    seen.push_back(o);
    out += (out.empty() ? "" : " + ") + o;
  }
  return out;
}

bool operator==(const Graph &a, const Graph &b) {
  if (a.name != b.name || a.args != b.args || a.results != b.results ||
      a.values.size() != b.values.size() || a.ops.size() != b.ops.size())
    return false;
  for (size_t i = 0; i < a.values.size(); ++i) {
    const Value &x = a.values[i], &y = b.values[i];
    if (x.name != y.name || x.type != y.type || x.kind != y.kind || x.def != y.def)
      return false;
  }
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const Op &x = a.ops[i], &y = b.ops[i];
    if (x.kind != y.kind || x.operands != y.operands || x.attrs != y.attrs ||
        x.result != y.result)
      return false;
  }
  return true;
}

ValueUses::ValueUses(const Graph &graph)
    : uses(graph.values.size(), 0), returned(graph.values.size(), false) {
  for (const Op &op : graph.ops)
    for (const Operand &o : op.operands)
      if (!o.isScalar())
        ++uses[o.value];
  for (ValueId r : graph.results)
    returned[r] = true;
}

} // namespace sinter
