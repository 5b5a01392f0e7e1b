// The parallel gzip import (collectors/timeline/gzip_import.h) and the pieces it is built from:
// the ISA-L inflater (igzip_reader.h) and the read-only file mapping (mapped_file.h).
//
// The reference for every gzip file is the sequential zlib reading (ReadTimeline with one
// thread). TimelineReadOptions::chunk_bytes forces the parallel import on these small files and
// makes its segments small (64 KiB), so each file is cut into dozens of segments and B/E pairs and
// DataFlow arrows straddle many of them.
#include "collectors/timeline/gzip_import.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/analysis.h"
#include "collectors/timeline/igzip_reader.h"
#include "collectors/timeline/mapped_file.h"
#include "collectors/timeline/timeline_reader.h"
#include "report/report.h"
#include "rules/rule_set.h"
#include "samples/simulator.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

constexpr size_t kSegment = 64 << 10;

struct Imported {
  Status status;
  std::string json;  // analysis JSON with every FileStats::chunks set to 1; empty on error
  FileStats file;    // the last file's stats, as read (chunks not normalised)
  size_t ops = 0, flows = 0;
  std::vector<int64_t> span_durs;  // durations (ns) of the ops named "Span" (B/E pairs)
};

// Reads `paths` in order into one builder with ReadTimeline, then finishes and analyses the
// capture with the same thread count, as LoadInputs does (which has no chunk_bytes option).
Imported Import(const std::vector<std::string>& paths, int threads, size_t chunk_bytes,
                bool fast_path = true) {
  Imported r;
  CaptureBuilder builder;
  TimelineReadOptions o;
  o.threads = threads;
  o.chunk_bytes = chunk_bytes;
  o.fast_path = fast_path;
  for (const std::string& path : paths) {
    r.status = ReadTimeline(path, &builder, o);
    if (!r.status.ok()) return r;
  }
  Capture c = builder.Finish(threads);
  r.file = c.stats.files.back();
  r.ops = c.ops.size();
  r.flows = c.flows.size();
  for (const OpRow& op : c.ops.Rows()) {
    if (c.Str(c.OpName(op)) == "Span") r.span_durs.push_back(op.dur());
  }
  for (FileStats& f : c.stats.files) f.chunks = 1;  // differs by design
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  r.json = RenderJson(c, Analyze(c, *rules, nullptr, threads), true).value();
  return r;
}

// threads 2, 3 and 4 with 64 KiB segments give the sequential result, through the parallel path
// (more than one chunk; parsed by the fast tokenizer when `fast_path`).
void ExpectParallelGzipMatchesSequential(const std::vector<std::string>& paths,
                                         bool fast_path = true) {
  const Imported one = Import(paths, 1, 0);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  EXPECT_EQ(one.file.chunks, 1);
  EXPECT_TRUE(one.file.gzip);
  for (int threads : {2, 3, 4}) {
    const Imported many = Import(paths, threads, kSegment, fast_path);
    ASSERT_TRUE(many.status.ok()) << many.status.message();
    EXPECT_GT(many.file.chunks, 1) << threads << " threads: the parallel gzip path did not run";
    EXPECT_TRUE(many.file.gzip);
    EXPECT_EQ(many.file.fast_path, fast_path);
    EXPECT_EQ(many.ops, one.ops);
    EXPECT_TRUE(many.json == one.json) << paths.back() << ": " << threads << " threads differ";
  }
}

// A bare array of trace events without its closing bracket (as Horovod leaves it), `n` X ops on
// two tasks, and:
//  - one B/E pair ("Span") and one DataFlow arrow spanning the whole file;
//  - every 1000 ops a B/E pair closed 2500 ops later and an arrow ending 1700 ops later, on
//    their own threads (~0.5 MB apart: each spans several 64 KiB segments);
//  - every `lookalike_every` ops (0: never) an event whose strings hold "},{" lookalikes, plain
//    and between escaped quotes.
struct Straddling {
  std::string text;
  int spans = 0;  // B/E pairs
  int flows = 0;  // s/t arrows
};

