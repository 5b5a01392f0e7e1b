// The bundle file: a Capture's live part survives a write/read round trip, bad bundles give the
// file and field, and analyze reads bundles next to timelines.
#include "core/bundle.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "collectors/load_inputs.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

Capture SmallLiveCapture() {
  CaptureBuilder b;
  b.meta().host = "node-1";
  b.meta().kernel = "6.1";
  b.meta().interval_ms = 1000;
  b.meta().window_start = 1'000'000'000;
  b.meta().window_end = 3'000'000'000;
  uint32_t ps = b.AddTask("ps", 0, 0), worker = b.AddTask("worker", 0, 1);
  ProcessRow p;
  p.task = worker;
  p.pid = 42;
  p.pod = b.Intern("mnist-worker-1");
  p.qos = b.Intern("Burstable");
  p.cpu_limit = 1.5;
  p.quota_us = 150000;
  p.period_us = 100000;
  p.cpuset_cpus = 8;
  p.host_cpus = 8;
  uint32_t w = b.AddProcess(p);
  p.task = ps;
  p.pid = 41;
  uint32_t q = b.AddProcess(p);
  for (int i = 0; i < 3; ++i) {
    ProcessSampleRow s;
    s.ts = 1'000'000'000LL * (i + 1);
    s.process = w;
    s.threads = 20;
    s.runnable = 9;
    s.cpu_ns = 1'500'000'000LL * i;
    s.nr_periods = 10 * i;
    s.nr_throttled = 6 * i;
    b.AddProcessSample(s);
    s.process = q;
    b.AddProcessSample(s);
    ThreadSampleRow t;
    t.ts = s.ts;
    t.process = w;
    t.tid = 43;
    t.name = b.Intern("tf_intra_op");
    t.state = 'R';
    t.cpu_ns = 100 * i;
    b.AddThreadSample(t);
  }
  return b.Finish();
}

TEST(Bundle, RoundTripKeepsTasksProcessesAndSamples) {
  Capture c = SmallLiveCapture();
  TempDir dir;
  ASSERT_TRUE(WriteBundle(c, dir.File("b.json")).ok());
  Capture r = LoadOrDie({dir.File("b.json")});
  ASSERT_EQ(r.processes.size(), 2u);
  EXPECT_EQ(r.TaskLabelOf(r.processes[0].task), "ps:0");  // sorted: PS first
  EXPECT_EQ(r.processes[1].pid, 42);
  EXPECT_EQ(r.Str(r.processes[1].pod), "mnist-worker-1");
  EXPECT_DOUBLE_EQ(r.processes[1].cpu_limit, 1.5);
  EXPECT_EQ(r.process_samples.size(), 6u);
  EXPECT_EQ(r.thread_samples.size(), 3u);
  EXPECT_EQ(r.Str(r.thread_samples[0].name), "tf_intra_op");
  EXPECT_EQ(r.meta.host, "node-1");
  EXPECT_EQ(r.stats.files[0].format, "tfdiag-bundle");
  // Writing what was read gives the same bytes.
  EXPECT_EQ(BundleJson(r), BundleJson(c));
}

