// Record()'s sample of one task (collectors/attach/recorder_state.h): its threads and CPU time,
// its cgroup's throttling counters, run-queue wait from schedstat, its step counter and its
// figures for an agent's /metrics; or, once it is gone, its exit.
#include <algorithm>

#include "collectors/attach/recorder_state.h"

namespace tfdiag::recorder_detail {

namespace {

constexpr TimeNs kAgentGoneKeepNs = TimeNs{300} * 1000000000;  // 5 min: Prometheus staleness
// Samples between two looks for a task's step file once early looks found none (8 s at 1 s).
constexpr int kStepLookMaxGap = 8;

}  // namespace

// An exited task: its last /proc figures, and its final eBPF counters (filled by the probes).
void Recording::ExitedFigures(Tracked& tr, SampleRound* round) {
  // An agent forgets a gone task after a while (its series are dropped); a recording keeps
  // reporting it to the end.
  if (tr.forgotten) return;
  if (agent_ && !o_.keep_rows && tr.exited_ns > 0 && round->now - tr.exited_ns > kAgentGoneKeepNs) {
    if (probes_) probes_->Forget(tr.task.pid);
    tr.forgotten = true;
    return;
  }
  round->figure_of[tr.task.pid] = round->figs.tasks.size();
  LiveTaskFigures& tf = round->figs.tasks.emplace_back(tr.last);
  tf.alive = false;
  tf.peers.clear();
  tf.hdfs_read_bytes = 0;
}

// The task is gone: its series stops here.
void Recording::MarkExited(Tracked& tr, TimeNs exit_ns, SampleRound* round) {
  const TimeNs now = round->now;
  tr.alive = false;  // the pod restarted or the task ended: its series stops here
  // When it exited: its pidfd's time (to 20 ms), else this sample's.
  if (exit_ns == 0) exit_ns = exits_.TakeExit(tr.task.pid);
  tr.exited_ns = exit_ns > 0 ? exit_ns : now;
  exits_.Forget(tr.task.pid);
  // Its pid is free to be a new task: looked at afresh at the next sample (a process on a
  // reused pid is not new to the /proc listing) and at every rescan.
  known_.erase(tr.task.pid);
  if (agent_) new_pids_.Offer(tr.task.pid);
  tr.last.exit_time_s = tr.exited_ns / 1e9;
  tr.final_bpf = true;  // its eBPF counters as it exited
  round->bpf_emit.push_back(tr.task.pid);
  Warn(fmt::format("{} (pid {}) exited at {:.1f} s", tr.task.label, tr.task.pid,
                   (now - b_.meta().window_start) / 1e9));
  if (o_.on_task_log) o_.on_task_log("stopped recording " + TaskLogName(tr) + ": it exited");
  ExitedFigures(tr, round);
}

// Its throttling counters: the cpu.stat of the cgroup resolved when it was found (quota and
// cpuset are read then), once per sample for all the tasks of one cgroup.
void Recording::ReadThrottling(const Tracked& tr, ProcessSampleRow* s, SampleRound* round) {
  if (tr.cpu_stat_path.empty()) return;
  auto [at, fresh] = round->cpu_stats.try_emplace(tr.cpu_stat_path);
  if (fresh) {
    StatusOr<std::string> text = ReadKernelFile(tr.cpu_stat_path, size_t{1} << 16);
    StatusOr<CpuStat> parsed = text.ok() ? ParseCpuStat(*text) : StatusOr<CpuStat>(text.status());
    if (parsed.ok()) at->second = *parsed;
  }
  const CpuStat& cs = at->second;
  if (cs.nr_periods) s->nr_periods = *cs.nr_periods;
  if (cs.nr_throttled) s->nr_throttled = *cs.nr_throttled;
  if (cs.throttled_ns) s->throttled_ns = *cs.throttled_ns;
}

// Run-queue wait without the eBPF sched probe: the threads' schedstat run and wait ns, summed.
void Recording::AddSchedstat(const Tracked& tr, const std::vector<ThreadInfo>& threads,
                             const ProcessSampleRow& s) {
  SchedRow r;
  r.ts = s.ts;
  r.process = tr.process;
  r.voluntary = s.voluntary;
  r.involuntary = s.involuntary;
  bool known_wait = false;
  for (const ThreadInfo& th : threads) {
    if (th.run_ns < 0 || th.wait_ns < 0) continue;
    known_wait = true;
    r.oncpu_ns += th.run_ns;
    r.runq_wait_ns += th.wait_ns;
  }
  if (known_wait) b_.AddSched(r);
}

// The task's own step counter, when it exports one: looked for until found, at its first
// samples and then at gaps doubling up to kStepLookMaxGap (a readlink per open fd: a task that
// never opens one cost a /proc/PID/fd scan every second).
void Recording::ReadSteps(Tracked& tr, TimeNs now) {
  if (tr.step_file.fd < 0 && !tr.step_refused && --tr.step_look_in <= 0) {
    tr.step_file = FindStepFile(o_.discovery.root, tr.task.pid);
    tr.step_look_gap = std::min(tr.step_look_gap * 2, kStepLookMaxGap);
    tr.step_look_in = tr.step_look_gap;
  }
  if (tr.step_file.fd < 0) return;
  StatusOr<int64_t> steps = ReadStepCount(o_.discovery.root, tr.task.pid, tr.step_file);
  if (steps.ok() && *steps >= tr.last_steps) {
    tr.last_steps = *steps;
    if (tr.step_source == 0) {
      tr.step_source = b_.Intern(
          fmt::format("step counter file {} (fd {})", tr.step_file.path, tr.step_file.fd));
    }
    if (o_.keep_rows) b_.AddStepCount({now, tr.process, *steps});
  } else if (!steps.ok()) {
    Warn(fmt::format("{} (pid {}): step counter: {}", tr.task.label, tr.task.pid,
                     steps.status().message()));
    // Closed or replaced: look again next sample; a FIFO, device or stalled read: never.
    tr.step_refused = steps.status().code() == StatusCode::kUnavailable;
    tr.step_file = StepFile{};
    tr.step_look_in = 0, tr.step_look_gap = 1;  // a new file is looked for at once
  }
}

// The live task's figures for the agent's /metrics, and the round's progress.
void Recording::AddFigures(size_t k, const ProcessSampleRow& s, SampleRound* round) {
  Tracked& tr = tracked_[k];
  const TimeNs now = round->now;
  round->bpf_emit.push_back(tr.task.pid);
  round->figure_of[tr.task.pid] = round->figs.tasks.size();
  LiveTaskFigures& tf = round->figs.tasks.emplace_back();
  tf.job = tr.task.job;
  tf.task = tr.task.label;
  tf.pod = tr.task.pod_name;
  tf.node = o_.node_name.empty() ? b_.meta().host : o_.node_name;
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
  if (first_ts_[k] == 0) first_ts_[k] = now;
  last_ts_[k] = now;
  ++round->prog.alive;
  round->prog.threads += s.threads;
  if (round->tick > 0) round->prog.cpu_cores += (s.cpu_ns - tr.last_cpu_ns) / 1e9 / o_.interval_s;
  tr.last_cpu_ns = s.cpu_ns;
}

void Recording::SampleTask(size_t k, SampleRound* round) {
  Tracked& tr = tracked_[k];
  if (!tr.alive) {
    ExitedFigures(tr, round);
    return;
  }
  // Gone at once when its pidfd says it exited (a zombie's /proc files still read) or the
  // process on its pid is another one (started later: the pid was reused): never the old
  // task's labels with the new process's figures.
  const TimeNs exit_ns = exits_.TakeExit(tr.task.pid);
  StatusOr<ProcStat> whole = ReadProcStat(tr.task.pid);
  const bool reused = whole.ok() && tr.start_ticks > 0 && whole->start_time_ticks != tr.start_ticks;
  StatusOr<std::vector<ThreadInfo>> threads =
      exit_ns > 0 || reused ? StatusOr<std::vector<ThreadInfo>>(NotFound("exited"))
                            : ReadThreads(tr.task.pid, "/", thread_reads_);
  if (!threads.ok()) {
    MarkExited(tr, exit_ns, round);
    return;
  }
  ProcessSampleRow s;
  s.ts = round->now;
  s.process = tr.process;
  s.voluntary = s.involuntary = 0;
  for (const ThreadInfo& th : *threads) {
    ++s.threads;
    s.runnable += th.state == 'R';
    s.cpu_ns += th.cpu_ns;
    if (th.voluntary_switches >= 0) s.voluntary += th.voluntary_switches;
    if (th.involuntary_switches >= 0) s.involuntary += th.involuntary_switches;
    if (!o_.keep_rows) continue;
    ThreadSampleRow ts;
    ts.ts = round->now;
    ts.process = tr.process;
    ts.tid = th.tid;
    ts.name = b_.Intern(th.name);
    ts.state = th.state;
    ts.cpu_ns = th.cpu_ns;
    ts.voluntary = th.voluntary_switches;
    ts.involuntary = th.involuntary_switches;
    b_.AddThreadSample(ts);
  }
  // CPU time is cumulative, but the sum over live threads drops when a thread exits; the
  // process's own /proc/PID/stat counts its exited threads too (proc(5), utime/stime of the
  // thread group). The larger of the two, never below the last sample's.
  if (whole.ok()) s.cpu_ns = std::max(s.cpu_ns, whole->utime_ns + whole->stime_ns);
  s.cpu_ns = std::max(s.cpu_ns, tr.last_cpu_ns);
  ReadThrottling(tr, &s, round);
  if (o_.keep_rows) b_.AddProcessSample(s);
  if (schedstat_rows_) AddSchedstat(tr, *threads, s);
  ReadSteps(tr, round->now);
  AddFigures(k, s, round);
}

}  // namespace tfdiag::recorder_detail
