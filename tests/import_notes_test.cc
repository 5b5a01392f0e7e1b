// What the import says about inputs that are not (only) PS/worker TF timelines (issue 14):
// a file without TF ops says what it is and why nothing was analyzed; a Horovod timeline is
// recognised and summarised (negotiation wait, the rank the others wait for, all-reduce against
// memcpy); GPU stream:all rows that repeat the per-stream rows are left out; DataFlow arrows split
// across two files of one job are paired; an input given twice is read once.
#include <gtest/gtest.h>
#include <unistd.h>

#include "analyzers/analysis.h"
#include "collectors/load_inputs.h"
#include "report/import_sections.h"
#include "report/report.h"
#include "tests/horovod_json.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

const char* const kPs = "/job:ps/replica:0/task:0/device:CPU:0 Compute";
const char* const kW0 = "/job:worker/replica:0/task:0/device:CPU:0 Compute";

std::string Text(const Capture& c) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  return RenderText(c, Analyze(c, *rules, nullptr, 1), {});
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// ---- item 3: inputs without TF ops ----

TEST(ImportNotes, EmptyEventsArraySaysTheFileHoldsNoEvents) {
  TempDir dir;
  WriteFile(dir.File("empty.json"), "{\"traceEvents\":[]}");
  Capture c = LoadOrDie({dir.File("empty.json")});
  ASSERT_EQ(c.stats.files.size(), 1u);
  EXPECT_EQ(c.stats.files[0].note, "the file holds no events: nothing to analyze");
  const std::string text = Text(c);
  EXPECT_TRUE(Has(text, "empty.json: the file holds no events")) << text;
  EXPECT_TRUE(Has(text, "nothing was analyzed: no input holds TensorFlow ops")) << text;
}

TEST(ImportNotes, ChromeTraceOfOtherProcessesNamesThem) {
  TempDir dir;
  const std::string path = dir.File("chrome.json");
  WriteFile(path, ObjectForm({MetaEvent(1, "Renderer"), MetaEvent(2, "GPU Process"),
                              MetaEvent(3, "Browser\\u001b[31m"), MetaEvent(4, "Utility"),
                              OpEvent(1, 0, 10, 5, "Layout", "Layout"),
                              OpEvent(2, 0, 10, 5, "Draw", "Draw")}));
  Capture c = LoadOrDie({path});
  ASSERT_EQ(c.stats.files.size(), 1u);
  const std::string& note = c.stats.files[0].note;
  EXPECT_TRUE(Has(note, "a Chrome trace of 6 events whose 4 process(es)")) << note;
  EXPECT_TRUE(Has(note, "are not TensorFlow devices")) << note;
  EXPECT_TRUE(Has(note, "'Browser\\x1b[31m'")) << "control characters escaped: " << note;
  EXPECT_TRUE(Has(note, "and 1 more")) << note;
  EXPECT_TRUE(c.ops.empty());
  EXPECT_TRUE(Has(Text(c), "chrome.json: a Chrome trace of 6 events"));
}

TEST(ImportNotes, ChromeTraceWithoutProcessNamesSaysItsPidsAreUnknownTasks) {
  TempDir dir;
  const std::string path = dir.File("bare.json");
  WriteFile(path, BareArray({OpEvent(7, 0, 10, 5, "a", "A"), OpEvent(8, 0, 10, 5, "b", "B")}));
  Capture c = LoadOrDie({path});
  EXPECT_EQ(c.ops.size(), 2u);
  EXPECT_TRUE(Has(c.stats.files[0].note,
                  "without process names: its 2 pid(s) are read as tasks "
                  "unknown:<pid>"))
      << c.stats.files[0].note;
}

TEST(ImportNotes, TfTimelineHasNoNote) {
  TempDir dir;
  const std::string path = dir.File("tf.json");
  WriteFile(path, ObjectForm({MetaEvent(1, kPs), OpEvent(1, 0, 10, 5, "a", "NoOp")}));
  Capture c = LoadOrDie({path});
  EXPECT_EQ(c.stats.files[0].note, "");
  EXPECT_FALSE(Has(Text(c), "nothing was analyzed"));
}

