//===- tests/gpu/GpuThreadsTest.cpp - one Executable shared by threads (label "gpu") --===//
//
// docs/embedding.md promises that one Executable may be run from several threads at once,
// on different streams or on the same one. These tests hold it to that with a graph whose
// kernels pass data through the workspace (conv -> group_norm -> relu: the conv's epilogue
// accumulates per-group statistics into zero-filled workspace, a second kernel normalises),
// so a workspace shared by two overlapping runs would mix one run's statistics into the
// other's output. Each thread has its own inputs (its own seed) and writes every run to an
// output buffer of its own, without synchronising in between; afterwards every output is
// compared with the float64 reference for that thread's inputs. Also covered: runs on one
// stream reuse one workspace; a captured graph replays on one stream while run() is used on
// another; run() captured into the caller's own CUDA graph.
//
// Every test runs twice: on that graph, and on a grouped transposed conv -> gelu ->
// group_norm whose norm is finished inside the conv kernel (JitOptions::
// normInKernelWherePossible). That kernel's blocks wait on each other's work, so it must
// never be started with only part of its grid resident, however the two threads' launches
// interleave: the runtime launches it cooperatively (LaunchConfig::coResident). (These runs
// also passed with a plain launch on an H100: a hang needs two launches' residency to
// interleave, which they did not produce. They check the kernel's results under sharing and
// capture, with the launch the runtime makes.)
//
//===--------------------------------------------------------------------------------===//
#include "GpuHarness.h"

#include "ir/Parser.h"
#include "ir/Random.h"
#include "runtime/Driver.h"

#include <latch>
#include <memory>
#include <optional>
#include <thread>

using namespace sinter;
using namespace sinter::test;

// Fail with the error's message (and consume it) when `expr`, an llvm::Error, is one.
#define SINTER_EXPECT_OK(expr)                                                                     \
  do {                                                                                             \
    if (llvm::Error err_ = (expr))                                                                 \
      ADD_FAILURE() << #expr << ": " << llvm::toString(std::move(err_));                           \
  } while (0)
#define SINTER_ASSERT_OK(expr)                                                                     \
  do {                                                                                             \
    if (llvm::Error err_ = (expr))                                                                 \
      FAIL() << #expr << ": " << llvm::toString(std::move(err_));                                  \
  } while (0)

namespace {

// Large enough that a run keeps the GPU busy for a while (overlap is the point), small
// enough for the float64 reference to take seconds.
const char *kTwoKernels = R"(
graph conv_gn_relu(%x: f32[16,32,40,40], %w: param f32[64,32,3,3], %b: param f32[64],
                   %ga: param f32[64], %be: param f32[64]) {
  %y = conv(%x, %w, %b) {padding = 1}
  %n = group_norm(%y, %ga, %be) {groups = 8}
  %o = relu(%n)
  return %o
}
)";

// S2's family, smaller: one kernel whose blocks hold the conv's output until each
// (n, group) is complete, then normalise it.
const char *kNormInConvKernel = R"(
graph convt_gelu_gn(%x: f32[8,64,48,48], %w: param f32[64,8,3,3], %b: param f32[64],
                    %ga: param f32[64], %be: param f32[64]) {
  %y = conv_transpose(%x, %w, %b) {stride = 1, groups = 8}
  %g = gelu(%y)
  %o = group_norm(%g, %ga, %be) {groups = 8}
  return %o
}
)";

constexpr int kRunsPerThread = 12;

enum class Variant { TwoKernels, NormInConvKernel };

std::string variantName(const ::testing::TestParamInfo<Variant> &info) {
  return info.param == Variant::TwoKernels ? "TwoKernels" : "NormInConvKernel";
}

/// A variant's graph, compiled once for every test of this file.
struct Compiled {
  Graph graph;
  CompiledGraph compiled;
  double tolerance = 0;
};

