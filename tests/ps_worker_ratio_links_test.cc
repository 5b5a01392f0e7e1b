// ps-worker-ratio by measurement over the PS links (analyzers/ps_worker_ratio_measured.h) and the
// links in time where the capture reads no rate (analyzers/recv_link_time.h), on jobs of the third
// independent generator (bench/twins/gen3, written apart from tfdiag).
// gen3 report6 1701 (spent): 1 PS for 2 workers of a sparse model, its 1 Gb/s NIC carrying the
// workers' pulls and pushes (97% of the step in transfers; the PS's CPU busy 2% of its threads).
// Before, no finding named anything: the band said too many PS for a sparse model, and a lone PS
// has no fewer, so no finding; its receive link read 1 Gb/s, but with no other PS to check the
// rate no links were replayed. 2026-11-30: 3 PS named (by measurement over the links in time),
// predicted 1445 ms against the twin's 1493 ms (-3%, medium), `Fix first` right.
// About half a minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <memory>
#include <string>

#include "analyzers/analysis.h"
#include "analyzers/analysis_input.h"
#include "analyzers/ps_links_convoy.h"
#include "analyzers/ps_worker_ratio_measured.h"
#include "analyzers/recv_link_time.h"
#include "analyzers/replay.h"
#include "analyzers/replay_nic_bytes.h"
#include "analyzers/step_graph.h"
#include "analyzers/task_stats.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// The convoy's limits in the default rule set (ps-worker-ratio's convoy_* params).
const ConvoyLimits& Convoy() {
  static const RuleSet rules = Rules();
  static const ConvoyLimits lim = ConvoyLimitsOf(*rules.Find("ps-worker-ratio"));
  return lim;
}

// gen3 seed `seed` run by bench/twins/gen3/run_gen3.py into `*d` (its stdout in `*out`), and its
// ps-worker-ratio row in `*row` (nullptr without one).
void RunGen3Job(int seed, rapidjson::Document* d, std::string* out, const rapidjson::Value** row) {
  ASSERT_NO_FATAL_FAILURE(RunBenchJobs(
      "gen3/run_gen3.py", "--seeds " + std::to_string(seed) + " --no-outlook", 1, d, out));
  *row = nullptr;
  for (const auto& r : (*d)["jobs"][0]["rows"].GetArray()) {
    if (std::string(r["rule"].GetString()) == "ps-worker-ratio") *row = &r;
  }
}

// gen3 seed `seed`'s ps-worker-ratio prediction (in `*row`) within its confidence's band of its
// twin (high 10%, medium 25%; a fatal failure without a finding or at another confidence), and
// `Fix first` right.
void ExpectPredictedAgainstTwin(int seed, rapidjson::Document* d, std::string* out,
                                const rapidjson::Value** row) {
  ASSERT_NO_FATAL_FAILURE(RunGen3Job(seed, d, out, row));
  ASSERT_NE(*row, nullptr) << "no ps-worker-ratio finding\n" << *out;
  const rapidjson::Value& r = **row;
  const std::string conf = r["confidence"].GetString();
  ASSERT_TRUE(conf == "medium" || conf == "high") << r["why"].GetString() << "\n" << *out;
  const double pred = r["pred_ms"].GetDouble(), twin = r["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, conf == "high" ? 0.10 : 0.25) << *out;
  EXPECT_TRUE((*d)["jobs"][0]["fix_first_right"].GetBool()) << *out;
}

// gen2 job `seed` (spent) run with its twins: its ps-worker-ratio count predicted within `bound`
// of its twin, the why naming `phrase`, and Fix first right.
void ExpectGen2CountWithin(int seed, double bound, const std::string& phrase) {
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(RunBenchJobs(
      "gen2/run_gen2.py", "--seeds " + std::to_string(seed) + " --no-outlook", 1, &d, &out));
  const rapidjson::Value* row = Row(d["jobs"][0], "ps-worker-ratio");
  ASSERT_NE(row, nullptr) << out;
  ASSERT_TRUE(row->HasMember("pred_ms")) << (*row)["why"].GetString();
  const double pred = (*row)["pred_ms"].GetDouble(), twin = (*row)["twin_ms"].GetDouble();
  EXPECT_LE(std::abs(pred - twin) / twin, bound) << out;
  EXPECT_NE(std::string((*row)["why"].GetString()).find(phrase), std::string::npos)
      << (*row)["why"].GetString();
  EXPECT_TRUE(d["jobs"][0]["fix_first_right"].GetBool()) << out;
}

TEST(PsWorkerRatioLinks, Gen3LonePsBoundByItsLinkIsNamedAndPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedAgainstTwin(1701, &d, &out, &row));
  // Its links are read in time: no bandwidth is read, and none is said (review v62 item 1: the
  // unit of the links in time was printed as "PS NICs of 8 Gb/s").
  EXPECT_EQ(std::string((*row)["why"].GetString()).find("Gb/s"), std::string::npos)
      << (*row)["why"].GetString();
}

