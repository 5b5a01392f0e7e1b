#include "analyzers/ps_count_spread.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzers/format_range.h"
#include "analyzers/ps_count_saturated.h"
#include "analyzers/replay_impact_weak.h"
#include "analyzers/replay_ps_nodes.h"
#include "analyzers/task_stats.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// The busiest PS's load after the fix over its load now, for per-PS loads `now` (one per PS,
// any unit) summed and spread over `count` PS, with `added` (the same unit) added to the sum;
// each PS's load is per one of its `units` (threads; empty: 1 each), and a PS after the fix has
// `units_after` of them.
double Factor(const std::vector<double>& now, double added, int count,
              const std::vector<double>& units = {}, double units_after = 1) {
  double sum = added, most = 0;
  for (size_t i = 0; i < now.size(); ++i) {
    sum += now[i];
    most = std::max(most, now[i] / (units.empty() ? 1.0 : units[i]));
  }
  if (most <= 0 || count <= 0 || units_after <= 0) return 0;
  return sum / double(count) / units_after / most;
}

// The median worker's own time per step: compute and input, or the larger of compute and its
// producer's time where the input is prefetched.
double WorkersOwnNs(const ReplayModel& m) {
  std::vector<double> own;
  for (const ReplayModel::Worker& w : m.workers) {
    own.push_back(w.prefetched ? std::max(w.compute_ns, w.producer_ns) : w.compute_ns + w.input_ns);
  }
  return MedianInPlace(&own);
}

}  // namespace

std::vector<double> SpreadBytes(const AnalysisInput& in, const ReplayModel& m,
                                std::string* source) {
  const NicDemand d = PsNicBytes(in, m);
  std::vector<double> out;
  if (d.known && d.out.size() == m.ps.size() && d.in.size() == m.ps.size()) {
    for (size_t i = 0; i < m.ps.size(); ++i) out.push_back(d.out[i] + d.in[i]);
    *source = "their bytes out and in per worker step";
    return out;
  }
  for (const ReplayModel::Ps& p : m.ps) {
    const TaskStats* t = in.stats.Find(in.capture.TaskLabelOf(p.task));
    const bool busy = p.pull_ns + p.push_ns > 0;
    double sum = 0;
    if (t != nullptr) {
      for (const VariableLoad& v : t->variables) {
        if (v.bytes < 0 && busy) return {};
        sum += double(std::max<int64_t>(0, v.bytes));
      }
    }
    if (busy && sum <= 0) return {};
    out.push_back(sum);
  }
  *source = "the sizes of the variables they host (no transfer is sized)";
  return out;
}

LoadSpread ReadLoadSpread(const ReplayModel& m, const std::vector<double>& bytes, const Fix& fix,
                          double unexplained, const SpreadLimits& lim) {
  LoadSpread s;
  const int n = static_cast<int>(m.ps.size());
  if (m.sync) {
    s.why_not = "SyncReplicasOptimizer: the barrier, not the busiest PS alone, paces the step";
    return s;
  }
  if (fix.ps_count <= n || !fix.partition.empty() || !fix.drop_ps.empty() || fix.spread_ps ||
      m.ps.empty()) {
    s.why_not = "the fix does not only add PS";
    return s;
  }
  if (PsPacked(m.ps_node)) {
    s.why_not = "PS share a node (the pod list's), whose NIC a PS added there would share too";
    return s;
  }
  if (unexplained < lim.min_unexplained) {
    s.why_not = fmt::format(
        "the wait the PS model does not explain is {:.0f}% of the step, under the {:.0f}% from "
        "which the PS are taken to hold the workers' step",
        100 * unexplained, 100 * lim.min_unexplained);
    return s;
  }
  s.evenness = PsLoadEvenness(m);
  if (s.evenness < lim.min_evenness) {
    s.why_not = fmt::format(
        "the PS load is uneven (evenness {:.0f}%, under {:.0f}%): the waits at a hot PS need not "
        "be its load's",
        100 * s.evenness, 100 * lim.min_evenness);
    return s;
  }
  if (bytes.size() != m.ps.size()) {
    s.why_not = "the capture sizes neither every PS's transfers nor its variables";
    return s;
  }
  std::vector<double> ops, threads;
  double added = 0, added_dear = 0;
  for (size_t i = 0; i < m.ps.size(); ++i) {
    const ReplayModel::Ps& p = m.ps[i];
    ops.push_back(p.pull_ns + p.push_ns);
    threads.push_back(std::max(1, p.threads));
    const double parts = PartOpsAdded(p, fix.ps_count);
    added += parts * p.op_floor_ns;
    added_dear += parts * std::max(p.op_floor_ns, kPartOpDispatchNs);  // as AtDispatchCost
  }
  // Op time per thread (as PsLoadEvenness reads it); a PS after the fix runs the median PS's
  // threads. The replay's PS-count plan (replay_plan.cc PlanPs) gives each the most any PS has:
  // the two agree where every PS has the same threads, as on every job this was set on.
  std::vector<double> sorted = threads;
  const double threads_after = MedianInPlace(&sorted);
  s.ops_factor = Factor(ops, added, fix.ps_count, threads, threads_after);
  s.dear_factor = Factor(ops, added_dear, fix.ps_count, threads, threads_after);
  s.bytes_factor = Factor(bytes, 0, fix.ps_count);
  s.floor_ns = WorkersOwnNs(m);
  if (s.ops_factor <= 0 || s.bytes_factor <= 0) {
    s.why_not = "no PS carries load";
    return s;
  }
  const double apart =
      std::abs(s.ops_factor - s.bytes_factor) / std::max(s.ops_factor, s.bytes_factor);
  if (apart > lim.max_apart) {
    s.why_not = fmt::format(
        "the PS's op time and bytes spread differently (the busiest PS's load after the fix: "
        "{:.2f}x its op time, {:.2f}x its bytes; {:.0f}% apart, over {:.0f}%), and which of them "
        "holds the waits the capture does not show",
        s.ops_factor, s.bytes_factor, 100 * apart, 100 * lim.max_apart);
    return s;
  }
  if (std::abs(s.dear_factor - s.ops_factor) / s.ops_factor > kMaxPartOpSensitivity) {
    s.why_not = fmt::format(
        "the part ops the fix adds move the busiest PS's op time after it from {:.2f}x to {:.2f}x "
        "at {} per part op (TF's executor dispatch)",
        s.ops_factor, s.dear_factor, FormatDurationShort(kPartOpDispatchNs));
    return s;
  }
  return s;
}

