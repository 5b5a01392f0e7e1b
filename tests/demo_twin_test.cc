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
    h.after_ns = im["step_ns_after_fix"].IsNumber() ? im["step_ns_after_fix"].GetDouble() : -1;
    h.saving_pct = im["saving_pct"].IsNumber() ? im["saving_pct"].GetDouble() : -1;
    h.miss_pct = im["baseline_miss_pct"].IsNumber() ? im["baseline_miss_pct"].GetDouble() : 0;
    h.trusted = im["trusted"].GetBool();
  }
  return h;
}

// The demo's job (3 steps per worker, seed 7) and a longer capture of it: the prediction is made
// (the replay of the capture lands within 10% of it) and is within 10% of the partitioned twin.
// The simulator's PS serves its ops in arrival order on its thread (samples/simulator.cc), as the
// replay's FIFO PS does. Before, it served an op in the first gap behind intervals that steps laid
// out earlier had reserved, so a later step's gather waited behind the whole burst of earlier
// steps' applies: the workers waited ~40% of the step longer than a FIFO PS at its op time
// explains, the prediction was withheld ("49.2 ms of the median 178.5 ms step is wait ...") and
// the twin ran 150.1 against 178.5 ms. Now (3 steps): 156.3 ms -> 142.5 ms predicted, twin
// 150.0 ms (-5%); 20 steps: 166.9 -> 153.3 ms, twin 151.1 ms (+1.5%).
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
    // The replay reproduces the simulator's job as captured, and predicts.
    EXPECT_LT(std::abs(h.miss_pct), 10) << steps << ": " << h.withheld;
    ASSERT_TRUE(h.withheld.empty()) << steps << ": " << h.withheld;
    EXPECT_EQ(h.method, "replay");
    EXPECT_TRUE(h.trusted);
    // The twin is the truth: the fix saves time, and the prediction lands within 10% of the
    // twin's step (what confidence high promises; the demo's is medium: its baseline misses 5%).
    EXPECT_LT(truth, measured) << steps;
    EXPECT_GT(h.saving_pct, 0) << steps;
    EXPECT_LT(std::abs(h.after_ns - truth) / truth, 0.10)
        << steps << ": predicted " << h.after_ns / 1e6 << " ms, twin " << truth / 1e6 << " ms";
  }
}

}  // namespace
}  // namespace tfdiag::test
