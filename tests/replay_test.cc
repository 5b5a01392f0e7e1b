// What-if replay (analyzers/replay.h) against the simulator's fixed twins (samples/twins.h): the
// predicted step after a fix on a scenario is within 15% of the twin's measured median step.
#include "analyzers/replay.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "analyzers/op_names.h"
#include "analyzers/replay_fixes.h"
#include "analyzers/replay_link.h"
#include "analyzers/replay_plan.h"
#include "rules/rule_set.h"
#include "samples/twins.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

struct Case {
  const char* scenario;
  double input_frac;  // -1: the scenario's
  const char* rule;
  const char* fix;
};

struct Outcome {
  double now = 0, predicted = 0, twin = 0;
  std::string why, withheld;
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
    o.withheld = f.impact.withheld;
    if (o.withheld.empty()) {
      EXPECT_EQ(f.impact.method, "replay") << f.impact.why;
    }
    o.now = f.impact.step_ns;
    o.predicted = f.impact.step_ns_after_fix;
    o.why = f.impact.why;
  }
  o.twin = MedianWorkerStep(LoadOrDie({b}));
  return o;
}

void ExpectWithin15(const Case& k, const Outcome& o) {
  ASSERT_GT(o.predicted, 0) << k.scenario << ": no " << k.rule << " finding";
  ASSERT_TRUE(o.withheld.empty()) << k.scenario << " " << k.rule << ": " << o.withheld;
  const double err = (o.predicted - o.twin) / o.twin;
  std::printf("| %s%s | %s | %.1f ms | %.1f ms | %.1f ms | %+.1f%% |\n", k.scenario,
              k.input_frac >= 0 ? " + slow input" : "", k.rule, o.now / 1e6, o.predicted / 1e6,
              o.twin / 1e6, 100 * err);
  EXPECT_LT(std::abs(err), 0.15) << k.scenario << " " << k.rule << ": " << o.why;
}

// Predicted (issue 47: a withheld prediction no longer passes), within 15% of the twin.
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

// Synchronous-free PS training: the slow worker slows itself, so the job's median step barely
// moves when it runs at the median (the saving is its own, not the job's).
TEST(Replay, StragglerAtMedianTwin) {
  TempDir dir;
  const Case k{"straggler-worker", -1, "straggler-worker", "straggler"};
  ExpectWithin15(k, RunCase(k, dir));
}

// A hot PS queues every worker and the input is slow: prefetching lets the workers reach the
// hot PS sooner, where they queue longer, so the saving is less than the input time removed.
TEST(Replay, HotPsWithSlowInputInteract) {
  TempDir dir;
  const Case prefetch{"hot-ps", 0.3, "input-bound", "prefetch"};
  const Outcome o = RunCase(prefetch, dir);
  ExpectWithin15(prefetch, o);  // predicted (issue 47: withheld fails)
  const Case partition{"hot-ps", 0.3, "hot-ps", "partition"};
  ExpectWithin15(partition, RunCase(partition, dir));
  // The naive saving: the input time itself (30% of the target step per worker).
  const double naive = 0.3 * o.now;
  EXPECT_LT(o.now - o.predicted, 0.8 * naive) << o.why;
}

