//===- ir/Type.h - element and tensor types ----------------------------------------===//
//
// Every value of the IR is a dense tensor with a static shape. A rank-0 shape is a scalar.
// f16 and bf16 exist in the type system so that graphs can describe them; later stages may
// reject them with a clear error.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace sinter {

enum class DType : uint8_t { F32, F16, BF16 };

/// "f32", "f16" or "bf16".
llvm::StringRef dtypeName(DType dtype);
/// The dtype spelled `name`, if any.
std::optional<DType> parseDType(llvm::StringRef name);
/// Bytes per element.
unsigned dtypeSize(DType dtype);

using Shape = llvm::SmallVector<int64_t, 6>;

/// A tensor type: element type and static shape.
struct TensorType {
  DType dtype = DType::F32;
  Shape shape;

  TensorType() = default;
  TensorType(DType dtype, llvm::ArrayRef<int64_t> shape)
      : dtype(dtype), shape(shape.begin(), shape.end()) {}

  unsigned rank() const { return shape.size(); }
  /// Number of elements (1 for a scalar).
  int64_t numel() const;
  /// Size in bytes.
  int64_t bytes() const { return numel() * dtypeSize(dtype); }
  /// Text form, e.g. "f32[16,64,32]" or "f32[]".
  std::string str() const;

  friend bool operator==(const TensorType &a, const TensorType &b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorType &a, const TensorType &b) { return !(a == b); }
};

/// Text form of a shape, e.g. "[16,64,32]".
std::string shapeStr(llvm::ArrayRef<int64_t> shape);

/// Row-major strides of `shape` in elements.
Shape contiguousStrides(llvm::ArrayRef<int64_t> shape);

} // namespace sinter