// The node's steal over the window (meta.steal_pct) is written, read back, and refused with its
// field outside 0-100; a bundle without it (written before it was recorded) reads as unknown.
TEST(Bundle, StealPctRoundTripsAndIsCheckedAsAPercentage) {
  TempDir dir;
  Capture c = SmallLiveCapture();
  EXPECT_EQ(BundleJson(c).find("steal_pct"), std::string::npos) << "unknown: not written";
  EXPECT_EQ(LoadOrDie({[&] {
              EXPECT_TRUE(WriteBundle(c, dir.File("none.json")).ok());
              return dir.File("none.json");
            }()})
                .meta.steal_pct,
            -1);
  c.meta.steal_pct = 21.5;
  ASSERT_TRUE(WriteBundle(c, dir.File("b.json")).ok());
  EXPECT_DOUBLE_EQ(LoadOrDie({dir.File("b.json")}).meta.steal_pct, 21.5);
  for (const char* bad : {"120", "-3", "\"x\""}) {
    std::string text = ReadFile(dir.File("b.json"));
    const size_t at = text.find("\"steal_pct\":21.5");
    ASSERT_NE(at, std::string::npos) << text.substr(0, 300);
    text.replace(at, 16, std::string("\"steal_pct\":") + bad);
    WriteFile(dir.File("bad.json"), text);
    StatusOr<Capture> r = LoadInputs({dir.File("bad.json")}, {});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("meta.steal_pct: expected a percentage from 0 to 100"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(Bundle, BadBundlesNameTheFileAndField) {
  TempDir dir;
  std::string good = BundleJson(SmallLiveCapture());
  struct Case {
    std::string from, to, expect;
  };
  for (const Case& k :
       {Case{"\"pid\":42", "\"pid\":\"x\"", "processes[1].pid: expected an integer"},
        Case{"\"task\":\"worker:1\"", "\"task\":\"worker:9\"", "names no task"},
        Case{"\"interval_ms\":1000", "\"interval_ms\":true", "meta.interval_ms"},
        Case{"tfdiag.bundle/1\",\"tool\"", "tfdiag.bundle/1\" \"tool\"", "byte "}}) {
    std::string bad = good;
    size_t at = bad.find(k.from);
    ASSERT_NE(at, std::string::npos) << k.from;
    bad.replace(at, k.from.size(), k.to);
    WriteFile(dir.File("bad.json"), bad);
    StatusOr<Capture> c = LoadInputs({dir.File("bad.json")}, {});
    ASSERT_FALSE(c.ok()) << k.to;
    EXPECT_NE(c.status().message().find(dir.File("bad.json")), std::string::npos);
    EXPECT_NE(c.status().message().find(k.expect), std::string::npos) << c.status().message();
  }
}

// Issue 15: negative CPU times, intervals and counts are rejected with the field (they printed
// "CPU used -0.12" and "every -1000 ms").
TEST(Bundle, NegativeTimesAndCountsAreRejectedWithTheField) {
  TempDir dir;
  std::string good = BundleJson(SmallLiveCapture());
  struct Case {
    std::string from, to, expect;
  };
  for (const Case& k : {
           Case{"\"interval_ms\":1000", "\"interval_ms\":-1000",
                "meta.interval_ms: -1000 ms; expected a sampling interval > 0"},
           Case{"[2000000000,1,20,9,1500000000,", "[2000000000,1,20,9,-120000000,",
                "][4] (cpu_ns): -120000000 is negative"},
           Case{"[3000000000,1,20,9,3000000000,", "[3000000000,1,20,9,1000,",
                "(cpu_ns): 1000 is below the previous sample's 1500000000"},
           Case{"[1000000000,0,20,9,0,-1,-1,0,0,-1]", "[1000000000,0,20,9,0,-1,-7,0,0,-1]",
                "(involuntary): -7 is negative"},
           Case{"\"quota_us\":150000", "\"quota_us\":-5", "quota_us: -5 is negative"},
           Case{"\"cpu_limit\":1.5", "\"cpu_limit\":-1.5", "cpu_limit: expected CPUs >= 0"},
           Case{"\"window_end_ns\":3000000000", "\"window_end_ns\":10",
                "meta.window_end_ns: window"},
       }) {
    std::string bad = good;
    size_t at = bad.find(k.from);
    ASSERT_NE(at, std::string::npos) << k.from << "\n" << good;
    bad.replace(at, k.from.size(), k.to);
    WriteFile(dir.File("bad.json"), bad);
    RunResult r = RunTfdiag("analyze '" + dir.File("bad.json") + "'");
    EXPECT_EQ(r.exit_code, 2) << k.to << "\n" << r.out;
    EXPECT_NE(r.err.find(dir.File("bad.json")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(k.expect), std::string::npos) << r.err;
  }
}

// Rows are read by the names in "<rows>_columns": reversing the columns of every table (and
// each row with them) reads back the same capture.
TEST(Bundle, ColumnsAreReadByName) {
  Capture c = SmallLiveCapture();
  rapidjson::Document d;
  std::string json = BundleJson(c);
  d.Parse(json.c_str());
  ASSERT_FALSE(d.HasParseError());
  for (const char* table : {"process_sample", "thread_sample"}) {
    std::string rows = std::string(table) + "s", cols = std::string(table) + "_columns";
    auto reverse = [&](rapidjson::Value& a) {
      for (rapidjson::SizeType i = 0, j = a.Size() - 1; i < j; ++i, --j) a[i].Swap(a[j]);
    };
    reverse(d[cols.c_str()]);
    for (auto& row : d[rows.c_str()].GetArray()) reverse(row);
  }
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  d.Accept(w);
  TempDir dir;
  WriteFile(dir.File("reordered.json"), sb.GetString());
  Capture r = LoadOrDie({dir.File("reordered.json")});
  EXPECT_EQ(BundleJson(r), json);
  // A bundle whose columns lack one this version reads names it.
  std::string missing = json;
  size_t at = missing.find("\"runnable\",");
  ASSERT_NE(at, std::string::npos);
  missing.replace(at, 11, "\"runnable2\",");
  WriteFile(dir.File("missing.json"), missing);
  StatusOr<Capture> bad = LoadInputs({dir.File("missing.json")}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("process_sample_columns: no column \"runnable\""),
            std::string::npos)
      << bad.status().message();
}

TEST(Bundle, AnalyzeReadsABundleNextToATimeline) {
  TempDir dir;
  ASSERT_TRUE(WriteBundle(SmallLiveCapture(), dir.File("b.json")).ok());
  ASSERT_EQ(RunTfdiag("simulate balanced --steps 2 -o " + dir.File("t.json")).exit_code, 0);
  RunResult r = RunTfdiag("analyze --color never " + dir.File("b.json") + " " + dir.File("t.json"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Processes"), std::string::npos);
  EXPECT_NE(r.out.find("PS load"), std::string::npos);
  // 9 runnable threads on 1.5 CPUs: oversubscribed.
  EXPECT_NE(r.out.find("thread-oversubscription ps:0, worker:1"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// Found by fuzz_bundle (2026-11-24): a bundle whose process samples are out of time order (and
// past the window's end) was accepted, but what BundleJson wrote back from it was rejected. Every
// accepted bundle must write back into one that reads again to the same bytes.
TEST(Bundle, WhatIsAcceptedWritesBackIntoABundleThatReadsAgain) {
  TempDir dir;
  // fuzz_bundle's input, as it found it (fuzz/corpus_bundle/small.json mutated): the first
  // process sample at 10 s, after the window's end and after the samples that follow it.
  WriteFile(
      dir.File("a.json"),
      R"json({"schema": "tfdiag.bundle/1", "tool": {"name": "tfdiag", "version": "0.1.0"}, "meta": {"host": "node-1", "kernel": "6.1", "window_start_ns": 1000000000, "window_end_ns": 3000000000, "interval_ms": 1000, "probes": "sched,traffic", "warneeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeings": ["w"]}, "tasks": [{"job": "ps", "replica": 0, "index": 0}, {"job": "worker", "replica": 0, "index": 1}], "processes": [{"task": "ps:0", "pid": 41, "pod": "mnist-ps-0", "pod_uid": "u", "container": "tensorflow", "qos": "Burstable", "cgroup": "/kubepods", "cpuset": "1-sos3", "cpu_limit": 1.5, "quota_us": 150000, "period_us": 100000, "cpuset_cpus": 4, "host_cpus": 8, "first_ns": 1000000000, "last_ns": 3000000000, "exited": false}, {"task": "worker:1", "pid": 42, "pod": "mnist-worker-1", "pod_uid": "v", "container": "tensorflow", "qos": "Guaranteed", "cgroup": "/kubepods", "cpuset": "", "cpu_limit": 0, "quota_us": -1, "period_us": 100000, "cpuset_cpus": 8, "host_cpus": 8, "first_ns": 1000000000, "last_ns": 2000000000, "exited": true}], "process_sample_columns": ["ts_ns", "process", "threads", "runnable", "cpu_ns", "voluntary", "involuntary", "nr_periods", "nr_throttled", "throttled_ns"], "process_samples": [[10000000000, 0, 20, 9, 0, -1, -1, 0, 0, -1], [2000000000, 0, 20, 9, 1500000000, 5, 6, 10, 6, 300], [2000000000, 1, 4, 1, 100, 1, 1, -1, -1, -1]], "thread_sample_columns": ["ts_ns", "process", "tid", "name", "state", "cpu_ns", "voluntary", "involuntary"], "thread_samples": [[1000000000, 0, 43, "tf_intra_op", "R", 100, 1, 2]], "traffic_columns": ["ts_ns", "process", "lovoluntary", "involuntary", "oncpu_ns", "runq_wait_ns", "runq_waits", "runq_hist"], "scehd": [[2000000000, 0, 5, 6, 1000000, 20000, 3, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]]]})json");
  CaptureBuilder a;
  Status first = ReadBundle(dir.File("a.json"), &a);
  // Rejected, naming the file, the sample and why.
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.message().find("a.json: process_samples[1][0] (ts_ns): 2000000000 is before the "
                                 "previous sample's 10000000000 for process 0"),
            std::string::npos)
      << first.message();
  // In time order, the same samples read, and write back into a bundle that reads again.
  std::string sorted = ReadFile(dir.File("a.json"));
  const size_t at = sorted.find("[10000000000, 0, 20, 9, 0,");
  ASSERT_NE(at, std::string::npos);
  sorted.replace(at, 26, "[1000000000, 0, 20, 9, 0, ");
  WriteFile(dir.File("a.json"), sorted);
  CaptureBuilder a2;
  first = ReadBundle(dir.File("a.json"), &a2);
  ASSERT_TRUE(first.ok()) << first.message();
  a = std::move(a2);
  const std::string once = BundleJson(a.Finish());
  WriteFile(dir.File("b.json"), once);
  CaptureBuilder b;
  Status again = ReadBundle(dir.File("b.json"), &b);
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(BundleJson(b.Finish()), once);
}

// Issue 47: fuzz_bundle's input whose thread state was one non-ASCII byte: the reader took it,
// and the writer (UTF-8 always) wrote it as U+FFFD, three bytes the reader then refused. Now the
// reader takes one printable ASCII character only, and the writer writes '?' (unknown) for any
// other state, so what tfdiag writes it reads, to the same bytes.
TEST(Bundle, AThreadStateOfOneNonAsciiByteIsRefusedAndNeverWritten) {
  TempDir dir;
  std::string text = ReadFile(std::string(TFDIAG_SOURCE_DIR) + "/fuzz/corpus_bundle/small.json");
  const size_t at = text.find("\"tf_intra_op\", \"R\"");
  ASSERT_NE(at, std::string::npos);
  text[at + 16] = '\xff';
  WriteFile(dir.File("a.json"), text);
  CaptureBuilder a;
  const Status read = ReadBundle(dir.File("a.json"), &a);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.message().find("thread_samples[0].state: expected a one-letter thread state"),
            std::string::npos)
      << read.message();
  // A capture holding such a state (from a laid-out /proc, say) writes '?'.
  text[at + 16] = 'R';
  WriteFile(dir.File("b.json"), text);
  CaptureBuilder b;
  ASSERT_TRUE(ReadBundle(dir.File("b.json"), &b).ok());
  Capture c = b.Finish();
  ASSERT_EQ(c.thread_samples.size(), 1u);
  c.thread_samples[0].state = '\xff';
  const std::string once = BundleJson(c);
  EXPECT_NE(once.find("\"tf_intra_op\",\"?\""), std::string::npos) << once;
  WriteFile(dir.File("c.json"), once);
  CaptureBuilder again;
  const Status back = ReadBundle(dir.File("c.json"), &again);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(BundleJson(again.Finish()), once);
}

}  // namespace
}  // namespace tfdiag::test