Straddling StraddlingText(int n, int lookalike_every) {
  Straddling s;
  s.text = "[" + MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0 Compute") + ",\n" +
           MetaEvent(2, "/job:worker/replica:0/task:0/device:CPU:0 Compute") + ",\n";
  auto ts = [](int i) { return 2000 + int64_t{i} * 5; };
  s.text += std::string(R"({"ph":"B","name":"Span","pid":2,"tid":9,"ts":1000},)") + "\n";
  s.text += FlowEvent('s', 1, 0, 1001, 1, "w/read") + ",\n";
  s.spans = s.flows = 1;
  for (int i = 0; i < n; ++i) {
    // Pair k opens at op 1000k (if it also closes before the end); its E follows 2500 ops later
    // on thread 10 + k % 3 (free again by then), its arrow's t 1700 ops later.
    if (i % 1000 == 0 && i + 2500 < n) {
      const int k = i / 1000;
      s.text += fmt::format(R"({{"ph":"B","name":"Span","pid":2,"tid":{},"ts":{}}},)", 10 + k % 3,
                            ts(i) + 1) +
                "\n";
      s.text += FlowEvent('s', 1, 0, ts(i) + 1, 100 + k, "w/read") + ",\n";
      ++s.spans;
      ++s.flows;
    }
    if (i % 1000 == 500 && i >= 2500) {
      const int k = (i - 2500) / 1000;
      s.text +=
          fmt::format(R"({{"ph":"E","pid":2,"tid":{},"ts":{}}},)", 10 + k % 3, ts(i) + 1) + "\n";
    }
    if (i % 1000 == 700 && i >= 1700 && i - 1700 + 2500 < n) {
      s.text += FlowEvent('t', 2, 0, ts(i), 100 + (i - 1700) / 1000, "w/read") + ",\n";
    }
    s.text += OpEvent(1 + i % 2, 0, ts(i), 3, fmt::format("m{}", i % 97), "MatMul",
                      {fmt::format("w/read_S{}", i % 13), fmt::format("x{}", i % 7)}) +
              ",\n";
    if (lookalike_every > 0 && i % lookalike_every == 0) {
      s.text += fmt::format(R"({{"ph":"X","name":"Str","pid":1,"tid":1,"ts":{},"dur":1,"args":)"
                            R"({{"name":"a}},{{b","op":"}}, {{","note":"q\"}},{{\"r"}}}},)",
                            ts(i)) +
                "\n";
    }
  }
  s.text += FlowEvent('t', 2, 0, 9999999, 1, "w/read") + ",\n";
  // A trailing comma and no ']'.
  s.text += std::string(R"({"ph":"E","pid":2,"tid":9,"ts":9999999},)") + "\n";
  return s;
}

// B/E pairs and DataFlow arrows straddling dozens of 64 KiB segments of a gzip bare array are
// paired exactly as in the sequential reading, whatever the thread count.
TEST(GzipImport, StraddlingEventsMatchSequential) {
  TempDir dir;
  const Straddling s = StraddlingText(20000, 0);
  const std::string path = dir.File("straddle.json.gz");
  ASSERT_TRUE(WriteGzip(path, s.text));
  ASSERT_GT(s.text.size(), 40 * kSegment);
  ExpectParallelGzipMatchesSequential({path});

  // The pairs were really matched (not only equally missed): every B found its E.
  const Imported r = Import({path}, 4, kSegment);
  EXPECT_EQ(r.flows, static_cast<size_t>(s.flows));
  ASSERT_EQ(r.span_durs.size(), static_cast<size_t>(s.spans));
  int64_t whole = 0;
  for (int64_t d : r.span_durs) {
    if (d == (9999999 - 1000) * 1000LL) {
      ++whole;
    } else {
      EXPECT_EQ(d, 2500 * 5 * 1000LL);
    }
  }
  EXPECT_EQ(whole, 1) << "the B at the start and the E at the end make one op";
}

// A file of gzip members concatenated (as `cat a.gz b.gz` makes), the first ending in the middle
// of an event and an empty member between them, reads as the sequential reading does.
TEST(GzipImport, ConcatenatedMembersSplitMidEventMatchSequential) {
  TempDir dir;
  const Straddling s = StraddlingText(20000, 0);
  size_t split = s.text.size() / 2;
  while (s.text[split] != ':') ++split;  // inside an event, between a key and its value
  ASSERT_TRUE(WriteGzip(dir.File("a.gz"), s.text.substr(0, split)));
  ASSERT_TRUE(WriteGzip(dir.File("empty.gz"), ""));
  ASSERT_TRUE(WriteGzip(dir.File("b.gz"), s.text.substr(split)));
  const std::string path = dir.File("t.json.gz");
  WriteFile(path, ReadFile(dir.File("a.gz")) + ReadFile(dir.File("empty.gz")) +
                      ReadFile(dir.File("b.gz")));
  ExpectParallelGzipMatchesSequential({path});
  EXPECT_EQ(Import({path}, 2, kSegment).flows, static_cast<size_t>(s.flows));
}

