// tfdiag attach end to end on this machine: a psload PS/worker job whose worker runs in a real
// cgroup v1 laid out like a kubelet's (kubepods/burstable/pod<uid>/<container>) with a 1-CPU
// CFS quota. attach must find each task with its job and index, read the quota and the pod
// identity, and analyze must flag thread oversubscription with 16 busy threads and not with 1.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

constexpr char kPodUid[] = "3f1c2a4e-8b7d-4c21-9a55-1b2c3d4e5f60";
constexpr char kContainer[] = "7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b";

// A kubepods-style cgroup in the v1 cpu and cpuset hierarchies, removed leaf-first on exit.
class PodCgroup {
 public:
  PodCgroup(double cpus, const std::string& tag) {
    base_ = "tfdiag_attach_" + std::to_string(getpid()) + "_" + tag;
    rel_ = base_ + "/kubepods/burstable/pod" + kPodUid + "/" + kContainer;
    for (const char* ctrl : {"cpu", "cpuset"}) {
      std::string dir = std::string("/sys/fs/cgroup/") + ctrl;
      std::string parent = dir;
      for (const std::string& part : Split(rel_)) {
        std::string d = parent + "/" + part;
        ::mkdir(d.c_str(), 0755);
        if (std::string(ctrl) == "cpuset") {  // a cpuset cgroup needs cpus and mems first
          WriteControlFile(d + "/cpuset.cpus", ReadFile(parent + "/cpuset.cpus"));
          WriteControlFile(d + "/cpuset.mems", ReadFile(parent + "/cpuset.mems"));
        }
        parent = d;
      }
    }
    WriteControlFile(Dir("cpu") + "/cpu.cfs_period_us", "100000");
    ok_ = WriteControlFile(Dir("cpu") + "/cpu.cfs_quota_us",
                           std::to_string(static_cast<int>(cpus * 100000)));
  }
  ~PodCgroup() {
    for (const char* ctrl : {"cpu", "cpuset"}) {
      std::vector<std::string> parts = Split(rel_);
      for (size_t n = parts.size(); n > 0; --n) {
        std::string d = std::string("/sys/fs/cgroup/") + ctrl;
        for (size_t i = 0; i < n; ++i) d += "/" + parts[i];
        ::rmdir(d.c_str());
      }
    }
  }
  bool ok() const { return ok_; }
  bool Add(pid_t pid) {
    return WriteControlFile(Dir("cpu") + "/cgroup.procs", std::to_string(pid)) &&
           WriteControlFile(Dir("cpuset") + "/cgroup.procs", std::to_string(pid));
  }
  std::string Dir(const char* ctrl) const {
    return std::string("/sys/fs/cgroup/") + ctrl + "/" + rel_;
  }

 private:
  static std::vector<std::string> Split(const std::string& s) {
    std::vector<std::string> out;
    size_t p = 0;
    while (p < s.size()) {
      size_t q = s.find('/', p);
      if (q == std::string::npos) q = s.size();
      out.push_back(s.substr(p, q - p));
      p = q + 1;
    }
    return out;
  }
  std::string base_, rel_;
  bool ok_ = false;
};

