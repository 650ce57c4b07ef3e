//===- tests/tools/CompileExplainTest.cpp - sinterc compile and explain, end to end ----===//
//
// Runs the built sinterc on a tiny graph and on workloads: compile writes a bundle whose
// manifest lists the planned kernels (the ones runPipeline plans, in launch order) with one
// cubin each, a second compile comes from the cache, a bundle for another arch, of another
// sinter version, with a corrupt manifest or cubin is refused with the exact message;
// explain shows groups, kernels, floors, --why reasons and Graphviz clusters; bad flags and
// files exit 1 with one line. Also the roofline arithmetic of compiler/Roofline.h.
//
//===--------------------------------------------------------------------------------===//
#include "CliHarness.h"

#include "compiler/Explain.h"
#include "compiler/Pipeline.h"
#include "compiler/Roofline.h"
#include "ir/Parser.h"
#include "runtime/Bundle.h"

#include "llvm/ADT/StringExtras.h"

#include <nlohmann/json.hpp>

#include <regex>

using namespace sinter;
using namespace sinter::clitest;
using json = nlohmann::json;

namespace {

using CompileTest = CliTest;
using ExplainTest = CliTest;

/// The kernels the compiler plans for `file` (in launch order) at sm_90a, auto precision.
std::vector<std::string> plannedKernels(const std::string &file) {
  auto graphs = parseSirFile(file);
  EXPECT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  auto result = runPipeline((*graphs)[0], {Precision::Auto, "sm_90a", false});
  EXPECT_TRUE(bool(result)) << llvm::toString(result.takeError());
  std::vector<std::string> names;
  for (const PlannedKernel &k : result->plan.kernels)
    names.push_back(k.source.name);
  return names;
}

void expectBundleMatches(const std::string &bundle, const std::vector<std::string> &expected,
                         bool sources) {
  json m = json::parse(CliTest::slurp(bundle + "/manifest.json"));
  EXPECT_EQ(m.at("arch"), "sm_90a");
  EXPECT_EQ(m.at("precision"), "auto");
  ASSERT_EQ(m.at("kernels").size(), expected.size());
  std::regex hexKey("[0-9a-f]{64}");
  for (size_t i = 0; i < expected.size(); ++i) {
    const json &k = m.at("kernels")[i];
    EXPECT_EQ(k.at("name"), expected[i]);
    std::string cubin = CliTest::slurp(bundle + "/" + k.at("cubin").get<std::string>());
    // An ELF image: a cubin, not a PTX text.
    EXPECT_TRUE(llvm::StringRef(cubin).startswith("\x7f"
                                                  "ELF"))
        << k.at("cubin");
    EXPECT_TRUE(std::regex_match(k.at("cache_key").get<std::string>(), hexKey));
    EXPECT_EQ(llvm::sys::fs::exists(bundle + "/" + expected[i] + ".cu"), sources);
  }
  // One cubin per kernel and nothing else compiled.
  std::error_code ec;
  size_t cubins = 0;
  for (llvm::sys::fs::directory_iterator it(bundle, ec), end; it != end && !ec; it.increment(ec))
    cubins += llvm::StringRef(it->path()).endswith(".cubin");
  EXPECT_EQ(cubins, expected.size());
}

TEST_F(CompileTest, WritesManifestAndOneCubinPerKernel) {
  Outcome o = sinterc("compile " + path("tiny.sir") + " -o " + path("b") + " --keep-source");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, ""); // progress lines only on a terminal
  std::vector<std::string> kernels = plannedKernels(path("tiny.sir"));
  ASSERT_FALSE(kernels.empty());
  expectBundleMatches(path("b"), kernels, /*sources=*/true);
  EXPECT_NE(o.out.find("compiled tiny for sm_90a (precision auto): " +
                       std::to_string(kernels.size()) + " kernels, 0 from the cache"),
            std::string::npos)
      << o.out;
  // The graph travels with the bundle for `sinterc run DIR`.
  EXPECT_NE(slurp(path("b/graph.sir")).find("graph tiny("), std::string::npos);

  // The same graph again: every kernel from the cache, same cubins.
  Outcome again = sinterc("compile " + path("tiny.sir") + " -o " + path("b2"));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find(std::to_string(kernels.size()) + " kernels, " +
                           std::to_string(kernels.size()) + " from the cache"),
            std::string::npos)
      << again.out;
  expectBundleMatches(path("b2"), kernels, /*sources=*/false);
  for (const std::string &k : kernels)
    EXPECT_EQ(slurp(path("b/" + k + ".cubin")), slurp(path("b2/" + k + ".cubin"))) << k;
}

TEST_F(CompileTest, Workload) {
  std::string file = std::string(SINTER_WORKLOADS_DIR) + "/s3_gemm_gn_min_bias.sir";
  Outcome o = sinterc("compile " + file + " -o " + path("s3"));
  ASSERT_EQ(o.status, 0) << o.err;
  expectBundleMatches(path("s3"), plannedKernels(file), /*sources=*/false);
}