// Simulated TF1 timelines of the hot-ps scenario, gzip, compact and pretty-printed: the parallel
// import gives the sequential analysis.
TEST(GzipImport, SimulatedHotPsMatchesSequential) {
  TempDir dir;
  for (bool pretty : {false, true}) {
    sim::ScenarioParams p;
    p.scenario = "hot-ps";
    p.format = sim::TraceFormat::kTf1;
    p.pretty = pretty;
    p.steps = pretty ? 6 : 10;
    p.gzip = true;
    const std::string path = dir.File(pretty ? "pretty.json.gz" : "compact.json.gz");
    ASSERT_TRUE(sim::WriteScenario(p, path).ok());
    SCOPED_TRACE(path);
    ExpectParallelGzipMatchesSequential({path});
  }
}

// With fast_path = false every segment is parsed by RapidJSON; the result is still the sequential
// one (FileStats::fast_path false shows which parser ran).
TEST(GzipImport, RapidJsonSegmentsMatchSequential) {
  TempDir dir;
  const std::string path = dir.File("straddle.json.gz");
  ASSERT_TRUE(WriteGzip(path, StraddlingText(12000, 0).text));
  ExpectParallelGzipMatchesSequential({path}, false);

  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.pretty = true;
  p.steps = 4;
  p.gzip = true;
  const std::string sim_path = dir.File("pretty.json.gz");
  ASSERT_TRUE(sim::WriteScenario(p, sim_path).ok());
  ExpectParallelGzipMatchesSequential({sim_path}, false);
}

// Two gzip files in `dir` for the fallback tests: `first`, 3000 plain events (another file already
// read into the builder), and `lookalike`, 12000 events with "},{" lookalikes inside strings next
// to nearly every one, so that some segment cuts land inside a string.
struct LookalikeFiles {
  std::string first, lookalike;
};
LookalikeFiles WriteLookalikeFiles(const TempDir& dir) {
  LookalikeFiles f{dir.File("first.json.gz"), dir.File("lookalike.json.gz")};
  EXPECT_TRUE(WriteGzip(f.first, StraddlingText(3000, 0).text));
  EXPECT_TRUE(WriteGzip(f.lookalike, StraddlingText(12000, 1).text));
  return f;
}

// "},{" lookalikes inside strings next to nearly every event, so some segment cuts land inside a
// string: such a segment does not parse, the parallel import gives up (chunks == 1: the file was
// read sequentially) and rolls back. The result is exactly the sequential reading's, also when
// the builder already held another file's rows: nothing of the abandoned attempt is left.
TEST(GzipImport, CutsInsideStringsFallBackToTheSequentialResult) {
  TempDir dir;
  const auto [first, path] = WriteLookalikeFiles(dir);
  ASSERT_FALSE(HasFailure());

  for (const std::vector<std::string>& paths :
       {std::vector<std::string>{path}, std::vector<std::string>{first, path}}) {
    const Imported one = Import(paths, 1, 0);
    ASSERT_TRUE(one.status.ok()) << one.status.message();
    for (int threads : {2, 4}) {
      const Imported many = Import(paths, threads, kSegment);
      ASSERT_TRUE(many.status.ok()) << many.status.message();
      EXPECT_EQ(many.file.chunks, 1) << "a cut inside a string was accepted";
      EXPECT_EQ(many.ops, one.ops);
      EXPECT_TRUE(many.json == one.json) << paths.size() << " files, " << threads << " threads";
    }
  }
}

// Called directly, ReadGzipParallel returns false on a file it cannot import (a cut inside a
// string; corrupt gzip data half-way, after many segments were merged) and leaves the builder
// exactly as it was: finishing it gives the capture of what it held before.
TEST(GzipImport, FailureLeavesTheBuilderAsItWas) {
  TempDir dir;
  const auto [first, lookalike] = WriteLookalikeFiles(dir);
  ASSERT_FALSE(HasFailure());
  ASSERT_TRUE(WriteGzip(dir.File("good.gz"), StraddlingText(20000, 0).text));
  std::string gz = ReadFile(dir.File("good.gz"));
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] = '\xff';
  const std::string corrupt = dir.File("corrupt.json.gz");
  WriteFile(corrupt, gz);

  auto analysis = [](CaptureBuilder* b) {
    Capture c = b->Finish(1);
    StatusOr<RuleSet> rules = DefaultRuleSet();
    return RenderJson(c, Analyze(c, *rules), true).value();
  };
  CaptureBuilder only_first;
  ASSERT_TRUE(ReadTimeline(first, &only_first).ok());
  const std::string expected = analysis(&only_first);

  for (const std::string& bad : {lookalike, corrupt}) {
    CaptureBuilder b;
    ASSERT_TRUE(ReadTimeline(first, &b).ok());
    TimelineReadOptions o;
    o.threads = 2;
    o.chunk_bytes = kSegment;
    int segments = 0;
    o.progress = [&segments](int64_t, int64_t) { ++segments; };
    EXPECT_FALSE(ReadGzipParallel(bad, 2, &b, o)) << bad;
    if (bad == corrupt) {  // it failed after merging segments, which were then dropped
      EXPECT_GT(segments, 4) << "the import gave up before taking several segments";
    }
    EXPECT_EQ(b.stats().files.size(), 1u) << bad;
    EXPECT_TRUE(analysis(&b) == expected) << bad << ": rows of the failed import were kept";
  }

  // The same call on the intact file imports it, appending its FileStats.
  CaptureBuilder b;
  TimelineReadOptions o;
  o.chunk_bytes = kSegment;
  ASSERT_TRUE(ReadGzipParallel(dir.File("good.gz"), 3, &b, o));
  ASSERT_EQ(b.stats().files.size(), 1u);
  EXPECT_GT(b.stats().files[0].chunks, 1);
  EXPECT_EQ(b.stats().files[0].bytes, static_cast<int64_t>(ReadFile(dir.File("good.gz")).size()));
}

