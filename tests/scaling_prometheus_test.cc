// tfdiag scaling --prometheus against a real Prometheus server (Debian's prometheus, backfilled
// with promtool from OpenMetrics): a TFJob whose worker pods go 2 -> 4 -> 8 over 30 minutes,
// with a hot ps:0 whose CPU reaches its 2-core limit at 8 workers. The series carry the label
// sets kube-state-metrics v2, the kubelet's cAdvisor and the tfdiag agent export. scaling must
// find the three periods from the pods' Running phase, take throughput from the agents' step
// counters (or, without them, name its bytes proxy), and say that ps:0 stops the job scaling
// from 4 to 8 workers.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cluster_metrics.h"
#include "tests/test_util.h"
#include "tests/validate_schema.h"

namespace tfdiag::test {
namespace {

constexpr double kStep = 15;  // scrape interval, s

struct Window {
  double start, end;
};
// 30 minutes ending at the last full hour but one (inside retention, outside the head block).
// Computed once per process, so that the series written and the windows asked for agree across
// an hour boundary.
Window TestWindow() {
  static const Window window = [] {
    const double end = std::floor(std::time(nullptr) / 3600.0) * 3600 - 3600;
    return Window{end - 1800, end};
  }();
  return window;
}

// Workers running at `rel` seconds into the window: 2, then 4 from 10 min, then 8 from 20 min.
int WorkersAt(double rel) { return rel < 600 ? 2 : rel < 1200 ? 4 : 8; }
// Steps/s of one worker with `n` workers: ps:0 serves them one request at a time and saturates.
double WorkerRate(int n) { return n == 2 ? 10 : n == 4 ? 9.5 : 5.6; }
// ps:0's CPU (cores, of a 2-core limit) with `n` workers.
double Ps0Cpu(int n) { return n == 2 ? 0.9 : n == 4 ? 1.75 : 1.95; }

// The job's series: `agent_steps` adds tfdiag_task_steps_total (the agents reading the workers'
// step counter files); without it only a bytes proxy is left.
void AppendSweepJob(const std::string& job, bool agent_steps, const Window& w, std::string* om) {
  std::string& o = *om;
  struct Pod {
    std::string name, type;
    int index;
    double from;  // seconds into the window when it starts running
  };
  std::vector<Pod> pods = {{job + "-ps-0", "ps", 0, 0}, {job + "-ps-1", "ps", 1, 0}};
  for (int i = 0; i < 8; ++i) {
    pods.push_back({fmt::format("{}-worker-{}", job, i), "worker", i,
                    i < 2   ? 0.0
                    : i < 4 ? 600.0
                            : 1200.0});
  }
  for (const Pod& p : pods) {
    const std::string uid = fmt::format("{:08x}-0000-4000-8000-{:012x}",
                                        std::hash<std::string>()(p.name) & 0xffffffff, p.index);
    const std::string node = fmt::format("node-{}", p.index % 4);
    const std::string ksm = fmt::format(
        "job=\"kube-state-metrics\",instance=\"10.244.0.5:8080\",namespace=\"training\","
        "pod=\"{}\",uid=\"{}\"",
        p.name, uid);
    const std::string cadv = fmt::format(
        "job=\"kubelet\",metrics_path=\"/metrics/cadvisor\",instance=\"{}\",namespace=\"training\","
        "pod=\"{}\"",
        node, p.name);
    const std::string agent = fmt::format(
        "job=\"tfdiag-agent\",instance=\"{}:9464\",namespace=\"training\",node=\"{}\",pod=\"{}\","
        "replica_index=\"{}\",replica_type=\"{}\",tf_job=\"{}\"",
        node, node, p.name, p.index, p.type, job);
    double cpu = 0, steps = 0, bytes = 0;
    for (double t = w.start; t < w.end; t += kStep) {
      const double rel = t - w.start;
      if (rel < p.from) continue;
      const int n = WorkersAt(rel);
      o += fmt::format(
          "kube_pod_info{{{},host_ip=\"10.0.0.1\",pod_ip=\"10.244.1.{}\",node=\"{}\","
          "created_by_kind=\"TFJob\",created_by_name=\"{}\",priority_class=\"\","
          "host_network=\"false\"}} 1 {:.3f}\n",
          ksm, p.index + (p.type == "ps" ? 100 : 0), node, job, t);
      for (const char* phase : {"Pending", "Running", "Succeeded", "Failed", "Unknown"}) {
        o += fmt::format("kube_pod_status_phase{{{},phase=\"{}\"}} {} {:.3f}\n", ksm, phase,
                         std::string(phase) == "Running" ? 1 : 0, t);
      }
      if (p.type == "ps") {
        o += fmt::format(
            "kube_pod_container_resource_limits{{{},container=\"tensorflow\",node=\"{}\","
            "resource=\"cpu\",unit=\"core\"}} 2 {:.3f}\n",
            ksm, node, t);
        o += fmt::format(
            "container_cpu_usage_seconds_total{{{},container=\"tensorflow\",cpu=\"total\"}} "
            "{:.3f} {:.3f}\n",
            cadv, cpu, t);
        cpu += kStep * (p.index == 0 ? Ps0Cpu(n) : 0.2);
        continue;
      }
      if (agent_steps) {
        o += fmt::format("tfdiag_task_steps_total{{{}}} {:.0f} {:.3f}\n", agent, steps, t);
      }
      o += fmt::format(
          "container_network_transmit_bytes_total{{{},container=\"\",interface=\"eth0\"}} {:.0f} "
          "{:.3f}\n",
          cadv, bytes, t);
      steps += kStep * WorkerRate(n);
      bytes += kStep * WorkerRate(n) * 1.5e6;  // 1.5 MB per step
    }
  }
}

// A job outside Kubernetes (IP addresses in TF_CONFIG: no pod name, tf_job from the PS
// addresses' hash) on a CPU-starved node, as the tfdiag agent exports it: 4 workers for 15
// minutes, then 2 (workers 2 and 3 exit: tfdiag_task_up 0 and frozen counters for the agent's 5
// minutes, then nothing). Each worker has 1 runnable thread but gets 0.25 CPUs at 4 workers and
// 0.45 at 2, waits on a run queue 0.7 (0.45) s per s (p99 between 8.4 and 16.8 ms), and the
// job makes 10 steps/s with 4 workers against 9 with 2: adding workers adds waiting, not steps.
// No CPU limit (no CFS quota); ps:0 uses 0.6 cores, ps:1 0.02.
constexpr const char* kStarvedJob = "ip-0badcafe";
int StarvedWorkersAt(double rel) { return rel < 900 ? 4 : 2; }
void AppendStarvedJob(const Window& w, std::string* om) {
  std::string& o = *om;
  struct Task {
    const char* type;
    int index;
  };
  const Task tasks[] = {{"ps", 0},     {"ps", 1},     {"worker", 0},
                        {"worker", 1}, {"worker", 2}, {"worker", 3}};
  for (const Task& task : tasks) {
    const std::string labels = fmt::format(
        "job=\"tfdiag-agent\",instance=\"10.0.0.5:9464\",namespace=\"\",node=\"node-s\",pod=\"\","
        "replica_index=\"{}\",replica_type=\"{}\",tf_job=\"{}\"",
        task.index, task.type, kStarvedJob);
    const bool ps = std::string(task.type) == "ps";
    // Worker 2 and 3 exit at 15 minutes; the agent keeps them 5 minutes at up 0.
    const double exit_at = !ps && task.index >= 2 ? 900 : 1e9;
    double cpu = 0, steps = 0, wait = 0, waits = 0, vol = 0, invol = 0;
    for (double t = w.start; t < w.end; t += kStep) {
      const double rel = t - w.start;
      if (rel >= exit_at + 300) break;
      const bool up = rel < exit_at;
      const int n = StarvedWorkersAt(rel);
      auto put = [&](const std::string& metric, const std::string& extra, double v) {
        o += fmt::format("{}{{{}{}}} {:.6f} {:.3f}\n", metric, labels, extra, v, t);
      };
      put("tfdiag_task_up", "", up ? 1 : 0);
      put("tfdiag_task_cpu_seconds_total", "", cpu);
      put("tfdiag_task_threads", "", ps ? 40 : 60);
      put("tfdiag_task_runnable_threads", "", ps ? 0.5 : n == 4 ? 1.0 : 0.8);
      put("tfdiag_runqueue_latency_seconds_sum", "", wait);
      put("tfdiag_runqueue_latency_seconds_count", "", waits);
      // Of the waits, half within 1 ms, 98% within 8.4 ms (2^23 ns), all within 16.8 ms with 4
      // workers (8.4 ms with 2).
      const double within8 = n == 4 ? 0.98 : 1.0;
      put("tfdiag_runqueue_latency_seconds_bucket", ",le=\"0.001048576\"", 0.5 * waits);
      put("tfdiag_runqueue_latency_seconds_bucket", ",le=\"0.008388608\"", within8 * waits);
      put("tfdiag_runqueue_latency_seconds_bucket", ",le=\"0.016777216\"", waits);
      put("tfdiag_runqueue_latency_seconds_bucket", ",le=\"+Inf\"", waits);
      put("tfdiag_context_switches_total", ",kind=\"voluntary\"", vol);
      put("tfdiag_context_switches_total", ",kind=\"involuntary\"", invol);
      if (!ps) put("tfdiag_task_steps_total", "", steps);
      if (!up) continue;  // frozen counters
      const double cores = ps ? (task.index == 0 ? 0.6 : 0.02) : n == 4 ? 0.25 : 0.45;
      cpu += kStep * cores;
      wait += kStep * (ps ? 0.1 : n == 4 ? 0.7 : 0.45);
      waits += kStep * 200;
      vol += kStep * (n == 4 ? 100 : 50);
      invol += kStep * (n == 4 ? 150 : 60);
      steps += kStep * (n == 4 ? 2.5 : 4.5);
    }
  }
}

// Issue 37 item 8: "hostile-job" is the sweep job plus what a tenant or a broken exporter adds: a
// second tfdiag_task_steps_total series for worker 0 (instance "evil") whose counter climbs by
// 1e300 per scrape, and a pod of the job whose name is 300 bytes long.
void AppendHostileJob(const Window& w, std::string* om) {
  AppendSweepJob("hostile-job", true, w, om);
  const std::string evil =
      "job=\"tfdiag-agent\",instance=\"evil:9464\",namespace=\"training\",node=\"node-0\","
      "pod=\"hostile-job-worker-0\",replica_index=\"0\",replica_type=\"worker\","
      "tf_job=\"hostile-job\"";
  const std::string long_pod = "hostile-job-worker-" + std::string(281, '7');
  const std::string ksm =
      "job=\"kube-state-metrics\",instance=\"10.244.0.5:8080\","
      "namespace=\"training\",pod=\"" +
      long_pod + "\",uid=\"u-long\"";
  double steps = 0;
  for (double t = w.start; t < w.end; t += kStep) {
    *om += fmt::format("tfdiag_task_steps_total{{{}}} {:e} {:.3f}\n", evil, steps, t);
    steps += 1e300;
    *om += fmt::format(
        "kube_pod_info{{{},host_ip=\"10.0.0.1\",pod_ip=\"10.244.9.9\",node=\"node-0\","
        "created_by_kind=\"TFJob\",created_by_name=\"hostile-job\",priority_class=\"\","
        "host_network=\"false\"}} 1 {:.3f}\n",
        ksm, t);
    *om += fmt::format("kube_pod_status_phase{{{},phase=\"Running\"}} 1 {:.3f}\n", ksm, t);
  }
}

class ScalingProm : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = PromServer::SkipReason();
    if (!skip_.empty()) return;
    const Window w = TestWindow();
    std::string om;
    AppendSweepJob("sweep-job", true, w, &om);
    AppendSweepJob("proxy-job", false, w, &om);
    AppendStarvedJob(w, &om);
    AppendHostileJob(w, &om);
    server_ = new PromServer();
    std::string error;
    if (!server_->Start(om, "", &error)) start_error_ = error;
    if (VmServer::SkipReason().empty()) {
      vm_ = new VmServer();
      if (!vm_->Start(om, &error)) vm_error_ = error;
    }
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete vm_;
    vm_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
    ASSERT_TRUE(start_error_.empty()) << start_error_;
  }
  static std::string Args(const std::string& job, double start, double end,
                          const std::string& url = "") {
    return fmt::format("scaling -f json --prometheus {} --job {} --start {:.0f} --end {:.0f}",
                       url.empty() ? server_->url() : url, job, start, end);
  }
  static inline std::string skip_, start_error_, vm_error_;
  static inline PromServer* server_ = nullptr;
  static inline VmServer* vm_ = nullptr;
};