std::optional<Compiled> compile(Variant v) {
  auto graphs = parseSir(v == Variant::TwoKernels ? kTwoKernels : kNormInConvKernel, "threads.sir");
  if (!graphs) {
    ADD_FAILURE() << llvm::toString(graphs.takeError());
    return std::nullopt;
  }
  JitOptions options;
  if (v == Variant::TwoKernels) {
    options.precision = Precision::Fp32;
  } else {
    options.normInKernelWherePossible = true;
  }
  auto compiled = compileGraph(graphs->front(), options);
  if (!compiled) {
    ADD_FAILURE() << llvm::toString(compiled.takeError());
    return std::nullopt;
  }
  double tolerance = referenceTolerance(compiled->pipeline.plan);
  return Compiled{std::move(graphs->front()), std::move(*compiled), tolerance};
}

const Compiled &compiledGraph(Variant v) {
  static std::optional<Compiled> twoKernels = compile(Variant::TwoKernels);
  static std::optional<Compiled> normInConv = compile(Variant::NormInConvKernel);
  const std::optional<Compiled> &c = v == Variant::TwoKernels ? twoKernels : normInConv;
  if (!c)
    throw std::runtime_error("the test graph did not compile (failure above)");
  return *c;
}

/// What one thread needs: its stream, its inputs on the device, one output buffer per run,
/// and the reference result for its inputs. Frees everything on destruction.
struct Lane {
  const DriverApi &api;
  CUstream stream = nullptr;
  bool ownsStream = false;
  Bindings inputs;
  std::vector<CUdeviceptr> outputs;
  std::vector<double> want;
  std::string error; ///< the first failure inside the thread

  explicit Lane(const DriverApi &api) : api(api) {}
  ~Lane() {
    if (stream)
      api.cuStreamSynchronize(stream);
    for (auto &[name, p] : inputs)
      api.cuMemFree(p);
    for (CUdeviceptr p : outputs)
      api.cuMemFree(p);
    if (ownsStream)
      api.cuStreamDestroy(stream);
  }
  Bindings bindings(int run) const {
    Bindings b = inputs;
    b["o"] = outputs[size_t(run)];
    return b;
  }
};

class SharedExecutable : public ::testing::TestWithParam<Variant> {
protected:
  void SetUp() override {
    SINTER_REQUIRE_GPU();
    auto ctx = gpu();
    ASSERT_TRUE(bool(ctx)) << llvm::toString(ctx.takeError());
    api = &ctx->api;
    const Compiled &c = compiledGraph(GetParam());
    auto made = Executable::create(c.compiled.pipeline.plan.plan, c.compiled.kernels);
    ASSERT_TRUE(bool(made)) << llvm::toString(made.takeError());
    exe = std::move(*made);
    // Without workspace the tests below would prove nothing.
    ASSERT_GT(exe->workspaceBytes(), 0);
    ASSERT_EQ(exe->workspaceCount(), 1u);
    // Nor without the kernel each variant is about.
    unsigned coResident = 0;
    for (const KernelSpec &k : c.compiled.pipeline.plan.plan.kernels)
      coResident += k.launch.coResident > 0;
    if (GetParam() == Variant::NormInConvKernel)
      ASSERT_EQ(coResident, 1u) << "the norm is not finished in the conv kernel";
    else
      ASSERT_EQ(coResident, 0u);
  }

