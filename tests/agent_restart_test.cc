// The node agent as clusters use it (issue 30 items 1 and 2): a job's tasks that end and start
// again under the same labels (a container restart, a job resubmitted under its name) are one
// series each, scraped by a real Prometheus; jobs with IP addresses in TF_CONFIG (bare metal)
// get a name of their own, so two of them on one node do not collide.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "collectors/discovery/discovery.h"
#include "collectors/prometheus/prom_client.h"
#include "tests/bpf_job.h"
#include "tests/cluster_metrics.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

// One exposition's series: "name{labels}" -> value (the last of duplicates); *duplicates counts
// series that appeared more than once.
std::map<std::string, double> Series(const std::string& page, size_t* duplicates) {
  std::map<std::string, double> out;
  size_t at = page.find("\r\n\r\n");
  at = at == std::string::npos ? 0 : at + 4;
  while (at < page.size()) {
    size_t end = page.find('\n', at);
    if (end == std::string::npos) end = page.size();
    const std::string line = page.substr(at, end - at);
    at = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space);
    if (out.count(key) && duplicates != nullptr) ++*duplicates;
    out[key] = std::atof(line.c_str() + space + 1);
  }
  return out;
}

// Starts `tfdiag attach --serve` as an agent on a free port; returns its pid (port in *port).
pid_t StartAgent(const TempDir& tmp, const std::vector<std::string>& extra, int* port) {
  *port = FreePorts(1)[0];
  std::vector<std::string> args = {
      "attach", "--no-bpf",    "--interval", "500ms",   "--rescan",
      "500ms",  "--node-name", "node-r",     "--serve", "127.0.0.1:" + std::to_string(*port)};
  args.insert(args.end(), extra.begin(), extra.end());
  return SpawnProcess(TFDIAG_BINARY, args, "PATH=/usr/bin:/bin", tmp.File("agent.err"));
}

