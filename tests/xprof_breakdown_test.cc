// Issue 45: XProf's step-time breakdown of TF2 captures (collectors/xplane/step_breakdown.h),
// checked against the figures XProf itself wrote beside each real capture (input_pipeline.pb,
// read here by the independent wire-format reader tests/wire_reader.h, not the project's
// generated classes), and the rules judged on it: input-bound on TF 2.3+ captures (the wait on the
// tf.data iterator's own thread), host-bound, launch-bound.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/step_breakdown.h"
#include "collectors/load_inputs.h"
#include "collectors/xplane/step_breakdown.h"
#include "core/capture_builder.h"
#include "core/device_name.h"
#include "rules/rule_set.h"
#include "tests/test_util.h"
#include "tests/wire_reader.h"

namespace tfdiag::test {
namespace {

#define REQUIRE_SHARED() \
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository"

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The real captures that carry XProf's tool files: (directory, profile run, host).
struct RealRun {
  const char* dir;
  const char* run;
  const char* host;
};
constexpr RealRun kRuns[] = {
    {"mholmeslinder_3baf8a2_scalars3_20201221-164239", "2020_12_21_16_42_56", "cfb73342568d"},
    {"mholmeslinder_9a8988e_scalars8_logdir", "2020_12_22_03_42_42", "d1792a5a2842"},
    {"mholmeslinder_9a8988e_scalars8_logdir", "2020_12_22_03_43_06", "d1792a5a2842"},
    {"mholmeslinder_9a8988e_scalars8_logdir", "2020_12_22_03_43_39", "d1792a5a2842"},
};

// XProf's per-step figures in an input_pipeline.pb, summed over its steps: field -> ms, the
// doubles of each PerGenericStepDetails (InputPipelineAnalysisResult.step_details = field 4, an
// Any whose value = field 2). Field numbers of input_pipeline.proto: step_time_ms 2,
// unknown_time_ms 3, output_ms 5, device_compute_ms 6, device_to_device_ms 7, host_compute_ms 8,
// host_prepare_ms 9, host_compile_ms 10, host_wait_input_ms 11, host_to_device_ms 12,
// device_collectives_ms 13.
std::map<int, double> XprofSumsMs(const std::string& path, int* steps) {
  std::map<int, double> out;
  *steps = 0;
  const std::string pb = ReadFile(path);
  EXPECT_TRUE(WalkFields(pb, [&](uint32_t f, int wt, uint64_t, std::string_view any) {
    if (f != 4 || wt != 2) return;
    std::string_view value;
    WalkFields(any, [&](uint32_t af, int, uint64_t, std::string_view v) {
      if (af == 2) value = v;
    });
    ++*steps;
    size_t i = 0;
    while (i < value.size()) {
      const uint8_t tag = static_cast<uint8_t>(value[i++]);
      const int field = tag >> 3, w = tag & 7;
      if (w == 1 && i + 8 <= value.size()) {
        double d;
        std::memcpy(&d, value.data() + i, 8);
        out[field] += d;
        i += 8;
      } else if (w == 0) {
        while (i < value.size() && (static_cast<uint8_t>(value[i++]) & 0x80)) {
        }
      } else if (w == 2 && i < value.size()) {
        i += 1 + static_cast<uint8_t>(value[i]);  // step_name: short
      } else {
        break;
      }
    }
  }));
  return out;
}

Capture LoadRun(const RealRun& r) {
  LoadOptions o;
  o.run = r.run;
  StatusOr<Capture> c = LoadInputs({SharedTrace(r.dir)}, o);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? std::move(*c) : Capture{};
}

TEST(XprofBreakdown, PriorityDecidesOverlapsAndUncoveredTimeIsOther) {
  // A 100 ns step: host compute 0-60, a kernel 20-40 (device compute wins there), an input wait
  // 50-70 (wins over host compute, loses to nothing), nothing 70-90, a launch 90-120 (clipped).
  std::vector<XprofEvent> ev = {
      {0, 60, XprofEventType::kHostCompute, XprofEventType::kHostCompute},
      {20, 40, XprofEventType::kDeviceCompute, XprofEventType::kDeviceCompute},
      {50, 70, XprofEventType::kHostWaitInput, XprofEventType::kHostWaitInput},
      {90, 120, XprofEventType::kHostPrepare, XprofEventType::kHostPrepare},
  };
  const StepBreakdownRow r = BreakdownOfStep(0, 100, &ev);
  EXPECT_EQ(r.step_ns, 100);
  EXPECT_EQ(r.at(StepCategory::kHostCompute), 30);  // 0-20 and 40-50; 50-60 is input
  EXPECT_EQ(r.at(StepCategory::kDeviceCompute), 20);
  EXPECT_EQ(r.at(StepCategory::kInput), 20);
  EXPECT_EQ(r.at(StepCategory::kKernelLaunch), 10);
  EXPECT_EQ(r.at(StepCategory::kOther), 20);
  TimeNs sum = 0;
  for (TimeNs v : r.ns) sum += v;
  EXPECT_EQ(sum, r.step_ns);
}

TEST(XprofBreakdown, EventsAreTypedByXprofsNames) {
  // The tf.data iterator's own thread (TF 2.3+) and the step's op both wait for input.
  EXPECT_EQ(ClassifyXprofHostEvent("IteratorGetNextOp::DoCompute", true, false, false),
            XprofEventType::kHostWaitInput);
  EXPECT_EQ(ClassifyXprofHostEvent("IteratorGetNext:IteratorGetNext", true, false, false),
            XprofEventType::kHostWaitInput);
  // A launch (correlation_id) with a device is kernel launch; without one it is host compute.
  EXPECT_EQ(ClassifyXprofHostEvent("cuLaunchKernel", true, true, false),
            XprofEventType::kHostPrepare);
  EXPECT_EQ(ClassifyXprofHostEvent("cuLaunchKernel", false, true, false),
            XprofEventType::kHostCompute);
  // Step markers and eager wrappers are no time of their own.
  EXPECT_EQ(ClassifyXprofHostEvent("train_function", true, false, false),
            XprofEventType::kNotCounted);
  EXPECT_EQ(ClassifyXprofHostEvent("FunctionRun", true, false, false), XprofEventType::kNotCounted);
  EXPECT_EQ(ClassifyXprofHostEvent("anything", true, false, true), XprofEventType::kNotCounted);
  EXPECT_EQ(ClassifyXprofDeviceEvent("MemcpyHtoD"), XprofEventType::kHostToDevice);
  EXPECT_EQ(ClassifyXprofDeviceEvent("MemcpyDtoH"), XprofEventType::kDeviceToHost);
  EXPECT_EQ(ClassifyXprofDeviceEvent("ncclAllReduceRingLLKernel"),
            XprofEventType::kDeviceCollectives);
  // CUPTI's "MemcpyH2D" matches none of XProf's memcpy prefixes: XProf counts it as compute.
  EXPECT_EQ(ClassifyXprofDeviceEvent("MemcpyH2D"), XprofEventType::kDeviceCompute);
}

// Every real capture with XProf's tool files: the same steps, each category within 5 points of
// XProf's own share of the step time, and a note that says they agree.
TEST(XprofBreakdown, WithinFivePointsOfXprofOnEveryRealCaptureWithToolFiles) {
  REQUIRE_SHARED();
  for (const RealRun& run : kRuns) {
    SCOPED_TRACE(run.run);
    const Capture c = LoadRun(run);
    ASSERT_EQ(c.tasks.size(), 1u);
    const BreakdownTotals b = BreakdownOfTask(c, 0);
    int steps = 0;
    const std::map<int, double> x = XprofSumsMs(SharedTrace(run.dir) + "/train/plugins/profile/" +
                                                    run.run + "/" + run.host + ".input_pipeline.pb",
                                                &steps);
    ASSERT_EQ(b.steps, steps);
    ASSERT_GT(x.at(2), 0);
    EXPECT_NEAR(b.step_ns / 1e6, x.at(2), 0.01);
    auto xpct = [&](std::initializer_list<int> fields) {
      double ms = 0;
      for (int f : fields) ms += x.count(f) ? x.at(f) : 0;
      return 100.0 * ms / x.at(2);
    };
    EXPECT_NEAR(b.Pct(StepCategory::kInput), xpct({11}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kHostToDevice), xpct({12}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kKernelLaunch), xpct({9}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kHostCompute), xpct({8}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kDeviceCompute), xpct({6}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kDeviceToDevice), xpct({7}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kDeviceCollectives), xpct({13}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kOutput), xpct({5}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kCompile), xpct({10}), 5);
    EXPECT_NEAR(b.Pct(StepCategory::kOther), xpct({3}), 5);
    ASSERT_EQ(c.stats.xprof_checks.size(), 1u);
    EXPECT_LE(c.stats.xprof_checks[0].max_diff_pct, 5);
    std::string notes;
    for (const std::string& n : c.stats.notes) notes += n + "\n";
    EXPECT_TRUE(Has(notes, "agrees with XProf's own")) << notes;
  }
}

// The trace viewer's JSON of each real run (<host>.trace.json.gz, read alone) gives the same
// breakdown as XProf's tool file within 5 points per category, checks itself against that file,
// and gets input-bound exactly when XProf's input share (input + host-to-device, XProf's
// input_percent) is 5% or more: as the XSpace of the run does.
TEST(XprofBreakdown, TraceJsonAloneGivesXprofsBreakdownAndVerdict) {
  REQUIRE_SHARED();
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  for (const RealRun& run : kRuns) {
    SCOPED_TRACE(run.run);
    const std::string stem =
        SharedTrace(run.dir) + "/train/plugins/profile/" + run.run + "/" + run.host;
    StatusOr<Capture> c = LoadInputs({stem + ".trace.json.gz"}, LoadOptions{});
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_EQ(c->tasks.size(), 1u);
    const BreakdownTotals b = BreakdownOfTask(*c, 0);
    int steps = 0;
    const std::map<int, double> x = XprofSumsMs(stem + ".input_pipeline.pb", &steps);
    ASSERT_EQ(b.steps, steps);
    ASSERT_GT(x.at(2), 0);
    auto xpct = [&](std::initializer_list<int> fields) {
      double ms = 0;
      for (int f : fields) ms += x.count(f) ? x.at(f) : 0;
      return 100.0 * ms / x.at(2);
    };
    EXPECT_NEAR(b.step_ns / 1e6, x.at(2), 0.01);
    const std::pair<StepCategory, int> pairs[] = {{StepCategory::kInput, 11},
                                                  {StepCategory::kHostToDevice, 12},
                                                  {StepCategory::kKernelLaunch, 9},
                                                  {StepCategory::kHostCompute, 8},
                                                  {StepCategory::kDeviceCompute, 6},
                                                  {StepCategory::kDeviceToDevice, 7},
                                                  {StepCategory::kDeviceCollectives, 13},
                                                  {StepCategory::kOutput, 5},
                                                  {StepCategory::kCompile, 10},
                                                  {StepCategory::kOther, 3}};
    for (const auto& [cat, field] : pairs) {
      EXPECT_NEAR(b.Pct(cat), xpct({field}), 5) << StepCategoryKey(cat);
    }
    ASSERT_EQ(c->stats.xprof_checks.size(), 1u);
    EXPECT_LE(c->stats.xprof_checks[0].max_diff_pct, 5);
    const AnalysisResult a = Analyze(*c, *rules);
    bool input_bound = false;
    for (const Finding& f : a.findings) input_bound |= f.rule_id == "input-bound";
    EXPECT_EQ(input_bound, xpct({11, 12}) >= 5) << xpct({11, 12}) << "% input in XProf's figures";
  }
}

// A TF 2.0-2.1 profiler Trace (the real tf-encrypted local.trace) has no step groups: no
// breakdown, and a note says why instead of leaving it blank.
TEST(XprofBreakdown, ATf20TraceSaysItHasNoBreakdown) {
  REQUIRE_SHARED();
  std::vector<std::string> notes;
  LoadOptions o;
  o.notes = &notes;
  StatusOr<Capture> c = LoadInputs({SharedTrace("tfe_b3b9f35_local.trace")}, o);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->step_breakdowns.empty());
  std::string all;
  for (const std::string& n : c->stats.notes) all += n + "\n";
  for (const std::string& n : notes) all += n + "\n";
  EXPECT_TRUE(Has(all,
                  "XProf's step-time breakdown (input, kernel launch, device compute, ...) "
                  "cannot be given"))
      << all;
}

// XProf calls the scalars3 run HIGHLY input-bound (62.3%), though its IteratorGetNext op lasts
// microseconds; the scalars8 runs wait under 1% for input and spend 53-67% in "All others" with
// the GPU idle: host-bound, not input-bound.
TEST(XprofBreakdown, RulesFollowXprofsVerdictsOnRealCaptures) {
  REQUIRE_SHARED();
  RunResult r =
      RunTfdiag(std::string("analyze -f json --run all '") + SharedTrace(kRuns[0].dir) + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "\"rule\": \"input-bound\"")) << r.out.substr(0, 4000);
  EXPECT_TRUE(Has(r.out, "\"step_breakdown\": {")) << r.out.substr(0, 4000);
  EXPECT_TRUE(Has(r.out, "\"input_ns\": 2339")) << r.out.substr(0, 4000);
  // The run-selection note printed on stderr is in the document's notes too.
  EXPECT_TRUE(Has(r.err, "read every profile run")) << r.err;
  const size_t notes = r.out.find("\"notes\": [");
  ASSERT_NE(notes, std::string::npos);
  EXPECT_NE(r.out.find("read every profile run", notes), std::string::npos) << r.out;
  RunResult t = RunTfdiag(std::string("analyze --run all '") + SharedTrace(kRuns[0].dir) + "'");
  EXPECT_TRUE(Has(t.out, "step time of localhost:0 (XProf's breakdown, 1 step")) << t.out;
  EXPECT_TRUE(Has(t.out, "input 62.")) << t.out;

