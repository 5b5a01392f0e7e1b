// FastJsonReader against RapidJSON's Reader (tfdiag's flags), differentially: whenever the fast
// tokenizer accepts a document, RapidJSON accepts it too and makes exactly the same handler
// calls; whenever RapidJSON rejects one, the fast tokenizer does too. Checked on hand-written
// edge cases, random documents and random byte mutations of them, each fed whole and in trickles
// of 1..7 bytes (so every token straddles a refill somewhere). Then ReadTimeline with and without
// the fast path on simulated and real traces: the same analysis.
#include "collectors/timeline/fast_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>

#include "analyzers/analysis.h"
#include "collectors/timeline/surrogate_filter.h"
#include "collectors/timeline/timeline_reader.h"
#include "report/report.h"
#include "samples/simulator.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// Logs every call; returns false on a key "stop" (a handler that aborts). With `text` and `tell`
// set (the fast readers), it also checks that the reader's Tell() stands just past the token of
// every call, as TraceHandler relies on at EndArray: `misplaced` counts the calls where it does
// not.
struct Recorder {
  std::string log;
  const std::string* text = nullptr;
  std::function<size_t()> tell;
  int misplaced = 0;
  bool Null() { return At("l") && Add("null"); }
  bool Bool(bool b) { return At("e") && Add(b ? "true" : "false"); }
  bool RawNumber(const char* s, unsigned n, bool) {
    return At("0123456789") && Add("n:" + std::string(s, n));
  }
  bool String(const char* s, unsigned n, bool) { return At("\"") && Add("s:" + std::string(s, n)); }
  bool Key(const char* s, unsigned n, bool) {
    return At("\"") && std::string(s, n) != "stop" && Add("k:" + std::string(s, n));
  }
  bool StartObject() { return At("{") && Add("{"); }
  bool EndObject(unsigned n) { return At("}") && Add("}" + std::to_string(n)); }
  bool StartArray() { return At("[") && Add("["); }
  bool EndArray(unsigned n) { return At("]") && Add("]" + std::to_string(n)); }
  // Whether the byte before Tell() is one of `last` (always true without a tell source).
  bool At(const char* last) {
    if (!tell) return true;
    const size_t t = tell();
    if (t == 0 || t > text->size() || std::strchr(last, (*text)[t - 1]) == nullptr) ++misplaced;
    return true;
  }
  // RapidJSON's other number callbacks are unused with kParseNumbersAsStringsFlag.
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(int64_t) { return false; }
  bool Uint64(uint64_t) { return false; }
  bool Double(double) { return false; }
  bool Add(const std::string& s) {
    log += s;
    log += '|';
    return true;
  }
};

// A source that hands out at most `step` bytes per Read (0: all that fits).
struct Trickle {
  std::string_view text;
  size_t step;
  size_t pos = 0;
  size_t Read(char* dst, size_t cap) {
    size_t n = std::min({cap, text.size() - pos, step == 0 ? cap : step});
    std::copy_n(text.data() + pos, n, dst);
    pos += n;
    return n;
  }
};

struct Outcome {
  bool ok;
  std::string log;
};

Outcome Reference(const std::string& text) {
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseTrailingCommasFlag | rapidjson::kParseNanAndInfFlag;
  Recorder r;
  rapidjson::StringStream raw(text.c_str());
  // As the reference path reads files: lone surrogate escapes become \ufffd (surrogate_filter.h).
  LoneSurrogateFilter<rapidjson::StringStream> in(raw);
  rapidjson::Reader reader;
  bool ok = !reader.Parse<kFlags>(in, r).IsError();
  // RapidJSON stops at a NUL byte, as the stream's end; the file readers treat that as an error.
  if (ok && text.find('\0') != std::string::npos) ok = false;
  return {ok, r.log};
}

