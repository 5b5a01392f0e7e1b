// Tests of collectors/discovery: TF_CONFIG and TF1 flags parsing, discovery over a fake node
// (a temporary root with /proc entries of several pods), and live child processes.
#include "collectors/discovery/discovery.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "collectors/discovery/tf_config.h"
#include "collectors/procfs/proc_reader.h"
#include "tests/test_util.h"

namespace tfdiag {
namespace {

using test::TempDir;
using test::WriteFile;

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

const char kTfConfig[] = R"({"cluster":{"chief":["myjob-chief-0.ns.svc:2222"],)"
                         R"("ps":["myjob-ps-0.ns.svc:2222","myjob-ps-1.ns.svc:2222"],)"
                         R"("worker":["myjob-worker-0.ns.svc:2222","myjob-worker-1.ns.svc:2222"]},)"
                         R"("task":{"type":"ps","index":1},"environment":"cloud"})";

TEST(TfConfigTest, ParsesClusterAndTask) {
  auto c = ParseTfConfig(kTfConfig);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->source, "TF_CONFIG");
  EXPECT_EQ(c->job, "ps");
  EXPECT_EQ(c->index, 1);
  EXPECT_EQ(c->cluster.jobs.size(), 3u);
  EXPECT_EQ(c->cluster.NumTasks("ps"), 2);
  EXPECT_EQ(c->cluster.NumTasks("worker"), 2);
  EXPECT_EQ(c->cluster.Address("ps", 1), "myjob-ps-1.ns.svc:2222");
  EXPECT_EQ(c->cluster.Address("chief", 0), "myjob-chief-0.ns.svc:2222");
  EXPECT_EQ(c->cluster.Address("evaluator", 0), "");

  auto sparse = ParseTfConfig(R"({"cluster":{"worker":{"0":"a:1","2":"c:3"}},)"
                              R"("task":{"type":"worker","index":2}})");
  ASSERT_TRUE(sparse.ok()) << sparse.status().message();
  EXPECT_EQ(sparse->cluster.jobs.at("worker"), (std::vector<std::string>{"a:1", "", "c:3"}));

  auto eval = ParseTfConfig(R"({"cluster":{"ps":["p:1"]},"task":{"type":"evaluator"}})");
  ASSERT_TRUE(eval.ok()) << eval.status().message();
  EXPECT_EQ(eval->job, "evaluator");
  EXPECT_EQ(eval->index, 0);  // TFConfigClusterResolver's default
  EXPECT_TRUE(ParseTfConfig("{}").ok());
}

TEST(TfConfigTest, ErrorsNameTheField) {
  struct Case {
    const char* json;
    const char* message;
  };
  for (const Case& c : {
           Case{R"({"task":{"type":"ps","index":"0"}})",
                "TF_CONFIG: task.index: expected an integer"},
           Case{R"({"task":{"type":"ps","index":-1}})",
                "TF_CONFIG: task.index: expected an integer"},
           Case{R"({"task":{"type":1}})", "TF_CONFIG: task.type: expected a string"},
           Case{R"({"task":[]})", "TF_CONFIG: task: expected an object {type, index}"},
           Case{R"({"cluster":[]})", "TF_CONFIG: cluster: expected an object {job: [host:port]}"},
           Case{R"({"cluster":{"ps":"a:1"}})",
                "TF_CONFIG: cluster.ps: expected a list of 'host:port' strings"},
           Case{R"({"cluster":{"ps":["a:1",2]}})",
                "TF_CONFIG: cluster.ps[1]: expected a 'host:port' string"},
           Case{R"({"cluster":{"ps":{"x":"a:1"}}})",
                "TF_CONFIG: cluster.ps.x: expected a task index as key"},
           Case{R"({"cluster":{"ps":["a:1"]},"task":{"type":"ps","index":1}})",
                "TF_CONFIG: task.index: 1 out of range for job 'ps' with 1 tasks"},
           Case{"[1]", "TF_CONFIG: expected a JSON object"},
       }) {
    auto r = ParseTfConfig(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(r.status().message(), c.message) << c.json;
  }
  auto bad = ParseTfConfig(R"({"cluster": {)");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "TF_CONFIG: byte 13: ")) << bad.status().message();
  EXPECT_FALSE(ParseTfConfig(R"({} trailing)").ok());
}

