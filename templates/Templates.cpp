//===- templates/Templates.cpp - lookup of the embedded CUDA templates ---------------===//
#include "templates/Templates.h"

#include <vector>

namespace sinter {

llvm::ArrayRef<TemplateFile> templateFiles() {
  static const std::vector<TemplateFile> files = [] {
    std::vector<TemplateFile> out;
    for (const detail::EmbeddedTemplate *t = detail::kEmbeddedTemplates; t->name; ++t)
      out.push_back({t->name, t->text});
    return out;
  }();
  return files;
}

llvm::StringRef templateText(llvm::StringRef name) {
  for (const TemplateFile &f : templateFiles())
    if (f.name == name)
      return f.text;
  return {};
}

} // namespace sinter
