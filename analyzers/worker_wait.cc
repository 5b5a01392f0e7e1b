#include "analyzers/worker_wait.h"

#include <algorithm>

#include "analyzers/capture_queries.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

// Where the variables live: "ps:0 (3 variables), ps:1 (2)" or, without PS, the workers that
// host them. Empty when no task lists one.
std::string VariableHosts(const TaskStatsTable& st, std::string* first_host) {
  std::string out;
  for (const TaskStats& t : st.tasks) {
    if (t.variables.empty()) continue;
    if (out.empty()) *first_host = t.label;
    out += fmt::format("{}{} ({} variable{})", out.empty() ? "" : ", ", t.label, t.variables.size(),
                       t.variables.size() == 1 ? "" : "s");
  }
  return out;
}

}  // namespace

WaitLabel LabelWait(const Capture& c, const StepGraph& g, const PathSegment& p) {
  WaitLabel out;
  const TimeNs len = p.end - p.start;
  if (!p.wait || len <= 0) return out;
  if (2 * p.input_ns >= len) {
    out.input = true;
    return out;
  }
  if (2 * p.sync_ns >= len) {
    out.what = " for the sync token (SyncReplicasOptimizer: the slowest replica)";
    return out;
  }
  if (p.edge < g.edges().size()) {
    const GraphEdge& e = g.edges()[p.edge];
    if (e.push) {
      out.what = fmt::format(" at the step's end for {} to take {}, its last push",
                             c.TaskLabelOf(e.dst_task), c.Str(e.tensor));
    } else {
      out.what = fmt::format(" for {} from {}", c.Str(e.tensor),
                             e.ambiguous() ? fmt::format("one of {} tasks", e.candidates)
                                           : std::string(c.TaskLabelOf(e.src_task)));
    }
  } else if (!p.step_tail) {
    out.what =
        " with no op or transfer of its own recorded (a transfer the trace does not tie to a "
        "tensor, or a PS busy with other requests)";
  } else {
    // No op of the worker runs and no tensor arrives that the trace records: the step ends on
    // what the profile does not hold (issue 48: the wait gets its cause, not a bare label).
    out.what =
        " to the step's end, with no op or transfer of its own recorded: the PS applying its "
        "last updates, or the client between session calls";
  }
  return out;
}

bool NothingCrossTaskToWaitFor(const TaskStatsTable& st, const TaskStats& t) {
  if (t.recv_count > 0 || t.edges_in > 0) return false;
  if (t.kind == JobKind::kLocal) return true;
  for (const TaskStats& o : st.tasks) {
    if (&o != &t && o.ops > 0) return false;
  }
  return true;
}

