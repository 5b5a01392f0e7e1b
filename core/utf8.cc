#include "core/utf8.h"

#include <fmt/format.h>

namespace tfdiag {

namespace {

// Table 3-7: for lead byte `c`, the sequence length (0: not a lead byte) and the range of the
// second byte.
size_t LeadInfo(unsigned char c, unsigned char* lo, unsigned char* hi) {
  *lo = 0x80;
  *hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) return 2;
  if (c >= 0xE0 && c <= 0xEF) {
    if (c == 0xE0) *lo = 0xA0;  // no overlong 3-byte forms
    if (c == 0xED) *hi = 0x9F;  // no surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (c == 0xF0) *lo = 0x90;  // no overlong 4-byte forms
    if (c == 0xF4) *hi = 0x8F;  // nothing past U+10FFFF
    return 4;
  }
  return 0;
}

// Bytes of the maximal ill-formed subpart at s[i] (at least 1): the lead byte and the
// continuation bytes that could still have begun a valid sequence.
size_t IllFormedSubpart(std::string_view s, size_t i) {
  unsigned char lo, hi;
  const size_t n = LeadInfo(static_cast<unsigned char>(s[i]), &lo, &hi);
  if (n == 0 || i + 1 >= s.size()) return 1;
  const auto b1 = static_cast<unsigned char>(s[i + 1]);
  if (b1 < lo || b1 > hi) return 1;
  size_t k = 2;
  while (k < n && i + k < s.size() && (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80) ++k;
  return k;
}

}  // namespace

size_t Utf8SequenceAt(std::string_view s, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  unsigned char lo, hi;
  const size_t n = LeadInfo(c, &lo, &hi);
  if (n == 0 || s.size() - i < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
  }
  uint32_t v = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
  for (size_t k = 1; k < n; ++k) v = v << 6 | (b(k) & 0x3F);
  *cp = v;
  return n;
}

bool IsValidUtf8(std::string_view s) {
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceAt(s, i, &cp);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ToValidUtf8(std::string_view s, size_t* replaced) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceAt(s, i, &cp);
    if (n > 0) {
      out.append(s.data() + i, n);
      i += n;
      continue;
    }
    out += kUtf8Replacement;
    if (replaced != nullptr) ++*replaced;
    i += IllFormedSubpart(s, i);
  }
  return out;
}

std::string EscapeBidiControls(std::string_view s, size_t* escaped) {
  size_t bad = 0;
  std::string valid = ToValidUtf8(s, &bad);
  std::string out;
  out.reserve(valid.size());
  uint32_t cp = 0;
  for (size_t i = 0; i < valid.size();) {
    const size_t n = Utf8SequenceAt(valid, i, &cp);  // valid: n >= 1
    if (IsBidiControl(cp)) {
      out += fmt::format("\\u{:04x}", cp);
      ++bad;
    } else {
      out.append(valid.data() + i, n);
    }
    i += n;
  }
  if (escaped != nullptr) *escaped += bad;
  return out;
}

}  // namespace tfdiag