  RunResult s =
      RunTfdiag(std::string("analyze -f json --run all '") + SharedTrace(kRuns[1].dir) + "'");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_FALSE(Has(s.out, "\"rule\": \"input-bound\"")) << s.out.substr(0, 4000);
  EXPECT_TRUE(Has(s.out, "\"rule\": \"host-bound\"")) << s.out.substr(0, 4000);
  EXPECT_FALSE(Has(s.out, "\"rule\": \"launch-bound\"")) << s.out.substr(0, 4000);
  // Three sessions, three captures, each with its own breakdown.
  EXPECT_TRUE(Has(s.out, "\"index\": 3")) << s.out.substr(0, 4000);
}

// A worker whose first step alone waited for input (a warm-up: 80% of it) and later steps 1%: the
// input-bound finding names the warm-up and is one severity lower than its share alone gives.
std::optional<Finding> WarmupFinding(TimeNs first_input_ns) {
  CaptureBuilder b;
  const uint32_t task = b.AddTask("worker", 0, 0);
  StatusOr<DeviceName> gpu = ParseDeviceName("/job:worker/replica:0/task:0/device:GPU:0");
  EXPECT_TRUE(gpu.ok());
  const uint32_t dev = b.AddDevice(*gpu);
  const TimeNs step = 100'000'000;
  for (int i = 0; i < 4; ++i) {
    const TimeNs start = 1'600'000'000'000'000'000 + i * step;
    b.AddOp(start + 1000, step / 2, dev, 0, b.Intern("model/conv"), b.Intern("Conv2D"), nullptr, 0);
    b.AddStep(task, start, start + step);
    StepBreakdownRow row;
    row.task = task;
    row.start = start;
    row.step_ns = step;
    row.at(StepCategory::kInput) = i == 0 ? first_input_ns : step / 100;
    row.at(StepCategory::kDeviceCompute) = step / 2;
    row.at(StepCategory::kOther) = step - row.at(StepCategory::kInput) - step / 2;
    b.AddStepBreakdown(row);
  }
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  AnalysisResult r = Analyze(b.Finish(), *rules);
  for (const Finding& f : r.findings) {
    if (f.rule_id == "input-bound") return f;
  }
  return std::nullopt;
}

