// The same simulated job in every format: the timeline (TF1 JSON), the RunMetadata it comes from
// and the XSpace (one file, and a log directory with a file per task) give the same ops, devices,
// steps and findings; RunMetadata adds the bytes of each RecvTensor, so the hot PS comes with the
// bytes it served.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "analyzers/analysis.h"
#include "analyzers/task_stats.h"
#include "collectors/load_inputs.h"
#include "samples/simulator.h"
#include "tests/replay_util.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

using Findings = std::set<std::pair<std::string, std::string>>;  // (rule, subject)

Findings FindingsOf(const AnalysisResult& r) {
  Findings f;
  for (const Finding& x : r.findings) f.insert({x.rule_id, x.subject});
  return f;
}

// Ops by device; a GPU's streams as one "stream:all" device: TF1's GPU tracer writes one
// stream:all row where a log directory's XSpace has TF2's per-stream "Stream #N" lines.
std::map<std::string, int64_t> OpsPerDevice(const Capture& c) {
  std::map<std::string, int64_t> m;
  for (uint32_t d = 0; d < c.devices.size(); ++d) {
    std::string name(c.Str(c.devices[d].name));
    const size_t at = name.find("/stream:");
    if (at != std::string::npos) name = name.substr(0, at) + "/stream:all";
    m[name] += c.device_ops[d].second - c.device_ops[d].first;
  }
  return m;
}

std::map<std::string, int64_t> StepsPerTask(const Capture& c) {
  std::map<std::string, int64_t> m;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (!c.TaskSteps(t).empty()) m[std::string(c.TaskLabelOf(t))] += c.TaskSteps(t).size();
  }
  return m;
}

StatusOr<Capture> Load(const std::string& path) {
  LoadOptions lo;
  return LoadInputs({path}, lo);
}

// The rules an XSpace cannot feed: it records no op inputs and no tensor sizes (xplane.proto;
// docs/predictions.md, "Every format").
Findings WithoutInputsAndSizes(const Findings& f) {
  Findings out;
  for (const auto& x : f) {
    if (x.first != "dense-optimizer-on-embedding" && x.first != "gather-on-worker" &&
        x.first != "allreduce-candidate" && x.first != "slow-ps-host") {
      out.insert(x);
    }
  }
  return out;
}

TEST(ProfileFormats, EveryScenarioGivesTheSameFindingsInEveryFormat) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  TempDir dir;
  int with_findings = 0;
  for (const std::string& scenario : sim::ScenarioNames()) {
    sim::ScenarioParams p;
    p.scenario = scenario;
    p.steps = 5;
    std::map<std::string, std::string> paths = {{"tf1", dir.File(scenario + ".json")},
                                                {"runmetadata", dir.File(scenario + ".pb")},
                                                {"xplane", dir.File(scenario + ".xplane.pb")},
                                                {"logdir", dir.File(scenario + "-logs")}};
    for (const auto& [format, path] : paths) {
      p.format = format == "tf1"           ? sim::TraceFormat::kTf1
                 : format == "runmetadata" ? sim::TraceFormat::kRunMetadata
                                           : sim::TraceFormat::kXPlane;
      Status s = sim::WriteScenario(p, path);
      ASSERT_TRUE(s.ok()) << scenario << " " << format << ": " << s.message();
    }
    StatusOr<Capture> json = Load(paths["tf1"]);
    ASSERT_TRUE(json.ok()) << json.status().message();
    const AnalysisResult tf1 = Analyze(*json, *rules);
    const Findings want = FindingsOf(tf1);
    // ps-worker-ratio's count by measurement needs the transfers an XSpace without rendezvous
    // keys does not tie (MeasuredPsCounts): the band's count is found from every format, the
    // measured one from the timeline.
    const Findings measured = MeasuredPsCounts(tf1);
    with_findings += !want.empty();
    for (const char* format : {"runmetadata", "xplane", "logdir"}) {
      SCOPED_TRACE(scenario + " " + format);
      StatusOr<Capture> c = Load(paths[format]);
      ASSERT_TRUE(c.ok()) << c.status().message();
      EXPECT_EQ(c->ops.size(), json->ops.size());
      EXPECT_EQ(OpsPerDevice(*c), OpsPerDevice(*json));
      EXPECT_EQ(StepsPerTask(*c), StepsPerTask(*json));
      const Findings got = FindingsOf(Analyze(*c, *rules));
      if (std::string(format) == "runmetadata") {
        // RunMetadata keeps what the timeline drops: the RecvTensor sizes give the variables'
        // sizes, so allreduce-candidate (which needs them; show_memory in a timeline) may fire
        // on a dense job besides everything the timeline gives.
        Findings extra;
        for (const auto& f : got) {
          if (want.count(f) == 0) extra.insert(f);
        }
        for (const auto& f : want) EXPECT_EQ(got.count(f), 1u) << f.first << " " << f.second;
        const Findings allreduce = {{"allreduce-candidate", "job"}};
        EXPECT_TRUE(extra.empty() || extra == allreduce) << extra.size();
      } else {
        // An XSpace records no op inputs and no tensor sizes (xplane.proto), so the rules that
        // need them cannot fire from it: which variable an apply or a gather reads, and how
        // large the variables are. Everything else is the same.
        Findings expected = WithoutInputsAndSizes(want);
        for (const auto& f : measured) {
          if (got.count(f) == 0) expected.erase(f);
        }
        EXPECT_EQ(got, expected);
      }
    }
  }
  EXPECT_GE(with_findings, 5) << "the scenarios should show their bottlenecks";
}

