// Internal to the text report (report/text_report.cc, report/text_findings.cc): its style and
// the figure formats both files use. Not a public interface.
#ifndef TFDIAG_REPORT_TEXT_STYLE_H_
#define TFDIAG_REPORT_TEXT_STYLE_H_

#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/analysis.h"
#include "analyzers/finding.h"

namespace tfdiag::text {

// ANSI styling when `on` (a terminal, --color always); `width` wraps prose (0: no wrapping).
struct Style {
  bool on;
  size_t width = 0;  // TextReportOptions::width
  std::string Bold(std::string_view s) const { return Wrap("1", s); }
  std::string Dim(std::string_view s) const { return Wrap("2", s); }
  std::string Sev(Severity sev, std::string_view s) const {
    switch (sev) {
      case Severity::kCritical:
      case Severity::kHigh:
        return Wrap("1;31", s);
      case Severity::kMedium:
        return Wrap("1;33", s);
      case Severity::kLow:
        return Wrap("1;36", s);
      default:
        return Wrap("1", s);
    }
  }
  std::string Wrap(std::string_view code, std::string_view s) const {
    return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : std::string(s);
  }
};

// A percentage with one decimal ("12.5%").
std::string Pct(double v);

// A finding's figure in its unit (durations, bytes, rates, counts); "unknown" for -1.
std::string FormatFigure(const Figure& f);

// Rows a text table shows before it says how many more there are.
constexpr size_t kMaxRows = 12;

// "  N of M shown; -f json for all" for a table cut at kMaxRows.
std::string MoreRows(size_t shown, size_t total);

// A predicted step at least this much longer (%) than now is called slower in words
// (ImpactLines); the report prints whole percents, and +1% reads as no change.
inline constexpr double kSlowerFixPct = 2.0;

// A finding's impact as the report words it, unescaped, one entry per line: a trusted prediction
// "impact: step 412 ms -> 260 ms (-37%; 250.0-270.0 ms), replay, confidence high" then what it
// rests on, the first line ending "; predicted N% slower" where the fix lengthens the step by
// kSlowerFixPct or more (whole percents), and ", its whole range too: do not apply this fix as
// written" where the range's low end is over the step now; an untrusted or withheld one "impact:
// not predicted ...: <why>"; {} when none was computed. The viewer's findings panel shows the same
// lines (issue 46).
std::vector<std::string> ImpactLines(const Finding& f);

// The waits the report lists under a finding, biggest first: a grouped finding's objects' (the
// first of each), else the finding's own (hot-ps: per worker). Pointers into `f`.
std::vector<const WaitFor*> ShownWaits(const Finding& f);

// The report's opening "Fix first" line, or "" when no trusted prediction saves anything.
std::string FixFirst(const AnalysisResult& r);
// analyze --brief: Fix first, one line per finding, one line per reason a rule could not judge
// (at most ~30 lines on any input; lines cut to st.width, or kProseColumns when it is 0).
std::string Brief(const AnalysisResult& r, const Style& st);

// The "Scaling outlook" section after the Fix first line (report/text_outlook.cc): the verdict,
// the predicted steps/s per worker count and the assumptions; "" when no outlook was computed.
std::string OutlookText(const AnalysisResult& r, const Style& st);

// The Findings and Not judged sections.
void Findings(const AnalysisResult& r, const Style& st, std::string* out);

}  // namespace tfdiag::text

#endif  // TFDIAG_REPORT_TEXT_STYLE_H_
