// Saturating int64 arithmetic for sums and spans made from input values (times in ns, bytes,
// counts): a sum past INT64_MAX stays INT64_MAX instead of wrapping to a negative figure ("span
// -9223372036854773760 ns", "bytes -2^63"), which is undefined behaviour for signed integers
// (C++17 [expr]/4) and what UBSan reported. Readers reject out-of-range values with the byte
// offset; these keep sums over millions of in-range values honest. Uses the GCC/Clang
// __builtin_*_overflow intrinsics. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <limits>

namespace tfdiag {

// a + b, clamped to [INT64_MIN, INT64_MAX].
inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

// a - b, clamped to [INT64_MIN, INT64_MAX].
inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

// *sum += v, saturating.
inline void SatAccumulate(int64_t* sum, int64_t v) { *sum = SatAdd(*sum, v); }

}  // namespace tfdiag
