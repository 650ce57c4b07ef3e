//===- runtime/Nvrtc.cpp - NVRTC compilation, ptxas reports, parallel compiles -----===//
//
// NVRTC is linked from the toolkit (it needs no driver). Each compile creates its own
// program, which NVRTC allows from several threads at once; compileAll hands kernels to a
// small pool of threads through an atomic counter and keeps results in input order so that
// the outcome does not depend on scheduling.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Nvrtc.h"

#include "ir/Error.h"
#include "runtime/KernelCache.h"
#include "templates/Templates.h"

#include "spdlog/spdlog.h"

#include <nvrtc.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

namespace sinter {

std::string nvrtcVersion() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::vector<std::string> nvrtcOptions(const CompileOptions &o) {
  // No --use_fast_math: the templates are written for IEEE division and accurate expf/erff,
  // which the precision contract relies on.
  std::vector<std::string> opts = {"--gpu-architecture=" + o.arch, "-std=c++17", "-default-device",
                                   "--ptxas-options=-v"};
  opts.insert(opts.end(), o.extraFlags.begin(), o.extraFlags.end());
  return opts;
}

ResourceUsage parseResourceReport(llvm::StringRef log, llvm::StringRef kernelName) {
  // ptxas writes one block per entry function, opened by "Compiling entry function '<name>'";
  // restrict the search to the block of our kernel when there is one.
  std::string marker = "Compiling entry function '" + kernelName.str() + "'";
  size_t begin = log.find(marker);
  llvm::StringRef block = log;
  if (begin != llvm::StringRef::npos) {
    block = log.drop_front(begin + marker.size());
    size_t next = block.find("Compiling entry function '");
    if (next != llvm::StringRef::npos)
      block = block.take_front(next);
  }
  std::string text = block.str();
  auto grab = [&](const char *pattern) -> int {
    std::smatch m;
    if (std::regex_search(text, m, std::regex(pattern)))
      return std::stoi(m[1].str());
    return -1;
  };
  ResourceUsage r;
  r.registers = grab(R"(Used (\d+) registers)");
  r.sharedBytes = grab(R"((\d+) bytes smem)");
  r.stackFrameBytes = grab(R"((\d+) bytes stack frame)");
  r.spillStoreBytes = grab(R"((\d+) bytes spill stores)");
  r.spillLoadBytes = grab(R"((\d+) bytes spill loads)");
  // ptxas leaves smem out of the "Used" line when the kernel has none.
  if (r.registers >= 0 && r.sharedBytes < 0)
    r.sharedBytes = 0;
  return r;
}

namespace {

llvm::Error nvrtcCheck(nvrtcResult r, const llvm::Twine &what) {
  if (r == NVRTC_SUCCESS)
    return llvm::Error::success();
  return makeError(llvm::Twine("nvrtc error ") + nvrtcGetErrorString(r) + " while " + what);
}

/// Destroys the program on every path out of compileWithNvrtc.
struct ProgramGuard {
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog)
      nvrtcDestroyProgram(&prog);
  }
};

/// How many programs this process handed to NVRTC (nvrtcCompileCount).
std::atomic<uint64_t> compileCount{0};

} // namespace

uint64_t nvrtcCompileCount() { return compileCount.load(); }

