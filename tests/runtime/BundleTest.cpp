//===- tests/runtime/BundleTest.cpp - bundles on disk and plan validation (no GPU) ---===//
//
// A bundle written by writeBundle reads back into the same plan and cubins; readBundle
// refuses another arch, another format or sinter version, a missing or corrupt cubin and a
// malformed manifest, each with its documented message. The "current GPU arch" is a
// parameter, so none of this needs a GPU.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Bundle.h"
#include "runtime/KernelCache.h"
#include "tests/runtime/TestKernels.h"

#include "nlohmann/json.hpp"
#include "gtest/gtest.h"

#include <filesystem>
#include <fstream>

using namespace sinter;
namespace fs = std::filesystem;

namespace {

/// x (input) and w (param) -> y (output) through one workspace buffer filled with -inf, and
/// a view of y.
ExecutablePlan samplePlan() {
  ExecutablePlan p;
  p.graphName = "sample";
  p.arch = "sm_90a";
  p.precision = "auto";
  auto buffer = [&](std::string name, BufferSpec::Kind kind, std::vector<int64_t> shape,
                    int alias = -1) {
    BufferSpec b;
    b.name = std::move(name);
    b.kind = kind;
    b.type = TensorType(DType::F32, shape);
    b.bytes = b.type.bytes();
    b.aliasOf = alias;
    p.buffers.push_back(b);
  };
  buffer("x", BufferSpec::Kind::Input, {16, 8});
  buffer("w", BufferSpec::Kind::Param, {8});
  buffer("y", BufferSpec::Kind::Output, {16, 8});
  buffer("stats", BufferSpec::Kind::Workspace, {32});
  buffer("y_flat", BufferSpec::Kind::Workspace, {128}, 2);
  for (const char *name : {"first_kernel", "second_kernel"}) {
    KernelSpec k;
    k.name = name;
    k.cacheKey = std::string(64, 'a');
    k.templateName = "elementwise.cuh";
    k.launch.grid = {3, 2, 1};
    k.launch.block = {256, 1, 1};
    k.launch.sharedBytes = 70000;
    k.launch.persistent = std::string(name) == "first_kernel";
    if (k.launch.persistent)
      k.launch.persistentPerSm = 2;
    if (std::string(name) == "second_kernel") // (blocks waiting on each other's work)
      k.launch.coResident = 5;
    if (k.launch.persistent) { // one TMA tensor map over x (slot 0), 8 x 16 boxes
      TensorMapSpec t;
      t.slot = 0;
      t.rank = 2;
      t.dims = {8, 16};
      t.strides = {32};
      t.box = {8, 16};
      t.swizzle128 = true;
      k.launch.tensorMaps.push_back(t);
      // and a rank-3 one over slot 1, as the input-box engine's weight rows:
      // [k] x [channel of a group] x [kernel x group], 32 x 64 x 1 boxes
      TensorMapSpec rows;
      rows.slot = 1;
      rows.rank = 3;
      rows.dims = {576, 48, 4};
      rows.strides = {576 * 4, 48 * 576 * 4};
      rows.box = {32, 64, 1};
      rows.swizzle128 = true;
      k.launch.tensorMaps.push_back(rows);
    }
    k.group = "elementwise chain";
    k.flops = 1234;
    k.bytes = 5678;
    p.kernels.push_back(k);
  }
  Step fill;
  fill.kind = Step::Kind::Fill;
  fill.buffer = 3;
  fill.fillWord = kFillMinusInf;
  p.steps.push_back(fill);
  for (int k = 0; k < 2; ++k) {
    Step launch;
    launch.kind = Step::Kind::Launch;
    launch.kernel = k;
    launch.slots.assign(16, -1);
    launch.slots[0] = 0;
    launch.slots[1] = 1;
    launch.slots[3] = k == 0 ? 2 : 4;
    launch.slots[4] = 3;
    p.steps.push_back(launch);
  }
  return p;
}

std::vector<CompiledKernel> sampleCubins(const ExecutablePlan &p) {
  std::vector<CompiledKernel> out;
  for (const KernelSpec &k : p.kernels) {
    CompiledKernel c;
    c.name = k.name;
    c.arch = p.arch;
    c.cubin = std::string("\x7f"
                          "ELF fake cubin of ") +
              k.name + std::string(100, '\0');
    c.source = "// source of " + k.name;
    c.resources.registers = 64;
    out.push_back(c);
  }
  return out;
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

class BundleTest : public ::testing::Test {
protected:
  void SetUp() override {
    bundle = dir.path() + "/bundle";
    plan = samplePlan();
    cubins = sampleCubins(plan);
    ASSERT_FALSE(bool(writeBundle(bundle, plan, cubins, /*keepSource=*/false)));
  }
  std::string readError() {
    auto b = readBundle(bundle, "sm_90a");
    EXPECT_FALSE(bool(b));
    return b ? std::string() : llvm::toString(b.takeError());
  }
  void editManifest(const std::function<void(nlohmann::json &)> &edit) {
    auto m = nlohmann::json::parse(readText(bundle + "/manifest.json"));
    edit(m);
    writeText(bundle + "/manifest.json", m.dump());
  }
  test::TempDir dir;
  std::string bundle;
  ExecutablePlan plan;
  std::vector<CompiledKernel> cubins;
};

} // namespace

TEST_F(BundleTest, RoundTrip) {
  EXPECT_TRUE(fs::exists(bundle + "/first_kernel.cubin"));
  EXPECT_TRUE(fs::exists(bundle + "/second_kernel.cubin"));
  EXPECT_FALSE(fs::exists(bundle + "/first_kernel.cu")) << "no source without keepSource";
  auto b = readBundle(bundle, "sm_90a");
  ASSERT_TRUE(bool(b)) << llvm::toString(b.takeError());
  const ExecutablePlan &r = b->plan;
  EXPECT_EQ(r.graphName, "sample");
  EXPECT_EQ(r.arch, "sm_90a");
  EXPECT_EQ(r.precision, "auto");
  ASSERT_EQ(r.buffers.size(), plan.buffers.size());
  for (size_t i = 0; i < r.buffers.size(); ++i) {
    EXPECT_EQ(r.buffers[i].name, plan.buffers[i].name);
    EXPECT_EQ(r.buffers[i].kind, plan.buffers[i].kind);
    EXPECT_EQ(r.buffers[i].type, plan.buffers[i].type);
    EXPECT_EQ(r.buffers[i].bytes, plan.buffers[i].bytes);
    EXPECT_EQ(r.buffers[i].aliasOf, plan.buffers[i].aliasOf);
  }
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[1].name, "second_kernel");
  EXPECT_EQ(r.kernels[1].cacheKey, std::string(64, 'a'));
  EXPECT_EQ(r.kernels[1].templateName, "elementwise.cuh");
  EXPECT_EQ(r.kernels[1].group, "elementwise chain");
  EXPECT_EQ(r.kernels[1].launch.grid, (std::array<unsigned, 3>{3, 2, 1}));
  EXPECT_EQ(r.kernels[1].launch.block, (std::array<unsigned, 3>{256, 1, 1}));
  EXPECT_EQ(r.kernels[1].launch.sharedBytes, 70000u);
  EXPECT_TRUE(r.kernels[0].launch.persistent);
  EXPECT_FALSE(r.kernels[1].launch.persistent);
  EXPECT_EQ(r.kernels[0].launch.persistentPerSm, 2u);
  EXPECT_EQ(r.kernels[1].launch.persistentPerSm, 1u);
  EXPECT_EQ(r.kernels[0].launch.coResident, 0u);
  EXPECT_EQ(r.kernels[1].launch.coResident, 5u);
  ASSERT_EQ(r.kernels[0].launch.tensorMaps.size(), 2u);
  auto expectMap = [](const TensorMapSpec &t, int slot, unsigned rank, std::array<uint64_t, 5> dims,
                      std::array<uint64_t, 4> strides, std::array<uint32_t, 5> box) {
    EXPECT_EQ(t.slot, slot);
    EXPECT_EQ(t.rank, rank);
    EXPECT_EQ(t.dims, dims);
    EXPECT_EQ(t.strides, strides);
    EXPECT_EQ(t.box, box);
    EXPECT_TRUE(t.swizzle128);
  };
  expectMap(r.kernels[0].launch.tensorMaps[0], 0, 2, {8, 16, 0, 0, 0}, {32, 0, 0, 0},
            {8, 16, 0, 0, 0});
  expectMap(r.kernels[0].launch.tensorMaps[1], 1, 3, {576, 48, 4, 0, 0}, {2304, 110592, 0, 0},
            {32, 64, 1, 0, 0});
  EXPECT_TRUE(r.kernels[1].launch.tensorMaps.empty());
  EXPECT_EQ(r.kernels[1].flops, 1234);
  EXPECT_EQ(r.kernels[1].bytes, 5678);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].kind, Step::Kind::Fill);
  EXPECT_EQ(r.steps[0].buffer, 3);
  EXPECT_EQ(r.steps[0].fillWord, kFillMinusInf);
  EXPECT_EQ(r.steps[2].kind, Step::Kind::Launch);
  EXPECT_EQ(r.steps[2].kernel, 1);
  EXPECT_EQ(std::vector<int>(r.steps[2].slots.begin(), r.steps[2].slots.end()),
            std::vector<int>(plan.steps[2].slots.begin(), plan.steps[2].slots.end()));
  ASSERT_EQ(b->cubins.size(), 2u);
  EXPECT_EQ(b->cubins[0].cubin, cubins[0].cubin) << "binary cubins survive byte for byte";
  EXPECT_EQ(b->cubins[0].resources.registers, 64);
  EXPECT_EQ(b->nvrtcVersion, nvrtcVersion());
  EXPECT_EQ(b->sinterVersion, bundleSinterVersion());

  auto m = nlohmann::json::parse(readText(bundle + "/manifest.json"));
  EXPECT_EQ(m["signature"]["inputs"][0]["name"], "x");
  EXPECT_EQ(m["signature"]["inputs"][0]["type"], "f32[16,8]");
  EXPECT_EQ(m["signature"]["params"][0]["name"], "w");
  EXPECT_EQ(m["signature"]["outputs"][0]["type"], "f32[16,8]");
  EXPECT_EQ(m["workspace_bytes"], 128) << "the view of y is not workspace";
  EXPECT_EQ(m["kernels"][0]["cubin_sha256"], sha256Hex(cubins[0].cubin));
}

