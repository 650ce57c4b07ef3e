//===- tests/runtime/NvrtcTest.cpp - NVRTC compilation and the driver loader (no GPU) -===//
//
// Real NVRTC compiles of tiny kernels that include the embedded common.cuh, for Hopper
// (sm_90a) and Ampere (sm_80): a cubin comes back and the ptxas report is parsed. Compile
// errors carry the documented first line. The driver helpers that need no GPU are checked
// here too.
//
//===--------------------------------------------------------------------------------===//
#include "runtime/Nvrtc.h"
#include "runtime/Driver.h"
#include "tests/runtime/TestKernels.h"

#include "gtest/gtest.h"

#include <dlfcn.h>

#include <mutex>
#include <regex>

using namespace sinter;

namespace {

bool isElf(const std::string &image) {
  return image.size() > 4 && image.compare(0, 4,
                                           "\x7f"
                                           "ELF") == 0;
}

KernelSource rawKernel(const std::string &name, const std::string &body) {
  KernelSource k;
  k.name = name;
  k.source = "#include \"common.cuh\"\nextern \"C\" __global__ void " + name +
             "(const sinter::Buffers b) {\n" + body + "\n}\n";
  return k;
}

} // namespace

TEST(Nvrtc, VersionIsMajorDotMinor) {
  EXPECT_TRUE(std::regex_match(nvrtcVersion(), std::regex(R"(\d+\.\d+)"))) << nvrtcVersion();
}

TEST(Nvrtc, OptionsAreTheDocumentedOnes) {
  CompileOptions o;
  o.arch = "sm_80";
  o.extraFlags = {"-lineinfo"};
  std::vector<std::string> expected = {"--gpu-architecture=sm_80", "-std=c++17", "-default-device",
                                       "--ptxas-options=-v", "-lineinfo"};
  EXPECT_EQ(nvrtcOptions(o), expected);
}

TEST(Nvrtc, CompilesForHopperAndAmpere) {
  for (const char *arch : {"sm_90a", "sm_80"}) {
    CompileOptions o;
    o.arch = arch;
    auto k = compileWithNvrtc(test::axpyKernel("tiny_axpy"), o);
    ASSERT_TRUE(bool(k)) << llvm::toString(k.takeError());
    EXPECT_TRUE(isElf(k->cubin)) << arch;
    EXPECT_EQ(k->name, "tiny_axpy");
    EXPECT_EQ(k->arch, arch);
    EXPECT_GT(k->resources.registers, 0) << k->log;
    EXPECT_EQ(k->resources.sharedBytes, 0) << k->log;
    EXPECT_EQ(k->resources.spillStoreBytes, 0) << k->log;
    EXPECT_EQ(k->resources.spillLoadBytes, 0) << k->log;
    EXPECT_EQ(k->resources.stackFrameBytes, 0) << k->log;
    EXPECT_GT(k->compileSeconds, 0.0);
    EXPECT_NE(k->log.find("tiny_axpy"), std::string::npos) << "ptxas report expected in the log";
  }
}

TEST(Nvrtc, ReportsStaticSharedMemoryAndStackFrame) {
  // 1 KiB of static shared memory, and a dynamically indexed local array that must live in
  // local memory (a stack frame of at least 512 floats).
  KernelSource k = rawKernel("report_probe", R"(
  __shared__ float tile[256];
  float local[512];
  const float *x = sinter::slot<const float>(b, 0);
  float *y = sinter::slot<float>(b, 3);
  int t = threadIdx.x;
  tile[t] = x[t];
  for (int i = 0; i < 512; ++i) local[i] = x[i * 7 + t];
  __syncthreads();
  y[t] = tile[255 - t] + local[int(x[t]) & 511];)");
  auto c = compileWithNvrtc(k, CompileOptions{});
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->resources.sharedBytes, 1024) << c->log;
  EXPECT_GE(c->resources.stackFrameBytes, 2048) << c->log;
}

TEST(Nvrtc, ParsesTheReportOfTheNamedEntry) {
  const char *log = "ptxas info    : 0 bytes gmem\n"
                    "ptxas info    : Compiling entry function 'other' for 'sm_90a'\n"
                    "ptxas info    : Function properties for other\n"
                    "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
                    "ptxas info    : Used 40 registers, 2048 bytes smem, 384 bytes cmem[0]\n"
                    "ptxas info    : Compiling entry function 'mine' for 'sm_90a'\n"
                    "ptxas info    : Function properties for mine\n"
                    "    16 bytes stack frame, 12 bytes spill stores, 20 bytes spill loads\n"
                    "ptxas info    : Used 168 registers, used 1 barriers, 384 bytes cmem[0]\n";
  ResourceUsage r = parseResourceReport(log, "mine");
  EXPECT_EQ(r.registers, 168);
  EXPECT_EQ(r.sharedBytes, 0);
  EXPECT_EQ(r.stackFrameBytes, 16);
  EXPECT_EQ(r.spillStoreBytes, 12);
  EXPECT_EQ(r.spillLoadBytes, 20);
  ResourceUsage o = parseResourceReport(log, "other");
  EXPECT_EQ(o.registers, 40);
  EXPECT_EQ(o.sharedBytes, 2048);
  ResourceUsage none = parseResourceReport("", "mine");
  EXPECT_EQ(none.registers, -1);
  EXPECT_EQ(none.sharedBytes, -1);
}