TEST(TfConfigTest, Tf1Flags) {
  std::vector<std::string> argv = {"python",
                                   "dist_train.py",
                                   "--ps_hosts=a:2222,b:2222",
                                   "--worker_hosts",
                                   "w0:2222,w1:2222,w2:2222",
                                   "--job_name=worker",
                                   "-task_index",
                                   "2",
                                   "--batch_size=64"};
  EXPECT_TRUE(HasTfFlags(argv));
  auto c = ParseTfFlags(argv);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->source, "flags");
  EXPECT_EQ(c->job, "worker");
  EXPECT_EQ(c->index, 2);
  EXPECT_EQ(c->cluster.jobs.at("ps"), (std::vector<std::string>{"a:2222", "b:2222"}));
  EXPECT_EQ(c->cluster.Address("worker", 2), "w2:2222");

  auto ps = ParseTfFlags({"python", "t.py", "--job_name", "ps", "--ps_hosts=a:1"});
  ASSERT_TRUE(ps.ok()) << ps.status().message();
  EXPECT_EQ(ps->index, 0);  // the TF1 scripts' default

  EXPECT_EQ(ParseTfFlags({"python", "t.py"}).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(HasTfFlags({"--job_name=ps"}));  // argv[0] is the program, not a flag
  EXPECT_EQ(ParseTfFlags({"p", "--task_index=x"}).status().message(),
            "--task_index: expected an integer, got 'x'");
  EXPECT_EQ(ParseTfFlags({"p", "--job_name"}).status().message(), "--job_name: missing value");
  EXPECT_EQ(ParseTfFlags({"p", "--job_name", "--task_index=0"}).status().message(),
            "--job_name: missing value");
  EXPECT_EQ(ParseTfFlags({"p", "--job_name=ps", "--task_index=2", "--ps_hosts=a:1,b:1"})
                .status()
                .message(),
            "--task_index: 2 out of range for --ps_hosts with 2 hosts");
}

TEST(DiscoveryTest, PodMatchesJob) {
  EXPECT_TRUE(PodMatchesJob("myjob-ps-0", "myjob"));
  EXPECT_TRUE(PodMatchesJob("myjob-worker-12", "myjob"));
  EXPECT_TRUE(PodMatchesJob("anything", ""));
  EXPECT_FALSE(PodMatchesJob("myjob2-ps-0", "myjob"));
  EXPECT_FALSE(PodMatchesJob("myjob-ps", "myjob"));
  EXPECT_FALSE(PodMatchesJob("myjob-ps-x", "myjob"));
  EXPECT_FALSE(PodMatchesJob("", "myjob"));
  EXPECT_TRUE(PodMatchesJob("my-job-ps-1", "my-job"));
}

// A fake node: /proc entries of processes in three pods, plus a thread entry, a non-TF process,
// a process that vanishes mid-scan and one with a malformed TF_CONFIG.
class FakeNode {
 public:
  FakeNode() {
    Mkdir("proc/self/root");
    WriteFile(root_.File("proc/self/mountinfo"),
              "25 1 0:23 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n");
  }
  const std::string& root() const { return root_.path(); }

