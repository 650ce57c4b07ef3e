//===- runtime/KernelCache.h - the on-disk cache of compiled kernels ---------------===//
//
// The contract is ARCHITECTURE.md's "Kernel cache"; docs/cache.md is the user's view. A
// cubin is stored under the SHA-256 of everything that determines it (the generated source,
// the text of every embedded template, arch, NVRTC version, NVRTC options, code generator
// version) and nothing else, so any change misses and nothing else does. An entry is a
// directory `<dir>/<key[0:2]>/<key>/` holding kernel.cubin, kernel.cu and meta.json, plus a
// `hits` file that grows by one byte per hit (its size is the hit count, its mtime the last
// use), which keeps a hit to one O_APPEND write that concurrent processes can share.
//
// Entries are published by renaming a finished temporary directory, so readers never see a
// partial entry and two processes compiling the same key both succeed with one entry left.
// A lookup checks that every file is there, that meta.json parses and that the cubin's
// SHA-256 matches; anything else is reported, removed and treated as a miss. After a store,
// least-recently-used entries are evicted while the cache is over its size bound. The
// inspection API (list, stats, verify, gc, ...) is what the `sinter-cache` tool is made of.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "runtime/Nvrtc.h"
#include "templates/Templates.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sinter {

/// Everything that enters a cache key.
struct CacheKeyInputs {
  llvm::StringRef source;                 ///< the full generated source
  llvm::ArrayRef<TemplateFile> templates; ///< every embedded template (order does not matter)
  llvm::StringRef arch;
  llvm::StringRef nvrtcVersion;
  llvm::ArrayRef<std::string> options; ///< the NVRTC options, in order
  llvm::StringRef codegenVersion;
};

/// The key: 64 lower-case hex digits.
std::string computeCacheKey(const CacheKeyInputs &in);

/// The key of `k` compiled with `o` by this build (embedded templates, this NVRTC).
std::string cacheKeyFor(const KernelSource &k, const CompileOptions &o);

/// SHA-256 of `data` as lower-case hex.
std::string sha256Hex(llvm::StringRef data);

/// The metadata of one entry (meta.json; hits and lastUsed are read live from the entry).
struct CacheEntryInfo {
  std::string key;
  std::string kernelName, templateName;
  std::string graphName, group; ///< caller-supplied labels
  std::string arch, nvrtcVersion, codegenVersion;
  std::vector<std::string> options;
  LaunchConfig launch;
  ResourceUsage resources;
  double compileSeconds = 0;
  int64_t cubinBytes = 0;
  std::string cubinSha256, sourceSha256;
  int64_t created = 0;  ///< unix seconds
  int64_t lastUsed = 0; ///< unix seconds
  int64_t hits = 0;
  int64_t diskBytes = 0; ///< every file of the entry
};

struct CacheStats {
  int64_t entries = 0;
  int64_t bytes = 0;
  std::map<std::string, int64_t> entriesPerArch;
  int64_t hits = 0, misses = 0; ///< since the cache was created (stats.json)
};

struct CorruptEntry {
  std::string key;
  std::string reason;
  bool removed = false;
};

struct GcResult {
  int64_t removedEntries = 0;
  int64_t freedBytes = 0;
  int64_t remainingEntries = 0;
  int64_t remainingBytes = 0;
};

class KernelCache {
public:
  static constexpr uint64_t kDefaultMaxBytes = 2ull << 30;

  /// Where the cache lives per the environment: $SINTER_CACHE_DIR, else
  /// $XDG_CACHE_HOME/sinter, else ~/.cache/sinter. Empty when SINTER_CACHE=off (or no home).
  static std::string defaultDirectory();

  /// The cache the environment asks for (SINTER_CACHE_MAX_BYTES bounds it), or nullptr when
  /// SINTER_CACHE=off.
  static llvm::Expected<std::unique_ptr<KernelCache>> openDefault();

  /// A cache rooted at `dir` (created if missing).
  static llvm::Expected<std::unique_ptr<KernelCache>> open(llvm::StringRef dir,
                                                           uint64_t maxBytes = kDefaultMaxBytes);

  ~KernelCache(); ///< flushes the hit/miss counters

  const std::string &directory() const { return dir_; }
  uint64_t maxBytes() const { return maxBytes_; }

  /// The compiled kernel stored under `key`, or nullopt on a miss. A corrupt entry is
  /// reported (a warning naming the key), removed, and is a miss. Records a hit or a miss.
  std::optional<CompiledKernel> lookup(llvm::StringRef key);

  /// Publishes `k` (its cacheKey, cubin, source, report) with the given labels; then evicts
  /// least-recently-used entries if the cache is over its bound. Losing a publish race to
  /// another process is success.
  llvm::Error store(const CompiledKernel &k, llvm::StringRef graphName, llvm::StringRef group,
                    llvm::ArrayRef<std::string> options, llvm::StringRef codegenVersion);

  // --- inspection (sinter-cache) ---

  /// Every readable entry, most recently used first. Corrupt ones are skipped (see verify).
  std::vector<CacheEntryInfo> list() const;
  /// The full key of the one entry whose key starts with `prefix`.
  llvm::Expected<std::string> resolve(llvm::StringRef prefix) const;
  /// The metadata of one entry.
  llvm::Expected<CacheEntryInfo> info(llvm::StringRef key) const;
  /// The CUDA source of one entry.
  llvm::Expected<std::string> source(llvm::StringRef key) const;
  CacheStats stats() const;
  /// Checks every entry; with `fix` removes the corrupt ones.
  std::vector<CorruptEntry> verify(bool fix);
  llvm::Error remove(llvm::StringRef key);
  /// Removes entries unused for `olderThanSeconds` (if given), then least-recently-used ones
  /// until at most `maxBytes` (if given) remain. Stale temporary directories go too.
  GcResult gc(std::optional<uint64_t> maxBytes, std::optional<int64_t> olderThanSeconds);
  /// Removes every entry and the statistics.
  llvm::Error clear();

  /// Adds this process's hit/miss counts to stats.json (under the cache lock).
  void flushStats();

private:
  KernelCache(std::string dir, uint64_t maxBytes) : dir_(std::move(dir)), maxBytes_(maxBytes) {}
  std::string entryDir(llvm::StringRef key) const;
  /// Why the entry is unusable, or empty when it is complete and its checksum matches.
  std::string check(llvm::StringRef key, CacheEntryInfo *info, std::string *cubin,
                    std::string *source) const;
  bool removeEntryDir(llvm::StringRef key) const;

  std::string dir_;
  uint64_t maxBytes_;
  std::atomic<int64_t> hits_{0}, misses_{0};
};

} // namespace sinter
