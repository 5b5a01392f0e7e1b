// One duration formatter for every report and finding summary, so a report never shows
// "4726.20 ms per step" beside "4.73 s": the unit follows the value.
// Thread-safety: pure function.
#pragma once

#include <fmt/format.h>

#include <string>

namespace tfdiag {

// A duration in ns for people: "812 ns", "12.3 us", "4.56 ms", "1.23 s" (below 1 us, 1 ms, 1 s).
inline std::string FormatDuration(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

// The same, one digit shorter, for figures many to a line (critical paths, waits, "Fix first"):
// "5.13 s", "48.2 ms", "310 us".
inline std::string FormatDurationShort(double ns) {
  if (ns >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.1f} ms", ns / 1e6);
  return fmt::format("{:.0f} us", ns / 1e3);
}

}  // namespace tfdiag
