// Word wrapping for the text outputs (issue 39: a finding's summary, impact and fix ran to 493
// columns on one line). Thread-safety: pure functions.
#pragma once

#include <cctype>
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

// True when the line may not break after `word`: a bare dash, arrow or operator ("-", "->",
// "=", "+") belongs to the word after it ("see: - https://..." must not leave the URL alone on
// the next line, nor "- " at the end of this one).
inline bool BindsToNext(std::string_view word) {
  return !word.empty() && word.size() <= 2 &&
         word.find_first_not_of("-=+>|&*/:") == std::string_view::npos;
}

// True for a unit that must stay on the line of the number before it ("25.2 ms", "3 MB").
inline bool IsUnitWord(std::string_view w) {
  while (!w.empty() && (w.back() == ',' || w.back() == ';' || w.back() == ')' || w.back() == '.'))
    w.remove_suffix(1);
  for (std::string_view u : {"ns", "us", "ms", "s", "min", "h", "B", "KB", "MB", "GB", "KiB", "MiB",
                             "GiB", "CPU", "CPUs", "cores", "%"}) {
    if (w == u) return true;
  }
  return false;
}

// `text` wrapped at `width` columns (0: never wrapped), each line ending in '\n': the first line
// starts with `first`, the others with `rest` (a hanging indent). Breaks only at spaces, so a word
// longer than the line (a path, a URL) stays whole on a line of its own; spaces within a line are
// kept as written; a '\n' in `text` starts a new line (with `rest`). Empty text gives `first`.
// Code is never broken mid-expression, so that it can be copied (issue 48): no break inside
// `backticks`, nor inside a bracket that opens right after a word character (a call's
// `f(a, b)`, an index or shape `x[0, 1]`, a flow mapping `env={a: 1}`), nor after a bare dash or
// operator (BindsToNext), nor between a number and its unit (IsUnitWord); such a span longer than
// the line runs past it, as a long URL does.
inline std::string WrapText(std::string_view text, size_t width, std::string_view first,
                            std::string_view rest) {
  std::string out(first);
  size_t col = TextColumns(first);
  bool fresh = true;  // nothing but the indent on the current line yet
  size_t gap = 0;     // spaces written between the previous word and the next
  size_t pos = 0;
  int code = 0;              // brackets of code open (opened right after a non-space character)
  bool quoted = false;       // inside `...`
  bool bind = false;         // the previous word binds to this one
  bool after_digit = false;  // the previous word ends in a digit (a unit may follow)
  std::string brackets;      // the open brackets, innermost last: 'c' code, 'p' prose
  size_t held_from = 0;      // where the code or quote now open began (bytes of `text`)
  while (pos < text.size()) {
    if (text[pos] == '\n') {
      out += '\n';
      out += rest;
      col = TextColumns(rest), fresh = true, gap = 0, ++pos;
      code = 0, quoted = false, bind = false, brackets.clear();
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
    // An unclosed bracket or backtick (prose, not code) holds the line for at most 300 bytes.
    if ((code > 0 || quoted) && pos > held_from + 300) code = 0, quoted = false, brackets.clear();
    if (code == 0 && !quoted) held_from = pos;
    const bool unit = after_digit && IsUnitWord(word);
    const bool may_break = code == 0 && !quoted && !bind && !unit;
    if (!fresh && width > 0 && col + gap + w > width && may_break) {
      out += '\n';
      out += rest;
      col = TextColumns(rest);
    } else if (!fresh) {
      out.append(gap, ' '), col += gap;
    }
    out += word, col += w, fresh = false;
    for (size_t i = 0; i < word.size(); ++i) {
      const char c = word[i];
      if (c == '`') {
        quoted = !quoted;
      } else if (c == '(' || c == '[' || c == '{') {
        const bool after_word = i > 0 && word[i - 1] != '`';
        brackets += after_word ? 'c' : 'p';
        code += after_word;
      } else if ((c == ')' || c == ']' || c == '}') && !brackets.empty()) {
        code -= brackets.back() == 'c';
        brackets.pop_back();
      }
    }
    bind = BindsToNext(word);
    after_digit = !word.empty() && std::isdigit(static_cast<unsigned char>(word.back()));
    pos = end;
    for (gap = 0; pos < text.size() && text[pos] == ' '; ++pos) ++gap;
  }
  out += '\n';
  return out;
}

}  // namespace tfdiag