rapidjson::Document Parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  return d;
}

TEST_F(ScalingProm, ThreePeriodsFromTheAgentsStepCountersAndPs0StopsTheJobAtEightWorkers) {
  const Window w = TestWindow();
  RunResult r = RunTfdiag(Args("sweep-job", w.start, w.end));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("kube_pod_status_phase Running of kube_pod_info"), std::string::npos)
      << r.err;
  rapidjson::Document d = Parse(r.out);
  ASSERT_TRUE(d.IsObject()) << r.out;
  const auto& runs = d["runs"];
  ASSERT_EQ(runs.Size(), 3u) << r.out;
  const int want_workers[] = {2, 4, 8};
  for (rapidjson::SizeType i = 0; i < 3; ++i) {
    const int n = want_workers[i];
    EXPECT_EQ(runs[i]["workers"].GetInt(), n);
    EXPECT_EQ(runs[i]["ps"].GetInt(), 2);
    EXPECT_FALSE(runs[i]["throughput_proxy"].GetBool());
    EXPECT_EQ(
        std::string(runs[i]["throughput_source"].GetString()).rfind("tfdiag_task_steps_total", 0),
        0u);
    EXPECT_NEAR(runs[i]["throughput_steps_per_s"].GetDouble(), n * WorkerRate(n),
                0.03 * n * WorkerRate(n));
    EXPECT_NEAR(runs[i]["step_median_ns"].GetDouble(), 1e9 / WorkerRate(n), 0.03e9 / WorkerRate(n));
    EXPECT_NEAR(runs[i]["ps_busy_pct"]["ps:0"].GetDouble(), 50 * Ps0Cpu(n), 2);
    EXPECT_NEAR(runs[i]["ps_busy_pct"]["ps:1"].GetDouble(), 10, 1);
    std::printf("[ measured ] %s: %.1f steps/s, ps:0 %.0f%%, efficiency %.2f\n",
                runs[i]["name"].GetString(), runs[i]["throughput_steps_per_s"].GetDouble(),
                runs[i]["ps_busy_pct"]["ps:0"].GetDouble(), runs[i]["efficiency"].GetDouble());
  }
  // 2 -> 4 scales (95%); 4 -> 8 does not (59%), and ps:0 at 97% of its limit is why.
  ASSERT_EQ(d["findings"].Size(), 1u) << r.out;
  const auto& f = d["findings"][0];
  EXPECT_EQ(std::string(f["rule"].GetString()), "scaling-limit");
  EXPECT_EQ(std::string(f["subject"].GetString()), "ps:0");
  EXPECT_EQ(std::string(f["cause"].GetString()), "a PS saturated");
  EXPECT_NE(std::string(f["summary"].GetString()).find("4 -> 8 workers"), std::string::npos)
      << f["summary"].GetString();
}

