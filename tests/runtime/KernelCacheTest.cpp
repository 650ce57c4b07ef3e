//===- tests/runtime/KernelCacheTest.cpp - the kernel cache contract -----------------===//
//
// ARCHITECTURE.md "Kernel cache", clause by clause: the key changes with each ingredient and
// nothing else; entries round-trip; a truncated cubin, a flipped byte and a missing or broken
// meta.json are detected, removed and recompiled; two processes compiling the same keys at
// once both succeed and leave one valid entry per key; LRU eviction by size and age; the
// environment variables; the inspection API that sinter-cache is built on.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/KernelCache.h"
#include "tests/runtime/TestKernels.h"

#include "llvm/Support/Program.h"

#include "gtest/gtest.h"

#include <sys/time.h>
#include <utime.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace sinter;
namespace fs = std::filesystem;

namespace {

std::string entryPath(const KernelCache &c, const std::string &key) {
  return c.directory() + "/" + key.substr(0, 2) + "/" + key;
}

CompiledKernel fakeKernel(const std::string &name, size_t cubinBytes = 1000) {
  CompiledKernel k;
  k.name = name;
  k.templateName = "common.cuh";
  k.arch = "sm_90a";
  k.cubin = std::string(cubinBytes, 'c') + name;
  k.source = "// source of " + name + "\n";
  k.resources.registers = 32;
  k.resources.sharedBytes = 0;
  k.resources.spillStoreBytes = 0;
  k.resources.spillLoadBytes = 0;
  k.resources.stackFrameBytes = 0;
  k.launch.grid = {4, 2, 1};
  k.launch.block = {128, 1, 1};
  k.launch.sharedBytes = 4096;
  k.launch.persistent = true;
  k.launch.persistentPerSm = 2;
  k.launch.coResident = 149;
  k.compileSeconds = 0.25;
  std::vector<TemplateFile> none;
  k.cacheKey = computeCacheKey({k.source, none, "sm_90a", "13.0", {}, "test"});
  return k;
}

void setLastUsed(const KernelCache &c, const std::string &key, int64_t secondsAgo) {
  std::string hits = entryPath(c, key) + "/hits";
  int64_t t = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count() -
              secondsAgo;
  struct utimbuf times {
    time_t(t), time_t(t)
  };
  ASSERT_EQ(::utime(hits.c_str(), &times), 0) << hits;
}

void writeFile(const std::string &path, const std::string &data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto c = KernelCache::open(dir.path() + "/cache");
    ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
    cache = std::move(*c);
  }
  test::TempDir dir;
  std::unique_ptr<KernelCache> cache;
};

} // namespace

TEST(CacheKey, EachIngredientChangesTheKey) {
  std::vector<TemplateFile> templates = {{"a.cuh", "int a;"}, {"b.cuh", "int b;"}};
  std::vector<std::string> options = {"--gpu-architecture=sm_90a", "-std=c++17"};
  CacheKeyInputs base{"source", templates, "sm_90a", "13.0", options, "codegen-1"};
  std::string key = computeCacheKey(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, computeCacheKey(base)) << "the key is deterministic";

  CacheKeyInputs in = base;
  in.source = "source ";
  EXPECT_NE(computeCacheKey(in), key) << "source";

  std::vector<TemplateFile> changed = {{"a.cuh", "int a;"}, {"b.cuh", "int b; "}};
  in = base;
  in.templates = changed;
  EXPECT_NE(computeCacheKey(in), key) << "a template's text";

  std::vector<TemplateFile> added = {{"a.cuh", "int a;"}, {"b.cuh", "int b;"}, {"c.cuh", ""}};
  in = base;
  in.templates = added;
  EXPECT_NE(computeCacheKey(in), key) << "a new template";

  in = base;
  in.arch = "sm_80";
  EXPECT_NE(computeCacheKey(in), key) << "arch";

  in = base;
  in.nvrtcVersion = "13.1";
  EXPECT_NE(computeCacheKey(in), key) << "nvrtc version";

  std::vector<std::string> moreOptions = {"--gpu-architecture=sm_90a", "-std=c++17", "-lineinfo"};
  in = base;
  in.options = moreOptions;
  EXPECT_NE(computeCacheKey(in), key) << "options";

  in = base;
  in.codegenVersion = "codegen-2";
  EXPECT_NE(computeCacheKey(in), key) << "codegen version";

  // Field boundaries are part of the hash: moving text between fields changes the key.
  CacheKeyInputs shifted{"sourcesm_90a", templates, "", "13.0", options, "codegen-1"};
  EXPECT_NE(computeCacheKey(shifted), key);

  // Template order is not an ingredient (the set is).
  std::vector<TemplateFile> reversed = {{"b.cuh", "int b;"}, {"a.cuh", "int a;"}};
  in = base;
  in.templates = reversed;
  EXPECT_EQ(computeCacheKey(in), key) << "template order";
}