TEST(XprofBreakdown, AWarmupStepIsNamedAndLowersTheSeverity) {
  // 80 + 3 x 1 ms of 400 ms: 20.75% input, "high" by share; without the first step 1%.
  std::optional<Finding> f = WarmupFinding(80'000'000);
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(Has(f->summary, "the first step, a warm-up")) << f->summary;
  EXPECT_EQ(f->severity, Severity::kMedium) << f->summary;
  // The same steps with no warm-up: no input-bound finding (4 x 1% < 5%).
  EXPECT_FALSE(WarmupFinding(1'000'000).has_value());
}

// A GPU worker whose steps are `launch_pct` kernel launch and `host_pct` untraced host time
// ("All others"), the rest device compute: the findings of launch-bound and host-bound, by rule.
std::map<std::string, Finding> BoundFindings(double launch_pct, double host_pct, bool gpu) {
  CaptureBuilder b;
  const uint32_t task = b.AddTask("worker", 0, 0);
  StatusOr<DeviceName> dn = ParseDeviceName(gpu ? "/job:worker/replica:0/task:0/device:GPU:0"
                                                : "/job:worker/replica:0/task:0/device:CPU:0");
  EXPECT_TRUE(dn.ok());
  const uint32_t dev = b.AddDevice(*dn);
  const TimeNs step = 10'000'000;
  for (int i = 0; i < 3; ++i) {
    const TimeNs start = 1'600'000'000'000'000'000 + i * step;
    b.AddOp(start, step / 10, dev, 0, b.Intern("model/matmul"), b.Intern("MatMul"), nullptr, 0);
    b.AddStep(task, start, start + step);
    StepBreakdownRow row;
    row.task = task;
    row.start = start;
    row.step_ns = step;
    row.at(StepCategory::kKernelLaunch) = static_cast<TimeNs>(step * launch_pct / 100);
    row.at(StepCategory::kOther) = static_cast<TimeNs>(step * host_pct / 100);
    row.at(StepCategory::kDeviceCompute) =
        step - row.at(StepCategory::kKernelLaunch) - row.at(StepCategory::kOther);
    b.AddStepBreakdown(row);
  }
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  AnalysisResult r = Analyze(b.Finish(), *rules);
  std::map<std::string, Finding> out;
  for (const Finding& f : r.findings) out[f.rule_id] = f;
  return out;
}