// gen3 report6 1709 (spent): 12 PS whose links carry the workers in a convoy. The links replay
// holds the convoy's waits fixed and was withheld; the count is predicted from the convoy's share
// of the step (replay_impact.cc, analyzers/ps_links_convoy.h), within 25% of its twin (36 PS:
// predicted 74.9% saved, the twin 73.0%), at medium confidence, saying so. Fails on the code
// before the convoy prediction (withheld: the PS model explains too little of the waits).
TEST(PsWorkerRatioLinks, Gen3ConvoyPredictsTheCountAgainstItsTwin) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedAgainstTwin(1709, &d, &out, &row));
  ASSERT_STREQ((*row)["method"].GetString(), "replay") << (*row)["why"].GetString();
  EXPECT_STREQ((*row)["confidence"].GetString(), "medium");
  EXPECT_NE(std::string((*row)["why"].GetString()).find("the PS links in a convoy"),
            std::string::npos)
      << (*row)["why"].GetString();
}

// 1701's one PS: its receive link's busy time is its load (in = out, mirrored), the links in time
// replay the capture as is within kMaxBaselineMiss, and the count is measured over them with the
// link loaded over measured_min_ps_util_pct while the CPU is nearly idle. The FIFO replay alone
// measures nothing (its gates: the transfers it holds fixed are 97% of the step).
TEST(PsWorkerRatioLinks, LinksInTimeWhereOnePsHasNoOtherToCheckItsRate) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 1701, dir, &j));
  const AnalysisInput in = j.In();
  const ReplayModel& m = j.m;  // LoadSimJob built it
  ASSERT_EQ(m.ps.size(), 1u);
  std::string why;
  const NicDemand d = RecvLinkTimeDemand(in, m, &why);
  ASSERT_TRUE(d.known) << why;
  EXPECT_TRUE(d.mirrored);
  ASSERT_EQ(d.in.size(), 1u);
  EXPECT_GT(d.in[0], 0);
  EXPECT_EQ(d.out[0], d.in[0]);
  const ChosenLinks links = ChooseLinks(in, m);
  EXPECT_TRUE(links.in_time) << links.recv_refused;
  EXPECT_LE(std::abs(links.base.miss), kMaxBaselineMiss);
  const RuleSet rules = Rules();
  const Rule* found = rules.Find("ps-worker-ratio");
  ASSERT_NE(found, nullptr);
  const Rule& rule = *found;
  EXPECT_EQ(MeasurePsCount(m, rule).count, 0) << "the FIFO replay alone measured a count";
  const MeasuredPsCount meas = MeasurePsCount(m, rule, &links);
  EXPECT_TRUE(meas.over_links) << meas.why_none;
  EXPECT_GT(meas.count, 1) << meas.why_none;
  EXPECT_GE(100 * meas.busiest_link, rule.Param("measured_min_ps_util_pct"));
  EXPECT_LT(100 * meas.busiest_util, rule.Param("measured_min_ps_util_pct"));
}

// gen3 report6 1712 (spent): 4 PS whose receive links are busy at most a third of their receives'
// span, where the latency taken off each receive weighs on the busy time: no links in time (and
// measured over them anyway, 8 PS were predicted +27% off their twin).
TEST(PsWorkerRatioLinks, NoLinksInTimeWhereNoReceiveLinkIsBusy) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 1712, dir, &j));
  const AnalysisInput in = j.In();
  const ReplayModel& m = j.m;  // LoadSimJob built it
  std::string why;
  EXPECT_FALSE(RecvLinkTimeDemand(in, m, &why).known);
  EXPECT_NE(why.find("busy"), std::string::npos) << why;
  EXPECT_FALSE(ChooseLinks(in, m).in_time);
}

