// tfdiag scaling: simulated sweeps (a hot PS that serves one request at a time, and a balanced
// job), the JSON document, and bad input, through the built binary; CompareRuns directly for the
// pure parts.
#include "analyzers/scaling.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "rules/rule_set.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  EXPECT_FALSE(d.HasParseError()) << "not JSON: " << text.substr(0, 300);
  return d;
}

// Writes a sweep of `scenario` at 2, 4, 8 and 16 workers into `dir` with the simulator's CLI.
void WriteSweep(const TempDir& dir, const std::string& scenario, const std::string& extra = "") {
  RunResult r = RunTfdiag("simulate " + scenario + " --workers 2,4,8,16 --steps 12 " + extra +
                          " -o " + dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int n : {2, 4, 8, 16}) {
    ASSERT_FALSE(ReadFile(dir.File("workers-" + std::to_string(n) + ".json")).empty()) << n;
  }
}

std::string Runs(const TempDir& dir) {
  return dir.File("workers-16.json") + " " + dir.File("workers-2.json") + " " +
         dir.File("workers-8.json") + " " + dir.File("workers-4.json");
}

double Eff(const rapidjson::Value& a, const rapidjson::Value& b) {
  return (b["throughput_steps_per_s"].GetDouble() / a["throughput_steps_per_s"].GetDouble()) /
         (b["workers"].GetDouble() / a["workers"].GetDouble());
}

