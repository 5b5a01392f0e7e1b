// The scaling outlook against the independent simulator (issue 44 item 3: "checked against
// sweeps of the same jobs simulated at those worker counts"): jobs whose PS NIC is the limit,
// simulated by bench/twins/indep/indepsim.py (each NIC shared by the transfers crossing it, a
// model the outlook does not share), captured at 8 workers and simulated again at 16 and 32 by
// bench/outlook/outlook_sweep.py. Before the outlook estimated the NICs' bandwidth from the
// capture's transfers (analyzers/nic_rate.h) it left a timeline's PS NICs unbounded (the
// gradients pushed carry no sizes): at 2x and 4x these jobs were predicted +94% and +317%
// (2.6 Gb/s) and +38% and +115% (10.5 Gb/s) over the simulated steps/s; with the links'
// queueing at the captured load taken from the replay (SetLinks as captured) +9%, +24%, +18% and
// +19% (2026-11-29; +28%, +10%, +22%, +27% with an idle link's time held fixed).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tests/outlook_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// 2 PS x 8 workers, four 0.4 MB dense variables, 10 ms compute, NICs of `mb_per_ms` MB/ms.
std::string NicSpec(double mb_per_ms) {
  std::string dense;
  for (int i = 0; i < 4; ++i) {
    dense += std::string(i ? ", " : "") + "{\"name\": \"layer_" + std::to_string(i) +
             "/kernel\", \"mb\": 0.4, \"read_ms\": 0.02, \"apply_ms\": 0.05}";
  }
  return "{\"seed\": 11, \"ps\": 2, \"workers\": 8, \"ps_threads\": 2, \"ps_cores\": 2, "
         "\"compute_ms\": 10.0, \"overlap\": 0.0, \"op_sigma\": 0.03, \"step_sigma\": 0.03, "
         "\"latency_ms\": 0.05, \"mb_per_ms\": " +
         std::to_string(mb_per_ms) +
         ", \"part_ms\": 0.015, \"sync\": false, \"prefetch\": true, \"input_ms\": 0.3, "
         "\"idle\": [], \"planted\": [], \"steps\": 16, \"worker_speed\": [1, 1, 1, 1, 1, 1, 1, "
         "1], \"ps_speed\": [1, 1], \"dense\": [" +
         dense + "], \"tables\": []}";
}

void ExpectNicOutlook(double mb_per_ms) {
  TempDir dir;
  rapidjson::Document d;
  std::string table, skip;
  ASSERT_NO_FATAL_FAILURE(SweepOneSpec(NicSpec(mb_per_ms), dir, &d, &table, &skip));
  if (!skip.empty()) GTEST_SKIP() << skip;
  const rapidjson::Value& row = d["rows"][0];
  ASSERT_EQ(row["points"].Size(), 2u) << "outlook withheld: " << row["withheld"].GetString();
  // 40%: the captured throughput is the workers' steps per second (CapturedThroughput, o57),
  // 240 steps/s on the 2.5 Gb/s job where indepsim's truth counts 1 / each worker's median step
  // (225) and the workers over their median step read 218, so both points rose by 10% with it
  // (+9% and +24% -> +20% and +36%; the predicted scaling itself unchanged). It was 35%.
  for (const auto& p : row["points"].GetArray()) {
    EXPECT_LT(std::abs(p["err_pct"].GetDouble()), 40)
        << p["workers"].GetInt() << " workers: predicted " << p["pred"].GetDouble()
        << " steps/s, simulated " << p["truth"].GetDouble() << "\n"
        << table;
  }
  EXPECT_NE(std::string(row["pred_resource"].GetString()).find("NIC (estimated"), std::string::npos)
      << "the saturating resource should be a PS NIC of estimated bandwidth\n"
      << table;
}

// 2.6 Gb/s NICs: the PS links already limit the job as captured (the simulated 16 and 32 workers
// run no faster than 8).
TEST(OutlookIndep, SlowNicsBoundTheOutlook) { ExpectNicOutlook(0.3125); }

// 10.5 Gb/s NICs: the links fill between 2x and 4x the workers.
TEST(OutlookIndep, NicsFillingAsWorkersAreAdded) { ExpectNicOutlook(1.25); }

// outlook_sweep.py on the independent suite's job of `seed` (jobs.draw), its one row checked
// after Fix first: each 2x and 4x point within 15% of the same job simulated with the fix, and,
// with `rising`, more steps/s at 4x than at 2x. Skips without python3.
void ExpectAfterFixWithin15(int seed, bool rising) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the independent simulator (bench/twins/indep) "
                    "needs it";
  }
  TempDir dir;
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/outlook/outlook_sweep.py " +
               BuiltTfdiag() + " --jobs indep:" + std::to_string(seed) + " --work " + dir.path() +
               " --json " + dir.File("out.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  rapidjson::Document d;
  d.Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(d.IsObject() && d.HasMember("rows") && d["rows"].Size() == 1u) << r.out;
  const rapidjson::Value& row = d["rows"][0];
  ASSERT_EQ(row["points"].Size(), 2u) << "outlook withheld: " << row["withheld"].GetString();
  double last = 0;
  for (const auto& p : row["points"].GetArray()) {
    ASSERT_TRUE(p.HasMember("pred_fix")) << "no Fix first to compose\n" << r.out;
    EXPECT_LE(std::abs(p["err_fix_pct"].GetDouble()), 15.0)
        << p["workers"].GetInt() << " workers after Fix first: predicted "
        << p["pred_fix"].GetDouble() << " steps/s, simulated " << p["truth_fix"].GetDouble() << "\n"
        << r.out;
    if (rising) {
      EXPECT_GT(p["pred_fix"].GetDouble(), last) << "fewer steps/s with more workers";
    }
    last = p["pred_fix"].GetDouble();
  }
}

// A synchronous job whose Fix first is going asynchronous (sync-replicas; tune2 seed 3003: 6 PS
// on one thread each, 10 workers): the outlook after the fix is the asynchronous job at 20 and 40
// workers. The replay ran each PS's applies, once per global step under sync and so per worker
// step once asynchronous, at the captured workers' apply time times the workers replayed: at 4x
// the workers 4x too long, and the asynchronous job's throughput fell as workers were added (-31%
// and -66% against the simulated job: 472 and 257 steps/s at 20 and 40 workers, simulated 689
// and 749). Now +1% and +7% (2026-11-29).
TEST(OutlookIndep, AfterGoingAsynchronousMoreWorkersStillHelp) {
  ExpectAfterFixWithin15(3003, /*rising=*/true);
}

// A slow PS host stays slow after Fix first moves work onto it (report5 seed 13005, spent: 16 PS,
// ps:1 on a host at 0.41x, the hot table on ps:13 partitioned over all 16 PS). The replay spread
// the parts at ps:13's speed, so ps:1's part was served 2.4x too fast: after Fix first +38% and
// +32% over the simulated 32 and 64 workers. slow-ps-host's finding gives ps:1's slowdown, which
// SlowHostCap keeps (analyzers/outlook.cc): +10% and +7% (2026-11-29).
TEST(OutlookIndep, ASlowHostKeptAfterTheFixBoundsTheOutlook) {
  ExpectAfterFixWithin15(13005, /*rising=*/false);
}

}  // namespace
}  // namespace tfdiag::test
