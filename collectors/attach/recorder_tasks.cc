// Record()'s tasks (collectors/attach/recorder_state.h): the first scan of the node, the bundle's
// meta and probes, a task joining the recording, an agent's rescans and looks at new processes,
// and the caps that keep an agent's figures bounded.
#include <malloc.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <algorithm>

#include "collectors/attach/job_groups.h"
#include "collectors/attach/recorder_state.h"

namespace tfdiag::recorder_detail {

namespace {

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
// Warnings kept in the bundle's meta: a churning node must not grow them without bound.
constexpr size_t kMaxWarnings = 1000;

}  // namespace

TimeNs RealtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string TaskLogName(const Tracked& tr) {
  return fmt::format("job '{}' task {} (pid {}{}{})", tr.tf_job, tr.task.label, tr.task.pid,
                     tr.task.address.empty() ? "" : ", " + tr.task.address,
                     tr.task.pod_name.empty() ? "" : ", pod " + tr.task.pod_name);
}

Status Recording::Discover() {
  scan_ = o_.discovery;
  scan_.stop = o_.stop;
  scan_.cache = &environ_cache_;
  if (agent_) scan_.environ_budget_bytes = kAgentEnvironBudget;
  if (agent_) {
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
  StatusOr<DiscoveryResult> found = DiscoverTfTasks(scan_);
  if (!found.ok()) return found.status();
  found_ = std::move(*found);
  environ_reads_ = found_.environ_reads;
  NoteLeft(found_.environ_dropped_pids);
  resume_at_ = found_.resume_at;
  if (found_.stopped && found_.tasks.empty() && !agent_) {
    return Status(
        StatusCode::kUnavailable,
        fmt::format("stopped while scanning the node's processes ({} looked at)", found_.scanned));
  }
  if (found_.tasks.empty() && !agent_) return NotFound("{}", NoTaskFound(found_, o_.discovery));
  // A recording is one job: tasks of another cluster (another TF_CONFIG on this node) are listed
  // apart, never mixed in (the agent labels them as their own tf_job instead).
  if (!agent_) other_jobs_ = KeepFirstJob(&found_.tasks, o_.tf_job);
  return OkStatus();
}

void Recording::Begin() {
  CaptureMeta& meta = b_.meta();
  utsname u;
  if (uname(&u) == 0) {
    meta.host = u.nodename;
    meta.kernel = u.release;
  }
  meta.tool_version = TFDIAG_VERSION;
  meta.interval_ms = static_cast<int64_t>(o_.interval_s * 1000);
  meta.warnings = found_.warnings;
  meta.warnings.insert(meta.warnings.end(), other_jobs_.begin(), other_jobs_.end());
  if (found_.unreadable > 0) {
    meta.warnings.push_back(
        fmt::format("{} {} environment could not be read (kernel threads, zombies, or no "
                    "ptrace rights)",
                    found_.unreadable, found_.unreadable == 1 ? "process's" : "processes'"));
  }
  host_cpus_ = HostCpuCount();
  mounts_ = ReadMountInfo();
  if (o_.bpf) {
    // A recording keeps one row series per TF/HDFS socket (the analysis reads them by socket);
    // an agent without history folds sockets idle for a minute into their peer's total.
    TrafficTableLimits limits;
    if (!o_.keep_rows) limits.resolved_idle_ns = kAgentIdleSocketNs;
    probes_ = std::make_unique<BpfSampler>(found_.tasks, o_.hdfs_ports, o_.bpf_attach, limits, &b_,
                                           &meta.warnings);
    meta.probes = probes_->probes();
  } else {
    meta.warnings.push_back(std::string("eBPF probes off (--no-bpf): ") + kWithoutBpf);
  }
  for (const TfTask& t : found_.tasks) Track(t);
  // The tracked copies are what is kept: the scan's own (each with its whole cluster spec) go.
  found_.tasks.clear();
  found_.tasks.shrink_to_fit();
  // Without the eBPF sched probe, run-queue wait comes from /proc/PID/task/*/schedstat (run and
  // wait ns per thread, summed; threads that exit take theirs along): the same SchedRow shape,
  // with no histogram (no p99) and no wait count. meta.probes (eBPF only) then names no "sched(".
  schedstat_rows_ = o_.keep_rows && meta.probes.rfind("sched(", 0) != 0;
  // An agent keeps no thread names or schedstat rows: two files per thread instead of four.
  thread_reads_ = o_.keep_rows ? ThreadReads::kAll : ThreadReads::kLean;
  last_scan_ = std::chrono::steady_clock::now();
  if (agent_) new_pids_.Next(known_);  // the processes the first scan looked at
  meta.window_start = RealtimeNs();
  cpu_at_start_ = ReadNodeCpuTicks(o_.discovery.root);
  start_ = std::chrono::steady_clock::now();
}

void Recording::NoteLeft(const std::vector<pid_t>& pids) {
  for (pid_t p : pids) environ_dropped_ += environ_waiting_.insert(p).second;
}

void Recording::Warn(std::string w) {
  std::vector<std::string>& warnings = b_.meta().warnings;
  if (warnings.size() < kMaxWarnings) {
    warnings.push_back(std::move(w));
  } else {
    ++warnings_dropped_;
  }
}

void Recording::Track(const TfTask& t) {
  if (agent_ && !t.job.empty()) {
    size_t alive = 0;
    for (const Tracked& tr : tracked_) alive += tr.alive;
    if (alive >= o_.max_tasks) {
      if (capped_.insert(t.pid).second) ++tasks_dropped_;
      return;
    }
    capped_.erase(t.pid);
  }
  known_.insert(t.pid);
  if (t.job.empty()) return;
  Tracked tr;
  tr.task = t;
  tr.tf_job = JobNameOf(t, o_.tf_job);
  // Its process's start time: a new process on this pid later is another task (pid reuse).
  if (StatusOr<ProcStat> st = ReadProcStat(t.pid); st.ok()) {
    tr.start_ticks = st->start_time_ticks;
  }
  std::string note;
  tr.namespace_ =
      NamespaceOf(o_.discovery.root, t.identity_pid == 0 ? t.pid : t.identity_pid, &note);
  if (!note.empty()) Warn(std::move(note));
  // One label set, one series: an exited task with this task's labels (a restart, a job
  // resubmitted under its name) leaves the figures now, not after its 5 minutes.
  for (Tracked& old : tracked_) {
    if (old.alive || old.forgotten || old.task.job != t.job || old.task.index != t.index ||
        old.tf_job != tr.tf_job || old.namespace_ != tr.namespace_ ||
        old.task.pod_name != t.pod_name) {
      continue;
    }
    if (probes_ && !o_.keep_rows) probes_->Forget(old.task.pid);
    old.forgotten = true;
  }
  ProcessRow row;
  row.task = b_.AddTask(t.job, 0, t.index);
  row.pid = t.pid;
  row.pod = b_.Intern(t.pod_name);
  row.pod_uid = b_.Intern(t.kube.pod_uid);
  row.container = b_.Intern(t.kube.container_id);
  row.qos = b_.Intern(t.kube.qos == QosClass::kUnknown ? "" : QosClassName(t.kube.qos));
  row.cgroup = b_.Intern(t.cgroup_path);
  row.host_cpus = host_cpus_;
  StatusOr<CgroupCpu> cg =
      mounts_.ok() ? ResolveCgroupCpu(t.cgroups, *mounts_) : StatusOr<CgroupCpu>(mounts_.status());
  if (cg.ok()) {
    row.cpu_limit = cg->effective_cpu_limit;
    row.quota_us = cg->quota_us;
    row.period_us = cg->period_us;
    row.cpuset_cpus = cg->cpuset_count;
    std::string cpus;
    for (int cpu : cg->cpuset) cpus += (cpus.empty() ? "" : ",") + std::to_string(cpu);
    row.cpuset = b_.Intern(cpus);
    tr.cpu_limit = cg->effective_cpu_limit;
    tr.cpuset_cpus = cg->cpuset_count;
    tr.cpu_stat_path = cg->dir + "/cpu.stat";
  } else {
    Warn(fmt::format("{} (pid {}): CPU cgroup: {}", t.label, t.pid, cg.status().message()));
  }
  tr.process = b_.AddProcess(row);
  if (probes_) {
    if (probes_->any()) probes_->AddClusterSpec(t);
    probes_->Add(t.pid, tr.process, b_.AddTask(t.job, 0, t.index), t.label);
  }
  // An agent keeps no cluster spec per task (the probes learned its addresses, the job's name
  // is made): 1,000 tenants with 100 KB TF_CONFIGs must not hold 1,000 parsed copies.
  if (agent_) {
    tr.task.config.cluster = ClusterSpec();
    environ_cache_.Erase(t.pid);  // its TF_CONFIG is not read again while it is tracked
  }
  tr.counted_since = RealtimeNs();
  if ((o_.discovery.root.empty() || o_.discovery.root == "/") && t.pid > 0) exits_.Add(t.pid);
  if (o_.on_task_log) o_.on_task_log("recording " + TaskLogName(tr));
  tracked_.push_back(std::move(tr));
  first_ts_.push_back(0);
  last_ts_.push_back(0);
}

// A task found by a scan joins unless its pid is known; a pid reused by a new task: the old,
// exited one leaves the figures now.
void Recording::Join(const TfTask& t) {
  if (known_.count(t.pid)) return;
  for (Tracked& old : tracked_) {
    if (old.task.pid == t.pid && !old.alive) old.forgotten = true;
  }
  Track(t);
}

// Agent mode: new TF tasks (pods scheduled since) join at the next scan.
bool Recording::Rescan() {
  last_scan_ = std::chrono::steady_clock::now();
  // Tracked tasks are not parsed again (a task is its process: pid and start time; a reused
  // pid leaves the tracked set when its old process exits).
  std::set<pid_t> tracked_pids;
  for (const Tracked& tr : tracked_) {
    if (tr.alive) tracked_pids.insert(tr.task.pid);
  }
  scan_.skip = &tracked_pids;
  scan_.resume_at = resume_at_;
  StatusOr<DiscoveryResult> again = DiscoverTfTasks(scan_);
  scan_.skip = nullptr;
  scan_.resume_at = 0;
  if (again.ok() && again->stopped) return false;  // SIGTERM mid-scan: stop now
  if (again.ok()) {
    environ_reads_ += again->environ_reads;
    // Those still waiting stay counted; the rest were parsed (or exited).
    std::set<pid_t> waiting;
    for (pid_t p : again->environ_dropped_pids) {
      if (environ_waiting_.count(p)) waiting.insert(p);
    }
    environ_waiting_ = std::move(waiting);
    NoteLeft(again->environ_dropped_pids);
    resume_at_ = again->resume_at;
  }
  if (again.ok()) {
    std::set<pid_t> seen;
    for (const TfTask& t : again->tasks) {
      seen.insert(t.pid);
      Join(t);
    }
    // Pids stay known while they are seen (exited ones leave the set: bounded by the
    // processes alive) or while their task is tracked alive.
    for (const Tracked& tr : tracked_) {
      if (tr.alive) seen.insert(tr.task.pid);
    }
    // Capped tasks stay unknown (tried again at the next rescan) while they are seen.
    for (auto it = capped_.begin(); it != capped_.end();) {
      it = seen.erase(*it) > 0 ? std::next(it) : capped_.erase(it);
    }
    known_ = std::move(seen);
  }
  ::malloc_trim(0);  // what the scan's environments and parses took goes back now
  return true;
}

// Between rescans, processes started since the last sample (a task is counted from its first
// second, not from the next rescan): bounded in pids and environment bytes.
bool Recording::LookForNewTasks() {
  DiscoveryOptions fresh = scan_;
  fresh.pids = new_pids_.Next(known_);
  if (!o_.discovery.pids.empty()) {  // only the processes asked for (--pid)
    const std::vector<pid_t>& asked = o_.discovery.pids;
    fresh.pids.erase(
        std::remove_if(
            fresh.pids.begin(), fresh.pids.end(),
            [&](pid_t p) { return std::find(asked.begin(), asked.end(), p) == asked.end(); }),
        fresh.pids.end());
  }
  fresh.environ_budget_bytes = kAgentNewEnvironBudget;
  if (fresh.pids.empty()) return true;
  StatusOr<DiscoveryResult> got = DiscoverTfTasks(fresh);
  if (got.ok() && got->stopped) return false;
  if (got.ok()) {
    environ_reads_ += got->environ_reads;
    NoteLeft(got->environ_dropped_pids);
    for (const TfTask& t : got->tasks) {
      Join(t);
      for (pid_t other : t.other_pids) known_.insert(other);
    }
  }
  return true;
}

// At most kAgentMaxExitedTasks exited tasks stay in the figures: the oldest exits go.
void Recording::CapExitedTasks() {
  std::vector<size_t> exited;
  for (size_t k = 0; k < tracked_.size(); ++k) {
    if (!tracked_[k].alive && !tracked_[k].forgotten) exited.push_back(k);
  }
  if (exited.size() <= kAgentMaxExitedTasks) return;
  const size_t drop = exited.size() - kAgentMaxExitedTasks;
  std::nth_element(exited.begin(), exited.begin() + drop, exited.end(), [&](size_t a, size_t b) {
    return tracked_[a].exited_ns < tracked_[b].exited_ns;
  });
  for (size_t i = 0; i < drop; ++i) {
    Tracked& tr = tracked_[exited[i]];
    if (probes_ && !o_.keep_rows) probes_->Forget(tr.task.pid);
    tr.forgotten = true;
    ++exited_dropped_;
  }
}

// Nothing is written at the end without rows: forgotten tasks free their memory.
void Recording::DropForgotten() {
  size_t kept = 0;
  for (size_t k = 0; k < tracked_.size(); ++k) {
    if (tracked_[k].forgotten) continue;
    if (kept != k) {
      tracked_[kept] = std::move(tracked_[k]);
      first_ts_[kept] = first_ts_[k];
      last_ts_[kept] = last_ts_[k];
    }
    ++kept;
  }
  const bool freed = kept < tracked_.size();
  tracked_.erase(tracked_.begin() + static_cast<std::ptrdiff_t>(kept), tracked_.end());
  first_ts_.resize(kept);
  last_ts_.resize(kept);
  // Give the freed heap back to the system (glibc keeps it otherwise: 205 MB stayed after
  // the tasks of a hostile burst had gone).
  if (freed) ::malloc_trim(0);
}

// The agent's counters of what the node-wide budgets leave out, each logged once.
void Recording::LogBudgets(LiveFigures* figs) {
  figs->exited_tasks_dropped = agent_ ? exited_dropped_ : -1;
  figs->environ_reads = agent_ ? environ_reads_ : -1;
  figs->environ_dropped = agent_ ? environ_dropped_ : -1;
  figs->tasks_dropped = agent_ ? tasks_dropped_ : -1;
  if (agent_ && environ_dropped_ > 0 && !environ_drop_logged_ && o_.on_task_log) {
    environ_drop_logged_ = true;
    o_.on_task_log(fmt::format(
        "the TF_CONFIG values of this node's processes pass the {} MiB one rescan parses: the "
        "rest wait for the next rescans, which go on where this one stopped "
        "(tfdiag_agent_environ_dropped_total counts them)",
        kAgentEnvironBudget >> 20));
  }
  if (agent_ && tasks_dropped_ > 0 && !tasks_drop_logged_ && o_.on_task_log) {
    tasks_drop_logged_ = true;
    o_.on_task_log(
        fmt::format("more than {} live TF tasks on this node: the rest are tracked as others exit "
                    "(tfdiag_agent_tasks_dropped_total counts them)",
                    o_.max_tasks));
  }
  if (agent_ && probes_ && probes_->any()) {
    figs->spec_addresses_dropped = probes_->spec_addresses_dropped();
    if (figs->spec_addresses_dropped > 0 && !spec_drop_logged_ && o_.on_task_log) {
      spec_drop_logged_ = true;
      o_.on_task_log(fmt::format(
          "the cluster specs of this node's tasks list more than {} addresses: the rest are not "
          "learned (their bytes count as peer \"other\"; "
          "tfdiag_agent_spec_addresses_dropped_total counts them)",
          BpfSampler::kMaxSpecAddresses));
    }
  }
}

}  // namespace tfdiag::recorder_detail
