// Set-up the replay and severity tests share: the default rules, a finding by rule, the median
// worker step of a capture, and a simulated scenario analysed in one call.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/analysis_input.h"
#include "analyzers/replay.h"
#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "rules/rule_set.h"
#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {

// The default rule set; a failure to load it is a test failure, and an empty rule set is returned.
inline RuleSet Rules() {
  StatusOr<RuleSet> r = DefaultRuleSet();
  if (!r.ok()) {
    ADD_FAILURE() << "the default rules do not load: " << r.status().message();
    return RuleSet();
  }
  return std::move(*r);
}

// The first finding of `rule` in `r`, or nullptr.
inline const Finding* FindRule(const AnalysisResult& r, const std::string& rule) {
  for (const Finding& f : r.findings) {
    if (f.rule_id == rule) return &f;
  }
  return nullptr;
}

// Median of all worker steps of `c` (ns; the upper middle of an even count), 0 without any.
inline double MedianWorkerStep(const Capture& c) {
  std::vector<double> v;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kWorker) continue;
    for (const StepRow& s : c.TaskSteps(t)) v.push_back(double(s.end - s.start));
  }
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// `tfdiag simulate SCENARIO --steps STEPS` written into `dir` (its path in `*path`) and analysed
// with the default rules.
inline AnalysisResult AnalyzeScenario(const TempDir& dir, const std::string& scenario, int steps,
                                      std::string* path) {
  sim::ScenarioParams p;
  p.scenario = scenario;
  p.steps = steps;
  *path = dir.File(scenario + "-" + std::to_string(steps) + ".json");
  EXPECT_TRUE(sim::WriteScenario(p, *path).ok()) << scenario;
  return Analyze(LoadOrDie({*path}), Rules());
}

// Seed `seed` of the twin generator `gen` ("gen2" or "gen3": bench/twins/<gen>/<gen>jobs.draw,
// simulated by <gen>sim.simulate; "indep": bench/twins/indep/jobs.draw and indepsim.simulate)
// written into `dir` as a TF1 timeline. Returns its path, or "" with a test failure (the
// simulator's output) when the simulation fails. Callers skip first when !HavePython3().
inline std::string SimulatedJob(const std::string& gen, int seed, const TempDir& dir) {
  const std::string path = dir.File(gen + "_" + std::to_string(seed) + ".json");
  const std::string jobs = gen == "indep" ? "jobs" : gen + "jobs";
  const std::string sim = gen == "indep" ? "indepsim" : gen + "sim";
  const RunResult r =
      RunShell("cd " + std::string(SourceDir()) + "/bench/twins/" + gen +
               " && python3 -c 'import " + jobs + ", " + sim + "; " + sim + ".simulate(" + jobs +
               ".draw(" + std::to_string(seed) + "), \"" + path + "\")'");
  EXPECT_EQ(r.exit_code, 0) << gen << " seed " << seed << ": " << r.out << r.err;
  return r.exit_code == 0 ? path : "";
}

// `n` workers (tasks 10, 11, ...) of `compute_ns` compute, each holding `recv_ns` of receive wait
// and `tail_ns` of idle tail the PS model does not explain (Worker::recv_ns, tail_ns), appended to
// `*m`: the hand-made models of the replay tests.
inline void AddWorkers(ReplayModel* m, int n, double compute_ns, double recv_ns,
                       double tail_ns = 0) {
  for (int w = 0; w < n; ++w) {
    ReplayModel::Worker x;
    x.task = 10 + uint32_t(w);
    x.compute_ns = compute_ns;
    x.recv_ns = recv_ns;
    x.tail_ns = tail_ns;
    m->workers.push_back(x);
  }
}

// The (rule, subject) of each ps-worker-ratio finding of `r` whose count is by measurement (its
// fix text says so): the measured count replays the PS queues the workers' receives are tied to,
// which a TF2 profile without rendezvous keys does not tie (docs/predictions.md, "Every format").
inline std::set<std::pair<std::string, std::string>> MeasuredPsCounts(const AnalysisResult& r) {
  std::set<std::pair<std::string, std::string>> k;
  for (const Finding& f : r.findings) {
    if (f.rule_id == "ps-worker-ratio" && f.fix.find("by measurement") != std::string::npos) {
      k.insert({f.rule_id, f.subject});
    }
  }
  return k;
}