// Polls the agent's /metrics until `done(series)` or `seconds` pass.
template <typename F>
bool WaitMetrics(int port, double seconds, F done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (done(Series(HttpGet(port, "/metrics"), nullptr))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

int64_t SummarySteps(const std::string& path) {
  rapidjson::Document d;
  d.Parse(ReadFile(path).c_str());
  return d.IsObject() && d.HasMember("steps") ? d["steps"].GetInt64() : -1;
}

void StopAgent(pid_t agent) {
  kill(agent, SIGTERM);
  for (int i = 0; i < 100 && waitpid(agent, nullptr, WNOHANG) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(agent, SIGKILL);
  waitpid(agent, nullptr, WNOHANG);
}

// Item 1: two runs of one psload job (2 PS, 2 workers, the same TF_CONFIG) watched by one agent
// and scraped every second by a real Prometheus. Every scrape holds each label set once; once
// the second run has ended its workers' series show the second run's steps (not the first run's
// frozen counters); Prometheus stored every sample (no duplicate or out-of-order drops) and the
// steps it reads over both runs, counter reset included, are what psload's summaries say.
TEST(AgentRestart, ATaskThatComesBackReplacesItsSeries) {
  const std::string skip = PromServer::SkipReason();
  if (!skip.empty()) GTEST_SKIP() << skip;
  TempDir tmp;
  int port = 0;
  const pid_t agent = StartAgent(tmp, {}, &port);
  ASSERT_GT(agent, 0);
  PromServer prom;
  std::string error;
  std::unique_ptr<PromClient> client = StartAgentScrape(&prom, port, &error);
  ASSERT_NE(client, nullptr) << error;
  const std::vector<int> ports = FreePorts(4);
  const std::string cluster = fmt::format(
      R"({{"cluster":{{"ps":["127.0.0.1:{}","127.0.0.1:{}"],"worker":["127.0.0.1:{}","127.0.0.1:{}"]}},)",
      ports[0], ports[1], ports[2], ports[3]);
  const std::string tf_job =
      UnnamedJobName(ParseTfConfig(cluster + R"("task":{"type":"ps","index":0}})")->cluster);
  auto up = [&](const std::string& type, int i) {
    return fmt::format(
        "tfdiag_task_up{{namespace=\"\",node=\"node-r\",pod=\"\",replica_index=\"{}\","
        "replica_type=\"{}\",tf_job=\"{}\"}}",
        i, type, tf_job);
  };
  // A poller checks every exposition for duplicate label sets while the runs go on.
  std::atomic<bool> polling{true};
  std::atomic<size_t> duplicates{0}, pages{0};
  std::thread poller([&] {
    while (polling) {
      size_t d = 0;
      const std::string page = HttpGet(port, "/metrics");
      if (page.find("200 OK") != std::string::npos) {
        Series(page, &d);
        duplicates += d;
        ++pages;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
  const std::string steps_key = fmt::format(
      "tfdiag_task_steps_total{{namespace=\"\",node=\"node-r\",pod=\"\",replica_index=\"0\","
      "replica_type=\"worker\",tf_job=\"{}\"}}",
      tf_job);
  std::vector<int64_t> steps;  // worker 0's steps per run, by psload
  std::vector<double> seen;    // and as the agent last saw them (before the exit)
  const double durations[] = {3, 6};
  for (int run = 0; run < 2; ++run) {
    std::vector<pid_t> workers, servers;
    for (int i = 0; i < 2; ++i) {
      workers.push_back(SpawnProcess(
          PSLOAD_BINARY,
          {fmt::format("--duration={}", durations[run]),
           fmt::format("--step-file={}", tmp.File(fmt::format("w{}-{}.tfdiag-steps", i, run))),
           "--summary=" + tmp.File(fmt::format("w{}-{}.json", i, run))},
          "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"worker","index":{}}}}})", i),
          tmp.File(fmt::format("w{}-{}.log", i, run))));
    }
    // The agent sees both workers (waiting for their PS, at step 0) before any step, and
    // Prometheus scrapes that.
    ASSERT_TRUE(WaitMetrics(port, 20,
                            [&](const std::map<std::string, double>& s) {
                              return s.count(up("worker", 0)) && s.at(up("worker", 0)) == 1 &&
                                     s.count(up("worker", 1)) && s.at(up("worker", 1)) == 1;
                            }))
        << "run " << run << ": " << HttpGet(port, "/metrics") << ReadFile(tmp.File("agent.err"));
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    for (int i = 0; i < 2; ++i) {
      servers.push_back(SpawnProcess(
          PSLOAD_BINARY, {"--summary=" + tmp.File(fmt::format("ps{}-{}.json", i, run))},
          "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"ps","index":{}}}}})", i),
          tmp.File(fmt::format("ps{}-{}.log", i, run))));
    }
    for (pid_t p : workers) waitpid(p, nullptr, 0);
    for (pid_t p : servers) kill(p, SIGTERM);
    for (pid_t p : servers) waitpid(p, nullptr, 0);
    steps.push_back(SummarySteps(tmp.File(fmt::format("w0-{}.json", run))));
    ASSERT_GT(steps.back(), 0) << ReadFile(tmp.File(fmt::format("w0-{}.log", run)));
    // Worker 0 is seen to have exited; its last figures stay.
    ASSERT_TRUE(WaitMetrics(port, 20, [&](const std::map<std::string, double>& s) {
      if (!s.count(up("worker", 0)) || s.at(up("worker", 0)) != 0) return false;
      seen.push_back(s.count(steps_key) ? s.at(steps_key) : -1);
      return true;
    }));
    // The agent samples every 0.5 s: it misses at most the steps of the last 0.5 s (1 s here).
    EXPECT_NEAR(seen.back(), double(steps.back()), steps.back() / durations[run] + 5)
        << "run " << run;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(4000));  // scrapes after the second run
  polling = false;
  poller.join();
  const std::map<std::string, double> last = Series(HttpGet(port, "/metrics"), nullptr);
  StopAgent(agent);
  EXPECT_GT(pages.load(), 20u);
  EXPECT_EQ(duplicates.load(), 0u) << "label sets shown twice in " << pages << " scrapes";
  // After the second run, the series carries its steps, not the first run's.
  ASSERT_TRUE(last.count(steps_key)) << steps_key;
  EXPECT_EQ(last.at(steps_key), seen[1])
      << "runs: " << seen[0] << " then " << seen[1] << " steps seen by the agent";
  // What Prometheus stored: one series, every sample kept, and the steps of both runs.
  const std::string prom_port = prom.url().substr(prom.url().rfind(':') + 1);
  const std::map<std::string, double> self =
      Series(HttpGet(std::stoi(prom_port), "/metrics"), nullptr);
  for (const char* drop : {"prometheus_target_scrapes_sample_duplicate_timestamp_total",
                           "prometheus_target_scrapes_sample_out_of_order_total"}) {
    ASSERT_TRUE(self.count(drop)) << drop;
    EXPECT_EQ(self.at(drop), 0) << drop;
  }
  auto raw = client->Query(
      fmt::format("tfdiag_task_steps_total{{replica_type=\"worker\",replica_index=\"0\","
                  "tf_job=\"{}\"}}[10m]",
                  tf_job),
      std::time(nullptr));
  ASSERT_TRUE(raw.ok()) << raw.status().message();
  ASSERT_EQ(raw->size(), 1u);
  double counted = 0, prev = 0;
  bool first = true;
  for (const auto& [t, v] : (*raw)[0].points) {
    if (!first) counted += v >= prev ? v - prev : v;  // a reset: the new process's count
    prev = v, first = false;
  }
  std::string points;
  for (const auto& [t, v] : (*raw)[0].points) points += fmt::format(" {:.0f}", v);
  std::printf(
      "[ measured ] worker 0: %lld + %lld steps by psload, %.0f + %.0f seen by the agent, %.0f "
      "read from Prometheus (resets counted)\n",
      (long long)steps[0], (long long)steps[1], seen[0], seen[1], counted);
  // Exactly the two runs' counts: one reset, no sample of another process in between.
  EXPECT_EQ(counted, seen[0] + seen[1]) << "samples:" << points;
}

// Item 2: jobs without a name. Two jobs with IP addresses in TF_CONFIG on one node get two
// tf_job values (the hash of each job's PS addresses); a process's TFDIAG_JOB names its job; a
// malformed one is ignored with a note that does not quote it; --tf-job names the rest.
TEST(AgentJobName, UnnamedJobsAreKeptApartAndNamedJobsKeepTheirName) {
  TempDir tmp;
  const std::vector<int> p = FreePorts(6);
  auto config = [&](int a, int b, const char* type) {
    return fmt::format(
        R"(TF_CONFIG={{"cluster":{{"ps":["127.0.0.1:{}"],"worker":["127.0.0.1:{}"]}},)"
        R"("task":{{"type":"{}","index":0}}}})",
        a, b, type);
  };
  struct Proc {
    std::vector<std::string> env;
    pid_t pid = -1;
    int fd = -1;
  };
  std::vector<Proc> procs = {
      {{"PATH=/bin", config(p[0], p[1], "ps")}},
      {{"PATH=/bin", config(p[0], p[1], "worker")}},
      {{"PATH=/bin", config(p[2], p[3], "ps")}},
      {{"PATH=/bin", config(p[2], p[3], "worker")}},
      {{"PATH=/bin", "TFDIAG_JOB=ctr-rec.v2", config(p[4], p[5], "ps")}},
      {{"PATH=/bin", "TFDIAG_JOB=bad\x1b]job", config(p[4], p[5], "worker")}},
  };
  for (Proc& pr : procs) {
    pr.pid = SpawnWaitingShell({}, pr.env, &pr.fd);
    ASSERT_GT(pr.pid, 0);
  }
  auto name = [](int a) {
    ClusterSpec c;
    c.jobs["ps"] = JobTasks{"127.0.0.1:" + std::to_string(a)};
    return UnnamedJobName(c);
  };
  const std::string a = name(p[0]), b = name(p[2]);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), 11u) << a;  // "ip-" + 8 hex digits
  // conflict N > 0: a second process claims the same labels, and each is marked (issue 46).
  auto key = [](const std::string& type, const std::string& job, int conflict = 0) {
    return fmt::format(
        "tfdiag_task_up{{namespace=\"\",node=\"node-r\",pod=\"\",replica_index=\"0\","
        "replica_type=\"{}\",tf_job=\"{}\"{}}}",
        type, job, conflict > 0 ? fmt::format(",conflict=\"{}\"", conflict) : "");
  };
  for (const std::string& given : {std::string(), std::string("given")}) {
    int port = 0;
    std::vector<std::string> extra;
    if (!given.empty()) extra = {"--tf-job", given};
    const pid_t agent = StartAgent(tmp, extra, &port);
    ASSERT_GT(agent, 0);
    const std::string ja = given.empty() ? a : given, jb = given.empty() ? b : given;
    // Under one --tf-job the two unnamed jobs' ps:0 (and worker:0) claim one label set: both
    // are kept, each marked conflict="1", "2" (neither owns the plain labels).
    const int ca = given.empty() ? 0 : 1, cb = given.empty() ? 0 : 2;
    std::map<std::string, double> s;
    const bool seen = WaitMetrics(port, 20, [&](const std::map<std::string, double>& m) {
      s = m;
      return m.count(key("ps", "ctr-rec.v2")) && m.count(key("worker", ja, ca)) &&
             m.count(key("ps", ja, ca)) && m.count(key("ps", jb, cb));
    });
    StopAgent(agent);
    ASSERT_TRUE(seen) << HttpGet(port, "/metrics") << ReadFile(tmp.File("agent.err"));
    // Each job's own tasks, and the named one under its name.
    EXPECT_TRUE(s.count(key("ps", ja, ca)) && s.count(key("worker", ja, ca)));
    EXPECT_TRUE(s.count(key("ps", jb, cb)) && s.count(key("worker", jb, cb)));
    if (!given.empty()) {
      EXPECT_FALSE(s.count(key("ps", given))) << "no claimant owns the labels";
    }
    EXPECT_TRUE(s.count(key("ps", "ctr-rec.v2")));
    // The malformed TFDIAG_JOB: that worker falls back to --tf-job or its PS addresses' hash.
    // (Under --tf-job the third worker:0 of "given", marked conflict="3".)
    EXPECT_TRUE(s.count(key("worker", given.empty() ? name(p[4]) : given, given.empty() ? 0 : 3)));
    size_t unnamed = 0;
    for (const auto& [k, v] : s) unnamed += k.find("tf_job=\"\"") != std::string::npos;
    EXPECT_EQ(unnamed, 0u);
    // Two unnamed jobs under one --tf-job collide (the user's choice); without it they do not.
    if (given.empty()) {
      EXPECT_EQ(s.count(key("worker", a)) + s.count(key("worker", b)), 2u);
    }
  }
  // Every shell holds the others' pipes too: close all, then wait.
  for (Proc& pr : procs) close(pr.fd);
  for (Proc& pr : procs) waitpid(pr.pid, nullptr, 0);
}

TEST(AgentJobName, UnnamedJobNamesAreStableAndTheFlagIsChecked) {
  ClusterSpec c;
  c.jobs["ps"] = JobTasks{"10.0.0.2:2222", "10.0.0.1:2222"};
  c.jobs["worker"] = JobTasks{"10.0.0.3:2222"};
  // FNV-1a 32 of "10.0.0.1:2222,10.0.0.2:2222" (sorted): the name must not change between
  // releases, or Prometheus would see a new job (checked with a Python FNV-1a).
  EXPECT_EQ(UnnamedJobName(c), "ip-6b068968");
  ClusterSpec reordered;
  reordered.jobs["ps"] = JobTasks{"10.0.0.1:2222", "10.0.0.2:2222"};
  EXPECT_EQ(UnnamedJobName(reordered), UnnamedJobName(c));
  ClusterSpec no_ps;
  no_ps.jobs["worker"] = JobTasks{"10.0.0.3:2222"};
  EXPECT_NE(UnnamedJobName(no_ps), "");
  EXPECT_EQ(UnnamedJobName(ClusterSpec{}), "");
  EXPECT_TRUE(IsJobName("ctr-rec.v2_1"));
  EXPECT_FALSE(IsJobName("-x"));
  EXPECT_FALSE(IsJobName("a b"));
  EXPECT_FALSE(IsJobName(std::string(64, 'a')));
  RunResult r = RunTfdiag("attach --no-bpf --duration 1s --serve 127.0.0.1:0 --tf-job 'a\"b'");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--tf-job"), std::string::npos) << r.err;
  EXPECT_EQ(FlagValue({"python", "--tf_job", "j1"}, "tf_job"), "j1");
  EXPECT_EQ(FlagValue({"python", "-tf_job=j2"}, "tf_job"), "j2");
  EXPECT_EQ(FlagValue({"python", "--tf_jobs=x"}, "tf_job"), "");
}

}  // namespace
}  // namespace tfdiag::test
