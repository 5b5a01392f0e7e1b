// Tests of the scenario simulator (samples/simulator.h): every scenario in both formats parses,
// follows TF's conventions, carries matching ground truth, scales with steps, is deterministic,
// and shows its own signal while keeping the others healthy.
#include "samples/simulator.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::sim {
namespace {

namespace fs = std::filesystem;
using rapidjson::Document;
using rapidjson::Value;

// The temporary directory and file reader every test uses (tests/test_util.h).
using test::ReadFile;
using test::TempDir;

std::string Gunzip(const std::string& data) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 32), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out;
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  EXPECT_EQ(rc, Z_STREAM_END);
  inflateEnd(&zs);
  return out;
}

// Writes `p` into `dir` and returns the file's bytes.
std::string Generate(const TempDir& dir, const ScenarioParams& p, const std::string& name = "t") {
  std::string path = dir.File(name);
  Status st = WriteScenario(p, path);
  EXPECT_TRUE(st.ok()) << st.message();
  return ReadFile(path);
}

void Parse(const std::string& text, Document& doc) {
  doc.Parse(text.data(), text.size());
  ASSERT_FALSE(doc.HasParseError()) << "offset " << doc.GetErrorOffset();
  ASSERT_TRUE(doc.IsObject());
  ASSERT_TRUE(doc.HasMember("traceEvents"));
  ASSERT_TRUE(doc["traceEvents"].IsArray());
  ASSERT_TRUE(doc.HasMember("tfdiagGroundTruth"));
}

std::string Str(const Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

// Per-device view of a parsed trace (times in microseconds).
struct Trace {
  std::map<int, std::string> device;   // Compute pid -> device name
  std::map<std::string, double> busy;  // device -> summed X duration
  struct Step {
    double start = 0, end = 0, ign = 0;
  };
  std::map<std::string, std::vector<Step>> steps;  // worker device -> steps
  size_t events = 0;                               // non-metadata events
};

Trace Analyze(const Document& doc) {
  Trace t;
  const Value& ev = doc["traceEvents"];
  for (const Value& e : ev.GetArray()) {
    if (Str(e, "ph") != "M") continue;
    std::string name = Str(e["args"], "name");
    if (name.size() > 8 && name.compare(name.size() - 8, 8, " Compute") == 0) {
      t.device[e["pid"].GetInt()] = name.substr(0, name.size() - 8);
    }
  }
  std::vector<const Value*> xs;
  for (const Value& e : ev.GetArray()) {
    std::string ph = Str(e, "ph");
    if (!ph.empty() && ph != "M") ++t.events;
    if (ph == "X") xs.push_back(&e);
  }
  std::stable_sort(xs.begin(), xs.end(), [](const Value* a, const Value* b) {
    return (*a)["ts"].GetDouble() < (*b)["ts"].GetDouble();
  });
  for (const Value* x : xs) {
    const Value& e = *x;
    const std::string& dev = t.device[e["pid"].GetInt()];
    double ts = e["ts"].GetDouble(), dur = e["dur"].GetDouble();
    t.busy[dev] += dur;
    if (dev.find("/job:worker") == std::string::npos) continue;
    std::vector<Trace::Step>& steps = t.steps[dev];
    if (Str(e["args"], "name") == "_SOURCE") steps.push_back({ts, ts, 0});
    if (steps.empty()) continue;
    steps.back().end = std::max(steps.back().end, ts + dur);
    if (Str(e["args"], "op") == "IteratorGetNext") steps.back().ign += dur;
  }
  return t;
}

double MeanStep(const std::vector<Trace::Step>& steps) {
  double sum = 0;
  for (const Trace::Step& s : steps) sum += s.end - s.start;
  return steps.empty() ? 0 : sum / static_cast<double>(steps.size());
}

double MaxIgnShare(const Trace& t) {
  double share = 0;
  for (const auto& [dev, steps] : t.steps) {
    for (const Trace::Step& s : steps) share = std::max(share, s.ign / (s.end - s.start));
  }
  return share;
}

// Busy time of each PS task (compute and stream devices together).
std::map<std::string, double> PsBusy(const Trace& t) {
  std::map<std::string, double> ps;
  for (const auto& [dev, busy] : t.busy) {
    if (dev.rfind("/job:ps/", 0) != 0) continue;
    ps[dev.substr(0, dev.find("/device:"))] += busy;
  }
  return ps;
}

const char* FormatName(TraceFormat f) { return f == TraceFormat::kTf1 ? "tf1" : "tf2"; }

TEST(SimulatorTest, ScenarioNamesAndDescriptions) {
  std::vector<std::string> names = ScenarioNames();
  std::set<std::string> want = {"balanced",         "hot-ps",
                                "idle-ps",          "dense-optimizer-on-embedding",
                                "gather-on-worker", "oversharding",
                                "sync-replicas",    "input-bound",
                                "ps-on-gpu",        "allreduce-candidate",
                                "straggler-worker"};
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), want);
  EXPECT_EQ(names.front(), "balanced");
  for (const std::string& n : names) {
    std::string d = ScenarioDescription(n);
    EXPECT_FALSE(d.empty()) << n;
    EXPECT_EQ(d.find('\n'), std::string::npos) << n;
  }
  EXPECT_EQ(ScenarioDescription("no-such"), "");
}

