//===- tests/tools/SintercTest.cpp - the sinterc command line, end to end ------------===//
//
// Runs the built sinterc binary as a user would and checks the tools contract of
// ../shared/design/ARCHITECTURE.md: `verify` prints typed graphs, `eval` writes the reference
// results as safetensors, and bad input gives exit status 1 with one line `sinterc: ...` on
// stderr.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Safetensors.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sys/wait.h>

using namespace sinter;

namespace {

struct Outcome {
  int status = -1;
  std::string out, err;
};

/// A scratch directory removed at the end of the test.
class SintercTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sinterc-test", dir)); }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(llvm::StringRef name) const { return (dir + "/" + name).str(); }

  void write(llvm::StringRef name, llvm::StringRef text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec);
    os << text;
  }

  static std::string slurp(const std::string &file) {
    auto buf = llvm::MemoryBuffer::getFile(file);
    return buf ? (*buf)->getBuffer().str() : std::string();
  }

  Outcome sinterc(const std::string &args) const {
    std::string cmd = std::string(SINTER_BINARY_DIR) + "/tools/sinterc " + args + " >" +
                      path("stdout") + " 2>" + path("stderr");
    int rc = std::system(cmd.c_str());
    Outcome o;
    o.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    o.out = slurp(path("stdout"));
    o.err = slurp(path("stderr"));
    return o;
  }

  /// Expects exit status 1 and a stderr line starting with "sinterc: " that holds
  /// `contains`; one line only, except for parse errors, which add the source line and a
  /// caret under the error's column.
  static void expectBadInput(const Outcome &o, llvm::StringRef contains, bool withSnippet = false) {
    EXPECT_EQ(o.status, 1) << o.err;
    llvm::StringRef first = llvm::StringRef(o.err).split('\n').first;
    EXPECT_TRUE(first.startswith("sinterc: ")) << o.err;
    if (!withSnippet) {
      EXPECT_EQ(llvm::StringRef(o.err).count('\n'), 1u) << o.err;
    }
    EXPECT_TRUE(first.contains(contains)) << o.err;
  }

  llvm::SmallString<128> dir;
};

const char *kTiny = R"(# linear -> relu -> add of a broadcast param
graph tiny(%x: f32[2,3], %w: param f32[2,3], %b: param f32[1,2]) {
  %y = linear(%x, %w)
  %r = relu(%y)
  %o = add(%r, %b)
  return %o, %y
}
)";

} // namespace

TEST_F(SintercTest, VerifyPrintsEveryWorkloadWithItsOutputType) {
  const std::pair<const char *, const char *> workloads[] = {
      {"s0_convt3d_relu_gn.sir", "f32[16,128,34,34,34]"},
      {"s1_conv3d_gn_mean.sir", "f32[128]"},
      {"s2_convt2d_gelu_gn.sir", "f32[128,64,258,258]"},
      {"s3_gemm_gn_min_bias.sir", "f32[1,8192,1024,1]"},
      {"s4_convt3d_grouped.sir", "f32[4,32,63,127,255]"}};
  for (auto [file, type] : workloads) {
    Outcome o = sinterc(std::string("verify ") + SINTER_WORKLOADS_DIR + "/" + file);
    EXPECT_EQ(o.status, 0) << file << ": " << o.err;
    EXPECT_TRUE(o.err.empty()) << o.err;
    EXPECT_NE(o.out.find("graph "), std::string::npos) << o.out;
    // The returned value is the last op; its printed type is the expected output shape.
    EXPECT_NE(o.out.find(std::string(": ") + type + "\n"), std::string::npos) << file << ":\n"
                                                                              << o.out;
  }
}

TEST_F(SintercTest, VerifyReportsTheErrorLocation) {
  write("bad.sir", "graph g(%x: f32[2,8]) {\n  %y = group_norm(%x) {groups = 3}\n  return %y\n}\n");
  expectBadInput(sinterc("verify " + path("bad.sir")),
                 "bad.sir:2:8: group_norm: groups=3 does not divide C=8", /*withSnippet=*/true);
  expectBadInput(sinterc("verify " + path("absent.sir")), "absent.sir");
}

