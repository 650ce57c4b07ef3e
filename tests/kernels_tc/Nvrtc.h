//===- tests/kernels_tc/Nvrtc.h - compiling a generated source in a test -----------===//
//
// The tensor-core tests compile every emitted source with NVRTC, the embedded templates as
// its only headers, as the runtime does; a warning counts as a failure.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "templates/Templates.h"

#include <nvrtc.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace sinter::tc_test {

/// Compiles `source` for `arch` with the embedded templates as headers; returns the log on
/// failure or when it is not empty (warnings), an empty string on success. With `report`,
/// ptxas also writes its resource report, and a kernel that spills (any byte of spill stores
/// or loads) or whose wgmmas ptxas serialises ("Potential Performance Loss", C75xx) fails
/// too (spills only unless `allowSpills`); `registers` then receives the "Used N registers"
/// of the last kernel reported.
inline std::string nvrtcCompile(const std::string &source, const std::string &arch,
                                bool report = false, int *registers = nullptr,
                                bool allowSpills = false) {
  std::vector<std::string> names, texts;
  for (const TemplateFile &t : templateFiles()) {
    names.push_back(t.name.str());
    texts.push_back(t.text.str());
  }
  std::vector<const char *> nameP, textP;
  for (size_t i = 0; i < names.size(); ++i) {
    nameP.push_back(names[i].c_str());
    textP.push_back(texts[i].c_str());
  }
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "kernel.cu", int(names.size()), textP.data(),
                         nameP.data()) != NVRTC_SUCCESS)
    return "nvrtcCreateProgram failed";
  std::string archOpt = "--gpu-architecture=" + arch;
  const char *opts[] = {archOpt.c_str(), "-std=c++17", "-default-device", "--ptxas-options=-v"};
  nvrtcResult r = nvrtcCompileProgram(prog, report ? 4 : 3, opts);
  std::string log;
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  log.resize(logSize);
  nvrtcGetProgramLog(prog, log.data());
  size_t cubinSize = 0;
  if (r == NVRTC_SUCCESS)
    nvrtcGetCUBINSize(prog, &cubinSize);
  nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS)
    return "compile failed: " + log;
  if (cubinSize == 0)
    return "no cubin";
  if (!report) {
    // A warning is a finding too (the log holds at least its terminating zero).
    if (log.find_first_not_of(std::string(" \n\0", 3)) != std::string::npos)
      return "compiled with a log: " + log;
    return {};
  }
  // The report: "ptxas info" lines and the properties under them ("ptxas   .   0 bytes
  // stack frame, ..."); anything else is a warning.
  std::istringstream lines(log.c_str());
  static const std::regex spill(R"((\d+) bytes spill (stores|loads))"),
      used(R"(Used (\d+) registers)");
  for (std::string line; std::getline(lines, line);) {
    if (line.empty())
      continue;
    std::smatch m;
    if (line.rfind("ptxas info", 0) != 0 && line.rfind("ptxas  ", 0) != 0)
      return "compiled with a warning: " + log;
    if (line.find("Potential Performance Loss") != std::string::npos)
      return "ptxas serialises wgmmas: " + log;
    for (auto it = line.cbegin(); std::regex_search(it, line.cend(), m, spill);
         it = m.suffix().first)
      if (std::stoi(m[1].str()) != 0 && !allowSpills)
        return "spills: " + log;
    if (registers && std::regex_search(line, m, used))
      *registers = std::stoi(m[1].str());
  }
  return {};
}

} // namespace sinter::tc_test