pid_t SpawnPsload(const std::string& tf_config, const std::vector<std::string>& args,
                  const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<std::string> argv = {PSLOAD_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (std::string& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::string env = "TF_CONFIG=" + tf_config;
    char* envp[] = {env.data(), nullptr};
    freopen(log.c_str(), "w", stderr);
    execve(PSLOAD_BINARY, cargv.data(), envp);
    _exit(127);
  }
  return pid;
}

void Stop(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// Runs a 2-PS, 4-worker job (hot placement) whose worker:0 has `threads` busy intra-op threads in
// a 1-CPU pod cgroup, attaches to all six tasks for 3 s, and returns the analysis JSON.
rapidjson::Document RunJob(int threads, const TempDir& dir) {
  rapidjson::Document j;
  PodCgroup cg(1.0, "worker0");
  // The other five tasks share 0.6 CPU, so that worker:0's own quota, not the 2-core machine,
  // is what limits it.
  PodCgroup others(0.6, "others");
  EXPECT_TRUE(cg.ok() && others.ok());
  std::vector<int> ports = FreePorts(6);
  const std::string cluster = fmt::format(
      R"({{"cluster":{{"ps":["127.0.0.1:{}","127.0.0.1:{}"],"worker":["127.0.0.1:{}","127.0.0.1:{}",)"
      R"("127.0.0.1:{}","127.0.0.1:{}"]}},)",
      ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]);
  std::vector<pid_t> pids;
  for (int i = 0; i < 2; ++i) {
    pids.push_back(SpawnPsload(cluster + fmt::format(R"("task":{{"type":"ps","index":{}}}}})", i),
                               {"--duration=12", "--placement=hot"},
                               dir.File(fmt::format("ps{}.log", i))));
  }
  for (int i = 0; i < 4; ++i) {
    const int n = i == 0 ? threads : 1;
    pids.push_back(
        SpawnPsload(cluster + fmt::format(R"("task":{{"type":"worker","index":{}}}}})", i),
                    {"--duration=10", "--placement=hot", "--worker-threads=" + std::to_string(n),
                     "--compute-us=" + std::to_string(i == 0 ? 20000 * n : 2000)},
                    dir.File(fmt::format("worker{}.log", i))));
  }
  EXPECT_TRUE(cg.Add(pids[2]));  // worker:0
  for (size_t i = 0; i < pids.size(); ++i) {
    if (i != 2) {
      EXPECT_TRUE(others.Add(pids[i]));
    }
  }
  usleep(800 * 1000);
  const std::string bundle = dir.File("run.tfdiag.json");
  std::string args = "attach --duration 3s --interval 500ms -o " + bundle;
  for (pid_t p : pids) args += " --pid " + std::to_string(p);
  RunResult a = RunTfdiag(args);
  for (pid_t p : pids) Stop(p);
  EXPECT_EQ(a.exit_code, 0) << a.err;
  // The node's steal over the window, a share of its CPU time (/proc/stat; 0 on bare metal).
  rapidjson::Document raw;
  raw.Parse(ReadFile(bundle).c_str());
  const bool has = raw.IsObject() && raw.HasMember("meta") && raw["meta"].IsObject() &&
                   raw["meta"].HasMember("steal_pct") && raw["meta"]["steal_pct"].IsNumber();
  EXPECT_TRUE(has) << "no meta.steal_pct";
  if (has) {
    EXPECT_GE(raw["meta"]["steal_pct"].GetDouble(), 0);
    EXPECT_LE(raw["meta"]["steal_pct"].GetDouble(), 100);
  }
  RunResult r = RunTfdiag("analyze -f json " + bundle);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  j.Parse(r.out.c_str());
  EXPECT_FALSE(j.HasParseError()) << r.out.substr(0, 300);
  return j;
}

// The processes entry of `task`, or nullptr.
const rapidjson::Value* Process(const rapidjson::Document& j, const char* task) {
  for (auto& p : j["processes"].GetArray()) {
    if (std::string(p["task"].GetString()) == task) return &p;
  }
  return nullptr;
}

// The finding of `rule` about `subject` (the object of that subject inside a finding that groups
// several, with its own summary and evidence), or nullptr.
const rapidjson::Value* FindingOf(const rapidjson::Document& j, const char* rule,
                                  const char* subject) {
  for (auto& f : j["findings"].GetArray()) {
    if (std::string(f["rule"].GetString()) != rule) continue;
    for (auto& o : f["objects"].GetArray()) {
      if (std::string(o["subject"].GetString()) == subject) return &o;
    }
  }
  return nullptr;
}

bool Fired(const rapidjson::Document& j, const char* rule, const char* subject) {
  return FindingOf(j, rule, subject) != nullptr;
}

// The value of the evidence line `label` of finding `f`, or -1.
double Evidence(const rapidjson::Value& f, const std::string& label) {
  for (const auto& e : f["evidence"].GetArray()) {
    if (label == e["label"].GetString()) return e["value"].GetDouble();
  }
  return -1;
}

class AttachLive : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups and read /proc/PID/environ";
    struct stat st;
    if (stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &st) != 0) {
      GTEST_SKIP() << "no cgroup v1 cpu controller at /sys/fs/cgroup/cpu";
    }
  }
};

