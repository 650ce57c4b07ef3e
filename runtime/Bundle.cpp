//===- runtime/Bundle.cpp - writing and reading manifest.json and cubins ------------===//
//
// The manifest is written last and renamed into place, so a directory whose manifest parses
// has all its cubins. Reading trusts nothing: every field is fetched with a checked accessor
// and a wrong or missing one is reported as `dir/manifest.json: <what>`; the plan it yields is
// then checked with validatePlan like any plan.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Bundle.h"

#include "ir/Error.h"
#include "runtime/CacheFiles.h"
#include "runtime/KernelCache.h"

#include "nlohmann/json.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#ifndef SINTER_VERSION_STRING
#error "runtime/CMakeLists.txt defines SINTER_VERSION_STRING"
#endif

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace sinter {

llvm::StringRef bundleSinterVersion() { return SINTER_VERSION_STRING; }

namespace {

const char *kFormatName = "sinter-bundle";

llvm::Error writeFile(const std::string &path, llvm::StringRef data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), std::streamsize(data.size()));
  out.close();
  if (!out)
    return makeError("cannot write " + path);
  return llvm::Error::success();
}

std::optional<std::string> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char *stepKindName(Step::Kind k) {
  switch (k) {
  case Step::Kind::Launch:
    return "launch";
  case Step::Kind::Fill:
    return "fill";
  }
  llvm_unreachable("unknown step kind");
}

std::optional<BufferSpec::Kind> parseBufferKind(const std::string &s) {
  for (BufferSpec::Kind k : {BufferSpec::Kind::Input, BufferSpec::Kind::Param,
                             BufferSpec::Kind::Output, BufferSpec::Kind::Workspace})
    if (s == bufferKindName(k))
      return k;
  return std::nullopt;
}

json typeJson(const TensorType &t) {
  return {{"dtype", dtypeName(t.dtype).str()},
          {"shape", std::vector<int64_t>(t.shape.begin(), t.shape.end())}};
}

/// A file name inside the bundle: no directories, nothing hidden.
bool plainFileName(const std::string &s) {
  return !s.empty() && s.find('/') == std::string::npos && s[0] != '.';
}

/// Thrown inside manifest parsing for problems nlohmann cannot see; caught with its errors.
struct ManifestError {
  std::string what;
};

} // namespace

