// Tests of collectors/procfs/cgroup_reader (kubepods: discovery_test.cc): the real cgroup fixtures
// in
// ../shared/realworld/cgroup (read in place), a cgroup v2 node laid out in a temporary root, and
// a REAL cgroup v1 tree created under /sys/fs/cgroup (root only) with a throttled child.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "collectors/discovery/discovery.h"
#include "collectors/procfs/cgroup_reader.h"
#include "collectors/procfs/kubepods.h"
#include "collectors/procfs/proc_reader.h"
#include "tests/test_util.h"

namespace tfdiag {
namespace {

using test::ReadFile;
using test::TempDir;
using test::WriteFile;

using test::SharedRealworld;
bool IsDir(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
#define REQUIRE_REALWORLD() TFDIAG_REQUIRE_REALWORLD("cgroup")

std::string Fixture(const std::string& name) { return ReadFile(SharedRealworld("cgroup/" + name)); }

void MkdirP(const std::string& dir) {
  ASSERT_EQ(std::system(("mkdir -p '" + dir + "'").c_str()), 0) << dir;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(CgroupFixtureTest, ProcCgroupFiles) {
  REQUIRE_REALWORLD();
  auto a = ParseProcCgroup(Fixture("automaxprocs__proc_cgroups_cgroup"));
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[1].hierarchy_id, 2);
  EXPECT_EQ((*a)[1].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ((*a)[1].path, "/docker");
  EXPECT_EQ((*a)[2].path, "/");

  auto v2 = ParseProcCgroup(Fixture("automaxprocs__proc_v2_cgroup-subdir"));
  ASSERT_TRUE(v2.ok());
  ASSERT_EQ(v2->size(), 1u);
  EXPECT_TRUE((*v2)[0].v2());
  EXPECT_EQ((*v2)[0].path, "/Example");

  auto bad = ParseProcCgroup(Fixture("automaxprocs__proc_invalid-cgroup_cgroup"));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "line 2")) << bad.status().message();
  EXPECT_TRUE(Contains(bad.status().message(), "'invalid-line:'")) << bad.status().message();

  auto docker = ParseProcCgroup(Fixture("esm_docker__proc_985_cgroup"));
  ASSERT_TRUE(docker.ok());
  ASSERT_EQ(docker->size(), 10u);
  for (const CgroupEntry& e : *docker) {
    EXPECT_EQ(e.path, "/docker/b29faf21b7eff959f64b4192c34d5d67a707fe8561e9eaa608cb27693fba4242");
    EXPECT_EQ(ParseKubepodsPath(e.path).container_id,
              "b29faf21b7eff959f64b4192c34d5d67a707fe8561e9eaa608cb27693fba4242");
    EXPECT_FALSE(ParseKubepodsPath(e.path).in_kubepods);
  }
  EXPECT_EQ((*docker)[8].controllers, std::vector<std::string>{"cpu"});

  for (const char* name :
       {"esm_docker__proc_312_cgroup", "process-exporter__fixtures_14804_cgroup"}) {
    auto e = ParseProcCgroup(Fixture(name));  // v2 docker scope, with and without a final newline
    ASSERT_TRUE(e.ok()) << name;
    ASSERT_EQ(e->size(), 1u);
    EXPECT_TRUE((*e)[0].v2());
    EXPECT_EQ(ParseKubepodsPath((*e)[0].path).container_id.size(), 64u) << name;
  }
  EXPECT_EQ(ParseKubepodsPath((*ParseProcCgroup(Fixture("esm_docker__proc_312_cgroup")))[0].path)
                .container_id,
            "1c8fa019edd4b9d4b2856f4932c55929c5c118c808ed5faee9a135ca6e84b039");

  auto hybrid = ParseProcCgroup(Fixture("esm_ubuntu1804__proc_3757_cgroup"));
  ASSERT_TRUE(hybrid.ok());
  ASSERT_EQ(hybrid->size(), 13u);
  EXPECT_EQ((*hybrid)[11].controllers, std::vector<std::string>{"name=systemd"});
  EXPECT_TRUE((*hybrid)[12].v2());
  EXPECT_EQ((*hybrid)[12].path, "/system.slice/networkd-dispatcher.service");

  // cgroup namespace: a path above our namespace root parses, but cannot be resolved.
  auto ns = ParseProcCgroup(Fixture("esm_docker2__proc_2233801_cgroup"));
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ((*ns)[0].path, "/../../user-1000.slice/session-520.scope");
  CgroupMount unified{true, "/", "/sys/fs/cgroup", {}};
  auto r = ResolveCgroupCpu(*ns, {unified}, "/");
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Contains(r.status().message(), "outside")) << r.status().message();
}

TEST(CgroupFixtureTest, MountInfo) {
  REQUIRE_REALWORLD();
  auto m = ParseMountInfo(Fixture("automaxprocs__proc_cgroups_mountinfo"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->size(), 3u);  // cpuset, cpu,cpuacct and memory; ext4/proc/sysfs/tmpfs dropped
  EXPECT_EQ((*m)[1].mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ((*m)[1].root, "/docker");
  EXPECT_EQ((*m)[1].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_FALSE((*m)[1].v2);

  auto h = ParseMountInfo(Fixture("automaxprocs__proc_v2_mountinfo-v1-v2"));
  ASSERT_TRUE(h.ok()) << h.status().message();
  ASSERT_EQ(h->size(), 14u);
  EXPECT_TRUE((*h)[0].v2);
  EXPECT_EQ((*h)[0].mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ((*h)[1].controllers, std::vector<std::string>{"name=systemd"});  // xattr dropped
  EXPECT_EQ((*h)[13].mount_point, "/sys/fs/cgroup/cpuset");

  auto esc = ParseMountInfo("9 1 0:5 / /mnt/my\\040cg rw - cgroup2 cgroup2 rw\n");
  ASSERT_TRUE(esc.ok());
  EXPECT_EQ((*esc)[0].mount_point, "/mnt/my cg");
}

TEST(CgroupFixtureTest, QuotaPeriodAndCpuMaxIncludingEdgeCases) {
  REQUIRE_REALWORLD();
  auto c = ParseCfsQuotaPeriod(Fixture("cadvisor__cgroup_v1_test1_cpu_cpu.cfs_quota_us"),
                               Fixture("cadvisor__cgroup_v1_test1_cpu_cpu.cfs_period_us"));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->quota_us, 20000);
  EXPECT_EQ(c->period_us, 100010);
  auto six = ParseCfsQuotaPeriod(Fixture("automaxprocs__cgroups_cpu_cpu.cfs_quota_us"),
                                 Fixture("automaxprocs__cgroups_cpu_cpu.cfs_period_us"));
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(six->quota_us, 600000);  // 6 CPUs
  EXPECT_EQ(six->period_us, 100000);
  for (const char* f : {"automaxprocs__cgroups_undefined_cpu.cfs_quota_us",
                        "esm_docker__v1_docker_container_cpu.cfs_quota_us"}) {
    auto u = ParseCfsQuotaPeriod(Fixture(f), "100000\n");
    ASSERT_TRUE(u.ok()) << f;
    EXPECT_EQ(u->quota_us, -1) << f;
  }
  auto zero = ParseCfsQuotaPeriod("600000\n",
                                  Fixture("automaxprocs__cgroups_zero-period_cpu.cfs_period_us"));
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(), "cpu.cfs_period_us: must be positive, got 0");
  auto invalid =
      ParseCfsQuotaPeriod(Fixture("automaxprocs__cgroups_invalid_cpu.cfs_quota_us"), "100000");
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.status().message(),
            "cpu.cfs_quota_us: expected an integer, got 'non-an-integer'");

  struct Want {
    const char* file;
    int64_t quota_us, period_us;
  };
  for (const Want& w : {Want{"cadvisor__cgroup_v2_test1_cpu.max", 20000, 100010},
                        Want{"cadvisor__cgroup_v2_test2_cpu.max", -1, 100010},
                        Want{"automaxprocs__cgroups_v2_set", 250000, 100000},
                        Want{"automaxprocs__cgroups_v2_unset", -1, 100000},
                        Want{"esm_docker__v2_docker_scope_cpu.max", -1, 100000}}) {
    auto q = ParseCpuMax(Fixture(w.file));
    ASSERT_TRUE(q.ok()) << w.file << ": " << q.status().message();
    EXPECT_EQ(q->quota_us, w.quota_us) << w.file;
    EXPECT_EQ(q->period_us, w.period_us) << w.file;
  }
  struct Bad {
    const char* file;
    const char* message;
  };
  for (const Bad& b :
       {Bad{"automaxprocs__cgroups_v2_only-max",
            "cpu.max: expected '<quota|max> <period>' (2 fields), got 1 field"},
        Bad{"automaxprocs__cgroups_v2_too-many-fields",
            "cpu.max: expected '<quota|max> <period>' (2 fields), got 3 fields"},
        Bad{"automaxprocs__cgroups_v2_zero-period", "cpu.max: period: must be positive, got 0"},
        Bad{"automaxprocs__cgroups_v2_invalid-max",
            "cpu.max: quota: expected 'max' or a positive integer (us), got 'asdf'"}}) {
    auto q = ParseCpuMax(Fixture(b.file));
    ASSERT_FALSE(q.ok()) << b.file;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(q.status().message(), b.message) << b.file;
  }
}

TEST(CgroupFixtureTest, SharesWeightCpusetAndCpuStat) {
  REQUIRE_REALWORLD();
  EXPECT_EQ(ParseIntFile(Fixture("cadvisor__cgroup_v1_test1_cpu_cpu.shares"), "cpu.shares").value(),
            1025);
  EXPECT_EQ(ParseIntFile(Fixture("cadvisor__cgroup_v2_test1_cpu.weight"), "cpu.weight").value(),
            50);
  for (const char* f : {"cadvisor__cgroup_v1_test1_cpuset_cpuset.cpus",
                        "cadvisor__cgroup_v2_test1_cpuset.cpus.effective"}) {
    EXPECT_EQ(ParseCpuList(Fixture(f)).value(), (std::vector<int>{0, 1, 2, 3, 4, 5})) << f;
  }

  auto v1 = ParseCpuStat(Fixture("esm_docker__v1_docker_container_cpu.stat"));
  ASSERT_TRUE(v1.ok());
  EXPECT_EQ(v1->nr_periods, 769021);
  EXPECT_EQ(v1->nr_throttled, 1046);
  EXPECT_EQ(v1->throttled_ns, 352597023453);  // throttled_time is already ns in v1
  EXPECT_EQ(v1->usage_ns, std::nullopt);

  auto v2 = ParseCpuStat(Fixture("esm_docker__v2_docker_scope_cpu.stat"));
  ASSERT_TRUE(v2.ok());
  EXPECT_EQ(v2->usage_ns, 26772130245LL * 1000);
  EXPECT_EQ(v2->user_ns, 20979069928LL * 1000);
  EXPECT_EQ(v2->system_ns, 5793060316LL * 1000);
  EXPECT_EQ(v2->nr_periods, 1);
  EXPECT_EQ(v2->nr_throttled, 4);
  EXPECT_EQ(v2->throttled_ns, 10000);  // throttled_usec 10
  EXPECT_EQ(v2->nr_bursts, std::nullopt);

  auto newer = ParseCpuStat(Fixture("esm_docker2__v2_session_scope_cpu.stat"));
  ASSERT_TRUE(newer.ok());
  EXPECT_EQ(newer->usage_ns, 3611347518LL * 1000);
  EXPECT_EQ(newer->nr_throttled, 0);  // known zero
  EXPECT_EQ(newer->throttled_ns, 0);
  EXPECT_EQ(newer->nr_bursts, 0);
  EXPECT_EQ(newer->burst_ns, 0);

  auto no_cpu_ctrl = ParseCpuStat(Fixture("esm_ubuntu1804__unified_cpu.stat"));
  ASSERT_TRUE(no_cpu_ctrl.ok());
  EXPECT_EQ(no_cpu_ctrl->usage_ns, 184713000);
  EXPECT_EQ(no_cpu_ctrl->nr_periods, std::nullopt);  // unknown, not 0
  EXPECT_EQ(no_cpu_ctrl->nr_throttled, std::nullopt);
  EXPECT_EQ(no_cpu_ctrl->throttled_ns, std::nullopt);

  EXPECT_EQ(ParseCpuStat("nr_throttled lots\n").status().message(),
            "cpu.stat: nr_throttled: not a number: 'lots'");
}

// The hybrid layout of an Ubuntu 18.04 node: cpu,cpuacct as v1, cgroup2 at .../unified.
TEST(CgroupFixtureTest, HybridNodeReadsV1CpuController) {
  REQUIRE_REALWORLD();
  TempDir root;
  MkdirP(root.File("proc/3757"));
  MkdirP(root.File("proc/self"));
  WriteFile(root.File("proc/3757/cgroup"), Fixture("esm_ubuntu1804__proc_3757_cgroup"));
  WriteFile(root.File("proc/self/mountinfo"), Fixture("automaxprocs__proc_v2_mountinfo-v1-v2"));
  std::string cpu = root.File("sys/fs/cgroup/cpu,cpuacct/system.slice/networkd-dispatcher.service");
  MkdirP(cpu);
  WriteFile(cpu + "/cpu.cfs_quota_us", Fixture("automaxprocs__cgroups_cpu_cpu.cfs_quota_us"));
  WriteFile(cpu + "/cpu.cfs_period_us", Fixture("automaxprocs__cgroups_cpu_cpu.cfs_period_us"));
  WriteFile(cpu + "/cpu.shares", Fixture("cadvisor__cgroup_v1_test1_cpu_cpu.shares"));
  WriteFile(cpu + "/cpu.stat", Fixture("esm_docker__v1_docker_container_cpu.stat"));
  WriteFile(cpu + "/cpuacct.usage", "123456789\n");
  MkdirP(root.File("sys/fs/cgroup/cpuset"));  // the process's cpuset is "/"
  WriteFile(root.File("sys/fs/cgroup/cpuset/cpuset.cpus"),
            Fixture("cadvisor__cgroup_v1_test1_cpuset_cpuset.cpus"));

  auto c = ReadCgroupCpu(3757, root.path());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->version, 1);
  EXPECT_EQ(c->path, "/system.slice/networkd-dispatcher.service");
  EXPECT_EQ(c->dir, cpu);
  EXPECT_EQ(c->quota_us, 600000);
  EXPECT_EQ(c->period_us, 100000);
  EXPECT_DOUBLE_EQ(c->cpu_limit, 6.0);
  EXPECT_DOUBLE_EQ(c->effective_cpu_limit, 6.0);
  EXPECT_EQ(c->shares, 1025);
  EXPECT_EQ(c->weight, std::nullopt);
  EXPECT_EQ(c->cpuset_count, 6);
  EXPECT_EQ(c->stat.throttled_ns, 352597023453);
  EXPECT_EQ(c->usage_ns, 123456789);
  EXPECT_EQ(ReadCgroupCpu(3758, root.path()).status().code(), StatusCode::kNotFound);
}

// A cgroup v2 node (systemd driver, containerd) laid out under a temporary root.
TEST(CgroupV2EndToEndTest, ContainerInBurstablePod) {
  REQUIRE_REALWORLD();
  TempDir root;
  const std::string uid = "5f0c7a8e-2b1d-4c3e-9f4a-6b7c8d9e0f12";
  const std::string cid = "9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f30211203f4e5d6c7b8a9";
  std::string pod_rel = "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                        std::string("5f0c7a8e_2b1d_4c3e_9f4a_6b7c8d9e0f12") + ".slice";
  std::string rel = pod_rel + "/cri-containerd-" + cid + ".scope";
  MkdirP(root.File("proc/4242"));
  MkdirP(root.File("proc/self"));
  WriteFile(root.File("proc/4242/cgroup"), "0::" + rel + "\n");
  WriteFile(root.File("proc/self/mountinfo"),
            "22 1 0:21 / /proc rw - proc proc rw\n"
            "25 1 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 "
            "cgroup2 rw,nsdelegate,memory_recursiveprot\n");
  std::string top = root.File("sys/fs/cgroup");
  std::string pod = top + pod_rel, leaf = top + rel;
  MkdirP(leaf);
  WriteFile(top + "/cpuset.cpus.effective", "0-7\n");
  WriteFile(pod + "/cpuset.cpus.effective", "2-5\n");  // the leaf has none: walk up
  WriteFile(pod + "/cpu.max", "300000 100000\n");
  WriteFile(leaf + "/cpu.max", Fixture("cadvisor__cgroup_v2_test1_cpu.max"));
  WriteFile(leaf + "/cpu.weight", Fixture("cadvisor__cgroup_v2_test1_cpu.weight"));
  WriteFile(leaf + "/cpu.stat", Fixture("esm_docker2__v2_session_scope_cpu.stat"));

  auto c = ReadCgroupCpu(4242, root.path());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->version, 2);
  EXPECT_EQ(c->path, rel);
  EXPECT_EQ(c->dir, leaf);
  EXPECT_EQ(c->quota_us, 20000);
  EXPECT_EQ(c->period_us, 100010);
  EXPECT_DOUBLE_EQ(c->cpu_limit, 20000.0 / 100010);
  EXPECT_DOUBLE_EQ(c->effective_cpu_limit, 20000.0 / 100010);  // tighter than the pod's 3.0
  EXPECT_EQ(c->cpuset, (std::vector<int>{2, 3, 4, 5}));
  EXPECT_EQ(c->cpuset_count, 4);
  EXPECT_EQ(c->weight, 50);
  EXPECT_EQ(c->shares, std::nullopt);
  EXPECT_EQ(c->usage_ns, 3611347518LL * 1000);
  EXPECT_EQ(c->stat.nr_throttled, 0);
  KubeIdentity k = ParseKubepodsPath(c->path);
  EXPECT_EQ(k.pod_uid, uid);
  EXPECT_EQ(k.container_id, cid);
  EXPECT_EQ(k.qos, QosClass::kBurstable);
  EXPECT_EQ(k.driver, CgroupDriver::kSystemd);