std::vector<WaitFor> DescribeWaits(const Capture& c, const StepGraph& g, uint32_t task, size_t top,
                                   double min_ns, uint32_t only_from) {
  std::vector<WaitFor> out;
  const auto [b, e] = g.TaskSteps(task);
  if (b == e) return out;
  const double steps = e - b;
  for (const WaitCause& w : g.WaitCausesOf(task)) {
    if (out.size() >= top) break;
    if (only_from != kNoIndex && w.src_task != only_from) continue;
    WaitFor x;
    x.task = std::string(c.TaskLabelOf(task));
    x.tensor = w.tensor == 0 ? "" : std::string(c.Str(w.tensor));
    x.from = w.src_task == kNoIndex ? "" : std::string(c.TaskLabelOf(w.src_task));
    x.ambiguous = w.ambiguous;
    x.candidates = w.candidates;
    x.step_tail = w.step_tail;
    x.wait_ns = w.wait_ns / steps;
    x.input_ns = w.input_ns / steps;
    x.sync_ns = w.sync_ns / steps;
    x.sent_offset_ns = double(w.sent_offset_ns);
    x.waits = w.waits;
    if (x.wait_ns + x.sync_ns < min_ns) continue;
    const std::string head =
        // The statistic named: the critical path shows one (median) step, this the mean over all
        // the task's steps, and the two differ (issue 39).
        fmt::format("{} idles {} per step (mean over its {} steps)", x.task,
                    FormatDurationShort(x.wait_ns), e - b);
    if (!x.from.empty() && x.step_tail) {
      // The step's tail, ended by the apply of what the task pushed last (issue 35).
      x.text = fmt::format(
          "{} at its step's end until {} has taken {}, its last push (sent {} "
          "into the step)",
          head, x.from, x.tensor, FormatDurationShort(x.sent_offset_ns));
    } else if (!x.from.empty()) {
      // A tensor sent before the waiting step began (by the producer's previous step, or a PS
      // answering early) has no offset into the step: said as "before", never a negative time.
      x.text = x.sent_offset_ns >= 0
                   ? fmt::format("{} until {} arrives from {} (sent {} into the step)", head,
                                 x.tensor, x.from, FormatDurationShort(x.sent_offset_ns))
                   : fmt::format("{} until {} arrives from {} (sent {} before the step began)",
                                 head, x.tensor, x.from, FormatDurationShort(-x.sent_offset_ns));
    } else if (x.ambiguous) {
      x.text = fmt::format(
          "{} until {} arrives (ambiguous: {} tasks produce it, no arrow says "
          "which sent it)",
          head, x.tensor, x.candidates);
    } else if (x.step_tail) {
      x.text = head + " after its last op, until the step ends";
    } else {
      x.text = head + " before ops that take no cross-task input";
    }
    if (x.sync_ns > 0) {
      x.text += fmt::format(
          "; and {} per step for the sync token (SyncReplicasOptimizer: the "
          "slowest replica)",
          FormatDurationShort(x.sync_ns));
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::vector<Finding> RunWorkerWait(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const TaskStatsTable& st = in.stats;
  std::string first_host;
  const std::string hosts = VariableHosts(st, &first_host);
  for (const TaskStats& t : st.tasks) {
    if (!IsTrainingTask(t.kind) || t.steps < rule.Param("min_steps")) continue;
    if (NothingCrossTaskToWaitFor(st, t)) continue;
    const TimeNs step_total = t.step_mean_ns * t.steps;
    if (step_total <= 0 || t.step_median_ns < rule.Param("min_step_ms") * 1e6) continue;
    const double busy_pct = std::min(100.0, 100.0 * t.busy_ns / step_total);
    if (busy_pct > rule.Param("max_busy_pct")) continue;
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    const bool hosts_itself = first_host == t.label;
    std::string cause;
    if (st.num_ps == 0 && !hosts.empty()) {
      cause = hosts_itself
                  ? fmt::format("it hosts the job's variables ({}) and serves the others", hosts)
                  : fmt::format("the job has no PS: variables live on {}", hosts);
    } else if (!hosts.empty()) {
      cause = "variables live on " + hosts;
    } else {
      cause = "no task in the trace shows where the variables live";
    }
    f.summary = fmt::format(
        "{} runs ops {:.1f}% of its step time ({} steps, median {:.2f} s): it waits the rest of "
        "each "
        "step for variables, gradients or other replicas; {}",
        t.label, busy_pct, t.steps, t.step_median_ns / 1e9, cause);
    f.cause = cause;
    f.evidence = {{"busy share of step time (union of op intervals / summed steps)", busy_pct, "%"},
                  {"busy time", double(t.busy_ns), "ns"},
                  {"summed step time", double(step_total), "ns"},
                  {"median step time", double(t.step_median_ns), "ns"},
                  {"steps", double(t.steps), "count"},
                  {"cross-task transfers received", double(t.edges_in), "count"},
                  {"RecvTensor ops", double(t.recv_count), "count"}};
    for (size_t i = 0; i < t.by_type.size() && i < 3; ++i) f.ops.push_back(t.by_type[i].type);
    if (in.graph != nullptr) {
      // What ends the waits: the biggest causes over 5% of the median step.
      f.waits = DescribeWaits(in.capture, *in.graph, t.task, 3, 0.05 * t.step_median_ns);
      if (!f.waits.empty()) f.summary += "; " + f.waits[0].text;
    }
    f.range_start = t.first_ns;
    f.range_end = t.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
