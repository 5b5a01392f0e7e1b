// StepGraph (analyzers/step_graph.h): wait attribution checked against an independent reading
// of the same file (a RapidJSON DOM parse here, not tfdiag's importer), on the real TF1 trace of
// a distributed job and on a symmetric simulated job whose DataFlow arrows say who sent what.
#include "analyzers/step_graph.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <optional>
#include <regex>
#include <set>
#include <tuple>

#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

struct DomOp {
  std::string task, name, type;
  int64_t ts = 0, end = 0;  // us
  std::vector<std::string> inputs;
};

std::string TaskOf(const std::string& process) {
  std::smatch m;
  static const std::regex re(R"(^/job:([a-z]+)/replica:\d+/task:(\d+)/)");
  return std::regex_search(process, m, re) ? m[1].str() + ":" + m[2].str() : "";
}

// The X events and cross-task DataFlow arrows of a TF1 timeline, by a DOM parse.
struct Dom {
  std::vector<DomOp> ops;
  std::map<std::pair<std::string, std::string>, int> arrows;  // (src task, dst task) -> count
  // (src task, dst task, tensor) -> count
  std::map<std::tuple<std::string, std::string, std::string>, int> tensor_arrows;
};

Dom ReadDom(const std::string& path) {
  Dom out;
  rapidjson::Document d;
  const std::string text = ReadFile(path);
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << path;
  if (d.HasParseError()) return out;
  std::map<int64_t, std::string> task;
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) == "M" &&
        std::string(e["name"].GetString()) == "process_name") {
      task[e["pid"].GetInt64()] = TaskOf(e["args"]["name"].GetString());
    }
  }
  std::map<int64_t, std::pair<std::string, std::string>> flow_src;  // id -> (task, name)
  for (const auto& e : d["traceEvents"].GetArray()) {
    const std::string ph = e["ph"].GetString();
    if (ph == "X") {
      DomOp o;
      o.task = task[e["pid"].GetInt64()];
      o.name = e["args"]["name"].GetString();
      o.type = e["args"]["op"].GetString();
      o.ts = e["ts"].GetInt64();
      o.end = o.ts + e["dur"].GetInt64();
      for (int k = 0; k < 32; ++k) {
        const std::string key = "input" + std::to_string(k);
        if (!e["args"].HasMember(key.c_str())) break;
        o.inputs.push_back(e["args"][key.c_str()].GetString());
      }
      out.ops.push_back(o);
    } else if (ph == "s") {
      flow_src[e["id"].GetInt64()] = {task[e["pid"].GetInt64()], e["name"].GetString()};
    } else if (ph == "t" || ph == "f") {
      const auto [src, name] = flow_src[e["id"].GetInt64()];
      const std::string dst = task[e["pid"].GetInt64()];
      if (src != dst) {
        ++out.arrows[{src, dst}];
        ++out.tensor_arrows[{src, dst, name}];
      }
    }
  }
  return out;
}

// "w/read:1_S11" -> "w/read"; "" when the input carries no _S<N> suffix.
std::string SNode(const std::string& in) {
  static const std::regex re(R"(^([^\^].*?)(:\d+)?_S\d+$)");
  std::smatch m;
  return std::regex_match(in, m, re) ? m[1].str() : "";
}

// Writes the simulated hot-ps job (`ps` PS and `workers` workers, 0: the scenario's) of `steps`
// steps as a TF1 timeline in `dir`; returns its path, "" when the simulator failed.
std::string HotPs(const TempDir& dir, int ps, int workers, int steps) {
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  if (ps > 0) p.ps = ps;
  if (workers > 0) p.workers = workers;
  p.steps = steps;
  const std::string path = dir.File("hot.json");
  return sim::WriteScenario(p, path).ok() ? path : "";
}

std::string Label(const Capture& c, uint32_t task) {
  return task == kNoIndex ? "?" : std::string(c.TaskLabelOf(task));
}

