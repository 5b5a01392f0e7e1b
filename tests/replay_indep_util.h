// Running one job of the independent simulator (bench/twins/indep/run_indep.py) and judging
// it against its fixed twins: what the replay_indep tests share (replay_indep_test.cc, the
// predictions; replay_indep_severity_test.cc, the severities of healthy jobs). The simulator is
// python3's; without it the caller's test is skipped.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {

// One job run through run_indep.py: its result (a "jobs" array of one) and its printed table.
struct JobRun {
  TempDir dir;
  rapidjson::Document d;
  std::string table;
  const rapidjson::Value& job() const { return d["jobs"][0]; }
};

// Runs `spec` into `*run`: the job (jobs.draw's keys), or "seed:N" for jobs.draw(N) (a tune
// seed: tests may be drawn from the seeds that set tfdiag's constants, never from the report
// seeds). Skips the test without python3, fails it when the run does; the caller returns when
// the test is skipped or has failed fatally (IsSkipped, HasFatalFailure).
inline void RunJob(const std::string& spec, JobRun* run) {
  const TempDir& dir = run->dir;
  rapidjson::Document& d = run->d;
  if (!HavePython3()) {
    GTEST_SKIP() << "python3 is not installed: the independent simulator (bench/twins/indep) "
                    "needs it";
  }
  std::string job;
  if (spec.rfind("seed:", 0) == 0) {
    job = " --seeds " + spec.substr(5);
  } else {
    WriteFile(dir.File("spec.json"), spec);
    job = " --spec " + dir.File("spec.json");
  }
  const std::string cmd = std::string("python3 ") + TFDIAG_SOURCE_DIR +
                          "/bench/twins/indep/run_indep.py " + TFDIAG_BINARY + job + " --work " +
                          dir.path() + " --json " + dir.File("out.json") + " >" +
                          dir.File("out.txt") + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0)
      << "run_indep.py failed: " << ReadFile(dir.File("out.txt"));
  d.Parse(ReadFile(dir.File("out.json")).c_str());
  ASSERT_TRUE(!d.HasParseError() && d.IsObject() && d.HasMember("jobs") && d["jobs"].Size() == 1)
      << "run_indep.py wrote no job";
  run->table = ReadFile(dir.File("out.txt"));
}

// RunJob, and whether the caller may go on judging it (RunJob neither skipped the test nor
// failed it fatally; a fatal failure from before the call does not count).
inline bool Ran(const std::string& spec, JobRun* run) {
  const bool failed_before = ::testing::Test::HasFatalFailure();
  RunJob(spec, run);
  return !::testing::Test::IsSkipped() && (failed_before || !::testing::Test::HasFatalFailure());
}

// Checks that `rule` is predicted within `max_err_pct` of its twin and that Fix first is right;
// `absent`, when given, is a rule that must not fire (a fix the job must not be advised).
inline void ExpectPredicted(const std::string& spec, const std::string& rule, double max_err_pct,
                            const std::string& absent = "") {
  JobRun run;
  if (!Ran(spec, &run)) return;
  const std::string& table = run.table;
  const rapidjson::Value& job = run.job();
  const rapidjson::Value* row = Row(job, rule);
  ASSERT_NE(row, nullptr) << "no " << rule << " finding:\n" << table;
  if (!absent.empty()) {
    EXPECT_EQ(Row(job, absent), nullptr) << absent << " fired:\n" << table;
  }
  ASSERT_TRUE(row->HasMember("pred_ms"))
      << rule << " withheld: " << (*row)["why"].GetString() << "\n"
      << table;
  const double err = std::abs((*row)["err_pct"].GetDouble());
  EXPECT_LT(err, max_err_pct) << rule << ": " << (*row)["why"].GetString() << "\n" << table;
  if (std::string((*row)["confidence"].GetString()) == "high") {
    EXPECT_LT(err, 10) << rule << ": confidence high, " << err << "% off";
  }
  EXPECT_TRUE(job["fix_first_right"].GetBool())
      << "Fix first " << (job["fix_first"].IsString() ? job["fix_first"].GetString() : "none")
      << ", the best fix saves " << job["best_saving_pct"].GetDouble() << "%\n"
      << table;
}

// Checks that the job of `spec` is healthy (no fix buys 5%), that `rule` fires (`fires` says
// why it must) and that no finding is medium or above; with `fix_first`, that Fix first is
// right too (nothing named over 10%).
inline void ExpectHealthyAndCalm(const std::string& spec, const std::string& rule,
                                 const std::string& fires, bool fix_first) {
  JobRun run;
  if (!Ran(spec, &run)) return;
  const std::string& table = run.table;
  const rapidjson::Value& job = run.job();
  ASSERT_TRUE(job["healthy"].GetBool()) << "the job must be healthy for this test: best fix "
                                        << job["best_saving_pct"].GetDouble() << "%\n"
                                        << table;
  ASSERT_NE(Row(job, rule), nullptr) << rule << " must fire" << fires << "\n" << table;
  for (const auto& f : job["severe_findings"].GetArray()) {
    ADD_FAILURE() << f.GetString() << " at medium or above on a healthy job\n" << table;
  }
  if (fix_first) {
    EXPECT_TRUE(job["fix_first_right"].GetBool()) << table;
  }
}

// Issue 44's goals on one job drawn by jobs.draw from a tune seed: every prediction made within
// 25% of its twin and every `high` within 10%; on a healthy job (no fix buys 5%) no finding of
// medium or above; `Fix first` right unless `fix_first` is false. `rule`, when given, must fire.
// `withheld`: a rule whose finding must be there with no prediction made.
inline void ExpectGoalsMet(int seed, const std::string& rule = "", bool fix_first = true,
                           const std::string& withheld = "") {
  JobRun run;
  if (!Ran("seed:" + std::to_string(seed), &run)) return;
  const std::string& table = run.table;
  const rapidjson::Value& job = run.job();
  if (!rule.empty()) {
    ASSERT_NE(Row(job, rule), nullptr) << "no " << rule << " finding\n" << table;
  }
  if (!withheld.empty()) {
    const rapidjson::Value* w = Row(job, withheld);
    ASSERT_NE(w, nullptr) << "no " << withheld << " finding\n" << table;
    EXPECT_FALSE(w->HasMember("err_pct")) << withheld << " predicted\n" << table;
  }
  for (const auto& r : job["rows"].GetArray()) {
    if (!r.HasMember("err_pct")) continue;
    const double err = std::abs(r["err_pct"].GetDouble());
    const bool high = std::string(r["confidence"].GetString()) == "high";
    EXPECT_LT(err, high ? 10 : 25)
        << r["rule"].GetString() << " (" << r["confidence"].GetString() << ") " << err
        << "% off its twin: " << r["why"].GetString() << "\n"
        << table;
  }
  if (job["healthy"].GetBool()) {
    for (const auto& f : job["severe_findings"].GetArray()) {
      ADD_FAILURE() << f.GetString() << " at medium or above on a healthy job\n" << table;
    }
  }
  if (!fix_first) return;
  EXPECT_TRUE(job["fix_first_right"].GetBool())
      << "Fix first " << (job["fix_first"].IsString() ? job["fix_first"].GetString() : "none")
      << ", the best fix saves " << job["best_saving_pct"].GetDouble() << "%\n"
      << table;
}

}  // namespace tfdiag::test
