// The median of a list of numbers, one definition for every figure tfdiag reports: the middle
// value of an odd count, the mean of the middle two of an even count (so the median of two steps
// is their mean, not the longer one). Thread-safety: pure.
#pragma once

#include <algorithm>
#include <vector>

namespace tfdiag {

// The median of `v`, reordered in place (nth_element: no copy, a PS may run millions of steps);
// 0 for an empty list. For integers the mean of the middle two rounds toward the lower one.
template <typename T>
T MedianInPlace(std::vector<T>* v) {
  if (v->empty()) return T{};
  const size_t m = v->size() / 2;
  std::nth_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(m), v->end());
  const T hi = (*v)[m];
  if (v->size() % 2 == 1) return hi;
  const T lo = *std::max_element(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(m));
  return lo + (hi - lo) / 2;
}

// The upper middle value of `v` (a copy, reordered): for an even count the larger of the middle
// two, not their mean, so that a reference is a value some member really had (slow-ps-host's
// and slow-ps-link's reference PS). 0 for an empty list.
inline double UpperMedian(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace tfdiag
