// ReadTimeline on bad input: every file-level fault is kInvalidInput naming the file and the byte
// offset; a single malformed event is skipped and counted while its neighbours are imported.
// Also the number and text-proto helpers ParseMicrosAsNanos and RequestedBytesFromDescription.
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <regex>

#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

// Reads `contents` (written as-is) and returns the Status.
Status ReadBytes(const TempDir& dir, const std::string& contents, const std::string& name) {
  WriteFile(dir.File(name), contents);
  CaptureBuilder b;
  return ReadTimeline(dir.File(name), &b);
}

// The N of the first "byte <N>" in `message`, or -1.
int64_t ByteOffset(const std::string& message) {
  std::smatch m;
  if (!std::regex_search(message, m, std::regex(R"(byte (\d+))"))) return -1;
  return std::stoll(m[1].str());
}

// The status is kInvalidInput, names the file and a byte offset in [lo, hi].
void ExpectInvalidAt(const Status& s, const std::string& path, int64_t lo, int64_t hi) {
  ASSERT_FALSE(s.ok()) << path << " was accepted";
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << s.message();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  const int64_t at = ByteOffset(s.message());
  EXPECT_GE(at, lo) << s.message();
  EXPECT_LE(at, hi) << s.message();
}

TEST(TimelineErrors, NotJson) {
  TempDir dir;
  Status s = ReadBytes(dir, "hello", "hello.json");
  ExpectInvalidAt(s, dir.File("hello.json"), 0, 0);
  // After leading whitespace, the offset is that of the first bad byte.
  const std::string bad = "\n  {\"traceEvents\": [}";
  const int64_t brace = static_cast<int64_t>(bad.rfind('}'));
  Status s2 = ReadBytes(dir, bad, "t2.json");
  ExpectInvalidAt(s2, dir.File("t2.json"), brace, brace);
}

TEST(TimelineErrors, TruncatedMidEvent) {
  TempDir dir;
  const std::string full = ObjectForm(
      {MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0 Compute"),
       OpEvent(1, 0, 100, 5, "w/read", "Identity"), OpEvent(1, 0, 110, 5, "split", "Split")});
  // Cut inside the last event: after "ts":, and inside the "name" string.
  for (const std::string& marker : {std::string("\"ts\":110"), std::string("\"split\",\"op\"")}) {
    const size_t cut = full.rfind(marker) + marker.size() / 2;
    ASSERT_LT(cut, full.size());
    const std::string truncated = full.substr(0, cut);
    Status s = ReadBytes(dir, truncated, "cut.json");
    ExpectInvalidAt(s, dir.File("cut.json"), static_cast<int64_t>(cut), static_cast<int64_t>(cut));
    EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
  }
  // The same cut in a bare array is not a Horovod file: the cut is inside an event.
  const std::string bare =
      BareArray({OpEvent(1, 0, 100, 5, "a", "NoOp"), OpEvent(1, 0, 110, 5, "b", "NoOp")});
  const std::string cut_bare = bare.substr(0, bare.rfind("\"dur\""));
  Status s = ReadBytes(dir, cut_bare, "bare.json");
  ExpectInvalidAt(s, dir.File("bare.json"), static_cast<int64_t>(cut_bare.size()),
                  static_cast<int64_t>(cut_bare.size()));
}

TEST(TimelineErrors, TraceEventsOfTheWrongType) {
  TempDir dir;
  const std::map<std::string, std::string> values = {
      {"a string", "\"abc\""}, {"an object", "{\"a\":1}"}, {"a number", "12"}, {"null", "null"}};
  for (const auto& [what, value] : values) {
    SCOPED_TRACE(what);
    const std::string prefix = "{\"traceEvents\":";
    Status s = ReadBytes(dir, prefix + value + "}", "t.json");
    // The offset points into the offending value.
    ExpectInvalidAt(s, dir.File("t.json"), static_cast<int64_t>(prefix.size()),
                    static_cast<int64_t>(prefix.size() + value.size()));
    EXPECT_NE(s.message().find("traceEvents"), std::string::npos) << s.message();
  }
}

TEST(TimelineErrors, NoTraceEvents) {
  TempDir dir;
  const std::string json = R"({"a":1})";
  Status s = ReadBytes(dir, json, "t.json");
  ExpectInvalidAt(s, dir.File("t.json"), static_cast<int64_t>(json.size()),
                  static_cast<int64_t>(json.size()));
  EXPECT_NE(s.message().find("traceEvents"), std::string::npos) << s.message();
}

