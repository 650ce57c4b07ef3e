//===- compiler/Version.h - sinter's version strings ----------------------------------===//
//
// The library version. The code generator's own version (part of every cache key) lives in
// compiler/Codegen.h.
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

namespace sinter {
/// sinter's release version, e.g. "0.1.0".
llvm::StringRef sinterVersion();
} // namespace sinter
