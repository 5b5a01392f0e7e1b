// The pieces the parallel gzip import (gzip_import_test.cc) is built from: the ISA-L inflater
// (collectors/timeline/igzip_reader.h), checked against zlib's output, and the read-only file
// mapping (collectors/timeline/mapped_file.h), on real files, FIFOs and a file that shrinks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collectors/timeline/igzip_reader.h"
#include "collectors/timeline/mapped_file.h"
#include "tests/test_util.h"
#include "tests/trace_json.h"

namespace tfdiag::test {
namespace {

// ~`n` bytes of deterministic text that compresses poorly enough to need many deflate blocks.
std::string RandomText(size_t n) {
  static const char* const kWords[] = {"tensor", "MatMul", "ps", "worker", "{", "}",      ",",
                                       "\"",     "step",   "0",  "\n",     "é", "replica"};
  std::string s;
  s.reserve(n + 32);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  while (s.size() < n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    s += kWords[(x >> 33) % (sizeof kWords / sizeof kWords[0])];
    s += static_cast<char>('a' + (x >> 20) % 26);
    if ((x >> 40) % 3 == 0) s += ' ';
  }
  return s;
}

// Reads the whole stream in pieces of 1, 7, 1000 and 65536 bytes, in turn.
std::string InflateInPieces(IgzipReader* z) {
  std::string out;
  std::vector<char> buf(65536);
  const size_t sizes[] = {1000, 1, 7, 1000, 65536};
  for (size_t k = 0;; ++k) {
    const size_t n = z->Read(buf.data(), sizes[k % 5]);
    if (n == 0) break;
    out.append(buf.data(), n);
  }
  return out;
}

// IgzipReader inflates ~3 MB of text exactly, read in small pieces; a file of concatenated
// members (one of them empty) gives their texts in order; either way done() is set and all the
// compressed bytes were read.
TEST(IgzipReader, InflatesExactlyInSmallPieces) {
  TempDir dir;
  const std::string text = RandomText(3 << 20);
  ASSERT_TRUE(WriteGzip(dir.File("one.gz"), text));
  ASSERT_TRUE(WriteGzip(dir.File("a.gz"), text.substr(0, 1234567)));
  ASSERT_TRUE(WriteGzip(dir.File("empty.gz"), ""));
  ASSERT_TRUE(WriteGzip(dir.File("b.gz"), text.substr(1234567)));
  WriteFile(dir.File("members.gz"), ReadFile(dir.File("a.gz")) + ReadFile(dir.File("empty.gz")) +
                                        ReadFile(dir.File("b.gz")) +
                                        ReadFile(dir.File("empty.gz")));
  for (const char* name : {"one.gz", "members.gz"}) {
    IgzipReader z;
    ASSERT_TRUE(z.Open(dir.File(name)));
    const std::string out = InflateInPieces(&z);
    EXPECT_TRUE(out == text) << name << ": " << out.size() << " bytes inflated of " << text.size();
    EXPECT_TRUE(z.done()) << name;
    EXPECT_FALSE(z.failed()) << name;
    EXPECT_EQ(z.file_size(), static_cast<int64_t>(ReadFile(dir.File(name)).size())) << name;
    EXPECT_EQ(z.compressed_read(), z.file_size()) << name;
    char c;
    EXPECT_EQ(z.Read(&c, 1), 0u) << name << ": bytes after the end";
  }
  IgzipReader missing;
  EXPECT_FALSE(missing.Open(dir.File("no-such-file.gz")));
}

// IgzipReader fails (Read returns 0, failed() set, done() not) on a truncated stream, a stream cut
// inside its trailer, corrupt data, a bad CRC, bytes after the member that are not gzip, and a file
// that is not gzip at all; what it produced before failing is a prefix of the text.
TEST(IgzipReader, FailsOnBadStreams) {
  TempDir dir;
  const std::string text = RandomText(1 << 20);
  ASSERT_TRUE(WriteGzip(dir.File("good.gz"), text));
  const std::string gz = ReadFile(dir.File("good.gz"));
  std::string corrupt = gz, bad_crc = gz;
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i) corrupt[i] = '\xff';
  bad_crc[gz.size() - 6] ^= 0x40;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"half", gz.substr(0, gz.size() / 2)},
      {"cut-in-trailer", gz.substr(0, gz.size() - 5)},
      {"corrupt", corrupt},
      {"bad-crc", bad_crc},
      {"trailing-garbage", gz + "x"},
      {"plain-text", text.substr(0, 100000)},
  };
  for (const auto& [name, contents] : cases) {
    WriteFile(dir.File(name), contents);
    IgzipReader z;
    ASSERT_TRUE(z.Open(dir.File(name)));
    const std::string out = InflateInPieces(&z);
    EXPECT_TRUE(z.failed()) << name;
    EXPECT_FALSE(z.done()) << name;
    if (name != "corrupt") {  // corrupt deflate data may inflate to other bytes before failing
      EXPECT_TRUE(text.compare(0, out.size(), out) == 0) << name << ": output is not a prefix";
    }
    char c;
    EXPECT_EQ(z.Read(&c, 1), 0u) << name;
  }
}

