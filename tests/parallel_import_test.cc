// Parallel import gives exactly the single-threaded result: same analysis JSON, whatever the
// thread count, on simulated timelines (compact, pretty, TF2) and on files built so that B/E pairs
// and DataFlow arrows straddle the cuts, and it falls back safely when a cut candidate is not an
// event boundary. Also gzip inflated on a second thread (read-ahead) against one thread.
#include "collectors/timeline/parallel_import.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "analyzers/analysis.h"
#include "collectors/load_inputs.h"
#include "collectors/timeline/input_stream.h"
#include "collectors/timeline/timeline_reader.h"
#include "report/report.h"
#include "samples/simulator.h"
#include "tests/horovod_json.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

// Analysis JSON without the per-file parse_chunks figure, which differs by design. The capture is
// finished and analysed with the same thread count (parallel sort, steps, edges, rules).
std::string AnalyzeJson(const std::string& path, int threads, int* chunks) {
  LoadOptions lo;
  lo.threads = threads;
  StatusOr<Capture> c = LoadInputs({path}, lo);
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (!c.ok()) return "";
  *chunks = c->stats.files[0].chunks;
  for (FileStats& f : c->stats.files) f.chunks = 1;
  StatusOr<RuleSet> rules = DefaultRuleSet();
  return RenderJson(*c, Analyze(*c, *rules, nullptr, threads), true).value();
}

void ExpectSameForAllThreadCounts(const std::string& path, bool expect_parallel) {
  int chunks1 = 0;
  const std::string one = AnalyzeJson(path, 1, &chunks1);
  EXPECT_EQ(chunks1, 1);
  for (int threads : {2, 3, 4}) {
    int chunks = 0;
    const std::string many = AnalyzeJson(path, threads, &chunks);
    if (expect_parallel) {
      EXPECT_EQ(chunks, threads) << path;
    }
    EXPECT_TRUE(one == many) << path << ": " << threads << " threads differ from 1";
  }
}

TEST(ParallelImport, SimulatedTimelinesGiveIdenticalResults) {
  TempDir dir;
  struct Case {
    const char* scenario;
    sim::TraceFormat format;
    bool pretty;
    int steps;
  };
  for (const Case& k : {Case{"hot-ps", sim::TraceFormat::kTf1, false, 60},
                        Case{"hot-ps", sim::TraceFormat::kTf1, true, 35},
                        Case{"gather-on-worker", sim::TraceFormat::kTf2, false, 40}}) {
    sim::ScenarioParams p;
    p.scenario = k.scenario;
    p.format = k.format;
    p.pretty = k.pretty;
    p.steps = k.steps;
    const std::string path = dir.File("t.json");
    ASSERT_TRUE(sim::WriteScenario(p, path).ok());
    ExpectSameForAllThreadCounts(path, true);
  }
}

// A bare-array file (no closing bracket) of ~20 MB where long B/E ops and DataFlow arrows
// straddle every cut, plus one event whose string holds a "},{" lookalike near a cut.
std::string StraddlingFile(bool with_lookalike) {
  std::string s =
      "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":"
      "\"/job:ps/replica:0/task:0/device:CPU:0 Compute\"}},"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"args\":{\"name\":"
      "\"/job:worker/replica:0/task:0/device:CPU:0 Compute\"}},\n";
  // Opened at the start, closed at the end: each spans all chunks.
  s += "{\"ph\":\"B\",\"name\":\"Outer\",\"pid\":2,\"tid\":9,\"ts\":1000},\n";
  s += "{\"ph\":\"s\",\"cat\":\"DataFlow\",\"name\":\"w/"
       "read\",\"pid\":1,\"tid\":0,\"ts\":1001,\"id\":7},\n";
  for (int i = 0; i < 120000; ++i) {
    s += fmt::format(
        "{{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"MatMul\",\"pid\":{},\"tid\":0,\"ts\":{},\"dur\":"
        "3,"
        "\"args\":{{\"name\":\"m{}\",\"op\":\"MatMul\",\"input0\":\"w/"
        "read_S{}\",\"input1\":\"x{}\"}}}},\n",
        1 + i % 2, 2000 + i * 5, i % 97, i % 13, i % 7);
    if (with_lookalike && i % 20000 == 10000) {
      s += "{\"ph\":\"X\",\"name\":\"Str\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":1,\"args\":"
           "{\"name\":\"a},{b\",\"op\":\"}, {\"}},\n";
    }
  }
  s += "{\"ph\":\"t\",\"cat\":\"DataFlow\",\"name\":\"w/"
       "read\",\"pid\":2,\"tid\":0,\"ts\":9999999,\"id\":7},\n";
  s += "{\"ph\":\"E\",\"pid\":2,\"tid\":9,\"ts\":9999999},\n";  // trailing comma, no ']'
  return s;
}