TEST(XprofBreakdown, LaunchAndHostBoundRulesFollowTheirShares) {
  // 60% kernel launch: launch-bound, high (>= 50%); 10% host: no host-bound.
  std::map<std::string, Finding> f = BoundFindings(60, 10, true);
  ASSERT_EQ(f.count("launch-bound"), 1u);
  EXPECT_EQ(f["launch-bound"].severity, Severity::kHigh) << f["launch-bound"].summary;
  EXPECT_TRUE(Has(f["launch-bound"].summary, "60.0% of its step time in kernel launch"))
      << f["launch-bound"].summary;
  EXPECT_EQ(f.count("host-bound"), 0u);
  // 55% untraced host time: host-bound (moderate), no launch-bound at 2%.
  f = BoundFindings(2, 55, true);
  EXPECT_EQ(f.count("launch-bound"), 0u);
  ASSERT_EQ(f.count("host-bound"), 1u);
  EXPECT_EQ(f["host-bound"].severity, Severity::kMedium) << f["host-bound"].summary;
  // Below both thresholds: neither; a CPU-only task (no GPU to idle): neither.
  f = BoundFindings(10, 40, true);
  EXPECT_EQ(f.count("launch-bound") + f.count("host-bound"), 0u);
  f = BoundFindings(60, 30, false);
  EXPECT_EQ(f.count("launch-bound") + f.count("host-bound"), 0u);
}

