// LabelValue(): a string a workload controls (a TF_CONFIG task type, a pod name, a peer address)
// made fit for a Prometheus label value: valid UTF-8 (core/utf8.h ToValidUtf8: each maximal
// ill-formed subpart becomes U+FFFD) of at most kMaxLabelValueBytes (cut at a character
// boundary), with no control character (each becomes U+FFFD). The text exposition format
// (https://prometheus.io/docs/instrumenting/ exposition_formats/) wants label values in UTF-8, and
// Prometheus refuses a whole scrape over one invalid value ("invalid label value"); '\\', '"' and
// '\n' are escaped by prometheus-cpp's TextSerializer. Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/utf8.h"

namespace tfdiag {

// Longer label values are cut: a pod name is at most 253 bytes (DNS-1123 subdomain).
constexpr size_t kMaxLabelValueBytes = 256;

// True for a C0 control character (NUL, CR, ESC, ...) or DEL.
inline bool IsControlByte(char c) {
  return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f;
}

// `s` as valid UTF-8 of at most max_bytes, whole characters only, every C0 control character
// and DEL replaced by U+FFFD: a NUL or a raw CR in a task type must not reach a label (or a
// terminal that prints one, or a log line: the scrape shows no control character at all).
inline std::string LabelValue(std::string_view s, size_t max_bytes = kMaxLabelValueBytes) {
  bool controls = false;
  for (char c : s) controls |= IsControlByte(c);
  if (!controls && s.size() <= max_bytes && IsValidUtf8(s)) return std::string(s);
  std::string out;
  for (char c : ToValidUtf8(s.substr(0, 4 * max_bytes))) {
    if (IsControlByte(c)) {
      out += "\xEF\xBF\xBD";  // U+FFFD
    } else {
      out += c;
    }
  }
  if (out.size() > max_bytes) {
    size_t end = 0;
    uint32_t cp = 0;
    for (size_t n;
         end < out.size() && (n = Utf8SequenceAt(out, end, &cp)) > 0 && end + n <= max_bytes;) {
      end += n;
    }
    out.resize(end);
  }
  return out;
}

}  // namespace tfdiag