// Issue 28: ProfilerHook's files, one per captured step minutes apart, of CPU+GPU worker tasks,
// as TF1 timelines, TF2 timelines and XSpaces: the same captures, steps, step medians (to the
// microsecond TF1 rounds to), ops and findings in every format.
TEST(ProfileFormats, ProfilerHookFilesGiveTheSameStepsAndFindingsInEveryFormat) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  TempDir dir;
  constexpr int kSteps = 4;
  for (const std::string& scenario : sim::ScenarioNames()) {
    sim::ScenarioParams p;
    p.scenario = scenario;
    p.steps = kSteps;
    p.worker_gpu = true;
    p.profiler_hook_minutes = 30;
    std::map<std::string, std::vector<std::string>> files;
    for (const char* format : {"tf1", "tf2", "xplane"}) {
      p.format = std::string(format) == "tf1"   ? sim::TraceFormat::kTf1
                 : std::string(format) == "tf2" ? sim::TraceFormat::kTf2
                                                : sim::TraceFormat::kXPlane;
      const std::string out = dir.File(scenario + "-" + format);
      Status s = sim::WriteScenario(p, out);
      ASSERT_TRUE(s.ok()) << scenario << " " << format << ": " << s.message();
      for (int k = 1; k <= kSteps; ++k) {
        files[format].push_back(p.format == sim::TraceFormat::kXPlane
                                    ? fmt::format("{}/step-{}.xplane.pb", out, k)
                                    : fmt::format("{}/timeline-{}.json", out, k));
      }
    }
    StatusOr<Capture> tf1 = LoadInputs(files["tf1"], LoadOptions{});
    ASSERT_TRUE(tf1.ok()) << tf1.status().message();
    EXPECT_EQ(tf1->captures.size(), static_cast<size_t>(kSteps)) << scenario;
    const AnalysisResult want = Analyze(*tf1, *rules);
    for (const char* format : {"tf2", "xplane"}) {
      SCOPED_TRACE(scenario + " " + format);
      StatusOr<Capture> c = LoadInputs(files[format], LoadOptions{});
      ASSERT_TRUE(c.ok()) << c.status().message();
      EXPECT_EQ(c->captures.size(), tf1->captures.size());
      EXPECT_EQ(c->ops.size(), tf1->ops.size());
      EXPECT_EQ(OpsPerDevice(*c), OpsPerDevice(*tf1));
      EXPECT_EQ(StepsPerTask(*c), StepsPerTask(*tf1));
      const AnalysisResult got = Analyze(*c, *rules);
      for (const TaskStats& t : want.stats.tasks) {
        const TaskStats* o = got.stats.Find(t.label);
        ASSERT_NE(o, nullptr) << t.label;
        EXPECT_NEAR(o->step_median_ns, t.step_median_ns, 2000) << t.label;
      }
      if (std::string(format) == "tf2") {
        EXPECT_EQ(FindingsOf(got), FindingsOf(want));
      } else {
        EXPECT_EQ(FindingsOf(got), WithoutInputsAndSizes(FindingsOf(want)));
      }
    }
  }
}

