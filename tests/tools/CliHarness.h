//===- tests/tools/CliHarness.h - running the built tools as a user would ------------===//
//
// The CLI tests of sinterc compile/explain/run/check and sinter-cache run the real binaries
// (from SINTER_BINARY_DIR) in a scratch directory with the kernel cache pointed into it
// (SINTER_CACHE_DIR), and check exit status, stdout and stderr. This fixture holds the
// scratch directory, a tiny graph, and the helpers to run a tool and read files.
//
//===--------------------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <sys/wait.h>

namespace sinter::clitest {

struct Outcome {
  int status = -1;
  std::string out, err;
};

/// linear -> relu -> add: one anchor group, two results.
inline const char *kTinyGraph =
    R"(graph tiny(%x: f32[4,16], %w: param f32[8,16], %b: param f32[8]) {
  %y = linear(%x, %w, %b)
  %r = relu(%y)
  %o = mul(%r, 2.0)
  return %o
}
)";

class CliTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("sinter-cli-test", dir));
    write("tiny.sir", kTinyGraph);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(llvm::StringRef name) const { return (dir + "/" + name).str(); }
  std::string cacheDir() const { return path("cache"); }

  void write(llvm::StringRef name, llvm::StringRef text) const {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec) << ec.message();
    os << text;
  }

public:
  static std::string slurp(const std::string &file) {
    auto buf = llvm::MemoryBuffer::getFile(file);
    return buf ? (*buf)->getBuffer().str() : std::string();
  }

protected:
  /// Runs `tool` (a path under the build directory) with `args`, the kernel cache in the
  /// scratch directory.
  Outcome runTool(llvm::StringRef tool, const std::string &args) const {
    std::string cmd = "SINTER_CACHE_DIR='" + cacheDir() + "' " + std::string(SINTER_BINARY_DIR) +
                      "/" + tool.str() + " " + args + " >" + path("stdout") + " 2>" +
                      path("stderr") + " </dev/null";
    int rc = std::system(cmd.c_str());
    Outcome o;
    o.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    o.out = slurp(path("stdout"));
    o.err = slurp(path("stderr"));
    return o;
  }
  Outcome sinterc(const std::string &args) const { return runTool("tools/sinterc", args); }
  Outcome cacheTool(const std::string &args) const { return runTool("tools/sinter-cache", args); }

  /// Expects exit status 1 and exactly one stderr line, equal to `line`.
  static void expectError(const Outcome &o, llvm::StringRef line) {
    EXPECT_EQ(o.status, 1) << o.out << o.err;
    EXPECT_EQ(o.err, line.str() + "\n");
  }

  llvm::SmallString<128> dir;
};

} // namespace sinter::clitest