bool PredictFromLoadSpread(const ReplayModel& m, const std::vector<double>& bytes,
                           const std::string& bytes_source, const Fix& fix, double step_ns,
                           double unexplained, double miss, double spread, const SpreadLimits& lim,
                           const std::string& what, const std::string& checks, Impact* im_out,
                           std::string* why_not) {
  const LoadSpread s = ReadLoadSpread(m, bytes, fix, unexplained, lim);
  if (!s.why_not.empty() || step_ns <= 0) {
    *why_not = !s.why_not.empty() ? s.why_not : "no measured step";
    return false;
  }
  // The point reads the larger of the two factors (the PS's op cost per part op, as the replay
  // charges it); the range spans both and the dearer part ops.
  const double point_f = std::max(s.ops_factor, s.bytes_factor);
  const double lo_f = std::min({s.ops_factor, s.dear_factor, s.bytes_factor});
  const double hi_f = std::max({s.ops_factor, s.dear_factor, s.bytes_factor});
  Impact& im = *im_out;
  im.method = "replay";
  im.confidence = replay_detail::EnoughToPredict(m) ? "medium" : "low";
  im.baseline_miss_pct = 100 * miss;
  im.step_ns = step_ns;
  im.step_ns_after_fix = std::min(step_ns, std::max(s.floor_ns, step_ns * point_f));
  im.saving_pct = 100 * (step_ns - im.step_ns_after_fix) / step_ns;
  const double u = std::max(0.01, std::abs(miss) + spread);
  im.low_ns = std::max(s.floor_ns, step_ns * lo_f) * (1 - u);
  im.high_ns = std::min(step_ns, std::max(s.floor_ns, step_ns * hi_f)) * (1 + u);
  im.why = fmt::format(
      "the PS hold the workers on something the PS model does not show ({:.0f}% of the step is "
      "wait it does not explain), so in this asynchronous job the busiest PS's throughput is "
      "taken to set the step; {}: the busiest PS's load becomes {:.2f}x of what it is by its op "
      "time per thread ({:.2f}x at {} per part op added) and {:.2f}x by {}, the PS load's "
      "evenness {:.0f}%, so the step falls by that factor down to the workers' own compute and "
      "input ({}): median step {} -> {} ({}); {} confidence: scaled from the load's spread, not "
      "replayed, and each PS added is taken on a node of its own{} (set on 5 jobs of the third "
      "generator's spent sets, each within 7% of its twin); {}",
      100 * unexplained, what, s.ops_factor, s.dear_factor, FormatDurationShort(kPartOpDispatchNs),
      s.bytes_factor, bytes_source, 100 * s.evenness, FormatDurationShort(s.floor_ns),
      FormatDurationShort(step_ns), FormatDurationShort(im.step_ns_after_fix),
      FormatRange(im.low_ns, im.high_ns), im.confidence,
      m.ps_node.empty() ? ", as is each PS now (their nodes are not known)" : "", checks);
  return true;
}

SpreadLimits SpreadLimitsOf(const Rule& rule) {
  SpreadLimits l;
  if (const RuleParam* p = rule.FindParam("spread_min_unexplained_pct")) {
    l.min_unexplained = p->value / 100;
  }
  if (const RuleParam* p = rule.FindParam("spread_max_apart_pct")) l.max_apart = p->value / 100;
  if (const RuleParam* p = rule.FindParam("spread_min_evenness_pct")) {
    l.min_evenness = p->value / 100;
  }
  return l;
}

}  // namespace tfdiag
