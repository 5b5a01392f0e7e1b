// The node agent's container image (deploy/Containerfile, `make image`) runs the DaemonSet's
// command and finds a TF task on this machine. This machine's podman cannot start a hostPID
// container (crun refuses hybrid cgroups), so the test does what a container runtime would do
// for deploy/daemonset.yaml's agent container, by hand: it unpacks the image's root file system,
// bind-mounts the host's /proc, /sys (read-only unless privileged) and /dev as a hostPID pod sees
// them, then every hostPath volume of the container at its mountPath (read-only where it says
// so), makes the root read-only (readOnlyRootFilesystem), gives the pod a network namespace of
// its own (no hostNetwork: the agent's 127.0.0.1 is the pod's), keeps only the capabilities the
// container adds (drop: [ALL]), and runs the container's command under chroot with its env, the
// downward-API values replaced by test values. The test reaches the agent from inside the pod's
// network namespace, as the kube-rbac-proxy sidecar does (the proxy itself is not run here). A
// psload PS and worker run on the host, the worker in a cgroup with a CFS quota. Everything the
// DaemonSet says is read from the file, so the test follows it. All mounts live in a private mount
// namespace of the agent's process: they vanish with it, whatever path the test takes.
#include <curl/curl.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <thread>

#include "tests/daemonset_pod.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

using Clock = std::chrono::steady_clock;

// A cgroup with a CFS quota of `cpus` (v1 cpu controller, else v2 cpu.max), removed on exit.
class QuotaCgroup {
 public:
  explicit QuotaCgroup(double cpus) {
    const std::string name = fmt::format("tfdiag_image_test_{}", getpid());
    const std::string quota = std::to_string(static_cast<int>(cpus * 100000));
    struct stat st;
    if (stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", &st) == 0) {
      dir_ = "/sys/fs/cgroup/cpu/" + name;
      ok_ = mkdir(dir_.c_str(), 0755) == 0 && Put("cpu.cfs_period_us", "100000") &&
            Put("cpu.cfs_quota_us", quota);
    } else if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
      dir_ = "/sys/fs/cgroup/" + name;
      ok_ = mkdir(dir_.c_str(), 0755) == 0 && Put("cpu.max", quota + " 100000");
    }
  }
  ~QuotaCgroup() {
    if (!dir_.empty()) rmdir(dir_.c_str());
  }
  bool ok() const { return ok_; }
  bool Add(pid_t pid) { return Put("cgroup.procs", std::to_string(pid)); }

 private:
  bool Put(const std::string& file, const std::string& value) {
    int fd = open((dir_ + "/" + file).c_str(), O_WRONLY);
    bool ok =
        fd >= 0 && write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    if (fd >= 0) close(fd);
    return ok;
  }
  std::string dir_;
  bool ok_ = false;
};

