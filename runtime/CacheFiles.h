//===- runtime/CacheFiles.h - file-level helpers of the kernel cache (internal) ------===//
//
// Shared by KernelCache.cpp and KernelCacheAdmin.cpp only; not part of the runtime's API.
// Everything here either succeeds or reports why in its return value: a cache never throws
// or aborts over what it finds on disk.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "runtime/KernelCache.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include "nlohmann/json.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sinter::cachefs {

using json = nlohmann::json;

int64_t nowSeconds();
/// -1 when the file does not exist.
int64_t mtimeSeconds(const std::string &path);
/// -1 when the file does not exist.
int64_t fileSize(const std::string &path);
std::optional<std::string> readWholeFile(const std::string &path);
/// Writes, fsyncs and closes `path`.
llvm::Error writeFileSynced(const std::string &path, llvm::StringRef data);
/// fsync of a directory (its entries), best effort.
void fsyncPath(const std::string &path);
/// 16 random hex digits, for temporary names.
std::string randomHex();
/// 64 lower-case hex digits.
bool isHexKey(llvm::StringRef s);
/// An nlohmann error message without its "[json.exception...] " prefix.
std::string jsonMessage(const json::exception &e);

json launchToJson(const LaunchConfig &l);
/// Throws json::exception on a malformed object.
LaunchConfig launchFromJson(const json &j);

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

/// Every entry's size and last use, from stat() alone.
std::vector<EntryStat> scanEntries(const std::string &dir);

/// Reads `<path>/meta.json` (and the live hit count and last use) into `info`; returns why it
/// could not, or empty on success.
std::string readEntryInfo(const std::string &path, llvm::StringRef key, CacheEntryInfo &info);

} // namespace sinter::cachefs
