#include "collectors/attach/recorder.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "collectors/attach/bpf_sampler.h"
#include "collectors/attach/job_groups.h"
#include "collectors/attach/process_watch.h"
#include "collectors/attach/step_counter.h"
#include "collectors/procfs/cgroup_reader.h"
#include "collectors/procfs/proc_reader.h"
#include "core/capture_builder.h"

namespace tfdiag {

namespace {

TimeNs RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

constexpr TimeNs kAgentGoneKeepNs = TimeNs{300} * 1000000000;   // 5 min: Prometheus staleness
constexpr TimeNs kAgentIdleSocketNs = TimeNs{60} * 1000000000;  // a TF/HDFS socket idle 1 min
// Exited tasks an agent keeps in its figures (each is a dozen series) for Prometheus's staleness:
// at most this many, the oldest exits dropped first (2,305 short-lived TF processes in 21 s made
// 48,489 series before the cap).
constexpr size_t kAgentMaxExitedTasks = 256;
// Bytes of TF_CONFIG one rescan of an agent parses at most (DiscoveryOptions::
// environ_budget_bytes): 40 processes with 950 KB TF_CONFIGs took an agent to 344 MB before.
constexpr int64_t kAgentEnvironBudget = int64_t{32} << 20;
// The same for the look at new processes between two rescans (each sample): at most
// NewPidWatch::kMaxPerSample processes, and this many bytes of their TF_CONFIGs.
constexpr int64_t kAgentNewEnvironBudget = int64_t{4} << 20;
// Samples between two looks for a task's step file once early looks found none (8 s at 1 s).
constexpr int kStepLookMaxGap = 8;
// The longest the recorder sleeps between two looks at its stop flag (Ctrl-C, SIGTERM).
constexpr int64_t kStopCheckMs = 250;
// Warnings kept in the bundle's meta: a churning node must not grow them without bound.
constexpr size_t kMaxWarnings = 1000;

struct Tracked {
  std::string tf_job, namespace_;
  TimeNs exited_ns = 0;
  TimeNs counted_since = 0;  // when its eBPF byte counters started (from 0): when it was found
  TfTask task;
  uint32_t process = 0;  // builder process index
  bool alive = true;
  bool final_bpf = false;  // the eBPF rows at its exit were written
  bool forgotten = false;  // an agent dropped it from the figures (and the probes' tables)
  LiveTaskFigures last;    // its figures at the last sample (kept for /metrics after exit)
  int64_t last_cpu_ns = 0;
  StepFile step_file;         // the task's step counter (step_counter.h); fd -1 none found yet
  bool step_refused = false;  // its step file is no regular file or stalled: not read again
  StrId step_source = 0;      // "step counter file <path> (fd N)" once read
  int64_t last_steps = -1;
  double cpu_limit = -1;      // LiveTaskFigures::cpu_limit: CFS CPUs, 0 none, -1 unread
  int32_t cpuset_cpus = 0;    // CPUs of its cpuset, 0 unknown
  int64_t start_ticks = 0;    // its process's start time (/proc/PID/stat), 0 unknown
  std::string cpu_stat_path;  // its CPU cgroup's cpu.stat, "" unresolved
  int step_look_in = 0;       // samples until the next look for its step file
  int step_look_gap = 1;      // samples between looks: doubles up to kStepLookMaxGap
};

// "job 'J' task ps:0 (pid 123, 10.0.0.5:2222)" for the agent's log (unescaped: the caller
// prints it with PrintNote).
std::string TaskLogName(const Tracked& tr) {
  return fmt::format("job '{}' task {} (pid {}{}{})", tr.tf_job, tr.task.label, tr.task.pid,
                     tr.task.address.empty() ? "" : ", " + tr.task.address,
                     tr.task.pod_name.empty() ? "" : ", pod " + tr.task.pod_name);
}

}  // namespace

StatusOr<Capture> Record(const RecordOptions& o) {
  if (o.interval_s <= 0 || o.duration_s <= 0) {
    return InvalidInput("--duration and --interval must be positive");
  }
  if (!o.tf_job.empty() && !IsJobName(o.tf_job)) {
    return InvalidInput(
        "--tf-job {}: expected 1-63 of [A-Za-z0-9._-], starting with a letter or "
        "digit",
        o.tf_job);
  }
  // Environments are read once per process over all scans; a stop request ends a scan early.
  EnvironCache environ_cache;
  DiscoveryOptions scan = o.discovery;
  scan.stop = o.stop;
  scan.cache = &environ_cache;
  const bool agent = o.rescan_s > 0;
  if (agent) scan.environ_budget_bytes = kAgentEnvironBudget;
  if (agent) {
    // Each live task holds a pidfd (exit times) and may hold a step file: the soft limit of open
    // files goes up to the hard one (at most 65,536), so 1,024 tasks never starve the HTTP server
    // of descriptors (a soft 1,024 is the usual default).
    rlimit nofile{};
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < 65536 &&
        nofile.rlim_cur < nofile.rlim_max) {
      nofile.rlim_cur = std::min<rlim_t>(nofile.rlim_max, 65536);
      ::setrlimit(RLIMIT_NOFILE, &nofile);
    }
  }
  StatusOr<DiscoveryResult> found = DiscoverTfTasks(scan);
  if (!found.ok()) return found.status();
  int64_t environ_reads = found->environ_reads;
  // Processes whose TF_CONFIG a budget left for later, each counted once while it waits: those
  // of the latest rescan (and of the looks at new processes since), in environ_waiting.
  int64_t environ_dropped = 0;
  std::set<pid_t> environ_waiting;
  auto note_left = [&](const std::vector<pid_t>& pids) {
    for (pid_t p : pids) environ_dropped += environ_waiting.insert(p).second;
  };
  note_left(found->environ_dropped_pids);
  pid_t resume_at = found->resume_at;  // where the next rescan's budget starts
  int64_t tasks_dropped = 0;
  if (found->stopped && found->tasks.empty() && !agent) {
    return Status(
        StatusCode::kUnavailable,
        fmt::format("stopped while scanning the node's processes ({} looked at)", found->scanned));
  }
  if (found->tasks.empty() && !agent) return NotFound("{}", NoTaskFound(*found, o.discovery));
  // A recording is one job: tasks of another cluster (another TF_CONFIG on this node) are listed
  // apart, never mixed in (the agent labels them as their own tf_job instead).
  std::vector<std::string> other_jobs;
  if (!agent) other_jobs = KeepFirstJob(&found->tasks, o.tf_job);
  CaptureBuilder b;
  CaptureMeta& meta = b.meta();
  utsname u;
  if (uname(&u) == 0) {
    meta.host = u.nodename;
    meta.kernel = u.release;
  }
  meta.tool_version = TFDIAG_VERSION;
  meta.interval_ms = static_cast<int64_t>(o.interval_s * 1000);
  meta.warnings = found->warnings;
  meta.warnings.insert(meta.warnings.end(), other_jobs.begin(), other_jobs.end());
  if (found->unreadable > 0) {
    meta.warnings.push_back(
        fmt::format("{} {} environment could not be read (kernel threads, zombies, or no "
                    "ptrace rights)",
                    found->unreadable, found->unreadable == 1 ? "process's" : "processes'"));
  }
  size_t warnings_dropped = 0;
  auto warn = [&](std::string w) {
    if (meta.warnings.size() < kMaxWarnings) {
      meta.warnings.push_back(std::move(w));
    } else {
      ++warnings_dropped;
    }
  };
  int64_t exited_dropped = 0;  // exited tasks dropped from the figures by kAgentMaxExitedTasks
  const int host_cpus = HostCpuCount();
  StatusOr<std::vector<CgroupMount>> mounts = ReadMountInfo();
  std::vector<Tracked> tracked;
  std::vector<TimeNs> first_ts, last_ts;
  std::set<pid_t> known;
  NewPidWatch new_pids(o.discovery.root);  // agent: processes started since the last sample
  ExitWatch exits;                         // exit times of live tasks, as the poll returns
  std::unique_ptr<BpfSampler> probes;
  if (o.bpf) {
    // A recording keeps one row series per TF/HDFS socket (the analysis reads them by socket);
    // an agent without history folds sockets idle for a minute into their peer's total.
    TrafficTableLimits limits;
    if (!o.keep_rows) limits.resolved_idle_ns = kAgentIdleSocketNs;
    probes = std::make_unique<BpfSampler>(found->tasks, o.hdfs_ports, o.bpf_attach, limits, &b,
                                          &meta.warnings);
    meta.probes = probes->probes();
  } else {
    meta.warnings.push_back(std::string("eBPF probes off (--no-bpf): ") + kWithoutBpf);
  }
  // Tasks left out by the cap on live tasks (counted once per process), tried again at each
  // rescan until room frees up; entries of processes a rescan no longer sees are dropped.
  std::set<pid_t> capped;
  auto track = [&](const TfTask& t) {
    if (agent && !t.job.empty()) {
      size_t alive = 0;
      for (const Tracked& tr : tracked) alive += tr.alive;
      if (alive >= o.max_tasks) {
        if (capped.insert(t.pid).second) ++tasks_dropped;
        return;
      }
      capped.erase(t.pid);
    }
    known.insert(t.pid);
    if (t.job.empty()) return;
    Tracked tr;
    tr.task = t;
    tr.tf_job = JobNameOf(t, o.tf_job);
    // Its process's start time: a new process on this pid later is another task (pid reuse).
    if (StatusOr<ProcStat> st = ReadProcStat(t.pid); st.ok()) {
      tr.start_ticks = st->start_time_ticks;
    }
    std::string note;
    tr.namespace_ =
        NamespaceOf(o.discovery.root, t.identity_pid == 0 ? t.pid : t.identity_pid, &note);
    if (!note.empty()) warn(std::move(note));
    // One label set, one series: an exited task with this task's labels (a restart, a job
    // resubmitted under its name) leaves the figures now, not after its 5 minutes.
    for (Tracked& old : tracked) {
      if (old.alive || old.forgotten || old.task.job != t.job || old.task.index != t.index ||
          old.tf_job != tr.tf_job || old.namespace_ != tr.namespace_ ||
          old.task.pod_name != t.pod_name) {
        continue;
      }
      if (probes && !o.keep_rows) probes->Forget(old.task.pid);
      old.forgotten = true;
    }
    ProcessRow row;
    row.task = b.AddTask(t.job, 0, t.index);
    row.pid = t.pid;
    row.pod = b.Intern(t.pod_name);
    row.pod_uid = b.Intern(t.kube.pod_uid);
    row.container = b.Intern(t.kube.container_id);
    row.qos = b.Intern(t.kube.qos == QosClass::kUnknown ? "" : QosClassName(t.kube.qos));
    row.cgroup = b.Intern(t.cgroup_path);
    row.host_cpus = host_cpus;
    StatusOr<CgroupCpu> cg =
        mounts.ok() ? ResolveCgroupCpu(t.cgroups, *mounts) : StatusOr<CgroupCpu>(mounts.status());
    if (cg.ok()) {
      row.cpu_limit = cg->effective_cpu_limit;
      row.quota_us = cg->quota_us;
      row.period_us = cg->period_us;
      row.cpuset_cpus = cg->cpuset_count;
      std::string cpus;
      for (int cpu : cg->cpuset) cpus += (cpus.empty() ? "" : ",") + std::to_string(cpu);
      row.cpuset = b.Intern(cpus);
      tr.cpu_limit = cg->effective_cpu_limit;
      tr.cpuset_cpus = cg->cpuset_count;
      tr.cpu_stat_path = cg->dir + "/cpu.stat";
    } else {
      warn(fmt::format("{} (pid {}): CPU cgroup: {}", t.label, t.pid, cg.status().message()));
    }
    tr.process = b.AddProcess(row);
    if (probes) {
      if (probes->any()) probes->AddClusterSpec(t);
      probes->Add(t.pid, tr.process, b.AddTask(t.job, 0, t.index), t.label);
    }
    // An agent keeps no cluster spec per task (the probes learned its addresses, the job's name
    // is made): 1,000 tenants with 100 KB TF_CONFIGs must not hold 1,000 parsed copies.
    if (agent) {
      tr.task.config.cluster = ClusterSpec();
      environ_cache.Erase(t.pid);  // its TF_CONFIG is not read again while it is tracked
    }
    tr.counted_since = RealtimeNs();
    if ((o.discovery.root.empty() || o.discovery.root == "/") && t.pid > 0) exits.Add(t.pid);
    if (o.on_task_log) o.on_task_log("recording " + TaskLogName(tr));
    tracked.push_back(std::move(tr));
    first_ts.push_back(0);
    last_ts.push_back(0);
  };
  for (const TfTask& t : found->tasks) track(t);
  // The tracked copies are what is kept: the scan's own (each with its whole cluster spec) go.
  found->tasks.clear();
  found->tasks.shrink_to_fit();
  // Without the eBPF sched probe, run-queue wait comes from /proc/PID/task/*/schedstat (run and
  // wait ns per thread, summed; threads that exit take theirs along): the same SchedRow shape,
  // with no histogram (no p99) and no wait count. meta.probes (eBPF only) then names no "sched(".
  const bool schedstat_rows = o.keep_rows && meta.probes.rfind("sched(", 0) != 0;
  // An agent keeps no thread names or schedstat rows: two files per thread instead of four.
  const ThreadReads thread_reads = o.keep_rows ? ThreadReads::kAll : ThreadReads::kLean;
  // A task found by a scan joins unless its pid is known; a pid reused by a new task: the old,
  // exited one leaves the figures now.
  auto join = [&](const TfTask& t) {
    if (known.count(t.pid)) return;
    for (Tracked& old : tracked) {
      if (old.task.pid == t.pid && !old.alive) old.forgotten = true;
    }
    track(t);
  };
  bool spec_drop_logged = false;  // the first spec address past the sampler's bound was logged
  bool environ_drop_logged = false, tasks_drop_logged = false;  // likewise for the budgets
  auto last_scan = std::chrono::steady_clock::now();
  if (agent) new_pids.Next(known);  // the processes the first scan looked at
  meta.window_start = RealtimeNs();
  const auto start = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration<double>(o.interval_s);
  for (int tick = 0;; ++tick) {
    const TimeNs now = RealtimeNs();
    // Agent mode: new TF tasks (pods scheduled since) join at the next scan.
    if (agent &&
        std::chrono::steady_clock::now() - last_scan >= std::chrono::duration<double>(o.rescan_s)) {
      last_scan = std::chrono::steady_clock::now();
      // Tracked tasks are not parsed again (a task is its process: pid and start time; a reused
      // pid leaves the tracked set when its old process exits).
      std::set<pid_t> tracked_pids;
      for (const Tracked& tr : tracked) {
        if (tr.alive) tracked_pids.insert(tr.task.pid);
      }
      scan.skip = &tracked_pids;
      scan.resume_at = resume_at;
      StatusOr<DiscoveryResult> again = DiscoverTfTasks(scan);
      scan.skip = nullptr;
      scan.resume_at = 0;
      if (again.ok() && again->stopped) break;  // SIGTERM mid-scan: stop now
      if (again.ok()) {
        environ_reads += again->environ_reads;
        // Those still waiting stay counted; the rest were parsed (or exited).
        std::set<pid_t> waiting;
        for (pid_t p : again->environ_dropped_pids) {
          if (environ_waiting.count(p)) waiting.insert(p);
        }
        environ_waiting = std::move(waiting);
        note_left(again->environ_dropped_pids);
        resume_at = again->resume_at;
      }
      if (again.ok()) {
        std::set<pid_t> seen;
        for (const TfTask& t : again->tasks) {
          seen.insert(t.pid);
          join(t);
        }
        // Pids stay known while they are seen (exited ones leave the set: bounded by the
        // processes alive) or while their task is tracked alive.
        for (const Tracked& tr : tracked) {
          if (tr.alive) seen.insert(tr.task.pid);
        }
        // Capped tasks stay unknown (tried again at the next rescan) while they are seen.
        for (auto it = capped.begin(); it != capped.end();) {
          it = seen.erase(*it) > 0 ? std::next(it) : capped.erase(it);
        }
        known = std::move(seen);
      }
      ::malloc_trim(0);  // what the scan's environments and parses took goes back now
    } else if (agent) {
      // Between rescans, processes started since the last sample (a task is counted from its
      // first second, not from the next rescan): bounded in pids and environment bytes.
      DiscoveryOptions fresh = scan;
      fresh.pids = new_pids.Next(known);
      if (!o.discovery.pids.empty()) {  // only the processes asked for (--pid)
        const std::vector<pid_t>& asked = o.discovery.pids;
        fresh.pids.erase(
            std::remove_if(
                fresh.pids.begin(), fresh.pids.end(),
                [&](pid_t p) { return std::find(asked.begin(), asked.end(), p) == asked.end(); }),
            fresh.pids.end());
      }
      fresh.environ_budget_bytes = kAgentNewEnvironBudget;
      if (!fresh.pids.empty()) {
        StatusOr<DiscoveryResult> got = DiscoverTfTasks(fresh);
        if (got.ok() && got->stopped) break;
        if (got.ok()) {
          environ_reads += got->environ_reads;
          note_left(got->environ_dropped_pids);
          for (const TfTask& t : got->tasks) {
            join(t);
            for (pid_t other : t.other_pids) known.insert(other);
          }
        }
      }
    }
    if (agent) {
      // At most kAgentMaxExitedTasks exited tasks stay in the figures: the oldest exits go.
      std::vector<size_t> exited;
      for (size_t k = 0; k < tracked.size(); ++k) {
        if (!tracked[k].alive && !tracked[k].forgotten) exited.push_back(k);
      }
      if (exited.size() > kAgentMaxExitedTasks) {
        const size_t drop = exited.size() - kAgentMaxExitedTasks;
        std::nth_element(
            exited.begin(), exited.begin() + drop, exited.end(),
            [&](size_t a, size_t b) { return tracked[a].exited_ns < tracked[b].exited_ns; });
        for (size_t i = 0; i < drop; ++i) {
          Tracked& tr = tracked[exited[i]];
          if (probes && !o.keep_rows) probes->Forget(tr.task.pid);
          tr.forgotten = true;
          ++exited_dropped;
        }
      }
    }
    if (agent && !o.keep_rows) {
      // Nothing is written at the end without rows: forgotten tasks free their memory.
      size_t kept = 0;
      for (size_t k = 0; k < tracked.size(); ++k) {
        if (tracked[k].forgotten) continue;
        if (kept != k) {
          tracked[kept] = std::move(tracked[k]);
          first_ts[kept] = first_ts[k];
          last_ts[kept] = last_ts[k];
        }
        ++kept;
      }
      const bool freed = kept < tracked.size();
      tracked.erase(tracked.begin() + static_cast<std::ptrdiff_t>(kept), tracked.end());
      first_ts.resize(kept);
      last_ts.resize(kept);
      // Give the freed heap back to the system (glibc keeps it otherwise: 205 MB stayed after
      // the tasks of a hostile burst had gone).
      if (freed) ::malloc_trim(0);
    }
    RecordProgress prog;
    prog.tasks = static_cast<int>(tracked.size());
    LiveFigures figs;
    figs.ts = now;
    figs.node = o.node_name.empty() ? meta.host : o.node_name;
    figs.host_cpus = host_cpus;
    figs.exited_tasks_dropped = agent ? exited_dropped : -1;
    figs.environ_reads = agent ? environ_reads : -1;
    figs.environ_dropped = agent ? environ_dropped : -1;
    figs.tasks_dropped = agent ? tasks_dropped : -1;
    // What the node-wide budgets leave out, logged once each (the counters say how much).
    if (agent && environ_dropped > 0 && !environ_drop_logged && o.on_task_log) {
      environ_drop_logged = true;
      o.on_task_log(fmt::format(
          "the TF_CONFIG values of this node's processes pass the {} MiB one rescan parses: the "
          "rest wait for the next rescans, which go on where this one stopped "
          "(tfdiag_agent_environ_dropped_total counts them)",
          kAgentEnvironBudget >> 20));
    }
    if (agent && tasks_dropped > 0 && !tasks_drop_logged && o.on_task_log) {
      tasks_drop_logged = true;
      o.on_task_log(fmt::format(
          "more than {} live TF tasks on this node: the rest are tracked as others exit "
          "(tfdiag_agent_tasks_dropped_total counts them)",
          o.max_tasks));
    }
    if (agent && probes && probes->any()) {
      figs.spec_addresses_dropped = probes->spec_addresses_dropped();
      if (figs.spec_addresses_dropped > 0 && !spec_drop_logged && o.on_task_log) {
        spec_drop_logged = true;
        o.on_task_log(fmt::format(
            "the cluster specs of this node's tasks list more than {} addresses: the rest are not "
            "learned (their bytes count as peer \"other\"; "
            "tfdiag_agent_spec_addresses_dropped_total counts them)",
            BpfSampler::kMaxSpecAddresses));
      }
    }
    std::map<int32_t, size_t> figure_of;       // pid -> figs.tasks index
    std::map<std::string, CpuStat> cpu_stats;  // cpu.stat path -> this sample's counters
    std::vector<int32_t> bpf_emit;             // pids whose eBPF rows this sample writes
    // An exited task: its last /proc figures, and its final eBPF counters (filled below).
    auto exited_figures = [&](Tracked& tr) {
      // An agent forgets a gone task after a while (its series are dropped); a recording keeps
      // reporting it to the end.
      if (tr.forgotten) return;
      if (agent && !o.keep_rows && tr.exited_ns > 0 && now - tr.exited_ns > kAgentGoneKeepNs) {
        if (probes) probes->Forget(tr.task.pid);
        tr.forgotten = true;
        return;
      }
      figure_of[tr.task.pid] = figs.tasks.size();
      LiveTaskFigures& tf = figs.tasks.emplace_back(tr.last);
      tf.alive = false;
      tf.peers.clear();
      tf.hdfs_read_bytes = 0;
    };
    for (size_t k = 0; k < tracked.size(); ++k) {
      Tracked& tr = tracked[k];
      if (!tr.alive) {
        exited_figures(tr);
        continue;
      }
      // Gone at once when its pidfd says it exited (a zombie's /proc files still read) or the
      // process on its pid is another one (started later: the pid was reused): never the old
      // task's labels with the new process's figures.
      TimeNs exit_ns = exits.TakeExit(tr.task.pid);
      StatusOr<ProcStat> whole = ReadProcStat(tr.task.pid);
      const bool reused =
          whole.ok() && tr.start_ticks > 0 && whole->start_time_ticks != tr.start_ticks;
      StatusOr<std::vector<ThreadInfo>> threads =
          exit_ns > 0 || reused ? StatusOr<std::vector<ThreadInfo>>(NotFound("exited"))
                                : ReadThreads(tr.task.pid, "/", thread_reads);
      if (!threads.ok()) {
        tr.alive = false;  // the pod restarted or the task ended: its series stops here
        // When it exited: its pidfd's time (to 20 ms), else this sample's.
        if (exit_ns == 0) exit_ns = exits.TakeExit(tr.task.pid);
        tr.exited_ns = exit_ns > 0 ? exit_ns : now;
        exits.Forget(tr.task.pid);
        // Its pid is free to be a new task: looked at afresh at the next sample (a process on a
        // reused pid is not new to the /proc listing) and at every rescan.
        known.erase(tr.task.pid);
        if (agent) new_pids.Offer(tr.task.pid);
        tr.last.exit_time_s = tr.exited_ns / 1e9;
        tr.final_bpf = true;  // its eBPF counters as it exited
        bpf_emit.push_back(tr.task.pid);
        warn(fmt::format("{} (pid {}) exited at {:.1f} s", tr.task.label, tr.task.pid,
                         (now - meta.window_start) / 1e9));
        if (o.on_task_log) o.on_task_log("stopped recording " + TaskLogName(tr) + ": it exited");
        exited_figures(tr);
        continue;
      }
      ProcessSampleRow s;
      s.ts = now;
      s.process = tr.process;
      s.voluntary = s.involuntary = 0;
      for (const ThreadInfo& th : *threads) {
        ++s.threads;
        s.runnable += th.state == 'R';
        s.cpu_ns += th.cpu_ns;
        if (th.voluntary_switches >= 0) s.voluntary += th.voluntary_switches;
        if (th.involuntary_switches >= 0) s.involuntary += th.involuntary_switches;
        if (!o.keep_rows) continue;
        ThreadSampleRow ts;
        ts.ts = now;
        ts.process = tr.process;
        ts.tid = th.tid;
        ts.name = b.Intern(th.name);
        ts.state = th.state;
        ts.cpu_ns = th.cpu_ns;
        ts.voluntary = th.voluntary_switches;
        ts.involuntary = th.involuntary_switches;
        b.AddThreadSample(ts);
      }
      // CPU time is cumulative, but the sum over live threads drops when a thread exits; the
      // process's own /proc/PID/stat counts its exited threads too (proc(5), utime/stime of the
      // thread group). The larger of the two, never below the last sample's.
      if (whole.ok()) s.cpu_ns = std::max(s.cpu_ns, whole->utime_ns + whole->stime_ns);
      s.cpu_ns = std::max(s.cpu_ns, tr.last_cpu_ns);
      // Its throttling counters: the cpu.stat of the cgroup resolved when it was found (quota
      // and cpuset are read then), once per sample for all the tasks of one cgroup.
      if (!tr.cpu_stat_path.empty()) {
        auto [at, fresh] = cpu_stats.try_emplace(tr.cpu_stat_path);
        if (fresh) {
          StatusOr<std::string> text = ReadKernelFile(tr.cpu_stat_path, size_t{1} << 16);
          StatusOr<CpuStat> parsed =
              text.ok() ? ParseCpuStat(*text) : StatusOr<CpuStat>(text.status());
          if (parsed.ok()) at->second = *parsed;
        }
        const CpuStat& cs = at->second;
        if (cs.nr_periods) s.nr_periods = *cs.nr_periods;
        if (cs.nr_throttled) s.nr_throttled = *cs.nr_throttled;
        if (cs.throttled_ns) s.throttled_ns = *cs.throttled_ns;
      }
      if (o.keep_rows) b.AddProcessSample(s);
      if (schedstat_rows) {
        SchedRow r;
        r.ts = now;
        r.process = tr.process;
        r.voluntary = s.voluntary;
        r.involuntary = s.involuntary;
        bool known_wait = false;
        for (const ThreadInfo& th : *threads) {
          if (th.run_ns < 0 || th.wait_ns < 0) continue;
          known_wait = true;
          r.oncpu_ns += th.run_ns;
          r.runq_wait_ns += th.wait_ns;
        }
        if (known_wait) b.AddSched(r);
      }
      // The task's own step counter, when it exports one: looked for until found, at its first
      // samples and then at gaps doubling up to kStepLookMaxGap (a readlink per open fd: a
      // task that never opens one cost a /proc/PID/fd scan every second).
      if (tr.step_file.fd < 0 && !tr.step_refused && --tr.step_look_in <= 0) {
        tr.step_file = FindStepFile(o.discovery.root, tr.task.pid);
        tr.step_look_gap = std::min(tr.step_look_gap * 2, kStepLookMaxGap);
        tr.step_look_in = tr.step_look_gap;
      }
      if (tr.step_file.fd >= 0) {
        StatusOr<int64_t> steps = ReadStepCount(o.discovery.root, tr.task.pid, tr.step_file);
        if (steps.ok() && *steps >= tr.last_steps) {
          tr.last_steps = *steps;
          if (tr.step_source == 0) {
            tr.step_source = b.Intern(
                fmt::format("step counter file {} (fd {})", tr.step_file.path, tr.step_file.fd));
          }
          if (o.keep_rows) b.AddStepCount({now, tr.process, *steps});
        } else if (!steps.ok()) {
          warn(fmt::format("{} (pid {}): step counter: {}", tr.task.label, tr.task.pid,
                           steps.status().message()));
          // Closed or replaced: look again next sample; a FIFO, device or stalled read: never.
          tr.step_refused = steps.status().code() == StatusCode::kUnavailable;
          tr.step_file = StepFile{};
          tr.step_look_in = 0, tr.step_look_gap = 1;  // a new file is looked for at once
        }
      }
      bpf_emit.push_back(tr.task.pid);
      figure_of[tr.task.pid] = figs.tasks.size();
      LiveTaskFigures& tf = figs.tasks.emplace_back();
      tf.job = tr.task.job;
      tf.task = tr.task.label;
      tf.pod = tr.task.pod_name;
      tf.node = o.node_name.empty() ? meta.host : o.node_name;
      tf.tf_job = tr.tf_job;
      tf.namespace_ = tr.namespace_;
      tf.index = tr.task.index;
      tf.pid = tr.task.pid;
      tf.cpu_seconds = s.cpu_ns / 1e9;
      tf.threads = s.threads;
      tf.runnable = s.runnable;
      tf.nr_periods = s.nr_periods;
      tf.nr_throttled = s.nr_throttled;
      tf.voluntary = s.voluntary;
      tf.involuntary = s.involuntary;
      tf.steps = tr.last_steps;
      tf.cpu_limit = tr.cpu_limit;
      tf.cpuset_cpus = tr.cpuset_cpus;
      tf.traffic_since_s = tr.counted_since / 1e9;
      tr.last = tf;
      if (first_ts[k] == 0) first_ts[k] = now;
      last_ts[k] = now;
      ++prog.alive;
      prog.threads += s.threads;
      if (tick > 0) prog.cpu_cores += (s.cpu_ns - tr.last_cpu_ns) / 1e9 / o.interval_s;
      tr.last_cpu_ns = s.cpu_ns;
    }
    if (probes && probes->any()) probes->Sample(now, bpf_emit, o.keep_rows, figure_of, &figs);
    if (o.on_figures) o.on_figures(figs);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    prog.elapsed_s = elapsed;
    prog.duration_s = o.duration_s;
    if (o.on_sample) o.on_sample(prog);
    // An agent (on_figures set) keeps serving after its tasks exit; a recording ends.
    const bool stopping =
        (o.stop != nullptr && o.stop->load()) || (prog.alive == 0 && !o.on_figures);
    if (stopping || elapsed + 1e-3 >= o.duration_s) break;
    // Sleep to the next tick in steps of at most kStopCheckMs, so Ctrl-C is seen quickly; the
    // poll returns at once when a live task exits (its exit time is the poll's return). Steps of
    // 20 ms woke the agent 50 times a second: a fifth of its own CPU at its defaults.
    const auto next = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  period * (tick + 1));
    for (auto left = next - std::chrono::steady_clock::now();
         left.count() > 0 && !(o.stop != nullptr && o.stop->load());
         left = next - std::chrono::steady_clock::now()) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1;
      exits.Poll(static_cast<int>(std::min<int64_t>(ms, kStopCheckMs)));
    }
    if (o.stop != nullptr && o.stop->load()) {
      // One last sample at the stop, then the loop ends.
      continue;
    }
  }
  if (warnings_dropped > 0) {
    meta.warnings.push_back(fmt::format("{} more warnings not kept", warnings_dropped));
  }
  meta.window_end = RealtimeNs();
  Capture c = b.Finish();
  // First/last sample and exit flags, by pid (Finish reorders processes). The span its byte
  // counters cover, as the agent's series say it (traffic_since, exit time): from when it was
  // found (its counters started at 0 then) to its exit (its pidfd, to 20 ms), where those are
  // wider than its samples; else a rate over the samples alone read up to one --interval of
  // bytes too many (+3.7% for a 25 s psload worker at 1 s, issue 46).
  for (size_t k = 0; k < tracked.size(); ++k) {
    for (ProcessRow& p : c.processes) {
      if (p.pid != tracked[k].task.pid) continue;
      const Tracked& tr = tracked[k];
      p.first_ns = tr.counted_since > 0 && (first_ts[k] == 0 || tr.counted_since < first_ts[k])
                       ? tr.counted_since
                       : first_ts[k];
      p.last_ns = !tr.alive && tr.exited_ns > last_ts[k] ? tr.exited_ns : last_ts[k];
      p.exited = !tracked[k].alive;
      p.step_source = tracked[k].step_source;
    }
  }
  return c;
}

}  // namespace tfdiag
