// Issue 37 item 7: readers bounded while the bytes come in. A 1 MB .trace.json.gz holding one
// 1 GiB string took 6.15 GB and 51 s (rc 0); a gzip bomb of valid events inflated without limit;
// a 2 GiB sparse manifest took 4.1 GB and 16-20 s before failing at "line 1, column 1"; one lone
// surrogate (\ud800) in one event name rejected the whole timeline.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "collectors/timeline/timeline_reader.h"
#include "core/capture_builder.h"
#include "core/input_limits.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// One gzip member holding `data`.
std::string GzipMember(const std::string& data) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, data.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// head + `repeats` x middle + tail as concatenated gzip members (InputStream reads them in
// sequence, as gzip -d does): a small file that inflates to repeats x middle bytes.
void WriteGzipRepeated(const std::string& path, const std::string& head, const std::string& middle,
                       int repeats, const std::string& tail) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  const std::string h = GzipMember(head), m = GzipMember(middle), t = GzipMember(tail);
  std::fwrite(h.data(), 1, h.size(), f);
  for (int i = 0; i < repeats; ++i) std::fwrite(m.data(), 1, m.size(), f);
  std::fwrite(t.data(), 1, t.size(), f);
  std::fclose(f);
}

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// One 1 GiB event name in a ~1 MB file: refused while inflating, with the offset, under a 1 GB
// address-space limit (before: 6.15 GB, 51 s, exit 0).
TEST(HostileReaders, OneGiBStringInSmallGzipFailsWhileInflating) {
  TempDir dir;
  const std::string path = dir.File("big_string.trace.json.gz");
  WriteGzipRepeated(path, "{\"traceEvents\":[{\"name\":\"", std::string(1 << 20, 'a'), 1024,
                    "\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]}");
  ASSERT_LT(FileSize(path), 4 << 20);
  RunResult r = RunShell("ulimit -v 1000000 && " + std::string(TFDIAG_BINARY) +
                         " analyze --no-progress " + path);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "a string longer than 16 MiB, the limit for one JSON string"))
      << r.err;
  EXPECT_TRUE(Contains(r.err, "big_string.trace.json.gz: byte ")) << r.err;

  // The library, on both gzip paths (sequential and the parallel igzip import).
  for (int threads : {1, 2}) {
    CaptureBuilder b;
    TimelineReadOptions o;
    o.threads = threads;
    Status s = ReadTimeline(path, &b, o);
    EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << threads << ": " << s.message();
    EXPECT_TRUE(Contains(s.message(), "a string longer than 16 MiB")) << s.message();
  }
}

// A string just under the limit is read; one just over is refused by the handler's exact check.
TEST(HostileReaders, StringLimitIsExact) {
  TempDir dir;
  for (size_t n : {kMaxJsonStringBytes, kMaxJsonStringBytes + 1}) {
    const std::string path = dir.File("s" + std::to_string(n) + ".trace.json");
    WriteFile(path, "{\"traceEvents\":[{\"name\":\"" + std::string(n, 'b') +
                        "\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]}");
    CaptureBuilder b;
    Status s = ReadTimeline(path, &b);
    if (n == kMaxJsonStringBytes) {
      EXPECT_TRUE(s.ok()) << s.message();
    } else {
      EXPECT_TRUE(Contains(s.message(),
                           "a string of 16777217 bytes; the limit for one JSON "
                           "string is 16 MiB"))
          << s.message();
    }
  }
}

// A gzip bomb of well-formed events (~1000:1): refused once it passes 200:1 after 256 MiB, naming
// the compressed offset, instead of importing a billion bytes of events.
TEST(HostileReaders, GzipBombOfValidEventsIsRefused) {
  TempDir dir;
  const std::string path = dir.File("bomb.trace.json.gz");
  std::string ev = "{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1},";
  std::string block;
  while (block.size() < (1 << 20)) block += ev;
  WriteGzipRepeated(path, "{\"traceEvents\":[", block, 1024,
                    "{\"name\":\"a\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]}");
  CaptureBuilder b;
  TimelineReadOptions o;
  o.threads = 1;
  Status s = ReadTimeline(path, &b, o);
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << s.message();
  EXPECT_TRUE(Contains(s.message(), "more than 200 times; a trace does not compress this well"))
      << s.message();
  EXPECT_TRUE(Contains(s.message(), "bomb.trace.json.gz: compressed byte ")) << s.message();
}

