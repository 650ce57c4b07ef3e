//===- tests/CorpusFiles.h - where the test binaries find the corpus graphs ---------===//
//
// The CPU corpus test (tests/compiler/CorpusTest.cpp) and the GPU one
// (tests/gpu/GpuCorpusTest.cpp) both list bench/corpus/{full,small}/*.sir. SINTER_CORPUS_DIR
// overrides the folder (the GPU machine gets the repository at another path); otherwise the
// including target defines SINTER_CORPUS_DIR_DEFAULT.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace sinter::test {

inline std::string corpusDir() {
  const char *env = std::getenv("SINTER_CORPUS_DIR");
  return env && *env ? std::string(env) : std::string(SINTER_CORPUS_DIR_DEFAULT);
}

/// The .sir files of `dir`, sorted; none when the folder is missing.
inline std::vector<std::string> sirFiles(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".sir")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace sinter::test
