// Helpers shared by the panels: colours, number formatting, selection.
#include <fmt/format.h>

#include <cmath>

#include "core/duration.h"
#include "report/table.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace colors {

ImU32 ForKind(OpKind kind) {
  switch (kind) {
    case OpKind::kCompute:
      return IM_COL32(0x4C, 0x8B, 0xF5, 0xFF);  // blue
    case OpKind::kComm:
      return IM_COL32(0xF5, 0xA6, 0x23, 0xFF);  // orange
    case OpKind::kInput:
      return IM_COL32(0x3C, 0xB3, 0x71, 0xFF);  // green
    case OpKind::kApply:
      return IM_COL32(0xB0, 0x6B, 0xE0, 0xFF);  // purple
    default:
      return IM_COL32(0x80, 0x80, 0x88, 0xFF);  // grey
  }
}

ImU32 ForSeverity(tfdiag::Severity s) {
  switch (s) {
    case tfdiag::Severity::kCritical:
      return IM_COL32(0xFF, 0x55, 0x77, 0xFF);
    case tfdiag::Severity::kHigh:
      return IM_COL32(0xFF, 0x80, 0x50, 0xFF);
    case tfdiag::Severity::kMedium:
      return IM_COL32(0xF0, 0xC0, 0x40, 0xFF);
    case tfdiag::Severity::kLow:
      return IM_COL32(0x70, 0xB0, 0xF0, 0xFF);
    default:
      return IM_COL32(0xA0, 0xA0, 0xA0, 0xFF);
  }
}

}  // namespace colors

std::string OrDash(double v, const std::string& known) { return v < 0 ? "-" : known; }

// As the text report writes durations (core/duration.h): "2220.00 s", never "2.22e+03 s".
std::string FormatNs(double ns) {
  if (ns < 0) return "-";  // unknown (-1), never a negative duration
  return FormatDuration(ns);
}

// As the text report writes sizes (report/table.h: SI prefixes, "74.2 MB"), so a figure reads
// the same in both.
std::string FormatBytes(double b) { return b < 0 ? "-" : tfdiag::FormatBytes(b); }

std::string DeviceLabel(const Capture& c, uint32_t device) {
  const DeviceRow& d = c.devices[device];
  std::string s = fmt::format("{}:{}", c.Str(d.type), d.index);
  if (!c.Str(d.sub).empty()) s += fmt::format(" {}", c.Str(d.sub));
  return s;
}

void FocusTask(ViewState* v, uint32_t task) {
  v->focus_task = task;
  v->scroll_to_focus = task != kNoIndex;
}

void SelectFinding(const Snapshot& s, ViewState* v, int index) {
  const auto& findings = s.analysis.findings;
  if (index < 0 || index >= static_cast<int>(findings.size())) {
    v->selected = -1;
    v->focus_task = kNoIndex;
    v->focus_start = v->focus_end = 0;
    return;
  }
  v->selected = index;
  const Finding& f = findings[index];
  std::string task = !f.task.empty() ? f.task : f.subject_kind == "task" ? f.subject : "";
  FocusTask(v, task.empty() ? kNoIndex : s.capture.FindTask(task));
  v->focus_start = f.range_start;
  v->focus_end = f.range_end;
  if (f.range_end > f.range_start) {
    // Zoom to the evidence, with a margin so its edges are visible.
    double pad = 0.04 * static_cast<double>(f.range_end - f.range_start);
    v->view_start = static_cast<double>(f.range_start - s.capture.start) - pad;
    v->view_end = static_cast<double>(f.range_end - s.capture.start) + pad;
  }
}

const Finding* HotPsFinding(const Snapshot& s) {
  // hot-ps from timelines; ps-cpu-imbalance is its counterpart from a bundle's CPU samples.
  for (const char* rule : {"hot-ps", "ps-cpu-imbalance"}) {
    for (const Finding& f : s.analysis.findings) {
      if (f.rule_id == rule) return &f;
    }
  }
  return nullptr;
}

uint32_t HotPsTask(const Snapshot& s) {
  const Finding* f = HotPsFinding(s);
  return f == nullptr ? kNoIndex : s.capture.FindTask(f->task.empty() ? f->subject : f->task);
}

}  // namespace tfdiag::view