TEST_F(BundleTest, KeepSourceWritesTheCudaSource) {
  std::string other = dir.path() + "/with-source";
  ASSERT_FALSE(bool(writeBundle(other, plan, cubins, /*keepSource=*/true)));
  EXPECT_EQ(readText(other + "/first_kernel.cu"), "// source of first_kernel");
  auto b = readBundle(other, "sm_90a");
  ASSERT_TRUE(bool(b));
  EXPECT_EQ(b->cubins[1].source, "// source of second_kernel");
}

TEST_F(BundleTest, RefusesAnotherArch) {
  auto b = readBundle(bundle, "sm_80");
  ASSERT_FALSE(bool(b));
  EXPECT_EQ(llvm::toString(b.takeError()),
            "bundle '" + bundle + "' was built for sm_90a but the GPU is sm_80");
}

TEST_F(BundleTest, RefusesAnotherSinterVersionOrFormat) {
  editManifest([](nlohmann::json &m) { m["sinter_version"] = "0.0.1"; });
  EXPECT_EQ(readError(), "bundle '" + bundle + "' was built by sinter 0.0.1; this is sinter " +
                             bundleSinterVersion().str() + " (compile it again)");
  editManifest([](nlohmann::json &m) {
    m["sinter_version"] = bundleSinterVersion().str();
    m["format_version"] = 99;
  });
  EXPECT_EQ(readError(),
            "bundle '" + bundle + "' has format version 99; this sinter reads version 1");
  editManifest([](nlohmann::json &m) { m["format"] = "something-else"; });
  EXPECT_EQ(readError(), bundle + "/manifest.json: not a sinter bundle manifest (\"format\" is not "
                                  "\"sinter-bundle\")");
}