TEST(ProfileFormats, RunMetadataGivesTheBytesAHotPsServed) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 4;
  p.format = sim::TraceFormat::kRunMetadata;
  ASSERT_TRUE(sim::WriteScenario(p, dir.File("md.pb")).ok());
  StatusOr<Capture> c = Load(dir.File("md.pb"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  // Every cross-task edge from a PS is sized, and the RecvTensor labels' byte counts add up.
  int64_t served = 0;
  for (const EdgeRow& e : c->edges) {
    if (c->tasks[e.src_task].kind != JobKind::kPs) continue;
    EXPECT_GE(e.bytes, 0) << c->Str(e.tensor);
    served += std::max<int64_t>(0, e.bytes);
  }
  EXPECT_GT(served, 1 << 20);
  AnalysisResult r = Analyze(*c, *rules);
  bool evidence = false;
  for (const Finding& f : r.findings) {
    if (f.rule_id != "hot-ps") continue;
    for (const auto& ev : f.evidence) evidence |= ev.label == "bytes served" && ev.value > 0;
  }
  EXPECT_TRUE(evidence) << "hot-ps should report the bytes the hot PS served";
}

TEST(ProfileFormats, TextRunMetadataReadsLikeBinary) {
  TempDir dir;
  // A StepStats as str(run_metadata) prints it: two tasks, a RecvTensor of 2.5 MB.
  WriteFile(
      dir.File("md.pbtxt"),
      R"pb(step_stats {
             dev_stats {
               device: "/job:ps/replica:0/task:0/device:CPU:0"
               node_stats {
                 node_name: "w/read"
                 all_start_micros: 1600000000000100
                 all_end_rel_micros: 5
                 timeline_label: "w/read = Identity(w)"
                 thread_id: 1
                 memory_stats { temp_memory_size: 0 }
               }
             }
             dev_stats {
               device: "/job:worker/replica:0/task:0/device:CPU:0"
               node_stats {
                 node_name: "RecvTensor"
                 all_start_micros: 1600000000000110
                 all_end_rel_micros: 40
                 timeline_label: "[2.5MB] edge_7_w/read from /job:ps/replica:0/task:0/device:CPU:0 to "
                                 "/job:worker/replica:0/task:0/device:CPU:0"
               }
               node_stats {
                 node_name: "MatMul"
                 all_start_micros: 1600000000000160
                 all_end_rel_micros: 20
                 timeline_label: "MatMul = MatMul(x, w/read_S3)"
               }
             }
           }
           cost_graph { node { name: "x" } }
      )pb");
  StatusOr<Capture> c = Load(dir.File("md.pbtxt"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->ops.size(), 3u);
  ASSERT_EQ(c->tasks.size(), 2u);
  std::map<std::string, std::string> types;
  for (const OpRow& op : c->ops.Rows())
    types[std::string(c->Str(c->OpName(op)))] = std::string(c->Str(c->OpType(op)));
  EXPECT_EQ(types["w/read"], "Identity");
  EXPECT_EQ(types["RecvTensor"], "RecvTensor");
  EXPECT_EQ(types["MatMul"], "MatMul");
  // The RecvTensor edge and the _S3 input are one transfer of w/read from ps:0 to worker:0 with
  // 2.5 * 2^20 bytes.
  ASSERT_EQ(c->edges.size(), 1u) << c->edges.size();
  EXPECT_EQ(c->TaskLabelOf(c->edges[0].src_task), "ps:0");
  EXPECT_EQ(c->TaskLabelOf(c->edges[0].dst_task), "worker:0");
  EXPECT_EQ(c->Str(c->edges[0].tensor), "w/read");
  EXPECT_EQ(c->edges[0].bytes, 2621440);
}

}  // namespace
}  // namespace tfdiag::test
