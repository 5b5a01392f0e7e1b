// The demo's hot-ps prediction against the simulator's own partitioned twin (issue 35): two
// separate `tfdiag simulate` runs, the demo's job (`make demo`, samples/README.md) and the same
// job and seed with the embedding cut into one part per PS (`--twin partition`); the twin's
// measured step is the truth. The steps are read straight from the trace JSON (_SOURCE start to
// group_deps end per worker step), not through tfdiag's readers or its replay.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// Median worker step (ns) of a simulated TF1 timeline: per worker device, the k-th _SOURCE's
// start to the k-th group_deps' end (timestamps in us).
double MedianStepOfTrace(const std::string& path) {
  rapidjson::Document d;
  d.Parse(ReadFile(path).c_str());
  EXPECT_FALSE(d.HasParseError()) << path;
  if (d.HasParseError()) return 0;
  std::map<int64_t, bool> worker_pid;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) != "M" || !e.HasMember("args")) continue;
    const std::string name = e["args"]["name"].GetString();
    worker_pid[e["pid"].GetInt64()] = name.find("/job:worker/") != std::string::npos &&
                                      name.find(" Compute") != std::string::npos;
  }
  std::map<int64_t, std::vector<double>> starts, ends;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) != "X" || !worker_pid[e["pid"].GetInt64()]) continue;
    const std::string name = e["args"]["name"].GetString();
    const double ts = e["ts"].GetDouble() * 1e3, dur = e["dur"].GetDouble() * 1e3;
    if (name == "_SOURCE") starts[e["pid"].GetInt64()].push_back(ts);
    if (name == "group_deps") ends[e["pid"].GetInt64()].push_back(ts + dur);
  }
  std::vector<double> steps;
  for (auto& [pid, s] : starts) {
    std::vector<double>& e = ends[pid];
    std::sort(s.begin(), s.end());
    std::sort(e.begin(), e.end());
    for (size_t k = 0; k < s.size() && k < e.size(); ++k) steps.push_back(e[k] - s[k]);
  }
  if (steps.empty()) return 0;
  std::sort(steps.begin(), steps.end());
  const size_t n = steps.size();
  return n % 2 ? steps[n / 2] : (steps[n / 2 - 1] + steps[n / 2]) / 2;
}

struct HotPsImpact {
  std::string severity, withheld, method;
  double step_ns = 0, after_ns = 0, saving_pct = 0, miss_pct = 0;
  bool trusted = false;
};

HotPsImpact AnalyzeHotPs(const std::string& path) {
  HotPsImpact h;
  const RunResult r = RunTfdiag("analyze -f json " + path);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d;
  d.Parse(r.out.c_str());
  EXPECT_FALSE(d.HasParseError());
  if (d.HasParseError()) return h;
  for (const auto& f : d["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) != "hot-ps") continue;
    const auto& im = f["impact"];
    h.severity = f["severity"].GetString();
    h.withheld = im["withheld"].GetString();
    h.method = im["method"].GetString();
    h.step_ns = im["step_ns"].GetDouble();
    h.after_ns = im["step_ns_after_fix"].GetDouble();
    h.saving_pct = im["saving_pct"].GetDouble();
    h.miss_pct = im["baseline_miss_pct"].GetDouble();
    h.trusted = im["trusted"].GetBool();
  }
  return h;
}

// The demo's job (3 steps per worker, seed 7) and a longer capture of it: a trusted prediction
// within 10% of the partitioned twin, or a withheld one whose reason is true. The simulator's
// serial PS serves an op in the first gap that fits it behind intervals that steps laid out
// earlier reserved (samples/simulator.cc, Reserve): a later step's gather waits behind the whole
// burst of earlier steps' applies, which a PS serving in arrival order would interleave. Its
// workers then wait ~40% of the step longer than a FIFO PS at its op time explains, and the
// prediction is withheld for that reason; the twin shows the saving is real. Before the baseline
// compared the replay with each worker's median step (not the median of all steps, a third of
// which are first steps before the queue forms), the 3-step demo was withheld as a 12% miss of
// the replay on its own job (now +1.7%).
TEST(DemoTwin, HotPsPredictionAgainstThePartitionedTwin) {
  TempDir dir;
  for (int steps : {3, 20}) {
    const std::string job = dir.File("hot-ps-" + std::to_string(steps) + ".json");
    const std::string twin = dir.File("hot-ps-" + std::to_string(steps) + "-twin.json");
    const std::string common = "simulate hot-ps --seed 7 --steps " + std::to_string(steps);
    ASSERT_EQ(RunTfdiag(common + " -o " + job).exit_code, 0);
    const RunResult t = RunTfdiag(common + " --twin partition -o " + twin);
    ASSERT_EQ(t.exit_code, 0) << t.err;
    const double measured = MedianStepOfTrace(job), truth = MedianStepOfTrace(twin);
    ASSERT_GT(measured, 0);
    ASSERT_GT(truth, 0);
    const HotPsImpact h = AnalyzeHotPs(job);
    EXPECT_EQ(h.severity, "high") << steps;  // severity from evidence, whatever the prediction
    EXPECT_NEAR(h.step_ns, measured, 0.01 * measured) << steps;
    std::printf(
        "hot-ps --steps %d: step %.1f ms, predicted %s, twin %.1f ms, baseline %+.1f%%\n", steps,
        measured / 1e6,
        h.withheld.empty() ? fmt::format("{:.1f} ms", h.after_ns / 1e6).c_str() : "withheld",
        truth / 1e6, h.miss_pct);
    // The replay reproduces the simulator's job as captured.
    EXPECT_LT(std::abs(h.miss_pct), 10) << steps << ": " << h.withheld;
    if (h.withheld.empty()) {
      EXPECT_TRUE(h.trusted);
      EXPECT_LT(std::abs(h.after_ns - truth) / truth, 0.10)
          << steps << ": predicted " << h.after_ns / 1e6 << " ms, twin " << truth / 1e6 << " ms";
      continue;
    }
    EXPECT_FALSE(h.trusted);
    EXPECT_EQ(h.method, "none");
    EXPECT_EQ(h.saving_pct, 0) << "a withheld prediction claims no saving";
    EXPECT_NE(h.withheld.find("explains too little"), std::string::npos) << h.withheld;
    // The reason is true: the twin saves far more than a FIFO PS model could account for.
    EXPECT_LT(truth, 0.85 * measured) << steps;
  }
}

}  // namespace
}  // namespace tfdiag::test