  // Unlimited container: the pod's limit is the effective one.
  WriteFile(leaf + "/cpu.max", Fixture("automaxprocs__cgroups_v2_unset"));
  WriteFile(leaf + "/cpu.stat", Fixture("esm_ubuntu1804__unified_cpu.stat"));
  c = ReadCgroupCpu(4242, root.path());
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->quota_us, -1);
  EXPECT_EQ(c->cpu_limit, 0);
  EXPECT_DOUBLE_EQ(c->effective_cpu_limit, 3.0);
  EXPECT_EQ(c->stat.nr_throttled, std::nullopt);  // no throttling keys: unknown
  EXPECT_EQ(c->usage_ns, 184713000);

  // A malformed cpu.max names the file.
  WriteFile(leaf + "/cpu.max", Fixture("automaxprocs__cgroups_v2_too-many-fields"));
  c = ReadCgroupCpu(4242, root.path());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            leaf + "/cpu.max: cpu.max: expected '<quota|max> <period>' (2 fields), got 3 fields");

  // The container exited and its cgroup is gone.
  ASSERT_EQ(std::system(("rm -rf '" + leaf + "'").c_str()), 0);
  EXPECT_EQ(ReadCgroupCpu(4242, root.path()).status().code(), StatusCode::kNotFound);
}

