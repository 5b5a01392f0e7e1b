// The house's layers (docs/architecture.md), checked on the source tree: data flows one way,
// collectors -> Capture -> analyzers -> report and the front ends, with the pipeline above
// collectors and analyzers. Each test reads every project #include of a folder and fails naming
// the file, the line and the folder it may not reach.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag {
namespace {

namespace fs = std::filesystem;

struct Include {
  std::string file;    // "collectors/load_inputs.cc", relative to the repository's root
  int line = 0;        // 1-based
  std::string target;  // "core/escape.h", as written
};

// Every `#include "<dir>/..."` of the C and C++ files under `dir` (recursively).
std::vector<Include> IncludesUnder(const std::string& dir) {
  const fs::path root(TFDIAG_SOURCE_DIR);
  static const std::regex kInclude(R"re(^\s*#\s*include\s+"([^"]+)")re");
  std::vector<Include> out;
  if (!fs::is_directory(root / dir)) return out;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(root / dir)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() || (ext != ".h" && ext != ".cc" && ext != ".c")) continue;
    std::ifstream in(e.path());
    std::string text;
    int n = 0;
    while (std::getline(in, text)) {
      ++n;
      std::smatch m;
      if (std::regex_search(text, m, kInclude)) {
        out.push_back({fs::relative(e.path(), root).string(), n, m[1].str()});
      }
    }
  }
  return out;
}

// The project folder an include names ("analyzers" for "analyzers/scaling.h"), "" for a header
// of a library (<fmt/format.h> is not quoted; "absl/..." and generated headers are not folders of
// ours, which `folders` lists).
std::string FolderOf(const std::string& target, const std::set<std::string>& folders) {
  const size_t slash = target.find('/');
  if (slash == std::string::npos) return "";
  const std::string top = target.substr(0, slash);
  return folders.count(top) ? top : "";
}

// What each layer may include besides itself, bottom up: the layers as docs/architecture.md
// draws them. A folder not listed (cli/, viewer/, tests/, fuzz/, bench/) is a front end or a
// harness and may include any of them.
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> kAllowed = {
      {"core", {}},
      {"rules", {"core"}},
      {"collectors", {"core"}},
      {"analyzers", {"core", "rules"}},
      {"report", {"core", "rules", "analyzers"}},
      {"actions", {"core", "collectors"}},
      {"samples", {"core", "collectors"}},
      {"pipeline", {"core", "rules", "collectors", "analyzers"}},
  };
  return kAllowed;
}

TEST(Layers, EachFolderIncludesOnlyTheLayersBelowIt) {
  const std::set<std::string> folders = {"core",   "rules",   "collectors", "analyzers",
                                         "report", "actions", "samples",    "pipeline",
                                         "cli",    "viewer",  "fuzz",       "bench"};
  int checked = 0;
  for (const auto& [layer, below] : Allowed()) {
    for (const Include& inc : IncludesUnder(layer)) {
      const std::string to = FolderOf(inc.target, folders);
      if (to.empty() || to == layer) continue;
      ++checked;
      EXPECT_TRUE(below.count(to))
          << inc.file << ":" << inc.line << ": includes \"" << inc.target << "\": " << layer
          << "/ may include only itself and the layers below it, not " << to << "/";
    }
  }
  // The table is not vacuous: collectors, analyzers, report and the pipeline reach below.
  EXPECT_GT(checked, 100);
}

// In analyzers/ the registry (analysis.h: every analyzer, Analyze()) sits above the rules and the
// rules' input type (analysis_input.h) below them: only the registry's own files include it.
TEST(Layers, NoRuleIncludesTheRegistry) {
  const std::set<std::string> registry = {"analyzers/analysis.h", "analyzers/analysis.cc",
                                          "analyzers/applicability.h",
                                          "analyzers/applicability.cc"};
  int rules = 0;
  for (const Include& inc : IncludesUnder("analyzers")) {
    if (inc.target == "analyzers/analysis_input.h") ++rules;
    if (registry.count(inc.file)) continue;
    EXPECT_NE(inc.target, "analyzers/analysis.h")
        << inc.file << ":" << inc.line
        << ": a rule includes the registry; include analyzers/analysis_input.h (the rules' input "
           "type) or analyzers/analysis_result.h instead";
  }
  EXPECT_GT(rules, 15) << "the rules no longer include analyzers/analysis_input.h";
}

}  // namespace
}  // namespace tfdiag