// Checks, for a fast reader that accepted `text`, where it stood at each handler call
// (Recorder::misplaced) and at each release callback: at the first byte of a value, never going
// back (everything before the offset is consumed).
template <typename Reader>
Outcome RunChecked(const std::string& text, Reader* reader, Recorder* r) {
  r->text = &text;
  r->tell = [reader] { return reader->Tell(); };
  std::vector<size_t> released;
  reader->set_release(1, [&released](size_t offset) { released.push_back(offset); });
  const bool ok = reader->Run();
  if (ok) {
    EXPECT_EQ(reader->Tell(), text.size());
    EXPECT_EQ(r->misplaced, 0) << "Tell() not just past the token at a handler call: " << text;
    for (size_t k = 0; k < released.size(); ++k) {
      const size_t at = released[k];
      EXPECT_TRUE(at < text.size() && std::strchr("{[\"-0123456789tfn", text[at]) != nullptr &&
                  (k == 0 || at > released[k - 1]))
          << "release offset " << at << " is not the start of the next value: " << text;
    }
  }
  return {ok, r->log};
}

Outcome Fast(const std::string& text, size_t step) {
  Recorder r;
  Trickle src{text, step};
  FastJsonReader<Trickle, Recorder> reader(&src, &r, 256);
  return RunChecked(text, &reader, &r);
}

// The span reader over `text` cut into spans at `cuts` (ascending offsets): as one stream, read in
// place. A token cut in two makes it give up, which is allowed; what it accepts must be right.
Outcome FastSpans(const std::string& text, const std::vector<size_t>& cuts) {
  std::vector<fast_json_internal::Span> spans;
  size_t from = 0;
  for (size_t cut : cuts) {
    spans.push_back({text.data() + from, cut - from});
    from = cut;
  }
  spans.push_back({text.data() + from, text.size() - from});
  Recorder r;
  FastSpanReader<Recorder> reader(spans, &r);
  return RunChecked(text, &reader, &r);
}

// Offsets just after a comma or a blank outside strings: cuts between tokens, as the chunked
// import makes them (head / events / tail).
std::vector<size_t> TokenBoundaries(const std::string& text) {
  std::vector<size_t> cuts;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == ' ' || c == '\n') {
      cuts.push_back(i + 1);
    }
  }
  return cuts;
}

void ExpectConsistent(const std::string& text, const std::string& what) {
  const Outcome ref = Reference(text);
  auto check = [&](const Outcome& fast, const std::string& how) {
    if (fast.ok) {
      ASSERT_TRUE(ref.ok) << what << " (" << how
                          << "): fast accepted what RapidJSON rejects: " << text;
      ASSERT_EQ(fast.log, ref.log) << what << " (" << how << "): " << text;
    }
    if (!ref.ok) {
      ASSERT_FALSE(fast.ok) << what << " (" << how << "): " << text;
    }
  };
  for (size_t step : {size_t{0}, size_t{1}, size_t{3}, size_t{7}}) {
    check(Fast(text, step), "step " + std::to_string(step));
  }
  // In place: whole (it must accept what the window reader accepts), and cut into spans at
  // every third byte and at a few spread offsets (empty spans included).
  const Outcome whole = FastSpans(text, {});
  check(whole, "one span");
  EXPECT_EQ(whole.ok, Fast(text, 0).ok) << what << ": " << text;
  std::vector<size_t> thirds, spread;
  for (size_t i = 3; i < text.size(); i += 3) thirds.push_back(i);
  for (size_t i : {size_t{0}, text.size() / 3, text.size() / 3, text.size() / 2, text.size()}) {
    spread.push_back(i);
  }
  check(FastSpans(text, thirds), "spans of 3 bytes");
  check(FastSpans(text, spread), "spread spans");
  // Cut only between tokens, the reader must not give up where it read the whole text.
  const Outcome between = FastSpans(text, TokenBoundaries(text));
  check(between, "spans cut between tokens");
  EXPECT_EQ(between.ok, whole.ok) << what << ": cut between tokens: " << text;
  if (between.ok && whole.ok) {
    EXPECT_EQ(between.log, whole.log) << what << ": " << text;
  }
}

