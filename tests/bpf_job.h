// A psload hot-shard job (2 PS, N workers, an hdfs input server) recorded by `tfdiag attach`
// from before the first byte to after the last, for the eBPF and /metrics tests: the workers
// start first and wait for their servers, attach follows the workers (the sockets' owners),
// then the servers start. So the probes see every byte the workloads count in their summaries.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/ledger.h"
#include "tests/test_util.h"

namespace tfdiag::test {

// Runs `bin` with `args` and exactly the environment `env` ("NAME=value" entries), its stdout
// and stderr to `log`. Returns the child's pid (-1 when fork fails).
inline pid_t SpawnProcess(const std::string& bin, const std::vector<std::string>& args,
                          const std::vector<std::string>& env, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<std::string> argv = {bin};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<std::string> e = env;
    std::vector<char*> envp;
    for (std::string& v : e) envp.push_back(v.data());
    envp.push_back(nullptr);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 2), dup2(fd, 1);
    execve(bin.c_str(), cargv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

// The same with one environment entry (none when `env` is empty).
inline pid_t SpawnProcess(const std::string& bin, const std::vector<std::string>& args,
                          const std::string& env, const std::string& log) {
  return SpawnProcess(bin, args, env.empty() ? std::vector<std::string>{} : std::vector{env}, log);
}

struct HotJob {
  int workers = 2;
  double worker_s = 4;     // worker run time, s
  double hdfs_mbps = 160;  // per-connection cap of the hdfs server, megabits/s; 0 none
  std::vector<std::string> worker_args;  // extra psload args for the workers
  std::vector<std::string> attach_args;  // extra args for tfdiag attach
  // Run every process through this command (e.g. setpriv to drop root); the test's TempDir
  // must then be writable by that user.
  std::vector<std::string> run_as;
  std::string bundle, attach_log;
  pid_t attach = -1;
  std::vector<pid_t> worker_pids, server_pids;
  std::vector<int> ports;  // ps0, ps1, workers..., hdfs

  // Starts everything; returns false (with a reason) when attach did not come up.
  bool Start(const TempDir& dir, std::string* why) {
    ports = FreePorts(3 + workers);
    std::string ps_json = fmt::format(R"(["127.0.0.1:{}","127.0.0.1:{}"])", ports[0], ports[1]);
    std::string w_json = "[";
    for (int i = 0; i < workers; ++i) {
      w_json += fmt::format(R"({}"127.0.0.1:{}")", i ? "," : "", ports[2 + i]);
    }
    w_json += "]";
    const std::string cluster =
        fmt::format(R"({{"cluster":{{"ps":{},"worker":{}}},)", ps_json, w_json);
    const int hdfs_port = ports[2 + workers];
    for (int i = 0; i < workers; ++i) {
      std::vector<std::string> args = {"--placement=hot", fmt::format("--duration={}", worker_s),
                                       fmt::format("--hdfs=127.0.0.1:{}", hdfs_port),
                                       "--summary=" + Summary(dir, i)};
      args.insert(args.end(), worker_args.begin(), worker_args.end());
      worker_pids.push_back(Spawn(
          PSLOAD_BINARY, args,
          "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"worker","index":{}}}}})", i),
          dir.File(fmt::format("worker-{}.log", i))));
    }
    bundle = dir.File("run.tfdiag.json");
    attach_log = dir.File("attach.log");
    std::vector<std::string> args = {
        "attach", "--interval", "500ms", "-o", bundle, "--hdfs-port", std::to_string(hdfs_port)};
    for (pid_t p : worker_pids) args.insert(args.end(), {"--pid", std::to_string(p)});
    args.insert(args.end(), attach_args.begin(), attach_args.end());
    usleep(300 * 1000);  // the workers exec and read TF_CONFIG
    attach = Spawn(TFDIAG_BINARY, args, "", attach_log);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ReadFile(attach_log).find("recording") == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || waitpid(attach, nullptr, WNOHANG) != 0) {
        *why = "attach did not start: " + ReadFile(attach_log);
        return false;
      }
      usleep(50 * 1000);
    }
    for (int i = 0; i < 2; ++i) {
      server_pids.push_back(Spawn(
          PSLOAD_BINARY, {"--placement=hot", "--summary=" + dir.File(fmt::format("ps-{}.json", i))},
          "TF_CONFIG=" + cluster + fmt::format(R"("task":{{"type":"ps","index":{}}}}})", i),
          dir.File(fmt::format("ps-{}.log", i))));
    }
    server_pids.push_back(Spawn(
        PSLOAD_BINARY,
        {fmt::format("--hdfs-rate-mbps={}", hdfs_mbps), "--summary=" + dir.File("hdfs-0.json")},
        fmt::format(R"(TF_CONFIG={{"cluster":{{"hdfs":["127.0.0.1:{}"]}},)"
                    R"("task":{{"type":"hdfs","index":0}}}})",
                    hdfs_port),
        dir.File("hdfs-0.log")));
    return true;
  }
  pid_t Spawn(const std::string& bin, const std::vector<std::string>& args, const std::string& env,
              const std::string& log) const {
    if (run_as.empty()) return SpawnProcess(bin, args, env, log);
    std::vector<std::string> all(run_as.begin() + 1, run_as.end());
    all.push_back(bin);
    all.insert(all.end(), args.begin(), args.end());
    return SpawnProcess(run_as[0], all, env, log);
  }
  static std::string Summary(const TempDir& dir, int i) {
    return dir.File(fmt::format("worker-{}.json", i));
  }
  // Waits for the workers, then stops the servers (SIGTERM: they write their summaries).
  void WaitWorkers() {
    for (pid_t p : worker_pids) waitpid(p, nullptr, 0);
    for (pid_t p : server_pids) kill(p, SIGTERM);
    for (pid_t p : server_pids) waitpid(p, nullptr, 0);
  }
  // Waits for attach (SIGINT first when `stop`); returns its exit code.
  int WaitAttach(bool stop) {
    if (attach <= 0) return -1;
    if (stop) kill(attach, SIGINT);
    int st = 0;
    waitpid(attach, &st, 0);
    attach = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  }
  ~HotJob() {
    for (pid_t p : worker_pids) kill(p, SIGKILL), waitpid(p, nullptr, WNOHANG);
    for (pid_t p : server_pids) kill(p, SIGKILL), waitpid(p, nullptr, WNOHANG);
    if (attach > 0) kill(attach, SIGKILL), waitpid(attach, nullptr, 0);
  }
};

