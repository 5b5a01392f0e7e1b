// A samples/psload job of N PS and one worker recorded by the attach recorder beside its TF1
// timelines, and the load gate that judges a prediction on it against a real twin: the live
// tests of a rule's prediction (a CPU quota on a PS, a shaped link to a PS) share it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analyzers/analysis.h"
#include "tests/test_util.h"

namespace tfdiag::test {

// What a test varies between the shapes; the rest is make twins-live's base job (1 PS thread,
// 8192 rows a step at 200 ns of PS CPU a row, one worker for 2 s with parallel RPCs).
struct RecordedJob {
  std::vector<std::string> ps_ips;      // one per PS, the address it listens on
  std::vector<std::string> extra_args;  // psload flags for every task
  // Starts PS `i` with psload's `args`, stdout and stderr to `log`; returns its pid. Default:
  // psload itself (a launcher such as `ip netns exec` must exec psload in place).
  std::function<pid_t(int i, const std::vector<std::string>& args, const std::string& log)>
      spawn_ps;
  // Called with the PS's pids once they run (pinning, a cgroup); returns why the run cannot go
  // on, empty when it can.
  std::function<std::string(const std::vector<pid_t>& ps)> after_ps;
};

// One run of a RecordedJob.
struct RecordedRun {
  std::vector<std::string> inputs;  // the timelines, then the attach bundle
  double step_ns = 0;               // median worker step of the timelines, ns
  double mean_step_ns = 0;          // their mean (MeanWorkerStepNs), ns
  double foreign_cores = 0;         // CPU other work used during the run, cores
  std::string why;                  // why the run failed; empty when it did not
};

// Runs `job` with files "<tag>-*" in `dir`: the PS, then the worker; the attach recorder samples
// every task for 1.5 s (/proc and cgroups, no eBPF) and its bundle joins the timelines.
RecordedRun RunRecordedJob(const TempDir& dir, const std::string& tag, const RecordedJob& job);

// The mean worker step of `c` (ns), each worker's first step (connections, warm-up) left out; 0
// without a second step.
double MeanWorkerStepNs(const Capture& c);

// The default rule set's analysis of a run's timelines and bundle.
AnalysisResult AnalyzeRecordedRun(const RecordedRun& run);

// A prediction judged against its twin: as-is and twin runs alternated twice (a1, t1, a2, t2).
struct TwinCheck {
  std::string skip;  // why it cannot be judged (too loaded or noisy); empty when it can
  // The larger gap between two runs of one job, fraction of the first: the as-is runs' in mean
  // step (the throughput, which the machine's load moves; not their median, which a job whose
  // steps fall in modes, a PS under a CFS quota, moves between them with nothing else running:
  // PsCpuQuotaLive's quota'd runs 32% apart on a quiet machine), the twins' in median step, the
  // figure `err` judges the prediction against.
  double noise = 0;
  double foreign = 0;       // the most CPU other work used during a run, cores
  double asis_ns = 0;       // the mean of the as-is runs' median steps
  double twin_ns = 0;       // the mean of the twin runs' median steps
  double predicted_ns = 0;  // the as-is runs' mean prediction (0 when `finding` gave none)
  double err = 0;           // (predicted - twin) / twin
  std::string failure;      // a run's finding without a replayed prediction; empty when none
};

// Judges `finding`'s prediction on runs a1 and a2 against twins t1 and t2: not judged when other
// work used over 0.3 cores during a run or two runs of one job differ by over `max_noise`.
TwinCheck CheckAgainstTwin(
    const RecordedRun& a1, const RecordedRun& t1, const RecordedRun& a2, const RecordedRun& t2,
    double max_noise, const std::function<std::optional<Finding>(const AnalysisResult&)>& finding);

}  // namespace tfdiag::test
