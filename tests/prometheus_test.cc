// Agent mode: `tfdiag attach --serve` on a psload hot-shard job. A GET /metrics (raw socket)
// after the workers exit must show the same figures as the workers' summaries and the bundle:
// bytes per peer task, HDFS bytes, context switches, the run-queue histogram's count.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/socket.h>

#include <map>
#include <regex>

#include "report/prometheus_exporter.h"
#include "tests/bpf_job.h"

namespace tfdiag::test {
namespace {

// The value of the first sample line whose name and labels contain every `parts` string; -1 if
// there is none.
double Sample(const std::string& text, const std::vector<std::string>& parts) {
  size_t p = 0;
  while (p < text.size()) {
    size_t e = text.find('\n', p);
    if (e == std::string::npos) e = text.size();
    const std::string line = text.substr(p, e - p);
    p = e + 1;
    if (line.empty() || line[0] == '#') continue;
    bool all = true;
    for (const std::string& s : parts) all = all && line.find(s) != std::string::npos;
    if (all) return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return -1;
}

TEST(Prometheus, CollectableExposesFigures) {
  TfdiagCollectable c;
  LiveFigures f;
  LiveTaskFigures& t = f.tasks.emplace_back();
  t.job = "worker", t.task = "worker:0", t.node = "n", t.pid = 7, t.cpu_seconds = 1.5;
  t.has_traffic = true;
  t.peers.push_back({"127.0.0.1:2222", "ps:0", false, 100, 200});
  t.has_sched = true;
  t.runq_hist[10] = 3;
  t.runq_waits = 3;
  c.Update(f);
  std::vector<prometheus::MetricFamily> fams = c.Collect();
  std::map<std::string, const prometheus::MetricFamily*> by;
  for (const auto& m : fams) by[m.name] = &m;
  ASSERT_TRUE(by.count("tfdiag_task_cpu_seconds_total"));
  EXPECT_DOUBLE_EQ(by["tfdiag_task_cpu_seconds_total"]->metric[0].counter.value, 1.5);
  ASSERT_TRUE(by.count("tfdiag_traffic_bytes_total"));
  EXPECT_EQ(by["tfdiag_traffic_bytes_total"]->metric.size(), 2u);
  ASSERT_TRUE(by.count("tfdiag_runqueue_latency_seconds"));
  EXPECT_EQ(by["tfdiag_runqueue_latency_seconds"]->metric[0].histogram.sample_count, 3u);
  // A task that goes away keeps its counters, marked down.
  c.Update(LiveFigures{});
  for (const auto& m : c.Collect()) {
    if (m.name == "tfdiag_task_up") {
      EXPECT_EQ(m.metric[0].gauge.value, 0);
    }
  }
}

TEST(Prometheus, ServeRejectsABadAddress) {
  RunResult r = RunTfdiag("attach --serve 127.0.0.1:notaport --duration 1s");
  EXPECT_NE(r.exit_code, 0);
}

TEST(PrometheusLive, MetricsMatchTheWorkloadAndTheBundle) {
  std::string why = BpfSkipReason();
  if (!why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  HotJob job;
  const int port = FreePorts(1)[0];
  job.attach_args = {"--serve", fmt::format("127.0.0.1:{}", port), "--duration", "60s"};
  ASSERT_TRUE(job.Start(dir, &why)) << why;
  job.WaitWorkers();
  // The workers' counters are final once the sampler (every 1 s) has seen them exit and marked
  // them down (tfdiag_task_up 0); on a loaded machine that takes longer than on an idle one, so
  // poll for it (up to 30 s).
  std::string metrics;
  bool all_down = false;
  for (int tries = 0; tries < 120 && !all_down; ++tries) {
    usleep(250 * 1000);
    metrics = HttpGet(port, "/metrics");
    ASSERT_NE(metrics.find("200 OK"), std::string::npos) << metrics.substr(0, 300);
    all_down = true;
    for (int i = 0; i < job.workers; ++i) {
      const std::string task = fmt::format("replica_index=\"{}\",replica_type=\"worker\"", i);
      all_down = all_down && Sample(metrics, {"tfdiag_task_up{", task}) == 0;
    }
  }
  ASSERT_TRUE(all_down) << "the workers were not marked down within 30 s:\n" << metrics;
  ASSERT_EQ(job.WaitAttach(true), 0) << ReadFile(job.attach_log);
  rapidjson::Document b;
  b.Parse(ReadFile(job.bundle).c_str());
  ASSERT_TRUE(b.IsObject());
  for (int i = 0; i < job.workers; ++i) {
    rapidjson::Document s;
    s.Parse(ReadFile(HotJob::Summary(dir, i)).c_str());
    const std::string task = fmt::format("replica_index=\"{}\",replica_type=\"worker\"", i);
    const double sent = Sample(
        metrics, {"tfdiag_traffic_bytes_total{", task, "direction=\"sent\"", "peer_task=\"ps:0\""});
    const double counted = s["per_ps"]["ps:0"]["bytes_sent"].GetDouble();
    EXPECT_NEAR(sent, counted, 0.10 * counted) << metrics;
    const double hdfs = Sample(metrics, {"tfdiag_hdfs_read_bytes_total{", task});
    EXPECT_NEAR(hdfs, s["hdfs_bytes_read"].GetDouble(), 0.10 * s["hdfs_bytes_read"].GetDouble());
    const double vol = Sample(metrics, {"tfdiag_context_switches_total{", task, "\"voluntary"});
    const double inv = Sample(metrics, {"tfdiag_context_switches_total{", task, "involuntary"});
    const double waits = Sample(metrics, {"tfdiag_runqueue_latency_seconds_count{", task});
    EXPECT_GT(vol, 0);
    EXPECT_GT(waits, 0);
    EXPECT_GT(Sample(metrics, {"tfdiag_task_cpu_seconds_total{", task}), 0);
    // The bundle's last rows for this worker hold the same counts: bytes to ps:0 and from
    // HDFS (traffic), switches (/proc samples), run-queue waits (sched).
    const std::string label = fmt::format("worker:{}", i);
    int64_t process = -1;
    for (rapidjson::SizeType p = 0; p < b["processes"].Size(); ++p) {
      if (label == b["processes"][p]["task"].GetString()) process = p;
    }
    ASSERT_GE(process, 0) << label << " not in the bundle";
    int64_t bundle_sent = 0, bundle_hdfs = 0;
    for (const auto& row : b["traffic"].GetArray()) {
      if (row[1].GetInt64() != process) continue;
      if (std::string(row[4].GetString()) == "ps:0") bundle_sent = row[6].GetInt64();
      if (row[5].GetInt64() != 0) bundle_hdfs = row[7].GetInt64();  // one hdfs socket
    }
    EXPECT_EQ(static_cast<int64_t>(sent), bundle_sent);
    EXPECT_EQ(static_cast<int64_t>(hdfs), bundle_hdfs);
    int64_t bundle_vol = -1, bundle_inv = -1, bundle_waits = -1;
    for (const auto& r : b["process_samples"].GetArray()) {
      if (r[1].GetInt64() == process) bundle_vol = r[5].GetInt64(), bundle_inv = r[6].GetInt64();
    }
    for (const auto& r : b["sched"].GetArray()) {
      if (r[1].GetInt64() == process) bundle_waits = r[6].GetInt64();
    }
    EXPECT_EQ(static_cast<int64_t>(vol), bundle_vol);
    EXPECT_EQ(static_cast<int64_t>(inv), bundle_inv);
    EXPECT_EQ(static_cast<int64_t>(waits), bundle_waits);
    std::printf(
        "[ measured ] %s /metrics: hdfs %.0f B (bundle %lld), switches %.0f/%.0f (bundle "
        "%lld/%lld), run-queue waits %.0f (bundle %lld)\n",
        label.c_str(), hdfs, (long long)bundle_hdfs, vol, inv, (long long)bundle_vol,
        (long long)bundle_inv, waits, (long long)bundle_waits);
    std::printf("[ measured ] worker:%d /metrics sent to ps:0 %.0f B, bundle %lld, summary %.0f\n",
                i, sent, (long long)bundle_sent, counted);
  }
}

}  // namespace
}  // namespace tfdiag::test
