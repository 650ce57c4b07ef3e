//===- tests/kernels_generic/NvrtcCompile.cpp - NVRTC for the generic kernel tests ---===//
#include "tests/kernels_generic/NvrtcCompile.h"

#include "templates/Templates.h"

#include <nvrtc.h>

namespace sinter::testing {

NvrtcOutput compileWithNvrtc(const std::string &source, llvm::StringRef programName,
                             llvm::StringRef arch) {
  NvrtcOutput result;
  std::vector<const char *> headers, names;
  for (const TemplateFile &f : templateFiles()) {
    headers.push_back(f.text.data());
    names.push_back(f.name.data());
  }
  nvrtcProgram prog;
  std::string name = programName.str() + ".cu";
  if (nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), int(headers.size()), headers.data(),
                         names.data()) != NVRTC_SUCCESS) {
    result.log = "nvrtcCreateProgram failed";
    return result;
  }
  std::string archOption = "--gpu-architecture=" + arch.str();
  const char *options[] = {archOption.c_str(), "-std=c++17"};
  nvrtcResult rc = nvrtcCompileProgram(prog, 2, options);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  result.log.resize(logSize);
  nvrtcGetProgramLog(prog, result.log.data());
  while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n'))
    result.log.pop_back();
  result.ok = rc == NVRTC_SUCCESS;
  if (result.ok) {
    size_t size = 0;
    if (nvrtcGetCUBINSize(prog, &size) == NVRTC_SUCCESS && size > 0) {
      result.cubin.resize(size);
      nvrtcGetCUBIN(prog, result.cubin.data());
    }
  }
  nvrtcDestroyProgram(&prog);
  return result;
}

} // namespace sinter::testing
