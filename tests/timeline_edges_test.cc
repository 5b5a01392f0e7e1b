// What ReadTimeline + CaptureBuilder::Finish recover from TF1 timeline semantics: cross-task
// edges from "_S<N>" inputs and DataFlow arrows, tensor sizes from show_memory snapshots, and
// steps from _SOURCE ops. Every trace is written by the test.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

const char* const kPs = "/job:ps/replica:0/task:0/device:CPU:0 Compute";
const char* const kPsTensors = "/job:ps/replica:0/task:0/device:CPU:0 Tensors";
const char* const kW0 = "/job:worker/replica:0/task:0/device:CPU:0 Compute";
const char* const kW1 = "/job:worker/replica:0/task:1/device:CPU:0 Compute";

Capture ReadOk(const std::string& json) {
  TempDir dir;
  WriteFile(dir.File("t.json"), json);
  ReadResult r = ReadOne(dir.File("t.json"));
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  return std::move(r.capture);
}

std::set<std::tuple<std::string, std::string, std::string>> EdgeSet(const Capture& c,
                                                                    EdgeKind kind) {
  std::set<std::tuple<std::string, std::string, std::string>> s;
  for (const EdgeRow& e : c.edges) {
    if (e.kind != kind) continue;
    s.emplace(std::string(c.TaskLabelOf(e.src_task)), std::string(c.TaskLabelOf(e.dst_task)),
              std::string(c.Str(e.tensor)));
  }
  return s;
}

TEST(TimelineEdges, PartitionInputsResolveToTheProducerTask) {
  Capture c = ReadOk(ObjectForm({
      MetaEvent(1, kPs),
      MetaEvent(2, kW0),
      MetaEvent(3, kW1),
      OpEvent(1, 0, 100, 5, "w", "VariableV2"),
      OpEvent(1, 0, 106, 2, "w/read", "Identity", {"w"}),
      OpEvent(1, 0, 110, 5, "split", "Split", {"concat/axis", "input_data/read"}),
      OpEvent(2, 0, 200, 8, "MatMul", "MatMul", {"split_S9", "w/read_S11"}),
      OpEvent(3, 0, 210, 4, "MatMul_1", "MatMul", {"split:1_S5", "w/read:0_S7", "^split_S3"}),
      OpEvent(1, 0, 300, 14, "concat", "ConcatV2", {"MatMul_S13", "MatMul_1_S15", "concat/axis"}),
  }));
  using T = std::tuple<std::string, std::string, std::string>;
  // Output 1 keeps its slot, output 0 ("w/read:0") is the node name, control inputs are no edge.
  const std::set<T> expected = {
      {"ps:0", "worker:0", "split"},   {"ps:0", "worker:0", "w/read"},
      {"ps:0", "worker:1", "split:1"}, {"ps:0", "worker:1", "w/read"},
      {"worker:0", "ps:0", "MatMul"},  {"worker:1", "ps:0", "MatMul_1"},
  };
  EXPECT_EQ(EdgeSet(c, EdgeKind::kPartitionInput), expected);
  EXPECT_TRUE(EdgeSet(c, EdgeKind::kDataFlow).empty());
  for (const EdgeRow& e : c.edges) {
    EXPECT_EQ(e.count, 1) << c.Str(e.tensor);
    EXPECT_EQ(e.bytes, -1) << "no show_memory snapshot: size unknown";
  }
  EXPECT_EQ(c.stats.unresolved_inputs, 0);
  // Sorted by (src_task, dst_task).
  for (size_t i = 1; i < c.edges.size(); ++i) {
    EXPECT_LE(std::make_pair(c.edges[i - 1].src_task, c.edges[i - 1].dst_task),
              std::make_pair(c.edges[i].src_task, c.edges[i].dst_task));
  }
}