TEST(SimulatorTest, BadParametersAreUsageErrors) {
  TempDir dir;
  ScenarioParams p;
  p.scenario = "no-such";
  EXPECT_EQ(WriteScenario(p, dir.File("a")).code(), StatusCode::kUsage);
  p = ScenarioParams();
  p.steps = 0;
  EXPECT_EQ(WriteScenario(p, dir.File("a")).code(), StatusCode::kUsage);
  p = ScenarioParams();
  p.ps = 0;
  EXPECT_EQ(WriteScenario(p, dir.File("a")).code(), StatusCode::kUsage);
  p = ScenarioParams();
  p.scenario = "hot-ps";
  p.ps = 1;
  EXPECT_EQ(WriteScenario(p, dir.File("a")).code(), StatusCode::kUsage);
  EXPECT_TRUE(fs::is_empty(dir.path()));  // nothing left behind
  p = ScenarioParams();
  EXPECT_EQ(WriteScenario(p, dir.File("missing/dir/x")).code(), StatusCode::kIo);
}

class AllScenarios : public ::testing::TestWithParam<std::tuple<std::string, TraceFormat>> {
 protected:
  ScenarioParams Params(int steps) const {
    ScenarioParams p;
    p.scenario = std::get<0>(GetParam());
    p.format = std::get<1>(GetParam());
    p.steps = steps;
    return p;
  }
};

TEST_P(AllScenarios, ParsesWithMatchingGroundTruth) {
  TempDir dir;
  ScenarioParams p = Params(2);
  p.seed = 7;
  Document doc;
  Parse(Generate(dir, p), doc);
  const Value& gt = doc["tfdiagGroundTruth"];
  EXPECT_EQ(Str(gt, "scenario"), p.scenario);
  EXPECT_EQ(Str(gt, "format"), FormatName(p.format));
  EXPECT_EQ(gt["steps"].GetInt(), 2);
  EXPECT_EQ(gt["seed"].GetUint64(), 7u);
  int ps = gt["ps"].GetInt(), workers = gt["workers"].GetInt();
  EXPECT_GE(ps, 1);
  EXPECT_GE(workers, 1);
  ASSERT_TRUE(gt["expect"].IsArray());
  for (const Value& e : gt["expect"].GetArray()) {
    EXPECT_FALSE(Str(e, "rule").empty());
    EXPECT_FALSE(Str(e, "subject").empty());
  }
  if (p.scenario == "balanced") {
    EXPECT_TRUE(gt["expect"].Empty());
  }
  if (p.scenario != "balanced") {
    ASSERT_FALSE(gt["expect"].Empty());
    EXPECT_EQ(Str(gt["expect"][0], "rule"), p.scenario);
  }
  // One Compute and one Tensors pid per device, plus the Allocators pid 0.
  Trace t = Analyze(doc);
  size_t devices = static_cast<size_t>(ps + workers + (p.scenario == "ps-on-gpu" ? ps : 0));
  EXPECT_EQ(t.device.size(), devices);
  EXPECT_EQ(t.steps.size(), static_cast<size_t>(workers));
  for (const auto& [dev, steps] : t.steps) EXPECT_EQ(steps.size(), 2u) << dev;
}

