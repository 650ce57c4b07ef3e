//===- compiler/Version.h - sinter's version strings ----------------------------------===//
//
// The library version, and the code generator's version (part of every cache key).
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"

namespace sinter {
/// sinter's release version, e.g. "0.1.0".
llvm::StringRef sinterVersion();

/// The code generator's version. It enters every kernel-cache key: bump it whenever the
/// generated source could change meaning without its text changing (it rarely can, since the
/// source and the templates are hashed too).
constexpr llvm::StringLiteral kCodegenVersion = "sinter-codegen-1";
} // namespace sinter
