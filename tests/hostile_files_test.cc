// Deep, huge and malformed files through the built `tfdiag analyze` (issue 32, items 4, 6, 11):
// each ended in SIGSEGV (stack overflow), SIGABRT (an uncaught std::stoi) or a silently wrong
// figure; each must end in exit code 2 with a message naming the file and what was expected.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "collectors/xplane/host_tasks.h"
#include "core/checked_number.h"
#include "samples/simulator.h"
#include "tests/test_util.h"
#include "tests/viewer_util.h"

namespace tfdiag::test {
namespace {

constexpr const char* kHugeHost = "/worker-99999999999.xplane.pb";
constexpr const char* kHugeError =
    "worker-99999999999.xplane.pb: host 'worker-99999999999' (the profile file's name): task "
    "index 99999999999 of worker is out of range; expected 0..999999";

void ExpectRc2(const RunResult& r, const std::string& expect, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << ": " << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find(expect), std::string::npos) << what << ": " << r.err.substr(0, 2000);
}

// 300,000 nested arrays (600 KB) in a bundle: RapidJSON's recursive parser overflowed the stack.
TEST(HostileFiles, DeepBundleIsExit2) {
  TempDir dir;
  const int n = 300000;
  const std::string path = dir.File("deep.json");
  WriteFile(path, "{\"schema\":\"tfdiag.bundle/1\",\"x\":" + std::string(n, '[') +
                      std::string(n, ']') + "}");
  ExpectRc2(RunTfdiag("analyze --no-progress " + path),
            "deep.json: byte 95: nesting deeper than 64 arrays and objects", "bundle");
}

// A text RunMetadata with an unknown field nested 20,000 deep: libprotobuf's TextFormat parser
// recursed once per level (no recursion limit on the text path).
TEST(HostileFiles, DeepTextRunMetadataIsExit2) {
  TempDir dir;
  const int n = 20000;
  std::string text =
      "step_stats {\n dev_stats {\n  device: \"/job:worker/replica:0/task:0/device:CPU:0\"\n"
      "  node_stats { node_name: \"a\" all_start_micros: 1 all_end_rel_micros: 2 "
      "timeline_label: \"a = NoOp()\" }\n  ";
  for (int i = 0; i < n; ++i) text += "zz { ";
  text += std::string(n, '}') + "\n }\n}\n";
  const std::string path = dir.File("deep.pbtxt");
  WriteFile(path, text);
  ExpectRc2(RunTfdiag("analyze --no-progress " + path),
            "deep.pbtxt: line 5 column 312: nesting deeper than 64 messages", "text RunMetadata");
}

// The binary path had its limit already (CodedInputStream::SetRecursionLimit(64)): 100,000
// nested unknown groups in a DeviceStepStats are refused, not recursed into. Kept as a guard.
TEST(HostileFiles, DeepBinaryRunMetadataIsExit2) {
  TempDir dir;
  const std::string device = "/job:worker/replica:0/task:0/device:CPU:0";
  auto varint = [](size_t n) {
    std::string out;
    for (; n >= 0x80; n >>= 7) out += static_cast<char>((n & 0x7f) | 0x80);
    return out + static_cast<char>(n);
  };
  const int n = 100000;  // field 15 as a group: start tag 123, end tag 124
  const std::string dev =
      "\x0a" + varint(device.size()) + device + std::string(n, '\x7b') + std::string(n, '\x7c');
  const std::string step_stats = "\x0a" + varint(dev.size()) + dev;
  const std::string path = dir.File("deep.pb");
  WriteFile(path, "\x0a" + varint(step_stats.size()) + step_stats);
  ExpectRc2(RunTfdiag("analyze --no-progress " + path),
            "deep.pb: byte 8: expected StepStats.dev_stats[0], a DeviceStepStats (200043 bytes), "
            "could not parse it",
            "binary RunMetadata");
}

// A node whose start (micros x 1000) overflows int64 ns read as a span ending at -9.2e18 ns,
// with exit code 0.
TEST(HostileFiles, RunMetadataTimeOverflowIsExit2) {
  TempDir dir;
  const std::string path = dir.File("overflow.pbtxt");
  WriteFile(path,
            "step_stats {\n dev_stats {\n  device: \"/job:worker/replica:0/task:0/device:CPU:0\"\n"
            "  node_stats { node_name: \"a\" all_start_micros: 9223372036854775 "
            "all_end_rel_micros: 2 timeline_label: \"a = NoOp()\" }\n }\n}\n");
  ExpectRc2(RunTfdiag("analyze --no-progress " + path),
            "overflow.pbtxt: line 2 (dev_stats[0]).node_stats[0] (node a): all_start_micros "
            "9223372036854775",
            "time overflow");
}

// A bundle of one PS process whose fields after cpuset_cpus are `process_fields`.
std::string SmallBundle(const std::string& process_fields) {
  return std::string(
             "{\"schema\":\"tfdiag.bundle/1\",\"meta\":{\"host\":\"h\",\"kernel\":\"k\","
             "\"window_start_ns\":0,\"window_end_ns\":1000000000,\"interval_ms\":1000},"
             "\"tasks\":[{\"job\":\"ps\",\"replica\":0,\"index\":0}],\"processes\":[{\"task\":"
             "\"ps:0\",\"pid\":1,\"pod\":\"\",\"pod_uid\":\"\",\"container\":\"\",\"qos\":\"\","
             "\"cgroup\":\"\",\"cpuset\":\"\",\"cpu_limit\":0,\"quota_us\":-1,\"period_us\":"
             "100000,\"cpuset_cpus\":1,") +
         process_fields +
         ",\"first_ns\":0,\"last_ns\":0,\"exited\":false}],\"process_samples\":[],"
         "\"thread_samples\":[]}";
}

// host_cpus past int32 was truncated to a negative count: the bundle was accepted, and the
// bundle written from it (analyze --save) was then rejected.
TEST(HostileFiles, BundleInt32FieldsOutOfRangeAreExit2) {
  TempDir dir;

  const std::string ok = dir.File("ok.json"), bad = dir.File("bad.json");
  WriteFile(ok, SmallBundle("\"host_cpus\":4"));
  WriteFile(bad, SmallBundle("\"host_cpus\":2147483648"));
  RunResult good = RunTfdiag("analyze --no-progress " + ok);
  EXPECT_EQ(good.exit_code, 0) << good.err;  // the control
  ExpectRc2(RunTfdiag("analyze --no-progress " + bad),
            "bad.json: processes[0].host_cpus: 2147483648 is out of range; expected at most "
            "2147483647",
            "host_cpus");
}

// A NUL byte after a whole bundle ended the in-place parse there: what followed was never read
// (a bundle and garbage read as the bundle, exit code 0).
TEST(HostileFiles, NulByteInBundleIsExit2) {
  TempDir dir;
  const std::string path = dir.File("nul.json");
  const std::string bundle = SmallBundle("\"host_cpus\":4");
  WriteFile(path, bundle + std::string(1, '\0') + "garbage");
  ExpectRc2(RunTfdiag("analyze --no-progress " + path),
            "nul.json: byte " + std::to_string(bundle.size()) + ": a NUL byte; expected JSON text",
            "NUL");
}

// A TF2 log directory (2 PS, 2 workers) whose worker-0 file is named
// worker-99999999999.xplane.pb; returns the directory.
std::string HugeIndexLogDir(const TempDir& dir) {
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 3;
  p.ps = 2;
  p.workers = 2;
  p.format = sim::TraceFormat::kXPlane;
  const std::string logs = dir.File("logs");
  EXPECT_TRUE(sim::WriteScenario(p, logs).ok());
  const std::string run = logs + "/plugins/profile/2020_09_13_12_26_40";
  EXPECT_EQ(std::rename((run + "/worker-0.xplane.pb").c_str(), (run + kHugeHost).c_str()), 0);
  return logs;
}

// std::stoi of the file's index threw out_of_range, uncaught (SIGABRT) in analyze and view.
TEST(HostileFiles, HostFileWithHugeTaskIndexIsExit2) {
  TempDir dir;
  const std::string logs = HugeIndexLogDir(dir);
  ASSERT_FALSE(HasFailure());
  const std::string huge = logs + "/plugins/profile/2020_09_13_12_26_40" + kHugeHost;
  for (const std::string& input : {logs, huge}) {
    ExpectRc2(RunTfdiag("analyze --no-progress '" + input + "'"), kHugeError, input);
  }
  // An index in range still maps by name.
  HostMapper m;
  EXPECT_EQ(m.Map("worker-999999").index, 999999);
  EXPECT_TRUE(m.Map("worker-999999").error.ok());
  EXPECT_FALSE(m.Map("job-ps-1000000").error.ok());
}

// The same name on plain TF2 trace JSON files read by the parallel pool (2+ plain timelines,
// -j 2): refused like the single-threaded path. Before, the pool read the file as localhost:0,
// exit 0.
TEST(HostileFiles, TraceJsonWithHugeTaskIndexIsExit2OnEveryReadPath) {
  TempDir dir;
  sim::ScenarioParams p;
  p.scenario = "hot-ps";
  p.steps = 3;
  p.ps = 2;
  p.workers = 2;
  p.format = sim::TraceFormat::kTraceJson;
  const std::string logs = dir.File("logs");
  ASSERT_TRUE(sim::WriteScenario(p, logs).ok());
  const std::string run = logs + "/plugins/profile/2020_09_13_12_26_40";
  std::string files;
  for (const char* task : {"ps-0", "ps-1", "worker-0", "worker-1"}) {
    const std::string gz = run + "/" + task + ".trace.json.gz";
    ASSERT_EQ(RunShell("gunzip '" + gz + "'").exit_code, 0) << gz;
    std::string plain = run + "/" + task + ".trace.json";
    if (std::string(task) == "worker-0") {
      const std::string huge = run + "/worker-99999999999.trace.json";
      ASSERT_EQ(std::rename(plain.c_str(), huge.c_str()), 0);
      plain = huge;
    }
    files += " '" + plain + "'";
  }
  for (const char* threads : {"1", "2"}) {
    ExpectRc2(RunTfdiag(std::string("analyze --no-progress -j ") + threads + files),
              "worker-99999999999.trace.json: host 'worker-99999999999' (the profile file's "
              "name): task index 99999999999 of worker is out of range",
              std::string("-j ") + threads);
  }
}

// A thread count past INT_MAX in a manifest: std::atoi("4294967300") is undefined (glibc gave
// 4, which matched the CPU limit of 4 and hid the setting); it is read as not a number now.
TEST(HostileFiles, ThreadCountPastIntMaxIsNotANumber) {
  TempDir dir;
  const std::string path = dir.File("job.yaml");
  WriteFile(path, R"(apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: j}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      template: {spec: {containers: [{name: tensorflow, image: "tf:1.15",
        resources: {limits: {cpu: "4", memory: 2Gi}},
        env: [{name: TF_NUM_INTRAOP_THREADS, value: "4294967300"},
              {name: TF_NUM_INTEROP_THREADS, value: "4"}, {name: OMP_NUM_THREADS, value: "4"}]}]}}
)");
  RunResult r = RunTfdiag("analyze --no-progress " + path);
  EXPECT_NE(r.out.find("TF_NUM_INTRAOP_THREADS is not a number"), std::string::npos)
      << r.out << r.err;
}

