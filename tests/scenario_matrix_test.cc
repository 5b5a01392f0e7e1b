// The rules x scenarios matrix: every rule fires on its own simulated scenario, names the right
// subject, and stays quiet on the other scenarios and on `balanced`; and the real traces in
// ../shared/traces give what this file states of each. Expectations on scenarios come from the
// ground truth the simulator records in each file ("tfdiagGroundTruth").
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <set>

#include "analyzers/analysis.h"
#include "analyzers/grouping.h"
#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

struct Expected {
  std::string rule, subject, variable;
};

std::vector<Expected> GroundTruth(const std::string& path) {
  rapidjson::Document d;
  d.Parse(ReadFile(path).c_str());
  std::vector<Expected> out;
  if (d.HasParseError() || !d.HasMember("tfdiagGroundTruth")) {
    ADD_FAILURE() << path << ": no ground truth";
    return out;
  }
  for (auto& e : d["tfdiagGroundTruth"]["expect"].GetArray()) {
    Expected x{e["rule"].GetString(), e["subject"].GetString(), ""};
    if (e.HasMember("variable")) x.variable = e["variable"].GetString();
    out.push_back(x);
  }
  return out;
}

bool Matches(const Expected& e, const Finding& f) {
  if (e.rule != f.rule_id) return false;
  if (e.subject != f.subject && e.subject != f.task) return false;
  if (e.variable.empty() || e.variable == f.subject) return true;
  for (const std::string& op : f.ops) {
    if (op == e.variable) return true;
  }
  return false;
}

RuleSet Rules() {
  StatusOr<RuleSet> r = DefaultRuleSet();
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(ValidateRuleSet(*r).ok());
  return *r;
}

TEST(ScenarioMatrix, EachRuleFiresOnItsScenarioOnlyInBothFormats) {
  const RuleSet rules = Rules();
  TempDir dir;
  // matrix[scenario][rule] = "ok" | "MISSING" | "EXTRA"
  std::map<std::string, std::map<std::string, std::string>> matrix;
  std::set<std::string> covered_rules;
  bool failed = false;
  std::string details;
  for (const std::string& scenario : sim::ScenarioNames()) {
    // tf1, tf2 and ProfilerHook's files (issue 28): a TF1 timeline per step, 10 minutes apart,
    // of CPU+GPU worker tasks (the GPU's _SOURCE ~1 ms after the CPU's).
    for (const std::string variant : {"tf1", "tf2", "hook"}) {
      sim::ScenarioParams p;
      p.scenario = scenario;
      p.steps = 6;
      p.format = variant == "tf2" ? sim::TraceFormat::kTf2 : sim::TraceFormat::kTf1;
      const std::string tag = scenario + "/" + variant;
      std::string path = dir.File(scenario + ".json");
      std::vector<std::string> inputs = {path};
      if (variant == "hook") {
        p.worker_gpu = true;
        p.profiler_hook_minutes = 10;
        path = dir.File(scenario + "-hook");
        inputs.clear();
        for (int k = 1; k <= p.steps; ++k)
          inputs.push_back(fmt::format("{}/timeline-{}.json", path, k));
      }
      ASSERT_TRUE(sim::WriteScenario(p, path).ok()) << tag;
      std::vector<Expected> expected = GroundTruth(inputs[0]);
      Capture c = LoadOrDie(inputs);
      AnalysisResult r = Analyze(c, rules);
      r.findings = UngroupFindings(r.findings);  // judged object by object
      for (const Rule& rule : rules.rules) {
        std::string cell = ".";
        bool want = false;
        for (const Expected& e : expected) {
          if (e.rule != rule.id) continue;
          want = true;
          bool found = false;
          for (const Finding& f : r.findings) found |= Matches(e, f);
          if (!found) {
            cell = "MISSING";
            details +=
                fmt::format("{}: {} expected on {} {}\n", tag, rule.id, e.subject, e.variable);
          } else if (cell == ".") {
            cell = "ok";
          }
        }
        for (const Finding& f : r.findings) {
          if (f.rule_id != rule.id) continue;
          bool expected_one = false;
          for (const Expected& e : expected) expected_one |= Matches(e, f);
          if (!expected_one) {
            cell = want ? cell + "+EXTRA" : "EXTRA";
            details +=
                fmt::format("{}: unexpected {} on {}: {}\n", tag, rule.id, f.subject, f.summary);
          }
        }
        if (cell != "." && cell != "ok") failed = true;
        if (cell == "ok") covered_rules.insert(rule.id);
        std::string& m = matrix[scenario][rule.id];
        if (m.empty() || m == "." || m == "ok") m = cell;
      }
    }
  }
  if (failed) {
    std::string table = fmt::format("{:<30}", "scenario \\ rule");
    for (const Rule& rule : rules.rules) table += fmt::format(" {:>8.8}", rule.id);
    table += "\n";
    for (const auto& [scenario, row] : matrix) {
      table += fmt::format("{:<30}", scenario);
      for (const Rule& rule : rules.rules) table += fmt::format(" {:>8.8}", row.at(rule.id));
      table += "\n";
    }
    ADD_FAILURE() << "rules x scenarios matrix (ok = fired as expected, . = quiet as expected):\n"
                  << table << details;
  }
  // Every timeline rule has a scenario that proves it (live rules are proven in attach_test).
  for (const Rule& rule : rules.rules) {
    if (FindAnalyzer(rule.analyzer)->live || FindAnalyzer(rule.analyzer)->k8s) continue;
    if (FindAnalyzer(rule.analyzer)->runs) continue;  // compares runs: scaling_test
    // The simulator models PS jobs whose workers compute most of each step; worker-wait is
    // proven on a synchronous job without PS (real_input_fidelity_test, WorkersActingAsPs).
    if (rule.id == "worker-wait") continue;
    // host-bound and launch-bound read XProf's step-time breakdown of a GPU host's XSpace, which
    // the simulator's CPU PS jobs do not have; they are proven on real TF2 captures beside
    // XProf's own figures and on built XSpaces (xprof_breakdown_test).
    if (rule.id == "host-bound" || rule.id == "launch-bound") continue;
    // slow-ps-host needs a PS host slower than the others, which the simulator's PS do not have
    // (every PS op costs the same on every PS); it is proven on the independent simulator's
    // per-host speeds (replay_indep_test's SlowPsHostIsPredicted) and stays quiet on every
    // scenario here (an EXTRA cell above fails).
    if (rule.id == "slow-ps-host") continue;
    EXPECT_TRUE(covered_rules.count(rule.id)) << rule.id << " fired on no scenario";
  }
}