// gen3 report7 1931 (spent): 1 PS for 2 workers whose 1 Gb/s NIC carries the workers' pulls and
// pushes (81% of the step in transfers); its receive link is busy 46% of its receives' span (the
// two workers pull together, then push together), the latency taken off a small part of it. Before,
// no links were read (under kMinRecvLinkBusy) and no finding named a count; 2026-11-30: 3 PS
// named over the links in time (kMinRecvLinkTimeBusy), predicted 235 ms against the twin's 239 ms
// (-2%, medium), `Fix first` right.
TEST(PsWorkerRatioLinks, Gen3HalfBusyLinkOfALonePsIsReadInTimeAndPredicted) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedAgainstTwin(1931, &d, &out, &row));
}

// gen3 report7 1908 (spent): 16 PS packed on few nodes for 12 workers, the busiest receive link
// busy 47% of its span and its shortest receive 12.6 ms. Until session 38 that receive was the
// latency taken off every receive (twice it left 87% of the link's time: refused as resting on
// the latency); a receive over kMaxReceiveLatencyNs (1 ms) is bytes, so the links are read in
// time now. Until session 63 no count was named; since, the convoy's waits are asked of the link
// share clamped at the whole step (links 115% of it, the workers waiting 85%), and 48 PS are
// named, predicted 94 ms against the twin's 79 ms (+19%, medium): a count buys less than the
// twins' best fix, spreading the packed PS (82%), which stays `Fix first`.
TEST(PsWorkerRatioLinks, AReceiveOverAMillisecondIsNotTheLatency) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 1908, dir, &j));
  std::string why;
  EXPECT_TRUE(RecvLinkTimeDemand(j.In(), j.m, &why).known) << why;
  EXPECT_EQ(why.find("latency"), std::string::npos) << why;
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchRow("gen3/run_gen3.py", 1908, "ps-worker-ratio", true, &d, &out, &row));
  EXPECT_LE(std::abs((*row)["err_pct"].GetDouble()), 25) << out;
  ASSERT_TRUE(d["jobs"][0]["fix_first"].IsString()) << out;
  EXPECT_STREQ(d["jobs"][0]["fix_first"].GetString(), "ps-colocation") << out;
}

// gen3 report6 1709 (spent): 12 PS for 16 dense workers, ps:0 holding a whole kernel beside its
// parts; its links carry 97% of the step, the workers wait 91% of it, and the replay over the links
// leaves 72% of the step unexplained (the workers in a convoy on ps:0's links). Before, no finding.
// The count is named from the convoy, its saving within 10 points of the twin's (2026-11-30: 36
// PS, the convoy 75%, the twin 73%); the prediction is the replay's, withheld there.
TEST(PsWorkerRatioLinks, Gen3ConvoyOnTheLinksNamesTheCount) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(RunGen3Job(1709, &d, &out, &row));
  ASSERT_NE(row, nullptr) << "no ps-worker-ratio finding\n" << out;
  const rapidjson::Value& job = d["jobs"][0];
  const double twin = (*row)["twin_saving_pct"].GetDouble();
  EXPECT_GE(twin, 0.8 * job["best_saving_pct"].GetDouble()) << out;
  // The convoy's own figure against the twin.
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 1709, dir, &j));
  const AnalysisResult r = Analyze(j.c, Rules());
  const Finding* f = nullptr;
  for (const Finding& x : r.findings) {
    if (x.rule_id == "ps-worker-ratio") f = &x;
  }
  ASSERT_NE(f, nullptr);
  double convoy = -1;
  for (const Figure& e : f->evidence) {
    if (e.label == "the links convoy's saving of the suggested count") convoy = e.value;
  }
  ASSERT_GE(convoy, 0) << f->fix;
  EXPECT_NEAR(convoy, twin, 10) << f->fix << "\n" << out;
  EXPECT_GE(f->severity, Severity::kMedium);
}

