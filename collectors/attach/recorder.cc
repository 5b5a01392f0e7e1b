#include "collectors/attach/recorder.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "collectors/attach/bpf_sampler.h"
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

struct Tracked {
  TfTask task;
  uint32_t process = 0;  // builder process index
  bool alive = true;
  bool final_bpf = false;  // the eBPF rows at its exit were written
  LiveTaskFigures last;    // its figures at the last sample (kept for /metrics after exit)
  int64_t last_cpu_ns = 0;
};

}  // namespace

StatusOr<Capture> Record(const RecordOptions& o) {
  if (o.interval_s <= 0 || o.duration_s <= 0) {
    return InvalidInput("--duration and --interval must be positive");
  }
  StatusOr<DiscoveryResult> found = DiscoverTfTasks(o.discovery);
  if (!found.ok()) return found.status();
  if (found->tasks.empty()) {
    std::string why = fmt::format(
        "no TF task found among {} processes (a TF task has TF_CONFIG in "
        "its environment or --job_name/--task_index flags)",
        found->scanned);
    if (!found->filtered_out.empty()) {
      std::string filters;
      if (!o.discovery.job_prefix.empty()) filters = "--job " + o.discovery.job_prefix;
      for (const std::string& p : o.discovery.pod_names) {
        filters += (filters.empty() ? "--pod " : ", --pod ") + p;
      }
      why = fmt::format("{} matched none of the TF tasks found among {} processes: {}", filters,
                        found->scanned, DescribeFilteredOut(*found));
    }
    if (found->unreadable > 0) why += "; " + EnvironUnreadableHint(found->unreadable);
    return NotFound("{}", why);
  }
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
  if (found->unreadable > 0) {
    meta.warnings.push_back(
        fmt::format("{} processes' environment could not be read (kernel threads, zombies, or no "
                    "ptrace rights)",
                    found->unreadable));
  }
  const int host_cpus = HostCpuCount();
  StatusOr<std::vector<CgroupMount>> mounts = ReadMountInfo();
  std::vector<Tracked> tracked;
  for (const TfTask& t : found->tasks) {
    if (t.job.empty()) continue;
    Tracked tr;
    tr.task = t;
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
    } else {
      meta.warnings.push_back(
          fmt::format("{} (pid {}): CPU cgroup: {}", t.label, t.pid, cg.status().message()));
    }
    tr.process = b.AddProcess(row);
    tracked.push_back(std::move(tr));
  }
  std::unique_ptr<BpfSampler> probes;
  if (o.bpf) {
    std::vector<TfTask> tasks;
    for (const Tracked& tr : tracked) tasks.push_back(tr.task);
    probes = std::make_unique<BpfSampler>(tasks, o.hdfs_ports, o.bpf_attach, &b, &meta.warnings);
    for (const Tracked& tr : tracked) {
      probes->Add(tr.task.pid, tr.process, b.AddTask(tr.task.job, 0, tr.task.index), tr.task.label);
    }
    meta.probes = probes->probes();
  } else {
    meta.warnings.push_back(std::string("eBPF probes off (--no-bpf): ") + kWithoutBpf);
  }
  meta.window_start = RealtimeNs();
  const auto start = std::chrono::steady_clock::now();
  const auto period = std::chrono::duration<double>(o.interval_s);
  std::vector<TimeNs> first_ts(tracked.size(), 0), last_ts(tracked.size(), 0);
  for (int tick = 0;; ++tick) {
    const TimeNs now = RealtimeNs();
    RecordProgress prog;
    prog.tasks = static_cast<int>(tracked.size());
    LiveFigures figs;
    figs.ts = now;
    std::map<int32_t, size_t> figure_of;  // pid -> figs.tasks index
    std::vector<int32_t> bpf_emit;        // pids whose eBPF rows this sample writes
    // An exited task: its last /proc figures, and its final eBPF counters (filled below).
    auto exited_figures = [&](const Tracked& tr) {
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
      StatusOr<std::vector<ThreadInfo>> threads = ReadThreads(tr.task.pid);
      if (!threads.ok()) {
        tr.alive = false;     // the pod restarted or the task ended: its series stops here
        tr.final_bpf = true;  // its eBPF counters as it exited
        bpf_emit.push_back(tr.task.pid);
        meta.warnings.push_back(fmt::format("{} (pid {}) exited at {:.1f} s", tr.task.label,
                                            tr.task.pid, (now - meta.window_start) / 1e9));
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
      if (mounts.ok()) {
        StatusOr<CgroupCpu> cg = ResolveCgroupCpu(tr.task.cgroups, *mounts);
        if (cg.ok()) {
          if (cg->stat.nr_periods) s.nr_periods = *cg->stat.nr_periods;
          if (cg->stat.nr_throttled) s.nr_throttled = *cg->stat.nr_throttled;
          if (cg->stat.throttled_ns) s.throttled_ns = *cg->stat.throttled_ns;
        }
      }
      if (o.keep_rows) b.AddProcessSample(s);
      bpf_emit.push_back(tr.task.pid);
      figure_of[tr.task.pid] = figs.tasks.size();
      LiveTaskFigures& tf = figs.tasks.emplace_back();
      tf.job = tr.task.job;
      tf.task = tr.task.label;
      tf.pod = tr.task.pod_name;
      tf.node = meta.host;
      tf.pid = tr.task.pid;
      tf.cpu_seconds = s.cpu_ns / 1e9;
      tf.threads = s.threads;
      tf.runnable = s.runnable;
      tf.nr_periods = s.nr_periods;
      tf.nr_throttled = s.nr_throttled;
      tf.voluntary = s.voluntary;
      tf.involuntary = s.involuntary;
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
    // Sleep to the next tick in small steps, so Ctrl-C is seen quickly.
    const auto next = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  period * (tick + 1));
    while (std::chrono::steady_clock::now() < next && !(o.stop != nullptr && o.stop->load())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (o.stop != nullptr && o.stop->load()) {
      // One last sample at the stop, then the loop ends.
      continue;
    }
  }
  meta.window_end = RealtimeNs();
  Capture c = b.Finish();
  // First/last sample and exit flags, by pid (Finish reorders processes).
  for (size_t k = 0; k < tracked.size(); ++k) {
    for (ProcessRow& p : c.processes) {
      if (p.pid != tracked[k].task.pid) continue;
      p.first_ns = first_ts[k];
      p.last_ns = last_ts[k];
      p.exited = !tracked[k].alive;
    }
  }
  return c;
}

}  // namespace tfdiag
