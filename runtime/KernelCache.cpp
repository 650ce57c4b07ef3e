//===- runtime/KernelCache.cpp - keys, atomic publish, verification, eviction ------===//
//
// Concurrency model: entries are immutable once published, so readers need no lock. A
// writer builds the entry in `.tmp-<pid>-<random>` beside its final name, fsyncs it and
// renames it into place; rename(2) onto an existing non-empty directory fails, which is how
// the loser of a race learns that an equal entry already exists. Removal renames an entry to
// `.trash-...` first, so a reader sees either the whole entry or none of it; a reader that
// finds files missing re-checks that the directory still exists before calling the entry
// corrupt. Only removals (eviction, gc, clear) and the stats.json update take the `.lock`
// file (flock), so that two collectors do not race each other.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/KernelCache.h"

#include "runtime/CacheFiles.h"

#include "ir/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;
using namespace sinter::cachefs;

namespace sinter {
namespace {

/// Feeds a length-prefixed field, so that moving bytes from one field to the next changes
/// the hash.
void feed(llvm::SHA256 &h, llvm::StringRef tag, llvm::StringRef value) {
  std::string header = tag.str() + ":" + std::to_string(value.size()) + ":";
  h.update(header);
  h.update(value);
}

} // namespace

std::string sha256Hex(llvm::StringRef data) {
  llvm::SHA256 h;
  h.update(data);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

std::string computeCacheKey(const CacheKeyInputs &in) {
  llvm::SHA256 h;
  feed(h, "sinter-kernel-cache", "1");
  feed(h, "source", in.source);
  std::vector<TemplateFile> templates(in.templates.begin(), in.templates.end());
  llvm::sort(templates,
             [](const TemplateFile &a, const TemplateFile &b) { return a.name < b.name; });
  feed(h, "templates", std::to_string(templates.size()));
  for (const TemplateFile &t : templates) {
    feed(h, "template-name", t.name);
    feed(h, "template-text", t.text);
  }
  feed(h, "arch", in.arch);
  feed(h, "nvrtc", in.nvrtcVersion);
  feed(h, "options", std::to_string(in.options.size()));
  for (const std::string &o : in.options)
    feed(h, "option", o);
  feed(h, "codegen", in.codegenVersion);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

std::string cacheKeyFor(const KernelSource &k, const CompileOptions &o) {
  static const std::string version = nvrtcVersion();
  std::vector<std::string> options = nvrtcOptions(o);
  return computeCacheKey({k.source, templateFiles(), o.arch, version, options, o.codegenVersion});
}

std::string KernelCache::defaultDirectory() {
  const char *mode = std::getenv("SINTER_CACHE");
  if (mode && llvm::StringRef(mode).equals_insensitive("off"))
    return {};
  if (const char *dir = std::getenv("SINTER_CACHE_DIR"); dir && *dir)
    return dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/sinter";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/sinter";
  return {};
}

llvm::Expected<std::unique_ptr<KernelCache>> KernelCache::openDefault() {
  std::string dir = defaultDirectory();
  if (dir.empty())
    return nullptr;
  uint64_t maxBytes = kDefaultMaxBytes;
  if (const char *env = std::getenv("SINTER_CACHE_MAX_BYTES"); env && *env) {
    if (llvm::StringRef(env).getAsInteger(10, maxBytes))
      return makeError(llvm::Twine("SINTER_CACHE_MAX_BYTES: expected a number of bytes, got '") +
                       env + "'");
  }
  return open(dir, maxBytes);
}

llvm::Expected<std::unique_ptr<KernelCache>> KernelCache::open(llvm::StringRef dir,
                                                               uint64_t maxBytes) {
  std::error_code ec;
  fs::create_directories(dir.str(), ec);
  if (ec || !fs::is_directory(dir.str()))
    return makeError("kernel cache: cannot create directory " + dir + ": " + ec.message());
  return std::unique_ptr<KernelCache>(new KernelCache(dir.str(), maxBytes));
}

KernelCache::~KernelCache() { flushStats(); }

std::string KernelCache::entryDir(llvm::StringRef key) const {
  return dir_ + "/" + key.take_front(2).str() + "/" + key.str();
}

bool KernelCache::removeEntryDir(llvm::StringRef key) const {
  std::string path = entryDir(key);
  std::string trash = dir_ + "/" + key.take_front(2).str() + "/.trash-" +
                      std::to_string(::getpid()) + "-" + randomHex();
  if (::rename(path.c_str(), trash.c_str()) != 0)
    return false; // already gone: another process removed it first
  std::error_code ec;
  fs::remove_all(trash, ec);
  return true;
}

std::string KernelCache::check(llvm::StringRef key, CacheEntryInfo *infoOut, std::string *cubinOut,
                               std::string *sourceOut) const {
  std::string path = entryDir(key);
  CacheEntryInfo info;
  if (std::string why = readEntryInfo(path, key, info); !why.empty())
    return why;
  auto cubin = readWholeFile(path + "/kernel.cubin");
  if (!cubin)
    return "kernel.cubin is missing";
  if (int64_t(cubin->size()) != info.cubinBytes)
    return "kernel.cubin has " + std::to_string(cubin->size()) + " bytes, meta.json says " +
           std::to_string(info.cubinBytes);
  if (sha256Hex(*cubin) != info.cubinSha256)
    return "kernel.cubin does not match its checksum";
  auto source = readWholeFile(path + "/kernel.cu");
  if (!source)
    return "kernel.cu is missing";
  if (sha256Hex(*source) != info.sourceSha256)
    return "kernel.cu does not match its checksum";
  if (infoOut)
    *infoOut = std::move(info);
  if (cubinOut)
    *cubinOut = std::move(*cubin);
  if (sourceOut)
    *sourceOut = std::move(*source);
  return {};
}

std::optional<CompiledKernel> KernelCache::lookup(llvm::StringRef key) {
  assert(isHexKey(key) && "cache keys are SHA-256 hex digests");
  std::string path = entryDir(key);
  if (!fs::exists(path)) {
    ++misses_;
    return std::nullopt;
  }
  CacheEntryInfo info;
  CompiledKernel k;
  if (std::string why = check(key, &info, &k.cubin, &k.source); !why.empty()) {
    // A concurrent gc may have removed the entry while we read it: that is a plain miss.
    if (fs::exists(path)) {
      spdlog::warn("kernel cache: entry {} is corrupt ({}); removing it", key.str(), why);
      removeEntryDir(key);
    }
    ++misses_;
    return std::nullopt;
  }
  // One appended byte records the hit and refreshes the last-use time; O_APPEND writes from
  // several processes do not overwrite each other.
  int fd = ::open((path + "/hits").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) {
    [[maybe_unused]] ssize_t n = ::write(fd, "h", 1);
    ::close(fd);
  }
  ++hits_;
  k.name = info.kernelName;
  k.templateName = info.templateName;
  k.arch = info.arch;
  k.launch = info.launch;
  k.resources = info.resources;
  k.compileSeconds = info.compileSeconds;
  k.cacheKey = key.str();
  k.cacheHit = true;
  return k;
}

llvm::Error KernelCache::store(const CompiledKernel &k, llvm::StringRef graphName,
                               llvm::StringRef group, llvm::ArrayRef<std::string> options,
                               llvm::StringRef codegenVersion) {
  assert(isHexKey(k.cacheKey) && "store needs the kernel's cache key");
  std::string finalDir = entryDir(k.cacheKey);
  if (fs::exists(finalDir))
    return llvm::Error::success();
  std::string parent = dir_ + "/" + k.cacheKey.substr(0, 2);
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string tmp = parent + "/.tmp-" + std::to_string(::getpid()) + "-" + randomHex();
  if (!fs::create_directory(tmp, ec))
    return makeError("kernel cache: cannot create " + tmp + ": " + ec.message());
  auto fail = [&](llvm::Error err) {
    fs::remove_all(tmp, ec);
    return err;
  };

  int64_t now = nowSeconds();
  json meta = {
      {"key", k.cacheKey},
      {"kernel", k.name},
      {"template", k.templateName},
      {"graph", graphName.str()},
      {"group", group.str()},
      {"arch", k.arch},
      {"nvrtc_version", nvrtcVersion()},
      {"options", std::vector<std::string>(options.begin(), options.end())},
      {"codegen_version", codegenVersion.str()},
      {"launch", launchToJson(k.launch)},
      {"resources",
       {{"registers", k.resources.registers},
        {"shared_bytes", k.resources.sharedBytes},
        {"spill_store_bytes", k.resources.spillStoreBytes},
        {"spill_load_bytes", k.resources.spillLoadBytes},
        {"stack_frame_bytes", k.resources.stackFrameBytes}}},
      {"compile_seconds", k.compileSeconds},
      {"cubin_bytes", int64_t(k.cubin.size())},
      {"cubin_sha256", sha256Hex(k.cubin)},
      {"source_sha256", sha256Hex(k.source)},
      {"created", now},
      // The live values are the `hits` file's size and mtime; these are the initial ones.
      {"last_used", now},
      {"hits", 0},
  };
  if (auto err = writeFileSynced(tmp + "/kernel.cubin", k.cubin))
    return fail(std::move(err));
  if (auto err = writeFileSynced(tmp + "/kernel.cu", k.source))
    return fail(std::move(err));
  if (auto err = writeFileSynced(tmp + "/hits", ""))
    return fail(std::move(err));
  if (auto err = writeFileSynced(tmp + "/meta.json", meta.dump(2) + "\n"))
    return fail(std::move(err));
  fsyncPath(tmp);
  if (::rename(tmp.c_str(), finalDir.c_str()) != 0) {
    int e = errno;
    fs::remove_all(tmp, ec);
    // Another process published the same key first; its entry is as good as ours.
    if (e == EEXIST || e == ENOTEMPTY)
      return llvm::Error::success();
    return makeError("kernel cache: cannot publish " + finalDir + ": " + std::strerror(e));
  }
  fsyncPath(parent);

  // Evict down to the bound, sparing the entry just stored.
  std::vector<EntryStat> entries = scanEntries(dir_);
  int64_t total = 0;
  for (const EntryStat &e : entries)
    total += e.bytes;
  if (uint64_t(total) > maxBytes_) {
    CacheLock lock(dir_);
    llvm::sort(entries, [](const EntryStat &a, const EntryStat &b) {
      return a.lastUsed != b.lastUsed ? a.lastUsed < b.lastUsed : a.key < b.key;
    });
    for (const EntryStat &e : entries) {
      if (uint64_t(total) <= maxBytes_)
        break;
      if (e.key == k.cacheKey)
        continue;
      if (removeEntryDir(e.key))
        total -= e.bytes;
    }
  }
  return llvm::Error::success();
}

} // namespace sinter