TEST_F(SintercTest, BadCommandLinesExitOneWithOneLine) {
  expectBadInput(sinterc("verify --no-such-flag x.sir"), "--no-such-flag");
  expectBadInput(sinterc(""), "subcommand");
  // CLI11 checks for a subcommand before it looks at the stray word.
  expectBadInput(sinterc("frobnicate"), "subcommand");
  write("tiny.sir", kTiny);
  expectBadInput(sinterc("eval " + path("tiny.sir")), "--output");
}

TEST_F(SintercTest, HelpTeachesTheSubcommands) {
  Outcome o = sinterc("--help");
  EXPECT_EQ(o.status, 0);
  EXPECT_NE(o.out.find("verify"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("eval"), std::string::npos) << o.out;
  Outcome e = sinterc("eval --help");
  EXPECT_EQ(e.status, 0);
  EXPECT_NE(e.out.find("--inputs"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("Example"), std::string::npos) << e.out;
}

TEST_F(SintercTest, EvalWritesTheReferenceResults) {
  write("tiny.sir", kTiny);
  TensorMap inputs, params;
  inputs["x"] = HostTensor({2, 3}, {1, 2, 3, -1, 0, 1});
  params["w"] = HostTensor({2, 3}, {1, 0, -1, 0.5, 0.5, 0.5});
  params["b"] = HostTensor({1, 2}, {10, 20});
  ASSERT_FALSE(bool(writeSafetensors(path("in.safetensors"), inputs)));
  ASSERT_FALSE(bool(writeSafetensors(path("p.safetensors"), params)));
  Outcome o =
      sinterc("eval " + path("tiny.sir") + " --inputs " + path("in.safetensors") + " --params " +
              path("p.safetensors") + " --output " + path("out.safetensors") + " --threads 2");
  ASSERT_EQ(o.status, 0) << o.err;
  auto out = readSafetensors(path("out.safetensors"));
  ASSERT_TRUE(bool(out)) << llvm::toString(out.takeError());
  // y = x w^T: row 0 -> (1-3, 3) = (-2, 3); row 1 -> (-1-1, 0) = (-2, 0).
  EXPECT_EQ(out->at("y").data, (std::vector<float>{-2, 3, -2, 0}));
  // o = relu(y) + b (b broadcast over rows).
  EXPECT_EQ(out->at("o").data, (std::vector<float>{10, 23, 10, 20}));
  EXPECT_EQ(out->at("o").type.shape, (Shape{2, 2}));
}

TEST_F(SintercTest, EvalReportsMissingAndCorruptTensors) {
  write("tiny.sir", kTiny);
  TensorMap inputs;
  inputs["x"] = HostTensor({2, 3});
  ASSERT_FALSE(bool(writeSafetensors(path("in.safetensors"), inputs)));
  expectBadInput(sinterc("eval " + path("tiny.sir") + " --inputs " + path("in.safetensors") +
                         " -o " + path("o.safetensors")),
                 "missing tensor 'w' (param f32[2,3])");
  write("junk.safetensors", "\x10\0\0\0\0\0\0\0{\"x\":");
  expectBadInput(sinterc("eval " + path("tiny.sir") + " --inputs " + path("junk.safetensors") +
                         " -o " + path("o.safetensors")),
                 "junk.safetensors: ");
  expectBadInput(sinterc("eval " + path("tiny.sir") + " --inputs " + path("in.safetensors") +
                         " --params " + path("in.safetensors") + " -o " + path("o.safetensors")),
                 "tensor 'x' is in both");
}

TEST_F(SintercTest, EvalDrawsRandomArgumentsWithASeed) {
  write("tiny.sir", kTiny);
  std::string args = "eval " + path("tiny.sir") + " --seed 3 -o ";
  ASSERT_EQ(sinterc(args + path("a.safetensors")).status, 0);
  ASSERT_EQ(sinterc(args + path("b.safetensors")).status, 0);
  auto a = readSafetensors(path("a.safetensors")), b = readSafetensors(path("b.safetensors"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->at("y").data, b->at("y").data);
  EXPECT_NE(a->at("y").data, (std::vector<float>(4, 0.0f)));
}