TEST_F(CompileTest, BundleRefusals) {
  ASSERT_EQ(sinterc("compile " + path("tiny.sir") + " -o " + path("b")).status, 0);
  std::string b = path("b");
  ASSERT_TRUE(bool(readBundle(b, "sm_90a")));

  auto message = [&](llvm::StringRef arch) {
    auto r = readBundle(b, arch);
    return r ? std::string("accepted") : llvm::toString(r.takeError());
  };
  EXPECT_EQ(message("sm_80"), "bundle '" + b + "' was built for sm_90a but the GPU is sm_80");

  std::string manifest = slurp(b + "/manifest.json");
  json m = json::parse(manifest);
  m["sinter_version"] = "0.0.0-old";
  write("b/manifest.json", m.dump(2));
  EXPECT_EQ(message("sm_90a"), "bundle '" + b + "' was built by sinter 0.0.0-old; this is sinter " +
                                   bundleSinterVersion().str() + " (compile it again)");

  write("b/manifest.json", "{\"format\": \"sinter-bundle\", \"format_version\": 1,");
  EXPECT_EQ(message("sm_90a"),
            b + "/manifest.json: parse error at line 1, column 49: syntax error while parsing "
                "object key - unexpected end of input; expected string literal");
  write("b/manifest.json", "{\"format\": \"sinter-bundle\", \"format_version\": 1}");
  EXPECT_EQ(message("sm_90a"), b + "/manifest.json: key 'sinter_version' not found");

  write("b/manifest.json", manifest);
  std::string cubin = m.at("kernels")[0].at("cubin");
  write("b/" + cubin, "not a cubin");
  EXPECT_EQ(message("sm_90a"),
            "bundle '" + b + "': " + cubin + " does not match its checksum (corrupt or truncated)");
}

TEST_F(CompileTest, BadInput) {
  expectError(sinterc("compile " + path("missing.sir") + " -o " + path("b")),
              "sinterc: cannot read '" + path("missing.sir") + "': No such file or directory");
  expectError(sinterc("compile " + path("tiny.sir") + " -o " + path("b") + " --arch volta"),
              "sinterc: --arch 'volta' is not an arch like sm_90a or sm_80");
  expectError(sinterc("compile " + path("tiny.sir") + " -o " + path("b") + " --precision fp16"),
              "sinterc: --precision 'fp16' is not auto, fp32 or tf32");
  Outcome noOut = sinterc("compile " + path("tiny.sir"));
  EXPECT_EQ(noOut.status, 1);
  EXPECT_TRUE(llvm::StringRef(noOut.err).startswith("sinterc: ")) << noOut.err;
  EXPECT_NE(noOut.err.find("--output"), std::string::npos) << noOut.err;
  Outcome unknown = sinterc("compile " + path("tiny.sir") + " -o " + path("b") + " --fast");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_EQ(llvm::StringRef(unknown.err).count('\n'), 1u) << unknown.err;
  EXPECT_NE(unknown.err.find("--fast"), std::string::npos) << unknown.err;
  EXPECT_FALSE(llvm::sys::fs::exists(path("b")));
}

TEST_F(CompileTest, HelpTeaches) {
  for (const char *cmd : {"compile", "explain", "run", "check"}) {
    Outcome o = sinterc(std::string(cmd) + " --help");
    EXPECT_EQ(o.status, 0) << cmd;
    EXPECT_NE(o.out.find("Example"), std::string::npos) << cmd << ": " << o.out;
  }
}