// The biggest of `task`'s wait causes that a cross-task edge ended (a tensor from a task), or
// nullopt. The simulated group_deps lists no inputs, so the wait at a step's end for the PS's
// applies has no edge: with a FIFO PS (samples/simulator.cc) it can be as long as the wait for
// the lookup, and is counted apart.
std::optional<WaitCause> TopNamedCause(const StepGraph& g, uint32_t task) {
  for (const WaitCause& w : g.WaitCausesOf(task)) {
    if (w.tensor != 0) return w;
  }
  return std::nullopt;
}

// On the real trace (1 PS + 2 workers, one step): every wait of a task before an op with
// cross-task inputs is attributed to the input whose producer ended last. The expected waits
// come from the DOM: per task, the compute ops (not RecvTensor) in start order; a gap before a
// consumer of _S<N> inputs whose producers ran on another task.
TEST(StepGraph, RealTraceWaitsMatchAnIndependentReadingOfItsInputs) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const std::string path = SharedTrace("tfe_e0cd14f_timeline_client.json");
  const Dom dom = ReadDom(path);
  // Expected: task -> (tensor, producer task, wait us).
  std::map<std::string, std::tuple<std::string, std::string, int64_t>> expected;
  std::map<std::string, std::vector<const DomOp*>> by_task;
  for (const DomOp& o : dom.ops) {
    if (o.type != "RecvTensor") by_task[o.task].push_back(&o);
  }
  for (auto& [task, ops] : by_task) {
    std::sort(ops.begin(), ops.end(), [](const DomOp* a, const DomOp* b) { return a->ts < b->ts; });
    int64_t busy_until = ops[0]->ts;
    for (const DomOp* o : ops) {
      if (o->ts > busy_until) {
        int64_t last_end = -1;
        std::string tensor, from;
        for (const std::string& in : o->inputs) {
          const std::string node = SNode(in);
          for (const DomOp& p : dom.ops) {
            if (node.empty() || p.name != node || p.task == task || p.end > o->ts) continue;
            if (p.end > last_end) last_end = p.end, tensor = node, from = p.task;
          }
        }
        if (!tensor.empty()) {
          auto& [t, f, us] = expected[task];
          if (o->ts - busy_until > us) t = tensor, f = from, us = o->ts - busy_until;
        }
      }
      busy_until = std::max(busy_until, o->end);
    }
  }
  // The file as read: worker:0 and worker:1 wait for ps:0's split, ps:0 for worker:1's MatMul_1.
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(std::get<0>(expected["ps:0"]), "MatMul_1");
  EXPECT_EQ(std::get<1>(expected["ps:0"]), "worker:1");

  const Capture c = LoadOrDie({path});
  const StepGraph g = StepGraph::Build(c);
  EXPECT_EQ(g.ambiguous_inputs(), 0);
  for (const auto& [task, want] : expected) {
    const uint32_t t = c.FindTask(task);
    ASSERT_NE(t, kNoIndex) << task;
    const std::vector<WaitCause> causes = g.WaitCausesOf(t);
    // The largest wait that an edge ended (a step's tail, ended by no op, is checked below).
    const WaitCause* top = nullptr;
    for (const WaitCause& w : causes) {
      if (w.tensor != 0 && !w.step_tail &&
          (top == nullptr || w.wait_ns + w.input_ns > top->wait_ns + top->input_ns))
        top = &w;
    }
    ASSERT_NE(top, nullptr) << task;
    EXPECT_EQ(c.Str(top->tensor), std::get<0>(want)) << task;
    EXPECT_EQ(Label(c, top->src_task), std::get<1>(want)) << task;
    EXPECT_EQ(top->wait_ns + top->input_ns, std::get<2>(want) * 1000) << task;
    EXPECT_FALSE(top->ambiguous) << task;
  }
  // A worker's step tail (its last compute op to its step's end; issue 35) waits for what it
  // pushed last: of the tensors it produced that an op of another task takes (an _S<N> input),
  // the consumer that ended last by the step's end, when that was after its last compute op.
  // worker:0: its MatMul, taken by ps:0's concat (ends 5593 us), step end 5746 us.
  int tails = 0;
  for (const auto& [task, ops] : by_task) {
    if (task.rfind("worker:", 0) != 0) continue;
    int64_t step_end = 0, compute_end = 0;
    for (const DomOp& o : dom.ops) {
      if (o.task == task) step_end = std::max(step_end, o.end);
    }
    for (const DomOp* o : ops) compute_end = std::max(compute_end, o->end);
    std::string tensor, to;
    int64_t done = -1;
    for (const DomOp* o : ops) {
      for (const DomOp& q : dom.ops) {
        if (q.task == task || q.end > step_end) continue;
        for (const std::string& in : q.inputs) {
          if (SNode(in) == o->name && q.end > done) done = q.end, tensor = o->name, to = q.task;
        }
      }
    }
    if (done <= compute_end) continue;
    ++tails;
    const uint32_t t = c.FindTask(task);
    const std::vector<WaitCause> causes = g.WaitCausesOf(t);
    const WaitCause* tail = nullptr;
    for (const WaitCause& w : causes) {
      if (w.step_tail) tail = &w;
    }
    ASSERT_NE(tail, nullptr) << task;
    EXPECT_EQ(c.Str(tail->tensor), tensor) << task;
    EXPECT_EQ(Label(c, tail->src_task), to) << task;
    EXPECT_EQ(tail->wait_ns + tail->input_ns, (step_end - compute_end) * 1000) << task;
  }
  EXPECT_EQ(tails, 1);
}

