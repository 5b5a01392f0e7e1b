// tfdiag attach: find the TF tasks on this node, sample how they use the CPU, write a bundle
// (and optionally analyze it right away).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "analyzers/analysis.h"
#include "cli/commands.h"
#include "collectors/attach/recorder.h"
#include "core/atomic_file.h"
#include "core/bundle.h"
#include "core/escape.h"
#include "core/plural.h"
#include "report/metrics_server.h"
#include "report/report.h"
#include "report/wrap.h"

namespace tfdiag {

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

struct AttachOptions {
  std::vector<int> pids;
  std::vector<std::string> pods;
  std::string job;
  std::string duration = "30s";
  std::string interval = "1s";
  std::string output;
  bool analyze = false;
  std::string root = "/";
  RuleOptions rules;
  bool no_bpf = false;
  std::string bpf_attach = "auto";  // hidden: force "tp_btf" or "raw_tp" (fallback tests)
  std::vector<int> hdfs_ports = {9866, 50010};
  std::string serve;           // "127.0.0.1:9464": agent mode, /metrics
  std::string rescan = "30s";  // agent mode: how often the node is scanned for new TF tasks
  std::string node_name;       // agent mode: the node's name (downward API), else $NODE_NAME
  std::string stale_after;     // /healthz 503 after this long without a round; "" = default
  std::string tf_job;          // the tf_job label of every task (a process's TFDIAG_JOB wins)
  bool duration_given = false;
  bool verbose = false;  // every note, not notes that differ only in the pid folded into one
};

// The recording's notes for stderr: notes that differ only in their pids ("pid 7351: namespace
// unknown: ...", one per task beside a job outside Kubernetes) as one line with the count and the
// pids (issue 39: six such lines read as failures). The bundle keeps each in meta.warnings;
// --verbose prints each.
std::vector<std::string> FoldPidNotes(const std::vector<std::string>& notes) {
  // A note may carry a workload's bytes (paths, names): std::isdigit of a negative char is
  // undefined.
  auto IsDigit = [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; };
  std::vector<std::string> keys, firsts;  // per group: its key and its first note
  std::vector<std::vector<std::string>> pids;
  for (const std::string& n : notes) {
    std::string key, first;
    for (size_t i = 0; i < n.size();) {
      if (n.compare(i, 4, "pid ") == 0 && i + 4 < n.size() && IsDigit(n[i + 4])) {
        size_t j = i + 4;
        while (j < n.size() && IsDigit(n[j])) ++j;
        if (first.empty()) first = n.substr(i + 4, j - i - 4);
        key += "pid #", i = j;
      } else {
        key += n[i++];
      }
    }
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end() || first.empty()) {
      keys.push_back(first.empty() ? n : key);
      firsts.push_back(n);
      pids.push_back({first});
      continue;
    }
    pids[it - keys.begin()].push_back(first);
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < keys.size(); ++i) {
    const bool no_pod = keys[i].find("serviceaccount/namespace") != std::string::npos &&
                        keys[i].rfind("pid #: namespace unknown", 0) == 0;
    if (pids[i].size() < 2 && !no_pod) {
      out.push_back(firsts[i]);
      continue;
    }
    std::string list;
    for (size_t k = 0; k < pids[i].size() && k < 8; ++k) list += (k ? ", " : "") + pids[i][k];
    if (pids[i].size() > 8) list += ", ...";
    const size_t n = pids[i].size();
    out.push_back(
        no_pod
            ? fmt::format("{} {} not in {} (no service-account namespace "
                          "in {} root): namespace unknown ({} {}; --verbose for {})",
                          Count(n, "task"), n == 1 ? "is" : "are",
                          n == 1 ? "a Kubernetes pod" : "Kubernetes pods", n == 1 ? "its" : "their",
                          Noun(n, "pid"), list, n == 1 ? "the detail" : "each")
            : fmt::format("{} tasks (pids {}): {} (--verbose for each)", n, list, keys[i]));
  }
  return out;
}

// "30s", "2m", "500ms", "1.5" (seconds). Errors: kUsage naming the option.
StatusOr<double> ParseSeconds(const std::string& text, const char* option) {
  double scale = 1;
  std::string num = text;
  auto ends = [&](const char* suf) {
    size_t n = std::strlen(suf);
    return num.size() > n && num.compare(num.size() - n, n, suf) == 0;
  };
  if (ends("ms")) {
    scale = 1e-3, num.resize(num.size() - 2);
  } else if (ends("s")) {
    num.pop_back();
  } else if (ends("m")) {
    scale = 60, num.pop_back();
  } else if (ends("h")) {
    scale = 3600, num.pop_back();
  }
  char* end = nullptr;
  double v = std::strtod(num.c_str(), &end);
  if (num.empty() || end != num.c_str() + num.size() || !(v > 0)) {
    return UsageError("{} {}: expected a positive duration such as 30s, 2m or 500ms", option, text);
  }
  return v * scale;
}