TEST(ImportNotes, HorovodTimelineIsSummarised) {
  TempDir dir;
  HorovodPlan plan;
  HorovodTruth truth;
  const std::string path = dir.File("horovod_timeline.json");
  WriteFile(path, HorovodTimeline(plan, &truth));
  Capture c = LoadOrDie({path});
  ASSERT_EQ(c.stats.files.size(), 1u);
  EXPECT_EQ(c.stats.files[0].format, "horovod-timeline");
  EXPECT_TRUE(Has(c.stats.files[0].note, "a Horovod timeline")) << c.stats.files[0].note;
  EXPECT_EQ(c.stats.TotalSkipped(), 0);
  const HorovodStats& h = c.horovod;
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.files, 1);
  EXPECT_EQ(h.negotiations, truth.negotiations);
  EXPECT_EQ(h.ready_marks, truth.negotiations * plan.ranks);
  EXPECT_EQ(h.ops, truth.negotiations);
  EXPECT_EQ(h.wait_ns, truth.wait_us * 1000);
  ASSERT_EQ(h.ranks.size(), static_cast<size_t>(plan.ranks));
  for (int r = 0; r < plan.ranks; ++r) {
    const int64_t want = truth.last.count(r) ? truth.last.at(r) : 0;
    EXPECT_EQ(h.ranks[r].last, want) << "rank " << r;
    EXPECT_EQ(h.ranks[r].ready, truth.negotiations) << "rank " << r;
  }
  // Fused activities run at once on every tensor: wall time counts them once.
  EXPECT_EQ(h.allreduce_wall_ns, truth.allreduce_wall_us * 1000);
  EXPECT_EQ(h.collective_wall_ns, truth.allreduce_wall_us * 1000);
  EXPECT_EQ(h.memcpy_wall_ns, truth.memcpy_wall_us * 1000);
  EXPECT_EQ(h.queue_wall_ns, truth.queue_wall_us * 1000);
  ASSERT_EQ(h.tensors.size(), static_cast<size_t>(plan.tensors));
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    const HorovodTensor& t = h.tensors[i];
    EXPECT_EQ(t.wait_ns, truth.tensor_wait_us.at(t.name) * 1000) << t.name;
    EXPECT_EQ(t.negotiations, plan.steps);
    EXPECT_EQ(t.last_rank, plan.slow_rank) << t.name;
    EXPECT_EQ(t.collective_ns, plan.steps * plan.allreduce_us * 1000);
    if (i > 0) {
      EXPECT_GE(h.tensors[i - 1].wait_ns, t.wait_ns) << "sorted by wait";
    }
  }
  const std::string text = Text(c);
  EXPECT_TRUE(Has(text, "Horovod  (1 timeline: 48 negotiations of 6 tensors, 4 ranks")) << text;
  EXPECT_TRUE(
      Has(text, fmt::format("Rank {} was the last to be ready in {} of {} negotiations",
                            plan.slow_rank, truth.last.at(plan.slow_rank), truth.negotiations)))
      << text;
  EXPECT_TRUE(Has(text, "when the model fits on one GPU")) << text;
  EXPECT_FALSE(Has(text, "../shared")) << "references users can open";
  const std::string json = RenderJson(c, Analyze(c, *DefaultRuleSet(), nullptr, 1), false).value();
  EXPECT_TRUE(Has(json, "\"horovod\":{\"files\":1,\"negotiations\":48")) << json.substr(0, 400);
}

TEST(ImportNotes, HorovodOverMpiGetsTheNcclAdviceAndNoStragglerWithoutOne) {
  TempDir dir;
  HorovodPlan plan;
  plan.nccl = false;
  plan.slow_us = 0;  // nobody is late: rank 3's 3 us offset is noise, yet it is always last
  plan.memcpy_in_us = 80;
  HorovodTruth truth;
  WriteFile(dir.File("h.json"), HorovodTimeline(plan, &truth));
  Capture c = LoadOrDie({dir.File("h.json")});
  ASSERT_FALSE(c.horovod.empty());
  EXPECT_EQ(c.horovod.allreduce_wall_ns, truth.allreduce_wall_us * 1000);
  const std::vector<std::string> advice = HorovodAdvice(c.horovod);
  std::string all;
  for (const std::string& a : advice) all += a + "\n";
  EXPECT_TRUE(Has(all, "runs over MPI or Gloo, not NCCL")) << all;
  EXPECT_TRUE(Has(all, "Copies into and out of the fusion")) << all;  // 100 us of 100 us
  EXPECT_FALSE(Has(all, "was the last to be ready")) << "3 us per negotiation is noise: " << all;
}

