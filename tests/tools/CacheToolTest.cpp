//===- tests/tools/CacheToolTest.cpp - sinter-cache on a cache filled by sinterc --------===//
//
// Fills a scratch kernel cache with `sinterc compile` (SINTER_CACHE_DIR) and runs every
// sinter-cache command on it, as text and as JSON: ls lists the manifest's cache keys, show
// resolves a unique prefix and prints the ptxas report and the source, stats counts hits and
// misses, verify finds and --fix removes a corrupted entry, rm / gc / clear remove what they
// should; then the error cases with their exact messages and exit statuses.
//
//===--------------------------------------------------------------------------------===//
#include "CliHarness.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

using namespace sinter::clitest;
using json = nlohmann::json;

namespace {

class CacheToolTest : public CliTest {
protected:
  void SetUp() override {
    CliTest::SetUp();
    Outcome o = sinterc("compile " + path("tiny.sir") + " -o " + path("b"));
    ASSERT_EQ(o.status, 0) << o.err;
    json m = json::parse(slurp(path("b/manifest.json")));
    for (const json &k : m.at("kernels")) {
      keys.insert(k.at("cache_key").get<std::string>());
      kernels.insert(k.at("name").get<std::string>());
    }
    ASSERT_FALSE(keys.empty());
  }

  /// `args` with --dir pointing at the scratch cache.
  Outcome cache(const std::string &args) const { return cacheTool(args + " --dir " + cacheDir()); }

  std::string entryPath(const std::string &key) const {
    return cacheDir() + "/" + key.substr(0, 2) + "/" + key;
  }

  std::set<std::string> listedKeys() const {
    Outcome o = cache("ls --json");
    EXPECT_EQ(o.status, 0) << o.err;
    std::set<std::string> out;
    for (const json &e : json::parse(o.out))
      out.insert(e.at("key").get<std::string>());
    return out;
  }

  std::set<std::string> keys, kernels;
};

TEST_F(CacheToolTest, LsListsEveryCompiledKernel) {
  EXPECT_EQ(listedKeys(), keys);
  Outcome o = cache("ls");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(llvm::StringRef(o.out).startswith("KEY ")) << o.out;
  EXPECT_NE(o.out.find("LAST USED"), std::string::npos);
  EXPECT_EQ(llvm::StringRef(o.out).count('\n'), keys.size() + 1) << o.out;
  for (const std::string &k : keys)
    EXPECT_NE(o.out.find(k.substr(0, 12) + "  tiny "), std::string::npos) << o.out;
  for (const std::string &k : kernels)
    EXPECT_NE(o.out.find(k), std::string::npos) << o.out;
  // The environment's cache is the same one.
  Outcome env = cacheTool("ls");
  EXPECT_EQ(env.out, o.out);
}

TEST_F(CacheToolTest, ShowByPrefix) {
  const std::string key = *keys.begin();
  Outcome o = cache("show " + key.substr(0, 8));
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("key              " + key), std::string::npos) << o.out;
  for (const char *field :
       {"registers", "static smem", "spill stores", "spill loads", "local memory",
        "launch           grid [", "options", "arch             sm_90a"})
    EXPECT_NE(o.out.find(field), std::string::npos) << field << "\n" << o.out;

  Outcome j = cache("show " + key.substr(0, 8) + " --json");
  ASSERT_EQ(j.status, 0) << j.err;
  json e = json::parse(j.out);
  EXPECT_EQ(e.at("key"), key);
  EXPECT_GT(e.at("registers").get<int>(), 0);
  EXPECT_GT(e.at("cubin_bytes").get<int64_t>(), 0);
  EXPECT_TRUE(kernels.count(e.at("kernel").get<std::string>()));

  Outcome src = cache("show " + key + " --source");
  ASSERT_EQ(src.status, 0) << src.err;
  EXPECT_NE(src.out.find("#include \"common.cuh\""), std::string::npos) << src.out;
  EXPECT_NE(src.out.find("#define SINTER_KERNEL " + e.at("kernel").get<std::string>()),
            std::string::npos);
}

