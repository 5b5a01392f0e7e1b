// ReadTimeline on every container variant it accepts: object form, bare array (with and without
// the closing bracket, with a trailing comma), pretty or compact, any key order, TF2 trace-viewer
// JSON, B/E pairs, gzip (one member or two), duplicate process names and non-device pids.
// Every file is written by the test; expectations come from the event specs below.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <map>

#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

struct OpSpec {
  int64_t pid, tid, ts_us, dur_us;
  std::string node, type;
  std::vector<std::string> inputs;
};

const std::map<int64_t, std::string> kDevices = {
    {1, "/job:ps/replica:0/task:0/device:CPU:0 Compute"},
    {2, "/job:worker/replica:0/task:0/device:CPU:0 Compute"},
    {3, "/job:worker/replica:0/task:0/device:CPU:0 Tensors"},
};
const std::map<int64_t, std::string> kTaskOfPid = {{1, "ps:0"}, {2, "worker:0"}, {3, "worker:0"}};

const std::vector<OpSpec> kOps = {
    {1, 0, 1578906108771000, 5, "w", "VariableV2", {}},
    {1, 1, 1578906108771003, 2, "w/read", "Identity", {"w"}},
    {2, 0, 1578906108771010, 7, "MatMul", "MatMul", {"x", "w/read_S3"}},
    {3, 2, 1578906108771020, 4, "RecvTensor", "RecvTensor", {}},
};

std::vector<std::string> SpecEvents() {
  std::vector<std::string> ev;
  for (const auto& [pid, name] : kDevices) ev.push_back(MetaEvent(pid, name));
  for (const OpSpec& s : kOps) {
    ev.push_back(OpEvent(s.pid, s.tid, s.ts_us, s.dur_us, s.node, s.type, s.inputs));
  }
  return ev;
}

// The same events with every key order reversed: args first, ph last.
std::vector<std::string> SpecEventsKeysReversed() {
  std::vector<std::string> ev;
  for (const auto& [pid, name] : kDevices) {
    ev.push_back(fmt::format(
        R"({{"args":{{"name":"{}"}},"pid":{},"name":"process_name","ph":"M"}})", name, pid));
  }
  for (const OpSpec& s : kOps) {
    std::string args;
    for (size_t i = s.inputs.size(); i-- > 0;)
      args += fmt::format(R"("input{}":"{}",)", i, s.inputs[i]);
    args += fmt::format(R"("op":"{}","name":"{}")", s.type, s.node);
    ev.push_back(
        fmt::format(R"({{"args":{{{}}},"dur":{},"name":"{}","tid":{},"pid":{},"ts":{},"ph":"X"}})",
                    args, s.dur_us, s.type, s.tid, s.pid, s.ts_us));
  }
  return ev;
}

std::string Pretty(const std::string& compact) {
  rapidjson::Document d;
  d.Parse(compact.c_str());
  EXPECT_FALSE(d.HasParseError());
  rapidjson::StringBuffer sb;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(sb);
  w.SetIndent(' ', 4);
  d.Accept(w);
  return sb.GetString();
}

// The capture holds exactly the spec's ops, on the right tasks, with exact ns times and inputs.
void ExpectSpecOps(const Capture& c) {
  EXPECT_EQ(c.tasks.size(), 2u);
  EXPECT_EQ(c.devices.size(), 2u) << "Compute and Tensors pids of worker:0 are one device";
  ASSERT_EQ(c.ops.size(), kOps.size());
  for (const OpSpec& s : kOps) {
    std::vector<const OpRow*> ops = OpsNamed(c, s.node);
    ASSERT_EQ(ops.size(), 1u) << s.node;
    const OpRow& op = *ops[0];
    EXPECT_EQ(op.start, s.ts_us * 1000) << s.node;
    EXPECT_EQ(op.dur(), s.dur_us * 1000) << s.node;
    EXPECT_EQ(c.Str(c.OpType(op)), s.type) << s.node;
    EXPECT_EQ(op.lane, s.tid) << s.node;
    EXPECT_EQ(TaskOf(c, op), kTaskOfPid.at(s.pid)) << s.node;
    ASSERT_EQ(c.Node(op).inputs_count, s.inputs.size()) << s.node;
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      EXPECT_EQ(c.Str(c.inputs[c.Node(op).inputs_begin + i]), s.inputs[i])
          << s.node << " input " << i;
    }
  }
  ASSERT_EQ(c.stats.files.size(), 1u);
  EXPECT_EQ(c.stats.files[0].ops, static_cast<int64_t>(kOps.size()));
  EXPECT_EQ(c.stats.files[0].events, static_cast<int64_t>(kDevices.size() + kOps.size()));
  EXPECT_EQ(c.stats.files[0].skipped, 0);
  EXPECT_EQ(c.stats.TotalSkipped(), 0);
}

