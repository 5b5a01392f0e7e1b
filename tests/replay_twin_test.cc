// The twin suite's fast subset (issue 35, bench/twins/): jobs made by an event-driven PS job
// generator written apart from the replay (bench/twins/psjob.py: its own model, not the replay's
// nor the simulator's), analysed by `tfdiag analyze -f json`; each finding's predicted step after
// its fix is compared with the fixed twin's measured step (the same job and seed, the fix
// applied). Families: a hot PS on 1 and 2 PS threads and beside idle PS (partitions over all
// PS), slow input without prefetch (prefetch as a bound), an asynchronous straggler (the job's
// throughput, steps/s of all workers, against the twin's per-worker steps), a healthy job.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// Runs the fast families; the suite's JSON summary, or GTEST_SKIP-worthy reason in `why`.
rapidjson::Document RunFastTwins(const TempDir& dir, std::string* why) {
  rapidjson::Document d;
  if (!HavePython3()) {
    *why = "python3 is not installed: the twin generator (bench/twins/psjob.py) needs it";
    return d;
  }
  const std::string out = dir.File("twins.json");
  const std::string cmd =
      std::string("python3 ") + TFDIAG_SOURCE_DIR + "/bench/twins/run_twins.py " + TFDIAG_BINARY +
      " --work " + dir.path() +
      " --families hot-1t,hot-2t,hot-idle,input-slow,straggler-async,healthy-small "
      "--json " +
      out + " >" + dir.File("twins.md") + " 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    *why = "run_twins.py failed: " + ReadFile(dir.File("twins.md"));
    return d;
  }
  d.Parse(ReadFile(out).c_str());
  if (d.HasParseError() || !d.IsObject()) *why = "run_twins.py wrote no JSON";
  return d;
}

TEST(ReplayTwins, FastFamiliesMatchTheirFixedTwins) {
  TempDir dir;
  std::string why;
  const rapidjson::Document d = RunFastTwins(dir, &why);
  if (why.find("python3 is not installed") == 0) GTEST_SKIP() << why;
  ASSERT_TRUE(why.empty()) << why;
  std::printf("%s\n", ReadFile(dir.File("twins.md")).c_str());
  int predictions = 0;
  for (const auto& fam : d["families"].GetArray()) {
    const std::string name = fam["family"].GetString();
    const bool healthy = fam["healthy"].GetBool();
    // Fix first as tfdiag names it (report/text_findings.cc FixFirst: the biggest saving of a
    // trusted prediction, a replay whose confidence is not low) is the fix whose twin runs
    // fastest; none on a healthy job or where no fix buys 5% (issue 47: a withheld Fix first,
    // or one naming another fix, fails).
    const std::string best =
        fam["best_fix"].IsArray() ? fam["best_fix"][0].GetString() : std::string("none");
    std::string first = "none";
    double first_saving = 0;
    for (const auto& row : fam["rows"].GetArray()) {
      const std::string conf = row["confidence"].GetString();
      if (!row.HasMember("pred_ms") || conf.empty() || conf.rfind("low", 0) == 0) continue;
      const double saving = row["saving_pct"].GetDouble();
      if (saving > first_saving) first = row["fix"][0].GetString(), first_saving = saving;
    }
    if (best == "none") {
      EXPECT_LE(first_saving, 5) << name << ": Fix first " << first << " (-" << first_saving
                                 << "%) where no fix buys 5%";
    } else {
      EXPECT_EQ(first, best) << name << ": Fix first names " << first << ", the twins' best is "
                             << best;
    }
    bool found = healthy;
    for (const auto& row : fam["rows"].GetArray()) {
      found = true;
      const std::string rule = row["rule"].GetString();
      if (!row.HasMember("pred_ms")) {
        // Withheld by the gate ("misses the measured step by X%") or for a reason of the rule's:
        // never the prediction of the fix the twins say buys most, which the report must name.
        EXPECT_FALSE(std::string(row["why"].GetString()).empty())
            << name << " " << rule << ": no prediction and no reason";
        EXPECT_NE(row["fix"][0].GetString(), best)
            << name << " " << rule
            << ": the best fix's prediction is withheld: " << row["why"].GetString();
        continue;
      }
      ++predictions;
      const double err = std::abs(row["err_pct"].GetDouble());
      EXPECT_LT(err, 15) << name << " " << rule << ": " << row["why"].GetString();
      // A partitioned hot PS (issue 35): its answers' transfers, which a saturated PS hides in
      // its queue, come back once partitioned (hot-1t was 8% and hot-idle 9.5% too fast
      // without them); 7%: the 5% goal and the twins' own step-to-step jitter (3%).
      if (rule == "hot-ps") {
        EXPECT_LT(err, 7) << name << ": " << row["why"].GetString();
      }
      if (std::string(row["confidence"].GetString()) == "high") {
        EXPECT_LT(err, 10) << name << " " << rule << ": confidence high, " << err << "% off";
      }
      if (healthy) {
        EXPECT_LT(row["saving_pct"].GetDouble(), 5) << name << " " << rule;
      }
    }
    EXPECT_TRUE(found) << name << ": no finding with a twin";
  }
  EXPECT_GE(predictions, 3);
}

}  // namespace
}  // namespace tfdiag::test
