//===- ir/Tensor.h - host tensors bound to graph arguments -------------------------===//
//
// A HostTensor is the plain CPU form of a tensor that crosses the tool boundary: safetensors
// files, random bindings, the inputs of the CPU reference and the GPU runtime's uploads. Data
// is f32, row-major and contiguous. Tensors are bound to graph arguments (and results come
// back) by name, the value's name without the leading '%'.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"

#include <map>
#include <string>
#include <vector>

namespace sinter {

/// A dense f32 tensor on the host.
struct HostTensor {
  TensorType type;
  std::vector<float> data; ///< row-major, type.numel() elements

  HostTensor() = default;
  /// A zero-filled tensor of `shape`.
  explicit HostTensor(llvm::ArrayRef<int64_t> shape)
      : type(DType::F32, shape), data(size_t(type.numel()), 0.0f) {}
  HostTensor(llvm::ArrayRef<int64_t> shape, std::vector<float> values)
      : type(DType::F32, shape), data(std::move(values)) {}

  int64_t numel() const { return type.numel(); }
};

/// Tensors by name (without '%'); std::map keeps files and printouts in a stable order.
using TensorMap = std::map<std::string, HostTensor>;

} // namespace sinter