// A PS saturated in the capture bounds a fix that leaves its work as it is (issue 35): hot-ps
// (ps:0 on one thread, its op time ~91% of the step) with slow input. The replay alone puts the
// prefetched step at ps:0's full capacity (137 ms after calibration) where the prefetched twin
// runs 160 ms: ps:0 keeps the idle time its workers' bunched arrivals leave it. The bound holds
// the prediction at the measured step, within 5% of the twin, and says so; a job with no
// saturated PS (input-bound alone) is not bounded.
TEST(Replay, SaturatedPsBoundsAFixThatLeavesItsWork) {
  TempDir dir;
  const Case hot{"hot-ps", 0.3, "input-bound", "prefetch"};
  const Outcome o = RunCase(hot, dir);
  ASSERT_TRUE(o.withheld.empty()) << o.withheld;
  EXPECT_LT(std::abs(o.predicted - o.twin) / o.twin, 0.05) << o.why;
  EXPECT_GE(o.predicted, o.now) << o.why;
  EXPECT_NE(o.why.find("bounded by ps:0, saturated in the capture"), std::string::npos) << o.why;
  const Case plain{"input-bound", -1, "input-bound", "prefetch"};
  const Outcome q = RunCase(plain, dir);
  EXPECT_EQ(q.why.find("bounded by"), std::string::npos) << q.why;
  EXPECT_LT(q.predicted, 0.8 * q.now) << q.why;
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// The evidence behind a prediction sets its confidence, not the finding's severity (issue 35):
// the same input-bound job is HIGH over 20 steps and over one step per worker, where the
// prediction has low confidence, says why, and is not trusted.
TEST(ReplaySeverity, OneStepLowersConfidenceNotSeverity) {
  TempDir dir;
  for (int steps : {1, 20}) {
    std::string path;
    const AnalysisResult r = AnalyzeScenario(dir, "input-bound", steps, &path);
    const Finding* f = FindRule(r, "input-bound");
    ASSERT_NE(f, nullptr) << steps;
    EXPECT_GT(f->impact.saving_pct, 20) << f->impact.why;
    EXPECT_EQ(f->severity, Severity::kHigh);
    if (steps == 1) {
      EXPECT_EQ(f->impact.confidence, "low");
      EXPECT_FALSE(f->impact.trusted());
      EXPECT_NE(f->impact.why.find("1 step(s) per worker"), std::string::npos) << f->impact.why;
    } else {
      EXPECT_EQ(f->impact.confidence, "high") << f->impact.why;
    }
  }
}

// Hot PS plus slow input: partitioning comes first (findings of a severity sort by trusted
// saving; the report opens with the biggest) and prefetch buys next to nothing there; its
// severity is its own evidence's (issue 35), not the saving's.
TEST(ReplaySeverity, FixFirstIsTheBiggestSaving) {
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 20;
  const std::string path = dir.File("hot-slow.json");
  ASSERT_TRUE(sim::WriteVariant(p, {"", 0.3}, path).ok());
  const RunResult text = RunTfdiag("analyze " + path);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  const Capture c = LoadOrDie({path});
  const AnalysisResult r = Analyze(c, Rules());
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].rule_id, "hot-ps");  // HIGH: severity from evidence, first
  // Fix first names the biggest trusted saving; a withheld hot-ps prediction is never named.
  const Finding* best = nullptr;
  for (const Finding& f : r.findings) {
    if (f.impact.trusted() && f.impact.saving_pct > 0 &&
        (best == nullptr || f.impact.saving_pct > best->impact.saving_pct)) {
      best = &f;
    }
  }
  // Issue 47: Fix first is there and names the fix the twins say buys most (partition's twin
  // runs faster than prefetch's), not another fix and not none.
  ASSERT_NE(best, nullptr) << "no trusted prediction: Fix first withheld\n" << text.out;
  EXPECT_EQ(text.out.rfind("Fix first: " + best->rule_id + " on ", 0), 0u) << text.out;
  const std::string partitioned = dir.File("hot-slow-partition.json");
  const std::string prefetched = dir.File("hot-slow-prefetch.json");
  ASSERT_TRUE(sim::WriteVariant(p, {"partition", 0.3}, partitioned).ok());
  ASSERT_TRUE(sim::WriteVariant(p, {"prefetch", 0.3}, prefetched).ok());
  const double partition_twin = MedianWorkerStep(LoadOrDie({partitioned}));
  const double prefetch_twin = MedianWorkerStep(LoadOrDie({prefetched}));
  ASSERT_LT(partition_twin, prefetch_twin) << "the twins' best fix is partition";
  EXPECT_EQ(best->rule_id, "hot-ps")
      << "Fix first names " << best->rule_id << "; partition's twin: " << partition_twin / 1e6
      << " ms, prefetch's: " << prefetch_twin / 1e6 << " ms";
  if (!r.findings[0].impact.withheld.empty()) {
    EXPECT_EQ(text.out.find("Fix first: hot-ps"), std::string::npos) << text.out;
  }
  const Finding* ib = FindRule(r, "input-bound");
  ASSERT_NE(ib, nullptr);
  EXPECT_LT(ib->impact.saving_pct, 5);
}