TEST_P(AllScenarios, FollowsFormatConventions) {
  TempDir dir;
  ScenarioParams p = Params(2);
  Document doc;
  Parse(Generate(dir, p), doc);
  const Value& ev = doc["traceEvents"];
  bool tf1 = p.format == TraceFormat::kTf1;
  if (!tf1) {
    EXPECT_EQ(Str(doc, "displayTimeUnit"), "ns");
    ASSERT_TRUE(ev[ev.Size() - 1].IsObject());
    EXPECT_EQ(ev[ev.Size() - 1].MemberCount(), 0u);  // trailing {}
  }
  size_t x = 0;
  for (const Value& e : ev.GetArray()) {
    std::string ph = Str(e, "ph");
    if (ph.empty() || ph == "M") continue;
    ASSERT_TRUE(e["pid"].IsInt());
    ASSERT_TRUE(e["tid"].IsInt());
    if (tf1) {
      EXPECT_TRUE(e["ts"].IsInt64());
      if (ph == "X") {
        EXPECT_TRUE(e["dur"].IsInt64());
      }
    } else {
      EXPECT_TRUE(e["ts"].IsNumber());
      if (e.HasMember("args")) {
        for (const auto& m : e["args"].GetObject()) EXPECT_TRUE(m.value.IsString());
      }
    }
    if (ph == "X") {
      ++x;
      EXPECT_FALSE(Str(e["args"], "name").empty());
      EXPECT_EQ(Str(e["args"], "op"), Str(e, "name"));
      if (Str(e, "name") == "RecvTensor") {
        EXPECT_EQ(e["args"].MemberCount(), 2u);
      }
    }
  }
  EXPECT_GT(x, 0u);
}

TEST_P(AllScenarios, EventCountsScaleWithSteps) {
  TempDir dir;
  Document a, b;
  Parse(Generate(dir, Params(2), "a"), a);
  Parse(Generate(dir, Params(4), "b"), b);
  EXPECT_EQ(Analyze(b).events, 2 * Analyze(a).events);
}

TEST_P(AllScenarios, SameSeedSameBytes) {
  TempDir dir;
  ScenarioParams p = Params(2);
  std::string a = Generate(dir, p, "a"), b = Generate(dir, p, "b");
  EXPECT_EQ(a, b);
  p.seed = 2;
  EXPECT_NE(a, Generate(dir, p, "c"));
}

