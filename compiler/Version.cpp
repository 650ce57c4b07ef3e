//===- compiler/Version.cpp - sinter's version strings -------------------------------===//
#include "compiler/Version.h"

#ifndef SINTER_VERSION_STRING
#error "compiler/CMakeLists.txt defines SINTER_VERSION_STRING (the project version)"
#endif

namespace sinter {
llvm::StringRef sinterVersion() { return SINTER_VERSION_STRING; }
} // namespace sinter