TEST(CacheKey, NothingButTheIngredientsEntersTheKey) {
  CompileOptions o;
  o.codegenVersion = "codegen-1";
  KernelSource a = test::axpyKernel("key_probe");
  KernelSource b = a;
  b.launch.grid = {99, 9, 9};
  b.launch.sharedBytes = 12345;
  b.tileConfig = "another tile";
  b.flops = 1e9;
  b.bytes = 1e6;
  b.templateName = "gemm.cuh";
  b.workspace.push_back({4, 1024, WorkspaceNeed::Init::Zero, "stats"});
  EXPECT_EQ(cacheKeyFor(a, o), cacheKeyFor(b, o));

  CompileOptions other = o;
  other.arch = "sm_80";
  EXPECT_NE(cacheKeyFor(a, other), cacheKeyFor(a, o));
  other = o;
  other.extraFlags = {"-lineinfo"};
  EXPECT_NE(cacheKeyFor(a, other), cacheKeyFor(a, o));
  other = o;
  other.codegenVersion = "codegen-2";
  EXPECT_NE(cacheKeyFor(a, other), cacheKeyFor(a, o));
  // The embedded templates and this NVRTC are the ones cacheKeyFor hashes.
  std::vector<std::string> options = nvrtcOptions(o);
  EXPECT_EQ(cacheKeyFor(a, o), computeCacheKey({a.source, templateFiles(), o.arch, nvrtcVersion(),
                                                options, o.codegenVersion}));
}

TEST_F(KernelCacheTest, StoreThenLookupHits) {
  CompiledKernel k = fakeKernel("stored");
  EXPECT_FALSE(cache->lookup(k.cacheKey).has_value());
  ASSERT_FALSE(bool(cache->store(k, "graph_s0", "conv+relu+gn", {"-std=c++17"}, "cg1")));
  auto hit = cache->lookup(k.cacheKey);
  ASSERT_TRUE(hit.has_value());
  EXPECT_TRUE(hit->cacheHit);
  EXPECT_EQ(hit->cubin, k.cubin);
  EXPECT_EQ(hit->source, k.source);
  EXPECT_EQ(hit->name, "stored");
  EXPECT_EQ(hit->arch, "sm_90a");
  EXPECT_EQ(hit->launch.grid[1], 2u);
  EXPECT_EQ(hit->launch.sharedBytes, 4096u);
  EXPECT_TRUE(hit->launch.persistent);
  EXPECT_EQ(hit->launch.persistentPerSm, 2u);
  EXPECT_EQ(hit->launch.coResident, 149u);
  EXPECT_EQ(hit->resources.registers, 32);
  EXPECT_DOUBLE_EQ(hit->compileSeconds, 0.25);

  std::string path = entryPath(*cache, k.cacheKey);
  EXPECT_TRUE(fs::exists(path + "/kernel.cubin"));
  EXPECT_TRUE(fs::exists(path + "/kernel.cu"));
  EXPECT_TRUE(fs::exists(path + "/meta.json"));
  auto info = cache->info(k.cacheKey);
  ASSERT_TRUE(bool(info)) << llvm::toString(info.takeError());
  EXPECT_EQ(info->graphName, "graph_s0");
  EXPECT_EQ(info->group, "conv+relu+gn");
  EXPECT_EQ(info->codegenVersion, "cg1");
  EXPECT_EQ(info->options, std::vector<std::string>{"-std=c++17"});
  EXPECT_EQ(info->hits, 1);
  EXPECT_EQ(info->cubinBytes, int64_t(k.cubin.size()));
  EXPECT_EQ(info->cubinSha256, sha256Hex(k.cubin));
  EXPECT_GT(info->created, 0);
  cache->lookup(k.cacheKey);
  EXPECT_EQ(cache->info(k.cacheKey)->hits, 2);

  CacheStats s = cache->stats();
  EXPECT_EQ(s.entries, 1);
  EXPECT_EQ(s.entriesPerArch["sm_90a"], 1);
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.misses, 1);
  cache->flushStats();
  EXPECT_TRUE(fs::exists(cache->directory() + "/stats.json"));
  auto reopened = KernelCache::open(cache->directory());
  ASSERT_TRUE(bool(reopened));
  EXPECT_EQ((*reopened)->stats().hits, 2);
  EXPECT_EQ((*reopened)->stats().misses, 1);
}