TEST(FastJson, EdgeCasesMatchRapidJson) {
  const std::vector<std::string> accepted = {
      R"({"traceEvents":[{"ph":"X","ts":1,"dur":2,"args":{"name":"a","input0":"b_S1"}}]})",
      R"([1, -0, 0.5, 1e5, 1E+5, -2.5e-3, 123456789012345678901234567890])",
      // Digits read eight at a time: runs of 7, 8, 9 and 16, then a byte just past '9' or '0'.
      R"({"a":1234567,"b":12345678,"c":123456789,"ts":1600000023204197})",
      "[12345678]",
      "[1234567890123456 ]",
      "[99999999.5e1]",
      R"({"a":[],"b":{},"c":[[]],"d":[{}],"e":true,"f":false,"g":null})",
      R"({"esc":"q\"b\\s\/f\bf\fn\nr\rt\t","u":"\u00e9\u4e2d\ud83d\ude00"})",
      "[1,2,]\n",
      R"({"a":1,})",
      " \n\t\r{ \"a\" : [ 1 , 2 ] , \"b\" : \"x\" }  \n",
      "\"just a string\"",
      "42",
      std::string(R"({"long":")") + std::string(5000, 'x') + "\"}",
      std::string(R"({"long_esc":")") + std::string(3000, 'y') + "\\n" + std::string(3000, 'z') +
          "\"}",
      std::string(300, '[') + std::string(300, ']'),
  };
  for (const std::string& t : accepted) {
    ASSERT_TRUE(Reference(t).ok) << t;
    EXPECT_TRUE(Fast(t, 0).ok) << t;
    ExpectConsistent(t, "accepted");
  }
  // Rejected by the fast path (RapidJSON decides: some it accepts, some it rejects).
  const std::vector<std::string> given_up = {
      "[NaN]",
      "[-Infinity]",
      "[01]",
      "[1.]",
      "[.5]",
      "[1e]",
      "[12345678:]",
      "[1234567/]",
      "[123456789012345:]",
      "[+1]",
      "{\"a\":1 \"b\":2}",
      "{\"a\" 1}",
      "{1:2}",
      "[1,,2]",
      "[,]",
      "{,}",
      "[1",
      "{\"a\":",
      "\"unterminated",
      "\"ctl\x01\"",
      std::string("[\"nul\0\"]", 8),
      std::string("[1]\0", 4),
      "[1] [2]",
      "[\"\\x\"]",
      "[\"\\u12\"]",
      "[tru]",
      "[nul]",
      "[falsy]",
      "{\"stop\":1}",
      "",
      "   ",
      "\xef\xbb\xbf[1]",
  };
  for (const std::string& t : given_up) {
    EXPECT_FALSE(Fast(t, 0).ok) << t;
    ExpectConsistent(t, "given up");
  }
  // Lone surrogates (issue 37): read as U+FFFD, as the reference path's filter reads them.
  for (const char* t :
       {"[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[\"\\ud800\\ud800\\udc00\"]"}) {
    const Outcome fast = Fast(t, 0);
    EXPECT_TRUE(fast.ok) << t;
    EXPECT_NE(fast.log.find("\xEF\xBF\xBD"), std::string::npos) << t << ": " << fast.log;
    ExpectConsistent(t, "lone surrogate");
  }
}

// Random documents of trace-like shape, then random mutations of them.
std::string RandomValue(std::mt19937& g, int depth) {
  auto pick = [&](int n) { return static_cast<int>(g() % static_cast<unsigned>(n)); };
  static const char* const kStrings[] = {"ph",         "ts", "X",      "name", "a\\\"b", "\\u00e9",
                                         "w/read_S12", "",   "\\n\\t", "}, {", "input0"};
  static const char* const kNumbers[] = {"0", "-1", "12.250", "1e3", "1578906108771153", "-0.5E-2"};
  const int kind = depth > 4 ? pick(4) : pick(6);
  switch (kind) {
    case 0:
      return std::string("\"") + kStrings[pick(11)] + "\"";
    case 1:
      return kNumbers[pick(6)];
    case 2:
      return pick(3) == 0 ? "null" : pick(2) ? "true" : "false";
    case 3:
      return std::string("\"") + kStrings[pick(11)] + kStrings[pick(11)] + "\"";
    case 4: {
      std::string s = "{";
      const int n = pick(5);
      for (int i = 0; i < n; ++i) {
        if (i) s += pick(4) ? "," : " ,\n ";
        s += std::string("\"") + kStrings[pick(11)] + "\":" + RandomValue(g, depth + 1);
      }
      if (n && pick(5) == 0) s += ",";  // a trailing comma
      return s + "}";
    }
    default: {
      std::string s = "[";
      const int n = pick(5);
      for (int i = 0; i < n; ++i) {
        if (i) s += ",";
        s += RandomValue(g, depth + 1);
      }
      if (n && pick(5) == 0) s += ",";
      return s + "]";
    }
  }
}

