//===- runtime/KernelCacheAdmin.cpp - inspecting and trimming the kernel cache ------===//
//
// The operations behind `sinter-cache`: listing, key-prefix lookup, statistics, verification,
// removal, garbage collection and clearing. Removals hold the cache's `.lock` so that two
// collectors never race; readers elsewhere are safe because an entry is renamed away before
// it is deleted (runtime/KernelCache.cpp).
//
//===--------------------------------------------------------------------------------===//
#include "runtime/KernelCache.h"

#include "ir/Error.h"
#include "runtime/CacheFiles.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include "spdlog/spdlog.h"

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using namespace sinter::cachefs;

namespace sinter {

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
      if (readEntryInfo(entry.path().string(), key, info).empty())
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
  if (std::string why = readEntryInfo(entryDir(key), key, info); !why.empty())
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