TEST_F(KernelCacheTest, StoringAnExistingKeyKeepsTheEntry) {
  CompiledKernel k = fakeKernel("twice");
  ASSERT_FALSE(bool(cache->store(k, "g", "", {}, "")));
  ASSERT_FALSE(bool(cache->store(k, "other label", "", {}, "")));
  EXPECT_EQ(cache->list().size(), 1u);
  EXPECT_EQ(cache->info(k.cacheKey)->graphName, "g");
}

namespace {

/// Stores a real compiled kernel, damages it with `damage`, and checks that the next
/// compileAll finds it corrupt, removes it, recompiles and stores a good entry again.
void expectDetectedAndRecompiled(KernelCache &cache,
                                 const std::function<void(const std::string &)> &damage) {
  CompileOptions o;
  o.codegenVersion = "corruption-test";
  std::vector<KernelSource> ks = {test::axpyKernel("damaged_kernel")};
  auto first = compileAll(ks, o, &cache, 1);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  EXPECT_FALSE((*first)[0].cacheHit);
  std::string key = (*first)[0].cacheKey;
  std::string path = cache.directory() + "/" + key.substr(0, 2) + "/" + key;
  damage(path);
  EXPECT_EQ(cache.verify(false).size(), 1u);
  EXPECT_FALSE(cache.lookup(key).has_value()) << "a damaged entry is a miss";
  EXPECT_FALSE(fs::exists(path)) << "and it is removed";
  auto second = compileAll(ks, o, &cache, 1);
  ASSERT_TRUE(bool(second)) << llvm::toString(second.takeError());
  EXPECT_FALSE((*second)[0].cacheHit) << "recompiled";
  EXPECT_EQ((*second)[0].cubin, (*first)[0].cubin);
  auto third = compileAll(ks, o, &cache, 1);
  ASSERT_TRUE(bool(third));
  EXPECT_TRUE((*third)[0].cacheHit) << "and stored again";
  EXPECT_TRUE(cache.verify(false).empty());
}

} // namespace

TEST_F(KernelCacheTest, TruncatedCubinIsDetected) {
  expectDetectedAndRecompiled(*cache, [](const std::string &path) {
    std::string cubin = readFile(path + "/kernel.cubin");
    writeFile(path + "/kernel.cubin", cubin.substr(0, cubin.size() / 2));
  });
}

TEST_F(KernelCacheTest, FlippedByteIsDetected) {
  expectDetectedAndRecompiled(*cache, [](const std::string &path) {
    std::string cubin = readFile(path + "/kernel.cubin");
    cubin[cubin.size() / 3] ^= 0x01;
    writeFile(path + "/kernel.cubin", cubin);
  });
}

TEST_F(KernelCacheTest, MissingMetadataIsDetected) {
  expectDetectedAndRecompiled(*cache,
                              [](const std::string &path) { fs::remove(path + "/meta.json"); });
}

TEST_F(KernelCacheTest, MalformedMetadataIsDetected) {
  expectDetectedAndRecompiled(
      *cache, [](const std::string &path) { writeFile(path + "/meta.json", "{\"key\": "); });
}