TEST(TimelineErrors, EmptyFile) {
  TempDir dir;
  Status s = ReadBytes(dir, "", "empty.json");
  ExpectInvalidAt(s, dir.File("empty.json"), 0, 0);
  EXPECT_NE(s.message().find("empty"), std::string::npos) << s.message();
}

TEST(TimelineErrors, BinaryGarbageWithNulBytes) {
  TempDir dir;
  std::mt19937 rng(1234);
  std::string garbage(512, '\0');
  for (char& ch : garbage) ch = static_cast<char>(rng() & 0xff);
  for (size_t i = 0; i < garbage.size(); i += 7) garbage[i] = '\0';
  // Starting with a NUL, with a non-JSON byte, and after whitespace.
  const std::vector<std::pair<std::string, int64_t>> cases = {
      {garbage, 0}, {"\x8f" + garbage.substr(1), 0}, {"\n\n " + garbage, 3}};
  for (const auto& [data, at] : cases) {
    Status s = ReadBytes(dir, data, "garbage.bin");
    ExpectInvalidAt(s, dir.File("garbage.bin"), at, at);
    EXPECT_EQ(s.message().find("empty"), std::string::npos) << "not an empty file: " << s.message();
    EXPECT_NE(s.message().find("binary"), std::string::npos) << s.message();
  }
}

TEST(TimelineErrors, NulByteInsideOrAfterJsonIsNotTheEnd) {
  TempDir dir;
  const std::string json = ObjectForm({OpEvent(1, 0, 100, 5, "a", "NoOp")});
  // A NUL after a complete document, then more data: the file is not a timeline.
  std::string tail = json + std::string(1, '\0') + "garbage";
  ExpectInvalidAt(ReadBytes(dir, tail, "tail.json"), dir.File("tail.json"),
                  static_cast<int64_t>(json.size()), static_cast<int64_t>(json.size()));
  // A NUL between bare-array events is not a missing closing bracket.
  const std::string bare = "[" + OpEvent(1, 0, 100, 5, "a", "NoOp") + ",";
  ExpectInvalidAt(ReadBytes(dir, bare + std::string(1, '\0') + "x", "bare.json"),
                  dir.File("bare.json"), static_cast<int64_t>(bare.size()),
                  static_cast<int64_t>(bare.size()));
}

TEST(TimelineErrors, GzipThatDoesNotInflate) {
  TempDir dir;
  // A valid 10-byte gzip header, then bytes that are no deflate stream (0xff: reserved block type).
  std::string bad =
      std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10) + std::string(64, '\xff');
  Status s = ReadBytes(dir, bad, "bad.gz");
  ExpectInvalidAt(s, dir.File("bad.gz"), 10, 11);
  EXPECT_NE(s.message().find("gzip"), std::string::npos) << s.message();
}

TEST(TimelineErrors, TruncatedGzip) {
  TempDir dir;
  std::vector<std::string> ev;
  for (int i = 0; i < 400; ++i) {
    ev.push_back(OpEvent(1 + i % 3, i % 4, 1000 + 7 * i, 1 + i % 11, "op_" + std::to_string(i),
                         i % 2 ? "MatMul" : "Identity", {"in_" + std::to_string(i * 31 % 97)}));
  }
  ASSERT_TRUE(WriteGzip(dir.File("full.gz"), ObjectForm(ev)));
  ASSERT_TRUE(ReadOne(dir.File("full.gz")).status.ok()) << "the whole file reads";
  const std::string gz = ReadFile(dir.File("full.gz"));
  ASSERT_GT(gz.size(), 200u);
  const std::string half = gz.substr(0, gz.size() / 2);
  Status s = ReadBytes(dir, half, "half.gz");
  // The compressed input ends at the cut: the offset is the cut.
  ExpectInvalidAt(s, dir.File("half.gz"), static_cast<int64_t>(half.size()),
                  static_cast<int64_t>(half.size()));
  EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
}

TEST(TimelineErrors, TopLevelScalar) {
  TempDir dir;
  for (const std::string v : {"42", "\"traceEvents\"", "true", "null"}) {
    Status s = ReadBytes(dir, v, "s.json");
    ExpectInvalidAt(s, dir.File("s.json"), 0, static_cast<int64_t>(v.size()));
    EXPECT_NE(s.message().find("scalar"), std::string::npos) << s.message();
  }
}