TEST_F(BundleTest, RefusesMissingOrCorruptCubins) {
  std::string cubin = readText(bundle + "/second_kernel.cubin");
  cubin[5] ^= 0x20;
  writeText(bundle + "/second_kernel.cubin", cubin);
  EXPECT_EQ(readError(), "bundle '" + bundle +
                             "': second_kernel.cubin does not match its checksum (corrupt or "
                             "truncated)");
  fs::remove(bundle + "/second_kernel.cubin");
  EXPECT_EQ(readError(), "bundle '" + bundle + "': second_kernel.cubin is missing");
}

TEST_F(BundleTest, RefusesAMalformedManifest) {
  writeText(bundle + "/manifest.json", "{\"format\": \"sinter-bundle\", ");
  std::string err = readError();
  EXPECT_EQ(err.rfind(bundle + "/manifest.json: parse error", 0), 0u) << err;

  ASSERT_FALSE(bool(writeBundle(bundle, plan, cubins, false)));
  editManifest([](nlohmann::json &m) { m.erase("graph"); });
  EXPECT_EQ(readError(), bundle + "/manifest.json: key 'graph' not found");

  ASSERT_FALSE(bool(writeBundle(bundle, plan, cubins, false)));
  editManifest([](nlohmann::json &m) { m["steps"][1]["kernel"] = 7; });
  EXPECT_EQ(readError(), bundle + "/manifest.json: plan: step 1 launches kernel 7 of 2");

  ASSERT_FALSE(bool(writeBundle(bundle, plan, cubins, false)));
  editManifest([](nlohmann::json &m) { m["kernels"][0]["launch"]["tensor_maps"][0].erase("box"); });
  EXPECT_EQ(readError(), bundle + "/manifest.json: key 'box' not found");

  ASSERT_FALSE(bool(writeBundle(bundle, plan, cubins, false)));
  editManifest([](nlohmann::json &m) {
    nlohmann::json &t = m["kernels"][0]["launch"]["tensor_maps"][0];
    t["dims"] = t["box"] = {1, 2, 3, 4, 5, 6};
    t["strides"] = {16, 32, 64, 128, 256};
  });
  EXPECT_EQ(readError(), bundle + "/manifest.json: plan: kernel 'first_kernel' has a tensor map "
                                  "of rank 6 (1 to 5)");

  ASSERT_FALSE(bool(writeBundle(bundle, plan, cubins, false)));
  editManifest([](nlohmann::json &m) { m["kernels"][0]["cubin"] = "../../etc/passwd"; });
  EXPECT_EQ(readError(), bundle + "/manifest.json: kernel 'first_kernel' names cubin "
                                  "'../../etc/passwd', not a file of the bundle");

  fs::remove(bundle + "/manifest.json");
  EXPECT_EQ(readError(), "bundle '" + bundle + "' has no manifest.json");
}

