// Issue 14: right answers on inputs unlike tfdiag's own samples. Each test builds a timeline of a
// shape seen in public traces (parallel tf.data lanes, variables seen only through their uses,
// Horovod, workers acting as PS, GPU stream:all, flows split across files) and checks the figure
// or the finding that was wrong or missing before.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/grouping.h"
#include "analyzers/input_bound.h"
#include "analyzers/live_stats.h"
#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag {
namespace {

using test::MetaEvent;
using test::ObjectForm;
using test::OpEvent;
using test::TempDir;

constexpr const char* kWorker = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr const char* kPs = "/job:ps/replica:0/task:0/device:CPU:0";

AnalysisResult AnalyzeText(const std::string& json, Capture* out_capture) {
  TempDir dir;
  test::WriteFile(dir.File("t.json"), json);
  *out_capture = test::LoadOrDie({dir.File("t.json")});
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  return Analyze(*out_capture, *rules);
}

const Finding* FindRule(const AnalysisResult& r, const std::string& id) {
  for (const Finding& f : r.findings) {
    if (f.rule_id == id) return &f;
  }
  return nullptr;
}

double EvidenceOf(const Finding& f, const std::string& prefix) {
  for (const Figure& e : f.evidence) {
    if (e.label.rfind(prefix, 0) == 0) return e.value;
  }
  return -1;
}

// One worker step of 5.5 s (a _SOURCE then compute) in which a tf.data producer runs
// `lanes` IteratorGetNext ops of 4.7 s at once, starting 0.3 s into the step.
std::string ParallelInputStep(int lanes, int steps) {
  std::vector<std::string> ev = {MetaEvent(1, kWorker)};
  const int64_t step_us = 5500000;
  for (int s = 0; s < steps; ++s) {
    const int64_t t0 = 1000000 + s * step_us;
    ev.push_back(OpEvent(1, 0, t0, 10, "_SOURCE", "NoOp"));
    for (int l = 0; l < lanes; ++l) {
      ev.push_back(OpEvent(1, 1 + l, t0 + 300000, 4700000, "IteratorGetNext", "IteratorGetNext"));
    }
    ev.push_back(OpEvent(1, 0, t0 + 5000000, step_us - 5000000, "dense/MatMul", "MatMul"));
  }
  return ObjectForm(ev);
}

TEST(InputWait, ParallelInputOpsCountTheirUnionNotTheirSum) {
  Capture c;
  AnalysisResult r = AnalyzeText(ParallelInputStep(4, 2), &c);
  const Finding* f = FindRule(r, "input-bound");
  ASSERT_NE(f, nullptr);
  const double pct = EvidenceOf(*f, "input wait share of step time");
  // 4.7 s of each 5.5 s step: 85.5%; the sum (18.8 s) would be 342%.
  EXPECT_NEAR(pct, 100.0 * 4.7 / 5.5, 0.5);
  EXPECT_LE(pct, 100.0);
  EXPECT_EQ(EvidenceOf(*f, "input ops running at once"), 4);
  EXPECT_NE(f->summary.find("up to 4 at once"), std::string::npos) << f->summary;
  const InputWait w = InputWaitOfTask(c, *r.stats.Find("worker:0"));
  EXPECT_EQ(w.count, 8);
  EXPECT_EQ(w.union_ns, 2 * 4700000000LL);
  EXPECT_EQ(w.sum_ns, 8 * 4700000000LL);
}

TEST(InputWait, SequentialInputOpsStillSum) {
  // One lane: the union is the sum, and nothing is said about parallel ops.
  Capture c;
  AnalysisResult r = AnalyzeText(ParallelInputStep(1, 3), &c);
  const Finding* f = FindRule(r, "input-bound");
  ASSERT_NE(f, nullptr);
  EXPECT_NEAR(EvidenceOf(*f, "input wait share of step time"), 100.0 * 4.7 / 5.5, 0.5);
  EXPECT_EQ(EvidenceOf(*f, "input ops running at once"), -1);
  const InputWait w = InputWaitOfTask(c, *r.stats.Find("worker:0"));
  EXPECT_EQ(w.union_ns, w.sum_ns);
  EXPECT_EQ(w.max_parallel, 1);
}

// Two PS whose ops name the variable only as an input: ps:0 gathers from and applies Adam to
// "emb/embedding_weights" (a resource variable whose VarHandleOp ran before the traced steps),
// ps:1 reads a small dense variable. The PS table must list the variable, and hot-ps name it.
std::string VariablesOnlyThroughUses() {
  const char* ps1 = "/job:ps/replica:0/task:1/device:CPU:0";
  std::vector<std::string> ev = {MetaEvent(1, kWorker), MetaEvent(2, kPs), MetaEvent(3, ps1)};
  for (int s = 0; s < 4; ++s) {
    const int64_t t0 = 1000000 + s * 100000;
    ev.push_back(OpEvent(1, 0, t0, 10, "_SOURCE", "NoOp"));
    ev.push_back(OpEvent(1, 0, t0 + 10, 60000, "dense/MatMul", "MatMul"));
    ev.push_back(OpEvent(2, 0, t0 + 100, 30000, "emb/embedding_lookup", "ResourceGather",
                         {"emb/embedding_weights", "ids_S3"}));
    ev.push_back(OpEvent(2, 0, t0 + 40000, 40000, "Adam/update_emb/ResourceApplyAdam",
                         "ResourceApplyAdam",
                         {"emb/embedding_weights", "emb/embedding_weights/Adam",
                          "emb/embedding_weights/Adam_1", "grad_S5"}));
    ev.push_back(OpEvent(3, 0, t0 + 100, 2000, "dense/kernel/Read/ReadVariableOp", "ReadVariableOp",
                         {"dense/kernel"}));
    // A value received from another task is not a variable of this PS.
    ev.push_back(
        OpEvent(3, 0, t0 + 3000, 1000, "Assign_remote", "AssignVariableOp", {"other/var_S7", "x"}));
  }
  return ObjectForm(ev);
}

TEST(Variables, KnownOnlyThroughTheirUsesAreListedAndNamedByHotPs) {
  Capture c;
  AnalysisResult r = AnalyzeText(VariablesOnlyThroughUses(), &c);
  const TaskStats* ps0 = nullptr;
  const TaskStats* ps1 = nullptr;
  for (const TaskStats& t : r.stats.tasks) {
    if (t.label == "ps:0") ps0 = &t;
    if (t.label == "ps:1") ps1 = &t;
  }
  ASSERT_NE(ps0, nullptr);
  ASSERT_NE(ps1, nullptr);
  ASSERT_EQ(ps0->variables.size(), 1u);  // the Adam slots count for their primary
  EXPECT_EQ(ps0->variables[0].name, "emb/embedding_weights");
  EXPECT_EQ(ps0->variables[0].ops, 8);
  ASSERT_EQ(ps1->variables.size(), 1u);
  EXPECT_EQ(ps1->variables[0].name, "dense/kernel");
  const Finding* hot = FindRule(r, "hot-ps");
  ASSERT_NE(hot, nullptr);
  EXPECT_EQ(hot->subject, "ps:0");
  ASSERT_FALSE(hot->ops.empty());
  EXPECT_EQ(hot->ops[0], "emb/embedding_weights");
  EXPECT_NE(hot->summary.find("emb/embedding_weights"), std::string::npos) << hot->summary;
  EXPECT_NE(hot->fix.find("partition emb/embedding_weights"), std::string::npos) << hot->fix;
}

// Two PS processes on a node of 2 CPUs (no CFS limit), sampled every second for 6 s.
AnalysisResult TwoPsUsing(double hot_cpus, double other_cpus) {
  CaptureBuilder b;
  const double used[2] = {hot_cpus, other_cpus};
  for (int k = 0; k < 2; ++k) {
    ProcessRow p;
    p.task = b.AddTask("ps", 0, k);
    p.pid = 100 + k;
    p.host_cpus = 2;
    const uint32_t proc = b.AddProcess(p);
    for (int i = 0; i < 6; ++i) {
      ProcessSampleRow s;
      s.ts = 1000000000LL * (i + 1);
      s.process = proc;
      s.threads = 4;
      s.cpu_ns = static_cast<int64_t>(used[k] * i * 1e9);
      b.AddProcessSample(s);
    }
  }
  b.meta().window_start = 1000000000LL;
  b.meta().window_end = 6000000000LL;
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  return Analyze(b.Finish(), *rules);
}

TEST(PsCpuImbalance, SeverityFollowsTheCpuUsedAgainstWhatThePsMayUse) {
  // 0.16 of 2 CPUs: 8x the other PS, but nothing is saturated: low, not high.
  AnalysisResult idle = TwoPsUsing(0.16, 0.02);
  const Finding* f = FindRule(idle, "ps-cpu-imbalance");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kLow);
  EXPECT_NEAR(EvidenceOf(*f, "CPU used against the CPUs it may use"), 8, 0.5);
  // 1.0 of 2: medium. 1.8 of 2: the rule's own severity (high).
  f = FindRule(TwoPsUsing(1.0, 0.1), "ps-cpu-imbalance");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kMedium);
  AnalysisResult busy = TwoPsUsing(1.8, 0.1);
  f = FindRule(busy, "ps-cpu-imbalance");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kHigh);
  EXPECT_NE(f->summary.find("90% of the 2 it may use"), std::string::npos) << f->summary;
}

