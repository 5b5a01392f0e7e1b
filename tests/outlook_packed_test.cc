// The scaling outlook on PS packed on one node's NIC (gen3 report7 1908, spent: 16 PS on one
// 10 Gb/s NIC, 12 asynchronous workers, a dense kernel in 16 parts; bench/twins/gen3). Each PS
// had 7.3 receives in flight at once against a fan-out of 16 (every worker pushing to every PS),
// a ratio of 0.46, which the receive link's bound read as flows throttled at the workers' own
// links (kWorkerEndMaxConcurrency was 0.5, analyzers/outlook_links.h) and so let the job grow:
// +93% and +84% at 2x and 4x against gen3sim, whose workers have no link of their own. At 0.3
// the PS links bound it as captured: -1% and -16%, saturation named before 2x as simulated.
// About a minute.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <string>

#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

TEST(OutlookPacked, PsOnOneNicAreNotReadAsThrottledAtTheWorkers) {
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the generator (bench/twins/gen3) needs it";
  }
  TempDir dir;
  const RunResult r =
      RunShell(std::string("python3 ") + SourceDir() + "/bench/twins/gen3/run_gen3.py " +
               BuiltTfdiag() + " --seeds 1908 --json " + dir.File("out.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  rapidjson::Document d;
  d.Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(d.IsObject() && d.HasMember("jobs") && d["jobs"].Size() == 1u) << r.out;
  const rapidjson::Value& o = d["jobs"][0]["outlook"];
  ASSERT_TRUE(o.IsObject() && o["points"].IsArray() && o["points"].Size() == 2u) << r.out;
  // 2x within the outlook's 15%; 4x within 25% (-16%: the simulated job still gains a little).
  EXPECT_LE(std::abs(o["points"][0]["err_pct"].GetDouble()), 15.0) << r.out;
  EXPECT_LE(std::abs(o["points"][1]["err_pct"].GetDouble()), 25.0) << r.out;
  EXPECT_STREQ(o["sat_bracket"].GetString(), o["truth_bracket"].GetString()) << r.out;
  EXPECT_NE(std::string(o["resource"].GetString()).find("NIC"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tfdiag::test
