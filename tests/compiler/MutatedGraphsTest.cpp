//===- tests/compiler/MutatedGraphsTest.cpp - broken .sir files fail cleanly ---------===//
//
// Users hand sinter files with typos, truncated lines, wrong shapes and swapped names. Every
// small corpus graph and workload is mutated here a few dozen times (spans deleted, numbers
// replaced by 0, -1 or huge values, lines dropped, duplicated or swapped, identifiers and
// value names exchanged, the file cut short), with a fixed seed so that a failure reproduces.
// Each mutant must either parse, verify and plan, or fail with an llvm::Error: a parse error
// whose first line names the file, line and column, or a planning error of one line. A
// crash, a hang or an unlocated message fails the test. `sinterc verify` and `explain` run
// exactly these two steps.
//
//===--------------------------------------------------------------------------------===//
#include "tests/CorpusFiles.h"

#include "compiler/Pipeline.h"
#include "ir/Parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

using namespace sinter;

namespace {

/// Deterministic on every platform: raw mt19937 words, no std distributions.
class Mutator {
public:
  explicit Mutator(uint32_t seed) : rng_(seed) {}

  size_t below(size_t n) { return n ? rng_() % n : 0; }

  std::string mutate(std::string t) {
    if (t.empty())
      return t;
    switch (below(9)) {
    case 0: { // delete a span of up to 20 characters
      size_t i = below(t.size());
      return t.erase(i, 1 + below(20));
    }
    case 1: // replace a number
      return replaceToken(
          t, isDigit,
          {"0", "-1", "1", "3", "-0", "0.5", "1e40", "nan", "2147483648", "99999999999999999999"});
    case 2:
    case 3:
    case 4: { // delete, duplicate or swap lines
      std::vector<std::string> lines = split(t);
      size_t i = below(lines.size()), j = below(lines.size()), what = below(3);
      if (what == 0)
        lines.erase(lines.begin() + i);
      else if (what == 1)
        lines.insert(lines.begin() + i, lines[i]);
      else
        std::swap(lines[i], lines[j]);
      return join(lines);
    }
    case 5: { // insert a punctuation character
      static const char kChars[] = "{}()[],:=%\"#\n x0-.";
      t.insert(below(t.size()), 1, kChars[below(sizeof(kChars) - 1)]);
      return t;
    }
    case 6: // replace an identifier by an op, attribute or keyword
      return replaceToken(t, isLower, {"relu",   "conv",     "sum",       "group_norm", "softmax",
                                       "matmul", "linear",   "stride",    "groups",     "dim",
                                       "dims",   "keepdim",  "f32",       "param",      "return",
                                       "graph",  "max_pool", "transpose", "reshape",    "concat"});
    case 7: // cut the file short
      return t.substr(0, below(t.size()));
    default: { // use one value's name in another's place
      std::vector<size_t> at;
      for (size_t i = 0; i < t.size(); ++i)
        if (t[i] == '%')
          at.push_back(i);
      if (at.size() < 2)
        return t;
      std::string from = word(t, at[below(at.size())] + 1);
      size_t to = at[below(at.size())] + 1;
      return t.replace(to, word(t, to).size(), from);
    }
    }
  }

private:
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }
  static bool isLower(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }

  static std::string word(const std::string &t, size_t i) {
    size_t j = i;
    while (j < t.size() && (isLower(t[j]) || isDigit(t[j])))
      ++j;
    return t.substr(i, j - i);
  }

  /// Replaces a random maximal run of characters satisfying `in` by one of `choices`.
  std::string replaceToken(std::string t, bool (*in)(char),
                           std::initializer_list<const char *> choices) {
    std::vector<std::pair<size_t, size_t>> runs;
    for (size_t i = 0; i < t.size();) {
      if (!in(t[i])) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < t.size() && in(t[j]))
        ++j;
      runs.push_back({i, j - i});
      i = j;
    }
    if (runs.empty())
      return t;
    auto [at, len] = runs[below(runs.size())];
    return t.replace(at, len, *(choices.begin() + below(choices.size())));
  }

  static std::vector<std::string> split(const std::string &t) {
    std::vector<std::string> lines;
    std::stringstream in(t);
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    if (lines.empty())
      lines.push_back("");
    return lines;
  }

  static std::string join(const std::vector<std::string> &lines) {
    std::string t;
    for (const std::string &l : lines)
      t += l + "\n";
    return t;
  }

  std::mt19937 rng_;
};

/// Whether `err` starts `file:line:col: ` with a non-empty message after it.
bool located(const std::string &err, const std::string &file) {
  if (err.rfind(file + ":", 0) != 0)
    return false;
  size_t i = file.size() + 1;
  for (int field = 0; field < 2; ++field) {
    const size_t start = i;
    while (i < err.size() && err[i] >= '0' && err[i] <= '9')
      ++i;
    if (i == start || i >= err.size() || err[i] != ':')
      return false;
    ++i;
  }
  return err.compare(i, 1, " ") == 0 && i + 1 < err.size() && err[i + 1] != '\n';
}

std::vector<std::string> graphFiles() {
  std::vector<std::string> files = test::sirFiles(test::corpusDir() + "/small");
  for (const std::string &w : test::sirFiles(SINTER_WORKLOADS_DIR))
    files.push_back(w);
  return files;
}

} // namespace

TEST(MutatedGraphs, FailWithALocatedErrorOrPlan) {
  std::vector<std::string> files = graphFiles();
  ASSERT_GE(files.size(), 40u) << test::corpusDir();
  Mutator m(2026);
  int parsed = 0, planned = 0, rejected = 0;
  for (const std::string &file : files) {
    std::ifstream in(file);
    ASSERT_TRUE(in) << file;
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string original = buffer.str();
    for (int k = 0; k < 24; ++k) {
      std::string text = original;
      for (size_t n = 1 + m.below(3); n > 0; --n)
        text = m.mutate(text);
      SCOPED_TRACE(file + ", mutant " + std::to_string(k) + ":\n" + text);
      auto graphs = parseSir(text, "mutant.sir");
      if (!graphs) {
        std::string err = llvm::toString(graphs.takeError());
        EXPECT_TRUE(located(err, "mutant.sir")) << err;
        ++rejected;
        continue;
      }
      ++parsed;
      for (const Graph &g : *graphs) {
        auto result = runPipeline(g, PipelineOptions());
        if (result) {
          ++planned;
          continue;
        }
        std::string err = llvm::toString(result.takeError());
        EXPECT_FALSE(err.empty());
        EXPECT_EQ(err.find('\n'), std::string::npos) << err;
      }
    }
  }
  // The mutations reach both outcomes, and the planner too.
  EXPECT_GT(rejected, 100);
  EXPECT_GT(parsed, 100);
  EXPECT_GT(planned, 50);
  std::printf("%d mutants rejected by the parser, %d parsed, %d planned\n", rejected, parsed,
              planned);
}
