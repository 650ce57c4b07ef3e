//===- tests/runtime/GpuTest.cpp - the runtime on a real GPU (CTest label "gpu") ------===//
//
// Loads and launches NVRTC-compiled kernels through Executable: a fill step and a launch
// with exact expected values, dynamic shared memory above 48 KiB, bundles loaded back
// without NVRTC, and the errors run() gives for missing, unknown and too-small bindings and
// for a failing launch. Every test skips with the reason where no GPU is usable.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Bundle.h"
#include "runtime/Executable.h"
#include "tests/runtime/TestKernels.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace sinter;

#define SINTER_REQUIRE_GPU()                                                                       \
  do {                                                                                             \
    if (!gpuAvailable()) {                                                                         \
      auto why = gpu();                                                                            \
      GTEST_SKIP() << "no GPU: " << (why ? "unknown" : llvm::toString(why.takeError()));           \
    }                                                                                              \
  } while (0)

namespace {

constexpr int kN = 1000;

BufferSpec buffer(const std::string &name, BufferSpec::Kind kind, int64_t n) {
  BufferSpec b;
  b.name = name;
  b.kind = kind;
  b.type = TensorType(DType::F32, {n});
  b.bytes = b.type.bytes();
  return b;
}

/// y = 2 * x + w where w is workspace filled with 1.0f: a fill and a launch.
ExecutablePlan axpyPlan(const KernelSource &k, const std::string &arch) {
  ExecutablePlan p;
  p.graphName = "tiny";
  p.arch = arch;
  p.precision = "fp32";
  p.buffers = {buffer("x", BufferSpec::Kind::Input, kN),
               buffer("w", BufferSpec::Kind::Workspace, kN),
               buffer("y", BufferSpec::Kind::Output, kN)};
  KernelSpec spec;
  spec.name = k.name;
  spec.templateName = k.templateName;
  spec.launch = k.launch;
  spec.group = "test";
  p.kernels.push_back(spec);
  Step fill;
  fill.kind = Step::Kind::Fill;
  fill.buffer = 1;
  fill.fillWord = 0x3f800000u; // 1.0f
  Step launch;
  launch.kind = Step::Kind::Launch;
  launch.kernel = 0;
  launch.slots.assign(16, -1);
  launch.slots[0] = 0;
  launch.slots[1] = 1;
  launch.slots[3] = 2;
  p.steps = {fill, launch};
  return p;
}

TensorMap inputs() {
  std::vector<int64_t> shape = {kN};
  HostTensor x(shape);
  for (int i = 0; i < kN; ++i)
    x.data[i] = float(i) * 0.37f - 100.0f;
  return {{"x", x}};
}

void expectAxpy(const TensorMap &out) {
  ASSERT_EQ(out.count("y"), 1u);
  const HostTensor &y = out.at("y");
  ASSERT_EQ(y.data.size(), size_t(kN));
  TensorMap in = inputs();
  for (int i = 0; i < kN; ++i)
    ASSERT_EQ(y.data[i], 2.0f * in["x"].data[i] + 1.0f) << "at " << i;
}

llvm::Expected<std::unique_ptr<Executable>> buildAxpy() {
  auto ctx = gpu();
  if (!ctx)
    return ctx.takeError();
  KernelSource k = test::axpyKernel("gpu_axpy", 2.0f, kN);
  CompileOptions o;
  o.arch = ctx->info.arch;
  auto c = compileWithNvrtc(k, o);
  if (!c)
    return c.takeError();
  return Executable::create(axpyPlan(k, o.arch), {std::move(*c)});
}

struct DeviceBuffer {
  CUdeviceptr ptr = 0;
  explicit DeviceBuffer(size_t bytes) {
    EXPECT_FALSE(bool(cuCheck(gpu()->api.cuMemAlloc(&ptr, bytes), "test alloc")));
  }
  ~DeviceBuffer() {
    if (ptr)
      gpu()->api.cuMemFree(ptr);
  }
};

} // namespace

TEST(Gpu, DescribesTheDevice) {
  SINTER_REQUIRE_GPU();
  const DeviceInfo &d = gpu()->info;
  std::printf("device: %s, cc %d.%d, arch %s, %d SMs, L2 %d bytes, opt-in smem %d, driver %d\n",
              d.name.c_str(), d.ccMajor, d.ccMinor, d.arch.c_str(), d.smCount, d.l2Bytes,
              d.maxSharedPerBlockOptin, d.driverVersion);
  EXPECT_FALSE(d.name.empty());
  EXPECT_EQ(d.arch, archForCapability(d.ccMajor, d.ccMinor));
  EXPECT_GT(d.smCount, 0);
  EXPECT_GT(d.l2Bytes, 0);
  EXPECT_GE(d.maxSharedPerBlockOptin, 48 * 1024);
}