TEST(PlanValidation, CatchesBadIndices) {
  ExecutablePlan p = samplePlan();
  EXPECT_FALSE(bool(validatePlan(p)));
  p.steps[1].slots[2] = 42;
  EXPECT_EQ(llvm::toString(validatePlan(p)), "plan: step 1 ('first_kernel') binds buffer 42 of 5");
  p = samplePlan();
  p.buffers[4].aliasOf = 4;
  EXPECT_EQ(llvm::toString(validatePlan(p)), "plan: buffer 'y_flat' is part of an alias cycle");
  p = samplePlan();
  p.buffers[3].bytes = 6;
  EXPECT_EQ(llvm::toString(validatePlan(p)),
            "plan: step 0 fills buffer 'stats' of 6 bytes, not a whole number of 32-bit words");
  p = samplePlan();
  p.kernels[0].launch.tensorMaps[0].slot = 2; // slot 2 of the first launch is unbound
  EXPECT_EQ(llvm::toString(validatePlan(p)),
            "plan: step 1 ('first_kernel') has a tensor map over slot 2, which it does not bind");
  p = samplePlan();
  p.kernels[0].launch.tensorMaps[0].rank = 6;
  EXPECT_EQ(llvm::toString(validatePlan(p)),
            "plan: kernel 'first_kernel' has a tensor map of rank 6 (1 to 5)");
  for (unsigned perSm : {0u, 33u}) {
    p = samplePlan();
    p.kernels[0].launch.persistentPerSm = perSm;
    EXPECT_EQ(llvm::toString(validatePlan(p)), "plan: kernel 'first_kernel' asks for " +
                                                   std::to_string(perSm) +
                                                   " persistent blocks per SM (1 to 32)");
  }
  p = samplePlan();
  p.kernels[0].launch.tensorMaps.resize(kMaxTensorMaps + 1, p.kernels[0].launch.tensorMaps[0]);
  EXPECT_EQ(llvm::toString(validatePlan(p)),
            "plan: kernel 'first_kernel' has 5 tensor maps, at most 4");
  p = samplePlan();
  p.buffers[4].bytes = 1 << 20;
  EXPECT_EQ(llvm::toString(validatePlan(p)),
            "plan: buffer 'y_flat' (1048576 bytes) is a view of the smaller buffer 'y'");
}
