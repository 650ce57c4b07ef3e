//===- ir/Ops.cpp - the op table built from ir/Ops.def ------------------------------===//
#include "ir/Ops.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/ErrorHandling.h"

#include <array>
#include <charconv>
#include <cmath>
#include <limits>

namespace sinter {
namespace {

double parseDefaultNumber(llvm::StringRef text) {
  if (text == "inf")
    return std::numeric_limits<double>::infinity();
  if (text == "-inf")
    return -std::numeric_limits<double>::infinity();
  double value = 0;
  bool bad = text.getAsDouble(value);
  assert(!bad && "malformed default in ir/Ops.def");
  (void)bad;
  return value;
}

/// Parses one schema string of ir/Ops.def. The schema is part of the source, so a malformed
/// one is a bug, caught by assertions and by the op-table test.
std::vector<AttrSpec> parseSchema(llvm::StringRef schema) {
  std::vector<AttrSpec> specs;
  llvm::SmallVector<llvm::StringRef, 8> entries;
  schema.split(entries, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef entry : entries) {
    AttrSpec spec;
    auto [name, rest] = entry.split(':');
    spec.name = name.str();
    size_t cut = rest.find_first_of("=!?");
    llvm::StringRef kind = rest.substr(0, cut);
    llvm::StringRef tail = cut == llvm::StringRef::npos ? "" : rest.substr(cut);
    if (kind.consume_front("enum(") && kind.consume_back(")")) {
      spec.kind = AttrKind::Enum;
      llvm::SmallVector<llvm::StringRef, 4> choices;
      kind.split(choices, '|');
      for (llvm::StringRef c : choices)
        spec.choices.push_back(c.str());
    } else if (kind == "int") {
      spec.kind = AttrKind::Int;
    } else if (kind == "float") {
      spec.kind = AttrKind::Float;
    } else if (kind == "bool") {
      spec.kind = AttrKind::Bool;
    } else if (kind == "ints") {
      spec.kind = AttrKind::Ints;
    } else if (kind == "spatial") {
      spec.kind = AttrKind::Spatial;
    } else {
      llvm_unreachable("unknown attribute kind in ir/Ops.def");
    }
    if (tail == "!") {
      spec.required = true;
    } else if (tail.consume_front("=")) {
      spec.hasDefault = true;
      if (tail.consume_front("@")) {
        spec.defaultFrom = tail.str();
      } else {
        switch (spec.kind) {
        case AttrKind::Int:
        case AttrKind::Spatial:
          spec.defaultValue = int64_t(parseDefaultNumber(tail));
          break;
        case AttrKind::Float:
          spec.defaultValue = parseDefaultNumber(tail);
          break;
        case AttrKind::Bool:
          spec.defaultValue = tail == "true";
          break;
        case AttrKind::Enum:
          spec.defaultValue = tail.str();
          break;
        case AttrKind::Ints:
          llvm_unreachable("list attributes take no default in ir/Ops.def");
        }
      }
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

struct OpTable {
  std::array<OpInfo, kNumOps> rows;
  llvm::StringMap<OpKind> byName;

  OpTable()
      : rows{{
#define OP(Id, Name, Class, MinOperands, MaxOperands, Attrs)                                 \
  OpInfo{OpKind::Id, Name, FusionClass::Class, MinOperands, MaxOperands, parseSchema(Attrs)},
#include "ir/Ops.def"
        }} {
    for (const OpInfo &row : rows)
      byName[row.name] = row.kind;
  }
};

const OpTable &table() {
  static const OpTable t;
  return t;
}

} // namespace

const AttrSpec *OpInfo::findAttr(llvm::StringRef attrName) const {
  int i = attrIndex(attrName);
  return i < 0 ? nullptr : &attrs[i];
}

int OpInfo::attrIndex(llvm::StringRef attrName) const {
  for (size_t i = 0; i < attrs.size(); ++i)
    if (attrs[i].name == attrName)
      return int(i);
  return -1;
}

const OpInfo &opInfo(OpKind kind) { return table().rows[unsigned(kind)]; }

std::optional<OpKind> lookupOp(llvm::StringRef name) {
  auto it = table().byName.find(name);
  if (it == table().byName.end())
    return std::nullopt;
  return it->second;
}

bool isUnary(OpKind kind) {
  switch (kind) {
#define OP(Id, ...)                                                                          \
  case OpKind::Id:                                                                           \
    return false;
#define UNARY(Id, ...)                                                                       \
  case OpKind::Id:                                                                           \
    return true;
#include "ir/Ops.def"
  }
  llvm_unreachable("unknown op");
}

bool isBinary(OpKind kind) {
  switch (kind) {
#define OP(Id, ...)                                                                          \
  case OpKind::Id:                                                                           \
    return false;
#define BINARY(Id, ...)                                                                      \
  case OpKind::Id:                                                                           \
    return true;
#include "ir/Ops.def"
  }
  llvm_unreachable("unknown op");
}

double evalUnary(OpKind kind, double x, double p0, double p1) {
  (void)p0;
  (void)p1;
  switch (kind) {
#define OP(Id, ...)                                                                          \
  case OpKind::Id:                                                                           \
    break;
#define UNARY(Id, Name, Attrs, Cpu, Device)                                                  \
  case OpKind::Id:                                                                           \
    return Cpu;
#include "ir/Ops.def"
  }
  llvm_unreachable("evalUnary on a non-unary op");
}

llvm::StringRef unaryDeviceExpr(OpKind kind) {
  switch (kind) {
#define OP(Id, ...)                                                                          \
  case OpKind::Id:                                                                           \
    break;
#define UNARY(Id, Name, Attrs, Cpu, Device)                                                  \
  case OpKind::Id:                                                                           \
    return Device;
#include "ir/Ops.def"
  }
  llvm_unreachable("unaryDeviceExpr on a non-unary op");
}

double evalBinary(OpKind kind, double a, double b) {
  switch (kind) {
#define OP(Id, ...)                                                                          \
  case OpKind::Id:                                                                           \
    break;
#define BINARY(Id, Name, Cpu, Device)                                                        \
  case OpKind::Id:                                                                           \
    return Cpu;
#include "ir/Ops.def"
  }
  llvm_unreachable("evalBinary on a non-binary op");
}

llvm::StringRef binaryDeviceExpr(OpKind kind) {
  switch (kind) {
#define OP(Id, ...)                                                                          \
  case OpKind::Id:                                                                           \
    break;
#define BINARY(Id, Name, Cpu, Device)                                                        \
  case OpKind::Id:                                                                           \
    return Device;
#include "ir/Ops.def"
  }
  llvm_unreachable("binaryDeviceExpr on a non-binary op");
}

std::string formatDouble(double v) {
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  // Keep a float recognisable as one: "1" would read back as an INT.
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

std::string attrValueStr(const AttrValue &value) {
  if (auto *i = std::get_if<int64_t>(&value))
    return std::to_string(*i);
  if (auto *d = std::get_if<double>(&value))
    return formatDouble(*d);
  if (auto *b = std::get_if<bool>(&value))
    return *b ? "true" : "false";
  if (auto *s = std::get_if<std::string>(&value))
    return "\"" + *s + "\"";
  const IntList &list = std::get<IntList>(value);
  std::string s = "[";
  for (size_t i = 0; i < list.size(); ++i)
    s += (i ? ", " : "") + std::to_string(list[i]);
  return s + "]";
}

} // namespace sinter