// Issue 36: VictoriaMetrics holding the same series gives the same runs (worker counts,
// throughput within 3%, ps:0's busy share within 2 points) and the same findings.
TEST_F(ScalingProm, VictoriaMetricsGivesTheSameVerdictsAsPrometheus) {
  if (vm_ == nullptr) GTEST_SKIP() << VmServer::SkipReason();
  ASSERT_TRUE(vm_error_.empty()) << vm_error_;
  const Window w = TestWindow();
  for (const std::string& job : {std::string("sweep-job"), std::string(kStarvedJob)}) {
    RunResult p = RunTfdiag(Args(job, w.start, w.end));
    RunResult v = RunTfdiag(Args(job, w.start, w.end, vm_->url()));
    ASSERT_EQ(p.exit_code, 0) << job << ": " << p.err;
    ASSERT_EQ(v.exit_code, 0) << job << ": " << v.err;
    rapidjson::Document a = Parse(p.out), b = Parse(v.out);
    ASSERT_TRUE(a.IsObject() && b.IsObject()) << v.out;
    ASSERT_EQ(a["runs"].Size(), b["runs"].Size()) << job << "\n" << p.out << "\n" << v.out;
    for (rapidjson::SizeType i = 0; i < a["runs"].Size(); ++i) {
      const auto &x = a["runs"][i], &y = b["runs"][i];
      EXPECT_EQ(x["workers"].GetInt(), y["workers"].GetInt()) << job;
      const double tx = x["throughput_steps_per_s"].GetDouble();
      EXPECT_NEAR(y["throughput_steps_per_s"].GetDouble(), tx, 0.03 * tx) << job << " run " << i;
      if (x["ps_busy_pct"].HasMember("ps:0") && x["ps_busy_pct"]["ps:0"].IsNumber()) {
        EXPECT_NEAR(y["ps_busy_pct"]["ps:0"].GetDouble(), x["ps_busy_pct"]["ps:0"].GetDouble(), 2)
            << job << " run " << i;
      }
    }
    auto verdicts = [](const rapidjson::Document& d) {
      std::vector<std::string> out;
      for (const auto& f : d["findings"].GetArray()) {
        out.push_back(std::string(f["subject"].GetString()) + " / " + f["cause"].GetString());
      }
      return out;
    };
    EXPECT_EQ(verdicts(a), verdicts(b)) << job;
  }
}