TEST(Gpu, FillThenLaunch) {
  SINTER_REQUIRE_GPU();
  auto exe = buildAxpy();
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  EXPECT_EQ((*exe)->workspaceBytes(), 4096) << "1000 floats rounded up to 256 bytes";
  auto out = (*exe)->runHost(inputs());
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  expectAxpy(*out);
  // A second run reuses the modules and workspace.
  auto again = (*exe)->runHost(inputs());
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  expectAxpy(*again);
}

TEST(Gpu, BindingErrors) {
  SINTER_REQUIRE_GPU();
  auto exe = buildAxpy();
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  DeviceBuffer x(kN * 4), small(2000);
  EXPECT_EQ(llvm::toString((*exe)->run({{"x", x.ptr}})),
            "run: missing binding for output 'y' (f32[1000])");
  EXPECT_EQ(llvm::toString((*exe)->run({{"x", x.ptr}, {"y", x.ptr}, {"z", x.ptr}})),
            "run: 'tiny' has no input, param or output named 'z'");
  EXPECT_EQ(llvm::toString((*exe)->run({{"x", x.ptr}, {"y", x.ptr}, {"w", x.ptr}})),
            "run: 'tiny' has no input, param or output named 'w'")
      << "workspace is not bindable";
  std::string tooSmall = llvm::toString((*exe)->run({{"x", x.ptr}, {"y", small.ptr}}));
  EXPECT_EQ(tooSmall.rfind("run: binding for output 'y' (f32[1000]) has room for ", 0), 0u)
      << tooSmall;
  EXPECT_NE(tooSmall.find("needs 4000"), std::string::npos) << tooSmall;
  // An offset into a large enough allocation that leaves too little room is caught too.
  DeviceBuffer big(4096);
  std::string offset = llvm::toString((*exe)->run({{"x", x.ptr}, {"y", big.ptr + 512}}));
  EXPECT_EQ(offset, "run: binding for output 'y' (f32[1000]) has room for 3584 bytes, needs 4000");
  // A binding 4 bytes into an allocation: room enough, but not 16-byte aligned.
  std::string misaligned = llvm::toString((*exe)->run({{"x", x.ptr}, {"y", big.ptr + 4}}));
  EXPECT_EQ(
      misaligned.rfind("run: binding for output 'y' (f32[1000]) is not 16-byte aligned (0x", 0), 0u)
      << misaligned;
}

TEST(Gpu, TimesRuns) {
  SINTER_REQUIRE_GPU();
  auto exe = buildAxpy();
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  DeviceBuffer x(kN * 4), y(kN * 4);
  auto ms = (*exe)->time({{"x", x.ptr}, {"y", y.ptr}}, 5);
  ASSERT_TRUE(bool(ms)) << llvm::toString(ms.takeError());
  ASSERT_EQ(ms->size(), 5u);
  for (float t : *ms)
    EXPECT_GT(t, 0.0f);
}

TEST(Gpu, LargeDynamicSharedMemory) {
  SINTER_REQUIRE_GPU();
  const unsigned words = 16384; // 64 KiB: needs the opt-in attribute
  KernelSource k;
  k.name = "big_smem";
  k.source = "#include \"common.cuh\"\n"
             "extern \"C\" __global__ void big_smem(const sinter::Buffers b) {\n"
             "  extern __shared__ float s[];\n"
             "  for (int j = threadIdx.x; j < 16384; j += blockDim.x) s[j] = float(j);\n"
             "  __syncthreads();\n"
             "  float *y = sinter::slot<float>(b, 3);\n"
             "  y[threadIdx.x] = s[16383 - threadIdx.x];\n"
             "}\n";
  k.launch.block = {256, 1, 1};
  k.launch.sharedBytes = words * 4;
  CompileOptions o;
  o.arch = gpu()->info.arch;
  auto c = compileWithNvrtc(k, o);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  ExecutablePlan p;
  p.graphName = "smem";
  p.arch = o.arch;
  p.buffers = {buffer("y", BufferSpec::Kind::Output, 256)};
  KernelSpec spec;
  spec.name = k.name;
  spec.launch = k.launch;
  p.kernels = {spec};
  Step launch;
  launch.kernel = 0;
  launch.slots.assign(16, -1);
  launch.slots[3] = 0;
  p.steps = {launch};
  auto exe = Executable::create(p, {std::move(*c)});
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  auto out = (*exe)->runHost({});
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  for (int t = 0; t < 256; ++t)
    ASSERT_EQ(out->at("y").data[t], float(16383 - t));
}