// The text report's critical path of each worker's median step on the real trace: worker:0
// computes 3 us, waits 481 us (_SOURCE ends at +3 us, MatMul starts at +484 us) for ps:0's split
// (ended after w/read), computes, then waits to the step's end for ps:0's concat, which takes its
// MatMul (issue 35: the tail attributed); worker:1 waits 1.248 ms.
TEST(StepGraph, RealTraceCriticalPathInText) {
  if (!SharedAvailable()) GTEST_SKIP() << "../shared/traces not found beside the repository";
  const RunResult r = RunTfdiag("analyze " + SharedTrace("tfe_e0cd14f_timeline_client.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("worker:0 (step 1, 5.7 ms): +0 us compute 3 us -> +3 us wait 481 us for "
                       "split from ps:0 -> +484 us compute 8 us -> +492 us wait 5.3 ms at the "
                       "step's end for ps:0 to take MatMul, its last push"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("worker:1 (step 1, 1.3 ms): +0 us compute 3 us -> +3 us wait 1.2 ms for "
                       "split from ps:0"),
            std::string::npos)
      << r.out;
}

// A symmetric simulated job (every worker runs the same graph): the transfers credited to each
// worker -> ps:0 pair equal the trace's own DataFlow arrows (20 per worker in 10 steps: two
// tensors a step), in the step graph: inputs that several workers could have sent and no arrow
// names are ambiguous, never credited.
TEST(StepGraph, SymmetricJobCreditsEachWorkerTheTransfersItsArrowsShow) {
  TempDir dir;
  const std::string path = HotPs(dir, 4, 16, 10);
  ASSERT_FALSE(path.empty());
  const Dom dom = ReadDom(path);
  const Capture c = LoadOrDie({path});
  const StepGraph g = StepGraph::Build(c);
  // The bias and Reshape_1 gradients reach ps:0 without arrows, from all 16 workers: ambiguous.
  EXPECT_GE(g.ambiguous_inputs(), 3 * 160);
  std::map<std::pair<std::string, std::string>, int64_t> graph_counts;
  for (const auto& [s, d, n] : g.TransferCounts()) graph_counts[{Label(c, s), Label(c, d)}] = n;
  for (int w = 0; w < 16; ++w) {
    const std::string worker = "worker:" + std::to_string(w);
    const auto key = std::make_pair(worker, std::string("ps:0"));
    ASSERT_GT(dom.arrows.count(key), 0u) << worker;
    const int arrows = dom.arrows.at(key);
    EXPECT_EQ(arrows, 20) << worker;  // ids and the embedding gradient, once per step
    EXPECT_EQ(graph_counts[key], arrows) << worker;
    // ...and each worker waits for the embedding lookup ps:0 serves it, most of its named waits.
    const std::optional<WaitCause> cause = TopNamedCause(g, c.FindTask(worker));
    ASSERT_TRUE(cause.has_value()) << worker;
    EXPECT_EQ(c.Str(cause->tensor), "embedding/embedding_lookup") << worker;
    EXPECT_EQ(Label(c, cause->src_task), "ps:0") << worker;
  }
}

// The capture's edges table (core/capture_finish.cc: what `edges`/`edges_out` in JSON, the text
// edges table and the viewer's heat map read) on the same symmetric job agrees with the arrows,
// read here from the trace JSON: each worker sent ps:0 exactly what its arrows draw (20 in 10
// steps), each arrow's tensor is a row with the arrow's count, and the gradients every worker
// produces that no arrow names are counted as ambiguous, not credited. It used to match each
// `<tensor>_S<N>` input to the op of that name that ended last anywhere: 35 to 111 per worker.
// The step graph credits the same transfers (one set of rules).
TEST(StepGraph, CaptureEdgesOfASymmetricJobAgreeWithItsArrows) {
  TempDir dir;
  const std::string path = HotPs(dir, 4, 16, 10);
  ASSERT_FALSE(path.empty());
  const Dom dom = ReadDom(path);
  const Capture c = LoadOrDie({path});
  std::map<std::pair<std::string, std::string>, int64_t> pairs;
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> rows;
  for (const EdgeRow& e : c.edges) {
    pairs[{Label(c, e.src_task), Label(c, e.dst_task)}] += e.count;
    rows[{Label(c, e.src_task), Label(c, e.dst_task), std::string(c.Str(e.tensor))}] = e.count;
  }
  for (int w = 0; w < 16; ++w) {
    const auto key = std::make_pair("worker:" + std::to_string(w), std::string("ps:0"));
    ASSERT_GT(dom.arrows.count(key), 0u) << key.first;
    EXPECT_EQ(dom.arrows.at(key), 20) << key.first;
    EXPECT_EQ(pairs[key], dom.arrows.at(key)) << key.first;
  }
  for (const auto& [k, n] : dom.tensor_arrows) {
    EXPECT_EQ(rows[k], n) << std::get<0>(k) << " -> " << std::get<1>(k) << " " << std::get<2>(k);
  }
  EXPECT_GE(c.stats.ambiguous_inputs, 3 * 160);
  const StepGraph g = StepGraph::Build(c);
  EXPECT_EQ(g.ambiguous_inputs(), c.stats.ambiguous_inputs);
  EXPECT_EQ(g.unresolved_inputs(), c.stats.unresolved_inputs);
  for (const auto& [s, d, n] : g.TransferCounts()) {
    EXPECT_EQ(n, (pairs[{Label(c, s), Label(c, d)}])) << Label(c, s) << " -> " << Label(c, d);
  }
}

// `tfdiag analyze --format json` on the symmetric hot-PS job: the hot-ps finding lists, per
// worker, the wait the hot PS's tensor ended, and the text report says it in a sentence.
TEST(StepGraph, HotPsFindingListsWhatEachWorkerWaitsFor) {
  TempDir dir;
  const std::string path = HotPs(dir, 0, 0, 5);
  ASSERT_FALSE(path.empty());
  const RunResult json = RunTfdiag("analyze --format json " + path);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  rapidjson::Document d;
  d.Parse(json.out.c_str(), json.out.size());
  ASSERT_FALSE(d.HasParseError());
  const rapidjson::Value* hot = nullptr;
  for (const auto& f : d["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) == "hot-ps") hot = &f;
  }
  ASSERT_NE(hot, nullptr);
  ASSERT_TRUE(hot->HasMember("waits"));
  std::set<std::string> tasks;
  for (const auto& w : (*hot)["waits"].GetArray()) {
    EXPECT_EQ(std::string(w["from"].GetString()), "ps:0");
    EXPECT_EQ(std::string(w["tensor"].GetString()), "embedding/embedding_lookup");
    EXPECT_GT(w["wait_ns_per_step"].GetDouble(), 1e6);  // milliseconds per 150 ms step
    tasks.insert(w["task"].GetString());
  }
  EXPECT_EQ(tasks.size(), 16u);
  const RunResult text = RunTfdiag("analyze " + path);
  EXPECT_NE(text.out.find("until embedding/embedding_lookup arrives from ps:0"), std::string::npos)
      << text.out;
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// The graph keeps what its readers need, not every wait of every step: a PS has hundreds of
// waits per worker step (issue 29's follow-up: analyze on a 127 MB hot-ps timeline went from
// 30 MB to 69 MB peak RSS, most of it waits). Only each task's median step keeps its waits
// (Segments), with just the edges that ended them; the per-task causes still count every step.
TEST(StepGraph, KeepsOnlyTheMedianStepsWaitsAndTheirEdges) {
  TempDir dir;
  const std::string path = HotPs(dir, 2, 8, 20);
  ASSERT_FALSE(path.empty());
  const Capture c = LoadOrDie({path});
  const StepGraph g = StepGraph::Build(c);
  size_t median_waits = 0;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    const auto [b, e] = g.TaskSteps(t);
    const uint32_t median = g.MedianStep(t);
    for (uint32_t s = b; s < e; ++s) {
      const StepNode& n = g.steps()[s];
      if (s != median) {
        EXPECT_EQ(n.waits_begin, n.waits_end) << "step " << s << " of task " << t;
        EXPECT_TRUE(g.Segments(s).empty());
        continue;
      }
      median_waits += n.waits_end - n.waits_begin;
      // The median step's segments still tile it.
      TimeNs at = n.start;
      for (const PathSegment& seg : g.Segments(s)) {
        EXPECT_EQ(seg.start, at);
        at = seg.end;
      }
      EXPECT_EQ(at, n.end);
    }
  }
  EXPECT_EQ(g.waits().size(), median_waits);
  for (const StepWait& w : g.waits()) {
    if (w.edge != kNoIndex) {
      EXPECT_LT(w.edge, g.edges().size());
    }
  }
  EXPECT_LE(g.edges().size(), g.waits().size());
  // Every worker still waits for the hot PS's lookup, summed over all of its steps.
  const uint32_t w0 = c.FindTask("worker:0");
  const std::optional<WaitCause> cause = TopNamedCause(g, w0);
  ASSERT_TRUE(cause.has_value());
  EXPECT_EQ(c.Str(cause->tensor), "embedding/embedding_lookup");
  EXPECT_EQ(cause->waits, 20);
  // A PS's _SOURCE steps are per request: it keeps no StepNodes (issue 29's memory: 227,000 of
  // them on a 141 MB XSpace), but still says what it waits for.
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kPs) continue;
    ASSERT_GT(c.TaskSteps(t).size(), 20u) << c.TaskLabelOf(t);
    const auto [b, e] = g.TaskSteps(t);
    EXPECT_EQ(b, e) << c.TaskLabelOf(t);
    EXPECT_EQ(g.MedianStep(t), kNoIndex);
    EXPECT_FALSE(g.WaitCausesOf(t).empty()) << c.TaskLabelOf(t);
  }
}

