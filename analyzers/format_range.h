#pragma once
// A predicted step's range as text, for the impact's `why` (replay_impact.cc, ps_links_convoy.cc).
#include <fmt/format.h>

#include <string>

namespace tfdiag {

// "142.0-151.0 ms": [lo, hi] ns, both ends in the unit of the larger (s, ms or us).
inline std::string FormatRange(double lo, double hi) {
  if (hi >= 1e9) return fmt::format("{:.2f}-{:.2f} s", lo / 1e9, hi / 1e9);
  if (hi >= 1e6) return fmt::format("{:.1f}-{:.1f} ms", lo / 1e6, hi / 1e6);
  return fmt::format("{:.0f}-{:.0f} us", lo / 1e3, hi / 1e3);
}

}  // namespace tfdiag