llvm::Error writeBundle(llvm::StringRef dirRef, const ExecutablePlan &plan,
                        llvm::ArrayRef<CompiledKernel> cubins, bool keepSource) {
  std::string dir = dirRef.str();
  if (cubins.size() != plan.kernels.size())
    return makeError("bundle '" + dir + "': " + std::to_string(cubins.size()) + " cubins for " +
                     std::to_string(plan.kernels.size()) + " kernels");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    return makeError("bundle '" + dir + "': cannot create the directory" +
                     (ec ? ": " + ec.message() : std::string()));

  json buffers = json::array();
  json signature = {
      {"inputs", json::array()}, {"params", json::array()}, {"outputs", json::array()}};
  int64_t workspace = 0;
  for (const BufferSpec &b : plan.buffers) {
    buffers.push_back({{"name", b.name},
                       {"kind", bufferKindName(b.kind)},
                       {"type", typeJson(b.type)},
                       {"bytes", b.bytes},
                       {"alias_of", b.aliasOf}});
    json entry = {{"name", b.name}, {"type", b.type.str()}};
    switch (b.kind) {
    case BufferSpec::Kind::Input:
      signature["inputs"].push_back(entry);
      break;
    case BufferSpec::Kind::Param:
      signature["params"].push_back(entry);
      break;
    case BufferSpec::Kind::Output:
      signature["outputs"].push_back(entry);
      break;
    case BufferSpec::Kind::Workspace:
      if (b.aliasOf < 0)
        workspace += b.bytes;
      break;
    }
  }

  json kernels = json::array();
  std::set<std::string> names;
  for (size_t i = 0; i < plan.kernels.size(); ++i) {
    const KernelSpec &k = plan.kernels[i];
    const CompiledKernel &c = cubins[i];
    if (c.name != k.name)
      return makeError("bundle '" + dir + "': cubin " + std::to_string(i) + " is '" + c.name +
                       "' but the plan launches '" + k.name + "'");
    if (!names.insert(k.name).second || !plainFileName(k.name))
      return makeError("bundle '" + dir + "': kernel name '" + k.name +
                       "' is repeated or not a file name");
    std::string cubinFile = k.name + ".cubin";
    if (auto err = writeFile(dir + "/" + cubinFile, c.cubin))
      return err;
    json kj = {{"name", k.name},
               {"template", k.templateName},
               {"group", k.group},
               {"cache_key", k.cacheKey.empty() ? c.cacheKey : k.cacheKey},
               {"launch", cachefs::launchToJson(k.launch)},
               {"flops", k.flops},
               {"bytes", k.bytes},
               {"cubin", cubinFile},
               {"cubin_bytes", int64_t(c.cubin.size())},
               {"cubin_sha256", sha256Hex(c.cubin)},
               {"registers", c.resources.registers},
               {"shared_bytes", c.resources.sharedBytes},
               {"spill_store_bytes", c.resources.spillStoreBytes},
               {"spill_load_bytes", c.resources.spillLoadBytes},
               {"stack_frame_bytes", c.resources.stackFrameBytes}};
    if (keepSource) {
      if (c.source.empty())
        return makeError("bundle '" + dir + "': no source kept for kernel '" + k.name + "'");
      std::string sourceFile = k.name + ".cu";
      if (auto err = writeFile(dir + "/" + sourceFile, c.source))
        return err;
      kj["source"] = sourceFile;
    }
    kernels.push_back(std::move(kj));
  }

  json steps = json::array();
  for (const Step &s : plan.steps) {
    json sj = {{"kind", stepKindName(s.kind)}};
    if (s.kind == Step::Kind::Launch) {
      sj["kernel"] = s.kernel;
      sj["slots"] = std::vector<int>(s.slots.begin(), s.slots.end());
    } else {
      sj["buffer"] = s.buffer;
      sj["word"] = s.fillWord;
    }
    steps.push_back(std::move(sj));
  }

  json manifest = {{"format", kFormatName},
                   {"format_version", kBundleFormatVersion},
                   {"sinter_version", bundleSinterVersion().str()},
                   {"graph", plan.graphName},
                   {"arch", plan.arch},
                   {"precision", plan.precision},
                   {"nvrtc_version", nvrtcVersion()},
                   {"signature", signature},
                   {"workspace_bytes", workspace},
                   {"buffers", buffers},
                   {"kernels", kernels},
                   {"steps", steps}};
  std::string tmp = dir + "/.manifest.json.tmp-" + std::to_string(::getpid());
  if (auto err = writeFile(tmp, manifest.dump(2) + "\n"))
    return err;
  fs::rename(tmp, dir + "/manifest.json", ec);
  if (ec)
    return makeError("bundle '" + dir + "': cannot write manifest.json: " + ec.message());
  return llvm::Error::success();
}

