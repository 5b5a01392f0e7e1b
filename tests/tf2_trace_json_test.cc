// The TF2 trace-viewer JSON (`<host>.trace.json.gz`) read with the XSpace's rules
// (collectors/xplane/tf2_events.h): the same capture from its XSpace and from its JSON gives the
// same ops, busy time, steps and findings. The JSON is checked against a reading of its own in
// the test (RapidJSON DOM), not against tfdiag's.
#include <dirent.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "collectors/load_inputs.h"
#include "collectors/timeline/timeline_reader.h"
#include "collectors/xplane/xplane_reader.h"
#include "core/capture_builder.h"
#include "samples/sim_internal.h"
#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const char* kBert = "tfprof_d6853e0_GPU-multi-worker_34.83.195.179_6003.xplane.pb";
const std::regex kTfOp(R"(^[A-Za-z0-9._][A-Za-z0-9_./>-]*:[A-Z_][A-Za-z0-9_]*$)");

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  if (f == nullptr) return out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

// Files of a simulated log directory's run, sorted.
std::vector<std::string> RunFiles(const std::string& dir, const std::string& ext) {
  const std::string run = dir + "/plugins/profile/2020_09_13_12_26_40";
  std::vector<std::string> out;
  if (DIR* d = ::opendir(run.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0) {
        out.push_back(run + "/" + n);
      }
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// What the test's own reading of a trace-viewer JSON expects of it: TF ops are X events on a
// "/host:" (or "/job:") process named (or long_name'd) "<node>:<type>", stream kernels the X
// events on "Stream #" threads of a "/device:" process; nothing else is an op.
struct JsonFacts {
  int64_t x_events = 0, host_ops = 0, stream_events = 0;
  bool trailing_empty = false;
  std::set<std::string> thread_names;
};

JsonFacts ReadJsonFacts(const std::string& text) {
  JsonFacts f;
  rapidjson::Document d;
  d.Parse(text.c_str());
  EXPECT_FALSE(d.HasParseError());
  EXPECT_TRUE(d.HasMember("displayTimeUnit"));
  std::map<int64_t, std::string> process;
  std::map<std::pair<int64_t, int64_t>, std::string> thread;
  const auto& evs = d["traceEvents"].GetArray();
  for (const auto& e : evs) {
    if (!e.HasMember("ph") || std::string(e["ph"].GetString()) != "M") continue;
    const std::string name = e["name"].GetString();
    if (name == "process_name") process[e["pid"].GetInt64()] = e["args"]["name"].GetString();
    if (name == "thread_name") {
      thread[{e["pid"].GetInt64(), e["tid"].GetInt64()}] = e["args"]["name"].GetString();
      f.thread_names.insert(e["args"]["name"].GetString());
    }
  }
  for (const auto& e : evs) {
    if (e.ObjectEmpty()) f.trailing_empty = true;
    if (!e.HasMember("ph") || std::string(e["ph"].GetString()) != "X") continue;
    ++f.x_events;
    const std::string& p = process[e["pid"].GetInt64()];
    const std::string& t = thread[{e["pid"].GetInt64(), e["tid"].GetInt64()}];
    std::string name = e["name"].GetString();
    if (e.HasMember("args") && e["args"].HasMember("long_name")) {
      name = e["args"]["long_name"].GetString();
    }
    // A TF-op plane: the host's, or (the simulator's) a TF device named in full.
    const bool ops_plane = p.rfind("/host:", 0) == 0 || p.rfind("/job:", 0) == 0;
    if (ops_plane && std::regex_match(name, kTfOp)) ++f.host_ops;
    if (p.rfind("/device:", 0) == 0 && t.rfind("Stream #", 0) == 0) ++f.stream_events;
  }
  EXPECT_TRUE(evs[evs.Size() - 1].ObjectEmpty()) << "TF's trailing {}";
  return f;
}

Capture ReadJson(const std::string& path) {
  CaptureBuilder b;
  const Status st = ReadTimeline(path, &b);
  EXPECT_TRUE(st.ok()) << st.message();
  return b.Finish();
}

// The BERT XSpace and its trace-viewer JSON: the same ops (TF ops and stream kernels, not the
// 10k TraceMe markers and derived rows), the same one step, kernels typed by their TF op.
TEST(Tf2TraceJson, RealBertJsonReadsAsItsXSpace) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  TempDir dir;
  const std::string json = dir.File("34.83.195.179_6003.trace.json.gz");
  ASSERT_TRUE(sim::internal::XSpaceToTraceJson(SharedTrace(kBert), json).ok());
  const JsonFacts f = ReadJsonFacts(Gunzip(json));
  EXPECT_GT(f.x_events, 20000);
  EXPECT_TRUE(f.thread_names.count("TensorFlow Ops"));
  EXPECT_TRUE(f.thread_names.count("Steps"));

  const Capture j = ReadJson(json);
  ASSERT_EQ(j.stats.files.size(), 1u);
  EXPECT_EQ(j.stats.files[0].format, "tf2-trace");
  EXPECT_EQ(static_cast<int64_t>(j.ops.size()), f.host_ops + f.stream_events)
      << "markers and derived rows are no ops";
  CaptureBuilder b;
  ASSERT_TRUE(ReadXSpace(SharedTrace(kBert), &b).ok());
  const Capture x = b.Finish();
  EXPECT_EQ(j.ops.size(), x.ops.size());
  ASSERT_EQ(j.steps.size(), 1u);
  ASSERT_EQ(x.steps.size(), 1u);
  EXPECT_EQ(j.steps[0].start, x.steps[0].start);
  EXPECT_EQ(j.steps[0].end, x.steps[0].end);
  EXPECT_EQ(j.stats.files[0].kernels, x.stats.files[0].kernels);
  EXPECT_EQ(j.stats.files[0].kernels_untied, 0);
  // Op time by type is the same from either file.
  auto by_type = [](const Capture& c) {
    std::map<std::string, int64_t> t;
    c.ops.ForEach([&](const OpRow& op) { t[std::string(c.Str(c.OpType(op)))] += op.dur(); });
    return t;
  };
  EXPECT_EQ(by_type(j), by_type(x));

  // A chunked (parallel) gzip import gives way to the one-thread reading: the same capture.
  TimelineReadOptions o;
  o.threads = 4;
  o.chunk_bytes = 64 << 10;
  CaptureBuilder pb;
  ASSERT_TRUE(ReadTimeline(json, &pb, o).ok());
  const Capture p = pb.Finish();
  EXPECT_EQ(p.ops.size(), j.ops.size());
  EXPECT_EQ(by_type(p), by_type(j));
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].end, j.steps[0].end);
}