// gen2 report7 1607 (spent): 2 PS whose links' time x the workers is about the step (1.03), but the
// workers wait 7% of it: not a convoy on the links (4 PS would be said to buy 62%, the twin 6%).
TEST(PsWorkerRatioLinks, NoConvoyWhereTheWorkersDoNotWaitOnTheLinks) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen2", 1607, dir, &j));
  const AnalysisInput in = j.In();
  const ReplayModel& m = j.m;  // LoadSimJob built it
  const ChosenLinks links = ChooseLinks(in, m);
  ASSERT_GT(links.linked.link_bytes_per_ns, 0) << links.recv_refused;
  const LinkConvoy c = ReadLinkConvoy(m, links.linked, links.base, Convoy());
  EXPECT_FALSE(c.convoy);
  EXPECT_GE(c.link_share, Convoy().min_link);
  EXPECT_NE(c.why_not.find("wait"), std::string::npos) << c.why_not;
}

// A single PS's links are not "even links" (review v66w item 8): with one PS there is no other
// to compare, and LinkConvoy::even's lower wait share (PS packed on one NIC) does not apply
// (gen3 report6 1701: 1 PS, its link time read; before, even was true).
TEST(PsWorkerRatioLinks, LonePsLinksAreNotEven) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 1701, dir, &j));
  ASSERT_EQ(j.m.ps.size(), 1u);
  const ChosenLinks links = ChooseLinks(j.In(), j.m);
  const LinkConvoy c = ReadLinkConvoy(j.m, links.linked, links.base, Convoy());
  EXPECT_GT(c.busiest_ns, 0) << c.why_not;
  EXPECT_FALSE(c.even);
}

// The convoy's saving at a PS count is at most what the workers wait: the links' fix cannot
// remove compute (gen2 report7 1607's figures: link share 1.03, the workers waiting 7%; 2 -> 4 PS
// read as -50% uncapped, its twin -6%). Fails on the code before the bound (0.5).
TEST(PsWorkerRatioLinks, ConvoySavingIsBoundedByTheWorkersWaits) {
  LinkConvoy c;
  c.link_share = 1.03;
  c.wait_share = 0.07;
  c.busiest_ns = 4e6;
  c.sum_ns = 8e6;  // 2 PS of equal links
  EXPECT_NEAR(c.SavingAt(4), 0.07, 1e-12);
  c.wait_share = 0.9;  // waits above the links' saving leave it as it is
  EXPECT_NEAR(c.SavingAt(4), 0.5, 1e-12);
  EXPECT_EQ(c.SavingAt(1), 0);  // fewer PS than the links' time spreads over save nothing
  c.wait_share = -0.1;          // a wait share under 0 (none held) bounds at 0, not below
  EXPECT_EQ(c.SavingAt(4), 0);
}

// gen3 report8 2127 (spent): 10 PS packed on one node's NIC (the capture names no host), their
// links' time x the workers 1.01 of the step, the workers waiting 77% of it. The convoy spreads
// each PS's link time over the new count as if each PS had a NIC of its own; with the packed PS's
// links unequal it read 10 -> 15 PS as -74%, the twin -29% (the 10 stay on one NIC; spreading
// them, the best fix, -62%). Not read as a convoy (convoy_min_wait_pct): a guard on the wait
// check, which a packed job passes at 0.76.
TEST(PsWorkerRatioLinks, NoConvoyForPsPackedOnOneNic) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  TempDir dir;
  SimJob j;
  ASSERT_NO_FATAL_FAILURE(LoadSimJob("gen3", 2127, dir, &j));
  const AnalysisInput in = j.In();
  const ChosenLinks links = ChooseLinks(in, j.m);
  ASSERT_GT(links.linked.link_bytes_per_ns, 0) << links.recv_refused;
  const LinkConvoy c = ReadLinkConvoy(j.m, links.linked, links.base, Convoy());
  EXPECT_GE(c.link_share, Convoy().min_link);
  EXPECT_LE(c.link_share, Convoy().max_link);
  EXPECT_FALSE(c.convoy);
  EXPECT_NE(c.why_not.find("wait"), std::string::npos) << c.why_not;
}

// gen3 report8 2124 (spent): 3 PS packed on one node's NIC (the capture names no host), their links
// even (each PS's link time the NIC's busy time), the workers waiting 81% of the step against
// links 99% of it: under convoy_min_wait_pct, so no count was measured and `Fix first` named
// nothing (the best fix, spreading the PS, buys 51%). With even links the count's saving is the
// same packed or not (convoy_even_min_wait_pct): 3 -> 9 PS predicted 29.7 ms, the twin 35.4 ms
// (-16%, medium), `Fix first` right (the twin buys 61%). Fails on main (no finding predicted).
TEST(PsWorkerRatioLinks, Gen3EvenLinksOfPackedPsReadAsAConvoy) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedAgainstTwin(2124, &d, &out, &row));
  EXPECT_NE(std::string((*row)["why"].GetString()).find("the PS links in a convoy"),
            std::string::npos)
      << (*row)["why"].GetString();
}