// ---- A real cgroup v1 tree (root only) ----

// Creates cgroup directories and removes them leaf-first on destruction.
class CgroupTree {
 public:
  ~CgroupTree() {
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
      for (int i = 0; i < 50 && ::rmdir(it->c_str()) != 0 && errno == EBUSY; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
  // mkdir each level of `rel` under `mount`; for cpuset, copy cpus and mems from the parent.
  bool Make(const std::string& mount, const std::string& rel, bool cpuset) {
    std::string dir = mount;
    size_t pos = 1;
    while (pos <= rel.size()) {
      size_t slash = rel.find('/', pos);
      std::string parent = dir;
      dir = mount + rel.substr(0, slash);
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return false;
      dirs_.push_back(dir);
      if (cpuset) {
        WriteFile(dir + "/cpuset.cpus", ReadFile(parent + "/cpuset.cpus"));
        WriteFile(dir + "/cpuset.mems", ReadFile(parent + "/cpuset.mems"));
      }
      if (slash == std::string::npos) break;
      pos = slash + 1;
    }
    return true;
  }

 private:
  std::vector<std::string> dirs_;
};

// A process killed (SIGKILL) and reaped on destruction.
struct Child {
  pid_t pid = -1;
  int go_fd = -1;  // write a byte to release it
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    if (go_fd >= 0) ::close(go_fd);
  }
};

// Forks a child that waits for a byte on a pipe, then spins two threads until killed.
void StartSpinner(Child* c) {
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  c->pid = ::fork();
  ASSERT_GE(c->pid, 0);
  if (c->pid == 0) {
    ::close(p[1]);
    char b;
    if (::read(p[0], &b, 1) != 1) ::_exit(1);
    std::thread t1([] {
      for (volatile uint64_t i = 0;; ++i) {
      }
    });
    std::thread t2([] {
      for (volatile uint64_t i = 0;; ++i) {
      }
    });
    t1.join();
    ::_exit(0);
  }
  ::close(p[0]);
  c->go_fd = p[1];
}

// Spawns `sh -c 'read x'` (blocked on a pipe) with the given environment.
void StartSh(Child* c, std::vector<std::string> env) {
  c->pid = test::SpawnWaitingShell({}, env, &c->go_fd);
  ASSERT_GT(c->pid, 0);
}

void MoveInto(const std::string& dir, pid_t pid) {
  WriteFile(dir + "/cgroup.procs", std::to_string(pid) + "\n");
  std::string procs = ReadFile(dir + "/cgroup.procs");
  ASSERT_TRUE(Contains("\n" + procs, "\n" + std::to_string(pid) + "\n")) << dir << ": " << procs;
}

TEST(CgroupLiveTest, RealV1CgroupQuotaKubepodsAndThrottling) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create cgroups";
  const std::string cpu_mount = "/sys/fs/cgroup/cpu";
  struct stat st;
  if (::stat((cpu_mount + "/cpu.cfs_quota_us").c_str(), &st) != 0) {
    GTEST_SKIP() << "no cgroup v1 cpu controller at " << cpu_mount;
  }
  auto mounts = ReadMountInfo();
  ASSERT_TRUE(mounts.ok()) << mounts.status().message();
  const std::string uid = "3c9a4f1e-7b2d-4e8f-a1c6-5d0b9e2f7a34";
  const std::string cid = "4f6e2d1c0b9a8877665544332211ffeeddccbbaa99887766554433221100aabb";
  const std::string rel =
      "/tfdiag_test_" + std::to_string(::getpid()) + "/kubepods/burstable/pod" + uid + "/" + cid;
  CgroupTree tree;
  ASSERT_TRUE(tree.Make(cpu_mount, rel, false))
      << "mkdir under " << cpu_mount << ": " << strerror(errno);
  std::string cpu_leaf = cpu_mount + rel;
  bool have_acct =
      IsDir("/sys/fs/cgroup/cpuacct") && ::stat("/sys/fs/cgroup/cpuacct/cpuacct.usage", &st) == 0;
  if (have_acct) {
    ASSERT_TRUE(tree.Make("/sys/fs/cgroup/cpuacct", rel, false));
  }
  bool have_cpuset = ::stat("/sys/fs/cgroup/cpuset/cpuset.cpus", &st) == 0;
  if (have_cpuset) {
    ASSERT_TRUE(tree.Make("/sys/fs/cgroup/cpuset", rel, true));
  }
  WriteFile(cpu_leaf + "/cpu.cfs_period_us", "100000");
  WriteFile(cpu_leaf + "/cpu.cfs_quota_us", "100000");