TEST(ParallelImport, EventsStraddlingChunksAreMatched) {
  TempDir dir;
  const std::string path = dir.File("straddle.json");
  WriteFile(path, StraddlingFile(false));
  ExpectSameForAllThreadCounts(path, true);
  LoadOptions lo;
  lo.threads = 4;
  StatusOr<Capture> c = LoadInputs({path}, lo);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->stats.files[0].chunks, 4);
  EXPECT_EQ(c->stats.TotalSkipped(), 0);
  EXPECT_EQ(c->flows.size(), 1u);  // the s at the start found its t at the end
  bool outer = false;
  for (const OpRow& op : c->ops.Rows()) {
    if (c->Str(c->OpName(op)) == "Outer") outer = op.dur() == (9999999 - 1000) * 1000LL;
  }
  EXPECT_TRUE(outer) << "the B at the start and the E at the end make one op";
}

// A Horovod timeline of ~19 MB (a bare array, B/E pairs on per-tensor rows, ready marks inside
// negotiations): its summary (JSON "horovod") is the same for every thread count.
TEST(ParallelImport, HorovodTimelineGivesIdenticalResults) {
  TempDir dir;
  HorovodPlan plan;
  plan.tensors = 100;
  plan.steps = 220;
  HorovodTruth truth;
  const std::string path = dir.File("horovod.json");
  WriteFile(path, HorovodTimeline(plan, &truth));
  ASSERT_GE(static_cast<int64_t>(ReadFile(path).size()), kMinParallelBytes);
  ExpectSameForAllThreadCounts(path, true);
  LoadOptions lo;
  lo.threads = 3;
  StatusOr<Capture> c = LoadInputs({path}, lo);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->stats.files[0].chunks, 3);
  EXPECT_EQ(c->horovod.negotiations, truth.negotiations);
  EXPECT_EQ(c->horovod.wait_ns, truth.wait_us * 1000);
  EXPECT_EQ(c->horovod.memcpy_wall_ns, truth.memcpy_wall_us * 1000);
}

TEST(ParallelImport, LookalikeCutsInsideStringsStillGiveTheSameResult) {
  TempDir dir;
  const std::string path = dir.File("lookalike.json");
  WriteFile(path, StraddlingFile(true));
  ExpectSameForAllThreadCounts(path, false);
}