  // One process; `env` entries are NUL-joined into environ, `argv` into cmdline.
  void AddProcess(pid_t pid, const std::string& comm, int threads,
                  const std::vector<std::string>& argv, const std::vector<std::string>& env,
                  const std::string& cgroup, const std::string& hostname) {
    std::string d = "proc/" + std::to_string(pid);
    Mkdir(d + "/root/etc");
    WriteFile(root_.File(d + "/stat"),
              fmt::format("{} ({}) S 1 {} {} 0 -1 4194304 100 0 0 0 50 5 0 0 20 0 {} 0 1000 "
                          "1000000 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 "
                          "0 0\n",
                          pid, comm, pid, pid, threads));
    WriteFile(root_.File(d + "/status"), fmt::format("Name:\t{}\nState:\tS (sleeping)\nTgid:\t{}\n"
                                                     "Threads:\t{}\n",
                                                     comm, pid, threads));
    WriteFile(root_.File(d + "/cmdline"), Join(argv));
    WriteFile(root_.File(d + "/environ"), Join(env));
    WriteFile(root_.File(d + "/cgroup"), "0::" + cgroup + "\n");
    if (!hostname.empty()) WriteFile(root_.File(d + "/root/etc/hostname"), hostname + "\n");
  }
  void Mkdir(const std::string& rel) {
    ASSERT_EQ(std::system(("mkdir -p '" + root_.File(rel) + "'").c_str()), 0);
  }

 private:
  static std::string Join(const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += s + '\0';
    return out;
  }
  TempDir root_;
};

std::string PodCgroup(const std::string& uid_underscored, const std::string& hex) {
  return "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + uid_underscored +
         ".slice/cri-containerd-" + hex + ".scope";
}