TEST_F(KernelCacheTest, MissingSourceIsDetected) {
  expectDetectedAndRecompiled(*cache,
                              [](const std::string &path) { fs::remove(path + "/kernel.cu"); });
}

TEST_F(KernelCacheTest, TwoProcessesCompilingTheSameKeysAtOnce) {
  // Both helpers wait for the same instant, then compile the same four kernels through the
  // cache, so that every key is compiled twice and published by whichever is first.
  int64_t startMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count() +
                    1500;
  std::string start = std::to_string(startMs);
  llvm::SmallVector<llvm::sys::ProcessInfo, 2> procs;
  for (int i = 0; i < 2; ++i) {
    std::string err;
    llvm::StringRef args[] = {SINTER_CACHE_RACE_HELPER, cache->directory(), start};
    procs.push_back(
        llvm::sys::ExecuteNoWait(SINTER_CACHE_RACE_HELPER, args, llvm::None, {}, 0, &err));
    ASSERT_NE(procs.back().Pid, llvm::sys::ProcessInfo::InvalidPid) << err;
  }
  for (auto &p : procs) {
    std::string err;
    llvm::sys::ProcessInfo done = llvm::sys::Wait(p, 120, true, &err);
    EXPECT_EQ(done.ReturnCode, 0) << err;
  }
  std::vector<CacheEntryInfo> entries = cache->list();
  EXPECT_EQ(entries.size(), 4u);
  EXPECT_TRUE(cache->verify(false).empty());
  // No temporary directory is left behind by the loser of a race.
  for (const auto &shard : fs::directory_iterator(cache->directory()))
    if (shard.is_directory()) {
      for (const auto &e : fs::directory_iterator(shard.path()))
        EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
    }
  CacheStats s = cache->stats();
  EXPECT_EQ(s.hits + s.misses, 8) << "every lookup of both processes is counted";
}

TEST_F(KernelCacheTest, EvictsLeastRecentlyUsedOnStore) {
  CompiledKernel a = fakeKernel("lru_a", 4000), b = fakeKernel("lru_b", 4000),
                 c = fakeKernel("lru_c", 4000);
  auto small = KernelCache::open(cache->directory(), 10000); // room for two entries
  ASSERT_TRUE(bool(small));
  KernelCache &sc = **small;
  ASSERT_FALSE(bool(sc.store(a, "", "", {}, "")));
  ASSERT_FALSE(bool(sc.store(b, "", "", {}, "")));
  setLastUsed(sc, a.cacheKey, 100);
  setLastUsed(sc, b.cacheKey, 50);
  ASSERT_TRUE(sc.lookup(a.cacheKey).has_value()); // a is now the most recently used
  ASSERT_FALSE(bool(sc.store(c, "", "", {}, "")));
  EXPECT_TRUE(fs::exists(entryPath(sc, a.cacheKey)));
  EXPECT_FALSE(fs::exists(entryPath(sc, b.cacheKey))) << "b was the least recently used";
  EXPECT_TRUE(fs::exists(entryPath(sc, c.cacheKey))) << "the new entry is kept";
}

TEST_F(KernelCacheTest, GcBySizeAndAge) {
  std::vector<CompiledKernel> ks;
  for (int i = 0; i < 4; ++i) {
    ks.push_back(fakeKernel("gc_" + std::to_string(i), 3000));
    ASSERT_FALSE(bool(cache->store(ks.back(), "", "", {}, "")));
  }
  const int64_t day = 86400;
  setLastUsed(*cache, ks[0].cacheKey, 10 * day);
  setLastUsed(*cache, ks[1].cacheKey, 3 * day);
  setLastUsed(*cache, ks[2].cacheKey, 2 * day);
  setLastUsed(*cache, ks[3].cacheKey, 0);

  GcResult byAge = cache->gc(std::nullopt, 7 * day);
  EXPECT_EQ(byAge.removedEntries, 1);
  EXPECT_FALSE(fs::exists(entryPath(*cache, ks[0].cacheKey)));
  EXPECT_EQ(byAge.remainingEntries, 3);

  int64_t perEntry = cache->info(ks[3].cacheKey)->diskBytes;
  GcResult bySize = cache->gc(uint64_t(perEntry * 2), std::nullopt);
  EXPECT_EQ(bySize.removedEntries, 1);
  EXPECT_FALSE(fs::exists(entryPath(*cache, ks[1].cacheKey))) << "oldest of the three";
  EXPECT_TRUE(fs::exists(entryPath(*cache, ks[2].cacheKey)));
  EXPECT_TRUE(fs::exists(entryPath(*cache, ks[3].cacheKey)));
  EXPECT_LE(bySize.remainingBytes, perEntry * 2);
}