// 32 workers with the same input wait: one input-bound finding covering all 32, not 32 findings.
std::string ManyInputBoundWorkers(int workers) {
  std::vector<std::string> ev;
  for (int w = 0; w < workers; ++w) {
    ev.push_back(MetaEvent(w + 1, fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", w)));
    for (int s = 0; s < 2; ++s) {
      const int64_t t0 = 1000000 + s * 100000;
      ev.push_back(OpEvent(w + 1, 0, t0, 10, "_SOURCE", "NoOp"));
      ev.push_back(
          OpEvent(w + 1, 1, t0 + 10, 29000 + 30 * w, "IteratorGetNext", "IteratorGetNext"));
      ev.push_back(OpEvent(w + 1, 0, t0 + 30000 + 30 * w, 70000 - 30 * w - 10, "MatMul", "MatMul"));
    }
  }
  return ObjectForm(ev);
}

TEST(Grouping, OneFindingPerRuleListsEveryObject) {
  Capture c;
  AnalysisResult r = AnalyzeText(ManyInputBoundWorkers(32), &c);
  int input_bound = 0;
  const Finding* f = nullptr;
  for (const Finding& x : r.findings) {
    if (x.rule_id == "input-bound") ++input_bound, f = &x;
  }
  ASSERT_EQ(input_bound, 1);
  ASSERT_EQ(f->objects.size(), 32u);
  // Objects in natural order: worker:2 before worker:10.
  EXPECT_EQ(f->objects[2].subject, "worker:2");
  EXPECT_EQ(f->objects[10].subject, "worker:10");
  EXPECT_EQ(f->subject, "worker:0-31");
  EXPECT_TRUE(f->Covers("worker:17"));
  EXPECT_NE(f->summary.find("32 of 32 worker tasks"), std::string::npos) << f->summary;
  // Each object keeps its own figures; the group gives their range.
  const double lo = EvidenceOf(*f, "input wait share of step time (lowest)");
  const double hi = EvidenceOf(*f, "input wait share of step time (highest)");
  EXPECT_NEAR(lo, 29.0, 0.1);
  EXPECT_NEAR(hi, 29.0 + 0.03 * 31, 0.1);
  EXPECT_LT(lo, hi);
}

TEST(Grouping, TextShowsATruncatedObjectTableAndJsonKeepsAll) {
  TempDir dir;
  test::WriteFile(dir.File("t.json"), ManyInputBoundWorkers(32));
  test::RunResult text = test::RunTfdiag("analyze --color never " + dir.File("t.json"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  size_t blocks = 0;
  for (size_t p = text.out.find("] input-bound"); p != std::string::npos;
       p = text.out.find("] input-bound", p + 1)) {
    ++blocks;
  }
  EXPECT_EQ(blocks, 1u) << text.out;
  EXPECT_NE(text.out.find("12 of 32 shown; -f json for all"), std::string::npos) << text.out;
  test::RunResult json = test::RunTfdiag("analyze -f json " + dir.File("t.json"));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  // Compact or pretty: count the objects' subjects either way.
  size_t objects = 0;
  for (const char* key : {"\"subject\":\"worker:", "\"subject\": \"worker:"}) {
    for (size_t p = json.out.find(key); p != std::string::npos; p = json.out.find(key, p + 1)) {
      ++objects;
    }
  }
  EXPECT_EQ(objects, 33u);  // the finding's own subject "worker:0-31", then its 32 objects
}

TEST(Grouping, NaturalOrderComparesNumbersAsNumbers) {
  EXPECT_TRUE(NaturalLess("doc 3", "doc 11"));
  EXPECT_FALSE(NaturalLess("doc 11", "doc 3"));
  EXPECT_TRUE(NaturalLess("worker:2", "worker:10"));
  EXPECT_TRUE(NaturalLess("a", "b"));
  EXPECT_TRUE(NaturalLess("x 07", "x 8"));
  EXPECT_FALSE(NaturalLess("same", "same"));
}

// Synchronous SGD without PS: variables on worker:0, the other workers busy a few percent of
// their 1-6 s steps while they wait for it; partition inputs cross tasks.
std::string WorkersActingAsPs() {
  std::vector<std::string> ev;
  for (int w = 0; w < 5; ++w) {
    ev.push_back(MetaEvent(w + 1, fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", w)));
  }
  for (int s = 0; s < 2; ++s) {
    const int64_t t0 = 1000000 + s * 7000000;
    ev.push_back(OpEvent(1, 0, t0, 10, "_SOURCE", "NoOp"));
    ev.push_back(OpEvent(1, 0, t0 + 100, 20000, "dense/kernel", "VariableV2"));
    ev.push_back(
        OpEvent(1, 0, t0 + 30000, 30000, "dense/kernel/read", "Identity", {"dense/kernel"}));
    ev.push_back(OpEvent(1, 0, t0 + 4000000, 100000, "update/ApplyGradientDescent",
                         "ApplyGradientDescent", {"dense/kernel", "lr", "grad_S9"}));
    for (int w = 1; w < 5; ++w) {
      const int64_t step = 1000000 + 1000000 * w;  // 2-5 s
      ev.push_back(OpEvent(w + 1, 0, t0, 10, "_SOURCE", "NoOp"));
      ev.push_back(OpEvent(w + 1, 0, t0 + step - 40000, 30000, "dense/MatMul", "MatMul",
                           {"dense/kernel/read_S3", "x"}));
      ev.push_back(OpEvent(w + 1, 0, t0 + step - 10000, 10000, "grad/MatMul", "MatMul"));
    }
  }
  return ObjectForm(ev);
}

TEST(WorkersActingAsPs, EdgesVariablesTheWaitAndRulesThatCouldNotRunAreShown) {
  TempDir dir;
  test::WriteFile(dir.File("t.json"), WorkersActingAsPs());
  test::RunResult text = test::RunTfdiag("analyze --color never " + dir.File("t.json"));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.find("No rule fired"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Cross-task tensors"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("no PS task"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("worker:0 (1 variable: dense/kernel)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("] worker-wait"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("variables live on worker:0"), std::string::npos) << text.out;
  // The grouped finding lists what each of its workers waits for, the longest wait first (issue
  // 29: "worker:3 idles 5.13 s per step until model/read arrives from worker:0"); before, only
  // the first worker's line was shown.
  const size_t w4 = text.out.find(
      "- worker:4 idles 4.96 s per step (mean over its 2 steps) until dense/kernel/read arrives"
      " from worker:0");
  const size_t w1 = text.out.find(
      "- worker:1 idles 1.96 s per step (mean over its 2 steps) until dense/kernel/read");
  EXPECT_NE(w4, std::string::npos) << text.out;
  EXPECT_NE(w1, std::string::npos) << text.out;
  EXPECT_LT(w4, w1) << "the longest wait first";
  for (const char* w : {"- worker:2 idles", "- worker:3 idles"}) {
    EXPECT_NE(text.out.find(w), std::string::npos) << w << "\n" << text.out;
  }
  EXPECT_NE(text.out.find("Not judged"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("straggler-worker"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("needs 2 workers with 3 steps each"), std::string::npos) << text.out;

  Capture c;
  AnalysisResult r = AnalyzeText(WorkersActingAsPs(), &c);
  // Two causes, two findings: worker:0 hosts the variables (and waits for gradients), the
  // other four wait for it.
  std::vector<const Finding*> waits;
  for (const Finding& f : r.findings) {
    if (f.rule_id == "worker-wait") waits.push_back(&f);
  }
  ASSERT_EQ(waits.size(), 2u);
  const Finding* host = waits[0]->Covers("worker:0") ? waits[0] : waits[1];
  const Finding* others = host == waits[0] ? waits[1] : waits[0];
  EXPECT_EQ(host->objects.size(), 1u);
  EXPECT_NE(host->summary.find("it hosts the job's variables"), std::string::npos) << host->summary;
  ASSERT_EQ(others->objects.size(), 4u);
  EXPECT_EQ(others->subject, "worker:1-4");
  EXPECT_NE(others->summary.find("the job has no PS: variables live on worker:0"),
            std::string::npos)
      << others->summary;
  for (const FindingObject& o : others->objects) {
    ASSERT_FALSE(o.evidence.empty());
    EXPECT_LT(o.evidence[0].value, 5.0) << o.subject;
  }
}

// A bundle of 2 PS and one worker whose traffic goes mostly to ps:0 (eBPF rows), recorded at
// another time than the timeline it is analyzed with.
Capture TwoPsBundle() {
  CaptureBuilder b;
  b.meta().host = "node-1";
  b.meta().interval_ms = 1000;
  b.meta().window_start = 1'000'000'000;
  b.meta().window_end = 5'000'000'000;
  const uint32_t ps0 = b.AddTask("ps", 0, 0), ps1 = b.AddTask("ps", 0, 1);
  const uint32_t w = b.AddTask("worker", 0, 0);
  ProcessRow p;
  p.host_cpus = 4;
  uint32_t proc[3];
  const uint32_t tasks[3] = {ps0, ps1, w};
  for (int k = 0; k < 3; ++k) {
    p.task = tasks[k];
    p.pid = 100 + k;
    proc[k] = b.AddProcess(p);
  }
  for (int i = 0; i < 5; ++i) {
    const TimeNs ts = 1'000'000'000LL * (i + 1);
    for (int k = 0; k < 3; ++k) {
      ProcessSampleRow s;
      s.ts = ts;
      s.process = proc[k];
      s.threads = 8;
      s.cpu_ns = 500'000'000LL * i;
      b.AddProcessSample(s);
    }
    for (int k = 0; k < 2; ++k) {
      TrafficRow t;
      t.ts = ts;
      t.process = proc[2];
      t.local = b.Intern(fmt::format("10.0.0.9:{}", 40000 + k));
      t.peer = b.Intern(fmt::format("10.0.0.{}:2222", k + 1));
      t.peer_task = tasks[k];
      t.bytes_sent = (k == 0 ? 50'000'000LL : 2'000'000LL) * i;
      t.bytes_received = (k == 0 ? 50'000'000LL : 2'000'000LL) * i;
      b.AddTraffic(t);
    }
  }
  return b.Finish();
}

TEST(MergedInputs, BundleBytesKeepTheTimelinesVariableAndTheBundlesPsSet) {
  TempDir dir;
  ASSERT_TRUE(WriteBundle(TwoPsBundle(), dir.File("b.json")).ok());
  ASSERT_EQ(test::RunTfdiag("simulate hot-ps --steps 3 -o " + dir.File("t.json")).exit_code, 0);
  // The timeline alone names the hot variable.
  Capture timeline = test::LoadOrDie({dir.File("t.json")});
  StatusOr<RuleSet> rules = DefaultRuleSet();
  ASSERT_TRUE(rules.ok());
  const AnalysisResult alone = Analyze(timeline, *rules);
  const Finding* hot_alone = FindRule(alone, "hot-ps");
  ASSERT_NE(hot_alone, nullptr);
  ASSERT_FALSE(hot_alone->ops.empty());
  const std::string variable = hot_alone->ops[0];

  Capture both = test::LoadOrDie({dir.File("b.json"), dir.File("t.json")});
  const AnalysisResult r = Analyze(both, *rules);
  const Finding* hot = FindRule(r, "hot-ps");
  ASSERT_NE(hot, nullptr);
  EXPECT_EQ(hot->subject, "ps:0");
  // Measured bytes over the bundle's 2 PS (not the timeline's 4), and the timeline's variable.
  EXPECT_NE(hot->summary.find("2 PS, fair share 50%"), std::string::npos) << hot->summary;
  EXPECT_NE(std::find(hot->ops.begin(), hot->ops.end(), variable), hot->ops.end())
      << variable << " not in " << hot->summary;
  EXPECT_NE(hot->fix.find("partition " + variable), std::string::npos) << hot->fix;
  // The inputs come from different runs and clusters: both said.
  ASSERT_EQ(r.notes.size(), 2u);
  EXPECT_NE(r.notes[0].find("do not overlap"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes[1].find("differ from the bundle's (ps:0, ps:1)"), std::string::npos)
      << r.notes[1];
}

// A process that exits while attach records: its last sample reads back short (0 CPU). The
// CPU used is what it used while alive, never negative.
TEST(LiveStats, ACounterThatDropsIsAResetNotNegativeCpu) {
  CaptureBuilder b;
  ProcessRow p;
  p.task = b.AddTask("worker", 0, 0);
  p.pid = 7;
  p.host_cpus = 2;
  const uint32_t proc = b.AddProcess(p);
  const int64_t cpu[4] = {0, 500'000'000, 1'000'000'000, 0};  // exited before the last read
  for (int i = 0; i < 4; ++i) {
    ProcessSampleRow s;
    s.ts = 1'000'000'000LL * (i + 1);
    s.process = proc;
    s.threads = 2;
    s.cpu_ns = cpu[i];
    s.voluntary = i == 3 ? 0 : 100 * i;
    s.involuntary = -1;
    b.AddProcessSample(s);
  }
  const Capture c = b.Finish();
  const std::vector<ProcessStats> st = ComputeProcessStats(c);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_NEAR(st[0].cpu_cores, 1.0 / 3.0, 1e-9);  // 1 s of CPU over a 3 s window
  EXPECT_NEAR(st[0].voluntary_per_s, 200.0 / 3.0, 1e-9);
  EXPECT_EQ(st[0].involuntary_per_s, -1);  // never read: unknown
  EXPECT_EQ(st[0].throttled_pct, -1);
}

// Six hand-written PS Deployments, each with a Service: one finding per rule listing the six,
// and one note per cause (not one per Deployment).
TEST(Grouping, IdenticalDeploymentsGiveOneFindingAndOneNotePerCause) {
  std::string yaml;
  for (int i = 0; i < 6; ++i) {
    yaml += fmt::format(
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: tf-ps-{}}}\nspec:\n"
        "  replicas: 1\n  template:\n    metadata: {{labels: {{role: ps}}}}\n    spec:\n"
        "      containers:\n      - name: ps\n        image: tf:1.15\n"
        "        resources: {{requests: {{cpu: 500m}}}}\n---\napiVersion: v1\nkind: Service\n"
        "metadata: {{name: tf-ps-{}}}\nspec: {{ports: [{{port: 2222}}]}}\n",
        i, i);
  }
  TempDir dir;
  test::WriteFile(dir.File("ps.yaml"), yaml);
  test::RunResult r = test::RunTfdiag("analyze --color never " + dir.File("ps.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* rule : {"] cpu-qos", "] thread-config", "] ps-colocation"}) {
    const size_t first = r.out.find(rule);
    ASSERT_NE(first, std::string::npos) << rule << "\n" << r.out;
    EXPECT_EQ(r.out.find(rule, first + 1), std::string::npos) << rule << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("6 manifest objects:"), std::string::npos) << r.out;  // not 6 files
  EXPECT_NE(r.err.find("(docs 1, 3, 5, 7, 9, 11): Deployment: role ps inferred"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("(doc 3)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Service x6"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag
