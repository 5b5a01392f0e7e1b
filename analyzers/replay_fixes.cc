#include "analyzers/replay_fixes.h"

#include <fmt/format.h>

#include <algorithm>

#include "analyzers/op_names.h"
#include "analyzers/step_graph.h"
#include "core/duration.h"

namespace tfdiag {

std::string_view VariableOf(std::string_view tensor) { return StripRead(InputNode(tensor)); }

WaitShare WaitsEndedBy(const AnalysisInput& in, uint32_t task,
                       const std::function<bool(std::string_view)>& pick) {
  WaitShare s;
  s.task = task;
  for (const WaitCause& w : in.graph->WaitCausesOf(task)) {
    s.all_ns += double(w.wait_ns);
    if (w.tensor != 0 && pick(VariableOf(in.capture.Str(w.tensor)))) {
      s.picked_ns += double(w.wait_ns);
    }
  }
  return s;
}

std::string MiB(double bytes) { return fmt::format("{:.1f} MiB", bytes / 1048576.0); }

std::vector<std::string> FindingSubjects(const Finding& f) {
  std::vector<std::string> out;
  for (const FindingObject& o : f.objects) out.push_back(o.subject);
  if (out.empty()) out.push_back(f.subject);
  return out;
}

std::string PartOpsOutweighWork(const ReplayModel& m, int count) {
  if (!m.sync) return "";  // asynchronous: the sensitivity checks of ComputeImpacts judge it
  double ops = 0, work = 0;
  for (const ReplayModel::Ps& p : m.ps) {
    ops += PartOpsAdded(p, count);
    work += p.pull_ns + p.push_ns;
  }
  const double added = ops * kPartOpDispatchNs;
  if (work <= 0 || added <= kMaxPartOpsOverWork * work) return "";
  return fmt::format(
      "partitioning every variable over {} PS adds {:.0f} part op(s) per worker step; at TF's "
      "dispatch cost of about {} each they would cost {} per worker step, {:.1f}x the {} of op "
      "time all PS spend per worker step now: the outcome hinges on a per-op cost (and PS cores) "
      "the capture does not show",
      count, ops, FormatDurationShort(kPartOpDispatchNs), FormatDurationShort(added), added / work,
      FormatDurationShort(work));
}

bool FewerPs(const ReplayModel& m, const Fix& fix) {
  return !fix.drop_ps.empty() || (fix.ps_count > 0 && size_t(fix.ps_count) < m.ps.size());
}

std::string FewerPsNotModelled(const ReplayModel& m, int count) {
  if (count <= 0 || size_t(count) >= m.ps.size()) return "";
  if (m.ps_cores <= 0 || m.ps_threads <= m.ps_cores) return "";
  return fmt::format(
      "{} PS -> {}: the PS left take the ops of those removed on {} thread(s) over the {} "
      "core(s) their ops' slowdown shows; ops beyond the cores run slower still once the load "
      "concentrates, by more than the capture's lighter load shows, so what fewer PS cost in "
      "step time is not predicted; what the fix buys for certain is {} PS task(s)",
      m.ps.size(), count, m.ps_threads, m.ps_cores, m.ps.size() - size_t(count));
}

std::string FewerPsCaveat(const ReplayModel& m, int count) {
  if (count <= 0 || size_t(count) >= m.ps.size()) return "";
  return fmt::format(
      "{} PS -> {}: the PS left serve more requests at once than the capture shows them serve, "
      "in an order the replay takes as arrival order",
      m.ps.size(), count);
}

}  // namespace tfdiag
