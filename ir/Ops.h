//===- ir/Ops.h - op kinds, attribute values and the op table ----------------------===//
//
// OpKind enumerates ir/Ops.def. OpInfo is the table row for one op: its name, fusion class,
// operand count and attribute schema, parsed once from the .def. Everything that needs to
// know about ops (parser, printer, verifier, builder, reference, codegen) asks here.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace sinter {

enum class OpKind : uint8_t {
#define OP(Id, ...) Id,
#include "ir/Ops.def"
};

/// Number of ops in the catalog.
constexpr unsigned kNumOps = 0
#define OP(...) +1
#include "ir/Ops.def"
    ;

/// How an op takes part in fusion (see compiler/Fusion.cpp).
enum class FusionClass : uint8_t {
  Anchor,      ///< conv, conv_transpose, linear, matmul: a GEMM-like op that owns a group
  Elementwise, ///< unary, one output element per input element
  Broadcast,   ///< binary elementwise with numpy broadcasting
  Reduction,   ///< reduces a set of dims
  Norm,        ///< a normalisation: statistics, then an elementwise apply
  Opaque,      ///< softmax, pools: own kernels, never fused into others
  View,        ///< reshape, flatten, dropout: no arithmetic
};

using IntList = llvm::SmallVector<int64_t, 4>;

/// The value of one attribute. Spatial attributes written as one INT hold an int64_t.
using AttrValue = std::variant<int64_t, double, bool, std::string, IntList>;

enum class AttrKind : uint8_t { Int, Float, Bool, Enum, Ints, Spatial };

/// One entry of an op's attribute schema.
struct AttrSpec {
  std::string name;
  AttrKind kind = AttrKind::Int;
  bool required = false;              ///< `!`: must be written
  bool hasDefault = false;            ///< `=value` or `=@other`
  AttrValue defaultValue;             ///< when hasDefault and defaultFrom is empty
  std::string defaultFrom;            ///< `=@other`: defaults to attribute `other`
  llvm::SmallVector<std::string, 2> choices; ///< enum values
};

/// The table row of one op.
struct OpInfo {
  OpKind kind;
  llvm::StringRef name;
  FusionClass fusionClass;
  unsigned minOperands;
  unsigned maxOperands;
  std::vector<AttrSpec> attrs;

  /// The schema entry named `name`, or null.
  const AttrSpec *findAttr(llvm::StringRef name) const;
  /// Index of `name` in the schema, or -1.
  int attrIndex(llvm::StringRef name) const;
};

/// The table row of `kind`.
const OpInfo &opInfo(OpKind kind);
/// The op spelled `name` in the text format, if any.
std::optional<OpKind> lookupOp(llvm::StringRef name);
/// The op's name in the text format.
inline llvm::StringRef opName(OpKind kind) { return opInfo(kind).name; }

/// Unary elementwise ops: the CPU formula on doubles and the CUDA expression on floats (in
/// terms of `x`, `p0`, `p1`).
bool isUnary(OpKind kind);
double evalUnary(OpKind kind, double x, double p0, double p1);
llvm::StringRef unaryDeviceExpr(OpKind kind);

/// Binary elementwise ops: the CPU formula on doubles and the CUDA expression (in `a`, `b`).
bool isBinary(OpKind kind);
double evalBinary(OpKind kind, double a, double b);
llvm::StringRef binaryDeviceExpr(OpKind kind);

/// Shortest text that reads back as the same double, always with a '.', 'e' or "inf".
std::string formatDouble(double value);

/// Text of an attribute value as the printer writes it.
std::string attrValueStr(const AttrValue &value);

} // namespace sinter
