//===- include/sinter/sinter.h - every public header of sinter at once ---------------===//
//
// For projects that embed sinter (docs/embedding.md): `#include <sinter/sinter.h>` and link
// sinter::sinter. Each header below can also be included on its own by the same path, in
// the source tree and in an installed copy alike (include/sinter/ is on the include path).
// Everything here is in namespace sinter; failures are llvm::Error / llvm::Expected values.
//
//===--------------------------------------------------------------------------------===//
#pragma once

// Graphs: the C++ builder, the .sir text format, verification, the float64 reference.
#include "ir/Builder.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Random.h"
#include "ir/Reference.h"
#include "ir/Safetensors.h"
#include "ir/Verifier.h"

// Compiling: compileGraph / jit, the fusion plan as text, versions.
#include "compiler/Explain.h"
#include "compiler/Jit.h"
#include "compiler/Version.h"
#include "frontend/OnnxImport.h"

// Running: Executable (on the caller's stream and buffers), bundles, the kernel cache.
#include "runtime/Bundle.h"
#include "runtime/Driver.h"
#include "runtime/Executable.h"
#include "runtime/KernelCache.h"