// Older Horovod versions wrote each event followed by ",\n" and never closed the array.
TEST(ImportNotes, HorovodTimelineWithoutClosingBracketIsRead) {
  TempDir dir;
  HorovodPlan plan;
  HorovodTruth truth;
  std::string text = HorovodTimeline(plan, &truth);
  ASSERT_EQ(text.back(), ']');
  text.back() = ',';
  text += "\n";
  WriteFile(dir.File("open.json"), text);
  Capture c = LoadOrDie({dir.File("open.json")});
  EXPECT_EQ(c.horovod.negotiations, truth.negotiations);
  EXPECT_EQ(c.horovod.wait_ns, truth.wait_us * 1000);
  EXPECT_EQ(c.stats.files[0].format, "horovod-timeline");
}

TEST(ImportNotes, HorovodTimelineIsTheSameForEveryThreadCount) {
  TempDir dir;
  HorovodPlan plan;
  plan.tensors = 40;
  plan.steps = 30;
  HorovodTruth truth;
  const std::string text = HorovodTimeline(plan, &truth);
  const std::string gz = dir.File("h.json.gz");
  ASSERT_TRUE(WriteGzip(gz, text));
  std::string first;
  for (int threads : {1, 2, 3, 4}) {
    CaptureBuilder b;
    TimelineReadOptions o;
    o.threads = threads;
    o.chunk_bytes = 64 << 10;  // many segments: B/E pairs straddle them
    ASSERT_TRUE(ReadTimeline(gz, &b, o).ok());
    Capture c = b.Finish(threads);
    if (threads > 1) {
      EXPECT_GT(c.stats.files[0].chunks, 1);
    }
    c.stats.files[0].chunks = 1;
    EXPECT_EQ(c.horovod.negotiations, truth.negotiations);
    EXPECT_EQ(c.horovod.wait_ns, truth.wait_us * 1000);
    const std::string json =
        RenderJson(c, Analyze(c, *DefaultRuleSet(), nullptr, threads), true).value();
    if (threads == 1) {
      first = json;
    } else {
      EXPECT_TRUE(json == first) << threads << " threads differ from 1";
    }
  }
}

// ---- item 6: GPU stream:all, flows across files ----

const char* const kGpu = "/job:worker/replica:0/task:0/device:GPU:0";

// A TF1 GPU trace: kernels on stream:12 and stream:13, each repeated on stream:all, and a copy on
// memcpy (also repeated on stream:all when `memcpy_in_all`).
std::vector<std::string> GpuEvents(bool per_stream_rows) {
  std::vector<std::string> ev = {MetaEvent(1, kW0),
                                 MetaEvent(2, std::string(kGpu) + "/stream:all Compute"),
                                 MetaEvent(5, std::string(kGpu) + "/memcpy Compute"),
                                 OpEvent(1, 0, 100, 50, "launch", "MatMul")};
  if (per_stream_rows) {
    ev.push_back(MetaEvent(3, std::string(kGpu) + "/stream:12 Compute"));
    ev.push_back(MetaEvent(4, std::string(kGpu) + "/stream:13 Compute"));
  }
  for (int i = 0; i < 5; ++i) {
    const int64_t ts = 200 + i * 20;
    const std::string k = "k" + std::to_string(i);
    ev.push_back(OpEvent(2, 0, ts, 10, k, "Gemm"));
    if (per_stream_rows) ev.push_back(OpEvent(3 + i % 2, 0, ts, 10, k, "Gemm"));
  }
  ev.push_back(OpEvent(5, 0, 400, 8, "edge_1_w", "MEMCPYHtoD"));
  return ev;
}