TEST_F(ExplainTest, TinyGraph) {
  Outcome o = sinterc("explain " + path("tiny.sir") + " --dot " + path("g.dot"));
  ASSERT_EQ(o.status, 0) << o.err;
  auto graphs = parseSirFile(path("tiny.sir"));
  ASSERT_TRUE(bool(graphs));
  auto result = runPipeline((*graphs)[0], {Precision::Auto, "sm_90a", false});
  ASSERT_TRUE(bool(result));
  // Every group with its pattern, every op, every kernel with its template and tile.
  for (size_t gi = 0; gi < result->fusion.groups.size(); ++gi)
    EXPECT_NE(o.out.find("group " + std::to_string(gi) + ": " + result->fusion.groups[gi].pattern),
              std::string::npos)
        << o.out;
  EXPECT_NE(o.out.find("%y = linear(%x, %w, %b)"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("%o = mul(%r, 2)"), std::string::npos) << o.out;
  for (const PlannedKernel &k : result->plan.kernels) {
    EXPECT_NE(o.out.find(k.source.name), std::string::npos);
    EXPECT_NE(o.out.find(k.source.templateName), std::string::npos);
    EXPECT_NE(o.out.find(k.source.tileConfig), std::string::npos);
  }
  EXPECT_NE(o.out.find("linear f32[4,16] x f32[8,16] -> f32[4,8]"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("roofline: H100 SXM, 3350 GB/s DRAM"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("total: " + std::to_string(result->plan.kernels.size()) + " kernels"),
            std::string::npos);
  EXPECT_EQ(o.out, renderExplain(*result, {"sm_90a", "auto", false}));

  std::string dot = slurp(path("g.dot"));
  EXPECT_TRUE(llvm::StringRef(dot).startswith("digraph \"tiny\" {")) << dot;
  size_t clusters = 0;
  for (size_t at = dot.find("subgraph cluster_"); at != std::string::npos;
       at = dot.find("subgraph cluster_", at + 1))
    ++clusters;
  EXPECT_EQ(clusters, result->fusion.groups.size());
  EXPECT_NE(dot.find("\"v0\" -> \"op0\""), std::string::npos) << dot;
}

TEST_F(ExplainTest, WhyListsRejectedPatterns) {
  // The norm tail cannot be fused when the activation feeds two consumers.
  write("two.sir",
        R"(graph two(%x: f32[2,8,4,4], %w: param f32[8,8,3,3], %g: param f32[8], %b: param f32[8]) {
  %c = conv(%x, %w) {padding = [1, 1]}
  %r = relu(%c)
  %n = group_norm(%r, %g, %b) {groups = 2}
  %s = add(%n, %r)
  return %s
}
)");
  auto graphs = parseSirFile(path("two.sir"));
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  auto result = runPipeline((*graphs)[0], {Precision::Auto, "sm_90a", false});
  ASSERT_TRUE(bool(result)) << llvm::toString(result.takeError());
  ASSERT_FALSE(result->fusion.rejections.empty());

  Outcome o = sinterc("explain " + path("two.sir") + " --why");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("patterns tried and rejected (--why)"), std::string::npos);
  for (const FusionRejection &r : result->fusion.rejections)
    EXPECT_NE(o.out.find(r.pattern + " did not apply: " + r.reason), std::string::npos)
        << r.pattern << ": " << o.out;
  // Without --why the reasons stay out.
  Outcome plain = sinterc("explain " + path("two.sir"));
  EXPECT_EQ(plain.out.find("did not apply"), std::string::npos);
}

TEST_F(ExplainTest, WorkloadsAndOtherArch) {
  for (const char *w : {"s0_convt3d_relu_gn.sir", "s1_conv3d_gn_mean.sir", "s2_convt2d_gelu_gn.sir",
                        "s3_gemm_gn_min_bias.sir", "s4_convt3d_grouped.sir"}) {
    Outcome o = sinterc("explain " + std::string(SINTER_WORKLOADS_DIR) + "/" + w + " --arch sm_80");
    EXPECT_EQ(o.status, 0) << w << ": " << o.err;
    EXPECT_NE(o.out.find("roofline: A100 SXM, 2039 GB/s DRAM"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("floor"), std::string::npos);
  }
  // On sm_90a, S3's GEMM copies A and B through TMA: explain lists both maps; on sm_80 the
  // same kernel (mma.sync) has none.
  const std::string s3 = std::string(SINTER_WORKLOADS_DIR) + "/s3_gemm_gn_min_bias.sir";
  Outcome hopper = sinterc("explain " + s3 + " --arch sm_90a");
  EXPECT_EQ(hopper.status, 0) << hopper.err;
  EXPECT_NE(hopper.out.find("TMA tensor map slot 0: dims [8192,1024] box [32,"), std::string::npos)
      << hopper.out;
  EXPECT_NE(hopper.out.find("TMA tensor map slot 1: dims [8192,8192]"), std::string::npos);
  Outcome ampere = sinterc("explain " + s3 + " --arch sm_80");
  EXPECT_EQ(ampere.out.find("TMA tensor map"), std::string::npos) << ampere.out;
  Outcome unknown = sinterc("explain " + path("tiny.sir") + " --arch sm_75");
  EXPECT_EQ(unknown.status, 0) << unknown.err;
  EXPECT_NE(unknown.out.find("roofline: no peak numbers for sm_75 (floors not shown)"),
            std::string::npos);
}

TEST(Roofline, FloorIsTheLargerTerm) {
  auto h100 = archPeaks("sm_90a");
  ASSERT_TRUE(h100);
  EXPECT_EQ(archPeaks("sm_90")->part, "H100 SXM");
  EXPECT_FALSE(archPeaks("sm_70"));
  // 3.35 GB at 3350 GB/s is 1 ms; 1 GFLOP of FFMA at 67 TFLOP/s is far less.
  RooflineFloor mem = rooflineFloor(*h100, MathMode::Ffma, 1e9, 3.35e9);
  EXPECT_NEAR(mem.seconds, 1e-3, 1e-12);
  EXPECT_TRUE(mem.memoryBound);
  // 495 TFLOP: 1 s of TF32, 3 s of 3xTF32, 495/67 s of FFMA.
  EXPECT_NEAR(rooflineFloor(*h100, MathMode::Tf32, 495e12, 1).seconds, 1.0, 1e-9);
  EXPECT_NEAR(rooflineFloor(*h100, MathMode::Tf32x3, 495e12, 1).seconds, 3.0, 1e-9);
  RooflineFloor ffma = rooflineFloor(*h100, MathMode::Ffma, 495e12, 1);
  EXPECT_NEAR(ffma.seconds, 495.0 / 67.0, 1e-9);
  EXPECT_FALSE(ffma.memoryBound);
}

} // namespace
