// A PS's receives (the gradients arriving, RecvTensor) as the replay sees them: waits on its link
// wherever they ran more at once than its ops ever did (replay_concurrency.h ReceivesAreWaits),
// not work on its threads, even where its ops overlap them less than chance (under
// SyncReplicasOptimizer the pushes arrive together, between the PS's phases); the PS cores fit
// without the markers of the timeline's resolution (replay_cores.h), and a PS whose own ops do not
// tell its cores turned back into work at the job's. Row-built PS, then generated jobs of the
// independent generators (gen2, gen3) against what their captures measured.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "analyzers/replay.h"
#include "analyzers/replay_concurrency.h"
#include "analyzers/replay_cores.h"
#include "analyzers/sync_replicas.h"
#include "analyzers/task_stats.h"
#include "core/capture_builder.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr TimeNs kUs = 1000;

// One PS's rows: ps:0's CPU device, and each op by start, duration, node name and type.
struct PsRows {
  CaptureBuilder b;
  uint32_t dev = 0;
  PsRows() {
    StatusOr<DeviceName> d = ParseDeviceName("/job:ps/replica:0/task:0/device:CPU:0");
    EXPECT_TRUE(d.ok());
    dev = b.AddDevice(*d);
  }
  void Op(TimeNs start, TimeNs dur, const std::string& name, const std::string& type) {
    b.AddOp(start, dur, dev, 0, b.Intern(name), b.Intern(type), nullptr, 0);
  }
};

// One PS of one thread: per step, its reads one after another (0-1 ms), then six gradients
// arriving at once (2-6 ms) while it idles, then their applies one after another (6-7 ms).
// Its ops overlap the receives far less than chance, as a thread-holding receive would.
Capture OneThreadPsSixReceivesAtOnce() {
  PsRows ps;
  for (int k = 0; k < 8; ++k) {
    const TimeNs t = k * 10000 * kUs;
    for (int r = 0; r < 6; ++r) {
      ps.Op(t + r * 160 * kUs, 150 * kUs, "w/read", "Identity");
      ps.Op(t + 2000 * kUs, 4000 * kUs, "RecvTensor", "RecvTensor");
      ps.Op(t + 6000 * kUs + r * 160 * kUs, 150 * kUs, "update_w/ApplyAdagrad", "ApplyAdagrad");
    }
  }
  return ps.b.Finish();
}

TEST(ReplayRecvWaits, ReceivesBeyondTheOpsConcurrencyAreWaits) {
  const Capture c = OneThreadPsSixReceivesAtOnce();
  const TaskStatsTable st = ComputeTaskStats(c);
  const TaskStats* ps = st.Find("ps:0");
  ASSERT_NE(ps, nullptr);
  // TaskStats' overlap test took them for work (its ops never overlap them).
  EXPECT_EQ(ps->recv_busy_ns, 0);
  EXPECT_TRUE(replay_detail::ReceivesAreWaits(c, *ps));
  // Its threads: one (the receives' six at once are its link's, not its threads').
  EXPECT_EQ(replay_detail::AchievedConcurrency(c, *ps), 1);
  EXPECT_EQ(replay_detail::AchievedConcurrency(c, *ps, replay_detail::Counted::kReceives), 6);
  // In flight 4 ms of each 10 ms.
  EXPECT_NEAR(replay_detail::ReceiveBusyShare(c, *ps, 80000 * kUs), 0.4, 1e-9);
}

// One core: a gather alone (its work, 100 us) and four ops at once (400 us each), and beside them
// the timeline's 1 us markers (_SOURCE NoOps) at both levels, which cannot show a slowdown.
Capture OneCorePsWithMarkers() {
  PsRows ps;
  for (int k = 0; k < 8; ++k) {
    const TimeNs t = k * 10000 * kUs;
    ps.Op(t, 100 * kUs, "emb/Gather", "GatherV2");
    for (int i = 0; i < 4; ++i) ps.Op(t + 200 * kUs + i * 10 * kUs, 1 * kUs, "_SOURCE", "NoOp");
    for (const char* n : {"emb/Gather", "a/Read", "b/Read", "c/Read"}) {
      ps.Op(t + 1000 * kUs, 400 * kUs, n, n[0] == 'e' ? "GatherV2" : "Identity");
    }
    for (int i = 0; i < 4; ++i) ps.Op(t + 1100 * kUs + i * 10 * kUs, 1 * kUs, "_SOURCE", "NoOp");
  }
  return ps.b.Finish();
}