// A simulated job's capture, what its AnalysisInput refers to and its replay model.
struct SimJob {
  Capture c;
  TaskStatsTable stats;
  std::vector<ProcessStats> procs;
  TrafficStats traffic;
  std::vector<SchedStats> sched;
  std::unique_ptr<StepGraph> graph;
  ReplayModel m;
  AnalysisInput In() const { return {c, stats, procs, traffic, sched, nullptr, graph.get()}; }
};

// Seed `seed` of generator `gen` simulated into `dir` (SimulatedJob) and loaded into `*j`, its
// replay model built; a fatal failure (ASSERT_NO_FATAL_FAILURE the call) when the simulation
// fails.
inline void LoadSimJob(const std::string& gen, int seed, const TempDir& dir, SimJob* j) {
  const std::string path = SimulatedJob(gen, seed, dir);
  ASSERT_FALSE(path.empty());
  j->c = LoadOrDie({path});
  j->stats = ComputeTaskStats(j->c);
  j->graph = std::make_unique<StepGraph>(StepGraph::Build(j->c));
  j->m = BuildReplayModel(j->In());
}

// The first row of `rule` in a bench/twins job (`job["rows"]`, run_indep.py's finding_row), or
// nullptr.
inline const rapidjson::Value* Row(const rapidjson::Value& job, const std::string& rule) {
  for (const auto& r : job["rows"].GetArray()) {
    if (rule == r["rule"].GetString()) return &r;
  }
  return nullptr;
}

// `python3 bench/twins/SCRIPT <tfdiag> ARGS --json OUT` (SCRIPT e.g. "gen2/run_gen2.py"), its JSON
// parsed into `*d` and its stdout into `*out`. A fatal test failure (ASSERT_NO_FATAL_FAILURE the
// call) when the script fails or its JSON does not hold `jobs` jobs. Callers skip first when
// !HavePython3().
inline void RunBenchJobs(const std::string& script, const std::string& args, size_t jobs,
                         rapidjson::Document* d, std::string* out) {
  TempDir dir;
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/twins/" + script + " " +
               BuiltTfdiag() + " " + args + " --json " + dir.File("out.json"));
  *out = r.out;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  d->Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(d->IsObject() && d->HasMember("jobs") && (*d)["jobs"].IsArray() &&
              (*d)["jobs"].Size() == jobs)
      << r.out;
}

// One seed of a generator suite (SCRIPT e.g. "gen3/run_gen3.py", run by RunBenchJobs with
// --no-outlook) and its first row of `rule` in `*row`: a fatal test failure when the run fails or
// has no such row, or, with `predicted`, when that row holds no prediction. Callers skip first
// when !HavePython3().
inline void RunBenchRow(const std::string& script, int seed, const std::string& rule,
                        bool predicted, rapidjson::Document* d, std::string* out,
                        const rapidjson::Value** row) {
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs(script, "--seeds " + std::to_string(seed) + " --no-outlook", 1, d, out));
  *row = Row((*d)["jobs"][0], rule);
  ASSERT_NE(*row, nullptr) << "no " << rule << " finding\n" << *out;
  if (predicted) {
    ASSERT_TRUE((*row)->HasMember("pred_ms"))
        << ((*row)->HasMember("why") ? (**row)["why"].GetString() : *out);
  }
}

// RunBenchRow of `rule` on seed `seed` of `script`, predicted, and its |err_pct| at most
// `max_pct` (a non-fatal failure naming the run's output otherwise). Callers skip first when
// !HavePython3().
inline void ExpectBenchRowWithin(const std::string& script, int seed, const std::string& rule,
                                 double max_pct) {
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(RunBenchRow(script, seed, rule, true, &d, &out, &row));
  EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), max_pct) << out;
}

}  // namespace tfdiag::test
