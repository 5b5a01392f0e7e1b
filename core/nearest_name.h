// "Did you mean ...?" for names a user typed: the known name nearest to a typo (a manifest's
// `kind: TFjob`, a container's `resource:`, `rules explain hotps`, `--fail-on HIGH`).
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace tfdiag {

// Levenshtein distance between `a` and `b`, letters compared case-insensitively (a case-only
// difference costs 0, so `TFjob` is at distance 0 from `TFJob`). O(|a| x |b|) time; callers pass
// names, not documents (both at most a few hundred characters).
inline size_t NameDistance(std::string_view a, std::string_view b) {
  auto low = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t sub = prev[j - 1] + (low(a[i - 1]) == low(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The name of `known` nearest to `typed` when it is close enough to be a typo: at most 2 edits,
// and fewer than half of the typed name's length (so `Service` is not taken for `Job`); "" when
// none is, or when `typed` is itself one of `known` (exactly). Ties: the first in `known`.
inline std::string NearestName(std::string_view typed, const std::vector<std::string>& known) {
  std::string best;
  size_t best_d = 3;
  for (const std::string& k : known) {
    if (k == typed) return "";
    const size_t d = NameDistance(typed, k);
    if (d < best_d && 2 * d < typed.size()) {
      best = k;
      best_d = d;
    }
  }
  return best;
}

// " (did you mean X?)" for the nearest name, or "".
inline std::string DidYouMean(std::string_view typed, const std::vector<std::string>& known) {
  const std::string n = NearestName(typed, known);
  return n.empty() ? "" : " (did you mean " + n + "?)";
}

}  // namespace tfdiag