TEST_F(CacheToolTest, ShowListsTensorMaps) {
  // A linear layer on sm_90a runs on the wgmma engine, which copies A and B through TMA: the
  // entry's launch carries the two tensor maps the runtime encodes at every launch.
  write("lin.sir", "graph lin(%x: f32[256,128], %w: param f32[128,128]) {\n"
                   "  %y = linear(%x, %w)\n  return %y\n}\n");
  Outcome o = sinterc("compile " + path("lin.sir") + " --arch sm_90a -o " + path("lb"));
  ASSERT_EQ(o.status, 0) << o.err;
  json m = json::parse(slurp(path("lb/manifest.json")));
  ASSERT_EQ(m.at("kernels").size(), 1u);
  const std::string key = m.at("kernels")[0].at("cache_key").get<std::string>();

  Outcome j = cache("show " + key + " --json");
  ASSERT_EQ(j.status, 0) << j.err;
  json maps = json::parse(j.out).at("launch").at("tensor_maps");
  ASSERT_EQ(maps.size(), 2u) << j.out;
  EXPECT_EQ(maps[0].at("slot"), 0);
  EXPECT_EQ(maps[1].at("slot"), 1);
  EXPECT_EQ(maps[0].at("dims"), json({128, 256})) << "A: K innermost, then M";

  Outcome t = cache("show " + key);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("tensor map       slot 0: dims [128,256] box [32,"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("tensor map       slot 1: dims [128,128]"), std::string::npos) << t.out;
}

TEST_F(CacheToolTest, ShowErrors) {
  expectError(cache("show 0123456789abcdef0123"),
              "sinter-cache: no cache entry matches '0123456789abcdef0123'");
  expectError(cache("show zz"), "sinter-cache: 'zz' is not a cache key (expected hex digits)");
  // A second entry sharing the first 40 digits makes that prefix ambiguous.
  const std::string key = *keys.begin();
  std::string twin = key.substr(0, 40) + std::string(24, key[40] == '0' ? '1' : '0');
  ASSERT_EQ(std::system(("cp -r " + entryPath(key) + " " + entryPath(twin)).c_str()), 0);
  expectError(cache("show " + key.substr(0, 40)),
              "sinter-cache: key prefix '" + key.substr(0, 40) + "' is ambiguous (2 entries)");
}

TEST_F(CacheToolTest, StatsCountsHitsAndMisses) {
  Outcome j = cache("stats --json");
  ASSERT_EQ(j.status, 0) << j.err;
  json s = json::parse(j.out);
  EXPECT_EQ(s.at("entries").get<size_t>(), keys.size());
  EXPECT_EQ(s.at("per_arch").at("sm_90a").get<size_t>(), keys.size());
  EXPECT_EQ(s.at("misses").get<size_t>(), keys.size());
  EXPECT_EQ(s.at("hits").get<size_t>(), 0u);
  ASSERT_EQ(sinterc("compile " + path("tiny.sir") + " -o " + path("b2")).status, 0);
  Outcome t = cache("stats");
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("entries    " + std::to_string(keys.size()) + "\n"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("hits       " + std::to_string(keys.size()) + "\n"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("sm_90a: " + std::to_string(keys.size()) + " entries"), std::string::npos);
}

TEST_F(CacheToolTest, VerifyFindsAndFixesCorruption) {
  Outcome clean = cache("verify");
  EXPECT_EQ(clean.status, 0) << clean.err;
  EXPECT_EQ(clean.out, "verified " + std::to_string(keys.size()) + " entries in " + cacheDir() +
                           ": 0 corrupt\n");

  const std::string key = *keys.begin();
  {
    std::ofstream cubin(entryPath(key) + "/kernel.cubin", std::ios::app | std::ios::binary);
    cubin << "x";
  }
  Outcome bad = cache("verify");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "sinter-cache: 1 corrupt entries remain in " + cacheDir() +
                         " (run 'sinter-cache verify --fix')\n");
  EXPECT_NE(bad.out.find(key.substr(0, 12) + "  corrupt: "), std::string::npos) << bad.out;
  EXPECT_TRUE(llvm::sys::fs::exists(entryPath(key)));

  Outcome fixed = cache("verify --fix --json");
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  json f = json::parse(fixed.out);
  ASSERT_EQ(f.at("corrupt").size(), 1u);
  EXPECT_EQ(f.at("corrupt")[0].at("key"), key);
  EXPECT_TRUE(f.at("corrupt")[0].at("removed").get<bool>());
  EXPECT_FALSE(llvm::sys::fs::exists(entryPath(key)));
  EXPECT_EQ(cache("verify").status, 0);
}

