//===- tests/tools/VersionTest.cpp - `--version` of sinterc and sinter-cache ---------===//
//
// `sinterc --version` is what a user runs first after installing the Debian package: it must
// need no subcommand, exit 0, and name the release, the NVRTC it compiles with and the code
// generator version (the last two decide which cached kernels it can reuse).
//
//===--------------------------------------------------------------------------------===//
#include "CliHarness.h"

#include "compiler/Version.h"
#include "runtime/Nvrtc.h"

using namespace sinter;
using namespace sinter::clitest;

namespace {

class VersionTest : public CliTest {};

TEST_F(VersionTest, SintercNamesTheReleaseNvrtcAndCodegen) {
  Outcome o = sinterc("--version");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "sinterc " + sinterVersion().str() + " (NVRTC " + nvrtcVersion() + ", " +
                       kCodegenVersion.str() + ")\n");
  EXPECT_EQ(o.err, "");
  EXPECT_NE(sinterVersion(), "");
}

TEST_F(VersionTest, SinterCacheNamesTheRelease) {
  Outcome o = cacheTool("--version");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out, "sinter-cache " + sinterVersion().str() + "\n");
  EXPECT_EQ(o.err, "");
}

TEST_F(VersionTest, VersionFlagIsOnlyOnTheTool) {
  // A subcommand has no --version of its own: a mistyped flag stays an error.
  Outcome o = sinterc("verify --version " + path("tiny.sir"));
  EXPECT_EQ(o.status, 1);
  EXPECT_NE(o.err.find("--version"), std::string::npos) << o.err;
}

} // namespace
