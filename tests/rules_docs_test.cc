// Issue 14 item 13: references users can open. Every built-in rule has a page docs/rules/<id>.md
// (what, why, evidence, fix, thresholds with their defaults, sources), the binary embeds the
// current pages and `tfdiag rules explain` prints them; every reference is public (a URL or an
// article cited by title), never a path under the developers' ../shared folder; the text report
// lists all of a finding's references; nothing a user reads points into ../shared.
#include <dirent.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "rules/rule_docs.h"
#include "rules/rule_set.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const std::string kSource = TFDIAG_SOURCE_DIR;
const char* const kPrivate[] = {"../shared", "shared/seeds", "shared/docs", "domain.md"};

RuleSet Defaults() {
  StatusOr<RuleSet> set = DefaultRuleSet();
  EXPECT_TRUE(set.ok()) << set.status().message();
  return set.ok() ? *set : RuleSet{};
}

std::vector<std::string> ListDir(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(n);
  }
  closedir(d);
  return out;
}

// "2" for 2.0, "0.05" for 0.05, "2147483648" for 2^31: as the page's table writes it.
std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

TEST(RuleDocs, EveryRuleHasAnEmbeddedPageWithItsThresholdsAndSources) {
  RuleSet rules = Defaults();
  ASSERT_FALSE(rules.rules.empty());
  const std::string regen = " (run python3 scripts/gen_rule_docs.py after editing the rule set)";
  std::set<std::string> pages;
  for (const std::string& f : ListDir(kSource + "/docs/rules", ".md")) pages.insert(f);
  EXPECT_EQ(pages.size(), rules.rules.size()) << "one page per rule, no stale pages" << regen;
  EXPECT_EQ(RuleDocCount(), static_cast<int>(rules.rules.size()));
  for (const Rule& r : rules.rules) {
    SCOPED_TRACE(r.id);
    ASSERT_EQ(pages.count(r.id + ".md"), 1u) << "no docs/rules/" << r.id << ".md" << regen;
    std::string page = ReadFile(kSource + "/docs/rules/" + r.id + ".md");
    EXPECT_EQ(std::string(RuleDoc(r.id)), page) << "the binary embeds an older page";
    EXPECT_EQ(page.rfind("# " + r.id + ": " + r.title + "\n", 0), 0u) << regen;
    for (const char* section : {"## What it checks", "## Why it matters", "## Evidence", "## Fix",
                                "## Thresholds", "Where they come from: ", "## Sources"}) {
      EXPECT_NE(page.find(section), std::string::npos) << section;
    }
    // The prose is the rule file's, as gen_rule_docs.py writes it (the fix indented 4 spaces).
    EXPECT_NE(page.find("\n" + r.checks + "\n"), std::string::npos) << "checks" << regen;
    EXPECT_NE(page.find("\n" + r.evidence + "\n"), std::string::npos) << "evidence" << regen;
    EXPECT_NE(page.find("\n" + r.rationale + "\n"), std::string::npos) << "rationale" << regen;
    std::string fix = "    " + r.fix;
    for (size_t i = fix.find('\n'); i != std::string::npos; i = fix.find('\n', i + 5)) {
      fix.insert(i + 1, "    ");
    }
    EXPECT_NE(page.find(fix), std::string::npos) << "fix" << regen;
    for (const RuleParam& p : r.params) {
      std::string row = "| " + p.name + " | " + Number(p.value) + " | " + p.unit + " |";
      EXPECT_NE(page.find(row), std::string::npos) << row << regen;
    }
    for (const std::string& ref : r.references) {
      EXPECT_NE(page.find("- " + ref + "\n"), std::string::npos) << ref << regen;
    }
  }
  EXPECT_TRUE(RuleDoc("no-such-rule").empty());
}

// Each page is exactly what scripts/gen_rule_docs.py writes from the rule set: a section edited
// by hand in a page (as a rule's prediction notes once were) is lost at the next run.
TEST(RuleDocs, EveryPageIsTheGeneratorsOutput) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: the page generator needs it";
  TempDir dir;
  const RunResult r =
      RunShell("python3 " + kSource + "/scripts/gen_rule_docs.py " + dir.path() + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<std::string> made = ListDir(dir.path(), ".md");
  EXPECT_EQ(made.size(), ListDir(kSource + "/docs/rules", ".md").size());
  for (const std::string& f : made) {
    EXPECT_EQ(ReadFile(kSource + "/docs/rules/" + f), ReadFile(dir.File(f)))
        << "docs/rules/" << f << " differs from python3 scripts/gen_rule_docs.py's output";
  }
}

