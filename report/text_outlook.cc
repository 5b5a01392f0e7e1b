// The text report's "Scaling outlook" section (issue 44 item 3): the predicted steps/s at more
// workers, as the job is and after Fix first, with a one-line verdict (analyzers/outlook.h).
#include <fmt/format.h>

#include "core/escape.h"
#include "report/table.h"
#include "report/text_style.h"
#include "report/wrap.h"

namespace tfdiag::text {

namespace {

// "1234.5" steps/s with 4 significant digits at most ("0.8123", "812.3", "81234").
std::string Rate(double x) {
  if (x >= 1e4) return fmt::format("{:.0f}", x);
  if (x >= 100) return fmt::format("{:.1f}", x);
  if (x >= 1) return fmt::format("{:.2f}", x);
  return fmt::format("{:.3g}", x);
}

}  // namespace

std::string OutlookText(const AnalysisResult& r, const Style& st) {
  const Outlook& o = r.outlook;
  if (!o.set && o.withheld.empty()) return "";
  std::string out;
  if (!o.set) {
    out += st.Bold("Scaling outlook") + "\n";
    out += WrapText("not predicted: " + Printable(o.withheld), st.width, "  ", "    ");
    return out + "\n";
  }
  out += st.Bold("Scaling outlook") +
         st.Dim(fmt::format(" (predicted from this profile, {} workers captured; confidence {})",
                            o.captured_workers, o.confidence)) +
         "\n";
  out += WrapText(Printable(o.verdict), st.width, "  ", "    ");
  const bool fix = !o.fix_rule.empty();
  std::vector<std::string> head = {">workers", ">steps/s", ">efficiency"};
  if (fix) head.push_back(">after Fix first");
  TextTable t(head);
  for (const OutlookPoint& p : o.points) {
    std::vector<std::string> row = {std::to_string(p.workers), Rate(p.steps_per_s),
                                    fmt::format("{:.0f}%", 100 * p.efficiency)};
    if (fix) row.push_back(Rate(p.steps_per_s_after_fix));
    t.AddRow(std::move(row));
  }
  out += t.Render(4);
  if (fix) {
    out += WrapText(fmt::format("after Fix first: {} on {}", o.fix_rule, Printable(o.fix_subject)),
                    st.width, "  ", "    ");
  }
  if (!o.confidence_why.empty()) {
    out += WrapText(o.confidence + " confidence: " + Printable(o.confidence_why), st.width, "  ",
                    "    ");
  }
  for (const std::string& a : o.assumptions) {
    out += st.Dim(WrapText("assumed: " + Printable(a), st.width, "  ", "    "));
  }
  return out + "\n";
}

}  // namespace tfdiag::text
