#include "analyzers/input_consistency.h"

#include <fmt/format.h>

#include <set>

namespace tfdiag {

namespace {

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
  return out;
}

}  // namespace

std::vector<std::string> InputConsistencyNotes(const Capture& c, const TaskStatsTable& stats) {
  std::vector<std::string> notes;
  if (c.ops.empty() || c.processes.empty()) return notes;
  const TimeNs ws = c.meta.window_start, we = c.meta.window_end;
  if (we > ws && (c.end < ws || c.start > we)) {
    notes.push_back(fmt::format(
        "the timeline ops ({:.1f} s long) and the bundle's recording window ({:.1f} s) do not "
        "overlap ({:.0f} s apart): they come from different runs, and figures that combine them "
        "(PS count, bytes per PS) may not describe one job",
        (c.end - c.start) / 1e9, (we - ws) / 1e9,
        (c.start > we ? c.start - we : ws - c.end) / 1e9));
  }
  // PS tasks each input knows: with ops in the timeline, and as processes in the bundle.
  std::set<std::string> timeline_ps, bundle_ps;
  for (const TaskStats& t : stats.tasks) {
    if (t.kind == JobKind::kPs && t.ops > 0) timeline_ps.insert(t.label);
  }
  for (const ProcessRow& p : c.processes) {
    if (c.tasks[p.task].kind == JobKind::kPs) bundle_ps.insert(std::string(c.TaskLabelOf(p.task)));
  }
  if (!timeline_ps.empty() && !bundle_ps.empty() && timeline_ps != bundle_ps) {
    notes.push_back(fmt::format(
        "the timeline's PS tasks ({}) differ from the bundle's ({}): each rule uses one set (the "
        "bundle's for measured bytes and CPU, the timeline's for op time and variables)",
        Join(timeline_ps), Join(bundle_ps)));
  }
  return notes;
}

}  // namespace tfdiag
