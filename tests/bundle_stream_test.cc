// Issue 48 item 6: a bundle is read as a stream (core/bundle_stream.h), the head as a DOM and
// the sample rows one at a time, so the reader's memory does not follow the file's size: a
// 64 MiB bundle whose bytes are in its rows takes no more peak RSS (/usr/bin/time -v, outside
// the process) than a tiny one, give or take 24 MiB; rows may come before the head's keys, and a
// bad row is still named by its key, index and column.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "core/bundle.h"
#include "core/capture_builder.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;

// A bundle of one worker process: its head (schema first, as LooksLikeBundle wants it), then
// `threads` thread samples, each named `name`; `rows_first` puts the rows before the processes
// and the columns.
std::string Bundle(int threads, const std::string& name, bool rows_first = false) {
  const std::string head = fmt::format(
      R"("tool":{{"name":"tfdiag","version":"t"}},"meta":{{"host":"h","kernel":"k",)"
      R"("window_start_ns":{0},"window_end_ns":{1},"interval_ms":10,"probes":"","warnings":[]}},)"
      R"("tasks":[{{"job":"worker","replica":0,"index":0}}],"processes":[{{"task":"worker:0",)"
      R"("pid":5,"pod":"","pod_uid":"","container":"","qos":"","cgroup":"","cpuset":"",)"
      R"("cpu_limit":-1,"quota_us":-1,"period_us":0,"cpuset_cpus":2,"host_cpus":2,)"
      R"("first_ns":{0},"last_ns":{1},"exited":false}}],"process_sample_columns":["ts_ns",)"
      R"("process","threads","runnable","cpu_ns","voluntary","involuntary","nr_periods",)"
      R"("nr_throttled","throttled_ns"],"thread_sample_columns":["ts_ns","process","tid","name",)"
      R"("state","cpu_ns","voluntary","involuntary"])",
      kT0, kT0 + 1'000'000'000);
  std::string rows = R"("process_samples":[)";
  for (int k = 0; k < 4; ++k) {
    rows += fmt::format("{}[{},0,{},0,{},0,0,0,0,0]", k ? "," : "", kT0 + k * 10'000'000, threads,
                        k * 1000);
  }
  rows += R"(],"thread_samples":[)";
  for (int t = 0; t < threads; ++t) {
    rows += fmt::format(R"({}[{},0,{},"{}","S",{},0,0])", t ? "," : "", kT0, 100 + t, name, t);
  }
  rows += "]";
  return R"({"schema":"tfdiag.bundle/1",)" + (rows_first ? rows + "," + head : head + "," + rows) +
         "}";
}

// The peak RSS (KiB) of `tfdiag analyze` on `path`, by /usr/bin/time -v; -1 when it cannot tell.
int64_t PeakRssKib(const std::string& path) {
  const RunResult r = RunShell("/usr/bin/time -v '" + std::string(TFDIAG_BINARY) +
                               "' analyze --no-progress '" + path + "' >/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  if (!std::regex_search(r.err, m, std::regex("Maximum resident set size \\(kbytes\\): (\\d+)")))
    return -1;
  return std::stoll(m[1].str());
}

TEST(BundleStream, MemoryDoesNotFollowTheRowsBytes) {
  if (!std::filesystem::exists("/usr/bin/time")) GTEST_SKIP() << "no /usr/bin/time (GNU time)";
  TempDir dir;
  // 64 rows of a 1 MiB thread name: 64 MiB in the rows, one name once interned.
  WriteFile(dir.File("big.tfdiag.json"), Bundle(64, std::string(1 << 20, 'n')));
  WriteFile(dir.File("small.tfdiag.json"), Bundle(64, "n"));
  ASSERT_GT(std::filesystem::file_size(dir.File("big.tfdiag.json")), 64u << 20);
  const int64_t small = PeakRssKib(dir.File("small.tfdiag.json"));
  const int64_t big = PeakRssKib(dir.File("big.tfdiag.json"));
  ASSERT_GT(small, 0);
  ASSERT_GT(big, 0);
  // Read whole, the file alone is 64 MiB more (measured before: +70 MiB and more).
  EXPECT_LT(big - small, 24 << 10) << "peak RSS " << big << " KiB vs " << small << " KiB";
}

TEST(BundleStream, RowsBeforeTheHeadReadTheSame) {
  TempDir dir;
  WriteFile(dir.File("a.tfdiag.json"), Bundle(3, "grpc"));
  WriteFile(dir.File("b.tfdiag.json"), Bundle(3, "grpc", true));
  CaptureBuilder a, b;
  ASSERT_TRUE(ReadBundle(dir.File("a.tfdiag.json"), &a).ok());
  const Status sb = ReadBundle(dir.File("b.tfdiag.json"), &b);
  ASSERT_TRUE(sb.ok()) << sb.message();
  const Capture ca = a.Finish(), cb = b.Finish();
  EXPECT_EQ(ca.process_samples.size(), 4u);
  EXPECT_EQ(ca.thread_samples.size(), 3u);
  EXPECT_EQ(cb.process_samples.size(), ca.process_samples.size());
  EXPECT_EQ(cb.thread_samples.size(), ca.thread_samples.size());
}

TEST(BundleStream, ABadRowIsNamedByKeyIndexAndColumn) {
  TempDir dir;
  std::string text = Bundle(3, "grpc");
  // The second thread sample cut to two values; then a negative CPU time in the third.
  const std::string second = fmt::format(R"([{},0,101,"grpc","S",1,0,0])", kT0);
  text.replace(text.find(second), second.size(), "[1,2]");
  WriteFile(dir.File("x.tfdiag.json"), text);
  CaptureBuilder b;
  Status s = ReadBundle(dir.File("x.tfdiag.json"), &b);
  EXPECT_EQ(s.message(), dir.File("x.tfdiag.json") +
                             ": thread_samples[1]: expected an array of 8 "
                             "values");
  std::string neg = Bundle(3, "grpc");
  const std::string third = fmt::format(R"([{},0,102,"grpc","S",2,0,0])", kT0);
  neg.replace(neg.find(third), third.size(), fmt::format(R"([{},0,102,"grpc","S",-2,0,0])", kT0));
  WriteFile(dir.File("y.tfdiag.json"), neg);
  CaptureBuilder c;
  s = ReadBundle(dir.File("y.tfdiag.json"), &c);
  EXPECT_NE(s.message().find("thread_samples[2][5] (cpu_ns): -2 is negative"), std::string::npos)
      << s.message();
  // A file cut short: the byte offset.
  WriteFile(dir.File("z.tfdiag.json"), text.substr(0, text.size() / 2));
  CaptureBuilder d;
  s = ReadBundle(dir.File("z.tfdiag.json"), &d);
  EXPECT_NE(s.message().find(": byte "), std::string::npos) << s.message();
}

}  // namespace
}  // namespace tfdiag::test
