#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/escape.h"

namespace tfdiag {

TextTable::TextTable(std::vector<std::string> headers) {
  for (std::string& h : headers) {
    bool right = !h.empty() && h[0] == '>';
    right_.push_back(right);
    headers_.push_back(right ? h.substr(1) : h);
  }
}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  for (std::string& c : cells) c = Printable(c);  // pod and task names come from workloads
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render(int indent) const {
  std::vector<size_t> width(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) width[i] = headers_[i].size();
  for (const auto& r : rows_) {
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l(static_cast<size_t>(indent), ' ');
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) l += "  ";
      l += right_[i] ? fmt::format("{:>{}}", cells[i], width[i])
                     : fmt::format("{:<{}}", cells[i], width[i]);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(headers_);
  for (const auto& r : rows_) line(r);
  return out;
}

std::string FormatBytes(double b) {
  // SI prefixes, as the summaries' MB and MB/s.
  if (b < 1000) return fmt::format("{:.0f} B", b);
  if (b < 1e6) return fmt::format("{:.1f} kB", b / 1e3);
  if (b < 1e9) return fmt::format("{:.1f} MB", b / 1e6);
  return fmt::format("{:.2f} GB", b / 1e9);
}

}  // namespace tfdiag
