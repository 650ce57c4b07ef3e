//===- frontend/OnnxTensor.h - constant tensors of an ONNX model ---------------------===//
//
// The ONNX importer works on constants (initializers, Constant nodes, folded shape
// arithmetic) as ConstTensors: a shape and the elements in one of three forms, f32 (the
// weights, kept as read), f64 (double constants, and what folding double arithmetic gives)
// or i64 (every integer and bool tensor). decodeTensor reads a TensorProto from any of the
// places ONNX allows (raw_data, the typed repeated fields, an external data file) and
// checks that the element count agrees with the dims; everything it cannot represent
// (strings, complex, f16/bf16, sparse) is an error for the caller to put a node name on.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace sinter::onnximport {

/// The most elements a tensor read from a model may have (2^40). Reading never allocates
/// more than the file holds; this bound only keeps element counts from overflowing.
constexpr int64_t kMaxElements = int64_t(1) << 40;

/// The most elements a tensor made by constant folding may have (2^24): shape arithmetic
/// needs a handful, and a corrupt ConstantOfShape or Expand must not exhaust memory.
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;

/// The element count of `shape`, or -1 when a dim is negative or the count exceeds `limit`.
int64_t checkedNumel(llvm::ArrayRef<int64_t> shape, int64_t limit);

/// How a constant's elements are stored.
enum class ElemKind : uint8_t { F32, F64, I64 };

/// A constant tensor.
struct ConstTensor {
  ElemKind kind = ElemKind::F32;
  Shape shape;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<int64_t> i64;

  int64_t numel() const;
  bool isFloat() const { return kind != ElemKind::I64; }
  /// Element `i` as a double / an int64 (floats are truncated toward zero).
  double num(size_t i) const;
  int64_t integer(size_t i) const;
  /// A tensor of `kind` and `shape` with every element zero.
  static ConstTensor zeros(ElemKind kind, llvm::ArrayRef<int64_t> shape);
  /// Sets element `i` from a double (rounded to the tensor's kind).
  void set(size_t i, double v);
  void setInt(size_t i, int64_t v);
  /// The elements as f32 (the form params take).
  std::vector<float> toF32() const;
};

/// ONNX's name for data type `dataType` (TensorProto.DataType), e.g. "float16".
std::string onnxTypeName(int dataType);

/// The element kind sinter keeps an ONNX data type in, or nullopt for types it does not
/// read (strings, complex, float16, bfloat16, 8-bit and 4-bit floats).
std::optional<ElemKind> elemKindOf(int dataType);

/// External data files of one model, read once (memory-mapped) and shared by every tensor
/// stored in them.
class ExternalData {
public:
  /// `dir` is the folder of the model file; empty means external data is not allowed.
  explicit ExternalData(std::string dir) : dir(std::move(dir)) {}
  /// The `length` bytes at `offset` of the file `location` (relative to the model's folder).
  llvm::Expected<llvm::StringRef> bytes(llvm::StringRef location, uint64_t offset, uint64_t length);

private:
  std::string dir;
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> files;
};

/// Decodes `t` (dims, data type and data). Errors name no node or tensor: the caller adds
/// that context.
llvm::Expected<ConstTensor> decodeTensor(const onnx::TensorProto &t, ExternalData &external);

} // namespace sinter::onnximport
