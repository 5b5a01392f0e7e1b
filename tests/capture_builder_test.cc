// CaptureBuilder (devices, RemapDevices, edge attribution) and the per-task figures derived from
// a Capture (UnionLength, ComputeTaskStats: busy time, PS share, hosted variables). Captures are
// built directly through the builder API; expectations are computed from the rows added.
#include "core/capture_builder.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <set>

#include "analyzers/task_stats.h"

namespace tfdiag {
namespace {

using Intervals = std::vector<std::pair<TimeNs, TimeNs>>;

uint32_t Dev(CaptureBuilder& b, const std::string& name) {
  StatusOr<DeviceName> d = ParseDeviceName(name);
  EXPECT_TRUE(d.ok()) << name;
  return b.AddDevice(*d);
}

void Op(CaptureBuilder& b, uint32_t dev, TimeNs start, TimeNs dur, const std::string& name,
        const std::string& type, const std::vector<std::string>& inputs = {}, uint16_t lane = 0) {
  std::vector<StrId> ids;
  for (const std::string& in : inputs) ids.push_back(b.Intern(in));
  b.AddOp(start, dur, dev, lane, b.Intern(name), b.Intern(type), ids.data(), ids.size());
}

std::string DevName(int task, const char* job = "worker") {
  return "/job:" + std::string(job) + "/replica:0/task:" + std::to_string(task) + "/device:CPU:0";
}

// An independent union length: count covered unit cells (intervals are small integers here).
TimeNs CellUnion(const Intervals& iv) {
  TimeNs hi = 0;
  for (const auto& [s, e] : iv) hi = std::max(hi, e);
  std::vector<bool> cell(static_cast<size_t>(hi), false);
  for (const auto& [s, e] : iv) {
    for (TimeNs t = s; t < e; ++t) cell[static_cast<size_t>(t)] = true;
  }
  return std::count(cell.begin(), cell.end(), true);
}

TEST(UnionLength, OverlappingNestedDisjointTouching) {
  const std::map<std::string, Intervals> cases = {
      {"overlapping lanes", {{0, 10}, {5, 15}}},
      {"nested", {{0, 100}, {10, 20}, {30, 40}}},
      {"disjoint", {{20, 30}, {0, 10}}},
      {"touching", {{0, 10}, {10, 20}}},
      {"chain", {{0, 5}, {3, 8}, {7, 12}, {30, 31}}},
      {"zero length", {{5, 5}, {0, 3}}},
      {"duplicates", {{2, 9}, {2, 9}, {2, 9}}},
  };
  const std::map<std::string, TimeNs> by_hand = {
      {"overlapping lanes", 15}, {"nested", 100}, {"disjoint", 20},
      {"touching", 20},          {"chain", 13},   {"zero length", 3},
      {"duplicates", 7}};
  for (const auto& [what, iv] : cases) {
    Intervals copy = iv;
    EXPECT_EQ(UnionLength(&copy), CellUnion(iv)) << what;
    EXPECT_EQ(CellUnion(iv), by_hand.at(what)) << what;
  }
  Intervals none;
  EXPECT_EQ(UnionLength(&none), 0);
}

TEST(UnionLength, RandomIntervalsMatchCellCount) {
  uint32_t x = 12345;
  auto rnd = [&](uint32_t n) { return (x = x * 1103515245u + 12345u) / 65536u % n; };
  for (int round = 0; round < 200; ++round) {
    Intervals iv;
    const int n = 1 + static_cast<int>(rnd(8));
    for (int i = 0; i < n; ++i) {
      TimeNs s = rnd(100), d = rnd(30);
      iv.emplace_back(s, s + d);
    }
    Intervals copy = iv;
    ASSERT_EQ(UnionLength(&copy), CellUnion(iv)) << "round " << round;
  }
}

// A task with one device takes the one-pass union over its (start-ordered) ops: it must equal the
// cell count on random overlapping ops, nested ones included, for any thread count.
TEST(ComputeTaskStats, OneDeviceBusyIsTheUnionOfRandomOps) {
  std::mt19937 gen(11);
  auto rnd = [&](int n) { return static_cast<TimeNs>(gen() % static_cast<unsigned>(n)); };
  for (int round = 0; round < 50; ++round) {
    CaptureBuilder b;
    const uint32_t w0 = Dev(b, DevName(0));
    Intervals iv;
    for (int i = 0; i < 1 + round % 17; ++i) {
      const TimeNs s = rnd(100), d = rnd(30);
      Op(b, w0, s, d, "op" + std::to_string(i), "MatMul", {}, static_cast<uint16_t>(i % 3));
      iv.emplace_back(s, s + d);
    }
    Capture c = b.Finish();
    for (int threads : {1, 2}) {
      const TaskStats* s = ComputeTaskStats(c, threads).Find("worker:0");
      ASSERT_NE(s, nullptr);
      EXPECT_EQ(s->devices, 1);
      EXPECT_EQ(s->busy_ns, CellUnion(iv)) << "round " << round;
    }
  }
}

TEST(ComputeTaskStats, BusyIsTheUnionWhenLanesOverlap) {
  CaptureBuilder b;
  const uint32_t w0 = Dev(b, DevName(0)), w1 = Dev(b, DevName(1));
  const uint32_t w0gpu = Dev(b, "/job:worker/replica:0/task:0/device:GPU:0");
  Op(b, w0, 0, 100, "a", "MatMul", {}, 0);
  Op(b, w0, 50, 100, "b", "MatMul", {}, 1);  // overlaps a on another lane
  Op(b, w0gpu, 140, 20, "c", "Relu");        // another device of the same task
  Op(b, w1, 0, 40, "d", "MatMul");
  Op(b, w1, 60, 40, "e", "RecvTensor");
  Capture c = b.Finish();
  TaskStatsTable t = ComputeTaskStats(c);
  const TaskStats* s0 = t.Find("worker:0");
  const TaskStats* s1 = t.Find("worker:1");
  ASSERT_NE(s0, nullptr);
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(s0->op_time_ns, 100 + 100 + 20);
  EXPECT_EQ(s0->busy_ns, CellUnion({{0, 100}, {50, 150}, {140, 160}}));
  EXPECT_NE(s0->busy_ns, s0->op_time_ns);
  EXPECT_EQ(s0->devices, 2);
  EXPECT_EQ(s0->ops, 3);
  EXPECT_EQ(s0->first_ns, 0);
  EXPECT_EQ(s0->last_ns, 160);
  EXPECT_EQ(s1->busy_ns, 80);
  EXPECT_EQ(s1->op_time_ns, 80);
  EXPECT_EQ(s1->recv_count, 1);
  EXPECT_EQ(s1->recv_ns, 40);
  EXPECT_EQ(t.span_ns, 160);
  EXPECT_DOUBLE_EQ(s1->busy_pct, 100.0 * 80 / 160);
  EXPECT_EQ(t.num_workers, 2);
  EXPECT_EQ(t.num_ps, 0);
}

TEST(ComputeTaskStats, PsSharesSumToOne) {
  CaptureBuilder b;
  const std::vector<Intervals> ps_ops = {
      {{0, 100}, {50, 120}}, {{10, 20}}, {{0, 30}, {40, 70}, {60, 90}}};
  std::vector<TimeNs> busy;
  for (size_t p = 0; p < ps_ops.size(); ++p) {
    const uint32_t d = Dev(b, DevName(static_cast<int>(p), "ps"));
    uint16_t lane = 0;
    for (const auto& [s, e] : ps_ops[p]) Op(b, d, s, e - s, "op", "Foo", {}, lane++);
    busy.push_back(CellUnion(ps_ops[p]));
  }
  Op(b, Dev(b, DevName(0)), 0, 500, "worker_op", "MatMul");  // workers have no share
  Capture c = b.Finish();
  TaskStatsTable t = ComputeTaskStats(c);
  EXPECT_EQ(t.num_ps, 3);
  const TimeNs total = std::accumulate(busy.begin(), busy.end(), TimeNs{0});
  EXPECT_EQ(t.ps_busy_total_ns, total);
  double sum = 0;
  for (size_t p = 0; p < busy.size(); ++p) {
    const TaskStats* s = t.Find("ps:" + std::to_string(p));
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->busy_ns, busy[p]);
    EXPECT_DOUBLE_EQ(s->ps_share, static_cast<double>(busy[p]) / static_cast<double>(total));
    sum += s->ps_share;
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_EQ(t.Find("worker:0")->ps_share, 0);
}

TEST(ComputeTaskStats, VariablesHostedWithReadsConsumersAndSlots) {
  CaptureBuilder b;
  const uint32_t ps = Dev(b, DevName(0, "ps"));
  Op(b, ps, 0, 5, "w", "VariableV2");
  Op(b, ps, 5, 2, "w/read", "Identity", {"w"});
  Op(b, ps, 10, 3, "w/Adam", "VariableV2");
  Op(b, ps, 13, 3, "w/Adam_1", "VariableV2");
  Op(b, ps, 20, 20, "Adam/update_w/ApplyAdam", "ApplyAdam", {"w", "w/Adam", "w/Adam_1", "lr"});
  Op(b, ps, 40, 1, "b", "VariableV2");
  Op(b, ps, 41, 1, "b/read", "Identity", {"b"});
  Op(b, ps, 42, 4, "gather", "GatherV2", {"b/read:0", "ids_S3"});
  Op(b, ps, 50, 10, "unrelated", "NoOp");
  const uint32_t w0 = Dev(b, DevName(0));
  Op(b, w0, 0, 7, "local_var", "VariableV2");  // only PS host variables in the table
  TensorRow tr;
  tr.name = b.Intern("w/read");
  tr.device = ps;
  tr.bytes = 4000;
  b.AddTensor(tr);
  Capture c = b.Finish();
  TaskStatsTable t = ComputeTaskStats(c);
  const TaskStats* s = t.Find("ps:0");
  ASSERT_NE(s, nullptr);
  const TimeNs w_ns = 5 + 2 + 3 + 3 + 20, b_ns = 1 + 1 + 4, all_ns = w_ns + b_ns + 10;
  ASSERT_EQ(s->variables.size(), 2u) << "w/Adam and w/Adam_1 fold into w";
  EXPECT_EQ(s->variables[0].name, "w") << "sorted by time, descending";
  EXPECT_EQ(s->variables[0].ops, 5);
  EXPECT_EQ(s->variables[0].total_ns, w_ns);
  EXPECT_EQ(s->variables[0].bytes, 4000) << "size of <var>/read";
  EXPECT_DOUBLE_EQ(s->variables[0].share, static_cast<double>(w_ns) / all_ns);
  EXPECT_EQ(s->variables[1].name, "b");
  EXPECT_EQ(s->variables[1].ops, 3);
  EXPECT_EQ(s->variables[1].total_ns, b_ns);
  EXPECT_EQ(s->variables[1].bytes, -1);
  EXPECT_TRUE(t.Find("worker:0")->variables.empty());
}

// A variable some op of which reads or updates rows is a table (VariableLoad::sparse, which
// slow-ps-host's two-PS comparison keeps apart from dense variables): a gather, a sparse apply,
// or the scatter update TF1's SGD gives a table whose reads are whole (Identity).
TEST(ComputeTaskStats, TablesReadOrUpdatedByRowsAreSparse) {
  CaptureBuilder b;
  const uint32_t ps = Dev(b, DevName(0, "ps"));
  Op(b, ps, 0, 1, "w", "VariableV2");
  Op(b, ps, 1, 2, "w/read", "Identity", {"w"});
  Op(b, ps, 3, 5, "Adam/update_w/ApplyAdam", "ApplyAdam", {"w", "lr"});
  Op(b, ps, 10, 1, "e", "VariableV2");
  Op(b, ps, 11, 2, "e/read", "Identity", {"e"});
  Op(b, ps, 13, 5, "GradientDescent/update_e/ScatterSub", "ScatterSub", {"e", "idx", "upd"});
  Op(b, ps, 20, 1, "t", "VariableV2");
  Op(b, ps, 21, 4, "t/Gather", "GatherV2", {"t", "ids_S3"});
  Op(b, ps, 30, 1, "a", "VariableV2");
  Op(b, ps, 31, 6, "Adagrad/update_a/SparseApplyAdagrad", "SparseApplyAdagrad", {"a", "acc"});
  const Capture c = b.Finish();
  const TaskStatsTable t = ComputeTaskStats(c);
  const TaskStats* s = t.Find("ps:0");
  ASSERT_NE(s, nullptr);
  std::map<std::string, bool> sparse;
  for (const VariableLoad& v : s->variables) sparse[v.name] = v.sparse;
  ASSERT_EQ(sparse.size(), 4u);
  EXPECT_FALSE(sparse["w"]) << "a dense kernel: read whole, applied whole";
  EXPECT_TRUE(sparse["e"]) << "read whole, updated by rows";
  EXPECT_TRUE(sparse["t"]) << "gathered";
  EXPECT_TRUE(sparse["a"]) << "a sparse apply";
}

// Two workers, each with one step of 1,000 ns (a _SOURCE at 0 and an op to 1,000), produce
// "gradients/g" (worker:1's in a later step when `w1_late`); the PS consumes "gradients/g_S5"
// at `consumer_start`. The input is resolved within the job's step either side of the consumer
// (issue 29): the one worker that produced g there is the sender; two are ambiguous (counted,
// never credited). Returns the sender's label, "ambiguous" or "edges: <n>".
std::string ProducerOfEdge(TimeNs w0_end, TimeNs w1_end, TimeNs consumer_start,
                           bool w1_late = false) {
  CaptureBuilder b;
  const uint32_t ps = Dev(b, DevName(0, "ps"));
  const uint32_t w[2] = {Dev(b, DevName(0)), Dev(b, DevName(1))};
  for (int k = 0; k < 2; ++k) {
    Op(b, w[k], 0, 1, "_SOURCE", "NoOp");
    Op(b, w[k], 1, 999, "fill", "MatMul");
  }
  if (w1_late) {
    Op(b, w[1], 5000, 1, "_SOURCE", "NoOp");
    Op(b, w[1], 5001, 999, "fill", "MatMul");
  }
  Op(b, w[0], w0_end - 10, 10, "gradients/g", "AddN");
  Op(b, w[1], w1_end - 10, 10, "gradients/g", "AddN");
  Op(b, ps, consumer_start, 5, "apply", "ApplyGradientDescent", {"w", "gradients/g_S5"});
  Capture c = b.Finish();
  EXPECT_EQ(c.stats.unresolved_inputs, 0);
  if (c.stats.ambiguous_inputs == 1 && c.edges.empty()) return "ambiguous";
  if (c.edges.size() != 1) return "edges: " + std::to_string(c.edges.size());
  const EdgeRow& e = c.edges[0];
  EXPECT_EQ(c.TaskLabelOf(e.dst_task), "ps:0");
  EXPECT_EQ(c.Str(e.tensor), "gradients/g");
  EXPECT_EQ(e.kind, EdgeKind::kPartitionInput);
  EXPECT_EQ(e.count, 1);
  EXPECT_EQ(c.stats.ambiguous_inputs, 0);
  return std::string(c.TaskLabelOf(e.src_task));
}

TEST(CaptureBuilderEdges, ProducerIsTheOneTaskThatProducedTheNodeInTheConsumersStep) {
  // Both workers produced g in the step: either could have sent it.
  EXPECT_EQ(ProducerOfEdge(100, 200, 205), "ambiguous");
  EXPECT_EQ(ProducerOfEdge(300, 100, 205), "ambiguous");
  // worker:1's g is a step later (5,100 ns, beyond 1,000 ns of the consumer): worker:0 sent it,
  // even when its g ended after the consumer started (clock skew between hosts).
  EXPECT_EQ(ProducerOfEdge(100, 5100, 205, true), "worker:0");
  EXPECT_EQ(ProducerOfEdge(300, 5100, 205, true), "worker:0");
  EXPECT_EQ(ProducerOfEdge(100, 5100, 5150, true), "worker:1");
}

TEST(CaptureBuilderEdges, ProducerOnTheConsumerTaskIsNotAnEdge) {
  for (const bool worker_in_step : {true, false}) {
    CaptureBuilder b;
    const uint32_t ps = Dev(b, DevName(0, "ps"));
    const uint32_t w0 = Dev(b, DevName(0));
    Op(b, ps, 108, 10, "g", "AddN");
    // worker:0's one step is 5 ns: the PS consumer's window is [115, 125].
    Op(b, w0, worker_in_step ? 112 : 50, 5, "g", "AddN");
    Op(b, ps, 120, 5, "apply", "Apply", {"g_S1"});
    Capture c = b.Finish();
    if (worker_in_step) {
      // The worker's g in the step is the cross-task transfer; the PS's own is not a candidate.
      ASSERT_EQ(c.edges.size(), 1u);
      EXPECT_EQ(c.TaskLabelOf(c.edges[0].src_task), "worker:0");
    } else {
      // Only the PS's own g in the step: a transfer within the task, not an edge, not unresolved.
      EXPECT_TRUE(c.edges.empty());
      EXPECT_EQ(c.stats.unresolved_inputs, 0);
    }
    EXPECT_EQ(c.stats.ambiguous_inputs, 0);
  }
}

// Many producers of one name, runs of them on the consumer's own task included, against a brute
// force of the rule (core/partition_inputs.h, ProducerEnds::Find) with the window computed here: no
// _SOURCE ops, so each task has one step from its first op to its last end; a PS consumer's
// window is the median worker step either side of it (without worker steps, the PS's own step).
TEST(CaptureBuilderEdges, ProducerChoiceMatchesBruteForceWithRunsOnTheConsumerTask) {
  std::mt19937 gen(7);
  for (int round = 0; round < 300; ++round) {
    CaptureBuilder b;
    const uint32_t devs[3] = {Dev(b, DevName(0, "ps")), Dev(b, DevName(0)), Dev(b, DevName(1))};
    const char* labels[3] = {"ps:0", "worker:0", "worker:1"};
    std::vector<std::pair<TimeNs, int>> producers;  // (end, task index in task order)
    TimeNs first[3] = {INT64_MAX, INT64_MAX, INT64_MAX},
           last[3] = {INT64_MIN, INT64_MIN, INT64_MIN};
    const int n = 1 + static_cast<int>(gen() % 12);
    for (int i = 0; i < n; ++i) {
      // Mostly the PS itself, so its runs are long.
      const int t = gen() % 3 == 0 ? 1 + static_cast<int>(gen() % 2) : 0;
      const TimeNs end = 10 + static_cast<TimeNs>(gen() % 50);
      Op(b, devs[t], end - 5, 5, "g", "AddN");
      producers.emplace_back(end, t);
      first[t] = std::min(first[t], end - 5);
      last[t] = std::max(last[t], end);
    }
    const TimeNs start = static_cast<TimeNs>(gen() % 70);
    Op(b, devs[0], start, 1, "apply", "Apply", {"g_S1"});
    first[0] = std::min(first[0], start);
    last[0] = std::max(last[0], start + 1);
    std::vector<TimeNs> worker_steps;
    for (int t = 1; t < 3; ++t) {
      if (first[t] != INT64_MAX) worker_steps.push_back(last[t] - first[t]);
    }
    std::sort(worker_steps.begin(), worker_steps.end());
    TimeNs lo = first[0], hi = std::max(start, last[0]);
    if (!worker_steps.empty() && worker_steps[worker_steps.size() / 2] > 0) {
      const TimeNs job = worker_steps[worker_steps.size() / 2];
      lo = start - job, hi = start + job;
    }
    std::set<int> in_window, anywhere;
    bool local = false;
    for (const auto& [end, t] : producers) {
      if (t == 0) {
        local |= end >= lo && end <= start;
        continue;
      }
      anywhere.insert(t);
      if (end >= lo && end <= hi) in_window.insert(t);
    }
    int expect = -1;
    if (in_window.size() == 1) expect = *in_window.begin();
    if (in_window.empty() && !local && anywhere.size() == 1) expect = *anywhere.begin();
    Capture c = b.Finish();
    EXPECT_EQ(c.stats.ambiguous_inputs, in_window.size() > 1 ? 1 : 0) << "round " << round;
    EXPECT_EQ(c.stats.unresolved_inputs, in_window.empty() && !local && anywhere.size() != 1)
        << "round " << round;
    if (expect < 0) {
      EXPECT_TRUE(c.edges.empty()) << "round " << round;
      continue;
    }
    ASSERT_EQ(c.edges.size(), 1u) << "round " << round;
    EXPECT_EQ(c.TaskLabelOf(c.edges[0].src_task), labels[expect]) << "round " << round;
  }
}

TEST(CaptureBuilder, DevicesMergeAndTasksSortPsFirst) {
  CaptureBuilder b;
  const uint32_t w = Dev(b, "/job:worker/replica:0/task:0/cpu:0");
  EXPECT_EQ(Dev(b, "/job:worker/replica:0/task:0/device:CPU:0 Tensors"), w);
  const uint32_t local = Dev(b, "/gpu:0/stream:12");
  EXPECT_NE(local, w);
  const uint32_t ps1 = Dev(b, DevName(1, "ps")), ps0 = Dev(b, DevName(0, "ps"));
  const uint32_t unknown = b.AddUnknownDevice(77);
  EXPECT_EQ(b.AddUnknownDevice(77), unknown);
  for (uint32_t d : {w, local, ps1, ps0, unknown}) Op(b, d, 10, 1, "op", "NoOp");
  Capture c = b.Finish();
  std::vector<std::string> labels;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) labels.emplace_back(c.TaskLabelOf(t));
  EXPECT_EQ(labels,
            (std::vector<std::string>{"ps:0", "ps:1", "worker:0", "localhost:0", "unknown:77"}));
  EXPECT_EQ(c.CountTasks(JobKind::kPs), 2);
  EXPECT_EQ(c.devices.size(), 5u);
  for (size_t d = 1; d < c.devices.size(); ++d) EXPECT_LE(c.devices[d - 1].task, c.devices[d].task);
  EXPECT_EQ(c.FindTask("nope:0"), kNoIndex);
}

TEST(CaptureBuilder, RemapDevicesDropsRowsMappedToNoIndex) {
  CaptureBuilder b;
  const uint32_t d0 = Dev(b, DevName(0, "ps")), d1 = Dev(b, DevName(0));
  // A row from an earlier file, on real device d1: it must not be remapped.
  Op(b, d1, 1, 1, "earlier", "NoOp");
  const size_t first_op = b.op_count(), first_flow = b.flow_count(),
               first_tensor = b.tensor_count();
  // Rows with provisional ids 0, 1, 2; provisional 1 is a non-device (Allocators).
  Op(b, 0, 10, 1, "on_p0", "NoOp");
  Op(b, 1, 20, 1, "on_p1", "NoOp");
  Op(b, 2, 30, 1, "on_p2", "NoOp");
  b.AddFlow({10, 30, 0, 2, b.Intern("kept_flow")});
  b.AddFlow({10, 20, 0, 1, b.Intern("dropped_flow")});
  b.AddTensor({b.Intern("kept_tensor"), 2, 8});
  b.AddTensor({b.Intern("dropped_tensor"), 1, 8});
  const std::vector<uint32_t> map = {d1, kNoIndex, d0};
  EXPECT_EQ(b.RemapDevices(first_op, first_flow, first_tensor, map), 3u);
  EXPECT_EQ(b.op_count(), first_op + 2);
  EXPECT_EQ(b.flow_count(), first_flow + 1);
  EXPECT_EQ(b.tensor_count(), first_tensor + 1);
  Capture c = b.Finish();
  auto task_of = [&](const std::string& name) {
    for (const OpRow& op : c.ops.Rows()) {
      if (c.Str(c.OpName(op)) == name) return std::string(c.TaskLabelOf(c.devices[op.device].task));
    }
    return std::string("missing");
  };
  EXPECT_EQ(task_of("earlier"), "worker:0");
  EXPECT_EQ(task_of("on_p0"), "worker:0");
  EXPECT_EQ(task_of("on_p1"), "missing");
  EXPECT_EQ(task_of("on_p2"), "ps:0");
  ASSERT_EQ(c.flows.size(), 1u);
  EXPECT_EQ(c.Str(c.flows[0].name), "kept_flow");
  EXPECT_EQ(c.TaskLabelOf(c.devices[c.flows[0].src_device].task), "worker:0");
  EXPECT_EQ(c.TaskLabelOf(c.devices[c.flows[0].dst_device].task), "ps:0");
  ASSERT_EQ(c.tensors.size(), 1u);
  EXPECT_EQ(c.TaskLabelOf(c.devices[c.tensors[0].device].task), "ps:0");
  // device_ops ranges cover exactly each device's ops.
  for (uint32_t d = 0; d < c.devices.size(); ++d) {
    for (uint32_t i = c.device_ops[d].first; i < c.device_ops[d].second; ++i) {
      EXPECT_EQ(c.ops[i].device, d);
    }
  }
}

}  // namespace
}  // namespace tfdiag

