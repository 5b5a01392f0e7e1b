// The replay on jobs of the second independent generator (bench/twins/gen2, written apart from
// tfdiag: dataflow order, PS packed on one node sharing its NIC, CFS quota periods), simulated at
// test time from its dev seeds and analyzed in process. Moved out of replay_indep_test.cc, whose
// jobs are the independent simulator's.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "analyzers/analysis.h"
#include "rules/rule_set.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// A job of the second independent generator (bench/twins/gen2: dataflow order, PS packed on one
// node sharing its NIC, CFS quota periods), its dev seed `seed` simulated into `dir`, analyzed.
// false (and the test skipped) without python3.
bool Gen2Job(int seed, const TempDir& dir, AnalysisResult* out) {
  if (!HavePython3()) return false;
  const std::string path = SimulatedJob("gen2", seed, dir);
  if (path.empty()) return false;
  *out = Analyze(LoadOrDie({path}), Rules());
  return true;
}

// A PS's RecvTensor time (the gradients arriving over a NIC shared by the PS packed on one node)
// is not its busy time. gen2 dev seed 101: ps:0 received for 9.7 s against 0.2 s of ops, and
// hot-ps named a dense variable of 1% of its time; now the variables it names carry its work.
TEST(ReplayGen2, ReceivesAreNotPsWork) {
  TempDir dir;
  AnalysisResult r;
  if (!Gen2Job(101, dir, &r)) GTEST_SKIP() << "python3 is not installed (bench/twins/gen2)";
  const TaskStats* ps0 = r.stats.Find("ps:0");
  ASSERT_NE(ps0, nullptr);
  EXPECT_GT(ps0->recv_ns, 20 * ps0->op_time_ns) << "the capture this test is about";
  EXPECT_LT(ps0->busy_pct, 20) << "ps:0's busy time is its ops', not its receives'";
  for (const Finding& f : r.findings) {
    if (f.rule_id != "hot-ps") continue;
    for (const Figure& e : f.evidence) {
      if (e.label.rfind("op time share of ", 0) == 0) {
        EXPECT_GE(e.value, 10) << e.label << ": a variable named hot carries the PS's work";
      }
    }
  }
}

// A fix that leaves the PS's gradients where they are (going asynchronous) cannot make the step
// shorter than the PS's link allows. gen2 dev seed 117 (sync, 3 PS packed on one node): each PS
// receives 43-44% of the capture; async was predicted -52% where its twin is -7%. Withheld now,
// naming the receives.
TEST(ReplayGen2, AsyncIsNotPredictedPastThePsLink) {
  TempDir dir;
  AnalysisResult r;
  if (!Gen2Job(117, dir, &r)) GTEST_SKIP() << "python3 is not installed (bench/twins/gen2)";
  bool seen = false;
  for (const Finding& f : r.findings) {
    if (f.rule_id != "sync-replicas") continue;
    seen = true;
    EXPECT_FALSE(f.impact.method == "replay" && f.impact.saving_pct > 25) << f.impact.why;
    // Not predicted for the PS link's receives: withheld by the link check of the prediction
    // (ComputeImpacts) or, under SyncReplicasOptimizer, by sync-replicas' own fix model
    // (kMaxSyncLinkShare: ps:0 receiving 44% of the capture), which then says why in `why`.
    EXPECT_NE(f.impact.method, "replay") << f.impact.why;
    EXPECT_NE(f.impact.why.find("receives gradients"), std::string::npos) << f.impact.why;
  }
  EXPECT_TRUE(seen) << "sync-replicas finds the SyncReplicasOptimizer";
}

// Checks that input-bound's prefetch on gen2 seed `seed` (run_gen2.py, RunBenchRow) is predicted
// within `max_pct` of its twin and that Fix first is right, or, with `!fix_first_right`, that
// prefetch promises under 10% (the bound the harness sets Fix first on a job no fix buys 5% of;
// a weaker check than Fix first right, for a job where the best fix's prediction is withheld).
void ExpectPrefetchWithin(int seed, double max_pct, bool fix_first_right = true) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed (bench/twins/gen2)";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen2/run_gen2.py", seed, "input-bound", true, &d, &out, &row));
  EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), max_pct) << out;
  if (fix_first_right) {
    EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
  } else {
    EXPECT_LT((*row)["saving_pct"].GetDouble(), 10) << out;
  }
}

// An input that hides the pull (gen2 report29 6221, spent: 1 PS, 3 workers, dense variables only,
// a 1 Gbit/s NIC): TF1's executor asks for the variables when the step starts, so the PS answers
// cross the NIC while IteratorGetNext runs (4.7 ms of a 5.8 ms input), and a prefetched pipeline
// exposes that transfer: its twin buys nothing (+1%). Replayed with the pull after the input and
// no transfer (none ended a wait), prefetch was predicted -33% (confidence medium) and named Fix
// first; with the pull beside the input (analyzers/pull_beside_input.h) it is within 10% of its
// twin (-2%), and it promises under 10%. (Since session 58 gen2's PS-count twin re-partitions
// every variable, as the fix text says, and 2 PS buy 7% there, so the job is no longer healthy;
// that prediction is withheld and Fix first, prefetch at 6%, is not right on this job.)
TEST(ReplayGen2, PrefetchExposesThePullBesideTheInput) { ExpectPrefetchWithin(6221, 10, false); }

// The transfer an input hid, from the median step of each worker, is the median over the workers
// (replay_waits.h ApplyPullBesideInput): gen2 report32 6818 (spent; 14 PS, 18 workers) has 6
// workers whose median step is the capture's first, where every worker pulled at once (21-23 ms
// on ps:2's NIC against 1.5 ms in the others'). Each worker's own transfer put prefetch +7.7% off
// its twin; the median, +0.7%.
TEST(ReplayGen2, TheHiddenTransferIsTheWorkersMedian) { ExpectPrefetchWithin(6818, 5); }

}  // namespace
}  // namespace tfdiag::test
