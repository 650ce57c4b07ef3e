//===- tools/sinter-cache/main.cpp - sinter-cache, the kernel cache inspector ---------===//
//
// A command-line face of runtime/KernelCache.h: list, show, stats, verify, rm, gc and
// clear, each as a table for people or as JSON (--json) for scripts, on the cache the
// environment selects ($SINTER_CACHE_DIR, $XDG_CACHE_HOME/sinter, ~/.cache/sinter) or on
// --dir. Before touching a directory the tool checks that it looks like a kernel cache
// (only two-hex-digit shards, stats.json and dot-files at the top), so that a mistyped
// --dir never has `clear` walk through someone's home. Exit status: 0 success, 1 bad input
// or corrupt entries left by verify (one line `sinter-cache: ...` on stderr), 2 internal.
//
//===--------------------------------------------------------------------------------===//
#include "Units.h"

#include "ir/Error.h"
#include "runtime/CacheFiles.h"
#include "runtime/Driver.h"
#include "runtime/KernelCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <exception>
#include <filesystem>

using json = nlohmann::json;
using namespace sinter;
using namespace sinter::cachetool;

namespace {

/// Options shared by every command.
struct Common {
  std::string dir;
  bool json = false;
};

/// A failed check (verify found corrupt entries that remain): exit 1 without a message line
/// of its own beyond the one printed.
struct CheckFailed {
  std::string message;
};

std::string timeText(int64_t unixSeconds) {
  if (unixSeconds <= 0)
    return "-";
  std::time_t t = std::time_t(unixSeconds);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

/// Refuses a directory that is not (or cannot be) a kernel cache.
llvm::Error checkCacheDir(const std::string &dir, bool explicitDir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (explicitDir)
      return makeError("'" + dir + "' does not exist");
    return llvm::Error::success(); // the default cache, not made yet: an empty cache
  }
  if (!fs::is_directory(dir, ec))
    return makeError("'" + dir + "' is not a directory");
  for (const auto &e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    bool shard = name.size() == 2 && llvm::all_of(name, llvm::isHexDigit) && e.is_directory();
    if (shard || name == "stats.json" || name[0] == '.')
      continue;
    return makeError("'" + dir + "' is not a sinter kernel cache (it holds '" + name + "')");
  }
  if (ec)
    return makeError("cannot read '" + dir + "': " + ec.message());
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<KernelCache>> openCache(const Common &c) {
  std::string dir = c.dir.empty() ? KernelCache::defaultDirectory() : c.dir;
  if (dir.empty())
    return makeError("the kernel cache is off (SINTER_CACHE=off) and no --dir was given");
  if (auto err = checkCacheDir(dir, !c.dir.empty()))
    return err;
  return KernelCache::open(dir);
}

json entryJson(const CacheEntryInfo &e) {
  return {{"key", e.key},
          {"kernel", e.kernelName},
          {"template", e.templateName},
          {"graph", e.graphName},
          {"group", e.group},
          {"arch", e.arch},
          {"nvrtc_version", e.nvrtcVersion},
          {"codegen_version", e.codegenVersion},
          {"options", e.options},
          {"launch", cachefs::launchToJson(e.launch)}, // as stored: persistent, tensor maps
          {"registers", e.resources.registers},
          {"static_shared_bytes", e.resources.sharedBytes},
          {"spill_store_bytes", e.resources.spillStoreBytes},
          {"spill_load_bytes", e.resources.spillLoadBytes},
          {"local_memory_bytes", e.resources.stackFrameBytes},
          {"compile_seconds", e.compileSeconds},
          {"cubin_bytes", e.cubinBytes},
          {"cubin_sha256", e.cubinSha256},
          {"source_sha256", e.sourceSha256},
          {"created", e.created},
          {"last_used", e.lastUsed},
          {"hits", e.hits},
          {"disk_bytes", e.diskBytes}};
}

/// "-" for the report's "unknown" (-1), else the number with `unit`.
std::string reported(int value, llvm::StringRef unit) {
  return value < 0 ? std::string("-") : std::to_string(value) + unit.str();
}

llvm::Error cmdLs(const Common &c) {
  auto cache = openCache(c);
  if (!cache)
    return cache.takeError();
  std::vector<CacheEntryInfo> entries = (*cache)->list();
  if (c.json) {
    json arr = json::array();
    for (const CacheEntryInfo &e : entries)
      arr.push_back(entryJson(e));
    llvm::outs() << arr.dump(2) << "\n";
    return llvm::Error::success();
  }
  if (entries.empty()) {
    llvm::outs() << "no entries in " << (*cache)->directory() << "\n";
    return llvm::Error::success();
  }
  // The graph and kernel columns are as wide as their longest entry.
  size_t wGraph = 5, wKernel = 6;
  for (const CacheEntryInfo &e : entries) {
    wGraph = std::max(wGraph, e.graphName.size());
    wKernel = std::max(wKernel, e.kernelName.size());
  }
  auto row = [&](llvm::StringRef key, llvm::StringRef graph, llvm::StringRef kernel,
                 llvm::StringRef arch, llvm::StringRef size, llvm::StringRef created,
                 llvm::StringRef used) {
    llvm::outs() << llvm::left_justify(key, 12) << "  " << llvm::left_justify(graph, wGraph) << "  "
                 << llvm::left_justify(kernel, wKernel) << "  " << llvm::left_justify(arch, 7)
                 << "  " << llvm::right_justify(size, 10) << "  " << llvm::left_justify(created, 16)
                 << "  " << used << "\n";
  };
  row("KEY", "GRAPH", "KERNEL", "ARCH", "SIZE", "CREATED", "LAST USED");
  for (const CacheEntryInfo &e : entries)
    row(llvm::StringRef(e.key).take_front(12), e.graphName, e.kernelName, e.arch,
        formatBytes(uint64_t(e.diskBytes)), timeText(e.created), timeText(e.lastUsed));
  return llvm::Error::success();
}

llvm::Error cmdShow(const Common &c, const std::string &prefix, bool source) {
  auto cache = openCache(c);
  if (!cache)
    return cache.takeError();
  auto key = (*cache)->resolve(prefix);
  if (!key)
    return key.takeError();
  if (source) {
    auto text = (*cache)->source(*key);
    if (!text)
      return text.takeError();
    if (c.json)
      llvm::outs() << json{{"key", *key}, {"source", *text}}.dump(2) << "\n";
    else
      llvm::outs() << *text;
    return llvm::Error::success();
  }
  auto info = (*cache)->info(*key);
  if (!info)
    return info.takeError();
  const CacheEntryInfo &e = *info;
  if (c.json) {
    llvm::outs() << entryJson(e).dump(2) << "\n";
    return llvm::Error::success();
  }
  auto line = [](llvm::StringRef label, const std::string &value) {
    llvm::outs() << llvm::format("%-16s %s\n", label.str().c_str(), value.c_str());
  };
  line("key", e.key);
  line("kernel", e.kernelName);
  line("template", e.templateName);
  line("graph", e.graphName);
  line("group", e.group);
  line("arch", e.arch);
  line("nvrtc", e.nvrtcVersion);
  line("codegen", e.codegenVersion);
  line("options", llvm::join(e.options, " "));
  line("launch", launchText(e.launch));
  // The runtime encodes each map at launch over the slot's address (kernel-abi.md).
  for (const TensorMapSpec &t : e.launch.tensorMaps)
    line("tensor map", tensorMapText(t));
  line("registers", reported(e.resources.registers, ""));
  line("static smem", reported(e.resources.sharedBytes, " B"));
  line("spill stores", reported(e.resources.spillStoreBytes, " B"));
  line("spill loads", reported(e.resources.spillLoadBytes, " B"));
  line("local memory", reported(e.resources.stackFrameBytes, " B per thread (stack frame)"));
  line("compile time", llvm::formatv("{0:f2} s", e.compileSeconds).str());
  line("cubin", std::to_string(e.cubinBytes) + " B, sha256 " + e.cubinSha256);
  line("source sha256", e.sourceSha256);
  line("created", timeText(e.created));
  line("last used", timeText(e.lastUsed));
  line("hits", std::to_string(e.hits));
  line("disk", formatBytes(uint64_t(e.diskBytes)));
  return llvm::Error::success();
}

llvm::Error cmdStats(const Common &c) {
  auto cache = openCache(c);
  if (!cache)
    return cache.takeError();
  CacheStats s = (*cache)->stats();
  if (c.json) {
    llvm::outs()
        << json{{"directory", (*cache)->directory()}, {"entries", s.entries}, {"bytes", s.bytes},
                {"per_arch", s.entriesPerArch},       {"hits", s.hits},       {"misses", s.misses}}
               .dump(2)
        << "\n";
    return llvm::Error::success();
  }
  llvm::outs() << "directory  " << (*cache)->directory() << "\n";
  llvm::outs() << "entries    " << s.entries << "\n";
  llvm::outs() << "size       " << formatBytes(uint64_t(s.bytes)) << " (" << s.bytes << " B)\n";
  for (const auto &[arch, n] : s.entriesPerArch)
    llvm::outs() << "  " << arch << ": " << n << " entries\n";
  llvm::outs() << "hits       " << s.hits << "\n";
  llvm::outs() << "misses     " << s.misses << "\n";
  return llvm::Error::success();
}

llvm::Error cmdVerify(const Common &c, bool fix) {
  auto cache = openCache(c);
  if (!cache)
    return cache.takeError();
  size_t entries = size_t((*cache)->stats().entries);
  std::vector<CorruptEntry> bad = (*cache)->verify(fix);
  size_t left = 0;
  for (const CorruptEntry &e : bad)
    left += !e.removed;
  if (c.json) {
    json arr = json::array();
    for (const CorruptEntry &e : bad)
      arr.push_back({{"key", e.key}, {"reason", e.reason}, {"removed", e.removed}});
    llvm::outs() << json{{"corrupt", arr}, {"remaining_corrupt", left}}.dump(2) << "\n";
  } else {
    for (const CorruptEntry &e : bad)
      llvm::outs() << e.key.substr(0, 12) << "  corrupt: " << e.reason
                   << (e.removed ? " (removed)" : "") << "\n";
    llvm::outs() << "verified " << entries << " entries in " << (*cache)->directory() << ": "
                 << bad.size() << " corrupt";
    if (!bad.empty())
      llvm::outs() << ", " << bad.size() - left << " removed";
    llvm::outs() << "\n";
  }
  if (left)
    throw CheckFailed{std::to_string(left) + " corrupt entries remain in " + (*cache)->directory() +
                      " (run 'sinter-cache verify --fix')"};
  return llvm::Error::success();
}

llvm::Error cmdRm(const Common &c, const std::string &prefix) {
  auto cache = openCache(c);
  if (!cache)
    return cache.takeError();
  auto key = (*cache)->resolve(prefix);
  if (!key)
    return key.takeError();
  if (auto err = (*cache)->remove(*key))
    return err;
  if (c.json)
    llvm::outs() << json{{"removed", *key}}.dump(2) << "\n";
  else
    llvm::outs() << "removed " << *key << "\n";
  return llvm::Error::success();
}

llvm::Error cmdGc(const Common &c, const std::string &maxSize, const std::string &olderThan) {
  std::optional<uint64_t> size;
  std::optional<int64_t> age;
  if (!maxSize.empty() && !(size = parseSize(maxSize)))
    return makeError("--max-size '" + maxSize + "' is not a size like 512M or 2G");
  if (!olderThan.empty() && !(age = parseAge(olderThan)))
    return makeError("--older-than '" + olderThan + "' is not an age like 7d or 12h");
  if (!size && !age)
    return makeError("gc needs --max-size and/or --older-than");
  auto cache = openCache(c);
  if (!cache)
    return cache.takeError();
  GcResult r = (*cache)->gc(size, age);
  if (c.json)
    llvm::outs() << json{{"removed_entries", r.removedEntries},
                         {"freed_bytes", r.freedBytes},
                         {"remaining_entries", r.remainingEntries},
                         {"remaining_bytes", r.remainingBytes}}
                        .dump(2)
                 << "\n";
  else
    llvm::outs() << "removed " << r.removedEntries << " entries ("
                 << formatBytes(uint64_t(r.freedBytes)) << "); " << r.remainingEntries
                 << " entries (" << formatBytes(uint64_t(r.remainingBytes)) << ") remain\n";
  return llvm::Error::success();
}

llvm::Error cmdClear(const Common &c) {
  auto cache = openCache(c);
  if (!cache)
    return cache.takeError();
  CacheStats before = (*cache)->stats();
  if (auto err = (*cache)->clear())
    return err;
  if (c.json)
    llvm::outs() << json{{"removed_entries", before.entries}, {"freed_bytes", before.bytes}}.dump(2)
                 << "\n";
  else
    llvm::outs() << "removed " << before.entries << " entries ("
                 << formatBytes(uint64_t(before.bytes)) << ") from " << (*cache)->directory()
                 << "\n";
  return llvm::Error::success();
}

void addCommon(CLI::App *sub, Common &c) {
  sub->add_option("--dir", c.dir,
                  "The cache directory (default: $SINTER_CACHE_DIR, $XDG_CACHE_HOME/sinter, "
                  "~/.cache/sinter)");
  sub->add_flag("--json", c.json, "Print JSON instead of text");
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"sinter-cache: inspect and tidy sinter's on-disk kernel cache.\n\n"
               "Each entry is one compiled kernel (cubin, CUDA source, metadata) under the\n"
               "SHA-256 key of everything that determines it. A unique prefix of a key is\n"
               "enough wherever a KEY is asked for. Exit status: 0 ok, 1 bad input or corrupt\n"
               "entries left (one line on stderr), 2 internal error.\n",
               "sinter-cache"};
  app.require_subcommand(1);
#ifndef SINTER_VERSION_STRING
#error "tools/CMakeLists.txt defines SINTER_VERSION_STRING (the project version)"
#endif
  app.set_version_flag("--version", std::string("sinter-cache ") + SINTER_VERSION_STRING);
  Common c;
  std::string key, maxSize, olderThan;
  bool source = false, fix = false;

  CLI::App *ls = app.add_subcommand("ls", "List entries, most recently used first");
  ls->footer("Columns: key prefix, graph, kernel, arch, size on disk, created, last used.\n"
             "Example:\n  sinter-cache ls\n  sinter-cache ls --json --dir /tmp/cache\n");
  CLI::App *show = app.add_subcommand("show", "Show one entry's metadata or --source");
  show->footer("Prints the kernel, template, graph, arch, NVRTC options, launch config and\n"
               "ptxas' report: registers, static shared memory, spills, local memory.\n"
               "Example:\n  sinter-cache show 3fa2\n  sinter-cache show 3fa2 --source\n");
  show->add_option("key", key, "The key or a unique prefix of it")->required();
  show->add_flag("--source", source, "Print the kernel's CUDA source instead");
  CLI::App *stats = app.add_subcommand("stats", "Entries, size, entries per arch, hits, misses");
  CLI::App *verify =
      app.add_subcommand("verify", "Check every entry's files and checksums (exit 1 if corrupt)");
  verify->add_flag("--fix", fix, "Remove the corrupt entries");
  CLI::App *rm = app.add_subcommand("rm", "Remove one entry");
  rm->add_option("key", key, "The key or a unique prefix of it")->required();
  CLI::App *gc = app.add_subcommand("gc", "Remove old entries, then least recently used ones");
  gc->footer("Sizes: 4096, 512K, 512M, 2G (binary units). Ages: 45s, 30m, 12h, 7d, 2w.\n"
             "Example:\n  sinter-cache gc --older-than 7d --max-size 1G\n");
  gc->add_option("--max-size", maxSize, "Keep at most this many bytes");
  gc->add_option("--older-than", olderThan, "Remove entries unused for this long");
  CLI::App *clear = app.add_subcommand("clear", "Remove every entry and the statistics");
  for (CLI::App *sub : {ls, show, stats, verify, rm, gc, clear})
    addCommon(sub, c);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::string message = e.what();
    while (!message.empty() && (message.back() == '\n' || message.back() == '.'))
      message.pop_back();
    if (!message.empty())
      message[0] = char(std::tolower(static_cast<unsigned char>(message[0])));
    llvm::errs() << "sinter-cache: " << message << " (see 'sinter-cache --help')\n";
    return 1;
  }

  try {
    llvm::Error err = llvm::Error::success();
    if (ls->parsed())
      err = cmdLs(c);
    else if (show->parsed())
      err = cmdShow(c, key, source);
    else if (stats->parsed())
      err = cmdStats(c);
    else if (verify->parsed())
      err = cmdVerify(c, fix);
    else if (rm->parsed())
      err = cmdRm(c, key);
    else if (gc->parsed())
      err = cmdGc(c, maxSize, olderThan);
    else if (clear->parsed())
      err = cmdClear(c);
    if (err) {
      llvm::errs() << "sinter-cache: " << llvm::toString(std::move(err)) << "\n";
      return 1;
    }
    llvm::outs().flush();
    return 0;
  } catch (const CheckFailed &f) {
    llvm::outs().flush();
    llvm::errs() << "sinter-cache: " << f.message << "\n";
    return 1;
  } catch (const std::exception &e) {
    llvm::errs() << "sinter-cache: internal error: " << e.what() << "\n";
    return 2;
  }
}
