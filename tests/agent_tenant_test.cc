// Issue 37 items 3 and 4, as a tenant would try them: a workload that runs as an unprivileged
// user in a user and mount namespace of its own (unshare -rm) bind-mounts a root-only file over
// its etc/hostname and its service account namespace file; one whose etc is a FUSE file system
// that never answers. The agent must publish neither secret, must keep sampling, and must stop
// promptly on SIGTERM (a thread waiting on FUSE in D state would keep the process from exiting,
// even on SIGKILL).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "collectors/attach/recorder.h"
#include "collectors/discovery/discovery.h"
#include "collectors/procfs/task_mounts.h"
#include "tests/agent_util.h"
#include "tests/test_util.h"

extern char** environ;

namespace tfdiag::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kSecret[] = "host-secret-7f3a";  // a valid DNS name: only the checks may stop it
constexpr char kNamespaceRel[] = "var/run/secrets/kubernetes.io/serviceaccount/namespace";
constexpr char kTfConfig[] =
    "TF_CONFIG={\"cluster\":{\"evaluator\":[\"127.0.0.1:29611\"]},\"task\":{\"type\":"
    "\"evaluator\",\"index\":0}}";
// Chroots into argv[1], says "ready", then blocks reading stdin.
constexpr char kChrootScript[] =
    "import os, sys\n"
    "os.chroot(sys.argv[1]); os.chdir('/')\n"
    "os.write(1, b'ready\\n')\n"
    "os.read(0, 1)\n";

// A spawned process with a pipe on its stdin (closed to release it) and one on its stdout.
struct Spawned {
  pid_t pid = -1;
  int in = -1, out = -1;
  Spawned(std::vector<std::string> args, std::vector<std::string> env) {
    int i[2], o[2];
    if (::pipe(i) != 0 || ::pipe(o) != 0) return;
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, i[0], 0);
    posix_spawn_file_actions_adddup2(&fa, o[1], 1);
    posix_spawn_file_actions_addclose(&fa, i[1]);
    posix_spawn_file_actions_addclose(&fa, o[0]);
    if (posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), envp.data()) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
    ::close(i[0]);
    ::close(o[1]);
    in = i[1], out = o[0];
  }
  std::string Line() {  // one line of its stdout ("" at EOF)
    std::string s;
    char c;
    while (::read(out, &c, 1) == 1 && c != '\n') s += c;
    return s;
  }
  ~Spawned() {
    if (in >= 0) ::close(in);
    if (out >= 0) ::close(out);
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }
};

// A container-like root under a directory every user may traverse, and a root-only secret.
struct TenantRoot {
  TempDir dir;
  std::string root = dir.File("root");
  std::string secret = dir.File("shadow");
  TenantRoot() {
    ::chmod(dir.path().c_str(), 0755);
    fs::create_directories(root + "/etc");
    fs::create_directories(fs::path(root + "/" + kNamespaceRel).parent_path());
    WriteFile(root + "/etc/hostname", "myjob-evaluator-0\n");  // what the runtime put there
    WriteFile(root + "/" + kNamespaceRel, "team-a");
    WriteFile(secret, std::string(kSecret) + "\n");
    ::chmod(secret.c_str(), 0600);
  }
};

struct Identity {
  std::string pod, ns, warnings;
  int samples = 0;
};

Identity RecordIdentity(pid_t pid) {
  Identity id;
  RecordOptions o;
  o.discovery.pids = {pid};
  o.duration_s = 0.4;
  o.interval_s = 0.1;
  o.bpf = false;
  o.keep_rows = false;
  o.on_figures = [&](const LiveFigures& f) {
    ++id.samples;
    for (const LiveTaskFigures& t : f.tasks) {
      if (t.pid == pid) id.pod = t.pod, id.ns = t.namespace_;
    }
  };
  StatusOr<Capture> c = Record(o);
  if (!c.ok()) {
    id.warnings = c.status().message();
    return id;
  }
  for (const std::string& w : c->meta.warnings) id.warnings += w + "; ";
  return id;
}

#define REQUIRE_ROOT_AND(tool)                                             \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (the agent's rights)"; \
  if (::access(tool, X_OK) != 0) GTEST_SKIP() << "no " << tool

// Item 3: before, the agent opened the bind-mounted root-only file as root and published it as
// the pod and namespace labels.
TEST(AgentTenant, RootOnlyFileBindMountedInTheTenantsOwnNamespacesIsNotPublished) {
  REQUIRE_ROOT_AND("/usr/bin/unshare");
  if (::access("/usr/bin/setpriv", X_OK) != 0 || ::access("/usr/bin/python3", X_OK) != 0)
    GTEST_SKIP() << "needs setpriv and python3";
  TenantRoot r;
  const std::string ns_file = r.root + "/" + kNamespaceRel;
  Spawned task({"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
                "unshare", "-rm", "sh", "-c",
                "mount --bind \"$1\" \"$2/etc/hostname\" && mount --bind \"$1\" \"$3\" && "
                "exec python3 -c \"$4\" \"$2\"",
                "sh", r.secret, r.root, ns_file, kChrootScript},
               {"PATH=/usr/bin:/bin", kTfConfig});
  ASSERT_GT(task.pid, 0);
  const std::string ready = task.Line();
  if (ready != "ready") GTEST_SKIP() << "no unprivileged user namespace here: '" << ready << "'";
  // The tenant really sees the secret there (the attack is in place).
  StatusOr<std::vector<TaskMount>> mounts = ReadTaskMounts(task.pid);
  ASSERT_TRUE(mounts.ok()) << mounts.status().message();
  EXPECT_EQ(CoveringMounts(*mounts, "/etc/hostname").back()->mount_point, "/etc/hostname");
  StatusOr<bool> owned = MountNsOwnedByNode(task.pid);
  ASSERT_TRUE(owned.ok()) << owned.status().message();
  EXPECT_FALSE(*owned);
  // Its identity comes from its ancestor of the same cgroup (here this test, not in a container:
  // no pod name at all).
  std::string note;
  EXPECT_EQ(IdentitySource(task.pid, "/", &note), ::getpid()) << note;
  Identity id = RecordIdentity(task.pid);
  EXPECT_GE(id.samples, 3) << id.warnings;
  EXPECT_EQ(id.pod, "") << "the pod label holds the root-only file";
  EXPECT_EQ(id.ns.find("host-secret"), std::string::npos) << "the namespace holds the secret";
  EXPECT_EQ(id.warnings.find(kSecret), std::string::npos) << id.warnings;
  EXPECT_NE(id.warnings.find("mount namespace of its own user namespace"), std::string::npos)
      << id.warnings;
}

