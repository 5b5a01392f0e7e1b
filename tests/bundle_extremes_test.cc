// Issue 32 item 11: a bundle the reader accepts must read back after it is written again
// (analyze --save, attach): the fuzzer found one accepted with host_cpus past int32, truncated to
// a negative count, and the re-written bundle rejected. Every integer of a bundle with every
// section is replaced in turn by extreme values; each result is either rejected with a message
// naming the field, or read, written and read again.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "core/bundle.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const char* const kBundle =
    R"({"schema":"tfdiag.bundle/1","meta":{"host":"h","kernel":"k","window_start_ns":1000,)"
    R"("window_end_ns":5000000000,"interval_ms":1000,"probes":"sched,traffic","warnings":[]},)"
    R"("tasks":[{"job":"ps","replica":0,"index":0},{"job":"worker","replica":0,"index":1}],)"
    R"("processes":[{"task":"ps:0","pid":41,"pod":"p","pod_uid":"u","container":"c","qos":"q",)"
    R"("cgroup":"/","cpuset":"0-3","cpu_limit":1.5,"quota_us":150000,"period_us":100000,)"
    R"("cpuset_cpus":4,"host_cpus":8,"first_ns":1000,"last_ns":3000000000,"exited":false,)"
    R"("restarts":2},{"task":"worker:1","pid":42,"pod":"w","pod_uid":"v","container":"c",)"
    R"("qos":"q","cgroup":"/","cpuset":"","cpu_limit":0,"quota_us":-1,"period_us":100000,)"
    R"("cpuset_cpus":8,"host_cpus":8,"first_ns":1000,"last_ns":3000000000,"exited":true}],)"
    R"("process_samples":[[1000000000,0,20,9,5,1,2,10,6,300],[2000000000,0,20,9,7,1,2,11,6,300],)"
    R"([2000000000,1,4,1,100,1,1,-1,-1,-1]],)"
    R"("thread_samples":[[1000000000,0,43,"t","R",100,1,2]],)"
    R"("traffic":[[2000000000,1,"10.0.0.2:5","10.0.0.1:2222","ps:0",0,100,200]],)"
    R"("sched":[[2000000000,0,5,6,1000000,20000,3,)"
    R"([0,0,0,0,0,0,0,0,0,0,3,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]]],)"
    R"("step_counts":[[1000000000,1,10],[2000000000,1,20]]})";

TEST(BundleExtremes, AcceptedBundlesReadBackAfterWriting) {
  // Where each integer token of kBundle starts and ends (not inside strings).
  const std::string base = kBundle;
  std::vector<std::pair<size_t, size_t>> ints;
  bool in_string = false;
  for (size_t i = 0; i < base.size(); ++i) {
    if (base[i] == '"') in_string = !in_string;
    if (in_string || !(std::isdigit(static_cast<unsigned char>(base[i])) || base[i] == '-')) {
      continue;
    }
    size_t j = i + 1;
    while (j < base.size() && (std::isdigit(static_cast<unsigned char>(base[j])) || base[j] == '.'))
      ++j;
    ints.emplace_back(i, j);
    i = j - 1;
  }
  ASSERT_GT(ints.size(), 100u);
  TempDir dir;
  const std::string first = dir.File("first.json"), again = dir.File("again.json");
  {
    CaptureBuilder b;
    WriteFile(first, base);
    ASSERT_TRUE(ReadBundle(first, &b).ok()) << ReadBundle(first, &b).message();  // the control
  }
  int accepted = 0, rejected = 0;
  for (const auto& [from, to] : ints) {
    for (const char* v : {"2147483648", "4294967297", "-2147483649", "9223372036854775807",
                          "-9223372036854775808", "4611686018427387905", "-2", "1e300"}) {
      const std::string text = base.substr(0, from) + v + base.substr(to);
      WriteFile(first, text);
      CaptureBuilder b;
      const Status s = ReadBundle(first, &b);
      const std::string what = base.substr(from > 40 ? from - 40 : 0, 40) + "[" + v + "]";
      if (!s.ok()) {
        ++rejected;
        EXPECT_EQ(s.code(), StatusCode::kInvalidInput) << what;
        continue;
      }
      ++accepted;
      const Capture c = b.Finish();
      ASSERT_TRUE(WriteBundle(c, again).ok());
      CaptureBuilder b2;
      const Status s2 = ReadBundle(again, &b2);
      EXPECT_TRUE(s2.ok()) << what
                           << ": accepted, but its re-written bundle is not: " << s2.message();
    }
  }
  EXPECT_GT(accepted, 50);  // counters take any int64, so many extremes are fine
  EXPECT_GT(rejected, 200);
}

}  // namespace
}  // namespace tfdiag::test