Status Run(const AttachOptions& o, int* exit_code) {
  StatusOr<double> duration = ParseSeconds(o.duration, "--duration");
  if (!duration.ok()) return duration.status();
  StatusOr<double> interval = ParseSeconds(o.interval, "--interval");
  if (!interval.ok()) return interval.status();
  if (o.output.empty() && !o.analyze && o.serve.empty())
    return UsageError("give -o FILE (the bundle), --analyze, --serve ADDR, or several");
  if (!o.stale_after.empty() && o.serve.empty())
    return UsageError("--stale-after {}: only with --serve (it sets when /healthz turns 503)",
                      o.stale_after);
  StatusOr<RuleSet> rules = LoadRules(o.rules);
  if (!rules.ok()) return rules.status();
  if (::geteuid() != 0) {
    std::fprintf(stderr,
                 "tfdiag attach: warning: not root: other users' processes are invisible "
                 "(TF_CONFIG is read from /proc/PID/environ, which needs root or "
                 "CAP_SYS_PTRACE)\n");
  }
  // A pid that names no process: said, not "no TF task found among 0 processes" (issue 39).
  for (int pid : o.pids) {
    const std::string proc =
        (o.root == "/" ? std::string() : o.root) + "/proc/" + std::to_string(pid);
    struct stat st;
    if (pid <= 0 || ::stat(proc.c_str(), &st) != 0) {
      return UsageError(
          "--pid {}: no such process ({} does not exist); without --pid, attach takes every TF "
          "task it finds (TF_CONFIG or --job_name)",
          pid, proc);
    }
  }
  RecordOptions ro;
  ro.discovery.root = o.root;
  for (int pid : o.pids) ro.discovery.pids.push_back(pid);
  ro.discovery.pod_names = o.pods;
  ro.discovery.job_prefix = o.job;
  ro.duration_s = *duration;
  ro.bpf = !o.no_bpf;
  StatusOr<BpfAttach> attach = ParseBpfAttach(o.bpf_attach);
  if (!attach.ok()) return attach.status();
  ro.bpf_attach = *attach;
  ro.hdfs_ports = o.hdfs_ports;
  if (!o.tf_job.empty() && !IsJobName(o.tf_job)) {
    return UsageError(
        "--tf-job {}: expected 1-63 of [A-Za-z0-9._-], starting with a letter or digit",
        Printable(o.tf_job));
  }
  ro.tf_job = o.tf_job;
  ro.keep_rows = !o.output.empty() || o.analyze;
  std::unique_ptr<MetricsServer> server;
  if (!o.serve.empty()) {
    // /healthz: stale after 5 missed rounds, at least 10 s (a rescan of a busy node's /proc is
    // part of a round).
    double stale_after = std::max(5 * *interval, 10.0);
    if (!o.stale_after.empty()) {
      StatusOr<double> s = ParseSeconds(o.stale_after, "--stale-after");
      if (!s.ok()) return s.status();
      stale_after = *s;
    }
    std::string warning;
    StatusOr<std::unique_ptr<MetricsServer>> s =
        MetricsServer::Start(o.serve, &warning, stale_after);
    if (!s.ok()) return s.status();
    server = std::move(*s);
    if (!warning.empty()) PrintNote("tfdiag attach: warning: ", warning);
    // Agent mode (no bundle, no analysis): zero TF tasks is fine, new ones join every --rescan.
    if (o.output.empty() && !o.analyze) {
      StatusOr<double> rescan = ParseSeconds(o.rescan, "--rescan");
      if (!rescan.ok()) return rescan.status();
      ro.rescan_s = *rescan;
    }
    ro.node_name = o.node_name;
    if (ro.node_name.empty() && std::getenv("NODE_NAME") != nullptr)
      ro.node_name = std::getenv("NODE_NAME");
    std::fprintf(stderr, "tfdiag attach: serving /metrics on %s (port %d)\n", o.serve.c_str(),
                 server->port());
    // An agent keeps collecting until stopped, unless --duration was given.
    if (!o.duration_given) ro.duration_s = 1e12;
    MetricsServer* sink = server.get();
    ro.on_figures = [sink](const LiveFigures& f) { sink->Publish(f); };
    // Which tasks it follows, as they come and go (escaped: the names are the workload's).
    ro.on_task_log = [](const std::string& line) { PrintNote("tfdiag attach: ", line); };
  }
  ro.interval_s = *interval;
  ro.stop = &g_stop;
  const bool tty = IsTty(2);
  ro.on_sample = [tty](const RecordProgress& p) {
    static bool started = false;
    if (!started && !tty) {  // one line when the probes run and the first sample is taken
      std::fprintf(stderr, "tfdiag attach: recording %d tasks\n", p.tasks);
    }
    started = true;
    if (!tty) return;
    std::fprintf(stderr, "\r\x1b[K[%4.0f/%.0f s] %d/%d tasks alive, %d threads, %.2f CPUs used%s",
                 p.elapsed_s, p.duration_s, p.alive, p.tasks, p.threads, p.cpu_cores,
                 g_stop.load() ? " (stopping)" : "  Ctrl-C stops early");
  };
  // A dropped SSH session (SIGHUP, then SIGPIPE on the dead terminal) or a SIGUSR1 ends the
  // recording as SIGINT/SIGTERM do: the bundle is still written.
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGPIPE}) sigaction(sig, &sa, nullptr);
  StatusOr<Capture> c = Record(ro);
  if (tty) std::fprintf(stderr, "\r\x1b[K");
  if (!c.ok()) return c.status();
  if (!o.output.empty()) {
    TFDIAG_RETURN_IF_ERROR(WriteBundle(*c, o.output));
    std::fprintf(stderr, "tfdiag attach: %zu tasks, %zu samples over %.1f s -> %s\n",
                 c->processes.size(), c->process_samples.size(),
                 (c->meta.window_end - c->meta.window_start) / 1e9, o.output.c_str());
  }
  for (const std::string& w : o.verbose ? c->meta.warnings : FoldPidNotes(c->meta.warnings)) {
    PrintNote("tfdiag attach: note: ", w);
  }
  if (o.analyze) {
    AnalysisResult r = Analyze(*c, *rules);
    TextReportOptions to;
    to.color = IsTty(1) && std::getenv("NO_COLOR") == nullptr;
    to.width = IsTty(1) ? kProseColumns : 0;
    std::fputs(RenderText(*c, r, to).c_str(), stdout);
  }
  *exit_code = 0;
  return OkStatus();
}

}  // namespace

