// What-if replay (analyzers/replay.h) against the simulator's fixed twins (samples/twins.h): the
// predicted step after a fix on a scenario is within 15% of the twin's measured median step.
#include "analyzers/replay.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "rules/rule_set.h"
#include "samples/twins.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

RuleSet Rules() {
  StatusOr<RuleSet> r = DefaultRuleSet();
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

// Median step of all worker steps of `c` (ns).
double MedianWorkerStep(const Capture& c) {
  std::vector<double> v;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kWorker) continue;
    for (const StepRow& s : c.TaskSteps(t)) v.push_back(double(s.end - s.start));
  }
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Case {
  const char* scenario;
  double input_frac;  // -1: the scenario's
  const char* rule;
  const char* fix;
};

struct Outcome {
  double now = 0, predicted = 0, twin = 0;
  std::string why;
};

// Simulates the scenario and its twin, analyzes the scenario, returns the rule's prediction.
Outcome RunCase(const Case& k, const TempDir& dir) {
  Outcome o;
  sim::ScenarioParams p;
  p.scenario = k.scenario;
  p.steps = 20;
  const std::string a = dir.File(std::string(k.scenario) + "-" + k.fix + ".json");
  const std::string b = dir.File(std::string(k.scenario) + "-" + k.fix + "-twin.json");
  EXPECT_TRUE(sim::WriteVariant(p, {"", k.input_frac}, a).ok());
  EXPECT_TRUE(sim::WriteVariant(p, {k.fix, k.input_frac}, b).ok());
  const Capture c = LoadOrDie({a});
  const AnalysisResult r = Analyze(c, Rules());
  for (const Finding& f : r.findings) {
    if (f.rule_id != k.rule) continue;
    EXPECT_EQ(f.impact.method, "replay") << f.impact.why;
    o.now = f.impact.step_ns;
    o.predicted = f.impact.step_ns_after_fix;
    o.why = f.impact.why;
  }
  o.twin = MedianWorkerStep(LoadOrDie({b}));
  return o;
}

void ExpectWithin15(const Case& k, const Outcome& o) {
  ASSERT_GT(o.predicted, 0) << k.scenario << ": no " << k.rule << " finding";
  const double err = (o.predicted - o.twin) / o.twin;
  std::printf("| %s%s | %s | %.1f ms | %.1f ms | %.1f ms | %+.1f%% |\n", k.scenario,
              k.input_frac >= 0 ? " + slow input" : "", k.rule, o.now / 1e6, o.predicted / 1e6,
              o.twin / 1e6, 100 * err);
  EXPECT_LT(std::abs(err), 0.15) << k.scenario << " " << k.rule << ": " << o.why;
}

TEST(Replay, HotPsPartitionedTwin) {
  TempDir dir;
  const Case k{"hot-ps", -1, "hot-ps", "partition"};
  ExpectWithin15(k, RunCase(k, dir));
}

TEST(Replay, InputBoundPrefetchTwin) {
  TempDir dir;
  const Case k{"input-bound", -1, "input-bound", "prefetch"};
  ExpectWithin15(k, RunCase(k, dir));
}

// A hot PS queues every worker and the input is slow: prefetching lets the workers reach the
// hot PS sooner, where they queue longer, so the saving is less than the input time removed.
TEST(Replay, HotPsWithSlowInputInteract) {
  TempDir dir;
  const Case prefetch{"hot-ps", 0.3, "input-bound", "prefetch"};
  const Outcome o = RunCase(prefetch, dir);
  ExpectWithin15(prefetch, o);
  const Case partition{"hot-ps", 0.3, "hot-ps", "partition"};
  ExpectWithin15(partition, RunCase(partition, dir));
  // The naive saving: the input time itself (30% of the target step per worker).
  const double naive = 0.3 * o.now;
  EXPECT_LT(o.now - o.predicted, 0.8 * naive) << o.why;
}

}  // namespace
}  // namespace tfdiag::test
