// A plain text table with aligned columns, for the text report.
// Thread-safety: plain value.
#pragma once

#include <string>
#include <vector>

#include "core/duration.h"

namespace tfdiag {

class TextTable {
 public:
  // Column headers; a header starting with '>' is right-aligned (numbers), the '>' is dropped.
  explicit TextTable(std::vector<std::string> headers);
  // Cells pass through Printable() (core/escape.h): no control characters reach a terminal.
  void AddRow(std::vector<std::string> cells);
  // Renders with two spaces between columns and `indent` spaces before each line.
  std::string Render(int indent = 2) const;
  bool empty() const { return rows_.empty(); }

 private:
  std::vector<std::string> headers_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// FormatDuration(ns): core/duration.h, shared with the analyzers' summaries.
// Human formatting of bytes with SI prefixes (as MB/s in summaries): "512 B", "1.5 kB",
// "3.2 MB", "1.10 GB".
std::string FormatBytes(double bytes);

}  // namespace tfdiag