// Too many PS for the workers, but one hot PS holds the embedding: ps-worker-ratio names it and
// says to partition, instead of "expect idle PS". Its fix, fewer PS (8 -> 5, every variable
// partitioned over them), is predicted at most `medium` (analyzers/replay_fixes.h FewerPsCaveat),
// and the impact names the PS tasks the fix frees.
TEST(ReplaySeverity, PsWorkerRatioDoesNotBlameIdlePsOnAHotPs) {
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.ps = 8;
  p.workers = 16;
  p.steps = 4;
  const std::string path = dir.File("hot8.json");
  ASSERT_TRUE(sim::WriteScenario(p, path).ok());
  const Capture c = LoadOrDie({path});
  const AnalysisResult r = Analyze(c, Rules());
  const Finding* f = FindRule(r, "ps-worker-ratio");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->summary.find("expect idle PS"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("ps:0 does"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("partition"), std::string::npos) << f->summary;
  // The fix text says the same, first; then the count its prediction replays.
  EXPECT_EQ(f->fix.rfind("For this job: partition what ps:0 holds across the PS first", 0), 0u)
      << f->fix;
  EXPECT_NE(f->fix.find("run 5 PS instead of 8"), std::string::npos) << f->fix;
  EXPECT_EQ(f->impact.method, "replay") << f->impact.why;
  EXPECT_NE(f->impact.confidence, "high") << f->impact.why;
  EXPECT_NE(f->impact.why.find("8 PS -> 5"), std::string::npos) << f->impact.why;
  EXPECT_NE(f->impact.why.find("3 PS task(s)"), std::string::npos) << f->impact.why;
}

}  // namespace
}  // namespace tfdiag::test

