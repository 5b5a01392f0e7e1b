#include "collectors/attach/recorder.h"

#include <algorithm>
#include <chrono>

#include "collectors/attach/recorder_state.h"

namespace tfdiag {

namespace recorder_detail {

namespace {

// The longest the recorder sleeps between two looks at its stop flag (Ctrl-C, SIGTERM).
constexpr int64_t kStopCheckMs = 250;

}  // namespace

void Recording::Run() {
  for (int tick = 0;; ++tick) {
    SampleRound round;
    round.now = RealtimeNs();
    round.tick = tick;
    if (agent_ && std::chrono::steady_clock::now() - last_scan_ >=
                      std::chrono::duration<double>(o_.rescan_s)) {
      if (!Rescan()) break;  // SIGTERM mid-scan: stop now
    } else if (agent_) {
      if (!LookForNewTasks()) break;
    }
    if (agent_) CapExitedTasks();
    if (agent_ && !o_.keep_rows) DropForgotten();
    round.prog.tasks = static_cast<int>(tracked_.size());
    round.figs.ts = round.now;
    round.figs.node = o_.node_name.empty() ? b_.meta().host : o_.node_name;
    round.figs.host_cpus = host_cpus_;
    LogBudgets(&round.figs);
    for (size_t k = 0; k < tracked_.size(); ++k) SampleTask(k, &round);
    if (probes_ && probes_->any()) {
      probes_->Sample(round.now, round.bpf_emit, o_.keep_rows, round.figure_of, &round.figs);
    }
    if (o_.on_figures) o_.on_figures(round.figs);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    round.prog.elapsed_s = elapsed;
    round.prog.duration_s = o_.duration_s;
    if (o_.on_sample) o_.on_sample(round.prog);
    // An agent (on_figures set) keeps serving after its tasks exit; a recording ends.
    const bool stopping =
        (o_.stop != nullptr && o_.stop->load()) || (round.prog.alive == 0 && !o_.on_figures);
    if (stopping || elapsed + 1e-3 >= o_.duration_s) break;
    // After a stop request during the sleep: one last sample at the stop, then the loop ends.
    SleepToNextTick(tick);
  }
}

// Sleeps to the next tick in steps of at most kStopCheckMs, so Ctrl-C is seen quickly; the poll
// returns at once when a live task exits (its exit time is the poll's return). Steps of 20 ms woke
// the agent 50 times a second: a fifth of its own CPU at its defaults.
void Recording::SleepToNextTick(int tick) {
  const auto period = std::chrono::duration<double>(o_.interval_s);
  const auto next =
      start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * (tick + 1));
  for (auto left = next - std::chrono::steady_clock::now();
       left.count() > 0 && !(o_.stop != nullptr && o_.stop->load());
       left = next - std::chrono::steady_clock::now()) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count() + 1;
    exits_.Poll(static_cast<int>(std::min<int64_t>(ms, kStopCheckMs)));
  }
}

Capture Recording::Finish() {
  CaptureMeta& meta = b_.meta();
  if (warnings_dropped_ > 0) {
    meta.warnings.push_back(fmt::format("{} more warnings not kept", warnings_dropped_));
  }
  meta.window_end = RealtimeNs();
  if (StatusOr<NodeCpuTicks> now = ReadNodeCpuTicks(o_.discovery.root);
      now.ok() && cpu_at_start_.ok()) {
    meta.steal_pct = StealPct(*cpu_at_start_, *now);
  }
  Capture c = b_.Finish();
  // First/last sample and exit flags, by pid (Finish reorders processes). The span its byte
  // counters cover, as the agent's series say it (traffic_since, exit time): from when it was
  // found (its counters started at 0 then) to its exit (its pidfd, to 20 ms), where those are
  // wider than its samples; else a rate over the samples alone read up to one --interval of
  // bytes too many (+3.7% for a 25 s psload worker at 1 s, issue 46).
  for (size_t k = 0; k < tracked_.size(); ++k) {
    for (ProcessRow& p : c.processes) {
      if (p.pid != tracked_[k].task.pid) continue;
      const Tracked& tr = tracked_[k];
      p.first_ns = tr.counted_since > 0 && (first_ts_[k] == 0 || tr.counted_since < first_ts_[k])
                       ? tr.counted_since
                       : first_ts_[k];
      p.last_ns = !tr.alive && tr.exited_ns > last_ts_[k] ? tr.exited_ns : last_ts_[k];
      p.exited = !tracked_[k].alive;
      p.step_source = tracked_[k].step_source;
    }
  }
  return c;
}

}  // namespace recorder_detail

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
  recorder_detail::Recording r(o);
  if (Status s = r.Discover(); !s.ok()) return s;
  r.Begin();
  r.Run();
  return r.Finish();
}

}  // namespace tfdiag
