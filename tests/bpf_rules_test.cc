// The eBPF-backed rules and the attach fallbacks on real psload jobs recorded by `tfdiag attach`:
// - input-bound: workers whose HDFS-like server is capped low wait on input with idle CPUs;
//   analyze must report the HDFS plateau for each of them at the rate the reader counted (10%),
//   and must not when the same job reads uncapped input with CPU-bound workers;
// - raw_tp: the probes forced to plain raw tracepoints record the same traffic matrix as the
//   workers counted, and the same switch counts as /proc, like tp_btf;
// - without BPF the bundle says what it lacks.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <map>
#include <string>

#include "tests/bpf_job.h"

namespace tfdiag::test {
namespace {

// The findings of `rule` in the analysis of `bundle`, by subject.
std::map<std::string, rapidjson::Document> Findings(const std::string& bundle,
                                                    const std::string& rule) {
  std::map<std::string, rapidjson::Document> out;
  RunResult r = RunTfdiag("analyze -f json " + bundle);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document a = Json(r.out);
  if (!a.IsObject()) return out;
  // One entry per object (a finding groups the objects of one cause, each with its own
  // subject, summary and evidence).
  for (const auto& f : a["findings"].GetArray()) {
    if (rule != f["rule"].GetString()) continue;
    for (const auto& o : f["objects"].GetArray()) {
      rapidjson::Document d;
      d.CopyFrom(o, d.GetAllocator());
      out[o["subject"].GetString()] = std::move(d);
    }
  }
  return out;
}

double Evidence(const rapidjson::Value& finding, const std::string& label) {
  for (const auto& e : finding["evidence"].GetArray()) {
    if (label == e["label"].GetString()) return e["value"].GetDouble();
  }
  ADD_FAILURE() << "no evidence '" << label << "'";
  return -1;
}

TEST_F(BpfLive, InputBoundPlateauNamesCappedWorkersAtTheReadersRate) {
  TempDir dir;
  HotJob job;
  job.worker_s = 6;
  job.hdfs_mbps = 40;  // 5 MB/s per connection: a 256 KiB read takes ~52 ms, compute 1 ms
  rapidjson::Document b = RecordHotJob(dir, &job);
  ASSERT_TRUE(b.IsObject());
  auto found = Findings(job.bundle, "input-bound");
  for (int i = 0; i < job.workers; ++i) {
    const std::string task = fmt::format("worker:{}", i);
    rapidjson::Document s = Json(ReadFile(HotJob::Summary(dir, i)));
    ASSERT_TRUE(s.IsObject()) << task << " summary";
    const double counted = s["hdfs_bytes_read"].GetDouble() / s["wall_time_s"].GetDouble();
    ASSERT_TRUE(found.count(task)) << task << " input-bound plateau did not fire";
    const rapidjson::Value& f = found.at(task);
    EXPECT_NE(std::string(f["summary"].GetString()).find("HDFS"), std::string::npos);
    const double rate = Evidence(f, "HDFS input rate (measured, eBPF)");
    EXPECT_NEAR(rate, counted, 0.10 * counted) << task;
    EXPECT_LE(Evidence(f, "CPU demand share of its CPUs"), 50) << task << " waits, not computes";
    std::printf("[ measured ] %s plateau %.3f MB/s (eBPF) vs %.3f MB/s (reader), CPU %.1f%%\n",
                task.c_str(), rate / 1e6, counted / 1e6,
                Evidence(f, "CPU demand share of its CPUs"));
  }
}

TEST_F(BpfLive, InputBoundPlateauSilentForCpuBoundWorkersWithUncappedInput) {
  TempDir dir;
  HotJob job;
  job.worker_s = 6;
  job.hdfs_mbps = 0;  // uncapped: the workers' compute paces the steps
  job.worker_args = {"--compute-us=20000", "--worker-threads=2"};
  rapidjson::Document b = RecordHotJob(dir, &job);
  ASSERT_TRUE(b.IsObject());
  // The rule had HDFS input to judge: every worker read from the hdfs server.
  const std::map<std::string, int64_t> hdfs = TrafficTotals(b).hdfs;
  for (int i = 0; i < job.workers; ++i) {
    const std::string task = fmt::format("worker:{}", i);
    ASSERT_TRUE(hdfs.count(task)) << task << " read no HDFS bytes";
    EXPECT_GT(hdfs.at(task), 1000000) << task;
  }
  auto found = Findings(job.bundle, "input-bound");
  for (const auto& [subject, f] : found) {
    ADD_FAILURE() << "input-bound fired for CPU-bound " << subject << ": "
                  << f["summary"].GetString();
  }
}

TEST_F(BpfLive, RawTracepointFallbackRecordsTheSameMatrix) {
  TempDir dir;
  HotJob job;
  job.worker_s = 3;
  job.attach_args = {"--bpf-attach", "raw_tp"};
  rapidjson::Document b = RecordHotJob(dir, &job);
  ASSERT_TRUE(b.IsObject());
  EXPECT_STREQ(b["meta"]["probes"].GetString(), "sched(raw_tp),traffic(raw_tp)");
  // The matrix (worker side, last row per socket) against the workers' own per-PS counts.
  const Totals t = TrafficTotals(b);
  for (int i = 0; i < job.workers; ++i) {
    const std::string task = fmt::format("worker:{}", i);
    rapidjson::Document s = Json(ReadFile(HotJob::Summary(dir, i)));
    ASSERT_TRUE(s.IsObject()) << task << " summary";
    for (const char* ps : {"ps:0", "ps:1"}) {
      ASSERT_TRUE(t.by_peer_task.count(task) && t.by_peer_task.at(task).count(ps))
          << task << " -> " << ps << " missing";
      const auto& c = t.by_peer_task.at(task).at(ps);
      const double sent = s["per_ps"][ps]["bytes_sent"].GetDouble();
      const double received = s["per_ps"][ps]["bytes_received"].GetDouble();
      EXPECT_NEAR(c.first, sent, 0.10 * sent) << task << " -> " << ps;
      EXPECT_NEAR(c.second, received, 0.10 * received) << ps << " -> " << task;
    }
  }
  // The sched probe ran as raw_tp too: its switch counts match /proc's, as with tp_btf.
  ExpectSwitchesMatchProc(b);
}

TEST(Bpf, BadAttachTypeIsAUsageError) {
  RunResult r = RunTfdiag("attach --bpf-attach kprobe --duration 1s -o /tmp/never.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected auto, tp_btf or raw_tp"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