TEST(ReplayRecvWaits, MarkersAtTheTimelinesResolutionDoNotHideTheCores) {
  const Capture c = OneCorePsWithMarkers();
  const TaskStatsTable st = ComputeTaskStats(c);
  const TaskStats* ps = st.Find("ps:0");
  ASSERT_NE(ps, nullptr);
  const PsOpLoad fit = FitPsCores(c, *ps);
  EXPECT_EQ(fit.cores, 1) << "fit gain " << fit.fit_gain;
  // The ops' time (1.7 ms per step, markers aside) is 0.5 ms of work on one core; the markers
  // (4 of 1 us, 4 of 1 us at 5 at once) add 4 + 4/5 us of work.
  EXPECT_NEAR(fit.work_ns / fit.op_ns, (500.0 + 4.8) / (1700.0 + 8), 0.002);
}

// The replay of the capture as is lands within kMaxBaselineMiss of the measured step.
void ExpectAsIsLands(const ReplayModel& m) {
  const Baseline b = ReplayBaseline(m);
  EXPECT_LE(std::abs(b.miss), kMaxBaselineMiss)
      << "as is " << b.replay_ns << " ns against " << b.measured_ns << " ns";
}

// gen2 report9 2026 (spent): 2 PS of one thread under SyncReplicasOptimizer, the dense kernels
// (4.5 MB) on ps:0 behind one 10 Gb/s NIC. Its receives ran 9 at once: before, taken for work
// (TaskStats' overlap test), they made ps:0 a PS of 7 threads with 304 ms of the link's time as
// op time, and the replay as is missed the measured step by +24% (every prediction withheld).
TEST(ReplayRecvWaits, Gen2SyncReceivesAreTheLinksNotThePsThreads) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2026, dir, &j));
  ASSERT_TRUE(j.m.sync);
  EXPECT_EQ(j.m.ps_threads, 1);
  ExpectAsIsLands(j.m);
}

// gen2 report9 2021 (spent): 2 PS of 8 threads on 1 core, 3 workers. The cores fit lost the core
// to the capture's 1 us markers and the gradients on the link: the PS served as 7 threads, the
// replay as is +18%, prefetch (its twin -20%) withheld and no `Fix first`.
TEST(ReplayRecvWaits, Gen2OversubscribedCoreIsSeenAndPrefetchPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  {
    TempDir dir;
    SimJob j;
    ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 2021, dir, &j));
    EXPECT_EQ(j.m.ps_cores, 1);
    ExpectAsIsLands(j.m);
  }
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("gen2/run_gen2.py", "--seeds 2021 --no-outlook", 1, &d, &out));
  bool input_bound = false;
  for (const auto& r : d["jobs"][0]["rows"].GetArray()) {
    const std::string rule = r["rule"].GetString(), conf = r["confidence"].GetString();
    if (conf != "medium" && conf != "high") continue;
    const double pred = r["pred_ms"].GetDouble(), twin = r["twin_ms"].GetDouble();
    EXPECT_LE(std::abs(pred - twin) / twin, conf == "high" ? 0.10 : 0.25)
        << rule << ": predicted " << pred << " ms, twin " << twin << " ms\n"
        << out;
    input_bound |= rule == "input-bound";
  }
  EXPECT_TRUE(input_bound) << "input-bound withheld\n" << out;
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

// gen2 report8 1801 (spent): 14 synchronous workers pulling and pushing 4.6 MB each over one
// 1 Gb/s PS NIC, the gradients in flight 49% of the capture. With the receives seen as the
// link's, the replay as is lands, and going asynchronous was predicted 397 ms against a twin of
// 1081 ms: the wait it drops as the barrier's burst is the link's. Not predicted, and says why.
TEST(ReplayRecvWaits, Gen2SyncOverABusyLinkIsNotPredictedAsync) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  const std::string path = SimulatedJob("gen2", 1801, dir);
  ASSERT_FALSE(path.empty());
  const AnalysisResult r = Analyze(LoadOrDie({path}), Rules());
  const Finding* f = FindRule(r, "sync-replicas");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->impact.method, "none");
  // The sync -> async gate's own reason (the prediction's link check words it alike).
  EXPECT_NE(f->impact.why.find("asynchronous workers still spend"), std::string::npos)
      << f->impact.why;
}

// gen3 report8 2128 (spent): 14 PS of 8 threads on 2 cores, a hot dense kernel on ps:2. The
// other PS show their 2 cores; the hot one, busy throughout, does not. Served on the job's 2
// cores with the time its ops took beside each other (not their work), it replayed the job as is
// +146% (on main the cores went unseen on every PS and it matched: hot-ps high, +3% of its twin).
TEST(ReplayRecvWaits, Gen3HotPsServesItsWorkOnTheJobsCores) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 2128, dir, &j));
  EXPECT_EQ(j.m.ps_cores, 2);
  ExpectAsIsLands(j.m);
}

}  // namespace
}  // namespace tfdiag::test