// The JSON's host is mapped to a task as an XSpace's is: by the cluster spec, with a note.
TEST(Tf2TraceJson, HostIsMappedByTfConfigAndSaysSo) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  TempDir dir;
  const std::string json = dir.File("10.0.0.5_6009.trace.json.gz");
  ASSERT_TRUE(sim::internal::XSpaceToTraceJson(SharedTrace(kBert), json).ok());
  StatusOr<ClusterSpec> cluster = ClusterFromTfConfigArg(
      R"({"cluster":{"worker":["10.0.0.4:6009","10.0.0.5:6009"]},"task":{"type":"worker","index":0}})");
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  LoadOptions lo;
  lo.cluster = *cluster;
  std::vector<std::string> notes;
  lo.notes = &notes;
  StatusOr<Capture> c = LoadInputs({json}, lo);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->tasks.size(), 1u);
  EXPECT_EQ(c->TaskLabelOf(0), "worker:1");
  ASSERT_EQ(c->TaskSteps(0).size(), 1u);
  bool said = false;
  for (const std::string& n : notes)
    said |= n.find("host '10.0.0.5_6009' read as worker:1") != std::string::npos;
  EXPECT_TRUE(said);
}

struct Figures {
  std::set<std::pair<std::string, std::string>> findings;   // (rule, subject)
  std::map<std::string, int64_t> ops, busy, steps, median;  // by task
};

Figures FiguresOf(const std::vector<std::string>& files) {
  Capture c = LoadOrDie(files);
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  const AnalysisResult r = Analyze(c, *rules);
  Figures f;
  for (const Finding& x : r.findings) f.findings.emplace(x.rule_id, x.subject);
  for (const TaskStats& s : r.stats.tasks) {
    f.ops[s.label] = s.ops;
    f.busy[s.label] = s.busy_ns;
    f.steps[s.label] = s.steps;
    f.median[s.label] = s.step_median_ns;
  }
  return f;
}