TEST_F(AttachLive, FindsTasksReadsQuotaAndFlagsSixteenThreadsUnderOneCpu) {
  TempDir dir;
  rapidjson::Document j = RunJob(16, dir);
  ASSERT_TRUE(j.IsObject());
  ASSERT_EQ(j["processes"].Size(), 6u);
  for (const char* task : {"ps:0", "ps:1", "worker:0", "worker:1", "worker:2", "worker:3"}) {
    EXPECT_NE(Process(j, task), nullptr) << task << " not found with its job and index";
  }
  const rapidjson::Value& worker = *Process(j, "worker:0");
  EXPECT_DOUBLE_EQ(worker["cpu_limit"].GetDouble(), 1.0);
  EXPECT_STREQ(worker["pod_uid"].GetString(), kPodUid);
  EXPECT_STREQ(worker["qos"].GetString(), "Burstable");  // status.qosClass spelling
  EXPECT_GE(worker["threads_mean"].GetDouble(), 16.0);
  EXPECT_LE(worker["cpu_used_cpus"].GetDouble(), 1.15) << "the quota holds the worker to 1 CPU";
  EXPECT_GE(worker["throttled_pct"].GetDouble(), 0.0) << "throttling counters were read";
  EXPECT_NEAR(Process(j, "worker:1")->operator[]("cpu_limit").GetDouble(), 0.6, 1e-9);
  EXPECT_TRUE(Fired(j, "thread-oversubscription", "worker:0"));
  // 1 CPU of quota on a node whose CPUs are all in the cpuset: cpushare, not cpuset.
  if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
    EXPECT_TRUE(Fired(j, "cpu-pinning", "worker:0"));
  }
}

// With the eBPF sched probe (root, BTF), the finding's evidence has the run-queue latency and
// the involuntary share of switches; 16 threads spinning under 1 CPU of quota wait for
// milliseconds and are mostly preempted, and the eBPF share agrees with /proc's counters.
TEST_F(AttachLive, OversubscriptionEvidenceHasRunQueueLatencyAndPreemptionShare) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) GTEST_SKIP() << "no kernel BTF for eBPF";
  TempDir dir;
  rapidjson::Document j = RunJob(16, dir);
  ASSERT_TRUE(j.IsObject());
  const rapidjson::Value* f = FindingOf(j, "thread-oversubscription", "worker:0");
  ASSERT_NE(f, nullptr);
  const double mean_us = Evidence(*f, "run-queue latency, mean (eBPF)");
  const double p99_us = Evidence(*f, "run-queue latency, p99 bucket bound");
  const double share = Evidence(*f, "involuntary share of switches");
  ASSERT_GE(mean_us, 0) << "no eBPF run-queue evidence: " << f->GetObject()["summary"].GetString();
  EXPECT_GE(mean_us, 1000) << "16 spinning threads on 1 CPU wait milliseconds for it";
  EXPECT_GE(p99_us, mean_us);
  EXPECT_GE(Evidence(*f, "run-queue waits"), 100);
  EXPECT_GE(share, 50) << "most switches of spinning threads are preemptions";
  const rapidjson::Value& p = *Process(j, "worker:0");
  const double vol = p["voluntary_switches_per_s"].GetDouble();
  const double inv = p["involuntary_switches_per_s"].GetDouble();
  ASSERT_GT(vol + inv, 0);
  EXPECT_NEAR(share, 100 * inv / (vol + inv), 10) << "eBPF and /proc disagree on preemptions";
  EXPECT_NE(std::string((*f)["summary"].GetString()).find("on the run queue"), std::string::npos);
  std::printf(
      "[ measured ] worker:0 run-queue %.0f us mean (p99 < %.0f us), %.0f%% involuntary "
      "(eBPF) vs %.0f%% (/proc)\n",
      mean_us, p99_us, share, 100 * inv / (vol + inv));
}

TEST_F(AttachLive, OneBusyThreadUnderOneCpuIsNotOversubscribed) {
  TempDir dir;
  rapidjson::Document j = RunJob(1, dir);
  ASSERT_TRUE(j.IsObject());
  ASSERT_EQ(j["processes"].Size(), 6u);
  EXPECT_DOUBLE_EQ(Process(j, "worker:0")->operator[]("cpu_limit").GetDouble(), 1.0);
  EXPECT_FALSE(Fired(j, "thread-oversubscription", "worker:0"));
}

TEST(Attach, NoTaskFoundIsAClearError) {
  // Our own test process has no TF_CONFIG: attaching to it finds no TF task.
  RunResult r =
      RunTfdiag(fmt::format("attach --pid {} --duration 1s -o /tmp/never.json", getpid()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no TF task found"), std::string::npos) << r.err;
  struct stat st;
  EXPECT_NE(stat("/tmp/never.json", &st), 0);
}

TEST(Attach, BadDurationIsAUsageError) {
  RunResult r = RunTfdiag("attach --duration soon -o /tmp/x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--duration soon"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tfdiag::test