TEST_F(ScalingProm, WithoutStepCountersThroughputIsTheNamedBytesProxy) {
  const Window w = TestWindow();
  RunResult r = RunTfdiag(Args("proxy-job", w.start, w.end));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  rapidjson::Document d = Parse(r.out);
  ASSERT_TRUE(d.IsObject()) << r.out;
  ASSERT_EQ(d["runs"].Size(), 3u);
  for (const auto& run : d["runs"].GetArray()) {
    EXPECT_TRUE(run["throughput_proxy"].GetBool());
    const std::string src = run["throughput_source"].GetString();
    EXPECT_NE(src.find("container_network_transmit_bytes_total"), std::string::npos) << src;
    EXPECT_NE(src.find("proxy: bytes per step assumed constant across runs"), std::string::npos);
    const int n = run["workers"].GetInt();
    // A bytes proxy has its own key: it is no steps/s.
    EXPECT_EQ(run["throughput_steps_per_s"].GetDouble(), -1);  // unknown
    EXPECT_NEAR(run["worker_bytes_per_s"].GetDouble(), n * WorkerRate(n) * 1.5e6,
                0.03 * n * WorkerRate(n) * 1.5e6);
  }
  ASSERT_EQ(d["findings"].Size(), 1u) << r.out;
  EXPECT_EQ(std::string(d["findings"][0]["subject"].GetString()), "ps:0");
  // The text says which proxy it used.
  RunResult text =
      RunTfdiag(fmt::format("scaling --prometheus {} --job proxy-job --start {:.0f} --end {:.0f}",
                            server_->url(), w.start, w.end));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("proxy: bytes per step assumed constant"), std::string::npos) << text.out;
}