TEST(DiscoveryTest, FakeNodeWithThreePods) {
  FakeNode node;
  const std::string secret = "TFDIAG_TOKEN=do-not-leak-9f3b";
  std::string cfg_ps0 =
      R"(TF_CONFIG={"cluster":{"ps":["myjob-ps-0.ns.svc:2222"],)"
      R"("worker":["myjob-worker-0.ns.svc:2222"]},"task":{"type":"ps","index":0}})";
  std::string pod_a = PodCgroup("aaaaaaaa_1111_2222_3333_444444444444", std::string(64, 'a'));
  // The python TF server (30 threads) and its launcher shell share TF_CONFIG and the pod.
  node.AddProcess(4242, "python3", 30, {"python3", "train.py"}, {secret, cfg_ps0, "HOME=/"}, pod_a,
                  "myjob-ps-0");
  node.AddProcess(4250, "sh", 1, {"sh", "-c", "python3 train.py"}, {cfg_ps0, secret}, pod_a,
                  "myjob-ps-0");
  node.Mkdir("proc/4243");  // a thread of 4242, as /proc/<tid> resolves
  WriteFile(node.root() + "/proc/4243/status", "Name:\ttf_inter_op\nTgid:\t4242\n");
  node.AddProcess(
      5000, "python3", 12,
      {"python3", "train.py", "--job_name=worker", "--task_index=0",
       "--ps_hosts=myjob-ps-0.ns.svc:2222", "--worker_hosts=myjob-worker-0.ns.svc:2222"},
      {secret}, PodCgroup("bbbbbbbb_1111_2222_3333_444444444444", std::string(64, 'b')),
      "myjob-worker-0");
  node.AddProcess(
      6000, "python3", 8, {"python3"},
      {R"(TF_CONFIG={"cluster":{"ps":["other-ps-0:2222"]},"task":{"type":"ps","index":0}})"},
      PodCgroup("cccccccc_1111_2222_3333_444444444444", std::string(64, 'c')), "other-ps-0");
  node.AddProcess(7000, "nginx", 2, {"nginx"}, {secret}, "/system.slice/nginx.service", "");
  node.Mkdir("proc/7100");  // exits mid-scan: only status is left
  WriteFile(node.root() + "/proc/7100/status", "Name:\tpython3\nTgid:\t7100\n");
  node.AddProcess(7200, "python3", 4, {"python3"},
                  {R"(TF_CONFIG={"task":{"type":"ps","index":"zero"}})"}, "/", "");

  DiscoveryOptions opt;
  opt.root = node.root();
  auto r = DiscoverTfTasks(opt);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->tasks.size(), 3u);
  const TfTask& ps = r->tasks[0];
  EXPECT_EQ(ps.pid, 4242);
  EXPECT_EQ(ps.label, "ps:0");
  EXPECT_EQ(ps.comm, "python3");
  EXPECT_EQ(ps.num_threads, 30);
  EXPECT_EQ(ps.other_pids, std::vector<pid_t>{4250});  // the launcher shell
  EXPECT_EQ(ps.config.source, "TF_CONFIG");
  EXPECT_EQ(ps.address, "myjob-ps-0.ns.svc:2222");
  EXPECT_EQ(ps.pod_name, "myjob-ps-0");
  EXPECT_EQ(ps.kube.pod_uid, "aaaaaaaa-1111-2222-3333-444444444444");
  EXPECT_EQ(ps.kube.container_id, std::string(64, 'a'));
  EXPECT_EQ(ps.kube.qos, QosClass::kBestEffort);
  EXPECT_EQ(ps.cgroup_path, pod_a);
  EXPECT_EQ(r->tasks[1].pid, 6000);
  EXPECT_EQ(r->tasks[1].label, "ps:0");
  EXPECT_EQ(r->tasks[1].pod_name, "other-ps-0");
  const TfTask& w = r->tasks[2];
  EXPECT_EQ(w.pid, 5000);
  EXPECT_EQ(w.label, "worker:0");
  EXPECT_EQ(w.config.source, "flags");
  EXPECT_EQ(w.config.cluster.NumTasks("ps"), 1);
  EXPECT_EQ(w.kube.pod_uid, "bbbbbbbb-1111-2222-3333-444444444444");
  EXPECT_EQ(r->vanished, 1);  // 7100
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "pid 7200: TF_CONFIG: task.index: expected an integer");
  EXPECT_EQ(r->scanned, 8);  // 4242 4243 4250 5000 6000 7000 7100 7200 ("self" is not a pid)
  for (const TfTask& t : r->tasks) {
    EXPECT_FALSE(Contains(t.config.cluster.Address(t.job, t.index), "do-not-leak"));
  }

  opt.job_prefix = "myjob";  // TFJob name filter
  r = DiscoverTfTasks(opt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tasks.size(), 2u);
  EXPECT_EQ(r->tasks[0].pod_name, "myjob-ps-0");
  EXPECT_EQ(r->tasks[1].pod_name, "myjob-worker-0");

  opt.job_prefix.clear();
  opt.pod_names = {"other-ps-0"};
  r = DiscoverTfTasks(opt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tasks.size(), 1u);
  EXPECT_EQ(r->tasks[0].pid, 6000);

  opt.pod_names.clear();
  opt.pids = {4243, 9999};  // a thread id stands for its process; 9999 does not exist
  r = DiscoverTfTasks(opt);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->tasks.size(), 1u);
  EXPECT_EQ(r->tasks[0].pid, 4242);
  EXPECT_EQ(r->vanished, 1);

  auto thread = InspectProcess(4243, node.root());
  ASSERT_TRUE(thread.ok());
  EXPECT_FALSE(thread->has_value());  // threads are not tasks
  auto nginx = InspectProcess(7000, node.root());
  ASSERT_TRUE(nginx.ok());
  EXPECT_FALSE(nginx->has_value());
}

// ---- Live children ----

struct Child {
  pid_t pid = -1;
  int stdin_fd = -1;
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (stdin_fd >= 0) ::close(stdin_fd);
  }
};