TEST(ImportNotes, StreamAllIsDroppedWhenPerStreamRowsExist) {
  TempDir dir;
  const std::string path = dir.File("gpu.json");
  WriteFile(path, ObjectForm(GpuEvents(true)));
  Capture c = LoadOrDie({path});
  for (const DeviceRow& d : c.devices) EXPECT_NE(c.Str(d.sub), "stream:all");
  EXPECT_EQ(c.devices.size(), 4u);  // CPU, stream:12, stream:13, memcpy
  EXPECT_EQ(OpsNamed(c, "k0").size(), 1u) << "each kernel counted once";
  EXPECT_EQ(c.ops.size(), 1u + 5u + 1u);
  EXPECT_EQ(c.stats.stream_all_devices, 1);
  EXPECT_EQ(c.stats.stream_all_ops, 5);
  EXPECT_EQ(c.stats.ignored.count("events on a non-device process (e.g. Allocators)"), 0u);
  EXPECT_TRUE(Has(Text(c), "1 GPU stream:all row(s) left out (5 ops)"));
}

TEST(ImportNotes, StreamAllIsKeptWhenItIsTheOnlyKernelRow) {
  TempDir dir;
  const std::string path = dir.File("gpu.json");
  WriteFile(path, ObjectForm(GpuEvents(false)));
  Capture c = LoadOrDie({path});
  int stream_all = 0;
  for (const DeviceRow& d : c.devices) stream_all += c.Str(d.sub) == "stream:all";
  EXPECT_EQ(stream_all, 1);
  EXPECT_EQ(OpsNamed(c, "k0").size(), 1u);
  EXPECT_EQ(c.stats.stream_all_devices, 0);
  EXPECT_FALSE(Has(Text(c), "stream:all row(s) left out"));
}

TEST(ImportNotes, FlowSplitAcrossTwoFilesIsPairedNotMalformed) {
  TempDir dir;
  // The PS's file holds the arrow's start, the worker's file its end (same id, same tensor).
  WriteFile(dir.File("ps.json"),
            ObjectForm({MetaEvent(1, kPs), OpEvent(1, 0, 100, 5, "w/read", "Identity"),
                        FlowEvent('s', 1, 0, 105, 7, "w/read")}));
  WriteFile(dir.File("w0.json"),
            ObjectForm({MetaEvent(1, kW0), FlowEvent('t', 1, 0, 200, 7, "w/read"),
                        OpEvent(1, 0, 200, 5, "m", "MatMul", {"w/read"}),
                        FlowEvent('t', 1, 0, 300, 9, "other")}));  // no start anywhere
  Capture c = LoadOrDie({dir.File("ps.json"), dir.File("w0.json")});
  ASSERT_EQ(c.flows.size(), 1u);
  EXPECT_EQ(c.Str(c.flows[0].name), "w/read");
  EXPECT_EQ(c.flows[0].src_ts, 105000);
  EXPECT_EQ(c.flows[0].dst_ts, 200000);
  EXPECT_EQ(c.stats.cross_file_flows, 1);
  EXPECT_EQ(c.stats.skipped.at("flow end without a flow start"), 1);  // id 9 only
  EXPECT_EQ(c.stats.files[0].skipped, 0);
  EXPECT_EQ(c.stats.files[1].skipped, 1);
  bool edge = false;
  for (const EdgeRow& e : c.edges) {
    edge = edge || (e.kind == EdgeKind::kDataFlow && c.TaskLabelOf(e.src_task) == "ps:0" &&
                    c.TaskLabelOf(e.dst_task) == "worker:0");
  }
  EXPECT_TRUE(edge) << "the paired arrow is a ps:0 -> worker:0 edge";
  EXPECT_TRUE(Has(Text(c), "1 DataFlow arrow(s) paired across files"));
  // Within one file, an end before its start stays malformed (TensorFlow writes s first).
  WriteFile(dir.File("one.json"),
            ObjectForm({MetaEvent(1, kPs), MetaEvent(2, kW0), FlowEvent('t', 2, 0, 200, 7, "x"),
                        FlowEvent('s', 1, 0, 105, 7, "x"), OpEvent(1, 0, 100, 5, "x", "NoOp")}));
  Capture one = LoadOrDie({dir.File("one.json")});
  EXPECT_TRUE(one.flows.empty());
  EXPECT_EQ(one.stats.skipped.at("flow end without a flow start"), 1);
}

