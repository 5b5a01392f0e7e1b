// The scaling outlook against the third independent generator (issue 44 item 3; bench/twins/gen3,
// written apart from tfdiag: PS links shared per host with TCP slow start, gRPC calls capped per
// channel, use_locking applies). Its captures carry no transfer sizes, so before the receive
// link's bound (analyzers/outlook_links.h) the outlook left the PS NICs unbounded: on gen3's spent
// report seeds, 707 (2 PS on 5 Gb/s links, 2 workers, asynchronous) was predicted +68% and +207%
// at 2x and 4x the workers, 710 (1 PS, 6 workers, SyncReplicasOptimizer) +78% and +204%, and 706
// (dense Adam on embedding parts, each part's applies one at a time under their mutex) +59% and
// +93%. From each PS's receive share (707: 46%; 710: 39%) and each variable's mutex share (706:
// 71%), 2026-11-30: 707 +10% and +1%, 710 +9% and +14%, 706 +5% and -2%, each saturation in the
// simulated bracket or named by the resource that binds. These seeds were the ones the bound was
// tuned on (docs/scaling.md); run_gen3.py scores them. About a minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tests/outlook_util.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// Runs run_gen3.py on `seeds` into `d` and checks each job's outlook: given, its 2x and 4x points
// within 15% of gen3sim's run of the same job at those counts. `out` gets the run's output.
void RunGen3Outlooks(const std::string& seeds, size_t jobs, rapidjson::Document* d,
                     std::string* out) {
  TempDir dir;
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/twins/gen3/run_gen3.py " +
               BuiltTfdiag() + " --seeds " + seeds + " --json " + dir.File("out.json"));
  *out = r.out;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  d->Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(d->IsObject() && d->HasMember("jobs") && (*d)["jobs"].Size() == jobs) << r.out;
  for (const auto& job : (*d)["jobs"].GetArray()) {
    const int seed = job["seed"].GetInt();
    ASSERT_TRUE(job.HasMember("outlook")) << "seed " << seed << ": no outlook checked\n" << r.out;
    const rapidjson::Value& o = job["outlook"];
    ASSERT_TRUE(o.IsObject() && o.HasMember("withheld") && o["withheld"].IsString() &&
                o.HasMember("points") && o["points"].IsArray() && o.HasMember("resource") &&
                o["resource"].IsString())
        << "seed " << seed << ": run_gen3.py's outlook is not as expected\n"
        << r.out;
    EXPECT_STREQ(o["withheld"].GetString(), "") << "seed " << seed;
    ASSERT_EQ(o["points"].Size(), 2u) << "seed " << seed << ": 2x and 4x expected\n" << r.out;
    for (const auto& p : o["points"].GetArray()) {
      EXPECT_LE(std::abs(p["err_pct"].GetDouble()), 15.0)
          << "seed " << seed << ", " << p["workers"].GetInt() << " workers: predicted "
          << p["pred"].GetDouble() << " steps/s, simulated " << p["truth"].GetDouble() << "\n"
          << r.out;
    }
  }
}

TEST(OutlookGen3, PsReceiveLinksAndMutexesBoundTheOutlook) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen3) needs it";
  }
  rapidjson::Document d;
  std::string out;
  RunGen3Outlooks("706,707,710", 3, &d, &out);
  if (HasFatalFailure()) return;
  for (const auto& job : d["jobs"].GetArray()) {
    const int seed = job["seed"].GetInt();
    const rapidjson::Value& o = job["outlook"];
    const std::string resource = o["resource"].GetString();
    // 710 (SyncReplicasOptimizer): the burst after the barrier on ps:0's link binds before its
    // receive link's convoy since o65 (analyzers/outlook_sync_burst.h; +9%/+14% -> +7%/+10%).
    const char* expected = seed == 706   ? "mutex"
                           : seed == 710 ? "ps:0 NIC (the burst after the sync barrier"
                                         : "NIC (its receive link";
    EXPECT_NE(resource.find(expected), std::string::npos)
        << "seed " << seed << ": the saturating resource should name " << expected << ", not \""
        << resource << "\"\n"
        << out;
    // The bracket is judged where the simulated efficiency is clear of the 60% line (706 and
    // 707 fall to 58% and 60% at 2x: a bracket either side of it is right within noise).
    bool clear = o.HasMember("truth_eff") && o["truth_eff"].IsObject();
    if (clear) {
      for (const auto& e : o["truth_eff"].GetObject()) {
        clear = clear && std::abs(e.value.GetDouble() - 0.60) >= 0.05;
      }
    }
    if (clear) {
      EXPECT_TRUE(o["sat_right"].GetBool())
          << "seed " << seed << ": saturation predicted " << o["sat_bracket"].GetString()
          << ", simulated " << o["truth_bracket"].GetString() << "\n"
          << out;
    }
  }
}

