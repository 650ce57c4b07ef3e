//===- tests/ir/WorkloadsTest.cpp - the five target graphs parse with their shapes ---===//
//
// Reads the table of ../shared/workloads/README.md (file, expected output type) and checks
// that every listed .sir file parses, verifies, and returns exactly that type. The table is
// the source of truth, so a changed workload or README is caught here, and every .sir file of
// the folder must be listed.
//
//===--------------------------------------------------------------------------------===//
#include "ir/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <map>

using namespace sinter;

namespace {

/// file name -> expected output type text, from the README's table rows `| x.sir | f32[..] |`.
std::map<std::string, std::string> expectedOutputs() {
  std::map<std::string, std::string> rows;
  auto buffer = llvm::MemoryBuffer::getFile(std::string(SINTER_WORKLOADS_DIR) + "/README.md");
  if (!buffer) {
    ADD_FAILURE() << "cannot read the workloads README";
    return rows;
  }
  llvm::SmallVector<llvm::StringRef, 64> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef, 4> cells;
    line.split(cells, '|');
    // "| file | output | what |" splits into "", file, output, what, "".
    if (cells.size() < 4 || !cells[1].trim().endswith(".sir"))
      continue;
    rows[cells[1].trim().str()] = cells[2].trim().str();
  }
  return rows;
}

} // namespace

TEST(Workloads, EveryFileIsListedInTheReadme) {
  std::map<std::string, std::string> rows = expectedOutputs();
  EXPECT_EQ(rows.size(), 5u);
  std::error_code ec;
  unsigned files = 0;
  for (llvm::sys::fs::directory_iterator it(SINTER_WORKLOADS_DIR, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (!name.endswith(".sir"))
      continue;
    ++files;
    EXPECT_TRUE(rows.count(name.str())) << name.str() << " is not in the README table";
  }
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_EQ(files, rows.size());
}

TEST(Workloads, ParseWithTheOutputShapesOfTheReadme) {
  std::map<std::string, std::string> rows = expectedOutputs();
  ASSERT_FALSE(rows.empty());
  for (const auto &[file, expected] : rows) {
    SCOPED_TRACE(file);
    std::string path = std::string(SINTER_WORKLOADS_DIR) + "/" + file;
    llvm::Expected<std::vector<Graph>> graphs = parseSirFile(path);
    ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
    llvm::Expected<Graph> graph = selectGraph(std::move(*graphs), "", file);
    ASSERT_TRUE(bool(graph)) << llvm::toString(graph.takeError());
    ASSERT_EQ(graph->results.size(), 1u);
    EXPECT_EQ(graph->type(graph->results[0]).str(), expected);
    // Every intermediate is typed too (a rank-0 type would mean "never inferred" here).
    for (const Op &op : graph->ops)
      EXPECT_GT(graph->type(op.result).rank(), 0u) << "%" << graph->value(op.result).name;
  }
}

TEST(Workloads, IntermediateShapesOfS3FollowPyTorch) {
  // S3 is the one whose broadcast is easy to get wrong: [1024,1] + [1,8192,1,1].
  llvm::Expected<std::vector<Graph>> graphs =
      parseSirFile(std::string(SINTER_WORKLOADS_DIR) + "/s3_gemm_gn_min_bias.sir");
  ASSERT_TRUE(bool(graphs)) << llvm::toString(graphs.takeError());
  const Graph &g = (*graphs)[0];
  EXPECT_EQ(g.type(g.lookup("y")).str(), "f32[1024,8192]");
  EXPECT_EQ(g.type(g.lookup("n")).str(), "f32[1024,8192]");
  EXPECT_EQ(g.type(g.lookup("m")).str(), "f32[1024,1]");
  EXPECT_EQ(g.type(g.lookup("o")).str(), "f32[1,8192,1024,1]");
}