  /// A lane with inputs from `seed`, `outputs` NaN-filled output buffers and the reference;
  /// on `stream` when given, else on a stream of its own.
  std::unique_ptr<Lane> makeLane(uint64_t seed, int outputs, CUstream stream = nullptr) {
    const Compiled &c = compiledGraph(GetParam());
    auto lane = std::make_unique<Lane>(*api);
    if (stream) {
      lane->stream = stream;
    } else {
      SINTER_EXPECT_OK(
          cuCheck(api->cuStreamCreate(&lane->stream, CU_STREAM_NON_BLOCKING), "creating a stream"));
      lane->ownsStream = true;
    }
    TensorMap data = randomBindings(c.graph, seed);
    for (auto &[name, t] : data) {
      CUdeviceptr p = 0;
      SINTER_EXPECT_OK(cuCheck(api->cuMemAlloc(&p, t.data.size() * 4), "allocating " + name));
      lane->inputs[name] = p;
      SINTER_EXPECT_OK(
          cuCheck(api->cuMemcpyHtoD(p, t.data.data(), t.data.size() * 4), "uploading " + name));
    }
    int64_t outBytes = c.graph.values[c.graph.results.front()].type.bytes();
    for (int i = 0; i < outputs; ++i) {
      CUdeviceptr p = 0;
      SINTER_EXPECT_OK(cuCheck(api->cuMemAlloc(&p, size_t(outBytes)), "allocating an output"));
      SINTER_EXPECT_OK(
          cuCheck(api->cuMemsetD32Async(p, 0x7fc00000u, size_t(outBytes / 4), lane->stream),
                  "poisoning an output"));
      lane->outputs.push_back(p);
    }
    auto ref = evaluateReference(c.graph, data);
    EXPECT_TRUE(bool(ref)) << (ref ? "" : llvm::toString(ref.takeError()));
    if (ref)
      lane->want = ref->at("o").data;
    SINTER_EXPECT_OK(cuCheck(api->cuCtxSynchronize(), "setting up a lane"));
    return lane;
  }

  /// `runs` runs of the Executable on the lane's stream, output k into buffer k, with no
  /// synchronisation in between. Failures go to lane.error (gtest asserts on this thread).
  void runMany(Lane &lane, int runs) {
    for (int k = 0; k < runs; ++k)
      if (auto err = exe->run(lane.bindings(k), lane.stream)) {
        lane.error = "run " + std::to_string(k) + ": " + llvm::toString(std::move(err));
        return;
      }
  }

  /// Every output of `lane` (after synchronising) matches the lane's reference.
  void expectLaneMatches(Lane &lane, const std::string &what) {
    EXPECT_EQ(lane.error, "") << what;
    SINTER_ASSERT_OK(cuCheck(api->cuStreamSynchronize(lane.stream), "finishing " + what));
    for (size_t k = 0; k < lane.outputs.size(); ++k) {
      std::vector<float> got(lane.want.size());
      SINTER_ASSERT_OK(cuCheck(api->cuMemcpyDtoH(got.data(), lane.outputs[k], got.size() * 4),
                               "downloading an output"));
      OutputError e = compare("o", got, lane.want);
      EXPECT_EQ(e.nonFinite, 0) << what << ", output " << k << ": elements never written";
      EXPECT_LT(e.relL2, compiledGraph(GetParam()).tolerance)
          << what << ", output " << k << ": max abs error " << e.maxAbs;
    }
  }

  const DriverApi *api = nullptr;
  std::unique_ptr<Executable> exe;
};

TEST_P(SharedExecutable, TwoThreadsOnTwoStreamsGetTheirOwnResults) {
  auto a = makeLane(/*seed=*/1, kRunsPerThread);
  auto b = makeLane(/*seed=*/2, kRunsPerThread);
  std::latch start(2);
  auto body = [&](Lane &lane) {
    start.arrive_and_wait(); // both threads enqueue at the same time
    runMany(lane, kRunsPerThread);
  };
  std::thread ta(body, std::ref(*a)), tb(body, std::ref(*b));
  ta.join();
  tb.join();
  expectLaneMatches(*a, "thread A (stream A)");
  expectLaneMatches(*b, "thread B (stream B)");
  // Overlapping runs need their own workspace; never more than one per stream here.
  EXPECT_GE(exe->workspaceCount(), 1u);
  EXPECT_LE(exe->workspaceCount(), 2u);
}

TEST_P(SharedExecutable, TwoThreadsOnOneStreamGetTheirOwnResults) {
  CUstream shared = nullptr;
  SINTER_ASSERT_OK(cuCheck(api->cuStreamCreate(&shared, CU_STREAM_NON_BLOCKING), "stream"));
  {
    auto a = makeLane(/*seed=*/3, kRunsPerThread, shared);
    auto b = makeLane(/*seed=*/4, kRunsPerThread, shared);
    std::latch start(2);
    auto body = [&](Lane &lane) {
      start.arrive_and_wait();
      runMany(lane, kRunsPerThread);
    };
    std::thread ta(body, std::ref(*a)), tb(body, std::ref(*b));
    ta.join();
    tb.join();
    expectLaneMatches(*a, "thread A (shared stream)");
    expectLaneMatches(*b, "thread B (shared stream)");
    EXPECT_LE(exe->workspaceCount(), 2u);
  }
  api->cuStreamDestroy(shared);
}

