// The scaling outlook against the second independent generator (issue 44 item 3; bench/twins/gen2,
// written apart from tfdiag): its TF1 timelines record each gradient's RecvTensor on the PS that
// receives it, a transfer the outlook used to count as the PS's CPU work and concurrency
// (analyzers/task_stats.h: TaskStats::recv_busy_ns). Dev seed 101 (two PS on one 1 Gb/s node, 4
// workers) had its outlook withheld (the replay of the capture 70% slower than measured: the
// receives taken as op time); dev seed 116 (3 PS on one thread each, 20 workers) was predicted +92%
// and +123% at 2x and 4x (one inter-op thread seen as two, the receives overlapping its ops). Each
// is now given, within 15% of gen2sim's run of the same job at 2x and 4x the workers, with the
// saturation point in the simulated bracket (2026-11-29: 101 -8% and +5%; 116 +1% and -3%).
// run_gen2.py scores the outlook (bench/README.md, "gen2"); a few seconds.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// Runs run_gen2.py on `seeds` (`set` the set they are drawn from) and checks each job's outlook:
// given, its 2x and 4x points within 15% of gen2sim's run of the same job, and the saturation
// point in the simulated bracket.
void ExpectOutlooksWithin15(const std::string& set, const std::string& seeds, size_t jobs) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen2) needs it";
  }
  TempDir dir;
  const RunResult r = RunShell(std::string("python3 ") + SourceDir() +
                               "/bench/twins/gen2/run_gen2.py " + BuiltTfdiag() + " --set " + set +
                               " --seeds " + seeds + " --json " + dir.File("out.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  rapidjson::Document d;
  d.Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(d.IsObject() && d.HasMember("jobs") && d["jobs"].Size() == jobs) << r.out;
  for (const auto& job : d["jobs"].GetArray()) {
    const int seed = job["seed"].GetInt();
    ASSERT_TRUE(job.HasMember("outlook")) << "seed " << seed << ": no outlook checked\n" << r.out;
    const rapidjson::Value& o = job["outlook"];
    ASSERT_TRUE(o.IsObject() && o.HasMember("withheld") && o["withheld"].IsString() &&
                o.HasMember("points") && o["points"].IsArray())
        << "seed " << seed << ": run_gen2.py's outlook is not as expected\n"
        << r.out;
    EXPECT_STREQ(o["withheld"].GetString(), "") << "seed " << seed;
    ASSERT_EQ(o["points"].Size(), 2u) << "seed " << seed << ": 2x and 4x expected\n" << r.out;
    for (const auto& p : o["points"].GetArray()) {
      EXPECT_LE(std::abs(p["err_pct"].GetDouble()), 15.0)
          << "seed " << seed << ", " << p["workers"].GetInt() << " workers: predicted "
          << p["pred"].GetDouble() << " steps/s, simulated " << p["truth"].GetDouble() << "\n"
          << r.out;
    }
    ASSERT_TRUE(o.HasMember("sat_right") && o["sat_right"].IsBool() && o.HasMember("sat_bracket") &&
                o.HasMember("truth_bracket"))
        << "seed " << seed << ": run_gen2.py's outlook has no saturation verdict\n"
        << r.out;
    EXPECT_TRUE(o["sat_right"].GetBool())
        << "seed " << seed << ": saturation predicted " << o["sat_bracket"].GetString()
        << ", simulated " << o["truth_bracket"].GetString() << "\n"
        << r.out;
  }
}

TEST(OutlookGen2, ReceivesOnThePsAreNotItsCpuWork) { ExpectOutlooksWithin15("dev", "101,116", 2); }

// gen2 report3 (spent) 801 and 824: asynchronous jobs on 1 Gb/s links that are full at the
// captured count (12 PS, 13 workers; 5 PS, 25 workers). Under a full link each worker's steps
// are skewed, so the workers over their median step read the throughput 18-20% under the steps
// they did per second (what gen2sim measures, and a step counter reads); and the NIC estimated
// from the answers' times (0.65 and 0.57 Gb/s) bounded the job under what its busiest PS NIC
// carried in the capture. Before (2026-11-30, main at 1dd34be): 801 -45% and -28%, 824 -35% and
// -30% at 2x and 4x; now within 15% (-13%, -10%; -8%, -12%), both saturated by 2x as simulated.
TEST(OutlookGen2, AFullLinkKeepsWhatTheCaptureCarried) {
  ExpectOutlooksWithin15("report3", "801,824", 2);
}

}  // namespace
}  // namespace tfdiag::test
