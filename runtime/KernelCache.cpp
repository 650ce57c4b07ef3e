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

#include "ir/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace sinter {
namespace {

/// Feeds a length-prefixed field, so that moving bytes from one field to the next changes
/// the hash.
void feed(llvm::SHA256 &h, llvm::StringRef tag, llvm::StringRef value) {
  std::string header = tag.str() + ":" + std::to_string(value.size()) + ":";
  h.update(header);
  h.update(value);
}

int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t mtimeSeconds(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return -1;
  return int64_t(st.st_mtime);
}

int64_t fileSize(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return -1;
  return int64_t(st.st_size);
}

std::optional<std::string> readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

llvm::Error writeFileSynced(const std::string &path, llvm::StringRef data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return makeError("cannot create " + path + ": " + std::strerror(errno));
  const char *p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      return makeError("cannot write " + path + ": " + std::strerror(e));
    }
    p += n;
    left -= size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return makeError("cannot sync " + path + ": " + std::strerror(errno));
  return llvm::Error::success();
}

void fsyncPath(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

std::string randomHex() {
  static thread_local std::mt19937_64 rng{std::random_device{}() ^ (uint64_t(::getpid()) << 32)};
  return llvm::utohexstr(rng(), /*LowerCase=*/true);
}

bool isHexKey(llvm::StringRef s) {
  return s.size() == 64 &&
         llvm::all_of(s, [](char c) { return llvm::isHexDigit(c) && !(c >= 'A' && c <= 'F'); });
}

/// An exclusive flock on `<dir>/.lock` for the life of the object.
class CacheLock {
public:
  explicit CacheLock(const std::string &dir) {
    fd_ = ::open((dir + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~CacheLock() {
    if (fd_ >= 0) {
      ::flock(fd_, LOCK_UN);
      ::close(fd_);
    }
  }
  CacheLock(const CacheLock &) = delete;
  CacheLock &operator=(const CacheLock &) = delete;

private:
  int fd_ = -1;
};

/// What eviction needs of an entry, read with stat() alone.
struct EntryStat {
  std::string key;
  int64_t bytes = 0;
  int64_t lastUsed = 0;
};

/// Every entry's size and last use, from stat() alone: cheap enough to run after each store.
std::vector<EntryStat> scanEntries(const std::string &dir) {
  std::vector<EntryStat> out;
  std::error_code ec;
  for (const auto &shard : fs::directory_iterator(dir, ec)) {
    if (shard.path().filename().string().size() != 2)
      continue;
    for (const auto &entry : fs::directory_iterator(shard.path(), ec)) {
      std::string key = entry.path().filename().string();
      if (!isHexKey(key))
        continue;
      EntryStat e{key, 0, 0};
      for (const auto &f : fs::directory_iterator(entry.path(), ec))
        e.bytes += int64_t(f.file_size(ec));
      std::string base = entry.path().string();
      e.lastUsed = mtimeSeconds(base + "/hits");
      if (e.lastUsed < 0)
        e.lastUsed = mtimeSeconds(base + "/meta.json");
      out.push_back(std::move(e));
    }
  }
  return out;
}

json launchToJson(const LaunchConfig &l) {
  return {{"grid", {l.grid[0], l.grid[1], l.grid[2]}},
          {"block", {l.block[0], l.block[1], l.block[2]}},
          {"shared_bytes", l.sharedBytes}};
}

LaunchConfig launchFromJson(const json &j) {
  LaunchConfig l;
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = j.at("grid").at(i).get<unsigned>();
    l.block[i] = j.at("block").at(i).get<unsigned>();
  }
  l.sharedBytes = j.at("shared_bytes").get<unsigned>();
  return l;
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

/// Reads meta.json into `info` (and the live hit count and last use); returns why it failed.
static std::string readInfo(const std::string &path, llvm::StringRef key, CacheEntryInfo &info) {
  auto text = readWholeFile(path + "/meta.json");
  if (!text)
    return "meta.json is missing";
  try {
    json j = json::parse(*text);
    info.key = j.at("key").get<std::string>();
    if (info.key != key)
      return "meta.json names key " + info.key;
    info.kernelName = j.at("kernel").get<std::string>();
    info.templateName = j.at("template").get<std::string>();
    info.graphName = j.at("graph").get<std::string>();
    info.group = j.at("group").get<std::string>();
    info.arch = j.at("arch").get<std::string>();
    info.nvrtcVersion = j.at("nvrtc_version").get<std::string>();
    info.codegenVersion = j.at("codegen_version").get<std::string>();
    info.options = j.at("options").get<std::vector<std::string>>();
    info.launch = launchFromJson(j.at("launch"));
    const json &r = j.at("resources");
    info.resources.registers = r.at("registers").get<int>();
    info.resources.sharedBytes = r.at("shared_bytes").get<int>();
    info.resources.spillStoreBytes = r.at("spill_store_bytes").get<int>();
    info.resources.spillLoadBytes = r.at("spill_load_bytes").get<int>();
    info.resources.stackFrameBytes = r.at("stack_frame_bytes").get<int>();
    info.compileSeconds = j.at("compile_seconds").get<double>();
    info.cubinBytes = j.at("cubin_bytes").get<int64_t>();
    info.cubinSha256 = j.at("cubin_sha256").get<std::string>();
    info.sourceSha256 = j.at("source_sha256").get<std::string>();
    info.created = j.at("created").get<int64_t>();
  } catch (const json::exception &e) {
    // nlohmann prefixes "[json.exception.parse_error.101] "; the rest is the message.
    std::string what = e.what();
    if (size_t close = what.find("] ");
        what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    return "meta.json is malformed (" + what + ")";
  }
  int64_t hits = fileSize(path + "/hits");
  info.hits = hits < 0 ? 0 : hits;
  int64_t used = mtimeSeconds(path + "/hits");
  info.lastUsed = used < 0 ? info.created : used;
  info.diskBytes = 0;
  std::error_code ec;
  for (const auto &f : fs::directory_iterator(path, ec))
    if (f.is_regular_file(ec))
      info.diskBytes += int64_t(f.file_size(ec));
  return {};
}

std::string KernelCache::check(llvm::StringRef key, CacheEntryInfo *infoOut, std::string *cubinOut,
                               std::string *sourceOut) const {
  std::string path = entryDir(key);
  CacheEntryInfo info;
  if (std::string why = readInfo(path, key, info); !why.empty())
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

std::vector<CacheEntryInfo> KernelCache::list() const {
  std::vector<CacheEntryInfo> out;
  std::error_code ec;
  for (const auto &shard : fs::directory_iterator(dir_, ec)) {
    std::string shardName = shard.path().filename().string();
    if (shardName.size() != 2 || !shard.is_directory(ec))
      continue;
    for (const auto &entry : fs::directory_iterator(shard.path(), ec)) {
      std::string key = entry.path().filename().string();
      if (!isHexKey(key))
        continue;
      CacheEntryInfo info;
      if (readInfo(entry.path().string(), key, info).empty())
        out.push_back(std::move(info));
    }
  }
  llvm::sort(out, [](const CacheEntryInfo &a, const CacheEntryInfo &b) {
    return a.lastUsed != b.lastUsed ? a.lastUsed > b.lastUsed : a.key < b.key;
  });
  return out;
}

llvm::Expected<std::string> KernelCache::resolve(llvm::StringRef prefix) const {
  std::string p = prefix.lower();
  if (p.empty() || p.size() > 64 || !llvm::all_of(p, llvm::isHexDigit))
    return makeError("'" + prefix + "' is not a cache key (expected hex digits)");
  std::vector<std::string> matches;
  std::error_code ec;
  for (const auto &shard : fs::directory_iterator(dir_, ec)) {
    std::string shardName = shard.path().filename().string();
    if (shardName.size() != 2 || !llvm::StringRef(p).startswith(shardName.substr(0, p.size())))
      continue;
    for (const auto &entry : fs::directory_iterator(shard.path(), ec)) {
      std::string key = entry.path().filename().string();
      if (isHexKey(key) && llvm::StringRef(key).startswith(p))
        matches.push_back(key);
    }
  }
  if (matches.empty())
    return makeError("no cache entry matches '" + prefix + "'");
  if (matches.size() > 1)
    return makeError("key prefix '" + prefix + "' is ambiguous (" + std::to_string(matches.size()) +
                     " entries)");
  return matches.front();
}

llvm::Expected<CacheEntryInfo> KernelCache::info(llvm::StringRef key) const {
  CacheEntryInfo info;
  if (!isHexKey(key) || !fs::exists(entryDir(key)))
    return makeError("no cache entry " + key);
  if (std::string why = readInfo(entryDir(key), key, info); !why.empty())
    return makeError("cache entry " + key + " is corrupt: " + why);
  return info;
}

llvm::Expected<std::string> KernelCache::source(llvm::StringRef key) const {
  if (!isHexKey(key) || !fs::exists(entryDir(key)))
    return makeError("no cache entry " + key);
  auto text = readWholeFile(entryDir(key) + "/kernel.cu");
  if (!text)
    return makeError("cache entry " + key + " is corrupt: kernel.cu is missing");
  return *text;
}

CacheStats KernelCache::stats() const {
  CacheStats s;
  for (const CacheEntryInfo &e : list()) {
    ++s.entries;
    s.bytes += e.diskBytes;
    ++s.entriesPerArch[e.arch];
  }
  if (auto text = readWholeFile(dir_ + "/stats.json")) {
    try {
      json j = json::parse(*text);
      s.hits = j.value("hits", int64_t(0));
      s.misses = j.value("misses", int64_t(0));
    } catch (const json::exception &) {
      // A damaged stats.json only loses counters; flushStats rewrites it.
    }
  }
  s.hits += hits_;
  s.misses += misses_;
  return s;
}

void KernelCache::flushStats() {
  int64_t h = hits_.exchange(0), m = misses_.exchange(0);
  if (h == 0 && m == 0)
    return;
  CacheLock lock(dir_);
  json j = json::object();
  if (auto text = readWholeFile(dir_ + "/stats.json")) {
    try {
      j = json::parse(*text);
    } catch (const json::exception &) {
      j = json::object();
    }
  }
  if (!j.is_object())
    j = json::object();
  j["hits"] = j.value("hits", int64_t(0)) + h;
  j["misses"] = j.value("misses", int64_t(0)) + m;
  if (!j.contains("created"))
    j["created"] = nowSeconds();
  std::string tmp = dir_ + "/.stats-" + std::to_string(::getpid()) + "-" + randomHex();
  if (auto err = writeFileSynced(tmp, j.dump(2) + "\n")) {
    spdlog::warn("kernel cache: {}", llvm::toString(std::move(err)));
    return;
  }
  if (::rename(tmp.c_str(), (dir_ + "/stats.json").c_str()) != 0)
    ::unlink(tmp.c_str());
}

std::vector<CorruptEntry> KernelCache::verify(bool fix) {
  std::vector<CorruptEntry> out;
  std::error_code ec;
  std::vector<std::string> keys;
  for (const auto &shard : fs::directory_iterator(dir_, ec))
    if (shard.path().filename().string().size() == 2)
      for (const auto &entry : fs::directory_iterator(shard.path(), ec))
        if (isHexKey(entry.path().filename().string()))
          keys.push_back(entry.path().filename().string());
  llvm::sort(keys);
  for (const std::string &key : keys) {
    std::string why = check(key, nullptr, nullptr, nullptr);
    if (why.empty())
      continue;
    CorruptEntry c{key, why, false};
    if (fix) {
      CacheLock lock(dir_);
      c.removed = removeEntryDir(key);
    }
    out.push_back(std::move(c));
  }
  return out;
}

llvm::Error KernelCache::remove(llvm::StringRef key) {
  if (!isHexKey(key) || !fs::exists(entryDir(key)))
    return makeError("no cache entry " + key);
  CacheLock lock(dir_);
  removeEntryDir(key);
  return llvm::Error::success();
}

GcResult KernelCache::gc(std::optional<uint64_t> maxBytes, std::optional<int64_t> olderThan) {
  CacheLock lock(dir_);
  GcResult r;
  int64_t now = nowSeconds();
  std::vector<CacheEntryInfo> entries = list();
  // Oldest first, so the size bound removes the least recently used.
  std::reverse(entries.begin(), entries.end());
  int64_t total = 0;
  for (const CacheEntryInfo &e : entries)
    total += e.diskBytes;
  for (const CacheEntryInfo &e : entries) {
    bool tooOld = olderThan && now - e.lastUsed > *olderThan;
    bool overSize = maxBytes && uint64_t(total) > *maxBytes;
    if ((tooOld || overSize) && removeEntryDir(e.key)) {
      ++r.removedEntries;
      r.freedBytes += e.diskBytes;
      total -= e.diskBytes;
      continue;
    }
    ++r.remainingEntries;
  }
  r.remainingBytes = total;
  // Temporary and trash directories left by crashed processes (an hour is far longer than
  // any publish takes).
  std::error_code ec;
  for (const auto &shard : fs::directory_iterator(dir_, ec)) {
    if (shard.path().filename().string().size() != 2)
      continue;
    for (const auto &entry : fs::directory_iterator(shard.path(), ec)) {
      llvm::StringRef name = entry.path().filename().native();
      if ((name.startswith(".tmp-") || name.startswith(".trash-")) &&
          now - mtimeSeconds(entry.path().string()) > 3600)
        fs::remove_all(entry.path(), ec);
    }
  }
  return r;
}

llvm::Error KernelCache::clear() {
  CacheLock lock(dir_);
  std::error_code ec;
  std::vector<fs::path> shards;
  for (const auto &shard : fs::directory_iterator(dir_, ec))
    if (shard.path().filename().string().size() == 2 && shard.is_directory(ec))
      shards.push_back(shard.path());
  for (const fs::path &p : shards) {
    fs::remove_all(p, ec);
    if (ec)
      return makeError("kernel cache: cannot remove " + p.string() + ": " + ec.message());
  }
  fs::remove(dir_ + "/stats.json", ec);
  hits_ = 0;
  misses_ = 0;
  return llvm::Error::success();
}

} // namespace sinter