TEST_P(SharedExecutable, RunsOnOneStreamReuseOneWorkspace) {
  auto a = makeLane(/*seed=*/5, kRunsPerThread);
  runMany(*a, kRunsPerThread); // queued back to back, never waited for
  expectLaneMatches(*a, "one thread, one stream");
  EXPECT_EQ(exe->workspaceCount(), 1u);
}

TEST_P(SharedExecutable, GraphReplaysBesideRunsOnAnotherThread) {
  auto a = makeLane(/*seed=*/6, 1);
  auto b = makeLane(/*seed=*/7, kRunsPerThread);
  SINTER_ASSERT_OK(exe->captureGraph(a->bindings(0), a->stream));
  ASSERT_TRUE(exe->hasGraph());
  std::latch start(2);
  std::thread ta([&] {
    start.arrive_and_wait();
    for (int k = 0; k < kRunsPerThread; ++k)
      if (auto err = exe->launchGraph(a->stream)) {
        a->error = llvm::toString(std::move(err));
        return;
      }
  });
  std::thread tb([&] {
    start.arrive_and_wait();
    runMany(*b, kRunsPerThread);
  });
  ta.join();
  tb.join();
  expectLaneMatches(*a, "graph replays (stream A)");
  expectLaneMatches(*b, "runs (stream B)");
  // The graph's own workspace, beside the runs'.
  EXPECT_GE(exe->workspaceCount(), 2u);
  EXPECT_LE(exe->workspaceCount(), 3u);
}

TEST_P(SharedExecutable, RunCapturedIntoTheCallersGraphOwnsItsWorkspace) {
  if (!api->cuStreamBeginCapture || !api->cuMemAllocAsync)
    GTEST_SKIP() << "this driver cannot capture graphs with allocations";
  auto a = makeLane(/*seed=*/8, 1);
  auto b = makeLane(/*seed=*/9, kRunsPerThread);
  // The caller captures run() into a CUDA graph of its own (global mode, the strictest).
  SINTER_ASSERT_OK(cuCheck(api->cuStreamBeginCapture(a->stream, CU_STREAM_CAPTURE_MODE_GLOBAL),
                           "beginning a capture"));
  llvm::Error captured = exe->run(a->bindings(0), a->stream);
  CUgraph graph = nullptr;
  SINTER_ASSERT_OK(cuCheck(api->cuStreamEndCapture(a->stream, &graph), "ending the capture"));
  SINTER_ASSERT_OK(std::move(captured));
  CUgraphExec exec = nullptr;
  SINTER_ASSERT_OK(cuCheck(api->cuGraphInstantiate(&exec, graph, 0), "instantiating"));
  api->cuGraphDestroy(graph);
  EXPECT_EQ(exe->workspaceCount(), 1u) << "the captured graph allocates its own workspace";
  // Replays on stream A while another thread runs the Executable on stream B.
  std::latch start(2);
  std::thread ta([&] {
    start.arrive_and_wait();
    for (int k = 0; k < kRunsPerThread; ++k)
      if (auto err = cuCheck(api->cuGraphLaunch(exec, a->stream), "replaying")) {
        a->error = llvm::toString(std::move(err));
        return;
      }
  });
  std::thread tb([&] {
    start.arrive_and_wait();
    runMany(*b, kRunsPerThread);
  });
  ta.join();
  tb.join();
  expectLaneMatches(*a, "the caller's graph (stream A)");
  expectLaneMatches(*b, "runs (stream B)");
  api->cuGraphExecDestroy(exec);
}

INSTANTIATE_TEST_SUITE_P(Graphs, SharedExecutable,
                         ::testing::Values(Variant::TwoKernels, Variant::NormInConvKernel),
                         variantName);

} // namespace
