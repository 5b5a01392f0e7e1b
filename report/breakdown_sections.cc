#include "report/breakdown_sections.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/duration.h"
#include "core/escape.h"

namespace tfdiag {

std::string BreakdownText(const Capture& c, const TaskStatsTable& stats) {
  if (c.step_breakdowns.empty()) return "";
  std::string out;
  const std::vector<CaptureRange> ranges = c.CaptureRanges();
  for (const TaskStats& s : stats.tasks) {
    const BreakdownTotals b = BreakdownOfTask(c, s.task);
    if (b.empty()) continue;
    out += fmt::format("  step time of {} (XProf's breakdown, {} step{}, {} per step): {}\n",
                       Printable(s.label), b.steps, b.steps == 1 ? "" : "s",
                       FormatDuration(double(b.step_ns) / b.steps), BreakdownShareText(b));
    if (ranges.size() < 2) continue;
    for (size_t i = 0; i < ranges.size() && i < 20; ++i) {
      const BreakdownTotals bi = BreakdownOfTask(c, s.task, ranges[i].start, ranges[i].end);
      if (bi.empty()) continue;
      out += fmt::format("    capture {} ({} step{}, {} per step): {}\n", i + 1, bi.steps,
                         bi.steps == 1 ? "" : "s", FormatDuration(double(bi.step_ns) / bi.steps),
                         BreakdownShareText(bi));
    }
  }
  return out;
}

}  // namespace tfdiag