// The graph reads each device's ops where they are: built on the same capture with its ops
// packed (core/op_store.h, as large profiles are held), a block of 128 ops at a time, it is the
// same graph, field for field.
TEST(StepGraph, PackedOpsGiveTheSameGraph) {
  TempDir dir;
  const std::string path = HotPs(dir, 2, 4, 20);
  ASSERT_FALSE(path.empty());
  const Capture plain = LoadOrDie({path});
  Capture packed = LoadOrDie({path});
  ASSERT_FALSE(packed.ops.packed());
  std::vector<PackedOps> devices(packed.devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    const auto [b, e] = packed.device_ops[d];
    ASSERT_GT(e - b, 2 * kPackBlock) << "device " << d << " spans blocks";
    devices[d].Append(packed.ops.plain().data() + b, e - b);
    devices[d].nodes_mapped = true;
  }
  packed.ops.SetPacked(std::move(devices), {});
  ASSERT_TRUE(packed.ops.packed());
  const StepGraph a = StepGraph::Build(plain), b = StepGraph::Build(packed);
  ASSERT_EQ(a.steps().size(), b.steps().size());
  for (size_t i = 0; i < a.steps().size(); ++i) {
    const StepNode &x = a.steps()[i], &y = b.steps()[i];
    EXPECT_EQ(std::tie(x.task, x.index, x.start, x.end, x.compute_ns, x.input_ns, x.recv_ns,
                       x.idle_ns, x.waits_begin, x.waits_end, x.waits_kept),
              std::tie(y.task, y.index, y.start, y.end, y.compute_ns, y.input_ns, y.recv_ns,
                       y.idle_ns, y.waits_begin, y.waits_end, y.waits_kept))
        << "step " << i;
  }
  ASSERT_EQ(a.waits().size(), b.waits().size());
  for (size_t i = 0; i < a.waits().size(); ++i) {
    const StepWait &x = a.waits()[i], &y = b.waits()[i];
    EXPECT_EQ(std::tie(x.step, x.start, x.end, x.input_ns, x.recv_ns, x.idle_ns, x.edge),
              std::tie(y.step, y.start, y.end, y.input_ns, y.recv_ns, y.idle_ns, y.edge));
  }
  ASSERT_EQ(a.edges().size(), b.edges().size());
  for (size_t i = 0; i < a.edges().size(); ++i) {
    const GraphEdge &x = a.edges()[i], &y = b.edges()[i];
    EXPECT_EQ(std::tie(x.src_task, x.dst_task, x.tensor, x.sent, x.needed, x.dst_op, x.candidates),
              std::tie(y.src_task, y.dst_task, y.tensor, y.sent, y.needed, y.dst_op, y.candidates));
  }
  EXPECT_FALSE(a.edges().empty());
  EXPECT_EQ(a.TransferCounts(), b.TransferCounts());
  EXPECT_EQ(a.ambiguous_inputs(), b.ambiguous_inputs());
  EXPECT_EQ(a.unresolved_inputs(), b.unresolved_inputs());
  for (uint32_t t = 0; t < plain.tasks.size(); ++t) {
    const std::vector<WaitCause> x = a.WaitCausesOf(t), y = b.WaitCausesOf(t);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_EQ(std::tie(x[i].src_task, x[i].tensor, x[i].wait_ns, x[i].input_ns, x[i].waits,
                         x[i].sent_offset_ns),
                std::tie(y[i].src_task, y[i].tensor, y[i].wait_ns, y[i].input_ns, y[i].waits,
                         y[i].sent_offset_ns));
    }
  }
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// A TF1 timeline of one PS and one worker, 3 steps of 1 ms: the PS reads `w` (ends at 100 us)
// and gathers `emb` (ends at 300 us) for each step; the worker's RecvTensor spans [10, 500)
// and its first compute op after the wait (MatMul, at 500) consumes `w/read`, the earlier of
// the two (as TF runs whichever consumer is ready first), Reshape (at 600) the gather.
std::string TwoTensorAnswer() {
  std::string ev =
      R"({"name":"process_name","ph":"M","pid":1,"args":{"name":"/job:ps/replica:0/task:0/device:CPU:0 Compute"}},)"
      R"({"name":"process_name","ph":"M","pid":3,"args":{"name":"/job:worker/replica:0/task:0/device:CPU:0 Compute"}})";
  auto x = [&](int pid, int64_t ts, int64_t dur, const std::string& name, const std::string& op,
               const std::string& in) {
    ev += R"(,{"ph":"X","cat":"Op","pid":)" + std::to_string(pid) + R"(,"tid":0,"ts":)" +
          std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + R"(,"name":")" + op +
          R"(","args":{"name":")" + name + R"(","op":")" + op + "\"" +
          (in.empty() ? "" : R"(,"input0":")" + in + "\"") + "}}";
  };
  int id = 0;
  auto arrow = [&](const std::string& name, int64_t sent, int64_t needed) {
    ++id;
    ev += R"(,{"ph":"s","cat":"DataFlow","name":")" + name + R"(","pid":1,"tid":0,"ts":)" +
          std::to_string(sent) + R"(,"id":)" + std::to_string(id) + "}";
    ev += R"(,{"ph":"t","cat":"DataFlow","name":")" + name + R"(","pid":3,"tid":0,"ts":)" +
          std::to_string(needed) + R"(,"id":)" + std::to_string(id) + "}";
  };
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 1600000000000000 + 1000 * s;
    x(1, t, 2, "_SOURCE", "NoOp", "");
    x(1, t + 50, 50, "w/read", "Identity", "w");
    x(1, t + 100, 200, "emb/embedding_lookup", "GatherV2", "emb/read");
    x(3, t, 2, "_SOURCE", "NoOp", "");
    x(3, t + 10, 490, "RecvTensor", "RecvTensor", "");
    x(3, t + 500, 100, "MatMul", "MatMul", "w/read");
    x(3, t + 600, 100, "emb/Reshape", "Reshape", "emb/embedding_lookup");
    x(3, t + 700, 250, "gradients/MatMul_grad/MatMul", "MatMul", "grad");
    arrow("w/read", t + 100, t + 500);
    arrow("emb/embedding_lookup", t + 300, t + 600);
  }
  return R"({"traceEvents":[)" + ev + "]}";
}