TEST(Nvrtc, CompileErrorHasTheDocumentedFirstLine) {
  KernelSource k = rawKernel("broken_kernel", "  undeclared_thing = 1;");
  auto c = compileWithNvrtc(k, CompileOptions{});
  ASSERT_FALSE(bool(c));
  std::string message = llvm::toString(c.takeError());
  std::string first = message.substr(0, message.find('\n'));
  EXPECT_EQ(first, "nvrtc: compiling 'broken_kernel' for sm_90a failed:");
  EXPECT_NE(message.find("undeclared_thing"), std::string::npos) << message;
}

TEST(Nvrtc, MissingHeaderIsACompileError) {
  KernelSource k;
  k.name = "no_header";
  k.source = "#include \"no_such_template.cuh\"\n";
  auto c = compileWithNvrtc(k, CompileOptions{});
  ASSERT_FALSE(bool(c));
  EXPECT_NE(llvm::toString(c.takeError()).find("no_such_template.cuh"), std::string::npos);
}

TEST(Nvrtc, CompileAllKeepsOrderAndReportsProgress) {
  std::vector<KernelSource> ks = {test::axpyKernel("ca_one", 1.0f),
                                  test::axpyKernel("ca_two", 2.0f),
                                  test::axpyKernel("ca_three", 3.0f)};
  std::vector<std::string> seen;
  std::mutex m;
  auto out = compileAll(ks, CompileOptions{}, nullptr, 2, {}, [&](const CompileProgress &p) {
    std::lock_guard<std::mutex> lock(m);
    seen.push_back(p.kernelName);
    EXPECT_FALSE(p.cacheHit);
    EXPECT_GT(p.seconds, 0.0);
    EXPECT_EQ(p.total, 3u);
  });
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].name, "ca_one");
  EXPECT_EQ((*out)[1].name, "ca_two");
  EXPECT_EQ((*out)[2].name, "ca_three");
  EXPECT_EQ(seen.size(), 3u);
}

TEST(Nvrtc, CompileAllReturnsTheFailure) {
  std::vector<KernelSource> ks = {test::axpyKernel("fine_one"), rawKernel("bad_one", "  nope();")};
  auto out = compileAll(ks, CompileOptions{}, nullptr, 2);
  ASSERT_FALSE(bool(out));
  EXPECT_EQ(
      llvm::toString(out.takeError()).rfind("nvrtc: compiling 'bad_one' for sm_90a failed:", 0),
      0u);
}

TEST(Driver, ArchForCapability) {
  EXPECT_EQ(archForCapability(9, 0), "sm_90a");
  EXPECT_EQ(archForCapability(8, 0), "sm_80");
  EXPECT_EQ(archForCapability(8, 6), "sm_86");
  EXPECT_EQ(archForCapability(10, 0), "sm_100");
  EXPECT_EQ(archForCapability(12, 0), "sm_120");
}

TEST(Driver, FormatBytes) {
  EXPECT_EQ(formatBytes(12), "12 B");
  EXPECT_EQ(formatBytes(384 * 1024), "384.0 KiB");
  EXPECT_EQ(formatBytes(uint64_t(1.2 * double(1ull << 30))), "1.2 GiB");
}

TEST(Driver, NoDriverIsAnErrorNotACrash) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) {
    dlclose(lib);
    GTEST_SKIP() << "libcuda.so.1 is present on this machine";
  }
  EXPECT_FALSE(gpuAvailable());
  auto ctx = gpu();
  ASSERT_FALSE(bool(ctx));
  EXPECT_EQ(llvm::toString(ctx.takeError()).rfind("no CUDA driver: cannot load libcuda.so.1 (", 0),
            0u);
  // cuCheck still formats a result without a driver to name it.
  EXPECT_EQ(llvm::toString(cuCheck(CUDA_ERROR_OUT_OF_MEMORY, "allocating 1.2 GiB workspace")),
            "cuda error CUresult 2 while allocating 1.2 GiB workspace");
}