// ---- item 10: an input given twice ----

TEST(ImportNotes, SameFileTwiceIsReadOnce) {
  TempDir dir;
  const std::string a = dir.File("a.json");
  WriteFile(a, ObjectForm({MetaEvent(1, kPs), OpEvent(1, 0, 100, 5, "x", "NoOp"),
                           OpEvent(1, 0, 200, 5, "y", "NoOp")}));
  const Capture once = LoadOrDie({a});
  // By path, by a hard link (same inode), and by a copy (same bytes).
  ASSERT_EQ(::link(a.c_str(), dir.File("link.json").c_str()), 0);
  WriteFile(dir.File("copy.json"), ReadFile(a));
  const Capture c = LoadOrDie({a, a, dir.File("link.json"), dir.File("copy.json")});
  EXPECT_EQ(c.ops.size(), once.ops.size());
  EXPECT_EQ(c.stats.files.size(), 1u);
  ASSERT_EQ(c.stats.duplicates.size(), 3u);
  EXPECT_EQ(c.stats.duplicates[0].same_as, a);
  EXPECT_EQ(c.stats.duplicates[1].how, "same file (device and inode)");
  EXPECT_EQ(c.stats.duplicates[2].path, dir.File("copy.json"));
  EXPECT_EQ(c.stats.duplicates[2].how, "identical content (size, first and last 64 KiB)");
  EXPECT_TRUE(Has(Text(c), "copy.json: identical content (size, first and last 64 KiB) as "));
}

TEST(ImportNotes, SameSizeDifferentContentIsNotADuplicate) {
  TempDir dir;
  WriteFile(dir.File("a.json"),
            ObjectForm({MetaEvent(1, kPs), OpEvent(1, 0, 100, 5, "x", "NoOp")}));
  WriteFile(dir.File("b.json"),
            ObjectForm({MetaEvent(1, kPs), OpEvent(1, 0, 100, 5, "y", "NoOp")}));
  const Capture c = LoadOrDie({dir.File("a.json"), dir.File("b.json")});
  EXPECT_TRUE(c.stats.duplicates.empty());
  EXPECT_EQ(c.stats.files.size(), 2u);
  EXPECT_EQ(c.ops.size(), 2u);
}

TEST(ImportNotes, TheBinaryWarnsAboutAFileGivenTwice) {
  TempDir dir;
  const std::string a = dir.File("a.json");
  WriteFile(a, ObjectForm({MetaEvent(1, kPs), OpEvent(1, 0, 100, 5, "x", "NoOp")}));
  RunResult r = RunTfdiag("analyze '" + a + "' '" + a + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "a.json: same file (device and inode) as ")) << r.out;
  EXPECT_TRUE(Has(r.out, "read once, not counted twice")) << r.out;
  // A pipe on standard input holding the same bytes as a file given beside it (the pipe is
  // copied to a temporary file first, so only its content can tell).
  r = RunShell("(cat '" + a + "' | '" + TFDIAG_BINARY + "' analyze -f json - '" + a + "')");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "\"duplicates\": [")) << r.out;
  EXPECT_TRUE(Has(r.out, "\"same_as\": \"-\"")) << r.out;
  EXPECT_TRUE(Has(r.out, "identical content")) << r.out;
}

// Nothing to judge is bad input (issue 39): exit 2, one line naming why, no report.
TEST(ImportNotes, TheBinarySaysWhyAnEmptyTraceGaveNothing) {
  TempDir dir;
  WriteFile(dir.File("empty.json"), "{\"traceEvents\":[]}");
  // Nothing to analyze: exit 2 with one line saying why and where a profile is expected (issue
  // 38), not "No rule fired".
  RunResult r = RunTfdiag("analyze '" + dir.File("empty.json") + "'");
  ASSERT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "empty.json: the file holds no events: nothing to analyze")) << r.err;
  EXPECT_TRUE(Has(r.err, "a profile is expected")) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace tfdiag::test