// Bad gzip or bad JSON: with the parallel import forced on (threads 2 and 4, 64 KiB segments)
// ReadTimeline fails with the same code and message as the sequential zlib reading.
TEST(GzipImport, ErrorsMatchSequential) {
  TempDir dir;
  std::string text = StraddlingText(12000, 0).text;
  ASSERT_TRUE(WriteGzip(dir.File("good.gz"), text));
  const std::string gz = ReadFile(dir.File("good.gz"));
  std::vector<std::pair<std::string, std::string>> cases;  // name, file contents
  cases.emplace_back("truncated-half.gz", gz.substr(0, gz.size() / 2));
  cases.emplace_back("truncated-in-trailer.gz", gz.substr(0, gz.size() - 3));
  cases.emplace_back("no-trailer.gz", gz.substr(0, gz.size() - 8));
  // (Deflate data overwritten mid-stream: CorruptDataMidStreamGivesTheSequentialError.)
  std::string bad_crc = gz;
  bad_crc[gz.size() - 8] ^= 0x01;  // the CRC-32 of the member's data
  cases.emplace_back("bad-crc.gz", bad_crc);
  std::string bad_size = gz;
  bad_size[gz.size() - 4] ^= 0x01;  // ISIZE, the data's length mod 2^32
  cases.emplace_back("bad-isize.gz", bad_size);
  cases.emplace_back("trailing-garbage.gz", gz + "garbage after the member\n");
  for (auto& [name, contents] : cases) WriteFile(dir.File(name), contents);

  // Valid gzip of text that is not a timeline.
  std::string prose;
  for (int i = 0; i < 20000; ++i) prose += fmt::format("line {} of plain text, not JSON\n", i);
  ASSERT_TRUE(WriteGzip(dir.File("prose.gz"), prose));
  ASSERT_TRUE(WriteGzip(dir.File("no-events.gz"), R"({"displayTimeUnit":"ns"})"));
  std::string late_error = text;
  const size_t at = late_error.find("\"ts\":", late_error.size() * 3 / 4);
  ASSERT_NE(at, std::string::npos);
  late_error.erase(at + 4, 1);  // "ts" 123: a missing colon deep in the file
  ASSERT_TRUE(WriteGzip(dir.File("late-error.gz"), late_error));
  for (const char* name : {"prose.gz", "no-events.gz", "late-error.gz"})
    cases.emplace_back(name, "");

  for (const auto& [name, contents] : cases) {
    const std::string path = dir.File(name);
    CaptureBuilder b1;
    const Status one = ReadTimeline(path, &b1);
    ASSERT_FALSE(one.ok()) << name;
    for (int threads : {2, 4}) {
      CaptureBuilder b;
      TimelineReadOptions o;
      o.threads = threads;
      o.chunk_bytes = kSegment;
      const Status many = ReadTimeline(path, &b, o);
      EXPECT_EQ(many.code(), one.code()) << name << ", " << threads << " threads";
      EXPECT_EQ(many.message(), one.message()) << name << ", " << threads << " threads";
    }
  }
}