namespace tfdiag {
namespace {

std::vector<std::string> InputsOf(const Capture& c, const OpRow& op) {
  std::vector<std::string> v;
  const NodeRow& n = c.Node(op);
  for (uint32_t i = 0; i < n.inputs_count; ++i) v.emplace_back(c.Str(c.inputs[n.inputs_begin + i]));
  return v;
}

// A node runs with the same type and inputs in every step: ops of one node share one NodeRow;
// any difference (a list, a count, the type) makes a node of its own, equal nodes found apart
// are merged by Finish, and every op still reads back exactly what it was given.
// A PS device's ops from several workers' files come as runs one after another, each spanning
// the same time: far from the nearly sorted order insertion sort expects. Such devices (past
// 32,768 ops) are sorted after the per-device loop: one larger than a thread's share on every
// thread (here the first, 80,000 ops), the others one per thread (the second, 40,000). The order
// is the same as on one thread and total.
TEST(CaptureBuilder, InterleavedRunsOfLargeDevicesSortTheSameOnAnyThreads) {
  auto build = [](int threads) {
    CaptureBuilder b;
    const uint32_t devs[] = {Dev(b, DevName(0)), Dev(b, DevName(1))};
    const std::vector<std::string> names = {"a", "b", "c", "RecvTensor"};
    for (int run = 0; run < 4; ++run) {  // four "files"
      for (int dev = 0; dev < 2; ++dev) {
        for (int i = 0; i < 20000 / (dev + 1); ++i) {  // each run over the same span
          const TimeNs start = 1000 * i + 7 * run + (i % 5 == 0 ? 3 : 0);
          Op(b, devs[dev], start, 1 + (i * 7919 + run) % 900,
             names[static_cast<size_t>(i + run) % 4], "T", {});
        }
      }
    }
    return b.Finish(threads);
  };
  const Capture one = build(1), two = build(2);
  ASSERT_EQ(one.ops.size(), 120000u);
  ASSERT_EQ(two.ops.size(), one.ops.size());
  for (size_t i = 0; i < one.ops.size(); ++i) {
    const OpRow &x = one.ops[i], &y = two.ops[i];
    ASSERT_EQ(x.start, y.start) << i;
    ASSERT_EQ(x.dur(), y.dur()) << i;
    ASSERT_EQ(x.device, y.device) << i;
    ASSERT_EQ(one.Str(one.OpName(x)), two.Str(two.OpName(y))) << i;
    if (i > 0 && two.ops[i - 1].device == y.device) {
      const OpRow& p = two.ops[i - 1];
      ASSERT_TRUE(p.start < y.start || (p.start == y.start && p.dur() >= y.dur())) << i;
    }
  }
}

// A name whose input changes from op to op (RecvTensor, one per tensor received) has several
// nodes: each is stored once however the ops alternate, not once per change.
TEST(CaptureBuilder, AlternatingNodesOfOneNameAreStoredOnce) {
  CaptureBuilder b;
  const uint32_t d = Dev(b, DevName(0));
  const std::vector<std::string> tensors = {"w0/read", "w1/read", "w2/read"};
  for (int i = 0; i < 300; ++i) {
    Op(b, d, 100 * i, 10, "RecvTensor", "RecvTensor", {tensors[static_cast<size_t>(i) % 3]});
  }
  Capture c = b.Finish();
  ASSERT_EQ(c.ops.size(), 300u);
  EXPECT_EQ(c.nodes.size(), 3u);
  EXPECT_EQ(c.inputs.size(), 3u) << "each list stored once, not 300 times";
  for (size_t i = 0; i < c.ops.size(); ++i) {
    ASSERT_EQ(InputsOf(c, c.ops[i]), (std::vector<std::string>{tensors[i % 3]})) << i;
  }
}

TEST(CaptureBuilder, OpsOfOneNodeShareOneNodeRow) {
  CaptureBuilder b;
  const uint32_t d = Dev(b, DevName(0));
  const std::vector<std::vector<std::string>> lists = {
      {"a", "b"}, {"a", "b"}, {"a", "c"}, {"a"}, {"a", "b"}, {"a", "c"}, {}, {"a", "b"}};
  for (size_t i = 0; i < lists.size(); ++i) Op(b, d, 100 * i, 10, "m", "MatMul", lists[i]);
  Op(b, d, 5000, 10, "other", "MatMul", {"a", "b"});       // another name: its own node
  Op(b, d, 6000, 10, "other", "BatchMatMul", {"a", "b"});  // another type: its own node
  Capture c = b.Finish();
  ASSERT_EQ(c.ops.size(), lists.size() + 2);
  for (size_t i = 0; i < lists.size(); ++i) {
    EXPECT_EQ(InputsOf(c, c.ops[i]), lists[i]) << i;
    EXPECT_EQ(c.Str(c.OpName(c.ops[i])), "m") << i;
    EXPECT_EQ(c.Str(c.OpType(c.ops[i])), "MatMul") << i;
  }
  EXPECT_EQ(InputsOf(c, c.ops[8]), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c.Str(c.OpType(c.ops[9])), "BatchMatMul");
  EXPECT_EQ(InputsOf(c, c.ops[9]), (std::vector<std::string>{"a", "b"}));
  // Distinct (name, inputs, type): m with {a,b}, {a,c}, {a}, {}; other as MatMul, BatchMatMul.
  EXPECT_EQ(c.nodes.size(), 6u);
  EXPECT_EQ(c.ops[0].node, c.ops[1].node);
  EXPECT_EQ(c.ops[0].node, c.ops[4].node) << "the same node seen again after another is merged";
  EXPECT_EQ(c.ops[0].node, c.ops[7].node);
  EXPECT_EQ(c.ops[2].node, c.ops[5].node);
  EXPECT_NE(c.ops[0].node, c.ops[2].node);
  EXPECT_NE(c.ops[8].node, c.ops[9].node);
  // Each list is stored once per name ({a,b}, {a,c}, {a}, {} of m; {a,b} of other), a type
  // change alone reuses the list: 2 + 2 + 1 + 0 + 2 = 7 ids stored, not the 17 given.
  EXPECT_EQ(c.inputs.size(), 7u);
  EXPECT_EQ(c.nodes[c.ops[8].node].inputs_begin, c.nodes[c.ops[9].node].inputs_begin);
  for (size_t n = 1; n < c.nodes.size(); ++n) {
    EXPECT_LE(c.nodes[n - 1].name, c.nodes[n].name) << "nodes sorted by name";
  }
}

// Rows equal in start, duration and name sort by the content of their inputs (ids: the order in
// which the strings first appear), not by where the lists are stored, so that the order is the
// same however the file was read. Here one builder stores {a} before {z} and the other shares an
// earlier {z}, so storage order differs while the content order (z first seen) does not.
TEST(CaptureBuilder, TiesSortByInputContentNotStorage) {
  std::vector<std::string> order[2];
  for (int shared : {0, 1}) {
    CaptureBuilder b;
    const uint32_t d = Dev(b, DevName(0));
    if (shared == 0) {
      Op(b, d, 1, 1, "p", "T", {"z"});   // "z" interned first; no list of "n" yet
      Op(b, d, 50, 5, "n", "T", {"a"});  // stored before the {z} below
      Op(b, d, 50, 5, "n", "T", {"z"});
    } else {
      Op(b, d, 1, 1, "n", "T", {"z"});
      Op(b, d, 50, 5, "n", "T", {"z"});  // shares the {z} stored first
      Op(b, d, 50, 5, "n", "T", {"a"});
    }
    Capture c = b.Finish();
    ASSERT_EQ(c.ops.size(), 3u);
    for (size_t i = 1; i < 3; ++i) order[shared].push_back(InputsOf(c, c.ops[i])[0]);
  }
  EXPECT_EQ(order[0], (std::vector<std::string>{"z", "a"}));
  EXPECT_EQ(order[1], order[0]);
}

// A rollback drops the rows added since the checkpoint; an op added afterwards never shares a
// list that was rolled back.
TEST(CaptureBuilder, RollbackForgetsSharedInputLists) {
  CaptureBuilder b;
  const uint32_t d = Dev(b, DevName(0));
  const CaptureBuilder::Checkpoint cp = b.MakeCheckpoint();
  Op(b, d, 0, 1, "m", "T", {"x", "y"});
  b.Rollback(cp);
  Op(b, d, 10, 1, "other", "T", {"p", "q", "r"});
  Op(b, d, 20, 1, "m", "T", {"x", "y"});
  Capture c = b.Finish();
  ASSERT_EQ(c.ops.size(), 2u);
  EXPECT_EQ(InputsOf(c, c.ops[1]), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(c.inputs.size(), 5u);
}

}  // namespace
}  // namespace tfdiag
