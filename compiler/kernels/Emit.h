//===- compiler/kernels/Emit.h - writing the generated prologue --------------------===//
//
// Every generated kernel source has the same shape: `#define SINTER_KERNEL <name>`, the
// template's constants in `namespace cfg`, the fused ops as small functors, then one
// `#include` of the template (STYLE.md point 7). The template emitters of this folder build
// that text with PrologueWriter so that all of them read and hash alike.
//
// Functor conventions (the templates call them; compiler/Epilogue.cpp generates them):
//  - anchor epilogue, `struct Epilogue`:
//      float operator()(float v, int n, int c, sinter::i64 s, const sinter::Buffers &b) const
//    v is the accumulator plus bias at batch n (GEMM: row), channel c (GEMM: column) and
//    flat spatial index s within the (n, c) plane (GEMM: the batch index, else 0).
//  - flat functor, e.g. `struct Load` or `struct Post`:
//      float operator()(float v, sinter::i64 i, const sinter::Buffers &b) const
//    v is the element at flat (row-major) index i of the tensor the template iterates.
//  - compute functor, `struct Compute`:
//      float operator()(sinter::i64 i, const sinter::Buffers &b) const
//    the whole value of output element i (standalone elementwise kernels).
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace sinter {

/// The body of a functor: C++ statements ending in a `return`. The default is the identity.
struct FunctorBody {
  std::string code = "return v;";
  bool isIdentity() const { return code == "return v;"; }
  /// Whether the body reads tensors (functors reach them only through `b.p[slot]`).
  bool readsTensors() const { return code.find("b.p[") != std::string::npos; }
};

/// The reductions of the op catalog, as the templates that fold them number them: reduce.cuh
/// (ReduceSpec::Kind) and the convolutions' reductions over their channels
/// (ConvChannelReduce::Kind).
enum class ReductionKind : uint8_t { Sum, Mean, Max, Min, LogSumExp };

/// The reduction's op name: "sum", "mean", "max", "min" or "logsumexp".
const char *reductionName(ReductionKind k);

/// Builds the text of a generated kernel source.
class PrologueWriter {
public:
  PrologueWriter(llvm::StringRef kernelName, llvm::StringRef templateName);

  /// `constexpr <type> name = value;` in namespace cfg (int when it fits, else long long).
  void constant(llvm::StringRef name, int64_t value);
  void constantBool(llvm::StringRef name, bool value);
  void constantFloat(llvm::StringRef name, double value);
  /// `constexpr long long name[] = {...};` in namespace cfg.
  void constantArray(llvm::StringRef name, llvm::ArrayRef<int64_t> values);
  /// The same as a `__device__` variable: for arrays the kernel indexes at run time, which
  /// nvcc (unlike NVRTC) only allows on device variables.
  void deviceConstantArray(llvm::StringRef name, llvm::ArrayRef<int64_t> values);
  /// A line (or lines) of code placed after the constants, before the include.
  void code(llvm::StringRef text);

  /// An anchor-epilogue functor named `structName` with the given body.
  void anchorEpilogue(llvm::StringRef structName, const FunctorBody &body);
  /// A flat functor named `structName` with the given body.
  void flatFunctor(llvm::StringRef structName, const FunctorBody &body);
  /// The compute functor `Compute` with the given body (reads `i` and `b`).
  void computeFunctor(const std::string &body);

  /// The finished source.
  std::string finish() const;

private:
  std::string kernelName_, templateName_, constants_, code_;
};

/// A float literal CUDA reads back exactly ("1.5f", "-3.0e-05f", or an infinity expression).
std::string floatLiteral(double value);

} // namespace sinter