// gen3 report4 (1300-1331, spent): 1306 and 1312, asynchronous workers in a convoy (every PS's
// receives stretched alike), were +54%/+31% and +31%/+17% at 2x/4x under the 60% receive share
// (analyzers/outlook_links.h: ConvoyStretch); within 15% as a convoy (+7%/-0%, +2%/-5%). gen3
// report6 (1700-1731, spent): 1708 (16 PS, ps:0 carrying 63% of the workers' summed receive time,
// its receives 78% stretched) and 1717 (2 PS, ps:0 72%, 65%) were +35%/+24% and +37%/+14%: the
// other PS's unstretched receives kept the job's least stretch under the convoy's 0.8. One
// dominant link lines the workers up on it (kDominantLinkLoad): +7%/+1% and -3%/-13%. Each
// convoy named. About a minute.
TEST(OutlookGen3, AsynchronousConvoysWithin15Percent) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen3) needs it";
  }
  rapidjson::Document d;
  std::string out;
  RunGen3Outlooks("1306,1312,1708,1717", 4, &d, &out);
  if (HasFatalFailure()) return;
  for (const auto& job : d["jobs"].GetArray()) {
    const std::string resource = job["outlook"]["resource"].GetString();
    EXPECT_NE(resource.find("workers in a convoy"), std::string::npos)
        << "seed " << job["seed"].GetInt() << ": " << resource;
  }
}

// gen3 report 720: each worker reads a table whole from ps:0 every step to gather from it on the
// worker; the PS's transmit link carries the table each step, which the capture neither sizes
// nor shows. The outlook was +67% and +75% at 2x and 4x; it now says why it cannot tell.
TEST(OutlookGen3, AWholeTableReadWithoutSizesIsWithheld) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen3) needs it";
  }
  TempDir dir;
  const std::string trace = SimulatedJob("gen3", 720, dir);
  ASSERT_FALSE(trace.empty());
  rapidjson::Document d;
  ASSERT_NO_FATAL_FAILURE(AnalyzeOutlook(trace, &d));
  const rapidjson::Value& o = d["outlook"];
  ASSERT_TRUE(o.HasMember("withheld") && o["withheld"].IsString());
  const std::string why = o["withheld"].GetString();
  EXPECT_NE(why.find("emb0/embedding_weights whole"), std::string::npos) << why;
  EXPECT_NE(why.find("transmit link"), std::string::npos) << why;
  EXPECT_EQ(o["points"].Size(), 0u);

  // The gathers are what the gather-on-worker rule finds, with its thresholds from the rule set:
  // a rule set that asks for more gathers than the capture has finds none, and then the outlook
  // is not withheld for them (the outlook once kept a detection of its own, looser than the
  // rule's).
  WriteFile(dir.File("few.rules.json"),
            R"({"schema":"tfdiag.rules/1","rules":[{"id":"gather-on-worker",)"
            R"("params":{"min_gathers":1000000000}}]})");
  const RunResult few = RunShell(std::string(BuiltTfdiag()) + " analyze -f json --rules " +
                                 dir.File("few.rules.json") + " " + trace);
  ASSERT_EQ(few.exit_code, 0) << few.err;
  rapidjson::Document d2;
  d2.Parse(few.out.c_str());
  ASSERT_TRUE(d2.IsObject() && d2.HasMember("outlook")) << few.out;
  const rapidjson::Value& o2 = d2["outlook"];
  if (o2.IsObject() && o2.HasMember("withheld") && o2["withheld"].IsString()) {
    EXPECT_EQ(std::string(o2["withheld"].GetString()).find("whole from its PS"), std::string::npos)
        << o2["withheld"].GetString();
  }
}

// gen3 report5 (spent) 1516: 2 workers read a table whole from ps:0; the timeline sizes that
// read (show_memory), only the applies' control edges are unsized. The outlook said the capture
// sizes no transfer; it sizes the answers, not the link's bandwidth (scaled with the sizes and
// the NIC estimated from a small answer, it read +27% and +95% at 2x and 4x), and says so.
TEST(OutlookGen3, AWholeTableReadWithSizesNamesTheUnmeasuredLink) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen3) needs it";
  }
  TempDir dir;
  const std::string trace = SimulatedJob("gen3", 1516, dir);
  ASSERT_FALSE(trace.empty());
  rapidjson::Document d;
  ASSERT_NO_FATAL_FAILURE(AnalyzeOutlook(trace, &d));
  const std::string why = d["outlook"]["withheld"].GetString();
  EXPECT_NE(why.find("emb2/embedding_weights whole"), std::string::npos) << why;
  EXPECT_NE(why.find("sizes the PS answers"), std::string::npos) << why;
  EXPECT_NE(why.find("bandwidth of the PS's transmit link"), std::string::npos) << why;
  EXPECT_EQ(why.find("sizes no transfer"), std::string::npos) << why;
}

}  // namespace
}  // namespace tfdiag::test