TEST(TimelineErrors, DeepNestingIsAnErrorNotAStackOverflow) {
  TempDir dir;
  // Millions of '[' (or of nested args objects) once overflowed the parser's recursion.
  const std::string arrays(4 << 20, '[');
  ExpectInvalidAt(ReadBytes(dir, arrays, "deep.json"), dir.File("deep.json"), 1,
                  static_cast<int64_t>(arrays.size()));
  std::string objects = R"({"traceEvents":[{"ph":"X","args":)";
  for (int i = 0; i < 1000000; ++i) objects += R"({"a":)";
  Status s = ReadBytes(dir, objects, "deep_args.json");
  ExpectInvalidAt(s, dir.File("deep_args.json"), 1, static_cast<int64_t>(objects.size()));
  EXPECT_NE(s.message().find("nesting"), std::string::npos) << s.message();
  // Ordinary nesting inside args is fine.
  std::string nested = R"({"traceEvents":[{"ph":"X","pid":1,"ts":1,"dur":1,"name":"n","args":)";
  for (int i = 0; i < 20; ++i) nested += R"({"a":)";
  nested += "1" + std::string(20, '}') + "}]}";
  WriteFile(dir.File("ok.json"), nested);
  ReadResult r = ReadOne(dir.File("ok.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.capture.ops.size(), 1u);
}

TEST(TimelineErrors, MalformedEventsAreSkippedAndCounted) {
  TempDir dir;
  const std::vector<std::string> good = {"g1", "g2", "g3", "g4", "g5", "g6"};
  std::vector<std::string> ev = {MetaEvent(1, "/job:ps/replica:0/task:0/device:CPU:0 Compute")};
  const std::vector<std::string> bad = {
      R"({"ph":"X","pid":1,"tid":0,"ts":"abc","dur":1,"name":"b1"})",
      R"({"pid":1,"tid":0,"ts":5,"dur":1,"name":"b2"})",
      R"({"ph":"X","pid":1,"tid":0,"ts":5,"name":"b3"})",
      R"({"ph":"X","pid":1,"tid":0,"ts":5,"dur":-3,"name":"b4"})",
      R"(17)",
  };
  for (size_t i = 0; i < good.size(); ++i) {
    ev.push_back(OpEvent(1, 0, 100 + 10 * static_cast<int64_t>(i), 2, good[i], "NoOp"));
    if (i < bad.size()) ev.push_back(bad[i]);
  }
  WriteFile(dir.File("t.json"), ObjectForm(ev));
  ReadResult r = ReadOne(dir.File("t.json"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const Capture& c = r.capture;
  ASSERT_EQ(c.ops.size(), good.size());
  for (size_t i = 0; i < good.size(); ++i) {
    ASSERT_EQ(OpsNamed(c, good[i]).size(), 1u) << good[i];
    EXPECT_EQ(OpsNamed(c, good[i])[0]->start, (100 + 10 * static_cast<int64_t>(i)) * 1000);
  }
  for (const char* b : {"b1", "b2", "b3", "b4"}) EXPECT_TRUE(OpsNamed(c, b).empty()) << b;
  EXPECT_EQ(c.stats.TotalSkipped(), static_cast<int64_t>(bad.size()));
  EXPECT_EQ(c.stats.files[0].skipped, static_cast<int64_t>(bad.size()));
  EXPECT_EQ(c.stats.files[0].events, static_cast<int64_t>(ev.size()));
  EXPECT_EQ(c.stats.files[0].ops, static_cast<int64_t>(good.size()));
  EXPECT_EQ(c.stats.skipped.size(), bad.size()) << "one reason per kind of fault";
  EXPECT_EQ(c.stats.skipped.count("field 'ts' is not a number"), 1u);
  EXPECT_EQ(c.stats.skipped.count("X event without 'dur'"), 1u);
  EXPECT_EQ(c.stats.skipped.count("X event with negative 'dur'"), 1u);
}

TEST(ParseMicrosAsNanos, ExactForUpToThreeFractionalDigits) {
  const std::vector<std::pair<std::string, int64_t>> ok = {
      {"1578906108771153", 1578906108771153000},
      {"1600000000000123.250", 1600000000000123250},
      {"1600000000000123.25", 1600000000000123250},
      {"12.250", 12250},
      {"12.2", 12200},
      {"0.001", 1},
      {"0", 0},
      {"7", 7000},
      {"-2.5", -2500},
      {"1e3", 1000000},
      {"1.5E3", 1500000},
      {"2.5e-1", 250},
      {"9223372036854775", 9223372036854775000},
      {"9223372036854775.807", INT64_MAX},
  };
  for (const auto& [text, want] : ok) {
    int64_t ns = -12345;
    EXPECT_TRUE(ParseMicrosAsNanos(text, &ns)) << text;
    EXPECT_EQ(ns, want) << text;
  }
}

TEST(ParseMicrosAsNanos, RejectsNonNumbersAndOverflow) {
  for (const char* text : {"", "-", "abc", "1x", "1.2.3", "e3", "1e", "NaN", "-Infinity", "12 ",
                           "9223372036854775.808", "9223372036854776", "9223372036854779",
                           "99999999999999999999", "-9223372036854776", "1e20"}) {
    int64_t ns = 0;
    EXPECT_FALSE(ParseMicrosAsNanos(text, &ns)) << text << " -> " << ns;
  }
}

// Random integer and fixed-point texts (1 to 20 digits, with and without a fraction and a sign,
// and a non-digit at every place) against exact 128-bit arithmetic: the 8-digits-at-a-time path
// gives the same value, and the same refusals (overflow past int64 ns, a stray byte).
TEST(ParseMicrosAsNanos, MatchesExactArithmeticOnRandomTexts) {
  std::mt19937_64 rng(20261121);
  for (int round = 0; round < 200000; ++round) {
    std::string text = rng() % 8 == 0 ? "-" : "";
    const int whole_digits = 1 + static_cast<int>(rng() % 20);
    for (int i = 0; i < whole_digits; ++i) text += static_cast<char>('0' + rng() % 10);
    const int frac_digits = rng() % 3 == 0 ? 1 + static_cast<int>(rng() % 5) : 0;
    if (frac_digits > 0) text += '.';
    for (int i = 0; i < frac_digits; ++i) text += static_cast<char>('0' + rng() % 10);
    if (rng() % 10 == 0) text[rng() % text.size()] = "x:/ "[rng() % 4];
    // The reference: digits before '.', up to three after, in __int128.
    bool valid = !text.empty() && text != "-";
    __int128 v = 0;
    size_t i = text[0] == '-' ? 1 : 0, digits = 0;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i, ++digits) {
      v = v * 10 + (text[i] - '0');
      if (v > (__int128{1} << 80)) v = __int128{1} << 80;  // stays far past int64 either way
    }
    v *= 1000;
    valid = valid && digits > 0;
    if (i < text.size()) {
      valid = valid && text[i] == '.' && i + 1 < text.size();
      __int128 scale = 100;
      for (++i; i < text.size(); ++i, scale /= 10) {
        if (text[i] < '0' || text[i] > '9') valid = false;
        if (scale > 0) v += (text[i] - '0') * scale;
      }
    }
    if (text[0] == '-') v = -v;
    valid = valid && v >= -static_cast<__int128>(INT64_MAX) && v <= INT64_MAX;
    int64_t ns = 0;
    const bool ok = ParseMicrosAsNanos(text, &ns);
    ASSERT_EQ(ok, valid) << text;
    if (ok) {
      ASSERT_EQ(ns, static_cast<int64_t>(v)) << text;
    }
  }
}

TEST(RequestedBytesFromDescription, ReadsTheAllocationDescription) {
  const std::string desc =
      "dtype: DT_FLOAT\nshape {\n  dim {\n    size: 100\n  }\n}\nallocation_description {\n"
      "  allocated_bytes: 512\n  requested_bytes: 400\n  allocator_name: cpu\n}\n";
  EXPECT_EQ(RequestedBytesFromDescription(desc), 400);
  EXPECT_EQ(RequestedBytesFromDescription("requested_bytes:7"), 7);
  EXPECT_EQ(RequestedBytesFromDescription("requested_bytes:   123456789012"), 123456789012);
  EXPECT_EQ(RequestedBytesFromDescription("dtype: DT_FLOAT\nallocated_bytes: 512"), -1);
  EXPECT_EQ(RequestedBytesFromDescription(""), -1);
  EXPECT_EQ(RequestedBytesFromDescription("requested_bytes: -5"), -1);
  EXPECT_EQ(RequestedBytesFromDescription("requested_bytes: abc"), -1);
  EXPECT_EQ(RequestedBytesFromDescription("requested_bytes:"), -1);
}

}  // namespace
}  // namespace tfdiag::test