// Progress of the parallel gzip import: the (done, total) values never decrease, total is the
// file's size, and the last call reports (size, size). Checked through ReadTimeline and on
// ReadGzipParallel itself (which ReadTimeline's monotonic wrapper does not cover).
TEST(GzipImport, ProgressNeverGoesBackAndEndsAtTheFileSize) {
  TempDir dir;
  const std::string path = dir.File("t.json.gz");
  ASSERT_TRUE(WriteGzip(path, StraddlingText(20000, 0).text));
  const int64_t size = static_cast<int64_t>(ReadFile(path).size());

  for (bool direct : {false, true}) {
    SCOPED_TRACE(direct ? "ReadGzipParallel" : "ReadTimeline");
    std::vector<std::pair<int64_t, int64_t>> calls;
    TimelineReadOptions o;
    o.threads = 3;
    o.chunk_bytes = kSegment;
    o.progress = [&calls](int64_t done, int64_t total) { calls.emplace_back(done, total); };
    CaptureBuilder b;
    if (direct) {
      ASSERT_TRUE(ReadGzipParallel(path, o.threads, &b, o));
    } else {
      ASSERT_TRUE(ReadTimeline(path, &b, o).ok());
    }
    ASSERT_GT(b.stats().files[0].chunks, 1) << "the parallel gzip path did not run";
    ASSERT_GT(calls.size(), 2u);
    for (size_t i = 0; i < calls.size(); ++i) {
      EXPECT_EQ(calls[i].second, size) << "call " << i;
      if (i > 0) {
        EXPECT_GE(calls[i].first, calls[i - 1].first) << "call " << i;
      }
    }
    EXPECT_EQ(calls.back(), std::make_pair(size, size));
  }
}

// Deflate data overwritten half-way inflates to garbage that zlib notices only at the CRC check
// at the end: the first fault of the file is then the JSON syntax error in the garbage, and every
// thread count reports that, not the CRC error. (With threads > 1 the sequential fallback inflates
// ahead on a second thread, which met the CRC error long before the parser reached the garbage;
// InputStream::status() used to report it at once whenever the rest of the inflated stream fit in
// the read-ahead ring.)
TEST(GzipImport, CorruptDataMidStreamGivesTheSequentialError) {
  TempDir dir;
  ASSERT_TRUE(WriteGzip(dir.File("good.gz"), StraddlingText(12000, 0).text));
  std::string gz = ReadFile(dir.File("good.gz"));
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) gz[i] = '\xff';
  const std::string path = dir.File("corrupt-mid.gz");
  WriteFile(path, gz);
  CaptureBuilder b1;
  const Status one = ReadTimeline(path, &b1);
  ASSERT_FALSE(one.ok());
  for (int threads : {2, 4}) {
    for (size_t chunk_bytes : {size_t{0}, kSegment}) {
      CaptureBuilder b;
      TimelineReadOptions o;
      o.threads = threads;
      o.chunk_bytes = chunk_bytes;
      const Status many = ReadTimeline(path, &b, o);
      EXPECT_EQ(many.code(), one.code()) << threads << " threads, chunk_bytes " << chunk_bytes;
      EXPECT_EQ(many.message(), one.message())
          << threads << " threads, chunk_bytes " << chunk_bytes;
    }
  }
}

// Segments far smaller than an event (chunk_bytes 4 to 1000: every segment grows until it holds
// an event boundary) still give the sequential result.
TEST(GzipImport, TinySegmentsMatchSequential) {
  TempDir dir;
  const std::string path = dir.File("small.json.gz");
  ASSERT_TRUE(WriteGzip(path, StraddlingText(3000, 0).text));
  const Imported one = Import({path}, 1, 0);
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  for (size_t chunk_bytes : {4, 100, 1000}) {
    const Imported many = Import({path}, 2, chunk_bytes);
    ASSERT_TRUE(many.status.ok()) << many.status.message();
    EXPECT_GT(many.file.chunks, 100) << chunk_bytes;
    EXPECT_TRUE(many.json == one.json) << "chunk_bytes " << chunk_bytes;
  }
}

// chunk_bytes of 1, 2 or 3 returns the sequential result. (A segment that reached its target
// without an event boundary grew by target / 4, which is 0 under 4: the loop spun forever.) Run in
// a child with a 2 s alarm, so that a hang fails rather than blocks the suite.
TEST(GzipImportDeathTest, ChunkBytesUnderFourReturns) {
  TempDir dir;
  const std::string path = dir.File("small.json.gz");
  ASSERT_TRUE(WriteGzip(path, StraddlingText(100, 0).text));
  for (size_t chunk_bytes : {1, 2, 3}) {
    EXPECT_EXIT(
        {
          ::alarm(2);
          CaptureBuilder b;
          TimelineReadOptions o;
          o.threads = 2;
          o.chunk_bytes = chunk_bytes;
          _exit(ReadTimeline(path, &b, o).ok() ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "")
        << "chunk_bytes " << chunk_bytes;
  }
}

}  // namespace
}  // namespace tfdiag::test