llvm::Expected<Bundle> readBundle(llvm::StringRef dirRef, llvm::StringRef currentArch) {
  std::string dir = dirRef.str();
  std::string manifestPath = dir + "/manifest.json";
  if (!fs::is_directory(dir))
    return makeError("bundle '" + dir + "' is not a directory");
  auto text = readFile(manifestPath);
  if (!text)
    return makeError("bundle '" + dir + "' has no manifest.json");
  Bundle out;
  ExecutablePlan &plan = out.plan;
  std::vector<std::string> cubinFiles, cubinSums, sourceFiles;
  try {
    json m = json::parse(*text);
    if (!m.is_object() || m.value("format", std::string()) != kFormatName)
      throw ManifestError{"not a sinter bundle manifest (\"format\" is not \"sinter-bundle\")"};
    int version = m.at("format_version").get<int>();
    if (version != kBundleFormatVersion)
      return makeError("bundle '" + dir + "' has format version " + std::to_string(version) +
                       "; this sinter reads version " + std::to_string(kBundleFormatVersion));
    out.sinterVersion = m.at("sinter_version").get<std::string>();
    if (out.sinterVersion != bundleSinterVersion())
      return makeError("bundle '" + dir + "' was built by sinter " + out.sinterVersion +
                       "; this is sinter " + bundleSinterVersion() + " (compile it again)");
    plan.arch = m.at("arch").get<std::string>();
    if (plan.arch != currentArch)
      return makeError("bundle '" + dir + "' was built for " + plan.arch + " but the GPU is " +
                       currentArch);
    plan.graphName = m.at("graph").get<std::string>();
    plan.precision = m.at("precision").get<std::string>();
    out.nvrtcVersion = m.at("nvrtc_version").get<std::string>();
    for (const json &b : m.at("buffers")) {
      BufferSpec spec;
      spec.name = b.at("name").get<std::string>();
      auto kind = parseBufferKind(b.at("kind").get<std::string>());
      if (!kind)
        throw ManifestError{"buffer '" + spec.name + "' has unknown kind '" +
                            b.at("kind").get<std::string>() + "'"};
      spec.kind = *kind;
      auto dtype = parseDType(b.at("type").at("dtype").get<std::string>());
      if (!dtype)
        throw ManifestError{"buffer '" + spec.name + "' has an unknown dtype"};
      spec.type = TensorType(*dtype, b.at("type").at("shape").get<std::vector<int64_t>>());
      spec.bytes = b.at("bytes").get<int64_t>();
      spec.aliasOf = b.at("alias_of").get<int>();
      plan.buffers.push_back(std::move(spec));
    }
    for (const json &k : m.at("kernels")) {
      KernelSpec spec;
      spec.name = k.at("name").get<std::string>();
      spec.templateName = k.at("template").get<std::string>();
      spec.group = k.at("group").get<std::string>();
      spec.cacheKey = k.at("cache_key").get<std::string>();
      spec.launch = cachefs::launchFromJson(k.at("launch"));
      spec.flops = k.at("flops").get<double>();
      spec.bytes = k.at("bytes").get<double>();
      std::string file = k.at("cubin").get<std::string>();
      if (!plainFileName(file))
        throw ManifestError{"kernel '" + spec.name + "' names cubin '" + file +
                            "', not a file of the bundle"};
      cubinFiles.push_back(file);
      cubinSums.push_back(k.at("cubin_sha256").get<std::string>());
      std::string source = k.value("source", std::string());
      if (!source.empty() && !plainFileName(source))
        throw ManifestError{"kernel '" + spec.name + "' names source '" + source +
                            "', not a file of the bundle"};
      sourceFiles.push_back(source);
      CompiledKernel c;
      c.name = spec.name;
      c.templateName = spec.templateName;
      c.arch = plan.arch;
      c.launch = spec.launch;
      c.cacheKey = spec.cacheKey;
      c.resources.registers = k.value("registers", -1);
      c.resources.sharedBytes = k.value("shared_bytes", -1);
      c.resources.spillStoreBytes = k.value("spill_store_bytes", -1);
      c.resources.spillLoadBytes = k.value("spill_load_bytes", -1);
      c.resources.stackFrameBytes = k.value("stack_frame_bytes", -1);
      out.cubins.push_back(std::move(c));
      plan.kernels.push_back(std::move(spec));
    }
    for (const json &s : m.at("steps")) {
      Step st;
      std::string kind = s.at("kind").get<std::string>();
      if (kind == "launch") {
        st.kind = Step::Kind::Launch;
        st.kernel = s.at("kernel").get<int>();
        for (int slot : s.at("slots").get<std::vector<int>>())
          st.slots.push_back(slot);
      } else if (kind == "fill") {
        st.kind = Step::Kind::Fill;
        st.buffer = s.at("buffer").get<int>();
        st.fillWord = s.at("word").get<uint32_t>();
      } else {
        throw ManifestError{"step kind '" + kind + "' is neither launch nor fill"};
      }
      plan.steps.push_back(std::move(st));
    }
  } catch (const json::exception &e) {
    std::string what = e.what();
    // nlohmann prefixes "[json.exception.type_error.302] "; the rest is the message.
    if (size_t close = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    return makeError(manifestPath + ": " + what);
  } catch (const ManifestError &e) {
    return makeError(manifestPath + ": " + e.what);
  }
  if (auto err = validatePlan(plan))
    return withContext(std::move(err), manifestPath);

  for (size_t i = 0; i < out.cubins.size(); ++i) {
    std::string path = dir + "/" + cubinFiles[i];
    auto cubin = readFile(path);
    if (!cubin)
      return makeError("bundle '" + dir + "': " + cubinFiles[i] + " is missing");
    if (sha256Hex(*cubin) != cubinSums[i])
      return makeError("bundle '" + dir + "': " + cubinFiles[i] +
                       " does not match its checksum (corrupt or truncated)");
    out.cubins[i].cubin = std::move(*cubin);
    if (!sourceFiles[i].empty())
      if (auto source = readFile(dir + "/" + sourceFiles[i]))
        out.cubins[i].source = std::move(*source);
  }
  return out;
}

} // namespace sinter