Command RegisterAttach(CLI::App& root) {
  auto o = std::make_shared<AttachOptions>();
  CLI::App* app = root.add_subcommand(
      "attach",
      "Find the TF tasks on this node (TF_CONFIG or --job_name/--task_index), sample their "
      "threads, context switches and CPU cgroups (quota, cpuset, throttling), write a bundle");
  app->add_option("--pid", o->pids, "Only these processes (repeatable)");
  app->add_option("--pod", o->pods, "Only these pods, by name (repeatable)");
  app->add_option("--job", o->job, "Only pods of this TFJob (<job>-ps-<i>, <job>-worker-<i>)");
  app->add_option("-d,--duration", o->duration, "How long to sample (30s, 2m, 500ms)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->duration_given = true; });
  app->add_option("--interval", o->interval, "Sampling period")->capture_default_str();
  app->add_option("-o,--output", o->output, "Write the bundle here (atomically)");
  app->add_flag("--analyze", o->analyze, "Print the analysis of the recording");
  app->add_flag("-v,--verbose", o->verbose,
                "Print each task's note (notes that differ only in the pid are otherwise one "
                "line; the bundle keeps each)");
  app->add_option("--root", o->root, "Host root where /proc lives (e.g. /host in a DaemonSet)")
      ->capture_default_str();
  app->add_flag("--no-bpf", o->no_bpf,
                "Do not load the eBPF probes (traffic per peer, context switches, run-queue "
                "latency, HDFS input): /proc only");
  // Hidden (empty group): the attach flavour is normally chosen by probing.
  app->add_option("--bpf-attach", o->bpf_attach,
                  "eBPF attach type: auto (tp_btf, else raw_tp), tp_btf or raw_tp")
      ->group("");
  app->add_option("--hdfs-port", o->hdfs_ports,
                  "Remote ports of HDFS DataNodes, counted as input (repeatable)")
      ->capture_default_str();
  app->add_option(
      "--serve", o->serve,
      "Agent mode: keep collecting and serve Prometheus /metrics (and /healthz) on HOST:PORT "
      "(127.0.0.1:9464; :9464 or 0.0.0.0:9464 = every interface, with a warning; "
      "[::1]:9464). Without -o/--analyze it runs as a node agent: no TF task yet is "
      "fine, new tasks join every --rescan");
  app->add_option("--rescan", o->rescan, "Agent mode: how often to look for new TF tasks")
      ->capture_default_str();
  app->add_option("--node-name", o->node_name,
                  "Agent mode: the node's name for the node label (default $NODE_NAME, else the "
                  "host name)");
  app->add_option("--stale-after", o->stale_after,
                  "Agent mode: /healthz answers 503 once no sampling round has completed for this "
                  "long (default 5 x --interval, at least 10s)");
  app->add_option("--tf-job", o->tf_job,
                  "The job's name (the tf_job label) for every task; a process's own TFDIAG_JOB "
                  "variable or --tf_job flag wins. Default: the TFJob of a Kubeflow pod name, "
                  "else ip-<hash of the job's PS addresses> (bare metal)");
  AddRuleOptions(app, &o->rules);
  return {app, [o](int* exit_code) { return Run(*o, exit_code); }};
}

}  // namespace tfdiag