// StepWait::last_sent (issue 35: the replay's transfer of a PS answer): the wait before MatMul
// is ended by `w/read` (sent at 100 us), but the PS's answer ended with the gather (300 us),
// which a later op consumes; the transfer is measured from there (200 us, not 400 us).
TEST(StepGraph, AWaitKnowsTheLastTensorItsAnswerSent) {
  TempDir dir;
  const std::string path = dir.File("two.json");
  WriteFile(path, TwoTensorAnswer());
  const Capture c = LoadOrDie({path});
  const StepGraph g = StepGraph::Build(c);
  const uint32_t worker = c.FindTask("worker:0");
  ASSERT_NE(worker, kNoIndex);
  const uint32_t s = g.MedianStep(worker);
  ASSERT_NE(s, kNoIndex);
  const StepNode& n = g.steps()[s];
  const StepWait* pull = nullptr;
  for (uint32_t i = n.waits_begin; i < n.waits_end; ++i) {
    if (g.waits()[i].edge != kNoIndex && !g.waits()[i].step_tail) pull = &g.waits()[i];
  }
  ASSERT_NE(pull, nullptr);
  const GraphEdge& e = g.edges()[pull->edge];
  EXPECT_EQ(c.Str(e.tensor), "w/read");
  EXPECT_EQ(pull->end - e.sent, 400000);
  EXPECT_EQ(pull->end - pull->last_sent, 200000);
}

}  // namespace
}  // namespace tfdiag::test
