// Tests of collectors/discovery and collectors/procfs/kubepods: TF_CONFIG and TF1 flags parsing,
// the Kubernetes identity of every real kubepods path in ../shared/realworld/cgroup (read in
// place), discovery over a fake node (a temporary root with /proc entries of several pods), and
// live child processes.
#include "collectors/discovery/discovery.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "collectors/discovery/tf_config.h"
#include "collectors/procfs/kubepods.h"
#include "collectors/procfs/proc_reader.h"
#include "tests/test_util.h"

namespace tfdiag {
namespace {

using test::TempDir;
using test::WriteFile;

using test::SharedRealworld;
#define REQUIRE_REALWORLD() TFDIAG_REQUIRE_REALWORLD("cgroup")

std::string Fixture(const std::string& name) {
  return test::ReadFile(SharedRealworld("cgroup/" + name));
}

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
  EXPECT_EQ(sparse->cluster.jobs.at("worker"), JobTasks::FromUnsorted({{2, "c:3"}, {0, "a:1"}}));
  EXPECT_EQ(sparse->cluster.Address("worker", 1), "");

  auto eval = ParseTfConfig(R"({"cluster":{"ps":["p:1"]},"task":{"type":"evaluator"}})");
  ASSERT_TRUE(eval.ok()) << eval.status().message();
  EXPECT_EQ(eval->job, "evaluator");
  EXPECT_EQ(eval->index, 0);  // TFConfigClusterResolver's default
  EXPECT_TRUE(ParseTfConfig("{}").ok());
}

// Issue 46: repeated names are read as TensorFlow reads them (json.loads keeps the last); the
// first "task" made tfdiag report ps:0 for a process TensorFlow runs as worker:1.
TEST(TfConfigTest, RepeatedNamesCountByTheirLastOccurrence) {
  auto c = ParseTfConfig(R"({"cluster":{"ps":["p:1"],"worker":["w:1","w:2"],"ps":["q:1","q:2"]},)"
                         R"("task":{"type":"ps","index":0},"task":{"type":"worker","index":0,)"
                         R"("index":1}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->job, "worker");
  EXPECT_EQ(c->index, 1);
  EXPECT_EQ(c->cluster.NumTasks("ps"), 2) << "the last \"ps\" list, not both";
  EXPECT_EQ(c->cluster.Address("ps", 0), "q:1");
  auto twice = ParseTfConfig(R"({"cluster":{"ps":["p:1"]},"cluster":{"ps":["r:1"]},)"
                             R"("task":{"type":"ps","index":0}})");
  ASSERT_TRUE(twice.ok()) << twice.status().message();
  EXPECT_EQ(twice->cluster.Address("ps", 0), "r:1");
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
  EXPECT_EQ(c->cluster.jobs.at("ps"), JobTasks({"a:2222", "b:2222"}));
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

// Issue 47: a process read while its exec is under way shows its new comm and argv but an
// environ of no bytes (the kernel sets the environment's range last). An agent's cache must not
// keep that read as "no TF_CONFIG": the next scan of the same process (same pid, start time,
// comm and argv) reads its environment again and finds the task. An environment that was read
// is kept (the control: no second read).
TEST(DiscoveryTest, AnEnvironReadAsNoBytesIsNotCached) {
  FakeNode node;
  const std::string cfg =
      R"(TF_CONFIG={"cluster":{"ps":["127.0.0.1:2222"]},"task":{"type":"ps","index":0}})";
  node.AddProcess(4300, "python3", 4, {"python3", "train.py"}, {}, "/", "");  // mid-exec
  node.AddProcess(4400, "python3", 4, {"python3", "serve.py"}, {"HOME=/"}, "/", "");
  DiscoveryOptions opt;
  opt.root = node.root();
  EnvironCache cache;
  opt.cache = &cache;
  auto first = DiscoverTfTasks(opt);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->tasks.empty());
  EXPECT_EQ(first->environ_reads, 2);
  EXPECT_EQ(cache.size(), 1u) << "only the environment that was read is kept";
  // The exec completes: the same process now shows its environment.
  WriteFile(node.root() + "/proc/4300/environ", cfg + std::string(1, '\0'));
  auto second = DiscoverTfTasks(opt);
  ASSERT_TRUE(second.ok()) << second.status().message();
  ASSERT_EQ(second->tasks.size(), 1u) << "the read of no bytes was cached as no TF_CONFIG";
  EXPECT_EQ(second->tasks[0].pid, 4300);
  EXPECT_EQ(second->tasks[0].label, "ps:0");
  // 4300's TF_CONFIG and then its TFDIAG_JOB; 4400 from the cache.
  EXPECT_EQ(second->environ_reads, 2);
}

struct KubeWant {
  int line;  // 1-based entry in kubepods_paths.txt (comments excluded)
  const char* pod_uid;
  const char* container_id;
  QosClass qos;
  CgroupDriver driver;
};

// Expected identities, read off each line of kubepods_paths.txt.
const KubeWant kKubeWant[] = {
    {1, "7a96c459-d529-44ae-9f99-90d3798d6426",
     "1d3d308a7d48a27814a68bf33a44acf4441c9c02463ca0bc1cdfdc8c0b4a8496", QosClass::kBurstable,
     CgroupDriver::kSystemd},
    {2, "7a96c459-d529-44ae-9f99-90d3798d6426",
     "1d3d308a7d48a27814a68bf33a44acf4441c9c02463ca0bc1cdfdc8c0b4a8496", QosClass::kBurstable,
     CgroupDriver::kSystemd},
    {3, "7a96c459-d529-44ae-9f99-90d3798d6426",
     "1d3d308a7d48a27814a68bf33a44acf4441c9c02463ca0bc1cdfdc8c0b4a8496", QosClass::kBurstable,
     CgroupDriver::kSystemd},
    {4, "e9b90526-f47d-11e8-b2a5-080027b9f4fb", "15aa6e53-b09a-40c7-8558-c6c31e36c88a",
     QosClass::kBestEffort, CgroupDriver::kCgroupfs},
    {5, "90d81341-92de-11e7-8cf2-507b9d4141fa",
     "2227daf62df6694645fee5df53c1f91271546a9560e8600a525690ae252b7f63", QosClass::kBurstable,
     CgroupDriver::kSystemd},
    {6, "ff49d0be-16b7-4a49-bb9e-8ec1f1f4e27f",
     "0f99ad5f45163ed14ab8eaf92ed34bb4a631d007f8755a7d79be614bcb0df0ef", QosClass::kBurstable,
     CgroupDriver::kSystemd},
    {7, "22949dce-fd8b-11ea-8ede-98f2b32c645c",
     "b15a5bdedd2e7645c3be271364324321b908314e4c77857bbfd32a041148c07f", QosClass::kGuaranteed,
     CgroupDriver::kSystemd},
    {8, "0e886e9a-3879-45f9-b44d-86ef9df03224",
     "244a65edefdffe31685c42317c9054e71dc1193048cf9459e2a4dd35cbc1dba4", QosClass::kBestEffort,
     CgroupDriver::kCgroupfs},
    {9, "5eadac96-ab58-11ea-b82b-0242ac110009",
     "7fe41c8a2d1da09420117894f11dd91f6c3a44dfeb7d125dc594bd53468861df", QosClass::kGuaranteed,
     CgroupDriver::kCgroupfs},
    {10, "fd52ef25-a87d-11e9-9423-0800271a638e",
     "8c046cb0b72cd4c99f51b5591cd5b095967f58ee003710a45280c28ee1a9c7fa", QosClass::kBurstable,
     CgroupDriver::kCgroupfs},
    {11, "b41662f7-b03a-4c65-8ef9-6e4e55c3cf27",
     "1753b7cbbf62734d812936961224d5bc0cf8f45214e0d5cdd1a781a053e7c48f", QosClass::kBestEffort,
     CgroupDriver::kSystemd},
    {12, "d76e26fba3bf2bfd215eb29011d55250",
     "40af7cdcbe507acad47a5a62025743ad3ddc6ab93b77b21363aa1c1d641047c9", QosClass::kBestEffort,
     CgroupDriver::kCgroupfs},
    {13, "068e8fa0-9213-11e7-a01f-507b9d4141fa",
     "40af7cdcbe507acad47a5a62025743ad3ddc6ab93b77b21363aa1c1d641047c9", QosClass::kGuaranteed,
     CgroupDriver::kCgroupfs},
    {14, "068e8fa0-9213-11e7-a01f-507b9d4141fa",
     "81e5c2990803c383229c9680ce964738d5e566d97f5bd436ac34808d2ec75d5f", QosClass::kGuaranteed,
     CgroupDriver::kCgroupfs},
    {15, "068e8fa0-9213-11e7-a01f-507b9d4141fa",  // crio-conmon-<id>: the monitor's cgroup
     "81e5c2990803c383229c9680ce964738d5e566d97f5bd436ac34808d2ec75d5f", QosClass::kGuaranteed,
     CgroupDriver::kCgroupfs},
    {16, "01042b28-179d-446a-954a-7266557e12cd",
     "22f44d2a517778590e2d8bcafafe501f79e8a509e5b6de70b7700c4d37722bce", QosClass::kBurstable,
     CgroupDriver::kCgroupfs},
    {17, "4a163a05-439d-484b-8e53-2968bc15824f",
     "cde6dfaf5007ed65aad2d6aed72af91b0f3d95813492f773286e29ae145d20f4", QosClass::kBurstable,
     CgroupDriver::kCgroupfs},
    {18, "dde1244b-5bb5-4297-b544-85f3bc0d80bf",
     "acb62391578595ec849d87d8556369cee7f935f0425097fd5f870df0e8aabd3c", QosClass::kBurstable,
     CgroupDriver::kSystemd},
    {19, "c6a7bc8c-2ae5-4b89-a872-4c5a250d5ac8",
     "0f76e495864f2ec6f05be687d1375e2754b1ffc6265b4f7fae497aad46952205", QosClass::kBestEffort,
     CgroupDriver::kSystemd},
    {20, "7260904bbd08e72e4dff95d9fccd2ee8",
     "d36686f9785534531160dc936aec9d711a26eb37f4fc7752a2ae27d0a24345c1", QosClass::kBurstable,
     CgroupDriver::kSystemd},
    {21, "b53dfa9e2dc9b890f7fadb2770857b03",
     "bb959773d06ad1a07d469bced637bbc49b6f8573c493fd0548d7f5810eb3e5a8", QosClass::kBurstable,
     CgroupDriver::kCgroupfs},
    {22, "123", "a4fdf2f34a84387639c1e763e50f114dd9374585d4dc287a6ae72ee8b762790e",
     QosClass::kBurstable, CgroupDriver::kCgroupfs},
};

// Lines are "<string><TAB># <source>"; the string is a /proc/PID/cgroup line or a bare path.
TEST(KubepodsTest, EveryRealPathInKubepodsPathsTxt) {
  REQUIRE_REALWORLD();
  std::string text = Fixture("kubepods_paths.txt");
  std::vector<std::string> paths;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    if (line.empty() || line[0] == '#') continue;
    std::string s = line.substr(0, line.find('\t'));
    if (s[0] == '/') {
      paths.push_back(s);
    } else {
      auto e = ParseProcCgroup(s);
      ASSERT_TRUE(e.ok()) << e.status().message();
      ASSERT_EQ(e->size(), 1u);
      paths.push_back((*e)[0].path);
    }
  }
  ASSERT_EQ(paths.size(), std::size(kKubeWant));
  for (const KubeWant& w : kKubeWant) {
    const std::string& p = paths[w.line - 1];
    KubeIdentity k = ParseKubepodsPath(p);
    EXPECT_TRUE(k.in_kubepods) << p;
    EXPECT_EQ(k.pod_uid, w.pod_uid) << "line " << w.line << ": " << p;
    EXPECT_EQ(k.container_id, w.container_id) << "line " << w.line << ": " << p;
    EXPECT_EQ(QosClassName(k.qos), QosClassName(w.qos)) << "line " << w.line << ": " << p;
    EXPECT_EQ(CgroupDriverName(k.driver), CgroupDriverName(w.driver)) << "line " << w.line;
  }
}

// Elastic's shared APM spec states the expected containerId/podId of each groupLine.
TEST(KubepodsTest, ApmAgentJsonSpec) {
  REQUIRE_REALWORLD();
  rapidjson::Document doc;
  doc.Parse(Fixture("apm-agent-go__json-specs_cgroup_parsing.json").c_str());
  ASSERT_FALSE(doc.HasParseError());
  int cases = 0;
  for (auto& m : doc.GetObject()) {
    const auto& c = m.value;
    auto e = ParseProcCgroup(c["groupLine"].GetString());
    ASSERT_TRUE(e.ok()) << e.status().message();
    KubeIdentity k = ParseKubepodsPath((*e)[0].path);
    std::string want_cid = c["containerId"].IsNull() ? "" : c["containerId"].GetString();
    std::string want_pod = c["podId"].IsNull() ? "" : c["podId"].GetString();
    EXPECT_EQ(k.container_id, want_cid) << m.name.GetString();
    EXPECT_EQ(k.pod_uid, want_pod) << m.name.GetString();
    EXPECT_EQ(k.in_kubepods, !want_pod.empty()) << m.name.GetString();
    ++cases;
  }
  EXPECT_EQ(cases, 4);
}

TEST(KubepodsTest, NonKubernetesPaths) {
  KubeIdentity k = ParseKubepodsPath("/");
  EXPECT_FALSE(k.in_kubepods);
  EXPECT_TRUE(k.container_id.empty());
  k = ParseKubepodsPath("/kubepods/burstable");  // the QoS level cgroup itself
  EXPECT_TRUE(k.in_kubepods);
  EXPECT_EQ(k.qos, QosClass::kBurstable);
  EXPECT_TRUE(k.pod_uid.empty());
  EXPECT_EQ(ParseKubepodsPath("/kubepods/pod1234-ab").qos, QosClass::kGuaranteed);
  EXPECT_TRUE(
      ParseKubepodsPath("/user.slice/user-1000.slice/session-3.scope").container_id.empty());
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
  c->pid = test::SpawnWaitingShell(extra, env, &c->stdin_fd);
  ASSERT_GT(c->pid, 0);
}

std::string Dump(const TfTask& t) {
  std::string s = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", t.pid, t.comm, t.job, t.label,
                              t.address, t.config.source, t.cgroup_path, t.kube.pod_uid,
                              t.kube.container_id, t.pod_name, t.num_threads);
  for (const auto& [job, hosts] : t.config.cluster.jobs) {
    s += "|" + job;
    for (const auto& h : hosts) s += fmt::format(",{}={}", h.index, h.address);
  }
  for (const CgroupEntry& e : t.cgroups) s += "|" + e.path;
  return s;
}