TEST_F(KernelCacheTest, GcRemovesStaleTemporaries) {
  CompiledKernel k = fakeKernel("tmp_owner");
  ASSERT_FALSE(bool(cache->store(k, "", "", {}, "")));
  std::string shard = cache->directory() + "/" + k.cacheKey.substr(0, 2);
  std::string stale = shard + "/.tmp-1-dead", fresh = shard + "/.tmp-2-busy";
  fs::create_directories(stale);
  fs::create_directories(fresh);
  struct utimbuf old {
    time_t(1000), time_t(1000)
  };
  ASSERT_EQ(::utime(stale.c_str(), &old), 0);
  cache->gc(std::nullopt, std::nullopt);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh)) << "a publish may be in progress";
  EXPECT_TRUE(fs::exists(entryPath(*cache, k.cacheKey)));
}

TEST_F(KernelCacheTest, ResolveRemoveVerifyClear) {
  CompiledKernel a = fakeKernel("inspect_a"), b = fakeKernel("inspect_b");
  ASSERT_FALSE(bool(cache->store(a, "", "", {}, "")));
  ASSERT_FALSE(bool(cache->store(b, "", "", {}, "")));
  auto full = cache->resolve(a.cacheKey.substr(0, 12));
  ASSERT_TRUE(bool(full)) << llvm::toString(full.takeError());
  EXPECT_EQ(*full, a.cacheKey);
  EXPECT_EQ(llvm::toString(cache->resolve("").takeError()),
            "'' is not a cache key (expected hex digits)");
  EXPECT_EQ(llvm::toString(cache->resolve("xyz").takeError()),
            "'xyz' is not a cache key (expected hex digits)");
  // A prefix shared by both keys (the empty-shard case aside, pick the common leading digits).
  size_t common = 0;
  while (a.cacheKey[common] == b.cacheKey[common])
    ++common;
  if (common > 0) {
    std::string prefix = a.cacheKey.substr(0, common);
    EXPECT_EQ(llvm::toString(cache->resolve(prefix).takeError()),
              "key prefix '" + prefix + "' is ambiguous (2 entries)");
  }
  std::string missing = a.cacheKey[0] == '0' ? "1" : "0";
  missing += a.cacheKey.substr(1, 10);
  if (!llvm::StringRef(b.cacheKey).startswith(missing)) {
    EXPECT_EQ(llvm::toString(cache->resolve(missing).takeError()),
              "no cache entry matches '" + missing + "'");
  }
  auto src = cache->source(a.cacheKey);
  ASSERT_TRUE(bool(src));
  EXPECT_EQ(*src, a.source);

  writeFile(entryPath(*cache, b.cacheKey) + "/kernel.cubin", "garbage");
  std::vector<CorruptEntry> bad = cache->verify(false);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].key, b.cacheKey);
  EXPECT_EQ(bad[0].reason,
            "kernel.cubin has 7 bytes, meta.json says " + std::to_string(b.cubin.size()));
  EXPECT_FALSE(bad[0].removed);
  bad = cache->verify(true);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_TRUE(bad[0].removed);
  EXPECT_TRUE(cache->verify(false).empty());

  ASSERT_FALSE(bool(cache->remove(a.cacheKey)));
  EXPECT_EQ(llvm::toString(cache->remove(a.cacheKey)), "no cache entry " + a.cacheKey);
  EXPECT_TRUE(cache->list().empty());

  ASSERT_FALSE(bool(cache->store(a, "", "", {}, "")));
  cache->lookup(a.cacheKey);
  cache->flushStats();
  ASSERT_FALSE(bool(cache->clear()));
  EXPECT_TRUE(cache->list().empty());
  EXPECT_EQ(cache->stats().hits, 0);
}