TEST(Gpu, LaunchFailureNamesTheKernel) {
  SINTER_REQUIRE_GPU();
  KernelSource k = test::axpyKernel("too_wide", 2.0f, kN);
  k.launch.block = {2048, 1, 1}; // over the 1024-thread limit
  CompileOptions o;
  o.arch = gpu()->info.arch;
  auto c = compileWithNvrtc(k, o);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  auto exe = Executable::create(axpyPlan(k, o.arch), {std::move(*c)});
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  auto out = (*exe)->runHost(inputs());
  ASSERT_FALSE(bool(out));
  EXPECT_EQ(llvm::toString(out.takeError()),
            "cuda error CUDA_ERROR_INVALID_VALUE (invalid argument) while launching kernel "
            "'too_wide'");
}

TEST(Gpu, OutOfMemoryMessage) {
  SINTER_REQUIRE_GPU();
  CUdeviceptr p = 0;
  std::string message = llvm::toString(
      cuCheck(gpu()->api.cuMemAlloc(&p, size_t(1) << 50), "allocating 1.0 PiB workspace for 'x'"));
  EXPECT_EQ(message, "cuda error CUDA_ERROR_OUT_OF_MEMORY (out of memory) while allocating 1.0 "
                     "PiB workspace for 'x'");
}

TEST(Gpu, BundleRunsWithoutNvrtc) {
  SINTER_REQUIRE_GPU();
  test::TempDir dir;
  std::string arch = gpu()->info.arch;
  KernelSource k = test::axpyKernel("bundled_axpy", 2.0f, kN);
  CompileOptions o;
  o.arch = arch;
  auto c = compileWithNvrtc(k, o);
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  std::string bundle = dir.path() + "/b";
  ASSERT_FALSE(bool(writeBundle(bundle, axpyPlan(k, arch), {*c}, true)));
  auto exe = Executable::load(bundle);
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  EXPECT_TRUE((*exe)->kernels()[0].log.empty()) << "the kernel came from disk, not NVRTC";
  auto out = (*exe)->runHost(inputs());
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  expectAxpy(*out);

  std::string other = dir.path() + "/other-arch";
  std::string wrong = arch == "sm_80" ? "sm_90a" : "sm_80";
  ASSERT_FALSE(bool(writeBundle(other, axpyPlan(k, wrong), {*c}, false)));
  auto refused = Executable::load(other);
  ASSERT_FALSE(bool(refused));
  EXPECT_EQ(llvm::toString(refused.takeError()),
            "bundle '" + other + "' was built for " + wrong + " but the GPU is " + arch);
}

TEST(Gpu, CapturedGraphReplaysWithNewData) {
  SINTER_REQUIRE_GPU();
  auto exe = buildAxpy();
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  const DriverApi &api = gpu()->api;
  DeviceBuffer x(kN * 4), y(kN * 4);
  Bindings b = {{"x", x.ptr}, {"y", y.ptr}};
  EXPECT_EQ(llvm::toString((*exe)->launchGraph(nullptr)),
            "launchGraph: no graph captured for 'tiny'");
  EXPECT_EQ(llvm::toString((*exe)->captureGraph(b, nullptr)),
            "captureGraph: 'tiny' needs a stream of its own, not the default stream");
  CUstream stream = nullptr;
  ASSERT_FALSE(bool(cuCheck(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "stream")));
  ASSERT_FALSE(bool((*exe)->captureGraph(b, stream)));
  EXPECT_TRUE((*exe)->hasGraph());
  for (float offset : {0.0f, 17.5f}) {
    std::vector<float> hx(kN), hy(kN);
    for (int i = 0; i < kN; ++i)
      hx[i] = float(i) * 0.5f + offset;
    ASSERT_FALSE(bool(cuCheck(api.cuMemcpyHtoD(x.ptr, hx.data(), kN * 4), "upload")));
    ASSERT_FALSE(bool((*exe)->launchGraph(stream)));
    ASSERT_FALSE(bool(cuCheck(api.cuStreamSynchronize(stream), "sync")));
    ASSERT_FALSE(bool(cuCheck(api.cuMemcpyDtoH(hy.data(), y.ptr, kN * 4), "download")));
    for (int i = 0; i < kN; ++i)
      ASSERT_EQ(hy[i], 2.0f * hx[i] + 1.0f) << "offset " << offset << " at " << i;
  }
  auto graphMs = (*exe)->time(b, 5, 2, /*useGraph=*/true);
  ASSERT_TRUE(bool(graphMs)) << llvm::toString(graphMs.takeError());
  EXPECT_EQ(graphMs->size(), 5u);
  api.cuStreamDestroy(stream);
}