// Every scenario: its XSpace log directory and its trace-viewer JSON log directory give the
// same findings and step figures, ops within 2% and the same busy time; the JSON holds the
// markers (Keras `train` steps, tf.data function runs), derived rows (a GPU's TensorFlow Ops)
// and the trailing {}. The workers' steps are their marked groups: 4, not 8 with the tf.data
// function runs.
TEST(Tf2TraceJson, EveryScenarioReadsTheSameFromItsXSpaceAndItsJson) {
  TempDir dir;
  for (const std::string& scenario : sim::ScenarioNames()) {
    SCOPED_TRACE(scenario);
    sim::ScenarioParams p;
    p.scenario = scenario;
    p.steps = 4;
    p.tf2_steps = true;  // workers' steps from their marked groups, not from _SOURCE ops
    p.format = sim::TraceFormat::kXPlane;
    const std::string xdir = dir.File(scenario + "-xplane"), jdir = dir.File(scenario + "-json");
    ASSERT_TRUE(sim::WriteScenario(p, xdir).ok());
    p.format = sim::TraceFormat::kTraceJson;
    p.tool_files = true;  // a TF 2.2-2.3 log directory: the JSON and the tool files, no XSpace
    ASSERT_TRUE(sim::WriteScenario(p, jdir).ok());
    const std::vector<std::string> xfiles = RunFiles(xdir, ".xplane.pb");
    const std::vector<std::string> jfiles = RunFiles(jdir, ".trace.json.gz");
    ASSERT_FALSE(jfiles.empty());
    ASSERT_EQ(xfiles.size(), jfiles.size());
    JsonFacts facts;
    for (const std::string& j : jfiles) {
      const JsonFacts one = ReadJsonFacts(Gunzip(j));
      facts.host_ops += one.host_ops;
      facts.stream_events += one.stream_events;
      facts.thread_names.insert(one.thread_names.begin(), one.thread_names.end());
    }
    EXPECT_TRUE(facts.thread_names.count("tf_data_iterator_resource"));
    const Figures x = FiguresOf(xfiles), j = FiguresOf(jfiles);
    EXPECT_EQ(j.findings, x.findings);
    EXPECT_EQ(j.steps, x.steps);
    EXPECT_EQ(j.median, x.median);
    EXPECT_EQ(j.busy, x.busy);
    // The log directory read whole (its tool files skipped) is the same as its JSON files.
    const Figures whole = FiguresOf({jdir});
    EXPECT_EQ(whole.findings, j.findings);
    EXPECT_EQ(whole.steps, j.steps);
    EXPECT_EQ(whole.median, j.median);
    EXPECT_EQ(whole.ops, j.ops);
    int64_t xops = 0, jops = 0;
    for (const auto& [task, n] : x.ops) xops += n;
    for (const auto& [task, n] : j.ops) jops += n;
    EXPECT_LE(std::abs(static_cast<double>(jops - xops)), 0.02 * static_cast<double>(xops));
    EXPECT_EQ(jops, facts.host_ops + facts.stream_events) << "the test's own reading";
    for (const auto& [task, n] : x.steps) {
      if (task.rfind("worker", 0) == 0) {
        EXPECT_EQ(n, 4) << task << ": tf.data runs are no steps";
      }
    }
  }
}

// A GPU on a PS in the TF2 tracer layout: kernels without tf_op, tied by their launch's
// correlation_id, in the XSpace and in its JSON alike.
TEST(Tf2TraceJson, SimulatedGpuKernelsAreTypedByTheirTfOpInBothFormats) {
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "ps-on-gpu";
  p.steps = 3;
  for (sim::TraceFormat f : {sim::TraceFormat::kXPlane, sim::TraceFormat::kTraceJson}) {
    p.format = f;
    const std::string d = dir.File(f == sim::TraceFormat::kXPlane ? "x" : "j");
    ASSERT_TRUE(sim::WriteScenario(p, d).ok());
    const std::vector<std::string> files =
        RunFiles(d, f == sim::TraceFormat::kXPlane ? ".xplane.pb" : ".trace.json.gz");
    Capture c = LoadOrDie(files);
    int64_t kernels = 0, untied = 0, stream_ops = 0, unknown = 0;
    for (const FileStats& fs : c.stats.files) {
      kernels += fs.kernels;
      untied += fs.kernels_untied;
    }
    for (uint32_t dv = 0; dv < c.devices.size(); ++dv) {
      if (c.Str(c.devices[dv].sub).rfind("stream:", 0) != 0) continue;
      for (uint32_t i = c.device_ops[dv].first; i < c.device_ops[dv].second; ++i) {
        ++stream_ops;
        unknown += c.Str(c.OpType(c.ops[i])) == "unknown";
      }
    }
    EXPECT_GT(kernels, 0);
    EXPECT_EQ(untied, 0);
    EXPECT_GT(stream_ops, kernels) << "memcpys too";
    EXPECT_EQ(unknown, 0);
  }
}

}  // namespace
}  // namespace tfdiag::test
