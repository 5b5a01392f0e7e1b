// Checked parsing and arithmetic for numbers from untrusted text (file names, labels, replies):
// std::stoi throws (and aborts tfdiag when uncaught) on "" or 99999999999, std::atoi is
// undefined past INT_MAX, and a double cast to an integer beyond its range is undefined
// behaviour (UBSan: "-9223372036854773760 ns"). These helpers say false instead.
// std::from_chars: https://en.cppreference.com/w/cpp/utility/from_chars ; GCC's overflow
// builtins: https://gcc.gnu.org/onlinedocs/gcc/Integer-Overflow-Builtins.html
// Thread-safety: pure functions.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

namespace tfdiag {

// True when `s` is one or more ASCII digits '0'-'9' (no sign, no spaces).
inline bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

// All of `s` as a base-10 integer in [lo, hi] (no sign for lo >= 0, no spaces, no '+').
// False on "", trailing characters, overflow or a value out of range; *out untouched then.
template <typename T>
bool ParseIntIn(std::string_view s, T lo, T hi, T* out) {
  if (s.empty() || (lo >= 0 && s[0] == '-')) return false;
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

// a * b, a + b into *out; false (and *out untouched) when the result overflows int64.
inline bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}
inline bool CheckedAdd(int64_t a, int64_t b, int64_t* out) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return false;
  *out = r;
  return true;
}

// `x` rounded to the nearest integer when finite and within [lo, hi]; false otherwise.
inline bool RoundedIn(double x, int64_t lo, int64_t hi, int64_t* out) {
  if (!std::isfinite(x)) return false;
  const double r = std::nearbyint(x);
  // Compared as doubles: hi = INT64_MAX reads as 2^63, which no int64 reaches.
  if (r < static_cast<double>(lo) || r >= static_cast<double>(hi) + 1.0) return false;
  *out = static_cast<int64_t>(r);
  return true;
}

// `x` rounded to the nearest integer and saturated to [lo, hi] (NaN: 0): for figures derived
// from a server's doubles (rates x seconds), where a cast out of range is undefined behaviour.
inline int64_t SaturatedRound(double x, int64_t lo = INT64_MIN, int64_t hi = INT64_MAX) {
  if (std::isnan(x)) return 0;
  const double r = std::nearbyint(x);
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

// a + b saturated to int64.
inline int64_t SaturatedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_add_overflow(a, b, &r)) return r;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

}  // namespace tfdiag