// Timelines 151 days apart (two runs that share the task name localhost:0) are separate captures,
// and a warning says they are most likely two runs.
TEST(XprofBreakdown, CapturesDaysApartAreWarnedAsOtherRuns) {
  CaptureBuilder b;
  StatusOr<DeviceName> dn = ParseDeviceName("/job:localhost/replica:0/task:0/device:CPU:0");
  ASSERT_TRUE(dn.ok());
  const uint32_t dev = b.AddDevice(*dn);
  const TimeNs t0 = 1'600'000'000'000'000'000, day = 86'400'000'000'000;
  b.AddOp(t0, 1'000'000, dev, 0, b.Intern("a"), b.Intern("MatMul"), nullptr, 0);
  b.EndInput("run1.json");
  b.AddOp(t0 + 151 * day, 1'000'000, dev, 0, b.Intern("a"), b.Intern("MatMul"), nullptr, 0);
  b.EndInput("run2.json");
  const Capture c = b.Finish();
  ASSERT_EQ(c.captures.size(), 2u);
  std::string notes;
  for (const std::string& n : c.stats.notes) notes += n + "\n";
  EXPECT_TRUE(Has(notes, "warning: capture 2 starts 151 days after capture 1")) << notes;
}

}  // namespace
}  // namespace tfdiag::test