// MappedFile maps a regular file (the bytes are the file's) and refuses a FIFO, a directory and an
// empty file; Release() of any range, including past the end, leaves the bytes readable and equal.
TEST(MappedFile, MapsRegularFilesOnlyAndReleaseKeepsData) {
  TempDir dir;
  const std::string fifo = dir.File("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  WriteFile(dir.File("empty"), "");
  std::string data = RandomText(300000);  // not a whole number of pages
  WriteFile(dir.File("data"), data);

  auto map = [](const std::string& path, MappedFile* m) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);  // a FIFO opens without a writer
    EXPECT_GE(fd, 0) << path;
    const bool ok = m->Map(fd);
    ::close(fd);  // the mapping outlives the descriptor
    return ok;
  };
  for (const std::string& path : {fifo, dir.path(), dir.File("empty")}) {
    MappedFile m;
    EXPECT_FALSE(map(path, &m)) << path;
    EXPECT_EQ(m.data(), nullptr) << path;
    EXPECT_EQ(m.size(), 0u) << path;
  }

  MappedFile m;
  ASSERT_TRUE(map(dir.File("data"), &m));
  ASSERT_EQ(m.size(), data.size());
  ASSERT_EQ(std::memcmp(m.data(), data.data(), data.size()), 0);
  EXPECT_FALSE(map(dir.File("data"), &m)) << "a second Map() on a mapped file";
  const std::pair<size_t, size_t> ranges[] = {
      {0, 1}, {0, 4096}, {10, 123457}, {100000, data.size()}, {0, data.size() + 99999}, {5, 3}};
  for (const auto& [begin, end] : ranges) {
    m.Release(begin, end);
    ASSERT_EQ(std::memcmp(m.data(), data.data(), data.size()), 0)
        << "after Release(" << begin << ", " << end << ")";
  }
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag::test {
namespace {

// A mapped file that shrinks under the reader (its writer rewrote it) faults with SIGBUS on the
// next access: the run ends with exit code 2 and a line naming the file and the byte, not a crash.
TEST(MappedFileDeathTest, ShrunkFileEndsWithAMessageNotACrash) {
  TempDir dir;
  const std::string path = dir.File("shrinks.json");
  WriteFile(path, std::string(1 << 20, ' '));
  EXPECT_EXIT(
      {
        const int fd = ::open(path.c_str(), O_RDONLY);
        MappedFile map;
        if (!map.Map(fd, path)) _exit(5);
        ::close(fd);
        if (::truncate(path.c_str(), 0) != 0) _exit(6);
        volatile char c = map.data()[(1 << 20) - 1];
        (void)c;
        _exit(0);
      },
      ::testing::ExitedWithCode(2), "shrinks.json: byte 1048575: the file shrank");
}

}  // namespace
}  // namespace tfdiag::test
