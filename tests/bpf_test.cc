// The eBPF probes end to end on this machine: a psload hot-shard job (2 PS x 2 workers, hdfs
// input at a capped rate) recorded by `tfdiag attach` from its first byte to its last. The
// traffic matrix must match what the workers counted themselves, switch counts must match
// /proc's, the HDFS rate the reader's, and analyze must name ps:0 from measured bytes.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <map>

#include "tests/bpf_job.h"

namespace tfdiag::test {
namespace {

void ExpectNear10(double measured, double counted, const std::string& what) {
  EXPECT_NEAR(measured, counted, 0.10 * counted) << what;
}

TEST_F(BpfLive, HotJobMatrixSwitchesAndHdfsMatchTheWorkload) {
  TempDir dir;
  HotJob job;
  std::string why;
  ASSERT_TRUE(job.Start(dir, &why)) << why;
  job.WaitWorkers();
  ASSERT_EQ(job.WaitAttach(false), 0) << ReadFile(job.attach_log);
  rapidjson::Document b = Json(ReadFile(job.bundle));
  ASSERT_TRUE(b.IsObject());
  ASSERT_NE(std::string(b["meta"]["probes"].GetString()).find("traffic"), std::string::npos)
      << ReadFile(job.attach_log);
  const Totals t = TrafficTotals(b);

  // The matrix against the workers' own per-PS counts (send/recv return values).
  int64_t ps0 = 0, all_ps = 0;
  for (int i = 0; i < job.workers; ++i) {
    rapidjson::Document s = Json(ReadFile(HotJob::Summary(dir, i)));
    ASSERT_TRUE(s.IsObject()) << "worker " << i << " summary";
    const std::string task = fmt::format("worker:{}", i);
    for (const char* ps : {"ps:0", "ps:1"}) {
      const auto& counted = s["per_ps"][ps];
      auto cell = t.by_peer_task.at(task).at(ps);
      ExpectNear10(cell.first, counted["bytes_sent"].GetDouble(), task + " -> " + ps);
      ExpectNear10(cell.second, counted["bytes_received"].GetDouble(), ps + (" -> " + task));
      all_ps += cell.first + cell.second;
      if (std::string(ps) == "ps:0") ps0 += cell.first + cell.second;
    }
    // HDFS: what the reader counted (wire bytes exactly; data bytes within headers).
    for (const auto& peer : s["peers"].GetObject()) {
      if (peer.value["hdfs_bytes"].GetInt64() == 0) continue;
      ExpectNear10(t.hdfs.at(task), peer.value["bytes_received"].GetDouble(), task + " hdfs");
    }
    ExpectNear10(t.hdfs.at(task), s["hdfs_bytes_read"].GetDouble(), task + " hdfs data");
    std::printf(
        "[ measured ] %s: ps:0 %lld/%lld B (eBPF sent/recv) vs %lld/%lld (summary); "
        "hdfs %lld vs %lld\n",
        task.c_str(), (long long)t.by_peer_task.at(task).at("ps:0").first,
        (long long)t.by_peer_task.at(task).at("ps:0").second,
        (long long)s["per_ps"]["ps:0"]["bytes_sent"].GetInt64(),
        (long long)s["per_ps"]["ps:0"]["bytes_received"].GetInt64(), (long long)t.hdfs.at(task),
        (long long)s["hdfs_bytes_read"].GetInt64());
  }
  EXPECT_GT(double(ps0) / all_ps, 0.9) << "ps:0 moves most PS bytes in a hot run";

  // HDFS rate over the middle samples against the reader's own rate.
  for (int i = 0; i < job.workers; ++i) {
    rapidjson::Document s = Json(ReadFile(HotJob::Summary(dir, i)));
    const double counted = s["hdfs_bytes_read"].GetDouble() / s["wall_time_s"].GetDouble();
    std::map<int64_t, int64_t> series;  // ts -> hdfs bytes of worker i
    for (const auto& row : b["traffic"].GetArray()) {
      const std::string task = b["processes"][row[1].GetInt64()]["task"].GetString();
      if (task == fmt::format("worker:{}", i) && row[5].GetInt64()) {
        series[row[0].GetInt64()] += row[7].GetInt64();
      }
    }
    ASSERT_GE(series.size(), 5u);
    auto a = std::next(series.begin()), z = std::prev(series.end(), 2);
    const double measured = (z->second - a->second) / ((z->first - a->first) / 1e9);
    ExpectNear10(measured, counted, "hdfs rate of worker " + std::to_string(i));
    std::printf("[ measured ] worker:%d hdfs rate %.2f MB/s (eBPF) vs %.2f MB/s (reader)\n", i,
                measured / 1e6, counted / 1e6);
  }

  // Switches: eBPF (sched rows) against /proc (process samples) over the same samples.
  ExpectSwitchesMatchProc(b);

  // analyze names the hot PS from bytes.
  RunResult r = RunTfdiag("analyze -f json " + job.bundle);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document a = Json(r.out);
  bool named = false;
  for (const auto& f : a["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) == "hot-ps") {
      EXPECT_STREQ(f["subject"].GetString(), "ps:0");
      named = std::string(f["summary"].GetString()).find("measured PS bytes") != std::string::npos;
    }
  }
  EXPECT_TRUE(named) << r.out.substr(0, 2000);
}

TEST(Bpf, NoBpfFlagFallsBackToProcWithAWarning) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to read TF_CONFIG of the job";
  TempDir dir;
  HotJob job;
  job.worker_s = 2;
  job.attach_args = {"--no-bpf"};
  std::string why;
  ASSERT_TRUE(job.Start(dir, &why)) << why;
  job.WaitWorkers();
  ASSERT_EQ(job.WaitAttach(false), 0) << ReadFile(job.attach_log);
  rapidjson::Document b = Json(ReadFile(job.bundle));
  EXPECT_STREQ(b["meta"]["probes"].GetString(), "");
  EXPECT_EQ(b["traffic"].Size(), 0u);
  const std::string log = ReadFile(job.attach_log);
  EXPECT_NE(log.find("eBPF probes off (--no-bpf)"), std::string::npos) << log;
  EXPECT_NE(log.find("no traffic matrix, no HDFS input rate and no run-queue latency"),
            std::string::npos)
      << log;
  bool in_bundle = false;
  for (const auto& w : b["meta"]["warnings"].GetArray()) {
    in_bundle = in_bundle || std::string(w.GetString()).find("eBPF probes off") == 0;
  }
  EXPECT_TRUE(in_bundle) << "the bundle's warnings say the probes were off";
}

// Without the rights to load probes (attach as an unprivileged user, on that user's own job),
// attach still records from /proc and says why the probes are off and what the bundle lacks.
TEST(Bpf, WithoutRootFallsBackToProcAndSaysWhatIsMissing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to start the job as another user";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv";
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  HotJob job;
  job.worker_s = 2;
  job.run_as = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};
  std::string why;
  ASSERT_TRUE(job.Start(dir, &why)) << why;
  job.WaitWorkers();
  ASSERT_EQ(job.WaitAttach(false), 0) << ReadFile(job.attach_log);
  rapidjson::Document b = Json(ReadFile(job.bundle));
  ASSERT_TRUE(b.IsObject()) << ReadFile(job.attach_log);
  EXPECT_STREQ(b["meta"]["probes"].GetString(), "");
  EXPECT_EQ(b["traffic"].Size(), 0u);
  EXPECT_GT(b["process_samples"].Size(), 0u) << "/proc sampling still ran";
  const std::string log = ReadFile(job.attach_log);
  EXPECT_NE(log.find("eBPF probes off: not root"), std::string::npos) << log;
  EXPECT_NE(log.find("CAP_BPF"), std::string::npos) << log;
  EXPECT_NE(log.find("no traffic matrix"), std::string::npos) << log;
}

}  // namespace
}  // namespace tfdiag::test
