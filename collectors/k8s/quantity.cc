#include "collectors/k8s/quantity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

namespace tfdiag {

namespace {

bool Digit(char c) { return c >= '0' && c <= '9'; }

// A short, printable rendering of a quantity for error messages (long values are cut).
std::string Shown(std::string_view t) {
  std::string s;
  for (char c : t.substr(0, 40)) {
    s += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  }
  if (t.size() > 40) s += fmt::format("... ({} characters)", t.size());
  return s;
}

}  // namespace

bool ParseQuantity(std::string_view text, int unit_pow10, const char* unit_name, int64_t* value,
                   std::string* error) {
  auto fail = [&](const std::string& why) {
    if (error != nullptr) *error = why;
    return false;
  };
  const std::string bad = fmt::format(
      "'{}' is not a Kubernetes quantity (expected a number with an optional suffix: 500m, 2, "
      "1.5, 4Gi, 1e3)",
      Shown(text));
  if (text.empty()) return fail("empty; expected a quantity such as 500m, 2, 1.5, 4Gi or 1e3");
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  // Significant digits (at most kKeep, the rest only tell whether something was dropped) and the
  // power of ten of the last kept digit.
  constexpr size_t kKeep = 60;
  std::string digits;
  int64_t pow10 = 0;
  bool dropped_nonzero = false, any_digit = false;
  auto take = [&](char c, bool fraction) {
    any_digit = true;
    if (digits.empty() && c == '0') {
      if (fraction) --pow10;
      return;
    }
    if (digits.size() < kKeep) {
      digits += c;
      if (fraction) --pow10;
    } else {
      if (c != '0') dropped_nonzero = true;
      if (!fraction) ++pow10;
    }
  };
  for (; i < text.size() && Digit(text[i]); ++i) take(text[i], false);
  if (i < text.size() && text[i] == '.') {
    for (++i; i < text.size() && Digit(text[i]); ++i) take(text[i], true);
  }
  if (!any_digit) return fail(bad);
  // Suffix.
  std::string_view suf = text.substr(i);
  int pow2 = 0;
  static const std::pair<std::string_view, int> kBinary[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30},
                                                             {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  static const std::pair<std::string_view, int> kDecimal[] = {
      {"m", -3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}};
  bool matched = suf.empty();
  for (const auto& [s, p] : kBinary) {
    if (suf == s) pow2 = p, matched = true;
  }
  for (const auto& [s, p] : kDecimal) {
    if (suf == s) pow10 += p, matched = true;
  }
  if (!matched && suf.size() >= 2 && (suf[0] == 'e' || suf[0] == 'E')) {
    size_t j = 1;
    bool exp_negative = false;
    if (suf[j] == '+' || suf[j] == '-') exp_negative = suf[j++] == '-';
    if (j < suf.size()) {
      int64_t e = 0;
      for (; j < suf.size() && Digit(suf[j]); ++j)
        e = std::min<int64_t>(e * 10 + (suf[j] - '0'), 1 << 20);
      if (j == suf.size()) {
        pow10 += exp_negative ? -e : e;
        matched = true;
      }
    }
  }
  if (!matched) return fail(bad);
  pow10 += unit_pow10;
  if (digits.empty()) {  // zero, whatever the sign and suffix
    *value = 0;
    return true;
  }
  if (negative) return fail(fmt::format("'{}' is negative", Shown(text)));
  const std::string too_big = fmt::format("'{}' exceeds 2^63-1 {}", Shown(text), unit_name);
  // digits * 10^pow10 * 2^pow2: the integer part cannot have more than 19 digits.
  if (static_cast<int64_t>(digits.size()) + pow10 > 40) return fail(too_big);
  // Multiply the decimal digit string by 2^pow2 (pow2 <= 60, the string stays short).
  for (int k = 0; k < pow2; ++k) {
    int carry = 0;
    for (size_t d = digits.size(); d-- > 0;) {
      int v = (digits[d] - '0') * 2 + carry;
      digits[d] = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    if (carry) digits.insert(digits.begin(), static_cast<char>('0' + carry));
  }
  // Split at the decimal point: integer part, and whether anything non-zero lies below it.
  std::string whole;
  bool fraction = dropped_nonzero;
  if (pow10 >= 0) {
    whole = digits + std::string(static_cast<size_t>(pow10), '0');
  } else {
    const int64_t cut = static_cast<int64_t>(digits.size()) + pow10;
    if (cut > 0) whole = digits.substr(0, static_cast<size_t>(cut));
    const std::string below = digits.substr(static_cast<size_t>(std::max<int64_t>(cut, 0)));
    fraction |= below.find_first_not_of('0') != std::string::npos;
  }
  whole.erase(0, std::min(whole.find_first_not_of('0'), whole.size()));
  static const std::string kMax = std::to_string(std::numeric_limits<int64_t>::max());
  if (whole.size() > kMax.size() || (whole.size() == kMax.size() && whole > kMax))
    return fail(too_big);
  int64_t v = 0;
  for (char c : whole) v = v * 10 + (c - '0');
  if (fraction) {  // rounded up, as Kubernetes does
    if (v == std::numeric_limits<int64_t>::max()) return fail(too_big);
    ++v;
  }
  *value = v;
  return true;
}

int64_t ParseCpuMillis(std::string_view q, std::string* error) {
  int64_t m = 0;
  if (!ParseQuantity(q, 3, "millicores", &m, error)) return -1;
  if (m > kMaxCpuMillis) {
    if (error != nullptr) {
      *error = fmt::format(
          "'{}' is {:.4g} CPUs, more than any Linux node has (at most 8192, CONFIG_NR_CPUS)",
          Shown(q), static_cast<double>(m) / 1000);
    }
    return -1;
  }
  return m;
}

int64_t ParseMemoryBytes(std::string_view q, std::string* error) {
  int64_t b = 0;
  if (!ParseQuantity(q, 0, "bytes", &b, error)) return -1;
  return b;
}

}  // namespace tfdiag