// gen2 report8 1818 (spent): 1 PS whose 1 Gb/s NIC carries the workers' pulls and pushes, both
// ways 1.84 of the step (over the convoy band: the directions overlap), its busier direction
// alone in the band. Read one way (LinkConvoy::one_way), 1 -> 3 PS predicted within 10% of the
// twin (+7%); before, 1 -> 5 over the links replay, -20%.
TEST(PsWorkerRatioLinks, Gen2DuplexLinkReadOneWayAsAConvoy) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  ExpectGen2CountWithin(1818, 0.10, "its busier direction");
}

// gen3 report7 1901 (spent): 16 PS whose links carry the workers in a convoy (link share 1.03 of
// the step) while the FIFO replay holds only 4% of the step in transfers: ComputeImpacts built the
// links (unexplained wait 91%) but called PredictFromConvoy only where the FIFO transfers were over
// kMaxFixedTransferShare, so the count MeasurePsCount named from the convoy (48 PS) was withheld.
// 2026-11-30 with the call on the links wherever they are built: 664.6 -> 221.5 ms against the
// twin's 226 ms (-2%, medium), Fix first right.
TEST(PsWorkerRatioLinks, Gen3ConvoyPredictedWhereTheFifoTransfersAreSmall) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen3 needs it";
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* row = nullptr;
  ASSERT_NO_FATAL_FAILURE(ExpectPredictedAgainstTwin(1901, &d, &out, &row));
  EXPECT_NE(std::string((*row)["why"].GetString()).find("the PS links in a convoy"),
            std::string::npos)
      << (*row)["why"].GetString();
}

// In a convoy the workers' waits beyond the busiest link's share are the other PS's turns in the
// same pulls and pushes, which spreading the links' time shrinks with it (LinkConvoy::
// ConvoyShare): the saving is taken over the waits where they are longer than the link share.
// Fails on the code that took min(1, link_share) alone (0.91 x 0.5).
TEST(PsWorkerRatioLinks, ConvoySavingTakesTheWorkersWaitsWhereLonger) {
  LinkConvoy c;
  c.link_share = 0.91;
  c.wait_share = 0.97;
  c.busiest_ns = 4e6;
  c.sum_ns = 8e6;  // 2 PS of equal links
  EXPECT_NEAR(c.ConvoyShare(), 0.97, 1e-12);
  EXPECT_NEAR(c.SavingAt(4), 0.97 * 0.5, 1e-12);
  c.wait_share = 1.2;  // never more than the whole step
  EXPECT_NEAR(c.SavingAt(4), 0.5, 1e-12);
  c.wait_share = 0.5;  // shorter waits: the link share, bounded by the waits
  EXPECT_NEAR(c.ConvoyShare(), 0.91, 1e-12);
  EXPECT_NEAR(c.SavingAt(4), 0.455, 1e-12);
}

// gen2 report19 4000 (spent, tuned on): 14 PS on 1 Gb/s NICs, 46 workers in a convoy on the
// busiest PS's link (0.91 of a 2.23 s step, one way), the workers waiting 0.97 of it. 14 -> 28 PS
// was predicted +112% off its twin (160 ms) with the waits beyond the link held as compute; now
// within 30% (+26%).
TEST(PsWorkerRatioLinks, Gen2ConvoyWaitsBeyondTheLinkSpreadWithIt) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  ExpectGen2CountWithin(4000, 0.30, "the PS links in a convoy");
}

// gen2 report29 6207 (spent, tuned on): 1 PS for 9 synchronous workers, its 1 Gb/s NIC carrying
// a 2.6 MB dense variable to each (83% of a 418 ms step in transfers). One worker's last answer
// took 55 ms after 115 ms queued behind the others' (theirs took 177 ms); that 115 ms was held as
// a fixed receive wait, and 1 -> 5 PS was predicted at 211 ms against its twin's 123 ms (+72%).
// The links now replay the queueing (HeldRecvBeyondLinks, analyzers/replay_link.h): within 10%.
TEST(PsWorkerRatioLinks, Gen2AnswerQueuedOnTheNicIsReplayedByTheLink) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  ExpectGen2CountWithin(6207, 0.10, "replayed over PS NICs of 1 Gb/s");
}