TEST(ScenarioMatrix, BalancedIsQuiet) {
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "balanced";
  p.steps = 8;
  ASSERT_TRUE(sim::WriteScenario(p, dir.File("b.json")).ok());
  AnalysisResult r = Analyze(LoadOrDie({dir.File("b.json")}), Rules());
  for (const Finding& f : r.findings)
    ADD_FAILURE() << f.rule_id << " " << f.subject << ": " << f.summary;
}

TEST(RealTraces, RulesOnRealTracesSayWhatIsTrueOfThem) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const RuleSet rules = Rules();
  // tf-encrypted: 1 PS + 2 workers, dense MatMul model, one step. With a single PS there is no
  // hot or idle PS; 2 workers per PS is inside the dense band; one step judges no straggler; no
  // input ops, no sync machinery, no GPU, no sizes: nothing fires.
  {
    AnalysisResult r = Analyze(LoadOrDie({SharedTrace("tfe_e0cd14f_timeline_client.json")}), rules);
    EXPECT_EQ(r.stats.num_ps, 1);
    EXPECT_EQ(r.stats.num_workers, 2);
    for (const Finding& f : r.findings) ADD_FAILURE() << "tfe: " << f.rule_id << ": " << f.summary;
  }
  // ikhlestov: a single local process, no PS: no PS rule applies; nothing fires.
  {
    AnalysisResult r =
        Analyze(LoadOrDie({SharedTrace("ikhlestov_8f7e68b_CPU_timeline_02_step_0.json")}), rules);
    EXPECT_EQ(r.stats.num_ps, 0);
    for (const Finding& f : r.findings)
      ADD_FAILURE() << "ikhlestov: " << f.rule_id << ": " << f.summary;
  }
}

TEST(RuleSetTest, OverridesAndDisablesAreApplied) {
  RuleSet rules = Rules();
  ASSERT_TRUE(ApplyRulesFile(&rules,
                             R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","severity":"low",
                                 "params":{"min_ratio_to_next":{"value":2.5}}}]})",
                             "test.rules.json")
                  .ok());
  EXPECT_EQ(rules.Find("hot-ps")->severity, Severity::kLow);
  EXPECT_DOUBLE_EQ(rules.Find("hot-ps")->Param("min_ratio_to_next"), 2.5);
  EXPECT_EQ(rules.Find("hot-ps")->FindParam("min_ratio_to_next")->unit, "ratio");
  ASSERT_TRUE(DisableRule(&rules, "idle-ps").ok());
  EXPECT_FALSE(rules.Find("idle-ps")->enabled);
  EXPECT_FALSE(DisableRule(&rules, "nope").ok());
}

TEST(RuleSetTest, LoaderNamesRuleAndFieldInErrors) {
  struct Case {
    const char* json;
    const char* must_contain;
  };
  const Case cases[] = {
      {R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","colour":"red"}]})",
       "rule 'hot-ps': colour: unknown key"},
      {R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","params":{"min_ps":{"value":"two"}}}]})",
       "rule 'hot-ps': params.min_ps.value: expected a number"},
      {R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","params":{"nope":1}}]})",
       "rule 'hot-ps': params.nope: the rule has no such parameter"},
      {R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","severity":"urgent"}]})",
       "rule 'hot-ps': severity"},
      {R"({"schema":"tfdiag.rules/1","rules":[{"id":"new-rule","analyzer":"hot_ps"}]})",
       "rule 'new-rule': severity: missing"},
      {R"({"schema":"tfdiag.rules/2","rules":[]})", "schema"},
      {R"({"schema":"tfdiag.rules/1","rules":{}})", "rules: expected an array"},
      {R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","params":{"variables_share":{"value":1.5}}}]})",
       "params.variables_share.value: must be <= 1"},
  };
  for (const Case& c : cases) {
    RuleSet rules = Rules();
    Status s = ApplyRulesFile(&rules, c.json, "user.rules.json");
    EXPECT_FALSE(s.ok()) << c.json;
    EXPECT_NE(s.message().find("user.rules.json"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(c.must_contain), std::string::npos) << s.message();
  }
  // An unknown analyzer is caught by validation.
  RuleSet rules = Rules();
  ASSERT_TRUE(
      ApplyRulesFile(
          &rules, R"({"schema":"tfdiag.rules/1","rules":[{"id":"hot-ps","analyzer":"nope"}]})", "u")
          .ok());
  Status v = ValidateRuleSet(rules);
  EXPECT_FALSE(v.ok());
  EXPECT_NE(v.message().find("rule 'hot-ps': analyzer: unknown analyzer 'nope'"), std::string::npos)
      << v.message();
}

}  // namespace
}  // namespace tfdiag::test