namespace {

/// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

} // namespace

TEST(CacheEnvironment, DirectoryPrecedenceAndOff) {
  ScopedEnv off("SINTER_CACHE", nullptr), dir("SINTER_CACHE_DIR", "/tmp/explicit"),
      xdg("XDG_CACHE_HOME", "/tmp/xdg"), home("HOME", "/tmp/home"),
      max("SINTER_CACHE_MAX_BYTES", nullptr);
  EXPECT_EQ(KernelCache::defaultDirectory(), "/tmp/explicit");
  {
    ScopedEnv noDir("SINTER_CACHE_DIR", nullptr);
    EXPECT_EQ(KernelCache::defaultDirectory(), "/tmp/xdg/sinter");
    ScopedEnv noXdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(KernelCache::defaultDirectory(), "/tmp/home/.cache/sinter");
  }
  ScopedEnv disabled("SINTER_CACHE", "off");
  EXPECT_EQ(KernelCache::defaultDirectory(), "");
  auto c = KernelCache::openDefault();
  ASSERT_TRUE(bool(c));
  EXPECT_EQ(c->get(), nullptr);
}

TEST(CacheEnvironment, MaxBytesFromTheEnvironment) {
  test::TempDir dir;
  ScopedEnv off("SINTER_CACHE", nullptr), at("SINTER_CACHE_DIR", dir.path().c_str());
  {
    ScopedEnv max("SINTER_CACHE_MAX_BYTES", "123456");
    auto c = KernelCache::openDefault();
    ASSERT_TRUE(bool(c) && *c);
    EXPECT_EQ((*c)->maxBytes(), 123456u);
    EXPECT_EQ((*c)->directory(), dir.path());
  }
  {
    ScopedEnv max("SINTER_CACHE_MAX_BYTES", nullptr);
    auto c = KernelCache::openDefault();
    ASSERT_TRUE(bool(c) && *c);
    EXPECT_EQ((*c)->maxBytes(), KernelCache::kDefaultMaxBytes);
  }
  ScopedEnv bad("SINTER_CACHE_MAX_BYTES", "2GB");
  auto c = KernelCache::openDefault();
  ASSERT_FALSE(bool(c));
  EXPECT_EQ(llvm::toString(c.takeError()),
            "SINTER_CACHE_MAX_BYTES: expected a number of bytes, got '2GB'");
}

TEST_F(KernelCacheTest, CompileAllThroughTheCacheHitsTheSecondTime) {
  CompileOptions o;
  o.codegenVersion = "hit-test";
  std::vector<KernelSource> ks = {test::axpyKernel("hit_a", 1.0f), test::axpyKernel("hit_b", 3.0f)};
  CompileLabels labels{"graph_x", {"group_a", "group_b"}};
  auto cold = compileAll(ks, o, cache.get(), 2, labels);
  ASSERT_TRUE(bool(cold)) << llvm::toString(cold.takeError());
  int hits = 0;
  auto warm = compileAll(ks, o, cache.get(), 2, labels, [&](const CompileProgress &p) {
    hits += p.cacheHit;
    EXPECT_EQ(p.seconds, 0.0);
  });
  ASSERT_TRUE(bool(warm));
  EXPECT_EQ(hits, 2);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_TRUE((*warm)[i].cacheHit);
    EXPECT_EQ((*warm)[i].cubin, (*cold)[i].cubin);
    EXPECT_EQ((*warm)[i].resources.registers, (*cold)[i].resources.registers);
    auto info = cache->info((*warm)[i].cacheKey);
    ASSERT_TRUE(bool(info));
    EXPECT_EQ(info->graphName, "graph_x");
    EXPECT_EQ(info->group, labels.groups[i]);
    EXPECT_EQ(info->options, nvrtcOptions(o));
  }
  o.codegenVersion = "hit-test-2";
  auto other = compileAll(ks, o, cache.get(), 2);
  ASSERT_TRUE(bool(other));
  EXPECT_FALSE((*other)[0].cacheHit) << "a new codegen version misses";
}
