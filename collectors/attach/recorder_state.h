#pragma once
// The state of one Record() call (collectors/attach/recorder.h), split along what it does:
// finding the tasks and keeping the tracked set (recorder_tasks.cc: the first scan, a task
// joining, rescans and the look at new processes, the caps on exited tasks), sampling each task
// (recorder_sample.cc: threads, CPU, cgroup throttling, run-queue wait, step counter, figures)
// and the loop that ties them (recorder.cc). Not a public API (namespace recorder_detail).
// Thread-safety: a Recording belongs to the thread that runs Record().
#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collectors/attach/bpf_sampler.h"
#include "collectors/attach/process_watch.h"
#include "collectors/attach/recorder.h"
#include "collectors/attach/step_counter.h"
#include "collectors/procfs/cgroup_reader.h"
#include "collectors/procfs/proc_reader.h"
#include "core/capture_builder.h"

namespace tfdiag::recorder_detail {

TimeNs RealtimeNs();

// One TF task the recording follows.
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
std::string TaskLogName(const Tracked& tr);

// What one sampling round collects beside the rows.
struct SampleRound {
  TimeNs now = 0;
  int tick = 0;
  LiveFigures figs;
  RecordProgress prog;
  std::map<int32_t, size_t> figure_of;       // pid -> figs.tasks index
  std::map<std::string, CpuStat> cpu_stats;  // cpu.stat path -> this sample's counters
  std::vector<int32_t> bpf_emit;             // pids whose eBPF rows this sample writes
};

class Recording {
 public:
  explicit Recording(const RecordOptions& o)
      : o_(o), agent_(o.rescan_s > 0), new_pids_(o.discovery.root) {}
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  // recorder_tasks.cc: the first scan of the node (Record()'s errors: kNotFound, kUnavailable).
  Status Discover();
  // recorder_tasks.cc: the bundle's meta, the probes and the tasks the first scan found.
  void Begin();
  // recorder.cc: samples every --interval until the duration ends, the tasks are gone or `stop`.
  void Run();
  // recorder.cc: the capture, with each process's first and last sample and exit.
  Capture Finish();

 private:
  // recorder_tasks.cc
  void NoteLeft(const std::vector<pid_t>& pids);
  void Warn(std::string w);
  void Track(const TfTask& t);
  void Join(const TfTask& t);
  bool Rescan();           // false: stopped mid-scan
  bool LookForNewTasks();  // false: stopped mid-scan
  void CapExitedTasks();
  void DropForgotten();
  void LogBudgets(LiveFigures* figs);
  // recorder_sample.cc
  void SampleTask(size_t k, SampleRound* round);
  void ExitedFigures(Tracked& tr, SampleRound* round);
  void MarkExited(Tracked& tr, TimeNs exit_ns, SampleRound* round);
  void ReadThrottling(const Tracked& tr, ProcessSampleRow* s, SampleRound* round);
  void AddSchedstat(const Tracked& tr, const std::vector<ThreadInfo>& threads,
                    const ProcessSampleRow& s);
  void ReadSteps(Tracked& tr, TimeNs now);
  void AddFigures(size_t k, const ProcessSampleRow& s, SampleRound* round);
  // recorder.cc
  void SleepToNextTick(int tick);

  const RecordOptions& o_;
  const bool agent_;
  // Environments are read once per process over all scans; a stop request ends a scan early.
  EnvironCache environ_cache_;
  DiscoveryOptions scan_;
  DiscoveryResult found_;
  int64_t environ_reads_ = 0;
  // Processes whose TF_CONFIG a budget left for later, each counted once while it waits: those
  // of the latest rescan (and of the looks at new processes since), in environ_waiting_.
  int64_t environ_dropped_ = 0;
  std::set<pid_t> environ_waiting_;
  pid_t resume_at_ = 0;  // where the next rescan's budget starts
  int64_t tasks_dropped_ = 0;
  std::vector<std::string> other_jobs_;
  CaptureBuilder b_;
  size_t warnings_dropped_ = 0;
  int64_t exited_dropped_ = 0;  // exited tasks dropped from the figures (kAgentMaxExitedTasks)
  int host_cpus_ = 0;
  // The node's CPU ticks when the window started (steal over it: CaptureMeta::steal_pct), read
  // from the discovery root's /proc/stat.
  StatusOr<NodeCpuTicks> cpu_at_start_ = Internal("the window has not begun");
  StatusOr<std::vector<CgroupMount>> mounts_ = std::vector<CgroupMount>{};
  std::vector<Tracked> tracked_;
  std::vector<TimeNs> first_ts_, last_ts_;
  std::set<pid_t> known_;
  NewPidWatch new_pids_;  // agent: processes started since the last sample
  ExitWatch exits_;       // exit times of live tasks, as the poll returns
  std::unique_ptr<BpfSampler> probes_;
  // Tasks left out by the cap on live tasks (counted once per process), tried again at each
  // rescan until room frees up; entries of processes a rescan no longer sees are dropped.
  std::set<pid_t> capped_;
  bool schedstat_rows_ = false;
  ThreadReads thread_reads_ = ThreadReads::kAll;
  bool spec_drop_logged_ = false;  // the first spec address past the sampler's bound was logged
  bool environ_drop_logged_ = false, tasks_drop_logged_ = false;  // likewise for the budgets
  std::chrono::steady_clock::time_point last_scan_, start_;
};

}  // namespace tfdiag::recorder_detail