TEST(TimelineEdges, SameTaskAndMissingProducersMakeNoEdge) {
  Capture c = ReadOk(ObjectForm({
      MetaEvent(1, kW0),
      MetaEvent(2, "/job:worker/replica:0/task:0/device:GPU:0 Compute"),
      OpEvent(1, 0, 100, 5, "local", "Const"),
      OpEvent(2, 0, 110, 5, "gpu_op", "MatMul", {"local_S2", "ghost_S4", "ghost2:1_S6"}),
  }));
  EXPECT_TRUE(c.edges.empty()) << "a CPU->GPU edge inside one task is not a cross-task edge";
  EXPECT_EQ(c.stats.unresolved_inputs, 2) << "ghost and ghost2 have no producer in the trace";
}

TEST(TimelineEdges, RepeatedTransfersAreCounted) {
  Capture c = ReadOk(ObjectForm({
      MetaEvent(1, kPs),
      MetaEvent(2, kW0),
      OpEvent(1, 0, 100, 5, "w/read", "Identity"),
      OpEvent(2, 0, 200, 5, "MatMul", "MatMul", {"w/read_S1"}),
      OpEvent(2, 0, 300, 5, "MatMul_1", "MatMul", {"w/read_S2"}),
      OpEvent(2, 1, 400, 5, "grad", "MatMul", {"w/read_S3"}),
  }));
  const EdgeRow* e = FindEdge(c, "ps:0", "worker:0", "w/read");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->count, 3);
  EXPECT_EQ(c.edges.size(), 1u);
}

TEST(TimelineEdges, DataFlowMakesAnEdgeOnlyAcrossTasks) {
  Capture c = ReadOk(ObjectForm({
      MetaEvent(1, kPs),
      MetaEvent(2, kW0),
      OpEvent(1, 0, 100, 5, "w/read", "Identity"),
      FlowEvent('s', 1, 0, 105, 0, "w/read"),
      FlowEvent('t', 2, 0, 200, 0, "w/read"),
      OpEvent(2, 0, 200, 5, "MatMul", "MatMul"),
      OpEvent(1, 1, 90, 1, "concat/axis", "Const"),
      FlowEvent('s', 1, 1, 91, 1, "concat/axis"),
      FlowEvent('t', 1, 0, 100, 1, "concat/axis"),
  }));
  ASSERT_EQ(c.flows.size(), 2u);
  const uint32_t ps = c.FindTask("ps:0"), w0 = c.FindTask("worker:0");
  ASSERT_NE(ps, kNoIndex);
  ASSERT_NE(w0, kNoIndex);
  int cross = 0, within = 0;
  for (const FlowRow& f : c.flows) {
    const uint32_t st = c.devices[f.src_device].task, dt = c.devices[f.dst_device].task;
    if (c.Str(f.name) == "w/read") {
      ++cross;
      EXPECT_EQ(st, ps);
      EXPECT_EQ(dt, w0);
      EXPECT_EQ(f.src_ts, 105000);
      EXPECT_EQ(f.dst_ts, 200000);
    } else {
      ++within;
      EXPECT_EQ(c.Str(f.name), "concat/axis");
      EXPECT_EQ(st, ps);
      EXPECT_EQ(dt, ps);
    }
  }
  EXPECT_EQ(cross, 1);
  EXPECT_EQ(within, 1);
  using T = std::tuple<std::string, std::string, std::string>;
  EXPECT_EQ(EdgeSet(c, EdgeKind::kDataFlow), (std::set<T>{{"ps:0", "worker:0", "w/read"}}));
  EXPECT_EQ(c.edges.size(), 1u);
}

TEST(TimelineEdges, FlowEndWithoutStartIsSkipped) {
  Capture c = ReadOk(ObjectForm(
      {MetaEvent(1, kPs), FlowEvent('t', 1, 0, 100, 7, "x"), OpEvent(1, 0, 100, 5, "op", "NoOp")}));
  EXPECT_TRUE(c.flows.empty());
  EXPECT_EQ(c.stats.skipped.at("flow end without a flow start"), 1);
  EXPECT_EQ(c.ops.size(), 1u);
}