TEST(HostileFiles, ViewerHostFileWithHugeTaskIndexIsExit2) {
  if (const std::string why = ViewerSkipReason(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string logs = HugeIndexLogDir(dir);
  ASSERT_FALSE(HasFailure());
  ExpectRc2(RunView("--dump-view " + dir.File("view.json") + " '" + logs + "'"), kHugeError,
            "tfdiag-view");
}

// A 2 GiB (sparse) bundle took 2 GB of memory and 25 s, and under a 1 GB address-space limit
// ended in std::bad_alloc (issue 48): it is refused by its size, before a byte is read, naming
// the size and the limit, in bounded memory (peak RSS by /usr/bin/time -v, not by tfdiag).
TEST(HostileFiles, TwoGiBBundleIsRefusedBySizeInBoundedMemory) {
  if (access("/usr/bin/time", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/time (Debian's time)";
  TempDir dir;
  const std::string path = dir.File("sparse.json");
  WriteFile(path, "{\"schema\":\"tfdiag.bundle/1\"}");
  ASSERT_EQ(truncate(path.c_str(), int64_t{2} << 30), 0);
  RunResult r =
      RunShell("/usr/bin/time -v " + std::string(TFDIAG_BINARY) + " analyze --no-progress " + path);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(path + ": 2147483648 bytes; the limit for a bundle is 256 MiB"),
            std::string::npos)
      << r.err;
  const size_t at = r.err.find("Maximum resident set size (kbytes): ");
  ASSERT_NE(at, std::string::npos) << r.err;
  const long kb = std::stol(r.err.substr(at + 36));
  EXPECT_LT(kb, 100 * 1024) << "peak RSS of the refusal, KiB";
  std::printf("2 GiB bundle refused; peak RSS %ld KiB\n", kb);
}

// A 36 MB bundle of 18 million values outside its sample rows, read under a 300 MB
// address-space limit: read whole (before issue 48) its DOM ran out of memory (exit 3, RapidJSON's
// allocator throwing); streamed, the head is bounded and refused by its count before that.
TEST(HostileFiles, JsonOutOfMemoryIsExit3) {
  TempDir dir;
  const std::string path = dir.File("big.json");
  std::string text = "{\"schema\":\"tfdiag.bundle/1\",\"x\":[";
  for (int i = 0; i < 2000000; ++i) text += i ? ",[1,2,3,4,5,6,7,8]" : "[1,2,3,4,5,6,7,8]";
  WriteFile(path, text + "]}");
  RunResult r = RunShell("ulimit -v 300000 && " + std::string(TFDIAG_BINARY) +
                         " analyze --no-progress " + path);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("big.json: byte "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": more than 4194304 values outside the sample rows"), std::string::npos)
      << r.err;
}

TEST(CheckedNumber, ParsesOnlyWholeInRangeIntegers) {
  int v = 7;
  EXPECT_FALSE(ParseIntIn<int>("", 0, 10, &v));
  EXPECT_FALSE(ParseIntIn<int>("-5", 0, 10, &v));
  EXPECT_FALSE(ParseIntIn<int>("+5", 0, 10, &v));
  EXPECT_FALSE(ParseIntIn<int>("5x", 0, 10, &v));
  EXPECT_FALSE(ParseIntIn<int>("11", 0, 10, &v));
  EXPECT_FALSE(ParseIntIn<int>("99999999999", 0, INT32_MAX, &v));
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(ParseIntIn<int>("10", 0, 10, &v));
  EXPECT_EQ(v, 10);
  int64_t r = 0;
  EXPECT_FALSE(CheckedMul(INT64_MAX / 999, 1000, &r));
  EXPECT_FALSE(CheckedAdd(INT64_MAX, 1, &r));
  EXPECT_FALSE(RoundedIn(1e300, 0, INT32_MAX, &r));
  EXPECT_FALSE(RoundedIn(2147483647.6, 0, INT32_MAX, &r));
  EXPECT_TRUE(RoundedIn(2147483647.4, 0, INT32_MAX, &r));
  EXPECT_EQ(r, INT32_MAX);
  EXPECT_EQ(SaturatedRound(1e300), INT64_MAX);
  EXPECT_EQ(SaturatedRound(-1e300, 0), 0);
  EXPECT_EQ(SaturatedRound(std::nan("")), 0);
  EXPECT_EQ(SaturatedAdd(INT64_MAX, 5), INT64_MAX);
}

}  // namespace
}  // namespace tfdiag::test