// Issue 30 item 3: on a CPU-starved node scaling reads what the agents measured per period
// (CPU, runnable threads, run-queue wait and p99, context switches) and names the wait for a
// CPU, not "nothing measured saturated"; the PS column is the PS the JSON lists; PS busy shows
// the PS's CPU when no limit gives a share.
TEST_F(ScalingProm, StarvedWorkersAreJudgedOnTheAgentsCpuFigures) {
  const Window w = TestWindow();
  RunResult r = RunTfdiag(Args(kStarvedJob, w.start, w.end));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("tfdiag_task_up{tf_job=\"ip-0badcafe\"}"), std::string::npos) << r.err;
  rapidjson::Document d = Parse(r.out);
  ASSERT_TRUE(d.IsObject()) << r.out;
  const auto& runs = d["runs"];
  ASSERT_EQ(runs.Size(), 2u) << r.out;
  for (rapidjson::SizeType i = 0; i < 2; ++i) {
    const auto& run = runs[i];
    const int n = run["workers"].GetInt();
    ASSERT_EQ(n, i == 0 ? 2 : 4) << r.out;
    EXPECT_NEAR(run["throughput_steps_per_s"].GetDouble(), n == 4 ? 10 : 9, 0.3);
    // Two PS: the count and the list agree.
    EXPECT_EQ(run["ps"].GetInt(), 2);
    ASSERT_EQ(run["ps"].GetInt(), static_cast<int>(run["ps_busy_pct"].MemberCount()));
    // No limit: the busy share is unknown, the CPU is known.
    EXPECT_EQ(run["ps_busy_pct"]["ps:0"].GetDouble(), -1);  // unknown
    ASSERT_TRUE(run["ps_tasks"].IsArray()) << r.out;
    ASSERT_EQ(run["ps_tasks"].Size(), 2u) << r.out;
    EXPECT_NEAR(run["ps_tasks"][0]["cpu_cores"].GetDouble(), 0.6, 0.03);
    EXPECT_NEAR(run["ps_tasks"][1]["cpu_cores"].GetDouble(), 0.02, 0.005);
    const auto& wc = run["worker_cpu"];
    EXPECT_EQ(wc["tasks"].GetInt(), n);
    EXPECT_NEAR(wc["cpu_cores"].GetDouble(), n == 4 ? 0.25 : 0.45, 0.02);
    EXPECT_EQ(wc["cpu_limit"].GetDouble(), -1);  // unknown
    EXPECT_NEAR(wc["runnable"].GetDouble(), n == 4 ? 1.0 : 0.8, 0.05);
    EXPECT_NEAR(wc["runq_wait_pct"].GetDouble(), n == 4 ? 100 * 0.7 / 0.95 : 100 * 0.45 / 0.9, 2);
    const double p99 = wc["runq_p99_ns"].GetDouble();
    if (n == 4) {
      EXPECT_GT(p99, 8.3e6);
      EXPECT_LT(p99, 16.8e6);
    } else {
      EXPECT_GT(p99, 4.1e6);
      EXPECT_LT(p99, 8.4e6);
    }
    EXPECT_NEAR(wc["switches_per_s"].GetDouble(), n == 4 ? 250 : 110, 5);
    EXPECT_NEAR(wc["involuntary_per_s"].GetDouble(), n == 4 ? 150 : 60, 3);
    EXPECT_EQ(wc["throttled_pct"].GetDouble(), -1);  // unknown
    EXPECT_EQ(run["ps_cpu"]["tasks"].GetInt(), 2);
    // All tasks: (4 x 0.7 + 2 x 0.1) / (that + 4 x 0.25 + 0.62) = 65%; with 2 workers 42%.
    EXPECT_NEAR(run["runq_wait_pct"].GetDouble(), n == 4 ? 64.9 : 42.0, 1);
    std::printf(
        "[ measured ] %d workers: %.2f steps/s, workers %.2f CPUs, %.2f runnable, wait "
        "%.0f%%, p99 %.1f ms; run %.0f%%\n",
        n, run["throughput_steps_per_s"].GetDouble(), wc["cpu_cores"].GetDouble(),
        wc["runnable"].GetDouble(), wc["runq_wait_pct"].GetDouble(), p99 / 1e6,
        run["runq_wait_pct"].GetDouble());
  }
  ASSERT_EQ(d["findings"].Size(), 1u) << r.out;
  const auto& f = d["findings"][0];
  EXPECT_EQ(std::string(f["cause"].GetString()), "the tasks wait for a CPU") << r.out;
  const std::string summary = f["summary"].GetString();
  EXPECT_EQ(summary.find("nothing measured saturated"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("no CFS figures"), std::string::npos) << summary;
  EXPECT_NE(summary.find("1.0 runnable threads"), std::string::npos) << summary;
  // The text: PS column 2, PS busy as CPU, the agents' figures per run.
  RunResult text =
      RunTfdiag(fmt::format("scaling --prometheus {} --job {} --start {:.0f} --end {:.0f}",
                            server_->url(), kStarvedJob, w.start, w.end));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ps:0 0.60 CPUs, ps:1 0.02 CPUs"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("4 workers, workers (tfdiag agents): 0.25 CPUs per task (limit -), 1.0 "
                          "runnable threads, run-queue wait 74%"),
            std::string::npos)
      << text.out;
  if (std::getenv("TFDIAG_DEMO_DIR")) std::printf("%s\n", text.out.c_str());
  // Each run's row: "<n> workers <from>..<to>  <workers>  <PS>  ...": the PS column is 2.
  int rows = 0;
  for (const char* n : {"2", "4"}) {
    const size_t at = text.out.find(std::string("\n  ") + n + " workers 20");
    ASSERT_NE(at, std::string::npos) << text.out;
    std::istringstream line(text.out.substr(at + 1, text.out.find('\n', at + 1) - at - 1));
    std::string count, word, span, workers, ps;
    line >> count >> word >> span >> workers >> ps;
    EXPECT_EQ(workers, n) << text.out;
    EXPECT_EQ(ps, "2") << text.out;
    ++rows;
  }
  EXPECT_EQ(rows, 2);
}