  // Declared after `tree`: children die before the directories are removed.
  Child spinner;
  StartSpinner(&spinner);
  for (const std::string& m :
       {cpu_mount, std::string("/sys/fs/cgroup/cpuacct"), std::string("/sys/fs/cgroup/cpuset")}) {
    if (IsDir(m + rel)) MoveInto(m + rel, spinner.pid);
  }

  auto c = ReadCgroupCpu(spinner.pid);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->version, 1);
  EXPECT_EQ(c->path, rel);
  EXPECT_EQ(c->dir, cpu_leaf);
  EXPECT_EQ(c->quota_us, 100000);
  EXPECT_EQ(c->period_us, 100000);
  EXPECT_DOUBLE_EQ(c->cpu_limit, 1.0);
  EXPECT_DOUBLE_EQ(c->effective_cpu_limit, 1.0);
  EXPECT_EQ(c->shares, 1024);
  EXPECT_EQ(c->stat.nr_throttled, 0);
  if (have_cpuset) {
    auto parent = ParseCpuList(ReadFile("/sys/fs/cgroup/cpuset/cpuset.cpus"));
    EXPECT_EQ(c->cpuset, parent.value());
    EXPECT_EQ(c->cpuset_count, static_cast<int>(parent->size()));
  }
  KubeIdentity k = ParseKubepodsPath(c->path);
  EXPECT_EQ(k.pod_uid, uid);
  EXPECT_EQ(k.container_id, cid);
  EXPECT_EQ(k.qos, QosClass::kBurstable);
  EXPECT_EQ(k.driver, CgroupDriver::kCgroupfs);
  std::cout << "[ live v1 ] " << c->dir << ": quota " << c->quota_us << " us / period "
            << c->period_us << " us = " << c->cpu_limit << " CPU, cpuset " << c->cpuset_count
            << " CPUs\n";

  // A tenth of a CPU for two spinning threads: the kernel throttles them as soon as they use
  // 10 ms of a 100 ms period. Half a CPU (before) was more than two threads got beside two
  // spinning processes on this 2-core machine (issue 47: 0.22 CPU over 20 s, never throttled);
  // and the test waits for the throttling (at most 20 s) instead of a fixed 1.2 s, bounding the
  // usage by the time it waited.
  WriteFile(cpu_leaf + "/cpu.cfs_quota_us", "10000");
  const auto started = std::chrono::steady_clock::now();
  ASSERT_EQ(::write(spinner.go_fd, "g", 1), 1);
  for (int i = 0; i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    c = ReadCgroupCpu(spinner.pid);
    if (c.ok() && c->stat.nr_throttled.value_or(0) > 0 && c->stat.nr_periods.value_or(0) > 5) {
      break;
    }
  }
  const double waited_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  c = ReadCgroupCpu(spinner.pid);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->cpu_limit, 0.1);
  ASSERT_TRUE(c->stat.nr_throttled.has_value());
  EXPECT_GT(*c->stat.nr_throttled, 0) << "not throttled in " << waited_s << " s";
  EXPECT_GT(c->stat.nr_periods.value_or(0), 5);
  EXPECT_GT(c->stat.throttled_ns.value_or(0), 0);
  if (have_acct) {
    ASSERT_TRUE(c->usage_ns.has_value());
    // Throttled: at least one period's quota used; the quota held it to a tenth of a CPU over
    // the time waited (0.2 s of slack: the bandwidth slices the CPUs draw ahead), far under the
    // two threads' 2 CPUs.
    EXPECT_GE(*c->usage_ns, 10'000'000);
    EXPECT_LT(*c->usage_ns, int64_t((0.1 * waited_s + 0.2) * 1e9)) << waited_s << " s";
  }
  auto threads = ReadThreads(spinner.pid);
  ASSERT_TRUE(threads.ok());
  EXPECT_EQ(threads->size(), 3u);  // main + 2 spinners
  std::cout << "[ live v1 ] after " << waited_s
            << " s of 2 spinning threads at 0.1 CPU: nr_periods " << c->stat.nr_periods.value_or(-1)
            << ", nr_throttled " << c->stat.nr_throttled.value_or(-1) << ", throttled "
            << c->stat.throttled_ns.value_or(-1) << " ns, usage " << c->usage_ns.value_or(-1)
            << " ns\n";

  // Discovery sees a TF task in that cgroup as a Burstable pod's container.
  Child task;
  StartSh(&task, {"PATH=/usr/bin:/bin",
                  R"(TF_CONFIG={"cluster":{"ps":["p0:2222"],"worker":["w0:2222","w1:2222"]},)"
                  R"("task":{"type":"worker","index":1}})"});
  MoveInto(cpu_leaf, task.pid);
  DiscoveryOptions opt;
  opt.pids = {task.pid};
  auto found = DiscoverTfTasks(opt);
  ASSERT_TRUE(found.ok()) << found.status().message();
  ASSERT_EQ(found->tasks.size(), 1u);
  const TfTask& t = found->tasks[0];
  EXPECT_EQ(t.label, "worker:1");
  EXPECT_EQ(t.address, "w1:2222");
  EXPECT_EQ(t.cgroup_path, rel);
  EXPECT_EQ(t.kube.pod_uid, uid);
  EXPECT_EQ(t.kube.container_id, cid);
  EXPECT_EQ(t.kube.qos, QosClass::kBurstable);
  EXPECT_EQ(t.pod_name, "");  // same root file system as ours: not a container
}

}  // namespace
}  // namespace tfdiag