// Item 3: a root-only file bind-mounted without a user namespace (by root in the container's
// own mount namespace): read only when every user may read it.
TEST(AgentTenant, AFileOnlyRootMayReadIsNotPublished) {
  REQUIRE_ROOT_AND("/usr/bin/unshare");
  TenantRoot r;
  Spawned task({"unshare", "-m", "--propagation", "private", "sh", "-c",
                "mount --bind \"$1\" \"$2/etc/hostname\" && exec python3 -c \"$3\" \"$2\"", "sh",
                r.secret, r.root, kChrootScript},
               {"PATH=/usr/bin:/bin", kTfConfig});
  ASSERT_GT(task.pid, 0);
  ASSERT_EQ(task.Line(), "ready");
  Identity id = RecordIdentity(task.pid);
  EXPECT_EQ(id.pod, "");
  EXPECT_NE(id.warnings.find("not readable by every user (mode 600"), std::string::npos)
      << id.warnings;
  EXPECT_EQ(id.ns, "team-a") << "the namespace file the runtime put there is still read";
  // The control: the runtime's own 0644 file (no bind mount) is read.
  Spawned plain({"python3", "-c", kChrootScript, r.root}, {"PATH=/usr/bin:/bin", kTfConfig});
  ASSERT_EQ(plain.Line(), "ready");
  Identity ok = RecordIdentity(plain.pid);
  EXPECT_EQ(ok.pod, "myjob-evaluator-0") << ok.warnings;
}

int WaitExit(pid_t pid, double timeout_s) {
  const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (Clock::now() < end) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// Item 4: a FUSE etc that never answers. Before, the agent's read of etc/hostname waited in D
// state; SIGTERM ended its main thread, but the process never exited (nor on SIGKILL) until the
// FUSE server died.
TEST(AgentTenant, AHungFuseEtcIsNeverEnteredAndSigtermStillStopsTheAgent) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (to mount FUSE)";
  if (::access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no /dev/fuse";
  const std::string fuse_hang = fs::path(TFDIAG_BINARY).parent_path() / "fuse_hang";
  if (::access(fuse_hang.c_str(), X_OK) != 0) GTEST_SKIP() << "no " << fuse_hang;
  TenantRoot r;
  Spawned fuse({fuse_hang, r.root}, {"PATH=/usr/bin:/bin", kTfConfig});
  ASSERT_GT(fuse.pid, 0);
  const std::string ready = fuse.Line();
  if (ready.rfind("ready ", 0) != 0) GTEST_SKIP() << "cannot mount FUSE here";
  const pid_t task = std::atoi(ready.c_str() + 6);
  StatusOr<std::vector<TaskMount>> mounts = ReadTaskMounts(task);
  ASSERT_TRUE(mounts.ok());
  EXPECT_EQ(CoveringMounts(*mounts, "/etc/hostname").back()->fstype, "fuse");
  const int port = FreePorts(1)[0];
  TempDir out;
  const std::string err = out.File("agent.err");
  const pid_t agent =
      SpawnTfdiagChild({"attach", "--pid", std::to_string(task), "--no-bpf", "--interval", "200ms",
                        "--rescan", "1s", "--serve", fmt::format("127.0.0.1:{}", port)},
                       err);
  ASSERT_GT(agent, 0);
  std::string page;
  for (auto end = Clock::now() + std::chrono::seconds(15); Clock::now() < end;) {
    page = HttpGet(port, "/metrics");
    if (page.find("replica_type=\"evaluator\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(page.find("replica_type=\"evaluator\""), std::string::npos) << page;
  ::kill(agent, SIGTERM);
  const auto t0 = Clock::now();
  const int status = WaitExit(agent, 5);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  if (status == -1) {
    // Release whatever waits on the FUSE server, then end the agent for good.
    ::kill(fuse.pid, SIGKILL);
    ::kill(agent, SIGKILL);
    ::waitpid(agent, nullptr, 0);
  }
  EXPECT_NE(status, -1) << "the agent did not exit within 5 s of SIGTERM: "
                        << ReadFile(err).substr(0, 2000);
  EXPECT_LT(took, 3.0);
  EXPECT_NE(ReadFile(err).find("/etc is a fuse mount"), std::string::npos) << ReadFile(err);
}

}  // namespace
}  // namespace tfdiag::test