// FJ_SEED and FJ_ROUNDS (environment) run a longer soak with another seed.
TEST(FastJson, RandomDocumentsAndMutationsMatchRapidJson) {
  std::mt19937 g(
      static_cast<unsigned>(std::getenv("FJ_SEED") ? std::atoi(std::getenv("FJ_SEED")) : 20261121));
  const std::string bytes = "{}[],:\"\\ 0-.eE+tfnu\x01\x7f\xc3";
  int accepted = 0;
  const int rounds = std::getenv("FJ_ROUNDS") ? std::atoi(std::getenv("FJ_ROUNDS")) : 3000;
  for (int round = 0; round < rounds; ++round) {
    std::string doc = "{\"traceEvents\":" + RandomValue(g, 0) + "}";
    ExpectConsistent(doc, "random");
    if (HasFatalFailure()) return;
    // Pretty-printed (blank runs longer than the 16-byte blank scan), commas in strings included.
    std::string pretty;
    for (char c : doc)
      pretty += c == ',' ? std::string(",\n") + std::string(g() % 40, ' ') : std::string(1, c);
    ExpectConsistent(pretty, "pretty");
    if (HasFatalFailure()) return;
    accepted += Fast(doc, 0).ok;
    for (int m = 0; m < 3; ++m) {
      std::string mutated = doc;
      const size_t at = g() % mutated.size();
      switch (g() % 3) {
        case 0:
          mutated[at] = bytes[g() % bytes.size()];
          break;
        case 1:
          mutated.erase(at, 1 + g() % 3);
          break;
        default:
          mutated.insert(at, 1, bytes[g() % bytes.size()]);
          break;
      }
      ExpectConsistent(mutated, "mutated");
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(accepted, rounds * 95 / 100)
      << "the random documents are valid JSON: the fast path takes them";
}

// Whole files: ReadTimeline with and without the fast path gives the same analysis, and the fast
// path did read them (FileStats::fast_path).
std::string AnalyzeWith(const std::string& path, bool fast, int threads, bool* used_fast) {
  CaptureBuilder b;
  TimelineReadOptions o;
  o.fast_path = fast;
  o.threads = threads;
  Status s = ReadTimeline(path, &b, o);
  if (!s.ok()) return "error: " + s.message();
  Capture c = b.Finish();
  *used_fast = !c.stats.files.empty() && c.stats.files[0].fast_path;
  for (FileStats& f : c.stats.files) f.chunks = 1;
  StatusOr<RuleSet> rules = DefaultRuleSet();
  return RenderJson(c, Analyze(c, *rules), true).value();
}

void ExpectSameWithAndWithoutFastPath(const std::string& path, int threads) {
  bool fast_used = false, reference_fast = true;
  const std::string reference = AnalyzeWith(path, false, threads, &reference_fast);
  ASSERT_EQ(reference.find("error"), std::string::npos) << path << ": " << reference;
  EXPECT_FALSE(reference_fast) << path;
  EXPECT_TRUE(reference == AnalyzeWith(path, true, threads, &fast_used)) << path;
  EXPECT_TRUE(fast_used) << path << ": the fast path gave up";
}

TEST(FastJson, TimelinesReadTheSameWithAndWithoutTheFastPath) {
  TempDir dir;
  std::vector<std::string> files;
  for (const char* scenario : {"hot-ps", "balanced", "gather-on-worker", "sync-replicas"}) {
    for (sim::TraceFormat format : {sim::TraceFormat::kTf1, sim::TraceFormat::kTf2}) {
      sim::ScenarioParams p;
      p.scenario = scenario;
      p.format = format;
      p.pretty = format == sim::TraceFormat::kTf1;
      p.steps = 3;
      files.push_back(dir.File(std::string(scenario) + std::to_string(files.size()) + ".json"));
      ASSERT_TRUE(sim::WriteScenario(p, files.back()).ok()) << scenario;
    }
  }
  // A bare array left open after a trailing comma (Horovod), read to the end by both paths.
  WriteFile(dir.File("open.json"),
            R"([{"ph":"M","name":"process_name","pid":1,"args":{"name":"/job:ps/replica:0/)"
            R"(task:0/device:CPU:0 Compute"}},{"ph":"X","name":"a","pid":1,"tid":0,"ts":1,)"
            R"("dur":2},)"
            "\n");
  files.push_back(dir.File("open.json"));
  if (SharedAvailable()) {
    for (const char* name :
         {"tfe_e0cd14f_timeline_client.json", "ikhlestov_8f7e68b_CPU_timeline_02_step_0.json"}) {
      files.push_back(SharedTrace(name));
    }
  }
  for (const std::string& f : files) ExpectSameWithAndWithoutFastPath(f, 1);
  bool fast = false;
  EXPECT_NE(AnalyzeWith(dir.File("open.json"), true, 1, &fast).find("bare array without closing"),
            std::string::npos);
}