// The fixes that change transfers or the PS count (analyzers/replay_fixes.h): oversharding,
// gather-on-worker, idle-ps and ps-worker-ratio, each against its twin (the same job with the fix
// applied and the same compute).
namespace tfdiag::test {
namespace {

double Evidence(const Finding& f, const std::string& label) {
  for (const Figure& e : f.evidence) {
    if (e.label == label) return e.value;
  }
  return -1;
}

// Simulates `scenario` (20 steps per worker), analyzes it, then simulates the twin of `fix`
// (ps-count: the PS count the finding suggests, or `ps` when > 0), and compares.
struct FixOutcome {
  Impact impact;
  double twin = 0;
};
FixOutcome RunFixCase(const std::string& scenario, const std::string& rule, const std::string& fix,
                      int ps, const TempDir& dir, int job_ps = -1, int job_workers = -1) {
  FixOutcome o;
  sim::ScenarioParams p;
  p.scenario = scenario;
  p.steps = 20;
  p.ps = job_ps;
  p.workers = job_workers;
  const std::string a = dir.File(scenario + "-" + rule + ".json");
  const std::string b = dir.File(scenario + "-" + rule + "-twin.json");
  EXPECT_TRUE(sim::WriteVariant(p, {}, a).ok());
  const Capture c = LoadOrDie({a});
  const AnalysisResult r = Analyze(c, Rules());
  const Finding* f = FindRule(r, rule);
  if (f == nullptr) {
    ADD_FAILURE() << scenario << ": no " << rule << " finding";
    return o;
  }
  o.impact = f->impact;
  sim::Variant v;
  v.fix = fix;
  v.ps = ps > 0 ? ps : static_cast<int>(Evidence(*f, "suggested PS count"));
  const Status st = sim::WriteVariant(p, v, b);
  EXPECT_TRUE(st.ok()) << st.message();
  o.twin = MedianWorkerStep(LoadOrDie({b}));
  return o;
}

void ExpectFixWithin15(const std::string& scenario, const std::string& rule, const FixOutcome& o) {
  ASSERT_EQ(o.impact.method, "replay") << o.impact.why;
  ASSERT_GT(o.twin, 0);
  const double err = (o.impact.step_ns_after_fix - o.twin) / o.twin;
  std::printf("| %s | %s | %.1f ms | %.1f ms | %.1f ms | %+.1f%% |\n", scenario.c_str(),
              rule.c_str(), o.impact.step_ns / 1e6, o.impact.step_ns_after_fix / 1e6, o.twin / 1e6,
              100 * err);
  EXPECT_LT(std::abs(err), 0.15) << scenario << " " << rule << ": " << o.impact.why;
}

// The whole embedding travels to every worker every step (~165 ms of a 205 ms step); looked up
// on the PS, only the rows do: the replay removes the receive time the tables' arrival ended in
// the ratio of the rows' bytes to the tables' (show_memory sizes), and the twin agrees.
TEST(ReplayFixes, GatherOnWorkerLookupOnPsTwin) {
  TempDir dir;
  const FixOutcome o = RunFixCase("gather-on-worker", "gather-on-worker", "gather-on-ps", 0, dir);
  ExpectFixWithin15("gather-on-worker", "gather-on-worker", o);
  EXPECT_GT(o.impact.saving_pct, 60) << o.impact.why;
  EXPECT_NE(o.impact.why.find("MiB of rows"), std::string::npos) << o.impact.why;
}

// 32 parts per dense kernel over 2 PS: the parts arrive behind the forward pass's compute, so
// they end next to no wait and the replay predicts next to no saving; the twin (one part per
// PS, same compute) measures none either.
TEST(ReplayFixes, OvershardingOnePartPerPsTwin) {
  TempDir dir;
  const FixOutcome o = RunFixCase("oversharding", "oversharding", "unshard", 0, dir);
  ExpectFixWithin15("oversharding", "oversharding", o);
  EXPECT_LT(std::abs(o.impact.saving_pct), 5) << o.impact.why;
  EXPECT_NE(o.impact.why.find("96 part(s) of 3 variable(s) cut to 6"), std::string::npos)
      << o.impact.why;
}

// Six idle PS removed: the PS left take the work, partitioned over them as the fix text says,
// and the replay predicts it (its PS have cores for their threads: FewerPsNotModelled), at most
// `medium` (FewerPsCaveat), and names the PS tasks the fix frees; the twin with 2 PS agrees.
TEST(ReplayFixes, IdlePsRemovedTwin) {
  TempDir dir;
  const FixOutcome o = RunFixCase("idle-ps", "idle-ps", "ps-count", 2, dir);
  ExpectFixWithin15("idle-ps", "idle-ps", o);
  EXPECT_NE(o.impact.confidence, "high") << o.impact.why;
  EXPECT_NE(o.impact.why.find("8 PS -> 2"), std::string::npos) << o.impact.why;
  EXPECT_NE(o.impact.why.find("6 PS task(s)"), std::string::npos) << o.impact.why;
}

// 8 PS for 4 workers of a sparse model: the finding suggests 1 PS; fewer PS, predicted against
// the twin with 1 PS (as IdlePsRemovedTwin); the impact names the count and the 7 PS tasks freed.
TEST(ReplayFixes, PsWorkerRatioFewerPsTwin) {
  TempDir dir;
  const FixOutcome o = RunFixCase("idle-ps", "ps-worker-ratio", "ps-count", 0, dir);
  ExpectFixWithin15("idle-ps", "ps-worker-ratio", o);
  EXPECT_NE(o.impact.confidence, "high") << o.impact.why;
  EXPECT_NE(o.impact.why.find("8 PS -> 1"), std::string::npos) << o.impact.why;
  EXPECT_NE(o.impact.why.find("7 PS task(s)"), std::string::npos) << o.impact.why;
}

// Too few PS: 8 workers on one PS of a sparse model; the finding suggests 2 and the replay
// spreads the PS's work over them.
TEST(ReplayFixes, PsWorkerRatioTooFewPsTwin) {
  TempDir dir;
  const FixOutcome o = RunFixCase("balanced", "ps-worker-ratio", "ps-count", 0, dir, 1, 8);
  ExpectFixWithin15("balanced (1 PS, 8 workers)", "ps-worker-ratio", o);
  EXPECT_NE(o.impact.why.find("1 PS -> 2"), std::string::npos) << o.impact.why;
}

// Without show_memory sizes the bytes the lookup on the PS removes cannot be weighed: no
// prediction, and the impact names the variable whose size is missing.
TEST(ReplayFixes, GatherOnWorkerWithoutSizesIsNotReplayed) {
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "gather-on-worker";
  p.steps = 5;
  const std::string with = dir.File("g.json"), without = dir.File("g-nosizes.json");
  ASSERT_TRUE(sim::WriteScenario(p, with).ok());
  std::string text = ReadFile(with);
  // The snapshots' "O" events become "D" (deletions), which carry no size.
  for (size_t at = 0; (at = text.find("\"ph\":\"O\"", at)) != std::string::npos;) {
    text[at + 6] = 'D';
  }
  WriteFile(without, text);
  const AnalysisResult r = Analyze(LoadOrDie({without}), Rules());
  const Finding* f = FindRule(r, "gather-on-worker");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->impact.method, "none");
  EXPECT_NE(f->impact.why.find("embedding/embedding_weights/part_0 is unknown"), std::string::npos)
      << f->impact.why;
}

// The PS-count checks of replay_fixes.h on a hand-built model: 2 PS, 8 variable ops per worker
// step between them, 0.2 ms of op time per worker step in all.
ReplayModel TwoPsModel() {
  ReplayModel m;
  for (uint32_t t = 0; t < 2; ++t) {
    ReplayModel::Ps p;
    p.task = t;
    p.pull_ns = 40e3, p.push_ns = 60e3;
    p.var_ops = {2, 2};
    m.ps.push_back(p);
  }
  return m;
}

// Under SyncReplicasOptimizer, 2 -> 4 PS adds 8 x 3 part ops, 0.48 ms at 20 us: 2.4x the 0.2 ms
// of PS work, over the bound of 2x; 2 -> 2 adds none. With 10x the work, 4 PS pass. An
// asynchronous job's count is left to the replay's sensitivity checks.
TEST(ReplayFixes, PartOpsOutweighingThePsWorkAreNamed) {
  ReplayModel m = TwoPsModel();
  EXPECT_EQ(PartOpsOutweighWork(m, 4), "") << "asynchronous";
  m.sync = true;
  const std::string why = PartOpsOutweighWork(m, 4);
  EXPECT_NE(why.find("adds 24 part op(s)"), std::string::npos) << why;
  EXPECT_NE(why.find("2.4x"), std::string::npos) << why;
  EXPECT_EQ(PartOpsOutweighWork(m, 2), "");
  for (ReplayModel::Ps& p : m.ps) p.pull_ns *= 10, p.push_ns *= 10;
  EXPECT_EQ(PartOpsOutweighWork(m, 4), "");
}

// A receive wait beyond the answer's transfer is the links' where their time of the largest answer
// covers it: a worker whose answer took 55 ms after 115 ms queued, the links' answer time 177 ms,
// holds none of it; one whose transfer took 170 ms holds what the links leave (108 ms of 115); a
// transfer longer than the links' time holds its whole wait.
TEST(ReplayLinks, ReceiveWaitQueuedOnTheLinkIsNotHeld) {
  EXPECT_DOUBLE_EQ(HeldRecvBeyondLinks(115, 55, 177), 0);
  EXPECT_DOUBLE_EQ(HeldRecvBeyondLinks(115, 170, 177), 108);
  EXPECT_DOUBLE_EQ(HeldRecvBeyondLinks(10, 200, 177), 10);
}

// A variable already cut into parts (each PS's entries are "<base>/part_<k>", Ps::var_parts) is
// re-partitioned over the new count as a whole, as fixed_size_partitioner(num_ps) cuts it: 2 ->
// 4 PS turns 2 parts into 4, 4 more part ops per worker step (each part's 2 ops once more), not
// 2 x 3 per part (24). Counted per part, 16 -> 32 PS over 16-way tables was withheld on gen3's
// report seeds 726, 729 and 731 (3635 part ops "added" against 0.3 per part op now), whose
// twins saved 58-74%.
TEST(ReplayFixes, PartitionedVariablesAreRepartitionedWhole) {
  ReplayModel m = TwoPsModel();
  for (ReplayModel::Ps& p : m.ps) p.var_parts = {2, 2};
  EXPECT_DOUBLE_EQ(PartOpsAdded(m.ps[0], 4), 4);
  EXPECT_DOUBLE_EQ(PartOpsAdded(m.ps[0], 2), 0);
  EXPECT_DOUBLE_EQ(PartOpsAdded(m.ps[0], 1), -2);  // fewer PS: fewer parts, fewer ops
  m.sync = true;                                   // where the bound applies
  EXPECT_EQ(PartOpsOutweighWork(m, 4), "") << "8 part ops at 20 us: 0.16 ms, under 2x 0.2 ms";
  m.sync = false;  // the plan below counts no accumulator ops (Ps::sync_ns)
  // The replay charges the same count: at 20 us per op, 2 -> 4 PS adds 8 x 20 us in all.
  for (ReplayModel::Ps& p : m.ps) p.op_floor_ns = 20e3;
  Fix fix;
  fix.ps_count = 4;
  const replay_detail::PsPlan plan = replay_detail::PlanPs(m, fix);
  ASSERT_EQ(plan.pull.size(), 4u);
  double demand = 0;
  for (size_t p = 0; p < 4; ++p) demand += plan.pull[p] + plan.push[p];
  EXPECT_NEAR(demand, 200e3 + 8 * 20e3, 1) << "the PS work plus 8 part ops at 20 us";
}

// One PS (1 thread, `pull_ns` a pull) and 4 workers of 10 ms compute, each with `recv_ns` of
// receive wait and `tail_ns` of idle tail the PS queue does not explain; `step_ns` measured.
ReplayModel OnePsFourWorkers(double pull_ns, double recv_ns, double tail_ns, double step_ns) {
  ReplayModel m;
  m.measured_step_ns = step_ns;
  ReplayModel::Ps p;
  p.pull_ns = pull_ns;
  p.threads = 1;
  m.ps.push_back(p);
  AddWorkers(&m, 4, 10e6, recv_ns, tail_ns);
  return m;
}

// A PS-count fix scales each worker's wait the in-order replay does not explain (recv_ns) by how
// much its replayed PS queue changes (replays of the same model without and with the fix): 4
// workers of 10 ms compute on one PS of 2 ms per pull and 6 ms more of measured wait. Held fixed, 4
// PS could not take the step under compute + 6 ms (a job of 4 PS whose workers waited 25% of the
// step beyond the replayed queue was predicted -2% for 8 PS, its twin -21%); scaled with the queue,
// the step after the fix is about the compute. A fix that is no PS count leaves the wait as it is.
TEST(ReplayFixes, PsCountScalesTheWaitThePsQueueDoesNotExplain) {
  ReplayModel m = OnePsFourWorkers(2e6, 6e6, 0, 20e6);  // 6 ms unexplained: 30% of the step
  const double as_is = ReplayMedianStep(m, Fix{}, 40);
  EXPECT_GE(as_is, 16e6) << "the compute and the wait held fixed";
  Fix fix;
  fix.ps_count = 4;
  const double after = ReplayMedianStep(m, fix, 40);
  EXPECT_LT(after, 13e6) << "the unexplained wait shrinks with the PS queue";
  EXPECT_GE(after, 10e6) << "never below the compute";
  // Under 10% of the step unexplained, the in-order queue explains the waits: nothing scaled,
  // where the wait held stays within 25% of the step after the fix (2 ms of about 12.5 ms)...
  ReplayModel small = OnePsFourWorkers(2e6, 2e6, 0, 100e6);
  EXPECT_GE(ReplayMedianStep(small, fix, 40), 12e6) << "the 2 ms held as measured";
  // ... but where held it would be over 25% of that step, holding it decides the prediction, and
  // it is scaled (gen3 report40 8727, spent: 7% of the step held, 52% of the predicted one,
  // +110% off its twin): 6 ms of a 100 ms step, over a third of the step after the fix.
  m.measured_step_ns = 100e6;
  EXPECT_LT(ReplayMedianStep(m, fix, 40), 13e6) << "scaled with the PS queue";
}

// A PS-count fix that leaves the layout as it is (1 PS -> 1, one whole variable) changes no queue,
// so it scales nothing: the step is the step as is. The queue "before" was taken from a replay
// with the receive waits left out (4 ms at 1 PS of 4 ms per pull: the 4 workers arrive together)
// and "after" from one with them held (arrivals spread by the 6 ms: shorter), which scaled the
// wait by 0.67 for nothing, a saving of about 10%.
TEST(ReplayFixes, PsCountThatChangesNoQueueScalesNothing) {
  // 6 ms unexplained: 30% of the step, past the gate.
  ReplayModel m = OnePsFourWorkers(4e6, 6e6, 0, 20e6);
  m.ps[0].var_ops = {1};
  m.ps[0].var_parts = {1};
  ASSERT_GT(ScaledWaitShare(m), kExplainedWaitShare);
  const double as_is = ReplayMedianStep(m, Fix{}, 40);
  Fix same;
  same.ps_count = 1;
  EXPECT_NEAR(ReplayMedianStep(m, same, 40), as_is, 0.01 * as_is);
  EXPECT_NEAR(ReplayThroughputStep(m, same, 40), ReplayThroughputStep(m, Fix{}, 40), 0.01 * as_is);
}

// The gate weighs the wait the scaling scales (recv_ns), not the tail held after the push: 6 ms of
// tail and 1 ms of receive wait in a 20 ms step (35% unexplained, 5% of it scalable) scale nothing.
TEST(ReplayFixes, PsCountGateWeighsTheScaledWaitAlone) {
  ReplayModel m = OnePsFourWorkers(2e6, 1e6, 6e6, 20e6);
  EXPECT_GT(UnexplainedWaitShare(m), kExplainedWaitShare);
  EXPECT_LE(ScaledWaitShare(m), kExplainedWaitShare);
  Fix fix;
  fix.ps_count = 4;
  // Not scaled: the same as where the gate is plainly not passed (a step 10x as long measured;
  // the replay itself does not read the measured step).
  ReplayModel unscaled = m;
  unscaled.measured_step_ns = 200e6;
  const double held = ReplayMedianStep(unscaled, fix, 40);
  EXPECT_NEAR(ReplayMedianStep(m, fix, 40), held, 1e-3 * held) << "the receive wait was scaled";
}

// A partitioned variable has as many parts as its highest part index + 1, whatever parts this
// capture's PS show (parts 0, 3 and 15 of 16 seen: 16, not 3); a whole name beside its parts is
// not a 17th; "emb/part_0/Adam" (an optimizer slot) and "part_10" (no base) are whole names; a
// digit run past 9 digits is no part index (an int overflow before).
TEST(ReplayModelParts, PartsAreTheHighestIndexPlusOne) {
  TaskStatsTable t;
  auto ps = [&](std::vector<std::string> names) {
    TaskStats s;
    s.kind = JobKind::kPs;
    for (std::string& n : names) s.variables.push_back({std::move(n)});
    t.tasks.push_back(std::move(s));
  };
  ps({"emb/part_0", "emb/part_15", "emb", "part_10"});
  ps({"emb/part_3", "emb/part_0/Adam", "w/part_123456789012", "dense/part_1"});
  TaskStats worker;
  worker.kind = JobKind::kWorker;
  worker.variables.push_back({"other/part_40"});
  t.tasks.push_back(std::move(worker));
  const std::map<std::string_view, int> parts = VariableParts(t.tasks);
  EXPECT_EQ(parts.at("emb"), 16);
  EXPECT_EQ(parts.at("emb/part_0/Adam"), 1);
  EXPECT_EQ(parts.at("part_10"), 1);
  EXPECT_EQ(parts.at("w/part_123456789012"), 1);
  EXPECT_EQ(parts.at("dense"), 2);
  EXPECT_EQ(parts.count("other"), 0u) << "a worker's variables are no PS's parts";
  int k = 0;
  EXPECT_EQ(PartitionBase("w/part_123456789", &k), "w");
  EXPECT_EQ(k, 123456789);
  EXPECT_EQ(PartitionBase("w/part_99999999999999999999", &k), "w/part_99999999999999999999");
  EXPECT_EQ(k, -1);
}

// hot-ps's partition of the hottest variable counts its part ops as PS-count fixes do
// (PartOpsAdded): an entry that is one of 2 parts already, cut over 2 PS, adds none; a whole one
// adds one more op per op (n_ps - 1), not k x n_ps parts.
TEST(ReplayFixes, HotPsPartitionCountsPartsOfTheWholeVariable) {
  ReplayModel m = TwoPsModel();
  for (ReplayModel::Ps& p : m.ps) p.op_floor_ns = 20e3;
  Fix fix;
  fix.partition = {{0, 1.0}};
  auto demand = [&](const ReplayModel& x) {
    const replay_detail::PsPlan plan = replay_detail::PlanPs(x, fix);
    double d = 0;
    for (size_t p = 0; p < plan.pull.size(); ++p) d += plan.pull[p] + plan.push[p];
    return d;
  };
  EXPECT_NEAR(demand(m), 200e3 + 2 * 20e3, 1) << "whole: 2 ops once more at 20 us";
  for (ReplayModel::Ps& p : m.ps) p.var_parts = {2, 2};
  EXPECT_NEAR(demand(m), 200e3, 1) << "2 parts over 2 PS already: no part op added";
}

// Fewer PS than the model's are not predicted where the PS run more threads than the cores
// their ops' slowdown shows; they are where the cores suffice or are not shown, and more PS
// always are.
TEST(ReplayFixes, FewerPsOnThreadsBeyondCoresAreNotPredicted) {
  ReplayModel m = TwoPsModel();
  m.ps_threads = 4;
  m.ps_cores = 1;
  const std::string why = FewerPsNotModelled(m, 1);
  EXPECT_NE(why.find("2 PS -> 1"), std::string::npos) << why;
  EXPECT_NE(why.find("4 thread(s) over the 1 core(s)"), std::string::npos) << why;
  EXPECT_NE(why.find("1 PS task(s)"), std::string::npos) << why;
  EXPECT_EQ(FewerPsNotModelled(m, 3), "");
  m.ps_cores = 4;
  EXPECT_EQ(FewerPsNotModelled(m, 1), "");
  m.ps_cores = 0;
  EXPECT_EQ(FewerPsNotModelled(m, 1), "");
  EXPECT_NE(FewerPsCaveat(m, 1), "");
  EXPECT_EQ(FewerPsCaveat(m, 2), "");
}

}  // namespace
}  // namespace tfdiag::test
