//===- compiler/Version.cpp - sinter's version strings -------------------------------===//
#include "compiler/Version.h"

namespace sinter {
llvm::StringRef sinterVersion() { return "0.1.0"; }
} // namespace sinter
