// Word wrapping for the text outputs (issue 39: a finding's summary, impact and fix ran to 493
// columns on one line). Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace tfdiag {

// Where the text report wraps its prose (summaries, impact, fix, waits, notes) on a terminal
// (TextReportOptions::width): docs/report.md.
constexpr size_t kProseColumns = 100;

// Columns `s` takes on a terminal: UTF-8 code points (continuation bytes not counted).
inline size_t TextColumns(std::string_view s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// `text` wrapped at `width` columns (0: never wrapped), each line ending in '\n': the first line
// starts with `first`, the others with `rest` (a hanging indent). Breaks only at spaces, so a word
// longer than the line (a path, a URL) stays whole on a line of its own; spaces within a line are
// kept as written; a '\n' in `text` starts a new line (with `rest`). Empty text gives `first`.
inline std::string WrapText(std::string_view text, size_t width, std::string_view first,
                            std::string_view rest) {
  std::string out(first);
  size_t col = TextColumns(first);
  bool fresh = true;  // nothing but the indent on the current line yet
  size_t gap = 0;     // spaces written between the previous word and the next
  size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '\n') {
      out += '\n';
      out += rest;
      col = TextColumns(rest), fresh = true, gap = 0, ++pos;
      continue;
    }
    if (text[pos] == ' ' && fresh) {  // leading spaces of a line: kept
      out += ' ', ++col, ++pos;
      continue;
    }
    size_t end = text.find_first_of(" \n", pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    const size_t w = TextColumns(word);
    if (!fresh && width > 0 && col + gap + w > width) {
      out += '\n';
      out += rest;
      col = TextColumns(rest);
    } else if (!fresh) {
      out.append(gap, ' '), col += gap;
    }
    out += word, col += w, fresh = false;
    pos = end;
    for (gap = 0; pos < text.size() && text[pos] == ' '; ++pos) ++gap;
  }
  out += '\n';
  return out;
}

}  // namespace tfdiag
