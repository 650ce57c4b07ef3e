//===- compiler/kernels/GenericCommon.h - helpers shared by the generic emitters ---===//
//
// Small arithmetic and validation helpers used by Generic.cpp and GenericReduce.cpp, and the
// one occupancy target their launch heuristics aim at. Internal to compiler/kernels/.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "compiler/kernels/Generic.h"
#include "ir/Error.h"

#include <algorithm>
#include <cstdint>

namespace sinter::generic {

/// Resident threads that fill an H100 or H200 (132 multiprocessors x 2048); a kernel with
/// fewer outputs than this splits its reduced range over more blocks.
constexpr int64_t kTargetThreads = int64_t(1) << 18;
/// The largest grid.x a launch may use.
constexpr int64_t kMaxGridX = (int64_t(1) << 31) - 1;

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// The smallest power of two >= v (v >= 1).
inline int64_t nextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v)
    p <<= 1;
  return p;
}

/// An error unless `name` is a C identifier (it becomes the extern "C" symbol).
inline llvm::Error checkKernelName(llvm::StringRef name) {
  bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char ch : name)
    ok = ok && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                ch == '_');
  if (!ok)
    return makeError("generic kernel: '" + name + "' is not a valid kernel name");
  return llvm::Error::success();
}

/// An error unless `slot` is a Buffers slot other than the input slot 0.
inline llvm::Error checkOutSlot(llvm::StringRef kernel, int slot) {
  if (slot < 1 || slot >= 16)
    return makeError(kernel + ": output slot " + llvm::Twine(slot) + " is not in 1..15");
  return llvm::Error::success();
}

/// What a valid pool spec computes over: the window volume and the elements of one (n, c)
/// plane of its input and of its output.
struct PoolExtent {
  int64_t window = 1, inPlane = 1, outPlane = 1;
};

/// The extents of a valid pool spec, else an error naming `name`.
llvm::Expected<PoolExtent> checkPool(const PoolSpec &spec, llvm::StringRef name);

/// " pooled (max window 4)": the tile note of a kernel that computes a pool's result itself.
std::string pooledNote(const PoolSpec &spec, const PoolExtent &e);

/// The constants pool_window.cuh expects.
void writePoolWindow(PrologueWriter &w, const PoolSpec &spec);

/// The Element functor of reduce.cuh and row_norm.cuh (the value of element i of the tensor
/// they read: a load of slot 0, or with `pooled` that pool's window over slot 0, whose
/// constants and template it also writes).
void writeElement(PrologueWriter &w, const std::optional<PoolSpec> &pooled);

} // namespace sinter::generic
