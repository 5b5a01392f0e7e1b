// deploy/: who can reach the agent's /metrics and with which rights the agent runs (issue 32
// item 7). The DaemonSet file is read as a cluster would apply it: the agent binds 127.0.0.1 in
// its own network namespace behind a kube-rbac-proxy sidecar, only the proxy holds a
// ServiceAccount token (with TokenReview/SubjectAccessReview rights), a NetworkPolicy admits the
// monitoring namespace only, and the agent is not privileged. The capability list is then tried
// for real: the built tfdiag runs with exactly those capabilities (the bounding set a runtime
// gives `drop: [ALL]` + `add: [...]`) against a TF task of another user, and without each one
// to show what it is for. Prometheus's scrape config is checked by promtool.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "collectors/k8s/yaml_tree.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

const std::string kDeploy = std::string(TFDIAG_SOURCE_DIR) + "/deploy/";

std::string Scalar(const YamlNode* n) { return n != nullptr && n->IsScalar() ? n->value : ""; }

const YamlNode* At(const YamlNode* n, std::initializer_list<const char*> keys) {
  for (const char* k : keys) n = n != nullptr ? n->Find(k) : nullptr;
  return n;
}

std::vector<std::string> Strings(const YamlNode* seq) {
  std::vector<std::string> out;
  if (seq == nullptr || !seq->IsSeq()) return out;
  for (size_t i = 0; i < seq->size(); ++i) out.push_back(Scalar(&seq->Item(i)));
  return out;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every document of deploy/daemonset.yaml, by kind (and the DaemonSet's containers by name).
struct Deploy {
  std::string text;
  std::vector<std::unique_ptr<YamlNode>> docs;
  const YamlNode* Kind(const std::string& kind, int nth = 0) const {
    for (const auto& d : docs) {
      if (d != nullptr && Scalar(d->Find("kind")) == kind && nth-- == 0) return d.get();
    }
    return nullptr;
  }
  const YamlNode* PodSpec() const { return At(Kind("DaemonSet"), {"spec", "template", "spec"}); }
  const YamlNode* Container(const std::string& name) const {
    const YamlNode* cs = At(PodSpec(), {"containers"});
    for (size_t i = 0; cs != nullptr && cs->IsSeq() && i < cs->size(); ++i) {
      if (Scalar(cs->Item(i).Find("name")) == name) return &cs->Item(i);
    }
    return nullptr;
  }
  std::vector<std::string> Command(const std::string& name) const {
    std::vector<std::string> argv = Strings(At(Container(name), {"command"}));
    for (const std::string& a : Strings(At(Container(name), {"args"}))) argv.push_back(a);
    return argv;
  }
};

Deploy ReadDeploy() {
  Deploy d;
  d.text = ReadFile(kDeploy + "daemonset.yaml");
  YamlStream s(d.text, "daemonset.yaml");
  for (;;) {
    std::unique_ptr<YamlNode> doc;
    StatusOr<bool> more = s.Next(&doc);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    d.docs.push_back(std::move(doc));
  }
  return d;
}

// The value after `flag` in argv ("--serve", "ADDR"), or of "--flag=VALUE"; "" when absent.
std::string Flag(const std::vector<std::string>& argv, const std::string& flag) {
  for (size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == flag && i + 1 < argv.size()) return argv[i + 1];
    if (argv[i].rfind(flag + "=", 0) == 0) return argv[i].substr(flag.size() + 1);
  }
  return "";
}

TEST(DeployDaemonSet, AgentOnLoopbackBehindAnAuthenticatingProxy) {
  const Deploy d = ReadDeploy();
  ASSERT_NE(d.Kind("DaemonSet"), nullptr);
  const YamlNode* pod = d.PodSpec();
  ASSERT_NE(pod, nullptr);
  // The agent: 127.0.0.1 of the pod's own network namespace (hostNetwork would make it the
  // node's loopback, open to every host-network process and outside any NetworkPolicy).
  EXPECT_NE(Scalar(pod->Find("hostNetwork")), "true");
  EXPECT_EQ(Scalar(pod->Find("hostPID")), "true") << "the agent reads the node's /proc";
  const std::vector<std::string> agent = d.Command("agent");
  ASSERT_FALSE(agent.empty()) << "no container named agent";
  const std::string serve = Flag(agent, "--serve");
  ASSERT_EQ(serve.rfind("127.0.0.1:", 0), 0u) << "--serve " << serve;
  const std::string agent_port = serve.substr(serve.find(':') + 1);
  EXPECT_EQ(At(d.Container("agent"), {"ports"}), nullptr) << "the agent's port is not published";
  // The proxy: HTTPS on the pod IP, forwarding to the agent; only /healthz skips the checks.
  const YamlNode* proxy = d.Container("kube-rbac-proxy");
  ASSERT_NE(proxy, nullptr);
  EXPECT_NE(Scalar(proxy->Find("image")).find("kube-rbac-proxy"), std::string::npos);
  const std::vector<std::string> pargs = d.Command("kube-rbac-proxy");
  EXPECT_EQ(Flag(pargs, "--upstream"), "http://127.0.0.1:" + agent_port + "/");
  EXPECT_EQ(Flag(pargs, "--ignore-paths"), "/healthz");
  EXPECT_EQ(Flag(pargs, "--insecure-listen-address"), "");
  const std::string listen = Flag(pargs, "--secure-listen-address");
  const std::string proxy_port = listen.substr(listen.rfind(':') + 1);
  const YamlNode* ports = At(proxy, {"ports"});
  ASSERT_TRUE(ports != nullptr && ports->size() == 1);
  EXPECT_EQ(Scalar(ports->Item(0).Find("containerPort")), proxy_port);
  const std::string port_name = Scalar(ports->Item(0).Find("name"));
  // Liveness: the agent's /healthz through the proxy, and a stale limit that fits the probe.
  const YamlNode* live = At(d.Container("agent"), {"livenessProbe", "httpGet"});
  ASSERT_NE(live, nullptr);
  EXPECT_EQ(Scalar(live->Find("path")), "/healthz");
  EXPECT_EQ(Scalar(live->Find("port")), proxy_port);
  EXPECT_EQ(Scalar(live->Find("scheme")), "HTTPS");
  EXPECT_NE(Flag(agent, "--stale-after"), "");
  // Tokens: none automounted; the proxy alone gets one, projected.
  EXPECT_EQ(Scalar(pod->Find("automountServiceAccountToken")), "false");
  const std::string sa = Scalar(pod->Find("serviceAccountName"));
  ASSERT_NE(d.Kind("ServiceAccount"), nullptr);
  EXPECT_EQ(Scalar(d.Kind("ServiceAccount")->Find("automountServiceAccountToken")), "false");
  const YamlNode* amounts = At(d.Container("agent"), {"volumeMounts"});
  ASSERT_NE(amounts, nullptr);
  for (size_t i = 0; i < amounts->size(); ++i) {
    EXPECT_EQ(Scalar(amounts->Item(i).Find("mountPath")).find("/var/run/secrets"),
              std::string::npos);
  }
  const YamlNode* pmounts = At(proxy, {"volumeMounts"});
  ASSERT_TRUE(pmounts != nullptr && pmounts->size() == 1);
  EXPECT_EQ(Scalar(pmounts->Item(0).Find("mountPath")),
            "/var/run/secrets/kubernetes.io/serviceaccount");
  EXPECT_NE(d.text.find("serviceAccountToken: {path: token"), std::string::npos);
  // RBAC: the proxy's ServiceAccount may create TokenReviews and SubjectAccessReviews, no more.
  const YamlNode* binding = d.Kind("ClusterRoleBinding");
  ASSERT_NE(binding, nullptr);
  const std::string role_name = Scalar(At(binding, {"roleRef", "name"}));
  const YamlNode* subjects = binding->Find("subjects");
  ASSERT_TRUE(subjects != nullptr && subjects->size() == 1);
  EXPECT_EQ(Scalar(subjects->Item(0).Find("name")), sa);
  std::set<std::string> proxy_rights;
  for (int i = 0; d.Kind("ClusterRole", i) != nullptr; ++i) {
    const YamlNode* role = d.Kind("ClusterRole", i);
    if (Scalar(At(role, {"metadata", "name"})) != role_name) continue;
    const YamlNode* rules = role->Find("rules");
    for (size_t r = 0; rules != nullptr && r < rules->size(); ++r) {
      for (const std::string& res : Strings(rules->Item(r).Find("resources")))
        for (const std::string& verb : Strings(rules->Item(r).Find("verbs")))
          proxy_rights.insert(res + ":" + verb);
    }
  }
  EXPECT_EQ(proxy_rights,
            (std::set<std::string>{"subjectaccessreviews:create", "tokenreviews:create"}));
  // NetworkPolicy: the agents' pods, ingress to the proxy port only, from monitoring only.
  const YamlNode* np = d.Kind("NetworkPolicy");
  ASSERT_NE(np, nullptr);
  EXPECT_EQ(Scalar(At(np, {"spec", "podSelector", "matchLabels", "app"})), "tfdiag-agent");
  const YamlNode* ingress = At(np, {"spec", "ingress"});
  ASSERT_TRUE(ingress != nullptr && ingress->size() == 1);
  const YamlNode* np_ports = At(&ingress->Item(0), {"ports"});
  const YamlNode* np_from = At(&ingress->Item(0), {"from"});
  ASSERT_TRUE(np_ports != nullptr && np_ports->size() == 1 && np_from != nullptr &&
              np_from->size() == 1);
  EXPECT_EQ(Scalar(np_ports->Item(0).Find("port")), proxy_port);
  EXPECT_EQ(Scalar(At(&np_from->Item(0),
                      {"namespaceSelector", "matchLabels", "kubernetes.io/metadata.name"})),
            "monitoring");
  // Prometheus scrapes the proxy's port by name, over HTTPS with its token.
  const std::string prom = ReadFile(kDeploy + "prometheus.yml");
  EXPECT_NE(prom.find("regex: " + port_name + "\n"), std::string::npos) << port_name;
  EXPECT_NE(prom.find("scheme: https"), std::string::npos);
  EXPECT_NE(prom.find("credentials_file: /var/run/secrets/kubernetes.io/serviceaccount/token"),
            std::string::npos);
}

TEST(DeployDaemonSet, AgentIsNotPrivilegedAndListsItsCapabilities) {
  const Deploy d = ReadDeploy();
  const YamlNode* sc = At(d.Container("agent"), {"securityContext"});
  ASSERT_NE(sc, nullptr);
  EXPECT_NE(Scalar(sc->Find("privileged")), "true");
  EXPECT_EQ(Scalar(sc->Find("allowPrivilegeEscalation")), "false");
  EXPECT_EQ(Scalar(sc->Find("readOnlyRootFilesystem")), "true");
  EXPECT_EQ(Strings(At(sc, {"capabilities", "drop"})), std::vector<std::string>{"ALL"});
  const std::vector<std::string> add = Strings(At(sc, {"capabilities", "add"}));
  EXPECT_FALSE(Has(add, "SYS_ADMIN")) << "CAP_BPF + CAP_PERFMON instead (kernel >= 5.8)";
  for (const char* cap : {"SYS_PTRACE", "BPF", "PERFMON"}) EXPECT_TRUE(Has(add, cap)) << cap;
  const YamlNode* psc = At(d.Container("kube-rbac-proxy"), {"securityContext"});
  ASSERT_NE(psc, nullptr) << "no kube-rbac-proxy container with a securityContext";
  EXPECT_EQ(Strings(At(psc, {"capabilities", "drop"})), std::vector<std::string>{"ALL"});
  EXPECT_EQ(Scalar(psc->Find("runAsNonRoot")), "true");
}

// promtool checks the scrape config. Debian's Prometheus is built without Kubernetes service
// discovery, so the kubernetes_sd_configs block is swapped for a static target in a copy; the
// rest (scheme, authorization, TLS, relabelling, rule files) is checked as written.
TEST(DeployPrometheus, PromtoolChecksTheScrapeConfig) {
  if (access("/usr/bin/promtool", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/promtool (Debian package prometheus)";
  std::string cfg = ReadFile(kDeploy + "prometheus.yml");
  const std::string sd = "    kubernetes_sd_configs:\n      - role: pod\n";
  const size_t at = cfg.find(sd);
  ASSERT_NE(at, std::string::npos);
  const size_t end = cfg.find("\n    relabel_configs:", at);
  cfg.replace(at, end + 1 - at, "    static_configs:\n      - targets: [\"10.0.0.1:8443\"]\n");
  // promtool opens the token file: the copy points at a stand-in.
  const std::string token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  TempDir tmp;
  ASSERT_NE(cfg.find(token), std::string::npos);
  cfg.replace(cfg.find(token), token.size(), tmp.File("token"));
  WriteFile(tmp.File("token"), "stand-in\n");
  WriteFile(tmp.File("prometheus.yml"), cfg);
  RunResult cp = RunShell("cp '" + kDeploy + "tfdiag.rules.yml' '" + tmp.path() + "/'");
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  RunResult check = RunShell("promtool check config '" + tmp.File("prometheus.yml") + "'");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(check.out.find("SUCCESS"), std::string::npos) << check.out << check.err;
}

// Issue 30 item 4: the cluster config has no static 127.0.0.1 target (inside a cluster it never
// answers, and `analyze --prometheus` then reports an agent down on every run): its only job is
// the agents' own, found by service discovery. The one-node example is a file of its own, with
// the same job name and an agent_node label, and promtool accepts it.
TEST(DeployPrometheus, TheClusterConfigScrapesOnlyAgentPodsAndTheLocalOneIsApart) {
  const std::string cluster = ReadFile(kDeploy + "prometheus.yml");
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(cluster, "- job_name:"), 1u) << cluster;
  EXPECT_NE(cluster.find("- job_name: tfdiag-agent\n"), std::string::npos);
  EXPECT_EQ(cluster.find("static_configs"), std::string::npos);
  EXPECT_EQ(cluster.find("127.0.0.1:9464\""), std::string::npos);
  const std::string local = ReadFile(kDeploy + "prometheus-local.yml");
  ASSERT_FALSE(local.empty()) << "no deploy/prometheus-local.yml";
  EXPECT_EQ(count(local, "- job_name:"), 1u) << local;
  EXPECT_NE(local.find("- job_name: tfdiag-agent\n"), std::string::npos);
  EXPECT_NE(local.find("targets: [\"127.0.0.1:9464\"]"), std::string::npos);
  EXPECT_NE(local.find("agent_node:"), std::string::npos);
  if (access("/usr/bin/promtool", X_OK) != 0)
    GTEST_SKIP() << "no /usr/bin/promtool (Debian package prometheus)";
  TempDir tmp;
  RunResult cp = RunShell("cp '" + kDeploy + "prometheus-local.yml' '" + kDeploy +
                          "tfdiag.rules.yml' '" + tmp.path() + "/'");
  ASSERT_EQ(cp.exit_code, 0) << cp.err;
  RunResult check = RunShell("promtool check config '" + tmp.File("prometheus-local.yml") + "'");
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

// ---- The capability list, tried ----

const std::map<std::string, int> kCaps = {{"DAC_READ_SEARCH", CAP_DAC_READ_SEARCH},
                                          {"SYS_PTRACE", CAP_SYS_PTRACE},
                                          {"SYS_RESOURCE", CAP_SYS_RESOURCE},
                                          {"SYS_ADMIN", CAP_SYS_ADMIN},
                                          {"BPF", CAP_BPF},
                                          {"PERFMON", CAP_PERFMON},
                                          {"DAC_OVERRIDE", CAP_DAC_OVERRIDE}};

// Runs the built tfdiag as root with only `caps` (bounding set reduced before exec, as a runtime
// does for drop: [ALL] + add); exit code and stderr.
RunResult RunWithCaps(const std::set<int>& caps, const std::vector<std::string>& args,
                      const std::string& err_file) {
  std::vector<std::string> all = {TFDIAG_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int last = std::atoi(ReadFile("/proc/sys/kernel/cap_last_cap").c_str());
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0), dup2(null, 1);
    for (int c = 0; c <= last; ++c) {
      if (!caps.count(c) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL) _exit(126);
    }
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  RunResult r;
  int st = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.err = ReadFile(err_file);
  return r;
}

TEST(DeployCapabilities, TheListIsEnoughForATaskOfAnotherUserAndEachIsNeeded) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the agent runs as root with capabilities";
  const Deploy d = ReadDeploy();
  const std::vector<std::string> add =
      Strings(At(d.Container("agent"), {"securityContext", "capabilities", "add"}));
  ASSERT_FALSE(add.empty()) << "no capabilities.add on the agent container";
  std::set<int> caps;
  for (const std::string& name : add) {
    auto it = kCaps.find(name);
    ASSERT_NE(it, kCaps.end()) << "the test does not know CAP_" << name;
    if (prctl(PR_CAPBSET_READ, it->second, 0, 0, 0) != 1) {
      if (name == "SYS_RESOURCE") continue;  // only for kernels < 5.11 (memlock), see the file
      GTEST_SKIP() << "this test runs without CAP_" << name << " itself";
    }
    caps.insert(it->second);
  }
  const bool btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
  // A TF task of user nobody, holding a step counter file open.
  TempDir tmp;
  ASSERT_EQ(chmod(tmp.path().c_str(), 0777), 0);
  const std::string steps = tmp.File("job.tfdiag-steps");
  const pid_t task = fork();
  if (task == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(126);
    const std::string script =
        "echo 42 > '" + steps + "' && exec 3<'" + steps + "' && exec sleep 60";
    const char* env[] = {
        "PATH=/usr/bin:/bin",
        "TF_CONFIG={\"cluster\":{\"ps\":[\"127.0.0.1:29481\"]},\"task\":{\"type\":\"ps\","
        "\"index\":0}}",
        nullptr};
    execle("/bin/sh", "sh", "-c", script.c_str(), nullptr, env);
    _exit(127);
  }
  ASSERT_GT(task, 0);
  for (int i = 0; i < 50 && ReadFile(steps).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // exec sleep done
  auto attach = [&](const std::set<int>& with, const std::string& name) {
    return RunWithCaps(with,
                       {"attach", "--pid", std::to_string(task), "--duration", "1s", "--interval",
                        "200ms", "-o", tmp.File(name + ".json")},
                       tmp.File(name + ".err"));
  };
  auto without = [&](int cap) {
    std::set<int> s = caps;
    s.erase(cap);
    return s;
  };
  const RunResult all = attach(caps, "all");
  EXPECT_EQ(all.exit_code, 0) << all.err;
  const std::string bundle = ReadFile(tmp.File("all.json"));
  EXPECT_NE(bundle.find("\"pid\":" + std::to_string(task)), std::string::npos) << all.err;
  EXPECT_NE(bundle.find("job.tfdiag-steps"), std::string::npos) << "step counter not read";
  if (btf) {
    EXPECT_EQ(all.err.find("probe"), std::string::npos) << all.err;
  }
  // Without DAC_READ_SEARCH another user's /proc/PID/environ (mode 0400, owned by the task's
  // user) cannot be opened: no TF_CONFIG, no task.
  const RunResult no_dac = attach(without(CAP_DAC_READ_SEARCH), "no_dac");
  EXPECT_NE(no_dac.exit_code, 0) << no_dac.err;
  EXPECT_NE(no_dac.err.find("no TF task found"), std::string::npos) << no_dac.err;
  // Without SYS_PTRACE the ptrace access check of /proc/PID/fd/N and /proc/PID/root fails: the
  // step counter is not read (on kernels where environ needs it too, there is no task at all).
  const RunResult no_ptrace = attach(without(CAP_SYS_PTRACE), "no_ptrace");
  EXPECT_EQ(ReadFile(tmp.File("no_ptrace.json")).find("job.tfdiag-steps"), std::string::npos)
      << no_ptrace.err;
  // Without BPF or PERFMON the probes do not load (and the agent says so).
  if (btf) {
    for (int cap : {CAP_BPF, CAP_PERFMON}) {
      const RunResult r = attach(without(cap), "no_" + std::to_string(cap));
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_NE(r.err.find("probe"), std::string::npos) << "without capability " << cap;
    }
  }
  kill(task, SIGKILL);
  waitpid(task, nullptr, 0);
}

}  // namespace
}  // namespace tfdiag::test