// Pids at the edge of the 16-bit device slots. With 65,535 distinct pids (slots 0..65534) nothing
// is skipped and the file is still read in chunks; with 65,536 the last pid's op is skipped, and
// the merge, which used to truncate the slot to 16 bits and put that op on pid 0's device, gives
// way to the sequential reader. Each half of the file holds about half the pids, so no chunk
// reaches the limit alone. Plain files in chunks and gzip in segments give the one-thread result.
TEST(ParallelImport, PidsAtTheDeviceLimitGiveTheSequentialResult) {
  TempDir dir;
  struct Read {
    int64_t skipped;
    int chunks;
    std::string json;
  };
  auto read = [](const std::string& file, int threads, size_t chunk_bytes) {
    CaptureBuilder b;
    TimelineReadOptions o;
    o.threads = threads;
    o.chunk_bytes = chunk_bytes;
    Status s = ReadTimeline(file, &b, o);
    EXPECT_TRUE(s.ok()) << s.message();
    Capture c = b.Finish(threads);
    Read r{c.stats.skipped["op on a pid past the 65535th of the file"], c.stats.files[0].chunks,
           ""};
    for (FileStats& f : c.stats.files) f.chunks = 1;
    StatusOr<RuleSet> rules = DefaultRuleSet();
    r.json = RenderJson(c, Analyze(c, *rules, nullptr, threads), true).value();
    return r;
  };
  for (const int pids : {65535, 65536}) {
    std::string text = "{\"traceEvents\":[\n";
    for (int p = 0; p < pids; ++p) {
      text += OpEvent(p, 0, 1000 + p, 5, "op" + std::to_string(p % 7), "MatMul") + ",\n";
      text += OpEvent(0, 1, 1000 + p, 1, "gradients/padding/step_marker_of_the_test", "NoOp") +
              (p + 1 < pids ? ",\n" : "\n");
    }
    text += "]}\n";
    ASSERT_GE(text.size(), static_cast<size_t>(kMinParallelBytes)) << "too small to be chunked";
    const std::string path = dir.File("pids.json"), gz = dir.File("pids.json.gz");
    WriteFile(path, text);
    ASSERT_TRUE(WriteGzip(gz, text));
    const Read one = read(path, 1, 0);
    EXPECT_EQ(one.skipped, pids - 65535) << pids << " pids: the ops of pids 65535.. are skipped";
    const Read plain = read(path, 3, 0);
    EXPECT_EQ(plain.skipped, one.skipped) << pids;
    EXPECT_EQ(plain.chunks, pids == 65535 ? 3 : 1) << pids << " pids";
    EXPECT_TRUE(plain.json == one.json) << pids << " pids: 3 threads differ from 1";
    const Read gz_one = read(gz, 1, 0);
    const Read gzipped = read(gz, 2, 1 << 20);
    EXPECT_EQ(gz_one.skipped, one.skipped) << pids;
    EXPECT_EQ(gzipped.skipped, one.skipped) << pids;
    if (pids == 65535) {
      EXPECT_GT(gzipped.chunks, 1) << "65535 pids fit: the segments are merged";
    }
    EXPECT_TRUE(gzipped.json == gz_one.json) << pids << " pids: gzip, 2 threads differ from 1";
  }
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// gzip is inflated on a second thread when threads > 1 (InputStream::StartReadAhead): a file of
// two concatenated members, several times the read-ahead ring, gives the same analysis.
TEST(GzipReadAhead, ConcatenatedMembersGiveIdenticalResults) {
  TempDir dir;
  const std::string text = StraddlingFile(false);
  ASSERT_TRUE(WriteGzip(dir.File("a.gz"), text.substr(0, text.size() / 2)));
  ASSERT_TRUE(WriteGzip(dir.File("b.gz"), text.substr(text.size() / 2)));
  const std::string both = ReadFile(dir.File("a.gz")) + ReadFile(dir.File("b.gz"));
  ASSERT_GT(text.size(), size_t{InputStream::kReadAheadSlots + 2} << 20);
  WriteFile(dir.File("t.json.gz"), both);
  int chunks = 0;
  const std::string one = AnalyzeJson(dir.File("t.json.gz"), 1, &chunks);
  ASSERT_NE(one.find("\"gzip\": true"), std::string::npos);
  EXPECT_TRUE(one == AnalyzeJson(dir.File("t.json.gz"), 2, &chunks));
}

// Errors met by the read-ahead thread are reported as without it: same code, offset and text.
TEST(GzipReadAhead, ErrorsAreTheSameAsWithoutReadAhead) {
  TempDir dir;
  const std::string text = StraddlingFile(false);
  ASSERT_TRUE(WriteGzip(dir.File("full.gz"), text));
  const std::string gz = ReadFile(dir.File("full.gz"));
  std::string corrupt = gz;
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) corrupt[i] = '\xff';
  WriteFile(dir.File("half.gz"), gz.substr(0, gz.size() / 2));
  WriteFile(dir.File("corrupt.gz"), corrupt);
  for (const char* name : {"half.gz", "corrupt.gz"}) {
    Status s[2];
    for (int threads : {1, 2}) {
      CaptureBuilder b;
      TimelineReadOptions o;
      o.threads = threads;
      s[threads - 1] = ReadTimeline(dir.File(name), &b, o);
    }
    ASSERT_FALSE(s[0].ok()) << name;
    EXPECT_EQ(s[0].code(), s[1].code()) << name;
    EXPECT_EQ(s[0].message(), s[1].message()) << name;
  }
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// Many files at once (collectors/timeline/timeline_pool.h): plain timelines are parsed on one pool
// of threads, files and chunks of files alike, and merged in file order.

// The analysis JSON of `paths` read together, without what names the inputs (their order is the
// order given) and the per-file parse_chunks figure.
std::string AnalyzeManyJson(const std::vector<std::string>& paths, int threads,
                            std::vector<int>* chunks = nullptr) {
  LoadOptions lo;
  lo.threads = threads;
  StatusOr<Capture> c = LoadInputs(paths, lo);
  EXPECT_TRUE(c.ok()) << c.status().message();
  if (!c.ok()) return "";
  for (FileStats& f : c->stats.files) {
    if (chunks != nullptr) chunks->push_back(f.chunks);
    f.chunks = 1;
  }
  StatusOr<RuleSet> rules = DefaultRuleSet();
  const std::string json = RenderJson(*c, Analyze(*c, *rules, nullptr, threads), true).value();
  rapidjson::Document d;
  d.Parse(json.c_str());
  EXPECT_FALSE(d.HasParseError());
  if (d.HasParseError() || !d.IsObject()) return json;
  EXPECT_TRUE(d.HasMember("inputs"));
  d.RemoveMember("inputs");
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  d.Accept(w);
  return out.GetString();
}

// Per-worker files as users collect them: TF1 compact and pretty, TF2, a bare array larger than
// the chunk size (cut into chunks inside the pool, with B/E pairs and arrows across the cuts), a
// gzip file (read on its own between the pooled ones) and a file given twice.
std::vector<std::string> ManyFiles(TempDir* dir) {
  std::vector<std::string> paths;
  struct Case {
    const char* scenario;
    sim::TraceFormat format;
    bool pretty, gzip;
    int steps;
  };
  int n = 0;
  for (const Case& k : {Case{"hot-ps", sim::TraceFormat::kTf1, false, false, 20},
                        Case{"hot-ps", sim::TraceFormat::kTf1, true, false, 10},
                        Case{"gather-on-worker", sim::TraceFormat::kTf2, false, false, 15},
                        Case{"balanced", sim::TraceFormat::kTf1, false, true, 10},
                        Case{"balanced", sim::TraceFormat::kTf1, false, false, 12},
                        Case{"hot-ps", sim::TraceFormat::kTf1, false, false, 8}}) {
    sim::ScenarioParams p;
    p.scenario = k.scenario;
    p.format = k.format;
    p.pretty = k.pretty;
    p.gzip = k.gzip;
    p.steps = k.steps;
    p.seed = static_cast<uint64_t>(10 + n);
    const std::string path = dir->File("w" + std::to_string(n++) + (k.gzip ? ".json.gz" : ".json"));
    EXPECT_TRUE(sim::WriteScenario(p, path).ok());
    paths.push_back(path);
    if (n == 2) {
      const std::string big = dir->File("straddle.json");
      WriteFile(big, StraddlingFile(false));
      paths.push_back(big);
    }
  }
  paths.push_back(paths[1]);  // given twice: read once
  return paths;
}

// Whatever the order the files are given in, every thread count gives the one-thread result of
// that order.
TEST(TimelinePool, ManyFilesGiveIdenticalResultsForAnyThreadCount) {
  TempDir dir;
  const std::vector<std::string> paths = ManyFiles(&dir);
  std::vector<std::vector<std::string>> orders = {paths, paths, paths};
  std::reverse(orders[1].begin(), orders[1].end());
  std::rotate(orders[2].begin(), orders[2].begin() + 3, orders[2].end());
  for (size_t o = 0; o < orders.size(); ++o) {
    const std::string one = AnalyzeManyJson(orders[o], 1);
    ASSERT_NE(one.find("\"ops\""), std::string::npos);
    for (int threads : {2, 3, 4}) {
      std::vector<int> chunks;
      const std::string many = AnalyzeManyJson(orders[o], threads, &chunks);
      EXPECT_TRUE(one == many) << "order " << o << ", " << threads << " threads differ from 1";
      // The large file is cut into `threads` chunks inside the pool; the others are one each.
      ASSERT_EQ(chunks.size(), paths.size() - 1) << "the file given twice is read once";
      EXPECT_EQ(*std::max_element(chunks.begin(), chunks.end()), threads) << "order " << o;
    }
  }
}

// One TF1 timeline per worker of one job (the worker's device and the PS work its steps caused:
// RecvTensor with its DataFlow arrow, the update), as each worker saves its own.
std::string WorkerTimeline(int worker, int steps) {
  std::vector<std::string> ev = {
      MetaEvent(1, fmt::format("/job:worker/replica:0/task:{}/device:CPU:0 Compute", worker))};
  for (int p = 0; p < 2; ++p) {
    ev.push_back(
        MetaEvent(2 + p, fmt::format("/job:ps/replica:0/task:{}/device:CPU:0 Compute", p)));
  }
  int64_t ts = 1600000000000000 + worker * 13;
  int flow = 0;
  for (int s = 0; s < steps; ++s) {
    ev.push_back(OpEvent(1, 0, ts, 1, "_SOURCE", "NoOp"));
    for (int layer = 0; layer < 4; ++layer) {
      const std::string l = "dense" + std::to_string(layer);
      const int64_t dur = 5 + (s * 7 + layer * 3 + worker) % 40;
      ev.push_back(OpEvent(1, layer % 2, ts + 2, dur, l + "/MatMul", "MatMul",
                           {l + "/x", l + "/w/read", l + "/b"}));
      const int ps = (layer + worker) % 2;
      ev.push_back(FlowEvent('s', 1, 0, ts + 3, flow, l + "/w/read"));
      ev.push_back(OpEvent(2 + ps, 0, ts + 4, dur * 3, "RecvTensor", "RecvTensor"));
      ev.push_back(FlowEvent('t', 2 + ps, 0, ts + 4 + dur * 3, flow++, l + "/w/read"));
      ev.push_back(OpEvent(2 + ps, 1, ts + 8 + dur * 3, 9, l + "/w/Apply", "ApplyGradientDescent",
                           {l + "/w", "lr", "g/" + l}));
      ts += dur * 4 + 12;
    }
  }
  return ObjectForm(ev);
}

// Per-worker files of one job: the same result whatever the order they are given in, and
// whatever the thread count.
TEST(TimelinePool, PerWorkerFilesGiveIdenticalResultsForAnyFileOrder) {
  TempDir dir;
  std::vector<std::string> paths;
  for (int w = 0; w < 7; ++w) {
    paths.push_back(dir.File("worker" + std::to_string(w) + ".json"));
    WriteFile(paths.back(), WorkerTimeline(w, 30 + w));
  }
  const std::string one = AnalyzeManyJson(paths, 1);
  ASSERT_NE(one.find("RecvTensor"), std::string::npos);
  std::vector<std::vector<std::string>> orders = {paths, paths, paths};
  std::reverse(orders[1].begin(), orders[1].end());
  std::rotate(orders[2].begin(), orders[2].begin() + 3, orders[2].end());
  for (size_t o = 0; o < orders.size(); ++o) {
    for (int threads : {1, 2, 3}) {
      EXPECT_TRUE(one == AnalyzeManyJson(orders[o], threads))
          << "order " << o << ", " << threads << " threads differ from the given order, 1 thread";
    }
  }
}

// Progress, as `tfdiag analyze` shows it on stderr: the files one after another in the order
// given, each from its first report up to its size, never going back.
TEST(TimelinePool, ProgressIsMonotonicAcrossFiles) {
  TempDir dir;
  const std::vector<std::string> paths = ManyFiles(&dir);
  for (int threads : {1, 2, 4}) {
    struct Report {
      size_t index;
      int64_t done, total;
    };
    std::vector<Report> reports;
    LoadOptions lo;
    lo.threads = threads;
    lo.progress = [&](size_t index, const std::string&, int64_t done, int64_t total) {
      reports.push_back({index, done, total});
    };
    StatusOr<Capture> c = LoadInputs(paths, lo);
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_FALSE(reports.empty());
    std::vector<bool> completed(paths.size(), false);
    for (size_t r = 1; r < reports.size(); ++r) {
      const Report &a = reports[r - 1], &b = reports[r];
      ASSERT_LE(a.index, b.index) << threads << " threads: report " << r << " goes back a file";
      if (a.index == b.index) {
        EXPECT_LE(a.done, b.done) << threads << " threads: file " << a.index << " goes back";
      }
      EXPECT_LE(b.done, b.total);
    }
    for (const Report& r : reports) completed[r.index] = completed[r.index] || r.done == r.total;
    for (size_t i = 0; i + 1 < paths.size(); ++i) {
      if (i == 3) continue;  // the gzip file: its total is the compressed size, done counts that
      EXPECT_TRUE(completed[i]) << threads << " threads: file " << i << " never reached 100%";
    }
  }
}

// A broken file among many gives the error of the one-thread reading (the sequential reader is
// the reference), and the files before it do not change that.
TEST(TimelinePool, ABrokenFileAmongManyGivesTheSequentialError) {
  TempDir dir;
  std::vector<std::string> paths = ManyFiles(&dir);
  const std::string good = ReadFile(paths[0]);
  const std::string broken = dir.File("broken.json");
  WriteFile(broken, good.substr(0, good.size() / 2) + "}{");
  paths.insert(paths.begin() + 4, broken);
  Status s[4];
  for (int threads : {1, 2, 4}) {
    LoadOptions lo;
    lo.threads = threads;
    StatusOr<Capture> c = LoadInputs(paths, lo);
    ASSERT_FALSE(c.ok()) << threads << " threads";
    s[threads - 1] = c.status();
  }
  EXPECT_NE(s[0].message().find("broken.json: byte "), std::string::npos) << s[0].message();
  for (int threads : {2, 4}) {
    EXPECT_EQ(s[0].code(), s[threads - 1].code());
    EXPECT_EQ(s[0].message(), s[threads - 1].message());
  }
}

}  // namespace
}  // namespace tfdiag::test