// Runs `tfdiag analyze -f json` on gen2 job `seed`'s capture alone (no pod list) into `*d`
// (`*out` its output) and sets `*f` to its ps-worker-ratio finding; fails fatally where the run
// fails or the rule does not fire.
void PsWorkerRatioWithoutPodList(int seed, rapidjson::Document* d, std::string* out,
                                 const rapidjson::Value** f) {
  TempDir dir;
  const std::string path = SimulatedJob("gen2", seed, dir);
  ASSERT_FALSE(path.empty());
  const RunResult r = RunTfdiag("analyze -f json " + path);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  *out = r.out;
  d->Parse(r.out.c_str());
  ASSERT_TRUE(d->IsObject() && d->HasMember("findings")) << r.out;
  *f = nullptr;
  for (const auto& x : (*d)["findings"].GetArray()) {
    if (std::string(x["rule"].GetString()) == "ps-worker-ratio") *f = &x;
  }
  ASSERT_NE(*f, nullptr) << "no ps-worker-ratio finding without the pod list:\n" << r.out;
}

// gen2 report9 2013 (spent, not tuned on): 2 PS, each on a node of its own (the pod list), whose
// 0.9 Gb/s links carry 85% of a 1.50 s step. The replay with no waits held over the links matches
// the capture, but a fix adding PS was never replayed on it: the rate read might be a NIC the PS
// share (gen2 report4 1006). Where the pod list puts every PS on a node of its own, the rate is
// one PS's own NIC's and each PS the fix adds gets one (ImpactJob::own_nics): 2 -> 10 PS
// predicted -10% off its twin, `Fix first` right. Fails on the code before (withheld with the pod
// list too). Without the pod list, since session 52 (a receive wait the links' answer time covers
// is no longer held: HeldRecvBeyondLinks) the replay with its waits held passes the gates and the
// same count is predicted (fails if withheld), at most medium, its why saying that each PS added
// is taken on a node of its own; gen2 report4 1006 (3 PS packed on one node's NIC, where that is
// wrong) stays withheld with the pod list and without it.
TEST(PsWorkerRatioLinks, Gen2AddedPsOnNodesOfTheirOwnTakeTheLinksRate) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  ExpectGen2CountWithin(2013, 0.15, "each PS the fix adds is taken on a node of its own");
  rapidjson::Document d;
  std::string out;
  const rapidjson::Value* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(PsWorkerRatioWithoutPodList(2013, &d, &out, &f));
  const std::string why = (*f)["impact"]["why"].GetString();
  EXPECT_STRNE((*f)["impact"]["method"].GetString(), "none") << why;
  EXPECT_STRNE((*f)["impact"]["confidence"].GetString(), "high") << why;
  EXPECT_NE(why.find("each PS the fix adds is taken on a node of its own"), std::string::npos)
      << why;
}

// gen2 report4 1006 (spent): 3 PS packed on one node's NIC, 3 -> 28 PS. Each PS the fix adds is
// not on a node of its own at the packed PS's rate (predicted +51% slow where it was taken so):
// withheld with the pod list (the PS share a node) and without it.
TEST(PsWorkerRatioLinks, Gen2PackedPsAddedAreNotPredictedOnNodesOfTheirOwn) {
  if (!HavePython3()) GTEST_SKIP() << "python3 is not installed: gen2 needs it";
  rapidjson::Document d;
  std::string out;
  ASSERT_NO_FATAL_FAILURE(
      RunBenchJobs("gen2/run_gen2.py", "--seeds 1006 --no-outlook", 1, &d, &out));
  const rapidjson::Value* row = Row(d["jobs"][0], "ps-worker-ratio");
  ASSERT_NE(row, nullptr) << out;
  EXPECT_FALSE(row->HasMember("pred_ms")) << (*row)["why"].GetString();
  rapidjson::Document a;
  const rapidjson::Value* f = nullptr;
  ASSERT_NO_FATAL_FAILURE(PsWorkerRatioWithoutPodList(1006, &a, &out, &f));
  EXPECT_STREQ((*f)["impact"]["method"].GetString(), "none") << (*f)["impact"]["why"].GetString();
}

}  // namespace
}  // namespace tfdiag::test