// A file the fast path gives up on near its end (a NaN) is read again by RapidJSON; the progress
// reported meanwhile never goes back and ends at the file size.
TEST(FastJson, ProgressNeverGoesBackWhenTheFastPathGivesUp) {
  TempDir dir;
  std::string s = "{\"traceEvents\":[";
  for (int i = 0; i < 40000; ++i) {
    s += fmt::format(R"({{"ph":"X","name":"op{}","pid":1,"tid":0,"ts":{},"dur":1}},)", i, i);
  }
  s += R"({"ph":"C","name":"c","pid":1,"ts":1,"args":{"v":NaN}}]})";
  WriteFile(dir.File("nan.json"), s);
  for (int threads : {1, 2}) {
    std::vector<int64_t> seen;
    CaptureBuilder b;
    TimelineReadOptions o;
    o.threads = threads;
    o.progress = [&](int64_t done, int64_t total) {
      EXPECT_EQ(total, static_cast<int64_t>(s.size()));
      seen.push_back(done);
    };
    ASSERT_TRUE(ReadTimeline(dir.File("nan.json"), &b, o).ok());
    Capture c = b.Finish();
    EXPECT_FALSE(c.stats.files[0].fast_path) << "NaN is RapidJSON's to read";
    EXPECT_EQ(c.ops.size(), 40000u);
    ASSERT_FALSE(seen.empty());
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_EQ(seen.back(), static_cast<int64_t>(s.size()));
  }
}

// Chunked import (a plain file of 16 MiB or more, 4 threads): each chunk through the fast path
// against each chunk through RapidJSON, on a large bare array left open at the end.
TEST(FastJson, ChunkedImportReadsTheSameWithAndWithoutTheFastPath) {
  TempDir dir;
  std::string s =
      "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{\"name\":"
      "\"/job:ps/replica:0/task:0/device:CPU:0 Compute\"}},\n";
  for (int i = 0; i < 150000; ++i) {
    s += fmt::format(
        "{{\"ph\":\"X\",\"name\":\"MatMul\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":3,"
        "\"args\":{{\"name\":\"m{}\",\"op\":\"MatMul\",\"input0\":\"w\\u002fread_S{}\"}}}},\n",
        i % 3, 1000 + i * 5, i % 97, i % 13);
  }
  WriteFile(dir.File("big.json"), s);  // no closing bracket
  ASSERT_GT(s.size(), size_t{17} << 20);
  ExpectSameWithAndWithoutFastPath(dir.File("big.json"), 4);
  CaptureBuilder b;
  TimelineReadOptions o;
  o.threads = 4;
  ASSERT_TRUE(ReadTimeline(dir.File("big.json"), &b, o).ok());
  Capture c = b.Finish();
  EXPECT_EQ(c.stats.files[0].chunks, 4) << "the file was cut into chunks";
  EXPECT_EQ(c.stats.ignored["bare array without closing bracket"], 1);
  EXPECT_EQ(c.ops.size(), 150000u);
}

}  // namespace
}  // namespace tfdiag::test
