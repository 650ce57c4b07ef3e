//===- ir/Error.h - building llvm::Error values ------------------------------------===//
//
// Bad input and failing environments are reported as llvm::Error (STYLE.md point 8): one
// lower-case line, no trailing period, naming the op or file:line:col. These helpers keep the
// call sites short.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace sinter {

/// An llvm::Error carrying `message`.
inline llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Prefixes the message of every error in `err` with `context: `.
inline llvm::Error withContext(llvm::Error err, const llvm::Twine &context) {
  if (!err)
    return err;
  std::string message = llvm::toString(std::move(err));
  return makeError(context + ": " + message);
}

} // namespace sinter
