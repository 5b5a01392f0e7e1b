// Byte-level scanners of the fast JSON tokenizer (fast_json.h): strings, blanks, numbers and
// escapes, with SSE2 where the target has it. Each returns what the tokenizer needs to decide
// whether to take a token or give up to RapidJSON (see fast_json.h); none allocates except
// AppendUtf8. Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tfdiag::fast_json_internal {

inline bool IsWs(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Index of the first byte in [p, end) that is '"', '\\' or < 0x20, or end - p.
__attribute__((always_inline)) inline size_t ScanString(const char* p, const char* end) {
  const char* s = p;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\');
  const __m128i ctl = _mm_set1_epi8(0x1F);
  while (end - s >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    // Unsigned v <= 0x1F  <=>  max(v, 0x1F) == 0x1F.
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                             _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
    int bits = _mm_movemask_epi8(m);
    if (bits != 0) return static_cast<size_t>(s - p) + static_cast<size_t>(__builtin_ctz(bits));
    s += 16;
  }
#endif
  for (; s < end; ++s) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\' || c < 0x20) break;
  }
  return static_cast<size_t>(s - p);
}

// Number of blank bytes (space, tab, CR, LF) at the start of [p, end): the indentation of
// pretty-printed files (TensorFlow writes indent=4) in 16-byte steps.
__attribute__((always_inline)) inline size_t SkipBlanks(const char* p, const char* end) {
  const char* s = p;
#if defined(__SSE2__)
  const __m128i sp = _mm_set1_epi8(' '), nl = _mm_set1_epi8('\n');
  const __m128i cr = _mm_set1_epi8('\r'), tab = _mm_set1_epi8('\t');
  while (end - s >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, nl)),
                             _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, tab)));
    unsigned blank = static_cast<unsigned>(_mm_movemask_epi8(m));
    if (blank != 0xFFFFu) {
      return static_cast<size_t>(s - p) + static_cast<size_t>(__builtin_ctz(~blank));
    }
    s += 16;
  }
#endif
  while (s < end && IsWs(*s)) ++s;
  return static_cast<size_t>(s - p);
}

// True if the 8 bytes at p are all ASCII digits (one test instead of eight).
inline bool AllDigits8(const char* p) {
  uint64_t x;
  std::memcpy(&x, p, 8);
  const uint64_t hi = 0xF0F0F0F0F0F0F0F0ull;
  // Each byte's high nibble is 3, and adding 6 keeps it 3 (so the byte is at most '9'); no byte
  // passing the first test can carry into the next one.
  return ((x & hi) | (((x + 0x0606060606060606ull) & hi) >> 4)) == 0x3333333333333333ull;
}

// Length of the JSON number at the start of [b, e), by its grammar
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, or 0 where the tokenizer gives up: not a
// number (NaN, Infinity), a grammar error, one that could come near the double range (RapidJSON
// rejects those even as text: kParseErrorNumberTooBig), or one that runs to `e` while more input
// follows (`at_eof` false).
__attribute__((always_inline)) inline size_t NumberLength(const char* b, const char* e,
                                                          bool at_eof) {
  const char* p = b;
  auto digit = [&](const char* q) { return q < e && *q >= '0' && *q <= '9'; };
  if (p < e && *p == '-') ++p;
  if (!digit(p)) return 0;  // includes -Infinity / -NaN: RapidJSON decides
  const char* int_begin = p;
  if (*p == '0') {
    ++p;
  } else {
    while (e - p >= 8 && AllDigits8(p)) p += 8;  // timestamps: 16 digits
    while (digit(p)) ++p;
  }
  const long int_digits = p - int_begin;
  if (p < e && *p == '.') {
    ++p;
    if (!digit(p)) return 0;
    while (digit(p)) ++p;
  }
  long exp = 0;
  bool exp_minus = false;
  if (p < e && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < e && (*p == '+' || *p == '-')) exp_minus = *p++ == '-';
    if (!digit(p)) return 0;
    const char* exp_begin = p;
    while (digit(p)) exp = exp * 10 + (*p++ - '0'), exp = std::min(exp, 100000L);
    if (p - exp_begin > 4) return 0;
  }
  if (int_digits + (exp_minus ? 0 : exp) > 300) return 0;
  if (p == e && !at_eof) return 0;  // the token may go on past e: let RapidJSON read it
  return static_cast<size_t>(p - b);
}

inline int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// U+FFFD, what a lone UTF-16 surrogate escape (\ud800 without its pair) decodes to: JSON
// (RFC 8259 section 8.2) leaves such strings' meaning open; TF writes names from C++ bytes, so a
// lone surrogate is a damaged name, kept and counted rather than failing the file.
constexpr uint32_t kReplacementChar = 0xFFFD;

// True with *lo set when the 4 bytes at p are the hex digits of a low surrogate (DC00-DFFF).
inline bool LowSurrogateAt(const char* p, uint32_t* lo) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = HexValue(p[i]);
    if (d < 0) return false;
    v = v << 4 | static_cast<uint32_t>(d);
  }
  *lo = v;
  return v >= 0xDC00 && v <= 0xDFFF;
}

inline void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace tfdiag::fast_json_internal