// Why the eBPF tests cannot run here, or "" when they can.
inline std::string BpfSkipReason() {
  if (geteuid() != 0) return "needs root to load eBPF probes";
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    return "no kernel BTF at /sys/kernel/btf/vmlinux";
  return "";
}

// Tests that load the eBPF probes: skipped, with the reason, where they cannot.
class BpfLive : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why = BpfSkipReason();
    if (!why.empty()) GTEST_SKIP() << why;
  }
};

inline rapidjson::Document Json(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  return d;
}

// Totals from a bundle's traffic rows (the last row of each socket).
// Runs `job` to its end and returns its bundle (an empty document on failure, with a test
// failure saying why).
inline rapidjson::Document RecordHotJob(const TempDir& dir, HotJob* job) {
  std::string why;
  rapidjson::Document b;
  if (!job->Start(dir, &why)) {
    ADD_FAILURE() << why;
    return b;
  }
  job->WaitWorkers();
  const int code = job->WaitAttach(false);
  EXPECT_EQ(code, 0) << ReadFile(job->attach_log);
  if (code == 0) b = Json(ReadFile(job->bundle));
  return b;
}

struct Totals {
  std::map<std::string, std::map<std::string, std::pair<int64_t, int64_t>>> by_peer_task;
  std::map<std::string, int64_t> hdfs;  // task -> bytes received from HDFS
};

inline Totals TrafficTotals(const rapidjson::Document& b) {
  Totals t;
  std::map<std::tuple<int64_t, std::string, std::string>, const rapidjson::Value*> last;
  for (const auto& row : b["traffic"].GetArray()) {
    last[{row[1].GetInt64(), row[2].GetString(), row[3].GetString()}] = &row;
  }
  for (const auto& [key, row] : last) {
    const std::string task = b["processes"][std::get<0>(key)]["task"].GetString();
    auto& cell = t.by_peer_task[task][(*row)[4].GetString()];
    cell.first += (*row)[6].GetInt64();
    cell.second += (*row)[7].GetInt64();
    if ((*row)[5].GetInt64() != 0) t.hdfs[task] += (*row)[7].GetInt64();
  }
  return t;
}

// Switches of every process in bundle `b`: eBPF (sched rows) against /proc (process samples),
// between the first and last sample both have, within 10% (or 20 switches).
inline void ExpectSwitchesMatchProc(const rapidjson::Document& b) {
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> proc, bpf;
  for (const auto& r : b["process_samples"].GetArray()) {
    proc[{r[1].GetInt64(), r[0].GetInt64()}] = {r[5].GetInt64(), r[6].GetInt64()};
  }
  for (const auto& r : b["sched"].GetArray()) {
    bpf[{r[1].GetInt64(), r[0].GetInt64()}] = {r[2].GetInt64(), r[3].GetInt64()};
  }
  for (int64_t p = 0; p < static_cast<int64_t>(b["processes"].Size()); ++p) {
    std::vector<int64_t> common;
    for (const auto& [key, v] : proc) {
      if (key.first == p && bpf.count(key)) common.push_back(key.second);
    }
    ASSERT_GE(common.size(), 3u) << "process " << p;
    auto d = [&](auto& m, bool vol) {
      auto x = m[{p, common.front()}], y = m[{p, common.back()}];
      return vol ? y.first - x.first : y.second - x.second;
    };
    for (bool vol : {true, false}) {
      const int64_t want = d(proc, vol), got = d(bpf, vol);
      EXPECT_NEAR(got, want, std::max<double>(0.10 * want, 20))
          << "process " << p << (vol ? " voluntary" : " involuntary");
      std::printf("[ measured ] process %lld %s switches: %lld eBPF vs %lld /proc\n", (long long)p,
                  vol ? "voluntary" : "involuntary", (long long)got, (long long)want);
    }
  }
}

}  // namespace tfdiag::test
