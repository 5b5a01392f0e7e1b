// Issue 45 item 4: timelines a day or more apart that share no task (other than by a default
// name such as localhost:0, every single-process program's) are other runs, kept apart as tasks
// of their own so that a finding one of them has alone keeps its figures; a task of a real name
// (worker:0) in both is one job profiled days apart, kept together with a warning. Fixtures:
// TF1 timelines of a local trainer written here (one step per 70 ms, an IteratorGetNext wait
// of `input_us`), and the real ikhlestov_8f7e68b_CPU_timeline_02_step_0.json beside a copy of
// it moved 151 days later.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/task_stats.h"
#include "collectors/load_inputs.h"
#include "rules/rule_set.h"
#include "tests/test_util.h"

namespace tfdiag {
namespace {

using test::TempDir;

constexpr int64_t kT0 = 1490279999386725;      // us, the real ikhlestov timeline's first op
constexpr int64_t kDay = 86'400'000'000;       // us
constexpr int64_t kStepUs = 70'000;            // us per step
constexpr const char* kLocal = "localhost:0";  // the default task of a local session
constexpr const char* kRun2 = "localhost:0 (run 2)";

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A TF1 timeline of `steps` steps of task `job`:0 from t0_us, each 70 ms with an
// IteratorGetNext of input_us and a MatMul after it.
std::string Timeline(int64_t t0_us, int steps, int64_t input_us, const std::string& job) {
  std::string ev = fmt::format(
      R"({{"name":"process_name","ph":"M","pid":1,"args":{{"name":"/job:{}/replica:0/task:0/device:CPU:0 Compute"}}}})",
      job);
  auto op = [&](const char* name, const char* type, int64_t ts, int64_t dur) {
    ev += fmt::format(
        R"(,{{"ph":"X","cat":"Op","pid":1,"tid":0,"ts":{},"dur":{},"name":"{}","args":{{"name":"{}","op":"{}"}}}})",
        ts, dur, type, name, type);
  };
  for (int k = 0; k < steps; ++k) {
    const int64_t t = t0_us + k * kStepUs;
    op("_SOURCE", "NoOp", t, 10);
    op("IteratorGetNext", "IteratorGetNext", t + 20, input_us);
    op("dense/MatMul", "MatMul", t + 40 + input_us, kStepUs - 100 - input_us);
  }
  return R"({"traceEvents":[)" + ev + "]}";
}

struct Result {
  Capture capture;
  AnalysisResult analysis;
  std::string notes;
};

Result AnalyzeFiles(const std::vector<std::string>& paths) {
  LoadOptions o;
  StatusOr<Capture> c = LoadInputs(paths, o);
  EXPECT_TRUE(c.ok()) << c.status().message();
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  Result r{std::move(*c), {}, {}};
  r.analysis = Analyze(r.capture, *rules);
  for (const std::string& n : r.capture.stats.notes) r.notes += n + "\n";
  return r;
}

// The input-bound finding on `task`, if any.
const Finding* InputBound(const AnalysisResult& a, const std::string& task) {
  for (const Finding& f : a.findings) {
    if (f.rule_id == "input-bound" && f.Covers(task)) return &f;
  }
  return nullptr;
}

TEST(CaptureRuns, LocalTimelinesDaysApartKeepTheirOwnFindings) {
  TempDir dir;
  // Run 1: 4 steps, 50 of 70 ms waiting for input (HIGH alone); run 2, 151 days later: 40 steps
  // with 0.1 ms input. Merged into one task the input share would be under 10%.
  test::WriteFile(dir.File("a.json"), Timeline(kT0, 4, 50'000, "localhost"));
  test::WriteFile(dir.File("b.json"), Timeline(kT0 + 151 * kDay, 40, 100, "localhost"));
  const Result r = AnalyzeFiles({dir.File("a.json"), dir.File("b.json")});
  ASSERT_EQ(r.capture.tasks.size(), 2u) << r.notes;
  EXPECT_EQ(r.capture.TaskLabelOf(0), kLocal);
  EXPECT_EQ(r.capture.TaskLabelOf(1), kRun2);
  const TaskStats* one = r.analysis.stats.Find(kLocal);
  const TaskStats* two = r.analysis.stats.Find(kRun2);
  ASSERT_NE(one, nullptr);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(one->steps, 4);
  EXPECT_EQ(two->steps, 40);
  const Finding* f = InputBound(r.analysis, kLocal);
  ASSERT_NE(f, nullptr) << "run 1's input-bound finding must not fade into run 2's steps";
  EXPECT_GE(f->severity, Severity::kHigh) << f->summary;
  EXPECT_EQ(InputBound(r.analysis, kRun2), nullptr);
  EXPECT_TRUE(Has(r.notes, "warning: capture 2 starts 151 days after capture 1 and shares no task"))
      << r.notes;
  EXPECT_TRUE(Has(r.notes, kRun2)) << r.notes;
  EXPECT_TRUE(Has(r.notes, "2 captures, 151.0 days apart")) << r.notes;  // not 217440 min
  EXPECT_FALSE(Has(r.notes, "share(s) no task with the other captures")) << r.notes;
  // Given in the other order, the same split (runs are in time order).
  const Result back = AnalyzeFiles({dir.File("b.json"), dir.File("a.json")});
  ASSERT_EQ(back.capture.tasks.size(), 2u);
  ASSERT_NE(back.analysis.stats.Find(kRun2), nullptr);
  EXPECT_EQ(back.analysis.stats.Find(kRun2)->steps, 40);
}

TEST(CaptureRuns, ARealTaskNameInBothRunsKeepsThemTogetherWithAWarning) {
  TempDir dir;
  test::WriteFile(dir.File("a.json"), Timeline(kT0, 4, 50'000, "worker"));
  test::WriteFile(dir.File("b.json"), Timeline(kT0 + 151 * kDay, 40, 100, "worker"));
  const Result r = AnalyzeFiles({dir.File("a.json"), dir.File("b.json")});
  ASSERT_EQ(r.capture.tasks.size(), 1u);
  EXPECT_EQ(r.analysis.stats.Find("worker:0")->steps, 44);
  EXPECT_TRUE(Has(r.notes, "warning: capture 2 starts 151 days after capture 1: most likely"))
      << r.notes;
  // Less than a day apart (a ProfilerHook every N steps): one task, no warning.
  test::WriteFile(dir.File("c.json"), Timeline(kT0 + kDay / 2, 40, 100, "localhost"));
  test::WriteFile(dir.File("d.json"), Timeline(kT0, 4, 50'000, "localhost"));
  const Result near = AnalyzeFiles({dir.File("c.json"), dir.File("d.json")});
  EXPECT_EQ(near.capture.tasks.size(), 1u);
  EXPECT_FALSE(Has(near.notes, "days after")) << near.notes;
}

TEST(CaptureRuns, RealTimelineAndItsCopy151DaysLaterAreTwoRuns) {
  const std::string real =
      std::string(TFDIAG_SHARED_DIR) + "/traces/ikhlestov_8f7e68b_CPU_timeline_02_step_0.json";
  const std::string text = test::ReadFile(real);
  if (text.empty()) GTEST_SKIP() << "no " << real;
  // The same run moved 151 days on: every "ts" (whole us) plus 151 days.
  std::string later;
  const std::regex ts(R"("ts": *([0-9]+))");
  auto it = std::sregex_iterator(text.begin(), text.end(), ts);
  size_t at = 0;
  for (; it != std::sregex_iterator(); ++it) {
    later += text.substr(at, it->position() - at);
    later += fmt::format("\"ts\": {}", std::stoll((*it)[1].str()) + 151 * kDay);
    at = it->position() + it->length();
  }
  later += text.substr(at);
  TempDir dir;
  test::WriteFile(dir.File("later.json"), later);
  const Result alone = AnalyzeFiles({real});
  const Result both = AnalyzeFiles({real, dir.File("later.json")});
  ASSERT_EQ(alone.capture.tasks.size(), 1u);
  ASSERT_EQ(both.capture.tasks.size(), 2u) << both.notes;
  const TaskStats* a = alone.analysis.stats.Find(kLocal);
  ASSERT_NE(a, nullptr);
  for (const char* task : {kLocal, kRun2}) {
    const TaskStats* t = both.analysis.stats.Find(task);
    ASSERT_NE(t, nullptr) << task;
    EXPECT_EQ(t->steps, a->steps) << task;
    EXPECT_EQ(t->step_median_ns, a->step_median_ns) << task;
    EXPECT_EQ(t->ops, a->ops) << task;
  }
}

}  // namespace
}  // namespace tfdiag
