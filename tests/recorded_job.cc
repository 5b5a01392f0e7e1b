#include "tests/recorded_job.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "collectors/attach/recorder.h"
#include "core/bundle.h"
#include "tests/bpf_job.h"
#include "tests/ledger.h"

namespace tfdiag::test {

RecordedRun RunRecordedJob(const TempDir& dir, const std::string& tag, const RecordedJob& job) {
  RecordedRun run;
  const size_t n = job.ps_ips.size();
  const std::vector<int> ports = FreePorts(static_cast<int>(n) + 1);
  std::string ps_hosts;
  for (size_t i = 0; i < n; ++i) {
    ps_hosts += fmt::format("{}{}:{}", i ? "," : "", job.ps_ips[i], ports[i]);
  }
  auto args = [&](const std::string& role, size_t i) {
    std::vector<std::string> a = {
        "--job_name=" + role,
        fmt::format("--task_index={}", i),
        "--ps_hosts=" + ps_hosts,
        fmt::format("--worker_hosts=127.0.0.1:{}", ports[n]),
        "--ps-threads=1",
        "--rows-per-step=8192",
        "--ps-cpu-ns-per-row=200",
        "--timeline=" + dir.File(fmt::format("{}-{}{}.json", tag, role, i))};
    a.insert(a.end(), job.extra_args.begin(), job.extra_args.end());
    if (role == "worker") a.insert(a.end(), {"--duration=2", "--parallel-rpcs=true"});
    return a;
  };
  const CpuClock started = ReadCpuClock();
  std::vector<pid_t> ps;
  for (size_t i = 0; i < n; ++i) {
    const std::string log = dir.File(fmt::format("{}-ps{}.log", tag, i));
    ps.push_back(job.spawn_ps ? job.spawn_ps(static_cast<int>(i), args("ps", i), log)
                              : SpawnProcess(PSLOAD_BINARY, args("ps", i), "", log));
  }
  // A pid <= 0 is a failed fork: never signalled or waited on (kill(-1) signals every process).
  const auto stop_ps = [&] {
    for (pid_t p : ps) {
      if (p > 0) kill(p, SIGTERM);
    }
    for (pid_t p : ps) {
      if (p > 0) waitpid(p, nullptr, 0);
    }
  };
  if (std::find_if(ps.begin(), ps.end(), [](pid_t p) { return p <= 0; }) != ps.end()) {
    run.why = tag + ": cannot start a PS (fork failed)";
  } else if (job.after_ps) {
    run.why = job.after_ps(ps);
  }
  if (!run.why.empty()) {
    stop_ps();
    return run;
  }
  const pid_t worker =
      SpawnProcess(PSLOAD_BINARY, args("worker", 0), "", dir.File(tag + "-worker0.log"));
  RecordOptions opt;
  opt.discovery.pids = ps;
  opt.discovery.pids.push_back(worker);
  opt.duration_s = 1.5;
  opt.interval_s = 0.25;
  opt.bpf = false;
  usleep(200000);  // the tasks' flags readable in /proc
  StatusOr<Capture> rec = Record(opt);
  int status = 0;
  const bool worker_ok = worker > 0 && waitpid(worker, &status, 0) == worker && WIFEXITED(status) &&
                         WEXITSTATUS(status) == 0;
  stop_ps();
  run.foreign_cores = ForeignCores(started, ReadCpuClock());
  if (!worker_ok) {
    run.why = tag + ": the worker failed: " + ReadFile(dir.File(tag + "-worker0.log"));
    for (size_t i = 0; i < n; ++i) {
      run.why +=
          fmt::format("; ps:{}: {}", i, ReadFile(dir.File(fmt::format("{}-ps{}.log", tag, i))));
    }
    return run;
  }
  if (!rec.ok()) {
    run.why = tag + ": attach recorder: " + std::string(rec.status().message());
    return run;
  }
  const std::string bundle = dir.File(tag + ".tfdiag");
  if (Status s = WriteBundle(*rec, bundle); !s.ok()) {
    run.why = std::string(s.message());
    return run;
  }
  for (size_t i = 0; i < n; ++i)
    run.inputs.push_back(dir.File(fmt::format("{}-ps{}.json", tag, i)));
  run.inputs.push_back(dir.File(tag + "-worker0.json"));
  const Capture c = LoadOrDie(run.inputs);
  run.step_ns = MedianWorkerStepNs(c);
  run.mean_step_ns = MeanWorkerStepNs(c);
  if (run.step_ns <= 0 || run.mean_step_ns <= 0) {
    run.why = tag + ": no worker steps beyond the first in the timelines";
    return run;
  }
  run.inputs.push_back(bundle);
  return run;
}

double MeanWorkerStepNs(const Capture& c) {
  double sum = 0;
  int64_t n = 0;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kWorker) continue;
    const auto steps = c.TaskSteps(t);
    for (size_t i = 1; i < steps.size(); ++i) sum += double(steps[i].end - steps[i].start), ++n;
  }
  return n > 0 ? sum / double(n) : 0;
}

AnalysisResult AnalyzeRecordedRun(const RecordedRun& run) {
  StatusOr<RuleSet> rules = DefaultRuleSet();
  EXPECT_TRUE(rules.ok());
  return Analyze(LoadOrDie(run.inputs), *rules);
}

TwinCheck CheckAgainstTwin(
    const RecordedRun& a1, const RecordedRun& t1, const RecordedRun& a2, const RecordedRun& t2,
    double max_noise, const std::function<std::optional<Finding>(const AnalysisResult&)>& finding) {
  TwinCheck c;
  c.foreign = std::max({a1.foreign_cores, t1.foreign_cores, a2.foreign_cores, t2.foreign_cores});
  c.noise = std::max(std::abs(a1.mean_step_ns - a2.mean_step_ns) / a1.mean_step_ns,
                     std::abs(t1.step_ns - t2.step_ns) / t1.step_ns);
  c.asis_ns = (a1.step_ns + a2.step_ns) / 2;
  c.twin_ns = (t1.step_ns + t2.step_ns) / 2;
  if (c.foreign > 0.3) {
    c.skip = fmt::format(
        "{} to judge a prediction: other work used {:.2f} cores during a run (at most 0.30)",
        kTooLoaded, c.foreign);
    return c;
  }
  if (c.noise > max_noise) {
    c.skip = fmt::format(
        "{} (noisy) to judge a prediction: two runs of one job differ by {:.0f}% (at most {:.0f}%)",
        kTooLoaded, 100 * c.noise, 100 * max_noise);
    return c;
  }
  for (const RecordedRun* r : {&a1, &a2}) {
    const AnalysisResult result = AnalyzeRecordedRun(*r);
    const std::optional<Finding> f = finding(result);
    if (!f.has_value()) {
      c.failure = fmt::format("no finding on as-is run {} (median step {:.2f} ms); its findings:",
                              r == &a1 ? 1 : 2, r->step_ns / 1e6);
      for (const Finding& g : result.findings) {
        c.failure += fmt::format("\n  {} {}: {}", g.rule_id, g.subject, g.summary);
      }
      return c;
    }
    if (f->impact.method != "replay") {
      c.failure = "no replayed prediction: " + f->impact.why;
      return c;
    }
    c.predicted_ns += f->impact.step_ns_after_fix / 2;
  }
  c.err = (c.predicted_ns - c.twin_ns) / c.twin_ns;
  return c;
}

}  // namespace tfdiag::test
