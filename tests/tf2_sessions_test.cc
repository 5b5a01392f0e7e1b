// Issue 38: TF2 log directories as users keep them. Profiling sessions whose clocks restart near
// zero (TF 2.4+) are separate captures in time order, never separate tasks; profile runs are
// found below any directory given (the profiler tutorial's logs/fit/<timestamp>/train/...);
// step times as XProf computes them, checked against the step times XProf itself wrote into each
// run's input_pipeline.pb (read here by an independent wire-format reader, tests/wire_reader.h);
// the median of an even count; inputs that hold nothing to analyze. Fixtures: `tfdiag simulate
// --session-clock` XSpaces assembled into log directories here, and the real TF 2.4 log directory
// ../shared/traces/mholmeslinder_9a8988e_scalars8_logdir (three sessions of one GPU host).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "analyzers/task_stats.h"
#include "collectors/load_inputs.h"
#include "core/capture_builder.h"
#include "core/median.h"
#include "tests/test_util.h"
#include "tests/wire_reader.h"

namespace tfdiag::test {
namespace {

namespace fs = std::filesystem;

#define REQUIRE_SHARED() \
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository"

constexpr const char* kLogDir = "mholmeslinder_9a8988e_scalars8_logdir";
constexpr const char* kRuns[] = {"2020_12_22_03_42_42", "2020_12_22_03_43_06",
                                 "2020_12_22_03_43_39"};

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The step times (ms) XProf wrote into an input_pipeline.pb: InputPipelineAnalysisResult
// field 4 (step_details, repeated google.protobuf.Any {type_url = 1, value = 2}) holding a
// PerGenericStepDetail whose field 2 is step_time_ms (a double). Field numbers read off the
// files themselves (the Any's type URL names the message; the per-step field 2 equals the
// summary's average, field 2.1, on one-step runs).
std::vector<double> XprofStepTimesMs(const std::string& path) {
  const std::string pb = ReadFile(path);
  std::vector<double> out;
  EXPECT_TRUE(WalkFields(pb, [&](uint32_t f, int wt, uint64_t, std::string_view any) {
    if (f != 4 || wt != 2) return;
    std::string_view type_url, value;
    WalkFields(any, [&](uint32_t af, int, uint64_t, std::string_view v) {
      if (af == 1) type_url = v;
      if (af == 2) value = v;
    });
    EXPECT_NE(type_url.find("PerGenericStepDetail"), std::string_view::npos) << type_url;
    // Doubles (wire type 1) are not handed over by WalkFields: find field 2's 8 bytes.
    size_t i = 0;
    while (i < value.size()) {
      const uint8_t tag = static_cast<uint8_t>(value[i++]);
      const int field = tag >> 3, w = tag & 7;
      if (w == 1) {
        if (field == 2 && i + 8 <= value.size()) {
          double d;
          std::memcpy(&d, value.data() + i, 8);
          out.push_back(d);
        }
        i += 8;
      } else if (w == 0) {
        while (i < value.size() && (static_cast<uint8_t>(value[i++]) & 0x80)) {
        }
      } else if (w == 5) {
        i += 4;
      } else {
        break;  // no strings or messages precede step_time_ms in these files
      }
    }
  }));
  return out;
}

// The real log directory's three sessions, each read as a capture of its own (--run all).
TEST(Tf2Sessions, StepTimesEqualXprofsOnThreeRealSessions) {
  REQUIRE_SHARED();
  const std::string dir = SharedTrace(kLogDir);
  std::vector<std::string> notes;
  LoadOptions o;
  o.run = "all";
  o.notes = &notes;
  StatusOr<Capture> c = LoadInputs({dir}, o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // One host: one task, never three.
  ASSERT_EQ(c->tasks.size(), 1u);
  ASSERT_EQ(c->captures.size(), 3u);
  const StepRange steps = c->TaskSteps(0);
  ASSERT_EQ(steps.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    const std::vector<double> xprof = XprofStepTimesMs(
        fmt::format("{}/train/plugins/profile/{}/d1792a5a2842.input_pipeline.pb", dir, kRuns[k]));
    ASSERT_EQ(xprof.size(), 1u) << kRuns[k];
    const double ours = (steps[k].end - steps[k].start) / 1e6;
    EXPECT_NEAR(ours, xprof[0], 0.001) << kRuns[k];
    // Each step lies in its own capture, in run order.
    EXPECT_GE(steps[k].start, c->captures[k].start);
    EXPECT_LE(steps[k].start, c->captures[k].end);
  }
  // The sessions are 24 and 33 s apart (run names), and each capture's figures are noted.
  std::string all;
  for (const std::string& n : c->stats.notes) all += n + "\n";
  for (const std::string& n : notes) all += n + "\n";
  EXPECT_TRUE(Has(all, "3 profiling sessions")) << all;
  EXPECT_TRUE(Has(all, "3 captures, 23.9 s to 32.9 s apart")) << all;
  EXPECT_TRUE(Has(all, "capture 1 (run '2020_12_22_03_42_42'")) << all;
  EXPECT_TRUE(Has(all, "capture 3 (run '2020_12_22_03_43_39'")) << all;
  EXPECT_TRUE(Has(all, "localhost:0: 1 step (median 74.18 ms)")) << all;
}

// The trace JSON of each run (the same capture, converted by the profiler) gives the same step.
TEST(Tf2Sessions, TraceJsonOfARealSessionGivesXprofsStepToo) {
  REQUIRE_SHARED();
  const std::string file =
      SharedTrace(kLogDir) + "/train/plugins/profile/" + kRuns[0] + "/d1792a5a2842.trace.json.gz";
  StatusOr<Capture> c = LoadInputs({file}, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->tasks.size(), 1u);
  ASSERT_EQ(c->TaskSteps(0).size(), 1u);
  const StepRow s = c->TaskSteps(0)[0];
  EXPECT_NEAR((s.end - s.start) / 1e6, 74.182, 0.001);
}

// The default read of the real log directory: the latest run, with a note listing the others.
TEST(Tf2Sessions, LatestRunOfARealLogDirectoryWithANote) {
  REQUIRE_SHARED();
  RunResult r = RunTfdiag("analyze -f json '" + SharedTrace(kLogDir) + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "read profile run '2020_12_22_03_43_39'")) << r.err;
  EXPECT_TRUE(Has(r.err, "the latest; 3 runs found")) << r.err;
  EXPECT_TRUE(Has(r.err, "--run all")) << r.err;
}

// `tfdiag simulate --session-clock` XSpaces of 1 PS and 1 worker (`steps` steps, seed `seed`)
// moved into <logs>/<sub>/plugins/profile/<run>/ with the hosts renamed as plain hostnames (no
// task in them: mapped to localhost:<n>).
void SessionRun(const std::string& logs, const std::string& sub, const std::string& run, int seed,
                int steps = 3) {
  TempDir tmp;
  RunResult r = RunTfdiag(fmt::format(
      "simulate balanced --ps 1 --workers 1 --steps {} --tf2-steps --seed {} --format xplane "
      "--session-clock -o '{}'",
      steps, seed, tmp.File("out")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const fs::path from = fs::path(tmp.File("out")) / "plugins" / "profile";
  const fs::path to = fs::path(logs) / sub / "plugins" / "profile" / run;
  fs::create_directories(to);
  for (const fs::directory_entry& e : fs::directory_iterator(from)) {
    for (const fs::directory_entry& f : fs::directory_iterator(e.path())) {
      const std::string n = f.path().filename().string();
      const std::string host = n.rfind("ps-", 0) == 0 ? "hostb" : "hosta";
      fs::rename(f.path(), to / (host + ".xplane.pb"));
    }
  }
}

TEST(Tf2Sessions, ClocksRestartingAtZeroAreCapturesOfTheirOwnNotTasks) {
  TempDir dir;
  const std::string logs = dir.File("logs");
  SessionRun(logs, "train", "2020_12_22_03_42_42", 1);
  SessionRun(logs, "train", "2020_12_22_03_43_06", 2);
  SessionRun(logs, "train", "2020_12_24_08_00_00", 3);
  std::vector<std::string> notes;
  LoadOptions o;
  o.run = "all";
  o.notes = &notes;
  StatusOr<Capture> c = LoadInputs({logs}, o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  // Two hosts, two tasks (not six); three captures in time order, 24 s and ~53 h apart.
  EXPECT_EQ(c->tasks.size(), 2u);
  ASSERT_EQ(c->captures.size(), 3u);
  EXPECT_NEAR((c->captures[1].start - c->captures[0].start) / 1e9, 24.0, 0.5);
  EXPECT_NEAR((c->captures[2].start - c->captures[1].start) / 3600e9, 52.28, 0.01);
  for (uint32_t t = 0; t < c->tasks.size(); ++t) {
    if (c->TaskLabelOf(t).rfind("localhost", 0) != 0) ADD_FAILURE() << c->TaskLabelOf(t);
  }
  // The busy share is over the time captured, not the gaps: well above 0.
  const TaskStatsTable table = ComputeTaskStats(*c);
  EXPECT_LT(table.span_ns, 10'000'000'000);
  std::string all;
  for (const std::string& n : c->stats.notes) all += n + "\n";
  EXPECT_TRUE(Has(all, "capture 2 (run '2020_12_22_03_43_06'")) << all;
  EXPECT_TRUE(Has(all, "after capture 1")) << all;
}

// The profiler tutorial's layout, several log directories and runs below logs/.
TEST(Tf2Sessions, TutorialLayoutFoundBelowAnyDirectoryAndRunPicksAny) {
  TempDir dir;
  const std::string logs = dir.File("logs");
  SessionRun(logs, "fit/20201222-034228/train", "2020_12_22_03_42_42", 1, 2);
  SessionRun(logs, "fit/20201222-034228/train", "2020_12_22_03_43_06", 2, 2);
  SessionRun(logs, "fit/20201223-101500/train", "2020_12_23_10_15_20", 3, 2);
  for (const std::string& given : {logs, logs + "/fit", logs + "/fit/20201223-101500/train"}) {
    RunResult r = RunTfdiag("analyze -f json '" + given + "'");
    ASSERT_EQ(r.exit_code, 0) << given << "\n" << r.err;
    EXPECT_TRUE(Has(r.err, "read profile run '2020_12_23_10_15_20'")) << r.err;
    EXPECT_TRUE(Has(r.err, "hosta, hostb")) << r.err;
  }
  RunResult r = RunTfdiag("analyze -f json '" + logs + "'");
  EXPECT_TRUE(Has(r.err,
                  "3 runs found (oldest first): 2020_12_22_03_42_42, 2020_12_22_03_43_06, "
                  "2020_12_23_10_15_20"))
      << r.err;
  EXPECT_TRUE(Has(r.err, "in log directory " + logs + "/fit/20201223-101500/train")) << r.err;
  // --run by name and by path; --run all.
  r = RunTfdiag("analyze -f json --run 2020_12_22_03_42_42 '" + logs + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "read profile run '2020_12_22_03_42_42'")) << r.err;
  r = RunTfdiag("analyze -f json --run 20201222-034228/train/2020_12_22_03_43_06 '" + logs + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "read profile run '2020_12_22_03_43_06'")) << r.err;
  r = RunTfdiag("analyze -f json --run all '" + logs + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "read every profile run (3)")) << r.err;
  EXPECT_TRUE(Has(r.err, "3 profiling sessions")) << r.err;
  r = RunTfdiag("analyze -f json --run nope '" + logs + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "no run named 'nope'")) << r.err;
}

TEST(Tf2Sessions, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  std::vector<TimeNs> two = {69'540'000, 51'820'000};
  EXPECT_EQ(MedianInPlace(&two), 60'680'000);
  std::vector<double> four = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(MedianInPlace(&four), 2.5);
  std::vector<TimeNs> three = {5, 1, 3};
  EXPECT_EQ(MedianInPlace(&three), 3);
  // Through the task table: a task of two marked steps.
  CaptureBuilder b;
  DeviceName dn;
  dn.job = "worker";
  dn.type = "CPU";
  const uint32_t d = b.AddDevice(dn);
  const uint32_t t = b.AddTask("worker", 0, 0);
  b.AddOp(0, 69'540'000, d, 0, b.Intern("a"), b.Intern("MatMul"), nullptr, 0);
  b.AddOp(100'000'000, 51'820'000, d, 0, b.Intern("a"), b.Intern("MatMul"), nullptr, 0);
  b.AddStep(t, 0, 69'540'000);
  b.AddStep(t, 100'000'000, 151'820'000);
  const Capture c = b.Finish();
  const TaskStatsTable table = ComputeTaskStats(c);
  ASSERT_EQ(table.tasks.size(), 1u);
  EXPECT_EQ(table.tasks[0].step_median_ns, 60'680'000);
}

TEST(Tf2Inputs, DirectoryOfTimelinesIsOneRun) {
  TempDir dir;
  fs::create_directories(dir.File("tl"));
  for (int k = 1; k <= 2; ++k) {
    RunResult r =
        RunTfdiag(fmt::format("simulate balanced --ps 1 --workers 2 --steps 2 --seed {} -o '{}'", k,
                              dir.File(fmt::format("tl/timeline-{}.json", k))));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  RunResult r = RunTfdiag("analyze -f json '" + dir.File("tl") + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "read its 2 timeline(s) as one run")) << r.err;
  EXPECT_TRUE(Has(r.out, "\"worker:1\"")) << r.out;
}

TEST(Tf2Inputs, NothingToAnalyzeExitsTwoWithOneLine) {
  REQUIRE_SHARED();
  TempDir dir;
  RunResult r;
  // (A compressed tar of a log directory is read as the directory: log_archive_test.cc.)
  // A TensorBoard events file, a tool file, an empty trace: one line each, exit 2.
  const std::string events =
      SharedTrace(kLogDir) + "/train/events.out.tfevents.1608608561.d1792a5a2842.67.245526.v2";
  const std::string tool = SharedTrace(kLogDir) + "/train/plugins/profile/" + kRuns[0] +
                           "/d1792a5a2842.input_pipeline.pb";
  WriteFile(dir.File("empty.json"), "{\"traceEvents\": []}");
  for (const std::string& f : {events, tool, dir.File("empty.json")}) {
    r = RunTfdiag("analyze '" + f + "'");
    EXPECT_EQ(r.exit_code, 2) << f << "\n" << r.out;
    EXPECT_TRUE(Has(r.err, "expected")) << r.err;
    EXPECT_EQ(r.out.find("No rule fired"), std::string::npos) << r.out;
  }
}

// Issue 45 item 4. A host seen in one of three sessions: its busy share is over that session's
// own time (the captures it ran in), not over all three; every session keeps its steps; the two
// hosts of one session are not "of another job".
TEST(Tf2Sessions, AHostInOneSessionIsBusyOverItsOwnCaptureAndKeepsItsSteps) {
  TempDir dir;
  const std::string logs = dir.File("logs");
  SessionRun(logs, "train", "2020_12_22_03_42_42", 1);
  SessionRun(logs, "train", "2020_12_22_03_43_06", 2);
  SessionRun(logs, "train", "2020_12_22_03_43_39", 3);
  // The PS host (hostb) only in the second session.
  fs::remove(fs::path(logs) / "train/plugins/profile/2020_12_22_03_42_42/hostb.xplane.pb");
  fs::remove(fs::path(logs) / "train/plugins/profile/2020_12_22_03_43_39/hostb.xplane.pb");
  LoadOptions o;
  o.run = "all";
  StatusOr<Capture> c = LoadInputs({logs}, o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->captures.size(), 3u);
  const TaskStatsTable table = ComputeTaskStats(*c);
  int checked = 0;
  for (const TaskStats& t : table.tasks) {
    int in = 0;
    int64_t steps = 0;
    TimeNs busy = 0, span = 0;
    for (const CaptureRange& r : c->captures) {
      const CaptureTaskFigures f = FiguresInCapture(*c, r, t.task);
      steps += f.steps;
      if (!f.any) continue;
      ++in;
      busy += f.busy_ns;
      span += r.end - r.start;
    }
    // Steps per capture add up to the task's steps: none lost at a capture's edge.
    EXPECT_EQ(steps, t.steps) << t.label;
    ASSERT_GT(span, 0);
    EXPECT_NEAR(t.busy_pct, 100.0 * busy / span, 0.01) << t.label;
    if (in == 1) ++checked;
  }
  EXPECT_EQ(checked, 1) << "one task ran in one session only";
  std::string all;
  for (const std::string& n : c->stats.notes) all += n + "\n";
  EXPECT_FALSE(Has(all, "share(s) no task")) << all;
}

// A run directory given with a trailing slash is named by its directory, not ''; a GPU host's
// task counts its GPU once, not once per CUDA stream (the real scalars3 capture).
TEST(Tf2Sessions, TrailingSlashAndDevicesAsXprofCountsThem) {
  REQUIRE_SHARED();
  const std::string run = SharedTrace("mholmeslinder_3baf8a2_scalars3_20201221-164239") +
                          "/train/plugins/profile/2020_12_21_16_42_56/";
  RunResult r = RunTfdiag("analyze -f json '" + run + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.err, "read profile run '2020_12_21_16_42_56'")) << r.err;
  EXPECT_FALSE(Has(r.err, "run ''")) << r.err;
  StatusOr<Capture> c = LoadInputs({run}, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->tasks.size(), 1u);
  EXPECT_GT(c->devices.size(), 2u) << "stream rows are devices of the capture";
  const TaskStatsTable table = ComputeTaskStats(*c);
  EXPECT_EQ(table.tasks[0].devices, 2) << "the host's CPU and its one GPU";
  EXPECT_TRUE(Has(r.out, "\"devices\": 2,")) << r.out.substr(0, 2000);
}

// The same run given twice (a log directory and an unpacked copy of it): read once, with a note
// naming the repeat, and the figures of one run.
TEST(Tf2Sessions, ARunGivenTwiceIsReadOnceWithANote) {
  REQUIRE_SHARED();
  TempDir dir;
  const std::string copy = dir.File("copy");
  fs::copy(SharedTrace(kLogDir), copy, fs::copy_options::recursive);
  RunResult once = RunTfdiag("analyze -f json --run all '" + SharedTrace(kLogDir) + "'");
  RunResult twice =
      RunTfdiag("analyze -f json --run all '" + SharedTrace(kLogDir) + "' '" + copy + "'");
  ASSERT_EQ(once.exit_code, 0) << once.err;
  ASSERT_EQ(twice.exit_code, 0) << twice.err;
  EXPECT_TRUE(Has(twice.out, "identical content")) << twice.out.substr(0, 3000);
  auto steps = [](const std::string& out) {
    const size_t at = out.find("\"steps\": ");
    return at == std::string::npos ? std::string() : out.substr(at, 14);
  };
  EXPECT_EQ(steps(twice.out), steps(once.out));
}

}  // namespace
}  // namespace tfdiag::test