llvm::Expected<CompiledKernel> compileWithNvrtc(const KernelSource &k, const CompileOptions &o) {
  compileCount.fetch_add(1);
  auto start = std::chrono::steady_clock::now();
  llvm::ArrayRef<TemplateFile> templates = templateFiles();
  std::vector<std::string> headerTexts, headerNames;
  for (const TemplateFile &t : templates) {
    headerTexts.push_back(t.text.str());
    headerNames.push_back(t.name.str());
  }
  std::vector<const char *> headers, names;
  for (size_t i = 0; i < templates.size(); ++i) {
    headers.push_back(headerTexts[i].c_str());
    names.push_back(headerNames[i].c_str());
  }
  std::string what = "compiling '" + k.name + "' for " + o.arch;
  ProgramGuard guard;
  std::string fileName = k.name + ".cu";
  if (auto err = nvrtcCheck(nvrtcCreateProgram(&guard.prog, k.source.c_str(), fileName.c_str(),
                                               int(headers.size()), headers.data(), names.data()),
                            "creating the program for " + what))
    return err;

  std::vector<std::string> opts = nvrtcOptions(o);
  std::vector<const char *> optPtrs;
  for (const std::string &s : opts)
    optPtrs.push_back(s.c_str());
  nvrtcResult compiled = nvrtcCompileProgram(guard.prog, int(optPtrs.size()), optPtrs.data());

  size_t logSize = 0;
  std::string log;
  if (nvrtcGetProgramLogSize(guard.prog, &logSize) == NVRTC_SUCCESS && logSize > 1) {
    log.resize(logSize);
    if (nvrtcGetProgramLog(guard.prog, log.data()) != NVRTC_SUCCESS)
      log.clear();
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
      log.pop_back();
  }
  if (compiled != NVRTC_SUCCESS)
    return makeError("nvrtc: " + what + " failed:\n" +
                     (log.empty() ? std::string(nvrtcGetErrorString(compiled)) : log));

  size_t cubinSize = 0;
  if (auto err = nvrtcCheck(nvrtcGetCUBINSize(guard.prog, &cubinSize),
                            "reading the cubin of " + llvm::Twine(k.name)))
    return err;
  if (cubinSize == 0)
    return makeError("nvrtc: " + what + " produced no cubin (is '" + o.arch +
                     "' a real arch rather than a virtual compute_XY?)");
  CompiledKernel out;
  out.cubin.resize(cubinSize);
  if (auto err = nvrtcCheck(nvrtcGetCUBIN(guard.prog, out.cubin.data()),
                            "reading the cubin of " + llvm::Twine(k.name)))
    return err;
  out.name = k.name;
  out.templateName = k.templateName;
  out.arch = o.arch;
  out.launch = k.launch;
  out.source = k.source;
  out.log = std::move(log);
  out.resources = parseResourceReport(out.log, k.name);
  out.compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

llvm::Expected<std::vector<CompiledKernel>>
compileAll(llvm::ArrayRef<KernelSource> kernels, const CompileOptions &o, KernelCache *cache,
           unsigned threads, const CompileLabels &labels, const ProgressFn &progress) {
  assert((labels.groups.empty() || labels.groups.size() == kernels.size()) &&
         "one fusion group label per kernel");
  size_t n = kernels.size();
  std::vector<std::optional<CompiledKernel>> results(n);
  std::vector<std::string> errors(n);
  std::vector<std::string> options = nvrtcOptions(o);
  std::atomic<size_t> next{0}, done{0};
  std::mutex progressMutex;

  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      const KernelSource &k = kernels[i];
      std::string key = cache ? cacheKeyFor(k, o) : std::string();
      std::optional<CompiledKernel> hit = cache ? cache->lookup(key) : std::nullopt;
      if (hit) {
        results[i] = std::move(*hit);
      } else {
        auto compiled = compileWithNvrtc(k, o);
        if (!compiled) {
          errors[i] = llvm::toString(compiled.takeError());
        } else {
          compiled->cacheKey = key;
          if (cache) {
            // A std::string: the conditional's type is std::string (a temporary), which a
            // StringRef would outlive.
            std::string group = labels.groups.empty() ? std::string() : labels.groups[i];
            // A cache that cannot be written costs speed, not correctness: warn and go on.
            if (auto err =
                    cache->store(*compiled, labels.graphName, group, options, o.codegenVersion))
              spdlog::warn("kernel cache: {}", llvm::toString(std::move(err)));
          }
          results[i] = std::move(*compiled);
        }
      }
      if (progress && errors[i].empty()) {
        std::lock_guard<std::mutex> lock(progressMutex);
        progress({k.name, results[i]->cacheHit,
                  results[i]->cacheHit ? 0.0 : results[i]->compileSeconds, ++done, n});
      }
    }
  };

  unsigned count = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  count = unsigned(std::min<size_t>(count, n));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < count; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  if (cache)
    cache->flushStats();

  for (size_t i = 0; i < n; ++i)
    if (!errors[i].empty())
      return makeError(errors[i]);
  std::vector<CompiledKernel> out;
  out.reserve(n);
  for (auto &r : results)
    out.push_back(std::move(*r));
  return out;
}

} // namespace sinter
