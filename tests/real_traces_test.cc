// The import of the real TensorFlow traces in ../shared/traces. Expected figures are computed
// here from each JSON file with an independent RapidJSON DOM parse, not copied from tfdiag.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <regex>
#include <set>

#include "collectors/timeline/timeline_reader.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const char kTfe[] = "tfe_e0cd14f_timeline_client.json";
const char kIkhlestov[] = "ikhlestov_8f7e68b_CPU_timeline_02_step_0.json";

#define REQUIRE_SHARED() \
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository"

using Triple = std::tuple<std::string, std::string, std::string>;

// What a DOM parse of a TF1 timeline says: per-pid device, per-task counts, flows, _S edges.
struct DomFacts {
  std::map<int64_t, std::string> pid_device;  // process name without " Compute"/" Tensors"
  std::map<std::string, int> ops, recv;       // task label -> X events, RecvTensor X events
  std::multiset<std::pair<std::string, std::string>> op_devices;  // (args.name, device)
  int flow_pairs = 0, cross_task_flows = 0, x_events = 0;
  std::set<Triple> s_edges;  // (producer task, consumer task, tensor)
};

std::string TaskOfDevice(const std::string& device) {
  std::smatch m;
  static const std::regex re(R"(^/job:([a-z]+)/replica:0/task:(\d+)/)");
  if (!std::regex_search(device, m, re)) return "";
  return m[1].str() + ":" + m[2].str();
}

DomFacts ParseFacts(const std::string& path) {
  DomFacts f;
  rapidjson::Document d;
  const std::string text = ReadFile(path);
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << path;
  if (d.HasParseError()) return f;
  const auto& events = d["traceEvents"];
  for (const auto& e : events.GetArray()) {
    if (std::string(e["ph"].GetString()) == "M" &&
        std::string(e["name"].GetString()) == "process_name") {
      std::string name = e["args"]["name"].GetString();
      const size_t space = name.find(' ');
      f.pid_device[e["pid"].GetInt64()] = name.substr(0, space);
    }
  }
  std::map<std::string, std::set<std::string>> producer_tasks;  // node -> tasks
  std::map<int64_t, std::string> flow_start_task;
  for (const auto& e : events.GetArray()) {
    const std::string ph = e["ph"].GetString();
    const std::string device = f.pid_device[e["pid"].GetInt64()];
    const std::string task = TaskOfDevice(device);
    if (ph == "X") {
      ++f.x_events;
      ++f.ops[task];
      f.recv[task] += std::string(e["args"]["op"].GetString()) == "RecvTensor";
      f.op_devices.emplace(e["args"]["name"].GetString(), device);
      producer_tasks[e["args"]["name"].GetString()].insert(task);
    } else if (ph == "s") {
      flow_start_task[e["id"].GetInt64()] = task;
    } else if (ph == "t") {
      ++f.flow_pairs;
      f.cross_task_flows += flow_start_task.at(e["id"].GetInt64()) != task;
    }
  }
  static const std::regex input_re(R"(^([^\^].*?)(?::(\d+))?_S\d+$)");
  for (const auto& e : events.GetArray()) {
    if (std::string(e["ph"].GetString()) != "X") continue;
    const std::string consumer = TaskOfDevice(f.pid_device[e["pid"].GetInt64()]);
    for (const auto& m : e["args"].GetObject()) {
      if (std::string(m.name.GetString()).rfind("input", 0) != 0) continue;
      std::smatch sm;
      const std::string in = m.value.GetString();
      if (!std::regex_match(in, sm, input_re)) continue;
      const std::string node = sm[1].str();
      const std::string tensor =
          sm[2].matched && sm[2].str() != "0" ? node + ":" + sm[2].str() : node;
      for (const std::string& producer : producer_tasks[node]) {
        if (producer != consumer) f.s_edges.emplace(producer, consumer, tensor);
      }
    }
  }
  return f;
}

std::map<std::string, int> CountPerTask(const Capture& c, bool recv_only) {
  std::map<std::string, int> out;
  for (const OpRow& op : c.ops.Rows()) {
    if (recv_only && c.Str(c.OpType(op)) != "RecvTensor") continue;
    ++out[std::string(c.TaskLabelOf(c.devices[op.device].task))];
  }
  return out;
}

TEST(RealTraces, TfEncryptedTraceIsOnePsAndTwoWorkers) {
  REQUIRE_SHARED();
  const std::string path = SharedTrace(kTfe);
  const DomFacts f = ParseFacts(path);
  Capture c = LoadOrDie({path});
  EXPECT_EQ(c.CountTasks(JobKind::kPs), 1);
  EXPECT_EQ(c.CountTasks(JobKind::kWorker), 2);
  EXPECT_EQ(c.tasks.size(), 3u);
  EXPECT_EQ(c.TaskLabelOf(0), "ps:0");
  // Twelve device pids (1-6 and 7-12, Compute and Tensors) name three devices.
  std::set<std::string> dom_devices;
  for (const auto& [pid, dev] : f.pid_device) {
    if (!TaskOfDevice(dev).empty()) dom_devices.insert(dev);
  }
  ASSERT_EQ(f.pid_device.size(), 13u) << "12 device pids and Allocators";
  EXPECT_EQ(dom_devices.size(), 3u);
  std::set<std::string> devices;
  for (const DeviceRow& d : c.devices) devices.insert(std::string(c.Str(d.name)));
  EXPECT_EQ(devices, dom_devices);
  // Every op on its device.
  std::multiset<std::pair<std::string, std::string>> op_devices;
  for (const OpRow& op : c.ops.Rows()) {
    op_devices.emplace(std::string(c.Str(c.OpName(op))),
                       std::string(c.Str(c.devices[op.device].name)));
  }
  EXPECT_EQ(op_devices, f.op_devices);
  EXPECT_EQ(c.ops.size(), static_cast<size_t>(f.x_events));
  EXPECT_EQ(f.x_events, 19) << "the README's count";
  EXPECT_EQ(CountPerTask(c, false), f.ops);
  std::map<std::string, int> dom_recv;
  int recv_total = 0;
  for (const auto& [task, n] : f.recv) {
    if (n > 0) dom_recv[task] = n;
    recv_total += n;
  }
  EXPECT_EQ(recv_total, 7);
  EXPECT_EQ(CountPerTask(c, true), dom_recv);
  EXPECT_EQ(c.stats.TotalSkipped(), 0);
  ASSERT_EQ(c.stats.files.size(), 1u);
  EXPECT_EQ(c.stats.files[0].format, "tf1-timeline");
  EXPECT_EQ(c.stats.files[0].events, 38);
}

