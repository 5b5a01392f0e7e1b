// Printable(): text from workloads (pod names from a container's /etc/hostname, task types from
// TF_CONFIG, op and variable names, manifest values) made safe for a terminal. C0 controls
// (including ESC, so no CSI/OSC sequence gets through), DEL, the C1 controls U+0080-U+009F and
// bytes that are not UTF-8 become visible escapes: "\x1b", "\x7f", "\u009b", "\xff"; '\\' stays.
// Bidirectional controls (U+202A-U+202E, U+2066-U+2069, LRM/RLM/ALM; core/utf8.h) are escaped
// too ("\u202e"): they would reorder the rest of the line as a terminal shows it.
// Other UTF-8 is kept. Every text output (the text report, notes and changes on stderr) passes
// workload strings through it; JSON output has its own escaping. Thread-safety: pure function.
// PrintNote(): the one way a note, warning or error line reaches stderr.
#pragma once

#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "core/utf8.h"

namespace tfdiag {

inline std::string Printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then continuation bytes 10xxxxxx.
    size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (!ok) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    uint32_t cp = 0;
    if (n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) {  // C1 control
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
    } else if (n == 3 && Utf8SequenceAt(s, i, &cp) == 3 && IsBidiControl(cp)) {
      out += fmt::format("\\u{:04x}", cp);  // U+202E and the like reorder the line shown
    } else {
      out.append(s.data() + i, n);
    }
    i += n;
  }
  return out;
}

// An error message made safe for a terminal, keeping its own continuation lines: a "\n" followed
// by two spaces stays a line break (a message lists what it tried on indented lines); every other
// control character, a "\n" without the indent included, is escaped as Printable does. So a
// value with a newline can at most add an indented line under the error, never a line that
// reads as a note or another error; code that lists values on such lines passes each value
// through Printable first. Thread-safety: pure function.
inline std::string PrintableMessage(std::string_view s) {
  std::string out;
  size_t at = 0;
  for (size_t nl; (nl = s.find("\n  ", at)) != std::string_view::npos; at = nl + 1) {
    out += Printable(s.substr(at, nl - at));
    out += '\n';
  }
  out += Printable(s.substr(at));
  return out;
}

// Writes "<prefix><Printable(text)>\n" to `out` in one call: a note, warning or error line whose
// text may carry workload strings (pod names and labels from Prometheus or the agent, TF_CONFIG
// values, manifest fields, file names in a log directory), so an ESC or newline in them shows
// as "\x1b" or "\x0a" instead of moving the cursor or forging a line of its own. `prefix` is ours
// ("note: ", "tfdiag attach: warning: ") and written as is. Thread-safety: one stdio call per
// line, so lines from threads do not interleave within a line.
inline void PrintNote(std::string_view prefix, std::string_view text, std::FILE* out = stderr) {
  std::string line(prefix);
  line += Printable(text);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), out);
}

}  // namespace tfdiag