TEST(RuleDocs, EveryReferenceIsPublic) {
  // A URL, or an article cited by its title in quotes (author or company, where, when).
  const std::regex url(R"(https://[a-z0-9.-]+\.[a-z]{2,}/\S*)");
  const std::regex title("\"[^\"]{8,}\"");
  for (const Rule& r : Defaults().rules) {
    SCOPED_TRACE(r.id);
    ASSERT_FALSE(r.references.empty());
    int urls = 0;
    for (const std::string& ref : r.references) {
      for (const char* p : kPrivate) EXPECT_EQ(ref.find(p), std::string::npos) << ref;
      bool has_url = std::regex_search(ref, url);
      urls += has_url;
      EXPECT_TRUE(has_url || std::regex_search(ref, title)) << "neither a URL nor a title: " << ref;
    }
    EXPECT_GE(urls, 1) << "at least one documentation link a user can open";
  }
}

TEST(RuleDocs, NothingUsersReadPointsIntoTheSharedFolder) {
  std::vector<std::string> files = {"README.md", "rules/default.rules.json"};
  for (const char* dir :
       {"docs", "docs/rules", "cli", "report", "viewer", "viewer/panels", "actions", "analyzers",
        "collectors/attach", "collectors/discovery", "collectors/timeline"}) {
    for (const char* ext : {".md", ".cc", ".h"}) {
      for (const std::string& f : ListDir(kSource + "/" + dir, ext)) {
        files.push_back(std::string(dir) + "/" + f);
      }
    }
  }
  ASSERT_GT(files.size(), 40u);
  for (const std::string& f : files) {
    std::string text = ReadFile(kSource + "/" + f);
    for (const char* p : kPrivate) EXPECT_EQ(text.find(p), std::string::npos) << f << ": " << p;
  }
}

TEST(RuleDocs, RulesExplainPrintsThePageAndWhatARulesFileChanged) {
  for (const char* id : {"hot-ps", "cpu-qos", "input-bound"}) {
    RunResult r = RunTfdiag(std::string("rules explain --markdown ") + id);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, std::string(RuleDoc(id))) << id;
  }
  TempDir dir;
  WriteFile(dir.File("my.rules.json"),
            R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","severity":"low",)"
            R"("params":{"min_ratio_to_next":3}}]})");
  RunResult r = RunTfdiag("rules explain --markdown hot-ps --rules " + dir.File("my.rules.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind(std::string(RuleDoc("hot-ps")), 0), 0u);
  EXPECT_NE(r.out.find("min_ratio_to_next = 3 ratio (built in: 2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("severity low (built in: high)"), std::string::npos) << r.out;
  // A rules file that rewrites the rule's texts: those texts, not the built-in page.
  WriteFile(
      dir.File("fix.rules.json"),
      R"({"schema":"tfdiag.rules/1","rules":[{"id":"idle-ps","fix":"Ask the platform team."}]})");
  RunResult rewritten = RunTfdiag("rules explain idle-ps --rules " + dir.File("fix.rules.json"));
  ASSERT_EQ(rewritten.exit_code, 0) << rewritten.err;
  EXPECT_NE(rewritten.out.find("Ask the platform team."), std::string::npos) << rewritten.out;
  EXPECT_EQ(rewritten.out.find("## Fix"), std::string::npos) << rewritten.out;
  RunResult missing = RunTfdiag("rules explain no-such-rule");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("tfdiag rules: error: no rule 'no-such-rule'"), std::string::npos)
      << missing.err;
}

TEST(RuleDocs, TextReportListsEveryReferenceOfAFinding) {
  TempDir dir;
  std::string file = dir.File("hot.json");
  ASSERT_EQ(RunTfdiag("simulate hot-ps --steps 3 -o " + file).exit_code, 0);
  RunResult r = RunTfdiag("analyze --color never " + file);
  ASSERT_NE(r.out.find("hot-ps"), std::string::npos) << r.out;
  RuleSet rules = Defaults();
  const Rule* hot = rules.Find("hot-ps");
  ASSERT_NE(hot, nullptr);
  ASSERT_GE(hot->references.size(), 2u);
  for (const std::string& ref : hot->references) {
    EXPECT_NE(r.out.find(ref), std::string::npos) << ref;
  }
}

}  // namespace
}  // namespace tfdiag::test