int64_t Ignored(const Capture& c, const std::string& what) {
  auto it = c.stats.ignored.find(what);
  return it == c.stats.ignored.end() ? 0 : it->second;
}

TEST(TimelineReader, ObjectForm) {
  TempDir dir;
  WriteFile(dir.File("t.json"), ObjectForm(SpecEvents()));
  ReadResult r = ReadOne(dir.File("t.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ExpectSpecOps(r.capture);
  EXPECT_EQ(r.capture.stats.files[0].format, "tf1-timeline");
  EXPECT_FALSE(r.capture.stats.files[0].gzip);
  EXPECT_EQ(r.capture.stats.files[0].bytes,
            static_cast<int64_t>(ReadFile(dir.File("t.json")).size()));
  EXPECT_EQ(Ignored(r.capture, "bare array without closing bracket"), 0);
}

TEST(TimelineReader, BareArrayForms) {
  const std::string body = Join(SpecEvents(), ",\n");
  const std::map<std::string, std::pair<std::string, bool>> forms = {
      {"closed", {"[\n" + body + "\n]\n", false}},
      {"no closing bracket", {"[\n" + body + "\n", true}},
      {"trailing comma, no bracket (Horovod)", {"[\n" + body + ",\n", true}},
      {"trailing comma and bracket", {"[" + body + ",]", false}},
  };
  for (const auto& [what, form] : forms) {
    SCOPED_TRACE(what);
    TempDir dir;
    WriteFile(dir.File("t.json"), form.first);
    ReadResult r = ReadOne(dir.File("t.json"));
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    ExpectSpecOps(r.capture);
    EXPECT_EQ(Ignored(r.capture, "bare array without closing bracket"), form.second ? 1 : 0);
  }
}

TEST(TimelineReader, PrettyAndCompactGiveTheSameCapture) {
  TempDir dir;
  const std::string compact = ObjectForm(SpecEvents());
  const std::string pretty = Pretty(compact);
  ASSERT_GT(pretty.size(), compact.size());
  ASSERT_NE(pretty.find("\n    "), std::string::npos);
  WriteFile(dir.File("pretty.json"), pretty);
  ReadResult r = ReadOne(dir.File("pretty.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ExpectSpecOps(r.capture);
}

TEST(TimelineReader, AnyKeyOrder) {
  TempDir dir;
  WriteFile(dir.File("t.json"), ObjectForm(SpecEventsKeysReversed()));
  ReadResult r = ReadOne(dir.File("t.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ExpectSpecOps(r.capture);
  // And traceEvents after other top-level members.
  WriteFile(dir.File("t2.json"), R"({"otherData":{"version":"x"},"traceEvents":[)" +
                                     Join(SpecEventsKeysReversed()) +
                                     R"(],"displayTimeUnit":"ms"})");
  ReadResult r2 = ReadOne(dir.File("t2.json"));
  ASSERT_TRUE(r2.status.ok()) << r2.status.message();
  ExpectSpecOps(r2.capture);
}

TEST(TimelineReader, Tf2TraceViewerJson) {
  TempDir dir;
  const std::string json = R"({"displayTimeUnit":"ns","metadata":{"highres-ticks":true},
"traceEvents":[
{"ph":"M","pid":1,"name":"process_name","args":{"name":"/host:CPU"}},
{"ph":"M","pid":1,"tid":5,"name":"thread_name","args":{"name":"tf_Compute"}},
{"ph":"X","pid":1,"tid":5,"ts":1600000000000123.250,"dur":2.5,"name":"MatMul",
 "args":{"long_name":"dense/MatMul:MatMul","group_id":"7"}},
{"ph":"X","pid":1,"tid":6,"ts":1600000000000130.001,"dur":0.004,"name":"Relu",
 "args":{"long_name":"dense/Relu:Relu"}},
{}]})";
  WriteFile(dir.File("t.json"), json);
  ReadResult r = ReadOne(dir.File("t.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Capture& c = r.capture;
  ASSERT_EQ(c.ops.size(), 2u);
  std::vector<const OpRow*> mm = OpsNamed(c, "dense/MatMul");
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_EQ(mm[0]->start, 1600000000000123250) << "fractional microseconds, exact in ns";
  EXPECT_EQ(mm[0]->dur(), 2500);
  EXPECT_EQ(c.Str(c.OpType(*mm[0])), "MatMul");
  EXPECT_EQ(mm[0]->lane, 0) << "lanes: a process's threads in order (tids are XLine ids)";
  std::vector<const OpRow*> relu = OpsNamed(c, "dense/Relu");
  ASSERT_EQ(relu.size(), 1u);
  EXPECT_EQ(relu[0]->start, 1600000000000130001);
  EXPECT_EQ(relu[0]->dur(), 4);
  EXPECT_EQ(c.Str(c.OpType(*relu[0])), "Relu");
  ASSERT_EQ(c.tasks.size(), 1u);
  EXPECT_EQ(c.TaskLabelOf(0), "localhost:0") << "a device without a job is the local task";
  ASSERT_EQ(c.stats.files.size(), 1u);
  EXPECT_EQ(c.stats.files[0].format, "tf2-trace");
  EXPECT_EQ(c.stats.files[0].events, 5);
  EXPECT_EQ(c.stats.TotalSkipped(), 0) << "the trailing {} is not malformed";
  EXPECT_EQ(Ignored(c, "empty {} event"), 1);
}

TEST(TimelineReader, BeginEndPairsNestAndUnmatchedEndIsSkipped) {
  TempDir dir;
  const std::string dev = MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0 Compute");
  WriteFile(dir.File("t.json"), ObjectForm({
                                    dev,
                                    R"({"ph":"B","pid":1,"tid":0,"ts":100,"name":"outer"})",
                                    R"({"ph":"B","pid":1,"tid":0,"ts":110,"name":"MatMul",
                                        "args":{"name":"dense/MatMul","op":"MatMul"}})",
                                    R"({"ph":"E","pid":1,"tid":0,"ts":120})",
                                    R"({"ph":"E","pid":1,"tid":1,"ts":125})",
                                    R"({"ph":"E","pid":1,"tid":0,"ts":150})",
                                    R"({"ph":"B","pid":1,"tid":3,"ts":160,"name":"open"})",
                                }));
  ReadResult r = ReadOne(dir.File("t.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Capture& c = r.capture;
  ASSERT_EQ(c.ops.size(), 2u);
  std::vector<const OpRow*> outer = OpsNamed(c, "outer"), inner = OpsNamed(c, "dense/MatMul");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(outer[0]->start, 100000);
  EXPECT_EQ(outer[0]->dur(), 50000) << "the outer B closes at the second E of its lane";
  EXPECT_EQ(inner[0]->start, 110000);
  EXPECT_EQ(inner[0]->dur(), 10000) << "the inner B closes at the first E";
  EXPECT_EQ(c.Str(c.OpType(*inner[0])), "MatMul");
  EXPECT_EQ(c.stats.skipped.at("E event without a matching B"), 1) << "E on lane 1";
  EXPECT_EQ(c.stats.skipped.at("B event without a matching E"), 1) << "B 'open'";
  EXPECT_EQ(c.stats.files[0].skipped, 2);
  EXPECT_EQ(c.stats.files[0].ops, 2);
}

TEST(TimelineReader, GzipIsDetectedByMagicNotName) {
  TempDir dir;
  const std::string json = ObjectForm(SpecEvents());
  ASSERT_TRUE(WriteGzip(dir.File("trace.json"), json));  // no .gz suffix on purpose
  const std::string raw = ReadFile(dir.File("trace.json"));
  ASSERT_GE(raw.size(), 2u);
  ASSERT_EQ(static_cast<unsigned char>(raw[0]), 0x1f);
  ReadResult r = ReadOne(dir.File("trace.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ExpectSpecOps(r.capture);
  EXPECT_TRUE(r.capture.stats.files[0].gzip);
  EXPECT_EQ(r.capture.stats.files[0].bytes, static_cast<int64_t>(raw.size()));
}

TEST(TimelineReader, ConcatenatedGzipMembersAreReadInSequence) {
  TempDir dir;
  const std::string json = ObjectForm(SpecEvents());
  const size_t half = json.size() / 2;
  ASSERT_TRUE(WriteGzip(dir.File("a.gz"), json.substr(0, half)));
  ASSERT_TRUE(WriteGzip(dir.File("b.gz"), json.substr(half)));
  const std::string a = ReadFile(dir.File("a.gz")), b = ReadFile(dir.File("b.gz"));
  WriteFile(dir.File("ab.json.gz"), a + b);
  ReadResult r = ReadOne(dir.File("ab.json.gz"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ExpectSpecOps(r.capture);
  EXPECT_TRUE(r.capture.stats.files[0].gzip);
  // The first member alone is a truncated document.
  ReadResult first = ReadOne(dir.File("a.gz"));
  EXPECT_FALSE(first.status.ok());
}

TEST(TimelineReader, OneDeviceNamedByTwoProcessNameEvents) {
  TempDir dir;
  // pid 1 and 7 carry the same name (as in TF1 timelines of distributed runs); pid 9 spells the
  // same device in the legacy form.
  WriteFile(dir.File("t.json"),
            ObjectForm({MetaEvent(1, "/job:worker/replica:0/task:0/device:CPU:0 Compute"),
                        MetaEvent(7, "/job:worker/replica:0/task:0/device:CPU:0 Compute"),
                        MetaEvent(9, "/job:worker/replica:0/task:0/cpu:0 Compute"),
                        OpEvent(1, 0, 10, 1, "a", "NoOp"), OpEvent(7, 0, 20, 1, "b", "NoOp"),
                        OpEvent(9, 0, 30, 1, "c", "NoOp")}));
  ReadResult r = ReadOne(dir.File("t.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Capture& c = r.capture;
  ASSERT_EQ(c.tasks.size(), 1u);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.Str(c.devices[0].name), "/job:worker/replica:0/task:0/device:CPU:0");
  ASSERT_EQ(c.ops.size(), 3u);
  EXPECT_EQ(c.device_ops[0].first, 0u);
  EXPECT_EQ(c.device_ops[0].second, 3u);
  // Sorted by start within the device.
  EXPECT_EQ(c.Str(c.OpName(c.ops[0])), "a");
  EXPECT_EQ(c.Str(c.OpName(c.ops[2])), "c");
}

TEST(TimelineReader, AllocatorsOpsAreDroppedAndUnnamedPidsAreUnknownTasks) {
  TempDir dir;
  WriteFile(
      dir.File("t.json"),
      ObjectForm({MetaEvent(0, "Allocators"),
                  MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0 Compute"),
                  OpEvent(0, 0, 10, 5, "alloc_op", "Foo"),
                  R"({"ph":"C","pid":0,"ts":12,"name":"cpu","args":{"cpu":1024}})",
                  OpEvent(1, 0, 20, 5, "kept", "NoOp"), OpEvent(42, 0, 30, 5, "orphan", "NoOp")}));
  ReadResult r = ReadOne(dir.File("t.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Capture& c = r.capture;
  EXPECT_TRUE(OpsNamed(c, "alloc_op").empty());
  ASSERT_EQ(OpsNamed(c, "kept").size(), 1u);
  ASSERT_EQ(OpsNamed(c, "orphan").size(), 1u);
  EXPECT_EQ(TaskOf(c, *OpsNamed(c, "orphan")[0]), "unknown:42");
  EXPECT_EQ(c.ops.size(), 2u);
  EXPECT_EQ(c.stats.files[0].ops, 2);
  EXPECT_EQ(c.tasks.size(), 2u) << "no task for Allocators";
  EXPECT_EQ(Ignored(c, "events on a non-device process (e.g. Allocators)"), 1);
  EXPECT_EQ(Ignored(c, "counter"), 1);
  EXPECT_EQ(c.stats.TotalSkipped(), 0);
}

TEST(TimelineReader, SeveralFilesMergeIntoOneBuilder) {
  TempDir dir;
  const std::string ps = MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0 Compute");
  WriteFile(dir.File("w0.json"),
            ObjectForm({ps, MetaEvent(2, "/job:worker/replica:0/task:0/device:CPU:0 Compute"),
                        OpEvent(1, 0, 100, 5, "w/read", "Identity"),
                        OpEvent(2, 0, 110, 5, "MatMul", "MatMul", {"w/read_S1"})}));
  // The second file uses other pids for the same PS device and for worker:1.
  WriteFile(dir.File("w1.json"),
            BareArray({MetaEvent(5, "/job:ps/replica:0/task:0/device:CPU:0 Compute"),
                       MetaEvent(1, "/job:worker/replica:0/task:1/device:CPU:0 Compute"),
                       OpEvent(5, 0, 200, 5, "apply", "ApplyAdam"),
                       OpEvent(1, 0, 120, 5, "MatMul_1", "MatMul", {"w/read_S2"})}));
  CaptureBuilder b;
  ASSERT_TRUE(ReadTimeline(dir.File("w0.json"), &b).ok());
  ASSERT_TRUE(ReadTimeline(dir.File("w1.json"), &b).ok());
  Capture c = b.Finish();
  ASSERT_EQ(c.tasks.size(), 3u);
  EXPECT_EQ(c.TaskLabelOf(0), "ps:0") << "PS first";
  EXPECT_EQ(c.stats.files.size(), 2u);
  EXPECT_EQ(TaskOf(c, *OpsNamed(c, "apply")[0]), "ps:0");
  EXPECT_EQ(TaskOf(c, *OpsNamed(c, "MatMul_1")[0]), "worker:1");
  EXPECT_NE(FindEdge(c, "ps:0", "worker:0", "w/read"), nullptr);
  EXPECT_NE(FindEdge(c, "ps:0", "worker:1", "w/read"), nullptr) << "resolved across files";
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// Names, types and inputs are viewed in place where the parser reads the file in place (a mapped
// plain file, the chunks of a gzip file), but an escaped string is decoded into the parser's
// scratch buffer, which the next escaped string overwrites: every field must still read back as
// written, whichever way the file is read (mapped, gzip streamed on one thread, gzip in 4 KiB
// chunks on two), and with the fast path off.
TEST(TimelineReader, EscapedAndPlainStringsOfOneEventReadBackAsWritten) {
  TempDir dir;
  std::vector<std::string> events = {MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0 Compute")};
  // JSON text of each string, and what it decodes to.
  const std::vector<std::pair<std::string, std::string>> texts = {
      {R"(plain/node)", "plain/node"},   {R"(q\"uote)", "q\"uote"},
      {R"(back\\slash)", "back\\slash"}, {R"(caf\u00e9_S1)", "caf\xc3\xa9_S1"},
      {R"(tab\there)", "tab\there"},
  };
  const size_t n = texts.size();
  for (int i = 0; i < 400; ++i) {
    const auto& node = texts[i % n];
    const auto& type = texts[(i + 1) % n];
    const auto& in0 = texts[(i + 2) % n];
    const auto& in1 = texts[(i + 3) % n];
    events.push_back(OpEvent(1, 0, 1000 + 10 * i, 5, node.first + std::to_string(i), type.first,
                             {in0.first, in1.first}));
  }
  const std::string text = ObjectForm(events);
  WriteFile(dir.File("t.json"), text);
  ASSERT_TRUE(WriteGzip(dir.File("t.json.gz"), text));
  for (const char* file : {"t.json", "t.json.gz"}) {
    for (int threads : {1, 2}) {
      for (bool fast : {true, false}) {
        SCOPED_TRACE(fmt::format("{} threads {} fast {}", file, threads, fast));
        CaptureBuilder b;
        TimelineReadOptions o;
        o.threads = threads;
        o.fast_path = fast;
        o.chunk_bytes = 4096;  // gzip on two threads: many chunks
        ASSERT_TRUE(ReadTimeline(dir.File(file), &b, o).ok());
        const Capture c = b.Finish();
        ASSERT_EQ(c.ops.size(), 400u);
        std::map<std::string, const OpRow*> by_name;
        const std::vector<OpRow> rows = c.ops.Rows();
        for (const OpRow& op : rows) by_name[std::string(c.Str(c.OpName(op)))] = &op;
        for (int i = 0; i < 400; ++i) {
          const std::string name = texts[i % n].second + std::to_string(i);
          ASSERT_EQ(by_name.count(name), 1u) << name;
          const OpRow& op = *by_name[name];
          EXPECT_EQ(c.Str(c.OpType(op)), texts[(i + 1) % n].second) << name;
          ASSERT_EQ(c.Node(op).inputs_count, 2) << name;
          EXPECT_EQ(c.Str(c.inputs[c.Node(op).inputs_begin]), texts[(i + 2) % n].second) << name;
          EXPECT_EQ(c.Str(c.inputs[c.Node(op).inputs_begin + 1]), texts[(i + 3) % n].second)
              << name;
        }
        if (threads == 2 && std::string(file) == "t.json.gz") {
          EXPECT_GT(c.stats.files[0].chunks, 1) << "the gzip chunk path ran";
        }
      }
    }
  }
}

}  // namespace
}  // namespace tfdiag::test