// A child process stopped (SIGTERM, then SIGKILL after 10 s) and reaped when this goes away.
struct Child {
  pid_t pid = -1;
  int exit_code = -1;
  int Stop() {
    if (pid <= 0) return exit_code;
    kill(pid, SIGTERM);
    const auto end = Clock::now() + std::chrono::seconds(10);
    int st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
      if (Clock::now() > end) kill(pid, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    pid = -1;
    exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return exit_code;
  }
  ~Child() { Stop(); }
};

pid_t SpawnPsload(const std::string& tf_config, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::string bin = PSLOAD_BINARY, env = "TF_CONFIG=" + tf_config;
  char* argv[] = {bin.data(), nullptr};
  char* envp[] = {env.data(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, bin.c_str(), &fa, nullptr, argv, envp) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// GET http://`host`:`port``path`; the status (0 when the connection failed) and the body.
std::pair<long, std::string> Get(const std::string& host, int port, const std::string& path) {
  std::string body;
  CURL* c = curl_easy_init();
  const std::string url = fmt::format("http://{}:{}{}", host, port, path);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 5000L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(
      c, CURLOPT_WRITEFUNCTION, +[](char* p, size_t s, size_t n, void* out) {
        static_cast<std::string*>(out)->append(p, s * n);
        return s * n;
      });
  long code = 0;
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(c);
  return {code, body};
}

// The value of the first sample of `name` whose labels contain every one of `labels`
// (`key="value"` strings); -1 when there is none.
double Sample(const std::string& metrics, const std::string& name,
              const std::vector<std::string>& labels) {
  size_t pos = 0;
  while ((pos = metrics.find("\n" + name + "{", pos)) != std::string::npos) {
    const size_t end = metrics.find('\n', pos + 1);
    const std::string line = metrics.substr(pos + 1, end - pos - 1);
    pos = end;
    const size_t close = line.rfind('}');
    if (close == std::string::npos) continue;
    const std::string set = line.substr(0, close);
    if (std::all_of(labels.begin(), labels.end(),
                    [&](const std::string& l) { return set.find(l) != std::string::npos; }))
      return std::strtod(line.c_str() + close + 1, nullptr);
  }
  return -1;
}

// The lines of `metrics` that start with `prefix`, for failure messages.
std::string Lines(const std::string& metrics, const std::string& prefix) {
  std::string out;
  for (size_t p = 0; (p = metrics.find("\n" + prefix, p)) != std::string::npos;) {
    const size_t end = metrics.find('\n', p + 1);
    out += metrics.substr(p, end - p);
    p = end;
  }
  return out.empty() ? "(no " + prefix + " series)" : out;
}

bool OnPath(const char* tool) { return RunShell(std::string("command -v ") + tool).exit_code == 0; }

// Mount points under `dir` in this process's mount namespace (none, unless a mount escaped the
// agent's private namespace).
std::vector<std::string> MountsUnder(const std::string& dir) {
  std::vector<std::string> out;
  const std::string info = ReadFile("/proc/self/mountinfo");
  size_t pos = 0;
  while (pos < info.size()) {
    size_t end = info.find('\n', pos);
    if (end == std::string::npos) end = info.size();
    std::vector<std::string> f;
    for (size_t p = pos; p < end && f.size() < 5;) {
      size_t q = std::min(info.find(' ', p), end);
      f.push_back(info.substr(p, q - p));
      p = q + 1;
    }
    if (f.size() == 5 && f[4].rfind(dir, 0) == 0) out.push_back(f[4]);
    pos = end + 1;
  }
  return out;
}

bool NetworkFailure(const std::string& log) {
  for (const char* s : {"Temporary failure resolving", "Could not resolve", "Failed to fetch",
                        "Network is unreachable", "Could not connect", "apt-get update failed"}) {
    if (log.find(s) != std::string::npos) return true;
  }
  return false;
}

class AgentImage : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: chroot, bind mounts and a CPU cgroup";
    for (const char* tool : {"podman", "mmdebstrap", "make", "tar", "chroot"}) {
      if (!OnPath(tool)) GTEST_SKIP() << tool << " is not installed (scripts/bootstrap.sh)";
    }
  }

  void TearDown() override {
    agent_.Stop();
    worker_.Stop();
    ps_.Stop();
    // The mounts belonged to the agent's mount namespace, gone with it; none may remain here
    // before TempDir removes the unpacked root (with the host's /proc and /sys under it).
    std::vector<std::string> left = MountsUnder(rootfs_ + "/");
    EXPECT_TRUE(left.empty()) << left.size() << " mounts left under " << rootfs_;
    for (auto it = left.rbegin(); it != left.rend(); ++it) umount2(it->c_str(), MNT_DETACH);
  }

  // Reads the DaemonSet (its agent serves 127.0.0.1:PORT in the pod's own network namespace),
  // then `make image` and the image's root file system unpacked into rootfs_.
  void BuildAndUnpack() {
    const std::string file = std::string(TFDIAG_SOURCE_DIR) + "/deploy/daemonset.yaml";
    StatusOr<AgentPod> pod = ReadDaemonSet(file, {{"spec.nodeName", kNode}});
    ASSERT_TRUE(pod.ok()) << pod.status().message();
    pod_ = std::move(*pod);
    auto serve = std::find(pod_.argv.begin(), pod_.argv.end(), "--serve");
    ASSERT_TRUE(serve != pod_.argv.end() && serve + 1 != pod_.argv.end()) << "no --serve";
    const std::string addr = *(serve + 1);
    ASSERT_EQ(addr.rfind("127.0.0.1:", 0), 0u) << "--serve " << addr << " is not 127.0.0.1:PORT";
    port_ = std::atoi(addr.c_str() + 10);
    ASSERT_FALSE(pod_.host_network) << "the agent's 127.0.0.1 must be the pod's own";
    ASSERT_TRUE(pod_.host_pid) << "the agent reads the node's processes: hostPID";
    const std::string build_dir =
        std::string(TFDIAG_BINARY).substr(0, std::string(TFDIAG_BINARY).rfind('/'));
    const auto t0 = Clock::now();
    RunResult make = RunShell(fmt::format("make -C '{}' image BUILD='{}' IMAGE='{}'",
                                          TFDIAG_SOURCE_DIR, build_dir, pod_.image));
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    if (make.exit_code != 0 && NetworkFailure(make.out + make.err)) {
      GTEST_SKIP() << "the image cannot be built here (Debian's mirror is unreachable): "
                   << make.err.substr(make.err.size() > 400 ? make.err.size() - 400 : 0);
    }
    ASSERT_EQ(make.exit_code, 0) << make.out << make.err;
    RunResult size = RunShell("podman image inspect --format '{{.Size}}' '" + pod_.image + "'");
    image_bytes_ = std::atof(size.out.c_str());
    std::printf("[ measured ] make image %s: %.1f s, %.1f MB\n", pod_.image.c_str(), secs,
                image_bytes_ / 1e6);
    RunResult unpack = RunShell(fmt::format(
        "c=$(podman create '{0}') && podman export -o '{1}.tar' \"$c\"; rc=$?; "
        "podman rm \"$c\" >/dev/null; [ $rc = 0 ] && mkdir '{1}' && tar -xf '{1}.tar' -C '{1}' "
        "&& rm '{1}.tar'",
        pod_.image, rootfs_));
    ASSERT_EQ(unpack.exit_code, 0) << unpack.err;
  }

  // A PS and a worker on the host (the worker under a 0.25-CPU CFS quota), then the agent.
  void StartJobAndAgent() {
    ASSERT_TRUE(cgroup_.ok()) << "cannot create a CPU cgroup with a CFS quota";
    const std::vector<int> ports = FreePorts(2);
    const std::string cluster =
        fmt::format(R"({{"cluster":{{"ps":["127.0.0.1:{}"],"worker":["127.0.0.1:{}"]}},"task":)",
                    ports[0], ports[1]);
    ps_.pid = SpawnPsload(cluster + R"({"type":"ps","index":0}})", tmp_.File("ps.log"));
    ASSERT_GT(ps_.pid, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    worker_.pid = SpawnPsload(cluster + R"({"type":"worker","index":0}})", tmp_.File("w.log"));
    ASSERT_GT(worker_.pid, 0);
    ASSERT_TRUE(cgroup_.Add(worker_.pid));
    ASSERT_NO_FATAL_FAILURE(StartAgent());
  }

  // What a runtime does for a privileged hostPID pod, then the DaemonSet's volumes, a read-only
  // root and its command, in a new mount namespace (all of it in the forked child: syscalls only
  // between fork and execve).
  void StartAgent() {
    struct Bind {
      std::string from, to;
      bool recursive, read_only;
    };
    // A fresh procfs of the host's PID namespace, sysfs (read-write when privileged) and the
    // host's devices are what the runtime gives; bound without their submounts, as those are.
    // Capabilities: a privileged container keeps all; else only those it adds (the DaemonSet
    // drops ALL), by name as in Kubernetes (CAP_ prefix dropped).
    std::vector<int> keep_caps;
    const std::map<std::string, int> cap_numbers = {{"SYS_PTRACE", CAP_SYS_PTRACE},
                                                    {"DAC_READ_SEARCH", CAP_DAC_READ_SEARCH},
                                                    {"BPF", CAP_BPF},
                                                    {"PERFMON", CAP_PERFMON},
                                                    {"SYS_RESOURCE", CAP_SYS_RESOURCE},
                                                    {"SYS_ADMIN", CAP_SYS_ADMIN}};
    for (const std::string& name : pod_.cap_add) {
      auto it = cap_numbers.find(name);
      ASSERT_NE(it, cap_numbers.end()) << "the test does not know CAP_" << name;
      keep_caps.push_back(it->second);
    }
    const int last_cap = std::atoi(ReadFile("/proc/sys/kernel/cap_last_cap").c_str());
    const bool privileged = pod_.privileged;
    std::vector<Bind> binds = {{"/proc", "/proc", false, false},
                               {"/sys", "/sys", false, !pod_.privileged},
                               {"/dev", "/dev", false, false}};
    for (const VolumeMount& m : pod_.mounts)
      binds.push_back({m.host_path, m.mount_path, true, m.read_only});
    for (Bind& b : binds) {
      b.to = rootfs_ + b.to;
      std::error_code ec;
      std::filesystem::create_directories(b.to, ec);
      ASSERT_FALSE(ec) << b.to << ": " << ec.message();
    }
    std::vector<std::string> env = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        std::string("HOSTNAME=") + kNode};
    for (const auto& [k, v] : pod_.env) env.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (std::string& a : pod_.argv) argv.push_back(a.data());
    for (std::string& e : env) envp.push_back(e.data());
    argv.push_back(nullptr), envp.push_back(nullptr);
    const std::string log = tmp_.File("agent.log");
    const char* root = rootfs_.c_str();
    const bool ro_root = pod_.read_only_root;
    agent_.pid = fork();
    ASSERT_GE(agent_.pid, 0);
    if (agent_.pid == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1), dup2(fd, 2);
      int null = open("/dev/null", O_RDONLY);
      dup2(null, 0);
      auto die = [](const char* what, const char* path) {
        dprintf(2, "image_test: %s %s: %s\n", what, path, strerror(errno));
        _exit(126);
      };
      if (unshare(CLONE_NEWNS | CLONE_NEWNET) != 0) die("unshare", "CLONE_NEWNS|CLONE_NEWNET");
      {  // the pod's loopback, up as a runtime's CNI leaves it
        ifreq ifr{};
        std::strcpy(ifr.ifr_name, "lo");
        const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) != 0) die("SIOCGIFFLAGS", "lo");
        ifr.ifr_flags |= IFF_UP;
        if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) die("SIOCSIFFLAGS", "lo");
        close(s);
      }
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) die("make private", "/");
      if (mount(root, root, nullptr, MS_BIND, nullptr) != 0) die("bind", root);
      for (const Bind& b : binds) {
        const unsigned long rec = b.recursive ? MS_REC : 0;
        if (mount(b.from.c_str(), b.to.c_str(), nullptr, MS_BIND | rec, nullptr) != 0)
          die("bind", b.to.c_str());
        if (b.read_only &&
            mount(nullptr, b.to.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
          die("remount read-only", b.to.c_str());
      }
      if (ro_root && mount(nullptr, root, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
        die("remount read-only", root);
      if (chroot(root) != 0 || chdir("/") != 0) die("chroot", root);
      for (int c = 0; !privileged && c <= last_cap; ++c) {
        if (std::find(keep_caps.begin(), keep_caps.end(), c) == keep_caps.end() &&
            prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL)
          die("PR_CAPBSET_DROP", "");
      }
      execve(argv[0], argv.data(), envp.data());
      die("execve", argv[0]);
    }
  }

  // Scrapes /metrics every second until `done` holds or `timeout_s` passes; the last page.
  std::string WaitForMetrics(const std::function<bool(const std::string&)>& done,
                             double timeout_s) {
    const auto end = Clock::now() + std::chrono::duration<double>(timeout_s);
    std::string page;
    while (Clock::now() < end) {
      page = "\n" + PodGet("/metrics").second;
      if (done(page)) break;
      int st = 0;
      if (waitpid(agent_.pid, &st, WNOHANG) == agent_.pid) {
        agent_.pid = -1;
        ADD_FAILURE() << "the agent exited: " << ReadFile(tmp_.File("agent.log"));
        break;
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return page;
  }

  // GET http://127.0.0.1:port_`path` from inside the agent's network namespace (a thread of
  // this process joins it; the rest of the process stays where it is).
  std::pair<long, std::string> PodGet(const std::string& path) {
    std::pair<long, std::string> out{0, ""};
    std::thread t([&] {
      const int ns = open(fmt::format("/proc/{}/ns/net", agent_.pid).c_str(), O_RDONLY);
      if (ns >= 0 && setns(ns, CLONE_NEWNET) == 0) out = Get("127.0.0.1", port_, path);
      if (ns >= 0) close(ns);
    });
    t.join();
    return out;
  }

  std::vector<std::string> Task(const char* type) const {
    return {"replica_type=\"" + std::string(type) + "\"", std::string("node=\"") + kNode + "\""};
  }

  static constexpr char kNode[] = "image-test-node";
  TempDir tmp_;
  std::string rootfs_ = tmp_.File("rootfs");
  int port_ = 0;
  AgentPod pod_;
  double image_bytes_ = 0;
  QuotaCgroup cgroup_{0.25};
  Child ps_, worker_, agent_;
};

TEST_F(AgentImage, DaemonSetCommandFindsTheTaskWithCpuAndCgroupSeries) {
  ASSERT_NO_FATAL_FAILURE(BuildAndUnpack());
  if (IsSkipped()) return;
  // Only runtime packages: no headers, compilers or build tools came along.
  std::vector<std::string> packages;
  const std::string status = ReadFile(rootfs_ + "/var/lib/dpkg/status");
  for (size_t p = 0; (p = status.find("Package: ", p)) != std::string::npos;) {
    if (p != 0 && status[p - 1] != '\n') {
      ++p;
      continue;
    }
    const size_t end = status.find('\n', p);
    packages.push_back(status.substr(p + 9, end - p - 9));
    p = end;
  }
  auto has = [&](const std::string& name) {
    return std::find(packages.begin(), packages.end(), name) != packages.end();
  };
  EXPECT_TRUE(has("libbpf1") && has("libcurl4") && has("libprotobuf32")) << status.size();
  for (const std::string& p : packages) {
    EXPECT_FALSE(p.size() > 4 && p.compare(p.size() - 4, 4, "-dev") == 0) << p;
  }
  for (const char* tool : {"gcc", "gcc-12", "g++", "cpp", "clang", "clang-14", "binutils", "cmake",
                           "make", "bpftool", "protobuf-compiler"}) {
    EXPECT_FALSE(has(tool)) << tool << " is a build tool";
  }
  std::printf("[ measured ] image: %zu Debian packages\n", packages.size());
  EXPECT_LT(image_bytes_, 150e6) << "a bookworm minbase (78 MB) and the runtime libraries";
  RunResult ldd = RunShell("chroot '" + rootfs_ + "' /usr/bin/ldd " + pod_.argv[0]);
  EXPECT_EQ(ldd.exit_code, 0) << ldd.err;
  for (size_t p = 0; (p = ldd.out.find("not found", p)) != std::string::npos; ++p) {
    ADD_FAILURE() << "missing from the image: "
                  << ldd.out.substr(ldd.out.rfind('\n', p) + 1, p - ldd.out.rfind('\n', p));
  }
  ASSERT_NO_FATAL_FAILURE(StartJobAndAgent());
  // The kubelet's liveness probe (through the proxy in the cluster; here from inside the pod).
  bool ready = false;
  for (int i = 0; i < 30 && !ready; ++i) {
    ready = PodGet(pod_.liveness_path).first == 200;
    if (!ready && waitpid(agent_.pid, nullptr, WNOHANG) == agent_.pid) agent_.pid = -1;
    if (!ready && agent_.pid < 0) break;  // exited (the log says why)
    if (!ready) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  ASSERT_TRUE(ready) << "livenessProbe " << pod_.liveness_path << " on 127.0.0.1:" << port_ << ": "
                     << ReadFile(tmp_.File("agent.log"));
  const std::string m = WaitForMetrics(
      [&](const std::string& p) {
        return Sample(p, "tfdiag_task_up", Task("ps")) == 1 &&
               Sample(p, "tfdiag_task_up", Task("worker")) == 1 &&
               Sample(p, "tfdiag_cgroup_throttled_periods_total", Task("worker")) > 0;
      },
      60);
  EXPECT_EQ(Sample(m, "tfdiag_task_up", Task("ps")), 1) << Lines(m, "tfdiag_task_up");
  EXPECT_EQ(Sample(m, "tfdiag_task_up", Task("worker")), 1) << Lines(m, "tfdiag_task_up");
  EXPECT_GT(Sample(m, "tfdiag_task_cpu_seconds_total", Task("worker")), 0)
      << Lines(m, "tfdiag_task_cpu");
  EXPECT_GE(Sample(m, "tfdiag_task_threads", Task("worker")), 2) << Lines(m, "tfdiag_task_threads");
  // Read through the DaemonSet's read-only /sys/fs/cgroup: the worker's quota throttles it.
  const double periods = Sample(m, "tfdiag_cgroup_periods_total", Task("worker"));
  const double throttled = Sample(m, "tfdiag_cgroup_throttled_periods_total", Task("worker"));
  EXPECT_GT(periods, 0) << Lines(m, "tfdiag_cgroup");
  EXPECT_GT(throttled, 0) << Lines(m, "tfdiag_cgroup");
  EXPECT_LE(throttled, periods);
  std::printf("[ measured ] agent in the image: worker %.0f of %.0f CFS periods throttled\n",
              throttled, periods);
  EXPECT_EQ(agent_.Stop(), 0) << "SIGTERM, as the kubelet stops a pod: "
                              << ReadFile(tmp_.File("agent.log"));
  EXPECT_NE(
      ReadFile(tmp_.File("agent.log")).find(fmt::format("serving /metrics on 127.0.0.1:{}", port_)),
      std::string::npos);
}

TEST_F(AgentImage, DaemonSetCommandLoadsTheEbpfProbes) {
  if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
    GTEST_SKIP() << "no /sys/kernel/btf/vmlinux: the probes need the kernel's BTF (CO-RE)";
  ASSERT_NO_FATAL_FAILURE(BuildAndUnpack());
  if (IsSkipped()) return;
  ASSERT_NO_FATAL_FAILURE(StartJobAndAgent());
  const std::vector<std::string> to_ps = {"replica_type=\"worker\"", "direction=\"sent\"",
                                          "peer_task=\"ps:0\""};
  const std::vector<std::string> at_ps = {"replica_type=\"ps\"", "direction=\"received\"",
                                          "peer_task=\"worker:0\""};
  // Both ends: on a loaded machine the PS may read its first request a scrape after the worker
  // sent it (CI once scraped between the two).
  const std::string m = WaitForMetrics(
      [&](const std::string& p) {
        return Sample(p, "tfdiag_traffic_bytes_total", to_ps) > 0 &&
               Sample(p, "tfdiag_traffic_bytes_total", at_ps) > 0 &&
               Sample(p, "tfdiag_runqueue_latency_seconds_count", Task("worker")) > 0;
      },
      60);
  EXPECT_GT(Sample(m, "tfdiag_traffic_bytes_total", to_ps), 0) << Lines(m, "tfdiag_traffic");
  EXPECT_GT(Sample(m, "tfdiag_traffic_bytes_total", at_ps), 0) << Lines(m, "tfdiag_traffic");
  EXPECT_GT(Sample(m, "tfdiag_runqueue_latency_seconds_count", Task("worker")), 0)
      << Lines(m, "tfdiag_runqueue_latency_seconds_count");
  EXPECT_EQ(agent_.Stop(), 0);
  const std::string log = ReadFile(tmp_.File("agent.log"));
  EXPECT_EQ(log.find("probes off"), std::string::npos) << log;
  EXPECT_EQ(log.find("probe off"), std::string::npos) << log;
}

}  // namespace
}  // namespace tfdiag::test