TEST_F(ScalingProm, OneSteadyPeriodIsExit2NamingTheCountsSeen) {
  const Window w = TestWindow();
  // The first 9 minutes: only the 2-worker period.
  RunResult r = RunTfdiag(Args("sweep-job", w.start, w.start + 540));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("need two to compare"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 workers"), std::string::npos) << r.err;
  RunResult none = RunTfdiag(Args("no-such-job", w.start, w.end));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("tfdiag_task_up"), std::string::npos) << none.err;
  // It lists the jobs the agents report (tfdiag_task_up: the sweep jobs have none), the IP
  // job's ip-<hash> name included with its PS, on lines of their own; and (issue 36) the TFJobs
  // kube-state-metrics holds, with namespace and pod count.
  EXPECT_NE(none.err.find("\n    - ip-0badcafe (6 tasks; PS ps:0 on node-s, ps:1 on node-s)"),
            std::string::npos)
      << none.err;
  EXPECT_NE(none.err.find("\n    - sweep-job (TFJob, namespace training, 10 pods)"),
            std::string::npos)
      << none.err;
  EXPECT_EQ(none.err.find("\\x0a"), std::string::npos) << none.err;
}

// Absurd values are left out with a note (before: 1e298 steps/s printed as a 299-digit number,
// inf and -nan%); a 300-byte pod name is left out by its length, not put into every query.
TEST_F(ScalingProm, AbsurdValuesAndOverlongPodNamesAreLeftOutWithANote) {
  const Window w = TestWindow();
  RunResult r = RunTfdiag(Args("hostile-job", w.start, w.end));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("past 1e+15 or infinite left out"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a pod name of 300 bytes"), std::string::npos) << r.err;
  rapidjson::Document d = Parse(r.out);
  ASSERT_TRUE(d.IsObject()) << r.out;
  const auto& runs = d["runs"];
  ASSERT_EQ(runs.Size(), 3u) << r.out;
  for (const auto& run : runs.GetArray()) {
    const double tput = run["throughput_steps_per_s"].GetDouble();
    EXPECT_TRUE(std::isfinite(tput) && tput < 1000) << run["name"].GetString() << ": " << tput;
  }
  RunResult text = RunTfdiag(Args("hostile-job", w.start, w.end).replace(0, 16, "scaling "));
  EXPECT_EQ(text.out.find("0000000000000000000000"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(" inf"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("nan%"), std::string::npos) << text.out;
}

// The scaling document of a job read from Prometheus validates against the published schema
// (docs/schemas/tfdiag.scaling-1.schema.json): the agents' step counters (sweep-job) and a job
// whose throughput is only a traffic proxy (proxy-job: steps/s -1, the proxy in
// worker_bytes_per_s), as the timeline sweeps do in OutputSchemas.ScalingJsonValidates.
TEST_F(ScalingProm, JsonOfEachJobValidatesAgainstThePublishedSchema) {
  const std::string skip = SkipWithoutValidator();
  if (!skip.empty()) GTEST_SKIP() << skip;
  const Window w = TestWindow();
  TempDir dir;
  std::vector<std::string> docs;
  for (const char* job : {"sweep-job", "proxy-job"}) {
    const std::string out = dir.File(std::string(job) + ".json");
    RunResult r = RunTfdiag(Args(job, w.start, w.end) + " -o '" + out + "'");
    ASSERT_EQ(r.exit_code, 0) << job << "\n" << r.err;
    docs.push_back(out);
  }
  EXPECT_EQ(
      Validate(std::string(TFDIAG_SOURCE_DIR) + "/docs/schemas/tfdiag.scaling-1.schema.json", docs),
      "");
  rapidjson::Document d = Parse(ReadFile(docs[1]));
  ASSERT_TRUE(d.IsObject());
  for (const auto& run : d["runs"].GetArray()) {
    EXPECT_EQ(run["throughput_steps_per_s"].GetDouble(), -1) << "a proxy has no steps/s";
    EXPECT_GT(run["worker_bytes_per_s"].GetDouble(), 0);
  }
}

}  // namespace
}  // namespace tfdiag::test
