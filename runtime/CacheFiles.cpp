//===- runtime/CacheFiles.cpp - file-level helpers of the kernel cache --------------===//
//
// Durable writes (write, fsync, close), whole-file reads, the flock'ed `.lock`, stat-only
// scans for eviction, and meta.json decoding: the pieces KernelCache.cpp (lookup, store)
// and KernelCacheAdmin.cpp (inspection, gc) share.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/CacheFiles.h"

#include "ir/Error.h"

#include "llvm/ADT/StringExtras.h"

#include <fcntl.h>
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

namespace sinter::cachefs {

std::string jsonMessage(const json::exception &e) {
  // nlohmann prefixes "[json.exception.parse_error.101] "; the rest is the message.
  std::string what = e.what();
  if (size_t close = what.find("] ");
      what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
    what = what.substr(close + 2);
  return what;
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
  json j = {{"grid", {l.grid[0], l.grid[1], l.grid[2]}},
            {"block", {l.block[0], l.block[1], l.block[2]}},
            {"shared_bytes", l.sharedBytes}};
  if (l.persistent)
    j["persistent"] = true;
  if (l.persistentPerSm != 1)
    j["persistent_per_sm"] = l.persistentPerSm;
  if (l.coResident)
    j["co_resident"] = l.coResident;
  for (const TensorMapSpec &t : l.tensorMaps) {
    json m = {{"slot", t.slot}, {"swizzle128", t.swizzle128}};
    for (unsigned d = 0; d < t.rank; ++d) {
      m["dims"].push_back(t.dims[d]);
      m["box"].push_back(t.box[d]);
      if (d > 0)
        m["strides"].push_back(t.strides[d - 1]);
    }
    j["tensor_maps"].push_back(std::move(m));
  }
  return j;
}

LaunchConfig launchFromJson(const json &j) {
  LaunchConfig l;
  for (int i = 0; i < 3; ++i) {
    l.grid[i] = j.at("grid").at(i).get<unsigned>();
    l.block[i] = j.at("block").at(i).get<unsigned>();
  }
  l.sharedBytes = j.at("shared_bytes").get<unsigned>();
  l.persistent = j.value("persistent", false);
  l.persistentPerSm = j.value("persistent_per_sm", 1u);
  l.coResident = j.value("co_resident", 0u);
  // Ranks outside 1 .. 5 and more than kMaxTensorMaps maps are left to validatePlan; a
  // missing entry throws json's out_of_range like every other missing field.
  if (j.contains("tensor_maps"))
    for (const json &m : j.at("tensor_maps")) {
      TensorMapSpec t;
      t.slot = m.at("slot").get<int>();
      t.swizzle128 = m.at("swizzle128").get<bool>();
      t.rank = unsigned(m.at("dims").size());
      for (unsigned d = 0; d < std::min(t.rank, 5u); ++d) {
        t.dims[d] = m.at("dims").at(d).get<uint64_t>();
        t.box[d] = m.at("box").at(d).get<uint32_t>();
        if (d > 0)
          t.strides[d - 1] = m.at("strides").at(d - 1).get<uint64_t>();
      }
      l.tensorMaps.push_back(t);
    }
  return l;
}

std::string readEntryInfo(const std::string &path, llvm::StringRef key, CacheEntryInfo &info) {
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
    return "meta.json is malformed (" + jsonMessage(e) + ")";
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

} // namespace sinter::cachefs