// A 2 GiB sparse manifest is refused by its size before a byte is read (under a 1 GB address
// space); a NUL inside a small one is named at its line and column, not "line 1, column 1".
TEST(HostileReaders, SparseAndNulManifestsAreRefusedWhereTheyAre) {
  TempDir dir;
  const std::string big = dir.File("pods.yaml");
  WriteFile(big, "apiVersion: v1\nkind: List\nitems: []\n");
  ASSERT_EQ(truncate(big.c_str(), int64_t{2} << 30), 0);
  RunResult r = RunShell("ulimit -v 1000000 && " + std::string(TFDIAG_BINARY) +
                         " analyze --no-progress " + big);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err,
                       "pods.yaml: 2147483648 bytes; the limit for a manifest or pod "
                       "list is 256 MiB"))
      << r.err;

  const std::string small = dir.File("holey.yaml");
  WriteFile(small, "apiVersion: v1\nkind: List\nitems: []\n");
  ASSERT_EQ(truncate(small.c_str(), 1 << 20), 0);
  r = RunTfdiag("analyze --no-progress " + small);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "holey.yaml: line 4, column 1 (byte 36): a NUL byte")) << r.err;

  // libyaml's own reader errors (a byte that is not UTF-8) at their line and column too.
  WriteFile(small, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\xff\n");
  r = RunTfdiag("analyze --no-progress " + small);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.err, "holey.yaml: line 4, column 10")) << r.err;
}

// One lone surrogate in one event name: the event is kept (its name with U+FFFD) and counted in
// the import notes, on every read path; a pair stays one character.
TEST(HostileReaders, LoneSurrogateIsReplacedAndCounted) {
  TempDir dir;
  const std::string path = dir.File("surrogate.json");
  WriteFile(path,
            "{\"traceEvents\":["
            "{\"name\":\"MatMul\\ud800x\",\"ph\":\"X\",\"ts\":10,\"dur\":5,\"pid\":1,\"tid\":1},"
            "{\"name\":\"Add\\udc00\",\"ph\":\"X\",\"ts\":20,\"dur\":5,\"pid\":1,\"tid\":1},"
            "{\"name\":\"Pair\\ud83d\\ude00\",\"ph\":\"X\",\"ts\":30,\"dur\":5,\"pid\":1,"
            "\"tid\":1}]}");
  // The fast tokenizer, the parallel reader, and the reference parser (RapidJSON).
  for (int threads : {1, 2, 0}) {
    CaptureBuilder b;
    TimelineReadOptions o;
    o.threads = std::max(threads, 1);
    o.fast_path = threads != 0;
    Status s = ReadTimeline(path, &b, o);
    ASSERT_TRUE(s.ok()) << threads << ": " << s.message();
    Capture c = b.Finish();
    EXPECT_EQ(c.stats.ignored["lone UTF-16 surrogate in a string (read as U+FFFD)"], 2) << threads;
    bool replaced = false;
    for (const auto& name : {"MatMul\xEF\xBF\xBDx", "Add\xEF\xBF\xBD"}) {
      replaced = false;
      for (size_t i = 0; i < c.strings.size(); ++i) replaced |= c.strings.Get(i) == name;
      EXPECT_TRUE(replaced) << name;
    }
  }
  RunResult r = RunTfdiag("analyze --no-progress -f json " + path);
  EXPECT_LT(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Contains(r.out, "\"lone UTF-16 surrogate in a string (read as U+FFFD)\": 2"))
      << r.out.substr(0, 2000);
}

}  // namespace
}  // namespace tfdiag::test