TEST(TimelineEdges, ShowMemorySnapshotsSizeTensorsAndEdges) {
  const int64_t kReadBytes = 4096;
  Capture c = ReadOk(ObjectForm({
      MetaEvent(1, kPs),
      MetaEvent(2, kPsTensors),
      MetaEvent(3, kW0),
      OpEvent(1, 0, 100, 5, "w/read", "Identity"),
      OpEvent(1, 0, 100, 5, "split", "Split"),
      TensorEvent('N', 2, 100, 11, "w/read"),
      TensorEvent('O', 2, 105, 11, "w/read", kReadBytes),
      TensorEvent('O', 2, 106, 12, "nosize"),  // a snapshot without requested_bytes
      OpEvent(3, 0, 200, 5, "MatMul", "MatMul", {"w/read_S3", "split_S4"}),
      OpEvent(3, 0, 300, 5, "MatMul_1", "MatMul", {"w/read_S5"}),
      TensorEvent('D', 2, 400, 11, "w/read"),
  }));
  ASSERT_EQ(c.tensors.size(), 1u);
  EXPECT_EQ(c.Str(c.tensors[0].name), "w/read");
  EXPECT_EQ(c.tensors[0].bytes, kReadBytes);
  EXPECT_EQ(c.devices[c.tensors[0].device].task, c.FindTask("ps:0"))
      << "the Tensors pid is the PS device";
  EXPECT_EQ(c.devices.size(), 2u);
  const EdgeRow* read = FindEdge(c, "ps:0", "worker:0", "w/read");
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(read->count, 2);
  EXPECT_EQ(read->bytes, 2 * kReadBytes) << "two sized transfers";
  const EdgeRow* split = FindEdge(c, "ps:0", "worker:0", "split");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->bytes, -1) << "split was never snapshotted";
  EXPECT_EQ(c.stats.ignored.at("tensor object create/delete"), 2);
  EXPECT_EQ(c.stats.ignored.at("object snapshot without requested_bytes"), 1);
  EXPECT_EQ(c.stats.TotalSkipped(), 0);
}

TEST(TimelineEdges, StepsAreRecoveredFromSourceOps) {
  struct Step {
    int64_t start_us, end_us;
  };
  std::vector<std::string> ev = {MetaEvent(1, kPs), MetaEvent(2, kW0), MetaEvent(3, kW1)};
  std::map<int64_t, std::vector<Step>> expected;  // pid -> steps
  for (int64_t pid : {2, 3}) {
    const int64_t base = 1000 * pid;
    for (int64_t k = 0; k < 3; ++k) {
      const int64_t s = base + 100 * k;
      ev.push_back(OpEvent(pid, 0, s, 1, "_SOURCE", "NoOp"));
      ev.push_back(OpEvent(pid, 0, s + 10, 20, "MatMul", "MatMul"));
      // The last op of the step runs on another lane and ends last.
      const int64_t last_dur = 30 + 10 * k + pid;
      ev.push_back(OpEvent(pid, 1, s + 15, last_dur, "Relu", "Relu"));
      expected[pid].push_back({s, s + 15 + last_dur});
    }
  }
  ev.push_back(OpEvent(1, 0, 500, 10, "w", "VariableV2"));
  ev.push_back(OpEvent(1, 0, 600, 10, "w/read", "Identity"));
  Capture c = ReadOk(ObjectForm(ev));
  const std::map<int64_t, std::string> label = {{2, "worker:0"}, {3, "worker:1"}};
  for (const auto& [pid, steps] : expected) {
    const uint32_t t = c.FindTask(label.at(pid));
    ASSERT_NE(t, kNoIndex);
    const StepRange got = c.TaskSteps(t);
    ASSERT_EQ(got.size(), steps.size()) << label.at(pid);
    for (size_t k = 0; k < steps.size(); ++k) {
      EXPECT_EQ(got[k].start, steps[k].start_us * 1000) << label.at(pid) << " step " << k;
      EXPECT_EQ(got[k].end, steps[k].end_us * 1000) << label.at(pid) << " step " << k;
    }
  }
  // A task without _SOURCE has one step spanning its ops.
  const uint32_t ps = c.FindTask("ps:0");
  const StepRange ps_steps = c.TaskSteps(ps);
  ASSERT_EQ(ps_steps.size(), 1u);
  EXPECT_EQ(ps_steps[0].start, 500000);
  EXPECT_EQ(ps_steps[0].end, 610000);
}

}  // namespace
}  // namespace tfdiag::test
