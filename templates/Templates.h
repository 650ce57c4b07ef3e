//===- templates/Templates.h - the CUDA templates embedded in the library ------------===//
//
// The .cuh files of templates/ are compiled into the library as strings so that NVRTC can
// include them by name wherever sinter runs. Codegen asks for them here; the cache key hashes
// the text of every template so that a changed template misses the cache.
//
//===---------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace sinter {

struct TemplateFile {
  llvm::StringRef name; ///< file name, e.g. "conv_igemm.cuh"
  llvm::StringRef text; ///< full source text
};

/// Every embedded template, sorted by name.
llvm::ArrayRef<TemplateFile> templateFiles();

/// The text of one template, or an empty StringRef when there is none by that name.
llvm::StringRef templateText(llvm::StringRef name);

namespace detail {
struct EmbeddedTemplate {
  const char *name;
  const char *text;
};
extern const EmbeddedTemplate kEmbeddedTemplates[];
} // namespace detail

} // namespace sinter
