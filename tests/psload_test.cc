// Live tests of samples/psload: real PS, worker and hdfs processes on 127.0.0.1, checked through
// their JSON summaries. Byte counts must agree exactly between the two ends of every socket,
// because tfdiag's eBPF tests compare their own measurements to these summaries.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

using Env = std::map<std::string, std::string>;

// A psload child process; stderr goes to `<dir>/<label>.err`.
struct Proc {
  pid_t pid = -1;
  std::string label, summary, err_path;
};

Proc Spawn(const TempDir& dir, const std::string& label, const std::vector<std::string>& args,
           const Env& env = {}) {
  Proc p;
  p.label = label;
  p.summary = dir.File(label + ".json");
  p.err_path = dir.File(label + ".err");
  std::vector<std::string> argv = {PSLOAD_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--summary=" + p.summary);
  p.pid = fork();
  if (p.pid == 0) {
    unsetenv("TF_CONFIG");
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    if (!freopen(p.err_path.c_str(), "w", stderr)) _exit(127);
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return p;
}

// Waits up to `timeout_s` for the child; kills it (and fails) past that. Returns the exit code.
int Wait(const Proc& p, double timeout_s = 10) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (waitpid(p.pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
      ADD_FAILURE() << p.label << " did not exit within " << timeout_s << " s";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// SIGTERM, then the exit code.
int Stop(const Proc& p) {
  kill(p.pid, SIGTERM);
  return Wait(p, 5);
}

rapidjson::Document Summary(const Proc& p) {
  rapidjson::Document d;
  d.Parse(ReadFile(p.summary).c_str());
  EXPECT_FALSE(d.HasParseError()) << p.label
                                  << " summary is not JSON; stderr: " << ReadFile(p.err_path);
  EXPECT_TRUE(d.IsObject());
  return d;
}

std::string HostList(const std::vector<int>& ports) {
  std::string out;
  for (int port : ports) out += (out.empty() ? "" : ",") + ("127.0.0.1:" + std::to_string(port));
  return out;
}

std::string TfConfig(const std::vector<int>& ps, const std::vector<int>& workers,
                     const std::string& type, int index) {
  auto list = [](const std::vector<int>& ports) {
    std::string out;
    for (int port : ports)
      out += (out.empty() ? "\"" : ",\"") + ("127.0.0.1:" + std::to_string(port)) + "\"";
    return "[" + out + "]";
  };
  return "{\"cluster\":{\"ps\":" + list(ps) + ",\"worker\":" + list(workers) +
         "},\"task\":{\"type\":\"" + type + "\",\"index\":" + std::to_string(index) + "}}";
}

// A job of `num_ps` PS and `num_workers` workers; TF_CONFIG or TF1 flags for the roles.
struct Job {
  std::vector<Proc> ps, workers;
};

Job StartJob(const TempDir& dir, int num_ps, int num_workers, bool tf_config,
             const std::vector<std::string>& worker_args) {
  std::vector<int> ports = FreePorts(num_ps + num_workers);
  std::vector<int> ps_ports(ports.begin(), ports.begin() + num_ps);
  std::vector<int> worker_ports(ports.begin() + num_ps, ports.end());
  Job job;
  auto role = [&](const std::string& type, int i, std::vector<std::string> extra, Env* env) {
    (*env)["HOSTNAME"] = "psload-" + type + "-" + std::to_string(i);
    if (tf_config) {
      (*env)["TF_CONFIG"] = TfConfig(ps_ports, worker_ports, type, i);
    } else {
      extra.insert(extra.begin(), {"--job_name=" + type, "--task_index=" + std::to_string(i),
                                   "--ps_hosts=" + HostList(ps_ports),
                                   "--worker_hosts=" + HostList(worker_ports)});
    }
    return extra;
  };
  for (int i = 0; i < num_ps; ++i) {
    Env env;
    auto args = role("ps", i, {}, &env);
    job.ps.push_back(Spawn(dir, "ps" + std::to_string(i), args, env));
  }
  for (int i = 0; i < num_workers; ++i) {
    Env env;
    auto args = role("worker", i, worker_args, &env);
    job.workers.push_back(Spawn(dir, "worker" + std::to_string(i), args, env));
  }
  return job;
}

uint64_t U64(const rapidjson::Value& v, const char* key) { return v[key].GetUint64(); }

// Every worker->PS socket: bytes and frames agree exactly in both directions, and the PS knows
// the worker's task from its hello.
void ExpectSocketsAgree(const std::vector<rapidjson::Document>& workers,
                        const std::vector<rapidjson::Document>& servers) {
  std::map<std::string, const rapidjson::Value*> by_address;
  for (const auto& s : servers) by_address[s["address"].GetString()] = &s;
  for (const auto& w : workers) {
    for (const auto& peer : w["peers"].GetObject()) {
      const std::string remote = peer.name.GetString();
      ASSERT_TRUE(by_address.count(remote)) << "no server summary for " << remote;
      const rapidjson::Value& server = *by_address[remote];
      const std::string local = peer.value["local"].GetString();
      ASSERT_TRUE(server["peers"].HasMember(local.c_str())) << remote << " never saw " << local;
      const rapidjson::Value& back = server["peers"][local.c_str()];
      const char* task = w["task"]["name"].GetString();
      EXPECT_STREQ(back["task"].GetString(), task);
      EXPECT_EQ(U64(peer.value, "bytes_sent"), U64(back, "bytes_received"))
          << task << "->" << remote;
      EXPECT_EQ(U64(peer.value, "bytes_received"), U64(back, "bytes_sent"))
          << remote << "->" << task;
      EXPECT_EQ(U64(peer.value, "frames_sent"), U64(back, "frames_received"));
      EXPECT_EQ(U64(peer.value, "frames_received"), U64(back, "frames_sent"));
      EXPECT_EQ(U64(peer.value, "hdfs_bytes"), U64(back, "hdfs_bytes"));
    }
  }
}

// Runs the job to the workers' end, then SIGTERMs the PS; returns worker and PS summaries.
void Finish(Job& job, std::vector<rapidjson::Document>* workers,
            std::vector<rapidjson::Document>* ps) {
  for (const Proc& w : job.workers) EXPECT_EQ(Wait(w), 0) << ReadFile(w.err_path);
  for (const Proc& p : job.ps) EXPECT_EQ(Stop(p), 0) << ReadFile(p.err_path);
  for (const Proc& w : job.workers) workers->push_back(Summary(w));
  for (const Proc& p : job.ps) ps->push_back(Summary(p));
}

TEST(PsloadJob, HotPlacementSendsMostTrafficToPs0AndBothEndsCountTheSameBytes) {
  TempDir dir;
  Job job = StartJob(dir, 2, 4, /*tf_config=*/true, {"--placement=hot", "--duration=2"});
  std::vector<rapidjson::Document> workers, ps;
  Finish(job, &workers, &ps);
  if (HasFatalFailure() || HasFailure()) return;
  ExpectSocketsAgree(workers, ps);
  uint64_t rows_to_ps0 = 0;
  for (size_t i = 0; i < workers.size(); ++i) {
    const auto& w = workers[i];
    EXPECT_STREQ(w["role_source"].GetString(), "TF_CONFIG");
    EXPECT_EQ(w["task"]["index"].GetInt(), static_cast<int>(i));
    EXPECT_STREQ(w["hostname"].GetString(), ("psload-worker-" + std::to_string(i)).c_str());
    EXPECT_STREQ(w["exit_reason"].GetString(), "duration");
    EXPECT_GT(w["steps"].GetInt64(), 0);
    const auto& p0 = w["per_ps"]["ps:0"];
    const auto& p1 = w["per_ps"]["ps:1"];
    double to0 = U64(p0, "bytes_sent") + U64(p0, "bytes_received");
    double to1 = U64(p1, "bytes_sent") + U64(p1, "bytes_received");
    EXPECT_GT(to0 / (to0 + to1), 0.8) << "worker " << i;
    EXPECT_EQ(U64(p1, "rows_pulled"), 0u);
    rows_to_ps0 += U64(p0, "rows_pushed");
    EXPECT_EQ(w["threads"]["tf_inter_op"].GetInt(), 1);
    EXPECT_EQ(w["threads"]["tf_intra_op"].GetInt(), 1);
  }
  EXPECT_EQ(U64(ps[0], "rows_pushed"), rows_to_ps0);
  EXPECT_EQ(ps[0]["threads"]["tf_ps_rpc"].GetInt(), 2);
  EXPECT_STREQ(ps[0]["exit_reason"].GetString(), "signal");
}

TEST(PsloadJob, BalancedPlacementWithTf1FlagsSplitsTrafficEvenly) {
  TempDir dir;
  Job job = StartJob(dir, 2, 4, /*tf_config=*/false,
                     {"--placement=balanced", "--duration=1.5", "--worker-threads=2"});
  std::vector<rapidjson::Document> workers, ps;
  Finish(job, &workers, &ps);
  if (HasFailure()) return;
  ExpectSocketsAgree(workers, ps);
  double b0 = U64(ps[0], "bytes_received") + U64(ps[0], "bytes_sent");
  double b1 = U64(ps[1], "bytes_received") + U64(ps[1], "bytes_sent");
  EXPECT_LT(std::abs(b0 - b1) / std::max(b0, b1), 0.2) << b0 << " vs " << b1;
  for (const auto& w : workers) {
    EXPECT_STREQ(w["role_source"].GetString(), "flags");
    EXPECT_GT(w["steps"].GetInt64(), 0);
    EXPECT_EQ(w["threads"]["tf_intra_op"].GetInt(), 2);
  }
}

TEST(PsloadJob, HdfsBytesEqualStepsTimesInputAndWhatTheServerServed) {
  TempDir dir;
  const int steps = 20, input = 100000;  // not a multiple of the server's 64 KiB chunk
  const double mbps = 80;                // 10 MB/s per connection
  int hdfs_port = FreePorts(1)[0];
  const std::string hdfs_addr = "127.0.0.1:" + std::to_string(hdfs_port);
  Proc hdfs = Spawn(dir, "hdfs", {"--hdfs-rate-mbps=80"},
                    {{"TF_CONFIG", "{\"cluster\":{\"hdfs\":[\"" + hdfs_addr +
                                       "\"]},\"task\":{\"type\":\"hdfs\",\"index\":0}}"}});
  Job job = StartJob(dir, 1, 2, true,
                     {"--hdfs=" + hdfs_addr, "--steps=" + std::to_string(steps),
                      "--input-bytes-per-step=" + std::to_string(input), "--duration=30"});
  std::vector<rapidjson::Document> workers, ps;
  Finish(job, &workers, &ps);
  ASSERT_EQ(Stop(hdfs), 0) << ReadFile(hdfs.err_path);
  if (HasFailure()) return;
  rapidjson::Document served = Summary(hdfs);
  std::vector<rapidjson::Document> servers;
  servers.push_back(std::move(served));
  servers.push_back(std::move(ps[0]));
  ExpectSocketsAgree(workers, servers);
  uint64_t total = 0;
  for (const auto& w : workers) {
    EXPECT_STREQ(w["exit_reason"].GetString(), "steps");
    EXPECT_EQ(w["steps"].GetInt64(), steps);
    EXPECT_EQ(U64(w, "hdfs_bytes_read"), uint64_t{steps} * input);
    total += U64(w, "hdfs_bytes_read");
    // Paced: at most one 64 KiB burst ahead of the rate.
    double floor_s = (double{steps} * input - 65536) / (mbps * 1e6 / 8);
    EXPECT_GE(w["wall_time_s"].GetDouble(), floor_s * 0.95);
  }
  EXPECT_EQ(U64(servers[0], "hdfs_bytes_served"), total);
  EXPECT_STREQ(servers[0]["address"].GetString(), hdfs_addr.c_str());
}

// The worker's own step clock (summary "step_us"): one entry per step, each at least the
// compute it spins, and together no longer than the stepping time.
TEST(PsloadJob, StepTimesCoverEveryStepAndTheirSumIsTheWallTime) {
  TempDir dir;
  Job job = StartJob(dir, 1, 1, true, {"--steps=40", "--compute-us=2000", "--duration=30"});
  std::vector<rapidjson::Document> workers, ps;
  Finish(job, &workers, &ps);
  if (HasFailure()) return;
  const rapidjson::Value& steps = workers[0]["step_us"];
  ASSERT_TRUE(steps.IsArray());
  ASSERT_EQ(steps.Size(), 40u);
  double sum_us = 0;
  for (const auto& s : steps.GetArray()) {
    EXPECT_GE(s.GetInt64(), 2000);  // --compute-us of thread CPU time, at least as much wall
    sum_us += s.GetInt64();
  }
  EXPECT_LE(sum_us, workers[0]["wall_time_s"].GetDouble() * 1e6 + 1);
  EXPECT_GE(sum_us, workers[0]["wall_time_s"].GetDouble() * 1e6 * 0.99);
  EXPECT_EQ(ps[0]["step_us"].Size(), 0u);  // a PS has no steps
}

// --prefetch=1: a tf_data_iter thread reads the next batch while the step computes, so a step
// whose input (20 ms at the cap) and compute (20 ms) are equal takes about one of them, not
// both; the bytes read are the steps' plus at most the batches read ahead, and the server
// served exactly what the worker read. Four 64 KiB chunks a batch: the server's bucket lets the
// first chunk of a sequential read through at once (a 64 KiB burst), so 15 ms of it is paced.
// The compute is wall time without CPU (--compute-sleep-us, as on a device): with a CPU-bound
// compute a busy machine stretches both runs unevenly (CI saw 0.46 s against 0.56 s), and the
// overlap, not the CPU, is what this test is about.
TEST(PsloadJob, PrefetchOverlapsInputWithTheStep) {
  TempDir dir;
  const int steps = 15, input = 4 * 65536;
  const double mbps = input * 8 / 0.020 / 1e6;  // 20 ms a batch
  int hdfs_port = FreePorts(1)[0];
  const std::string hdfs_addr = "127.0.0.1:" + std::to_string(hdfs_port);
  Proc hdfs = Spawn(dir, "hdfs", {fmt::format("--hdfs-rate-mbps={}", mbps)},
                    {{"TF_CONFIG", "{\"cluster\":{\"hdfs\":[\"" + hdfs_addr +
                                       "\"]},\"task\":{\"type\":\"hdfs\",\"index\":0}}"}});
  auto run = [&](int prefetch, std::vector<rapidjson::Document>* workers) {
    std::vector<rapidjson::Document> ps;
    Job job = StartJob(
        dir, 1, 1, true,
        {"--hdfs=" + hdfs_addr, "--steps=" + std::to_string(steps),
         "--input-bytes-per-step=" + std::to_string(input), "--compute-us=0",
         "--compute-sleep-us=20000", "--duration=30", "--prefetch=" + std::to_string(prefetch)});
    Finish(job, workers, &ps);
  };
  std::vector<rapidjson::Document> plain, ahead;
  run(0, &plain);
  run(1, &ahead);
  ASSERT_EQ(Stop(hdfs), 0) << ReadFile(hdfs.err_path);
  if (HasFailure()) return;
  const rapidjson::Document served = Summary(hdfs);
  EXPECT_EQ(U64(served, "hdfs_bytes_served"),
            U64(plain[0], "hdfs_bytes_read") + U64(ahead[0], "hdfs_bytes_read"));
  EXPECT_EQ(U64(plain[0], "hdfs_bytes_read"), uint64_t{steps} * input);
  EXPECT_GE(U64(ahead[0], "hdfs_bytes_read"), uint64_t{steps} * input);
  EXPECT_LE(U64(ahead[0], "hdfs_bytes_read"), uint64_t{steps + 2} * input);
  EXPECT_EQ(ahead[0]["threads"]["tf_data_iter"].GetInt(), 1);
  EXPECT_FALSE(plain[0]["threads"].HasMember("tf_data_iter"));
  EXPECT_EQ(ahead[0]["config"]["prefetch"].GetInt(), 1);
  const double plain_s = plain[0]["wall_time_s"].GetDouble();
  const double ahead_s = ahead[0]["wall_time_s"].GetDouble();
  // Sequential: >= 35 ms a step; overlapped: about 20 ms (26 ms allows a busy machine).
  EXPECT_GE(plain_s, steps * 0.035 * 0.95);
  EXPECT_LT(ahead_s, plain_s * 0.75) << "prefetched " << ahead_s << " s, plain " << plain_s;
}

// --compute-sleep-us: each step's compute takes that much more wall time but no CPU here (a
// compute on a device or on the worker's own host): 20 steps of 5 ms take at least 100 ms, and
// the worker uses a fraction of that in CPU time.
TEST(PsloadJob, ComputeSleepTakesWallTimeWithoutCpu) {
  TempDir dir;
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  Job job = StartJob(dir, 1, 1, true,
                     {"--steps=20", "--compute-us=0", "--compute-sleep-us=5000", "--duration=30"});
  ASSERT_EQ(Wait(job.workers[0]), 0) << ReadFile(job.workers[0].err_path);
  getrusage(RUSAGE_CHILDREN, &after);  // the worker only: the PS is not reaped yet
  EXPECT_EQ(Stop(job.ps[0]), 0);
  const rapidjson::Document w = Summary(job.workers[0]);
  ASSERT_EQ(w["step_us"].Size(), 20u);
  for (const auto& s : w["step_us"].GetArray()) EXPECT_GE(s.GetInt64(), 5000);
  EXPECT_EQ(w["config"]["compute_sleep_us"].GetInt64(), 5000);
  auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  const double cpu_s = seconds(after.ru_utime) - seconds(before.ru_utime) +
                       seconds(after.ru_stime) - seconds(before.ru_stime);
  EXPECT_LT(cpu_s, 0.5 * w["wall_time_s"].GetDouble()) << "CPU " << cpu_s << " s";
}

// The tensor snapshots (`O` events) of a PS timeline written with --show-memory: name ->
// requested_bytes, parsed from the protobuf text of each tensor_description.
std::map<std::string, int64_t> SnapshotBytes(const std::string& path) {
  rapidjson::Document d;
  d.Parse(ReadFile(path).c_str());
  std::map<std::string, int64_t> out;
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("traceEvents")) {
    ADD_FAILURE() << path << " is not a Chrome trace";
    return out;
  }
  for (const auto& e : d["traceEvents"].GetArray()) {
    if (std::string(e["ph"].GetString()) != "O") continue;
    const std::string desc = e["args"]["snapshot"]["tensor_description"].GetString();
    const size_t at = desc.find("requested_bytes: ");
    if (at == std::string::npos) {
      ADD_FAILURE() << "no requested_bytes in " << desc;
      continue;
    }
    out[e["name"].GetString()] = std::stoll(desc.substr(at + 17));
  }
  return out;
}

// --show-memory: each PS's timeline gives the variable it holds and its size, as TF's
// show_memory=True does: hot, ps:0 the whole table (rows * num_ps rows of dim floats) and ps:1
// the dense variable; balanced, one part of rows * dim floats on each PS. Without it, none.
TEST(PsloadJob, ShowMemoryGivesEachPsVariableWithItsSize) {
  TempDir dir;
  for (const char* placement : {"hot", "balanced"}) {
    for (bool show : {true, false}) {
      const std::string tag = std::string(placement) + (show ? "-mem" : "");
      std::vector<int> ports = FreePorts(3);
      const std::string hosts = "--ps_hosts=" + HostList({ports[0], ports[1]});
      std::vector<Proc> ps;
      for (int i = 0; i < 2; ++i) {
        std::vector<std::string> args = {
            "--job_name=ps",
            "--task_index=" + std::to_string(i),
            hosts,
            std::string("--placement=") + placement,
            "--rows=1000",
            "--dim=8",
            "--dense-floats=64",
            "--timeline=" + dir.File(tag + "-ps" + std::to_string(i) + ".tl")};
        if (show) args.push_back("--show-memory=true");
        ps.push_back(Spawn(dir, tag + "-ps" + std::to_string(i), args));
      }
      Proc w = Spawn(dir, tag + "-w",
                     {"--job_name=worker", hosts, "--steps=5", "--dim=8",
                      std::string("--placement=") + placement});
      EXPECT_EQ(Wait(w), 0) << ReadFile(w.err_path);
      for (const Proc& p : ps) EXPECT_EQ(Stop(p), 0) << ReadFile(p.err_path);
      const auto ps0 = SnapshotBytes(dir.File(tag + "-ps0.tl"));
      const auto ps1 = SnapshotBytes(dir.File(tag + "-ps1.tl"));
      if (!show) {
        EXPECT_TRUE(ps0.empty() && ps1.empty()) << tag;
      } else if (std::string(placement) == "hot") {
        EXPECT_EQ(
            ps0,
            (std::map<std::string, int64_t>{{"embedding/embedding_weights", 2 * 1000 * 8 * 4}}));
        EXPECT_EQ(ps1, (std::map<std::string, int64_t>{{"dense/kernel", 64 * 4}}));
      } else {
        EXPECT_EQ(
            ps0,
            (std::map<std::string, int64_t>{{"embedding/embedding_weights/part_0", 1000 * 8 * 4}}));
        EXPECT_EQ(
            ps1,
            (std::map<std::string, int64_t>{{"embedding/embedding_weights/part_1", 1000 * 8 * 4}}));
      }
    }
  }
}

// A bad --prefetch names the flag.
TEST(PsloadConfig, BadPrefetchExitsWithTwoNamingTheFlag) {
  TempDir dir;
  Proc p = Spawn(dir, "w", {"--job_name=worker", "--ps_hosts=127.0.0.1:1", "--prefetch=-1"});
  EXPECT_EQ(Wait(p), 2);
  EXPECT_NE(ReadFile(p.err_path).find("--prefetch: '-1' is not an integer in [0, 64]"),
            std::string::npos)
      << ReadFile(p.err_path);
}

TEST(PsloadJob, SigtermStopsAWorkerAndAPsCleanlyWithSummaries) {
  TempDir dir;
  Job job = StartJob(dir, 1, 1, false, {"--duration=60"});
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(Stop(job.workers[0]), 0) << ReadFile(job.workers[0].err_path);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
  EXPECT_EQ(Stop(job.ps[0]), 0) << ReadFile(job.ps[0].err_path);
  if (HasFailure()) return;
  std::vector<rapidjson::Document> workers, ps;
  workers.push_back(Summary(job.workers[0]));
  ps.push_back(Summary(job.ps[0]));
  EXPECT_STREQ(workers[0]["exit_reason"].GetString(), "signal");
  EXPECT_GT(workers[0]["steps"].GetInt64(), 0);
  EXPECT_STREQ(ps[0]["exit_reason"].GetString(), "signal");
  ExpectSocketsAgree(workers, ps);
}

TEST(PsloadConfig, BadTfConfigExitsNonZeroNamingTheField) {
  TempDir dir;
  struct Case {
    std::string tf_config, field;
  };
  const std::vector<Case> cases = {
      {R"({"cluster":{"ps":["127.0.0.1:1"]},"task":{"type":"worker"}})", "task.index"},
      {R"({"cluster":{"ps":"127.0.0.1:1"},"task":{"type":"ps","index":0}})", "cluster.ps"},
      {R"({"cluster":{"ps":["127.0.0.1:1"]},"task":{"type":"ps","index":4}})", "task.index"},
      {R"({"cluster":{"ps":["127.0.0.1:1"]},"task":{"type":"evaluator","index":0}})", "task.type"},
      {R"({"task":{"type":"ps","index":0}})", "cluster"},
      {R"({"cluster":)", "TF_CONFIG: not JSON"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    Proc p = Spawn(dir, "bad" + std::to_string(i), {}, {{"TF_CONFIG", cases[i].tf_config}});
    EXPECT_EQ(Wait(p), 2) << cases[i].tf_config;
    std::string err = ReadFile(p.err_path);
    EXPECT_NE(err.find("TF_CONFIG"), std::string::npos) << err;
    EXPECT_NE(err.find(cases[i].field), std::string::npos)
        << "want " << cases[i].field << ": " << err;
    EXPECT_NE(access(p.summary.c_str(), F_OK), 0) << "no summary for a config error";
  }
}

}  // namespace
}  // namespace tfdiag::test