TEST(DiscoveryLiveTest, ChildWithTfConfigAndSecretAndChildWithFlags) {
  const std::string secret_value = "s3cr3t-" + std::to_string(::getpid()) + "-zz";
  const std::string tf_config =
      // Unusual indexes: a whole-/proc scan merges processes claiming the same task, and other
      // tests (run in parallel by ctest) start ps:0/ps:1/worker:0 jobs of their own.
      R"({"cluster":{"ps":["127.0.0.1:2222","127.0.0.1:2223","127.0.0.1:2224","127.0.0.1:2225","127.0.0.1:2226","127.0.0.1:2227","127.0.0.1:2228","127.0.0.1:2229","127.0.0.1:2230","127.0.0.1:2231"],"worker":["127.0.0.1:2240","127.0.0.1:2241","127.0.0.1:2242","127.0.0.1:2243","127.0.0.1:2244","127.0.0.1:2245","127.0.0.1:2246","127.0.0.1:2247"]},)"
      R"("task":{"type":"ps","index":9}})";
  Child env_child, flags_child;
  // The secret sits before TF_CONFIG, and a look-alike name shares its prefix.
  SpawnSh(&env_child, {"tf_env_task"},
          {"PATH=/usr/bin:/bin", "TFDIAG_SECRET=" + secret_value,
           "TF_CONFIG_SHADOW=" + secret_value, "TF_CONFIG=" + tf_config});
  SpawnSh(&flags_child,
          {"tf_flags_task", "--job_name=worker", "--task_index", "7",
           "--ps_hosts=127.0.0.1:2222,127.0.0.1:2223,127.0.0.1:2224,127.0.0.1:2225,127.0.0.1:2226,"
           "127.0.0.1:2227,127.0.0.1:2228,127.0.0.1:2229,127.0.0.1:2230,127.0.0.1:2231",
           "--worker_hosts=127.0.0.1:2240,127.0.0.1:2241,127.0.0.1:2242,127.0.0.1:2243,127.0.0.1:"
           "2244,127.0.0.1:2245,127.0.0.1:2246,127.0.0.1:2247"},
          {"PATH=/usr/bin:/bin", "TFDIAG_SECRET=" + secret_value});

  // SpawnWaitingShell returns once each shell runs: their cmdline and environ are final.
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
  std::string seen;
  for (const TfTask& t : r->tasks) seen += Dump(t) + "\n";
  for (const std::string& w : r->warnings) seen += "warning: " + w + "\n";
  ASSERT_NE(ps, nullptr) << seen;
  ASSERT_NE(worker, nullptr) << seen;
  EXPECT_EQ(ps->label, "ps:9");
  EXPECT_EQ(ps->config.source, "TF_CONFIG");
  EXPECT_EQ(ps->address, "127.0.0.1:2231");
  EXPECT_EQ(ps->comm, "sh");
  EXPECT_EQ(ps->config.cluster.NumTasks("worker"), 8);
  EXPECT_EQ(worker->label, "worker:7");
  EXPECT_EQ(worker->config.source, "flags");
  EXPECT_EQ(worker->address, "127.0.0.1:2247");
  EXPECT_EQ(worker->config.cluster.NumTasks("ps"), 10);
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