// TF1: tids are exactly timeline.py's first-fit lanes. TF2: epoch microseconds parsed as doubles
// keep only ~0.25 us, so there the check is that ops in one lane do not overlap.
TEST_P(AllScenarios, LanesFollowTimelineFirstFit) {
  TempDir dir;
  Document doc;
  Parse(Generate(dir, Params(3)), doc);
  bool tf1 = std::get<1>(GetParam()) == TraceFormat::kTf1;
  std::map<int, std::vector<std::tuple<double, double, int>>> ops;  // pid -> (ts, end, tid)
  for (const Value& e : doc["traceEvents"].GetArray()) {
    if (Str(e, "ph") != "X") continue;
    double ts = e["ts"].GetDouble();
    ops[e["pid"].GetInt()].emplace_back(ts, ts + e["dur"].GetDouble(), e["tid"].GetInt());
  }
  for (auto& [pid, list] : ops) {
    std::stable_sort(list.begin(), list.end(),
                     [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    std::vector<double> lanes = {0};
    std::map<int, double> lane_end;
    for (const auto& [ts, end, tid] : list) {
      if (!tf1) {
        EXPECT_GE(ts, lane_end[tid] - 0.5) << "pid " << pid << " tid " << tid;
        lane_end[tid] = end;
        continue;
      }
      size_t l = 0;
      while (l < lanes.size() && !(ts > lanes[l])) ++l;
      if (l == lanes.size()) lanes.push_back(0);
      lanes[l] = end;
      ASSERT_EQ(static_cast<int>(l), tid) << "pid " << pid << " ts " << ts;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Simulator, AllScenarios,
                         ::testing::Combine(::testing::ValuesIn(ScenarioNames()),
                                            ::testing::Values(TraceFormat::kTf1,
                                                              TraceFormat::kTf2)),
                         [](const auto& info) {
                           std::string n =
                               std::get<0>(info.param) + "_" + FormatName(std::get<1>(info.param));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(SimulatorTest, PrettyMatchesCompact) {
  TempDir dir;
  ScenarioParams p;
  p.steps = 2;
  std::string compact = Generate(dir, p, "a");
  p.pretty = true;
  std::string pretty = Generate(dir, p, "b");
  EXPECT_NE(pretty.find("\n    "), std::string::npos);
  EXPECT_NE(pretty.find("\"ph\": \"X\""), std::string::npos);
  Document a, b;
  Parse(compact, a);
  Parse(pretty, b);
  EXPECT_TRUE(a == b);
}

TEST(SimulatorTest, GzipInflatesToPlainOutput) {
  TempDir dir;
  for (TraceFormat f : {TraceFormat::kTf1, TraceFormat::kTf2}) {
    ScenarioParams p;
    p.scenario = "gather-on-worker";
    p.steps = 3;
    p.format = f;
    std::string plain = Generate(dir, p, "a");
    p.gzip = true;
    std::string gz = Generate(dir, p, "b");
    ASSERT_GE(gz.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
    EXPECT_LT(gz.size(), plain.size());
    EXPECT_EQ(Gunzip(gz), plain);
  }
}

TEST(SimulatorTest, OverridesReachTheTrace) {
  TempDir dir;
  ScenarioParams p;
  p.ps = 3;
  p.workers = 10;
  p.embedding_rows = 300000;
  p.embedding_dim = 16;
  p.dense_layers = 2;
  p.steps = 1;
  std::string text = Generate(dir, p);
  Document doc;
  Parse(text, doc);
  const Value& gt = doc["tfdiagGroundTruth"];
  EXPECT_EQ(gt["ps"].GetInt(), 3);
  EXPECT_EQ(gt["workers"].GetInt(), 10);
  EXPECT_EQ(gt["embedding_rows"].GetInt64(), 300000);
  EXPECT_EQ(gt["embedding_dim"].GetInt64(), 16);
  EXPECT_EQ(gt["dense_layers"].GetInt(), 2);
  EXPECT_EQ(Analyze(doc).device.size(), 13u);
  EXPECT_NE(text.find("\"embedding/embedding_weights/part_2/read\""), std::string::npos);
  EXPECT_NE(text.find("\"dense_2/MatMul\""), std::string::npos);
  EXPECT_EQ(text.find("\"dense_3/MatMul\""), std::string::npos);
}

TEST(SimulatorTest, HealthyJobStaysInsideTheBands) {
  TempDir dir;
  ScenarioParams p;
  p.steps = 5;
  Document doc;
  Parse(Generate(dir, p), doc);
  Trace t = Analyze(doc);
  EXPECT_LT(MaxIgnShare(t), 0.03);
  std::vector<double> means;
  for (const auto& [dev, steps] : t.steps) means.push_back(MeanStep(steps));
  auto [lo, hi] = std::minmax_element(means.begin(), means.end());
  EXPECT_LT(*hi / *lo, 1.1);
  EXPECT_GT(*lo, 50000.0);  // ~100 ms steps
  std::map<std::string, double> ps = PsBusy(t);
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_LT(std::max(ps.begin()->second, ps.rbegin()->second) /
                std::min(ps.begin()->second, ps.rbegin()->second),
            1.3);
}

TEST(SimulatorTest, HotPsDominatesPsTime) {
  TempDir dir;
  ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 3;
  Document doc;
  Parse(Generate(dir, p), doc);
  std::map<std::string, double> ps = PsBusy(Analyze(doc));
  ASSERT_EQ(ps.size(), 4u);
  double total = 0;
  for (const auto& [task, busy] : ps) total += busy;
  EXPECT_GE(ps["/job:ps/replica:0/task:0"] / total, 0.6);
}

TEST(SimulatorTest, InputBoundAndStragglerSignals) {
  TempDir dir;
  ScenarioParams p;
  p.scenario = "input-bound";
  p.steps = 3;
  Document doc;
  Parse(Generate(dir, p, "a"), doc);
  Trace t = Analyze(doc);
  for (const auto& [dev, steps] : t.steps) {
    for (const Trace::Step& s : steps) EXPECT_GT(s.ign / (s.end - s.start), 0.2) << dev;
  }
  p.scenario = "straggler-worker";
  Document doc2;
  Parse(Generate(dir, p, "b"), doc2);
  Trace s = Analyze(doc2);
  double slow = MeanStep(s.steps["/job:worker/replica:0/task:3/device:CPU:0"]);
  double other = MeanStep(s.steps["/job:worker/replica:0/task:2/device:CPU:0"]);
  EXPECT_GT(slow / other, 1.7);
  EXPECT_LT(MaxIgnShare(s), 0.03);
}

TEST(SimulatorTest, GatherOnWorkerShowsWholePartitions) {
  TempDir dir;
  ScenarioParams p;
  p.scenario = "gather-on-worker";
  p.steps = 1;
  std::string text = Generate(dir, p);
  Document doc;
  Parse(text, doc);
  Trace t = Analyze(doc);
  bool snapshot = false, worker_gather = false;
  std::regex read_s(R"(embedding/embedding_weights/part_\d+/read_S\d+)");
  for (const Value& e : doc["traceEvents"].GetArray()) {
    if (Str(e, "ph") == "O" && Str(e, "name") == "embedding/embedding_weights/part_0/read") {
      std::string desc = Str(e["args"]["snapshot"], "tensor_description");
      snapshot = desc.find("requested_bytes: 200000000\n") != std::string::npos;
    }
    if (Str(e, "ph") == "X" && Str(e["args"], "op") == "GatherV2" &&
        t.device[e["pid"].GetInt()].find("/job:worker") != std::string::npos) {
      worker_gather = worker_gather || std::regex_match(Str(e["args"], "input0"), read_s);
    }
  }
  EXPECT_TRUE(snapshot);
  EXPECT_TRUE(worker_gather);
}

TEST(SimulatorTest, PsGradientsComeFromWorkerNodes) {
  TempDir dir;
  for (const char* scenario : {"balanced", "hot-ps", "oversharding", "ps-on-gpu"}) {
    ScenarioParams p;
    p.scenario = scenario;
    p.steps = 1;
    Document doc;
    Parse(Generate(dir, p), doc);
    Trace t = Analyze(doc);
    std::set<std::string> worker_nodes;
    std::vector<std::string> wanted;
    std::regex suffix(R"(_S\d+$)");
    for (const Value& e : doc["traceEvents"].GetArray()) {
      if (Str(e, "ph") != "X") continue;
      bool worker = t.device[e["pid"].GetInt()].find("/job:worker") != std::string::npos;
      if (worker) worker_nodes.insert(Str(e["args"], "name"));
      if (worker || Str(e["args"], "op").find("Apply") == std::string::npos) continue;
      for (const auto& m : e["args"].GetObject()) {
        std::string v = m.value.GetString();
        if (v.rfind("gradients/", 0) == 0 && std::regex_search(v, suffix)) {
          wanted.push_back(std::regex_replace(v, suffix, ""));
        }
      }
    }
    EXPECT_FALSE(wanted.empty()) << scenario;
    for (const std::string& w : wanted) EXPECT_TRUE(worker_nodes.count(w)) << scenario << " " << w;
  }
}

// ProfilerHook fixtures (issue 28): one TF1 timeline per captured step, `minutes` apart, each of
// a CPU+GPU worker task whose GPU executor starts its partition (_SOURCE) about 1 ms after the
// CPU's. Read here with rapidjson, not with tfdiag's readers.
// `scenario` with `ps` PS, `workers` workers and `steps` steps.
ScenarioParams Small(const std::string& scenario, int ps, int workers, int steps) {
  ScenarioParams p;
  p.scenario = scenario;
  p.ps = ps;
  p.workers = workers;
  p.steps = steps;
  return p;
}

TEST(SimulatorTest, ProfilerHookWritesOneFilePerStepMinutesApartOnACpuGpuTask) {
  TempDir dir;
  ScenarioParams p = Small("input-bound", 1, 2, 3);
  p.worker_gpu = true;
  p.profiler_hook_minutes = 99;
  ASSERT_TRUE(WriteScenario(p, dir.File("hook")).ok());
  std::vector<std::string> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir.File("hook"))) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  ASSERT_EQ(files,
            (std::vector<std::string>{"timeline-1.json", "timeline-2.json", "timeline-3.json"}));
  double last_first = -1;
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    Document doc;
    Parse(ReadFile(dir.File("hook/" + f)), doc);
    Trace t = Analyze(doc);
    // Per worker task: one step on the CPU and one on the GPU, the GPU's _SOURCE 0.7-1.3 ms
    // after the CPU's (latency 1 ms +- 30%); the MatMuls run on the GPU.
    for (int w = 0; w < 2; ++w) {
      const std::string cpu = fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", w);
      const std::string gpu = fmt::format("/job:worker/replica:0/task:{}/device:GPU:0", w);
      ASSERT_EQ(t.steps[cpu].size(), 1u);
      ASSERT_EQ(t.steps[gpu].size(), 1u);
      const double gap = t.steps[gpu][0].start - t.steps[cpu][0].start;
      EXPECT_GE(gap, 700);
      EXPECT_LE(gap, 1300);
      EXPECT_GT(t.busy[gpu], 0.3 * (t.steps[cpu][0].end - t.steps[cpu][0].start));
    }
    double first = 1e300;
    for (const Value& e : doc["traceEvents"].GetArray()) {
      if (Str(e, "ph") == "X") first = std::min(first, e["ts"].GetDouble());
    }
    if (last_first >= 0) {
      EXPECT_NEAR(first - last_first, 99 * 60e6, 2e6) << "99 min apart";
    }
    last_first = first;
    EXPECT_EQ(doc["tfdiagGroundTruth"]["steps"].GetInt(), 1);
  }
  // The XSpace of each step: one file per step.
  p.format = TraceFormat::kXPlane;
  ASSERT_TRUE(WriteScenario(p, dir.File("hookx")).ok());
  for (int k = 1; k <= 3; ++k) {
    EXPECT_TRUE(fs::is_regular_file(dir.File(fmt::format("hookx/step-{}.xplane.pb", k)))) << k;
  }
  // Only to a directory, and only in the timeline and XSpace formats.
  p.format = TraceFormat::kRunMetadata;
  EXPECT_EQ(WriteScenario(p, dir.File("hookr")).code(), StatusCode::kUsage);
  p.format = TraceFormat::kTf1;
  EXPECT_EQ(WriteScenario(p, "-").code(), StatusCode::kUsage);
}

// A TF 2.2-2.3 log directory: the trace viewer's JSON and the tool files, no XSpace.
TEST(SimulatorTest, ToolFilesSitBesideTheTraceJson) {
  TempDir dir;
  ScenarioParams p = Small("balanced", 1, 1, 2);
  p.format = TraceFormat::kTraceJson;
  p.tool_files = true;
  ASSERT_TRUE(WriteScenario(p, dir.File("logs")).ok());
  std::set<std::string> run, top;
  for (const fs::directory_entry& e :
       fs::directory_iterator(dir.File("logs/plugins/profile/2020_09_13_12_26_40"))) {
    run.insert(e.path().filename().string());
  }
  for (const fs::directory_entry& e : fs::directory_iterator(dir.File("logs"))) {
    if (e.is_regular_file()) top.insert(e.path().filename().string());
  }
  std::set<std::string> want;
  for (const char* h : {"ps-0", "worker-0"}) {
    for (const char* f : {"trace.json.gz", "overview_page.pb", "input_pipeline.pb",
                          "tensorflow_stats.pb", "kernel_stats.pb", "memory_profile.json.gz"}) {
      want.insert(fmt::format("{}.{}", h, f));
    }
  }
  EXPECT_EQ(run, want);
  EXPECT_EQ(top, (std::set<std::string>{"events.out.tfevents.1600000000.ps-0.profile-empty",
                                        "events.out.tfevents.1600000000.worker-0.profile-empty"}));
  p.format = TraceFormat::kTf1;
  EXPECT_EQ(WriteScenario(p, dir.File("x.json")).code(), StatusCode::kUsage);
  p.format = TraceFormat::kXPlane;  // one XSpace file: no log directory to put them in
  EXPECT_EQ(WriteScenario(p, dir.File("x.xplane.pb")).code(), StatusCode::kUsage);
  EXPECT_FALSE(fs::exists(dir.File("x.xplane.pb"))) << "nothing written";
}

}  // namespace
}  // namespace tfdiag::sim
