// One pluralization for every report, note and panel, so a count never reads "1 processes" or
// "on 1 nodes" (issue 39). Thread-safety: pure functions.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tfdiag {

// The plural of an English noun as tfdiag uses them: "process" -> "processes", "policy" ->
// "policies", "PS" -> "PS" (the field writes "4 PS"), "worker" -> "workers".
inline std::string PluralOf(std::string_view noun) {
  if (noun == "PS" || noun.empty()) return std::string(noun);
  const char last = noun.back();
  if (noun.size() > 1 && last == 'y' &&
      std::string_view("aeiou").find(noun[noun.size() - 2]) == std::string_view::npos) {
    return std::string(noun.substr(0, noun.size() - 1)) + "ies";
  }
  const std::string_view tail = noun.substr(noun.size() > 1 ? noun.size() - 2 : 0);
  if (last == 's' || last == 'x' || last == 'z' || tail == "ch" || tail == "sh") {
    return std::string(noun) + "es";
  }
  return std::string(noun) + "s";
}

// `noun` for a count of `n`: singular for exactly 1, else PluralOf(noun).
inline std::string Noun(int64_t n, std::string_view noun) {
  return n == 1 ? std::string(noun) : PluralOf(noun);
}

// "1 node", "3 nodes", "0 processes".
inline std::string Count(int64_t n, std::string_view noun) {
  return fmt::format("{} {}", n, Noun(n, noun));
}

// The unit after a number as printed (`shown`, e.g. "1", "1.5"): a plural noun unit ("CPUs",
// "threads", "tasks") reads singular when the number prints as exactly 1 ("1 CPU"); others
// ("ms", "%", "Gbit/s") as given.
inline std::string UnitAfter(std::string_view shown, std::string_view unit) {
  if (shown != "1") return std::string(unit);
  for (std::string_view noun : {"CPUs", "threads", "tasks", "workers", "nodes", "pods", "steps"}) {
    if (unit == noun) return std::string(unit.substr(0, unit.size() - 1));
  }
  return std::string(unit);
}

// "1 CPU", "2 CPUs", "0.5 CPUs": `v` printed with the fmt `spec` ("{:.3g}"), then its unit.
inline std::string WithUnit(double v, std::string_view spec, std::string_view unit) {
  const std::string shown = fmt::format(fmt::runtime(spec), v);
  return shown + " " + UnitAfter(shown, unit);
}

}  // namespace tfdiag