TEST_F(CacheToolTest, RmGcClear) {
  const std::string key = *keys.begin();
  Outcome rm = cache("rm " + key.substr(0, 10));
  ASSERT_EQ(rm.status, 0) << rm.err;
  EXPECT_EQ(rm.out, "removed " + key + "\n");
  std::set<std::string> rest = keys;
  rest.erase(key);
  EXPECT_EQ(listedKeys(), rest);

  // Nothing is a week old; everything is over a 0-byte bound.
  Outcome old = cache("gc --older-than 7d --json");
  ASSERT_EQ(old.status, 0) << old.err;
  EXPECT_EQ(json::parse(old.out).at("removed_entries").get<size_t>(), 0u);
  EXPECT_EQ(listedKeys(), rest);
  Outcome big = cache("gc --max-size 512M");
  ASSERT_EQ(big.status, 0) << big.err;
  EXPECT_NE(big.out.find("removed 0 entries"), std::string::npos) << big.out;
  if (!rest.empty()) {
    Outcome zero = cache("gc --max-size 0");
    ASSERT_EQ(zero.status, 0) << zero.err;
    EXPECT_NE(zero.out.find("removed " + std::to_string(rest.size()) + " entries"),
              std::string::npos)
        << zero.out;
    EXPECT_TRUE(listedKeys().empty());
  }

  ASSERT_EQ(sinterc("compile " + path("tiny.sir") + " -o " + path("b2")).status, 0);
  EXPECT_EQ(listedKeys(), keys);
  Outcome clear = cache("clear");
  ASSERT_EQ(clear.status, 0) << clear.err;
  EXPECT_NE(clear.out.find("removed " + std::to_string(keys.size()) + " entries"),
            std::string::npos)
      << clear.out;
  EXPECT_TRUE(listedKeys().empty());
  EXPECT_EQ(cache("ls").out, "no entries in " + cacheDir() + "\n");
}

TEST_F(CacheToolTest, BadInput) {
  expectError(cache("gc --max-size 12Q"),
              "sinter-cache: --max-size '12Q' is not a size like 512M or 2G");
  expectError(cache("gc --older-than 7"),
              "sinter-cache: --older-than '7' is not an age like 7d or 12h");
  expectError(cache("gc"), "sinter-cache: gc needs --max-size and/or --older-than");
  expectError(cache("rm beef"), "sinter-cache: no cache entry matches 'beef'");

  ASSERT_FALSE(llvm::sys::fs::create_directory(path("docs")));
  write("docs/notes.txt", "not a cache");
  expectError(cacheTool("clear --dir " + path("docs")),
              "sinter-cache: '" + path("docs") +
                  "' is not a sinter kernel cache (it holds "
                  "'notes.txt')");
  EXPECT_TRUE(llvm::sys::fs::exists(path("docs/notes.txt")));
  expectError(cacheTool("ls --dir " + path("nowhere")),
              "sinter-cache: '" + path("nowhere") + "' does not exist");
  expectError(cacheTool("ls --dir " + path("docs/notes.txt")),
              "sinter-cache: '" + path("docs/notes.txt") + "' is not a directory");

  Outcome unknown = cache("ls --everything");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_TRUE(llvm::StringRef(unknown.err).startswith("sinter-cache: ")) << unknown.err;
  EXPECT_EQ(llvm::StringRef(unknown.err).count('\n'), 1u) << unknown.err;
  Outcome none = cacheTool("");
  EXPECT_EQ(none.status, 1);
  Outcome help = cacheTool("gc --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--older-than 7d"), std::string::npos) << help.out;
}

} // namespace