// The hot PS serves lookups and updates one at a time: throughput flattens where its busy share
// reaches 100%, and scaling-limit names ps:0 and the embedding between those runs only.
TEST(Scaling, HotPsSweepNamesPs0AndItsVariable) {
  TempDir dir;
  // Rows of 256 floats make ps:0's gathers and updates heavy enough to saturate within the sweep.
  WriteSweep(dir, "hot-ps", "--embedding-dim 256");
  RunResult r = RunTfdiag("scaling " + Runs(dir) + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d = ParseJson(r.out);
  const auto& runs = d["runs"];
  ASSERT_EQ(runs.Size(), 4u);
  for (rapidjson::SizeType i = 0; i < 4; ++i) {  // ordered by workers whatever the argument order
    EXPECT_EQ(runs[i]["workers"].GetInt(), 2 << i);
  }
  // The ground truth the simulator wrote names the hot variable.
  rapidjson::Document truth = ParseJson(ReadFile(dir.File("workers-2.json")));
  const std::string variable = truth["tfdiagGroundTruth"]["expect"][0]["variable"].GetString();
  ASSERT_FALSE(variable.empty());
  const double sat = 80, min_eff = 0.7;  // rules/default.rules.json scaling-limit
  int fired = 0;
  for (const auto& f : d["findings"].GetArray()) {
    ASSERT_STREQ(f["rule"].GetString(), "scaling-limit");
    EXPECT_STREQ(f["subject"].GetString(), "ps:0") << f["summary"].GetString();
    EXPECT_NE(std::string(f["summary"].GetString()).find(variable), std::string::npos)
        << f["summary"].GetString();
    fired += f["objects"].Size();  // pairs of runs with one cause are one finding (issue 36)
  }
  ASSERT_GE(fired, 1) << r.out;
  // Pairs are judged from the runs' own figures: a finding for exactly the consecutive pairs
  // whose efficiency is below the threshold, and at each, ps:0 busy at or above saturation.
  int expected = 0;
  for (rapidjson::SizeType i = 1; i < 4; ++i) {
    const double eff = Eff(runs[i - 1], runs[i]);
    if (eff >= min_eff) continue;
    ++expected;
    // Saturated (>= 80%) or queueing (>= 50%, rule param queueing_pct).
    EXPECT_GE(runs[i]["ps_busy_pct"]["ps:0"].GetDouble(), 50) << "workers " << (2 << i);
    bool named = false;
    const std::string pair = std::to_string(1 << i) + " -> " + std::to_string(2 << i) + " workers";
    for (const auto& f : d["findings"].GetArray()) {
      named |= std::string(f["summary"].GetString()).find(pair) != std::string::npos;
    }
    EXPECT_TRUE(named) << pair << " not reported:\n" << r.out;
  }
  EXPECT_EQ(fired, expected);
  // 2 -> 4 workers still scale (ps:0 far from saturated), 8 -> 16 do not.
  EXPECT_GE(Eff(runs[0], runs[1]), min_eff);
  EXPECT_LT(runs[1]["ps_busy_pct"]["ps:0"].GetDouble(), sat);
  EXPECT_LT(Eff(runs[2], runs[3]), min_eff);
  EXPECT_GE(runs[3]["ps_busy_pct"]["ps:0"].GetDouble(), sat);
  // The other PS are nowhere near busy.
  EXPECT_LT(runs[3]["ps_busy_pct"]["ps:1"].GetDouble(), 50);

  // The text report: the table, the chart beside ideal, and the finding.
  RunResult t = RunTfdiag("scaling " + Runs(dir));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("'|' ideal"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("scaling-limit ps:0"), std::string::npos) << t.out;
}

// A balanced job (embedding partitioned over the PS) scales: no scaling-limit.
TEST(Scaling, BalancedSweepScales) {
  TempDir dir;
  WriteSweep(dir, "balanced");
  RunResult r = RunTfdiag("scaling " + Runs(dir) + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d = ParseJson(r.out);
  EXPECT_EQ(d["findings"].Size(), 0u) << r.out;
  const auto& runs = d["runs"];
  ASSERT_EQ(runs.Size(), 4u);
  EXPECT_GE(runs[3]["efficiency"].GetDouble(), 0.85) << r.out;
  RunResult t = RunTfdiag("scaling " + Runs(dir));
  EXPECT_NE(t.out.find("No scaling limit"), std::string::npos) << t.out;
}

// The JSON fields and how they relate: speed-up and efficiency against the smallest run,
// examples/s with --batch-size, one busy share per PS.
TEST(Scaling, JsonFields) {
  TempDir dir;
  WriteSweep(dir, "balanced", "--ps 3");
  RunResult r =
      RunTfdiag("scaling " + Runs(dir) + " -f json --batch-size 256 -o " + dir.File("out.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  rapidjson::Document d = ParseJson(ReadFile(dir.File("out.json")));
  EXPECT_STREQ(d["schema"].GetString(), "tfdiag.scaling/1");
  const auto& runs = d["runs"];
  const double base = runs[0]["throughput_steps_per_s"].GetDouble();
  for (const auto& run : runs.GetArray()) {
    EXPECT_EQ(run["ps"].GetInt(), 3);
    EXPECT_GT(run["steps"].GetInt(), 0);
    const double tp = run["throughput_steps_per_s"].GetDouble();
    const double median_s = run["step_median_ns"].GetDouble() / 1e9;
    // Steps/s summed over workers is about workers / median step time (workers differ a little).
    EXPECT_NEAR(tp, run["workers"].GetDouble() / median_s, 0.1 * tp);
    EXPECT_NEAR(run["throughput_examples_per_s"].GetDouble(), 256 * tp, 1e-6 * tp);
    EXPECT_NEAR(run["speedup"].GetDouble(), tp / base, 1e-9);
    EXPECT_NEAR(run["ideal_speedup"].GetDouble(), run["workers"].GetDouble() / 2, 1e-9);
    EXPECT_NEAR(run["efficiency"].GetDouble(),
                run["speedup"].GetDouble() / run["ideal_speedup"].GetDouble(), 1e-9);
    ASSERT_TRUE(run["ps_busy_pct"].IsObject());
    EXPECT_EQ(run["ps_busy_pct"].MemberCount(), 3u);
    for (const auto& m : run["ps_busy_pct"].GetObject()) {
      EXPECT_GT(m.value.GetDouble(), 0) << m.name.GetString();
      EXPECT_LE(m.value.GetDouble(), 100) << m.name.GetString();
    }
    EXPECT_TRUE(run["input_wait_pct"].IsNumber());
  }
  EXPECT_TRUE(d["findings"].IsArray());
}

TEST(Scaling, OneRunIsAUsageError) {
  TempDir dir;
  WriteSweep(dir, "balanced");
  RunResult r = RunTfdiag("scaling " + dir.File("workers-2.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least two"), std::string::npos) << r.err;
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  StatusOr<ScalingResult> c = CompareRuns({ScalingRun{}}, *rules->Find("scaling-limit"));
  EXPECT_FALSE(c.ok());
}

// Runs of different jobs: the command warns and says why (PS sets, variables).
TEST(Scaling, DifferentJobsWarn) {
  TempDir a, b;
  WriteSweep(a, "hot-ps");
  WriteSweep(b, "balanced");
  RunResult r = RunTfdiag("scaling " + a.File("workers-2.json") + " " + b.File("workers-4.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("different PS sets (ps:0, ps:1, ps:2, ps:3 vs ps:0, ps:1)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("host different variables"), std::string::npos) << r.err;
  // Same job: no warning.
  RunResult same =
      RunTfdiag("scaling " + a.File("workers-2.json") + " " + a.File("workers-4.json"));
  EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
}

// A run without worker steps (only PS ops) is rejected with the run's name and what is missing;
// so is a directory without files. A directory of a run's files is one run.
TEST(Scaling, RunWithoutStepsAndDirectories) {
  TempDir dir;
  WriteSweep(dir, "balanced");
  const std::string ps_only = dir.File("ps_only.json");
  WriteFile(ps_only, R"({"traceEvents":[{"name":"process_name","ph":"M","pid":1,"args":{"name":)"
                     R"("/job:ps/replica:0/task:0/device:CPU:0 Compute"}},)"
                     R"({"ph":"X","pid":1,"tid":0,"ts":1000,"dur":50,"name":"Gather",)"
                     R"("args":{"name":"g","op":"GatherV2"}}]})");
  RunResult r = RunTfdiag("scaling " + dir.File("workers-2.json") + " " + ps_only);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(ps_only + ": no worker steps found"), std::string::npos) << r.err;

  TempDir empty;
  r = RunTfdiag("scaling " + dir.File("workers-2.json") + " " + empty.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("holds no files"), std::string::npos) << r.err;

  TempDir run4;
  ASSERT_EQ(RunShell("cp " + dir.File("workers-4.json") + " " + run4.path()).exit_code, 0);
  r = RunTfdiag("scaling " + dir.File("workers-2.json") + " " + run4.path() + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d = ParseJson(r.out);
  EXPECT_EQ(d["runs"][1]["workers"].GetInt(), 4);
  EXPECT_EQ(d["runs"][1]["name"].GetString(), run4.path());
}

ScalingRun MakeRun(const std::string& name, int workers, double steps_per_s, double ps0_busy) {
  ScalingRun r;
  r.name = name;
  r.workers = workers;
  r.ps = 1;
  r.steps = 10 * workers;
  r.step_median_ns = static_cast<TimeNs>(1e9 * workers / steps_per_s);
  r.throughput_steps_per_s = steps_per_s;
  r.ps_busy.push_back({"ps:0", ps0_busy, "busy time / span", "emb", 90});
  return r;
}

// Runs that lost different shares of the node's CPU to steal get a warning naming each run's
// steal (here the 1-worker-like smallest run lost the most, which inflates every efficiency);
// a spread under steal_spread_pct, or runs whose steal is unknown (timelines), get none.
TEST(Scaling, RunsThatSawDifferentStealAreWarnedAbout) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const Rule& rule = *rules->Find("scaling-limit");
  auto warnings = [&](double steal_a, double steal_b) {
    ScalingRun a = MakeRun("a", 4, 40, 30), b = MakeRun("b", 8, 75, 35);
    a.steal_pct = steal_a;
    b.steal_pct = steal_b;
    StatusOr<ScalingResult> r = CompareRuns({b, a}, rule);
    EXPECT_TRUE(r.ok());
    std::string all;
    for (const std::string& w : r->warnings) all += w + "\n";
    return all;
  };
  const std::string w = warnings(22, 1);
  EXPECT_NE(w.find("lost different shares of the node's CPU to steal"), std::string::npos) << w;
  EXPECT_NE(w.find("a 22.0%, b 1.0%"), std::string::npos) << w;
  const double spread = rule.Param("steal_spread_pct");
  EXPECT_EQ(warnings(1 + spread * 0.9, 1).find("steal"), std::string::npos);
  EXPECT_NE(warnings(1, 1 + spread).find("steal"), std::string::npos) << "at the spread: warned";
  EXPECT_EQ(warnings(-1, 30).find("steal"), std::string::npos) << "one run's steal unknown";
}

// The cause named when no PS saturated: the workers' input wait, CFS throttling, or nothing
// (then what was measured); and no finding when throughput follows the workers.
TEST(Scaling, CauseWhenNoPsSaturated) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const Rule& rule = *rules->Find("scaling-limit");
  auto judge = [&](ScalingRun b) {
    StatusOr<ScalingResult> r = CompareRuns({std::move(b), MakeRun("a", 4, 40, 30)}, rule);
    EXPECT_TRUE(r.ok());
    EXPECT_EQ(r->runs.front().name, "a");  // ordered by workers
    return r->findings;
  };
  ScalingRun input = MakeRun("b", 8, 44, 35);
  input.input_wait_pct = 45;
  std::vector<Finding> f = judge(input);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, "4 -> 8 workers");
  EXPECT_NE(f[0].summary.find("wait for input 45%"), std::string::npos) << f[0].summary;

  ScalingRun throttled = MakeRun("b", 8, 44, 35);
  throttled.throttled_pct = 30;
  f = judge(throttled);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].summary.find("CFS-throttled in 30%"), std::string::npos) << f[0].summary;

  f = judge(MakeRun("b", 8, 44, 35));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].summary.find("nothing measured saturated"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].summary.find("busiest PS ps:0 at 35%"), std::string::npos) << f[0].summary;

  f = judge(MakeRun("b", 8, 44, 65));  // below saturation, above queueing_pct
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].subject, "ps:0");
  EXPECT_NE(f[0].summary.find("requests queue at ps:0: busy 65%"), std::string::npos)
      << f[0].summary;
  EXPECT_NE(f[0].summary.find("of its op time is emb"), std::string::npos) << f[0].summary;

  EXPECT_TRUE(judge(MakeRun("b", 8, 76, 60)).empty());  // efficiency 95%
}

// Real traces as runs: a single-process trace has no worker steps (exit 2, naming the file); a
// TF client trace with one PS next to a simulated 4-PS job is compared with warnings saying why
// they are not one job.
TEST(Scaling, RealTraces) {
  if (!SharedAvailable()) GTEST_SKIP() << "no shared traces";
  TempDir dir;
  WriteSweep(dir, "balanced");
  const std::string local = SharedTrace("ikhlestov_8f7e68b_CPU_timeline_02_step_0.json");
  RunResult r = RunTfdiag("scaling " + local + " " + dir.File("workers-2.json"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(local + ": no worker steps found"), std::string::npos) << r.err;

  const std::string client = SharedTrace("tfe_e0cd14f_timeline_client.json");
  r = RunTfdiag("scaling " + client + " " + dir.File("workers-4.json") + " -f json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("different PS sets"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("host different variables"), std::string::npos) << r.err;
  rapidjson::Document d = ParseJson(r.out);
  ASSERT_EQ(d["warnings"].Size(), 2u) << r.out;
  for (const auto& run : d["runs"].GetArray()) EXPECT_GT(run["steps"].GetInt(), 0);
}

}  // namespace
}  // namespace tfdiag::test