// Spawns /bin/sh -c 'read x' <extra args...> with `env`: it blocks on a pipe we hold, and its
// cmdline keeps the extra arguments ($0, $1, ...).
void SpawnSh(Child* c, const std::vector<std::string>& extra, const std::vector<std::string>& env) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[0], 0);
  posix_spawn_file_actions_addclose(&fa, p[1]);
  std::vector<std::string> args = {"sh", "-c", "read x"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<std::string> envs = env;
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  ASSERT_EQ(posix_spawn(&c->pid, "/bin/sh", &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  ::close(p[0]);
  c->stdin_fd = p[1];
}

std::string Dump(const TfTask& t) {
  std::string s = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", t.pid, t.comm, t.job, t.label,
                              t.address, t.config.source, t.cgroup_path, t.kube.pod_uid,
                              t.kube.container_id, t.pod_name, t.num_threads);
  for (const auto& [job, hosts] : t.config.cluster.jobs) {
    s += "|" + job;
    for (const auto& h : hosts) s += "," + h;
  }
  for (const CgroupEntry& e : t.cgroups) s += "|" + e.path;
  return s;
}

TEST(DiscoveryLiveTest, ChildWithTfConfigAndSecretAndChildWithFlags) {
  const std::string secret_value = "s3cr3t-" + std::to_string(::getpid()) + "-zz";
  const std::string tf_config =
      R"({"cluster":{"ps":["127.0.0.1:2222","127.0.0.1:2223"],"worker":["127.0.0.1:2224"]},)"
      R"("task":{"type":"ps","index":1}})";
  Child env_child, flags_child;
  // The secret sits before TF_CONFIG, and a look-alike name shares its prefix.
  SpawnSh(&env_child, {"tf_env_task"},
          {"PATH=/usr/bin:/bin", "TFDIAG_SECRET=" + secret_value,
           "TF_CONFIG_SHADOW=" + secret_value, "TF_CONFIG=" + tf_config});
  SpawnSh(&flags_child,
          {"tf_flags_task", "--job_name=worker", "--task_index", "0",
           "--ps_hosts=127.0.0.1:2222,127.0.0.1:2223", "--worker_hosts=127.0.0.1:2224"},
          {"PATH=/usr/bin:/bin", "TFDIAG_SECRET=" + secret_value});

  auto value = ReadEnvVar(env_child.pid, "TF_CONFIG");
  ASSERT_TRUE(value.ok()) << value.status().message();
  ASSERT_TRUE(value->has_value());
  EXPECT_EQ(**value, tf_config);
  EXPECT_FALSE(Contains(**value, secret_value));
  auto missing = ReadEnvVar(flags_child.pid, "TF_CONFIG");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());

  auto r = DiscoverTfTasks(DiscoveryOptions{});  // the whole /proc
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TfTask* ps = nullptr;
  const TfTask* worker = nullptr;
  for (const TfTask& t : r->tasks) {
    if (t.pid == env_child.pid) ps = &t;
    if (t.pid == flags_child.pid) worker = &t;
    EXPECT_FALSE(Contains(Dump(t), secret_value)) << Dump(t);
    EXPECT_NE(t.pid, ::getpid());
  }
  for (const std::string& w : r->warnings) EXPECT_FALSE(Contains(w, secret_value)) << w;
  ASSERT_NE(ps, nullptr);
  ASSERT_NE(worker, nullptr);
  EXPECT_EQ(ps->label, "ps:1");
  EXPECT_EQ(ps->config.source, "TF_CONFIG");
  EXPECT_EQ(ps->address, "127.0.0.1:2223");
  EXPECT_EQ(ps->comm, "sh");
  EXPECT_EQ(ps->config.cluster.NumTasks("worker"), 1);
  EXPECT_EQ(worker->label, "worker:0");
  EXPECT_EQ(worker->config.source, "flags");
  EXPECT_EQ(worker->address, "127.0.0.1:2224");
  EXPECT_EQ(worker->config.cluster.NumTasks("ps"), 2);
  EXPECT_FALSE(worker->cgroups.empty());
  EXPECT_EQ(ps->pod_name, "");  // not in a container

  // Selecting by pid gives the same answer; a process that exits is skipped, not an error.
  DiscoveryOptions by_pid;
  by_pid.pids = {env_child.pid, flags_child.pid};
  auto r2 = DiscoverTfTasks(by_pid);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->tasks.size(), 2u);
  ::kill(env_child.pid, SIGKILL);
  ::waitpid(env_child.pid, nullptr, 0);
  auto r3 = DiscoverTfTasks(by_pid);
  ASSERT_TRUE(r3.ok());
  ASSERT_EQ(r3->tasks.size(), 1u);
  EXPECT_EQ(r3->tasks[0].pid, flags_child.pid);
  EXPECT_EQ(r3->vanished, 1);
  env_child.pid = -1;
}

}  // namespace
}  // namespace tfdiag