TEST(RealTraces, TfEncryptedDataFlowStaysOnThePs) {
  REQUIRE_SHARED();
  const std::string path = SharedTrace(kTfe);
  const DomFacts f = ParseFacts(path);
  Capture c = LoadOrDie({path});
  EXPECT_EQ(f.flow_pairs, 3);
  EXPECT_EQ(f.cross_task_flows, 0);
  ASSERT_EQ(c.flows.size(), static_cast<size_t>(f.flow_pairs));
  const uint32_t ps = c.FindTask("ps:0");
  for (const FlowRow& fl : c.flows) {
    EXPECT_EQ(c.devices[fl.src_device].task, ps);
    EXPECT_EQ(c.devices[fl.dst_device].task, ps);
  }
  for (const EdgeRow& e : c.edges) EXPECT_NE(e.kind, EdgeKind::kDataFlow) << c.Str(e.tensor);
}

TEST(RealTraces, TfEncryptedPartitionEdges) {
  REQUIRE_SHARED();
  const std::string path = SharedTrace(kTfe);
  const DomFacts f = ParseFacts(path);
  Capture c = LoadOrDie({path});
  std::set<Triple> got;
  for (const EdgeRow& e : c.edges) {
    if (e.kind != EdgeKind::kPartitionInput) continue;
    got.emplace(std::string(c.TaskLabelOf(e.src_task)), std::string(c.TaskLabelOf(e.dst_task)),
                std::string(c.Str(e.tensor)));
    EXPECT_EQ(e.count, 1);
    EXPECT_EQ(e.bytes, -1) << "the trace has no show_memory snapshots";
  }
  EXPECT_EQ(got, f.s_edges);
  const std::set<Triple> listed = {
      {"ps:0", "worker:0", "split"},  {"ps:0", "worker:0", "w/read"},
      {"ps:0", "worker:1", "split"},  {"ps:0", "worker:1", "w/read"},
      {"worker:0", "ps:0", "MatMul"}, {"worker:1", "ps:0", "MatMul_1"},
  };
  EXPECT_EQ(got, listed);
  EXPECT_EQ(c.stats.unresolved_inputs, 0);
}

TEST(RealTraces, TfEncryptedStepsStartAtSource) {
  REQUIRE_SHARED();
  Capture c = LoadOrDie({SharedTrace(kTfe)});
  // One _SOURCE per task: one step each, starting at its _SOURCE.
  ASSERT_EQ(c.steps.size(), c.tasks.size());
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    ASSERT_EQ(c.TaskSteps(t).size(), 1u) << c.TaskLabelOf(t);
    const StepRow& s = c.TaskSteps(t)[0];
    TimeNs source = -1;
    for (const OpRow& op : c.ops.Rows()) {
      if (c.devices[op.device].task == t && c.Str(c.OpName(op)) == "_SOURCE") source = op.start;
    }
    EXPECT_EQ(s.start, source) << c.TaskLabelOf(t);
    EXPECT_GT(s.end, s.start);
  }
}

TEST(RealTraces, IkhlestovIsOneLocalTask) {
  REQUIRE_SHARED();
  const std::string path = SharedTrace(kIkhlestov);
  const DomFacts f = ParseFacts(path);
  Capture c = LoadOrDie({path});
  ASSERT_EQ(c.tasks.size(), 1u);
  EXPECT_EQ(c.TaskLabelOf(0), "localhost:0");
  EXPECT_EQ(c.tasks[0].kind, JobKind::kLocal);
  ASSERT_EQ(c.devices.size(), 1u) << "legacy cpu:0, Compute and Tensors: one device";
  EXPECT_EQ(c.Str(c.devices[0].name), "/job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(c.ops.size(), static_cast<size_t>(f.x_events));
  EXPECT_EQ(f.ops.at("localhost:0"), f.x_events);
  std::multiset<std::string> names, dom_names;
  for (const OpRow& op : c.ops.Rows()) names.insert(std::string(c.Str(c.OpName(op))));
  for (const auto& [name, dev] : f.op_devices) dom_names.insert(name);
  EXPECT_EQ(names, dom_names);
  EXPECT_EQ(c.flows.size(), static_cast<size_t>(f.flow_pairs));
  EXPECT_TRUE(c.edges.empty()) << "one task: nothing crosses tasks";
  EXPECT_EQ(c.stats.TotalSkipped(), 0);
}

TEST(RealTraces, BinaryProfilerFilesAreRejected) {
  REQUIRE_SHARED();
  for (const char* name : {"tfprof_d6853e0_GPU-multi-worker_34.83.195.179_6003.xplane.pb",
                           "tfe_b3b9f35_local.trace"}) {
    const std::string path = SharedTrace(name);
    CaptureBuilder b;
    Status s = ReadTimeline(path, &b);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << s.message();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("byte "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("binary"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace tfdiag::test
