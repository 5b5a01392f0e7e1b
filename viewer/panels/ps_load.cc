// PS load panel: one bar per PS (its share of all PS busy time), the hot PS in colors::kHot, the
// variables behind each bar, and the worker x PS traffic matrix (cross-task transfers) as a heat
// map when the capture has cross-task edges.
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <map>

#include "core/plural.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

// Distinct, calm colours for variable segments (never kHot).
ImU32 VariableColor(size_t i) {
  static const ImU32 kPalette[] = {
      IM_COL32(0x5B, 0xC0, 0xBE, 0xFF), IM_COL32(0xE0, 0xB0, 0x50, 0xFF),
      IM_COL32(0x9A, 0x7F, 0xD1, 0xFF), IM_COL32(0x7C, 0xC0, 0x60, 0xFF),
      IM_COL32(0xD0, 0x80, 0xB0, 0xFF), IM_COL32(0x70, 0x90, 0xC0, 0xFF),
  };
  return kPalette[i % (sizeof kPalette / sizeof kPalette[0])];
}

// Heat ramp from dark blue to yellow for t in [0, 1].
ImU32 Heat(float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  auto mix = [&](int a, int b) { return static_cast<int>(a + (b - a) * t); };
  return IM_COL32(mix(0x22, 0xF8), mix(0x2A, 0xD0), mix(0x50, 0x40), 0xFF);
}

// Writes on a bar [b0, b1] whose first `fill` pixels are filled: the first of `texts` (longest
// first) that fits after the fill, else inside the bar from its start; clipped to the bar.
void BarText(ImDrawList* dl, ImVec2 b0, ImVec2 b1, float fill,
             std::initializer_list<std::string> texts) {
  const float room = b1.x - b0.x - 12;
  const std::string* pick = nullptr;
  for (const std::string& t : texts) {
    pick = &t;
    if (ImGui::CalcTextSize(t.c_str()).x <= room) break;
  }
  if (pick == nullptr) return;
  float tx = b0.x + fill + 6;
  if (tx + ImGui::CalcTextSize(pick->c_str()).x > b1.x) tx = b0.x + 6;  // inside the bar
  dl->PushClipRect(b0, b1, true);
  dl->AddText(ImVec2(tx, b0.y + 3), IM_COL32(0xFF, 0xFF, 0xFF, 0xFF), pick->c_str());
  dl->PopClipRect();
}

// The top variables behind a PS's bar: up to 4 that round to at least 1% of its op time
// ("embedding/embedding_weights 77%, dense_2/bias 1%"); the rest counted, not listed as "0%"
// (issue 39).
std::string VariablesLine(const TaskStats& t) {
  std::string vars;
  size_t listed = 0;
  for (const VariableLoad& var : t.variables) {
    if (listed == 4 || 100 * var.share < 0.5) break;  // sorted by share, largest first
    vars += fmt::format("{}{} {:.0f}%", listed++ ? ", " : "", var.name, 100 * var.share);
  }
  if (t.variables.empty()) return "(no variables)";
  const size_t rest = t.variables.size() - listed;
  if (rest > 0) {
    vars += fmt::format("{}{} under 1% each", listed ? "; " : "",
                        listed ? fmt::format("{} more", rest) : Count(rest, "variable"));
  }
  return vars;
}

// How the PS a hot-ps finding names is drawn: in its finding's severity colour (a LOW hot-ps is
// no red HOT: issue 46, the panel painted a PS HOT whose hot-ps was LOW), with a tag saying the
// severity.
struct HotLook {
  uint32_t task = kNoIndex;
  ImU32 color = colors::kHot;
  std::string tag;  // "  HOT (HIGH)", "  hot-ps LOW"
};
HotLook HotLookOf(const Snapshot& s) {
  HotLook h;
  const Finding* f = HotPsFinding(s);
  if (f == nullptr) return h;
  h.task = HotPsTask(s);
  // HIGH and CRITICAL in the hot red the panel always used; MEDIUM and LOW in their colours.
  h.color = f->severity >= Severity::kHigh ? colors::kHot : colors::ForSeverity(f->severity);
  std::string sev(SeverityName(f->severity));
  std::transform(sev.begin(), sev.end(), sev.begin(), ::toupper);
  h.tag = f->severity >= Severity::kMedium ? "  HOT (" + sev + ")" : "  " + f->rule_id + " " + sev;
  return h;
}

// Draws one PS's bar, variable strip and top variables; returns true when the bar was clicked.
// The variables line is added to `figures` (ViewState::figures).
bool PsBar(const TaskStats& t, const PsBytes* measured, const HotLook& look, bool focus,
           float bar_w, std::vector<std::string>* figures) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = 20, label_w = 70;
  const bool hot = t.task == look.task;
  const std::string tag = hot ? look.tag : "";
  dl->AddText(ImVec2(p.x, p.y + 3), hot ? look.color : IM_COL32(0xE0, 0xE0, 0xE0, 0xFF),
              t.label.c_str());
  ImVec2 b0(p.x + label_w, p.y), b1(p.x + label_w + bar_w, p.y + h);
  dl->AddRectFilled(b0, b1, IM_COL32(0x2A, 0x2D, 0x35, 0xFF));
  float fill = static_cast<float>(std::clamp(t.ps_share, 0.0, 1.0)) * bar_w;
  dl->AddRectFilled(b0, ImVec2(b0.x + std::max(fill, 1.0f), b1.y),
                    hot ? look.color : colors::kPsBar);
  if (focus)
    dl->AddRect(ImVec2(b0.x - 2, b0.y - 2), ImVec2(b1.x + 2, b1.y + 2), colors::kFocus, 0, 0, 2);
  const std::string text =
      fmt::format("{:.1f}% of PS busy time, {} transfers{}", 100 * t.ps_share, t.edges_out, tag);
  figures->push_back("bar " + t.label + ": " + text);
  BarText(dl, b0, b1, fill,
          {text, fmt::format("{:.1f}% of PS busy time{}", 100 * t.ps_share, tag),
           fmt::format("{:.1f}%{}", 100 * t.ps_share, tag)});
  ImGui::Dummy(ImVec2(label_w + bar_w, h));
  bool clicked = ImGui::IsItemClicked();
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip(
        "%s: busy %s (%.1f%% of the span), %s summed op time\n%lld transfers "
        "served (%lld tensors, %s), %lld received",
        t.label.c_str(), FormatNs(static_cast<double>(t.busy_ns)).c_str(), t.busy_pct,
        FormatNs(static_cast<double>(t.op_time_ns)).c_str(), static_cast<long long>(t.edges_out),
        static_cast<long long>(t.tensors_out),
        FormatBytes(static_cast<double>(t.bytes_out)).c_str(), static_cast<long long>(t.edges_in));
  }
  if (measured) {
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + label_w);
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("measured: %s received, %s sent (%.0f%% of PS bytes)",
                        FormatBytes(static_cast<double>(measured->received)).c_str(),
                        FormatBytes(static_cast<double>(measured->sent)).c_str(),
                        100 * measured->share);
    ImGui::PopTextWrapPos();
  }
  // The variables behind the bar: a stacked strip of their shares of the PS's op time.
  ImVec2 q = ImGui::GetCursorScreenPos();
  float x = q.x + label_w;
  for (size_t i = 0; i < t.variables.size(); ++i) {
    float w = static_cast<float>(t.variables[i].share) * bar_w;
    if (w < 0.5f) continue;
    dl->AddRectFilled(ImVec2(x, q.y), ImVec2(x + w, q.y + 6), VariableColor(i));
    x += w;
  }
  ImGui::Dummy(ImVec2(label_w + bar_w, 7));
  const std::string vars = VariablesLine(t);
  figures->push_back(t.label + ": " + vars);
  ImGui::SetCursorPosX(ImGui::GetCursorPosX() + label_w);
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", vars.c_str());
  ImGui::PopTextWrapPos();
  return clicked;
}

void Variables(const TaskStats& t) {
  if (t.variables.empty()) return;
  std::string id = fmt::format("variables of {} ({})", t.label, t.variables.size());
  if (!ImGui::TreeNode(id.c_str())) return;
  if (ImGui::BeginTable("##vars", 4, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
    ImGui::TableSetupColumn("variable", ImGuiTableColumnFlags_WidthStretch);
    ImGui::TableSetupColumn("ops");
    ImGui::TableSetupColumn("op time");
    ImGui::TableSetupColumn("size");
    ImGui::TableHeadersRow();
    for (size_t i = 0; i < t.variables.size(); ++i) {
      const VariableLoad& v = t.variables[i];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(VariableColor(i)), "%s", v.name.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(v.ops));
      ImGui::TableNextColumn();
      ImGui::Text("%s (%.0f%%)", FormatNs(static_cast<double>(v.total_ns)).c_str(), 100 * v.share);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(FormatBytes(static_cast<double>(v.bytes)).c_str());
    }
    ImGui::EndTable();
  }
  ImGui::TreePop();
}

// One cell of the worker x PS matrix.
struct Cell {
  double value = 0;    // what the colour shows (ViewState::Matrix::value)
  int64_t bytes = -1;  // -1 unknown
  int64_t transfers = -1;
  double busy_ns = -1;  // the PS's busy time split by its transfers; -1 unknown
};

// Worker x PS traffic: measured bytes (eBPF traffic probe) when the bundle has them, else from
// the timeline's cross-task transfers: their tensor bytes when every size is known, else each
// PS's busy time split over the workers by their share of its transfers. Transfer counts alone
// mislead: every worker fetches every variable once a step, so a hot PS serves as many tensors
// as a cold one, only bigger or slower ones.
void TrafficMatrix(const Snapshot& s, ViewState* v) {
  const Capture& c = s.capture;
  std::vector<uint32_t> ps, workers;
  std::map<std::pair<uint32_t, uint32_t>, Cell> cells;  // (worker, ps)
  const bool measured = s.analysis.traffic.has_traffic && !s.analysis.traffic.matrix.empty();
  bool all_sized = !measured;  // timeline edges: every one has its bytes
  const char* value = "bytes";
  if (measured) {
    for (const TrafficCell& t : s.analysis.traffic.matrix) {
      Cell& cell = cells[{t.worker, t.ps}];
      cell.bytes = t.to_ps + t.from_ps;
      cell.value = static_cast<double>(cell.bytes);
    }
  } else {
    for (const EdgeRow& e : c.edges) {
      bool src_ps = c.tasks[e.src_task].kind == JobKind::kPs;
      if (src_ps == (c.tasks[e.dst_task].kind == JobKind::kPs)) continue;
      Cell& cell = cells[src_ps ? std::make_pair(e.dst_task, e.src_task)
                                : std::make_pair(e.src_task, e.dst_task)];
      cell.transfers = std::max<int64_t>(cell.transfers, 0) + e.count;
      if (e.bytes >= 0) cell.bytes = std::max<int64_t>(cell.bytes, 0) + e.bytes;
      all_sized = all_sized && e.bytes >= 0;
    }
    // Tensor bytes when the timeline gives every transfer's size: a hot PS moves more bytes,
    // not necessarily more tensors. Else the PS's busy time, split by transfers.
    std::map<uint32_t, int64_t> ps_transfers;
    std::map<uint32_t, double> ps_busy;
    for (const auto& [key, cell] : cells) ps_transfers[key.second] += cell.transfers;
    for (const TaskStats& t : s.analysis.stats.tasks) {
      if (t.kind == JobKind::kPs && t.busy_ns > 0) ps_busy[t.task] = static_cast<double>(t.busy_ns);
    }
    const bool busy_known = !all_sized && !ps_busy.empty();
    value = all_sized ? "bytes" : busy_known ? "busy" : "transfers";
    for (auto& [key, cell] : cells) {
      auto busy = ps_busy.find(key.second);
      if (busy_known && busy != ps_busy.end() && ps_transfers[key.second] > 0) {
        cell.busy_ns = busy->second * static_cast<double>(cell.transfers) /
                       static_cast<double>(ps_transfers[key.second]);
      }
      cell.value = all_sized    ? static_cast<double>(cell.bytes)
                   : busy_known ? std::max(cell.busy_ns, 0.0)
                                : static_cast<double>(cell.transfers);
    }
  }
  double max_value = 0;
  for (const auto& [key, cell] : cells) {
    max_value = std::max(max_value, cell.value);
    if (std::find(workers.begin(), workers.end(), key.first) == workers.end()) {
      workers.push_back(key.first);
    }
    if (std::find(ps.begin(), ps.end(), key.second) == ps.end()) ps.push_back(key.second);
  }
  if (cells.empty()) return;
  std::sort(ps.begin(), ps.end());
  std::sort(workers.begin(), workers.end());
  ImGui::Separator();
  const std::string_view what = value;
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", measured ? "Traffic, worker (row) x PS (column): bytes measured (eBPF)"
                            : all_sized      ? "Traffic, worker (row) x PS (column): tensor bytes"
                            : what == "busy" ? "Worker (row) x PS (column): PS busy time, split by "
                                               "transfers (tensor sizes unknown)"
                                             : "Worker (row) x PS (column): cross-task transfers");
  ImGui::PopTextWrapPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 p = ImGui::GetCursorScreenPos();
  const float label_w = 80;
  float avail_w = ImGui::GetContentRegionAvail().x - label_w;
  float cw = std::clamp(avail_w / static_cast<float>(ps.size()), 8.0f, 84.0f);
  float ch = std::clamp(ImGui::GetContentRegionAvail().y / (workers.size() + 2.0f), 4.0f, 14.0f);
  for (size_t j = 0; j < ps.size(); ++j) {
    std::string_view l = c.TaskLabelOf(ps[j]);
    dl->AddText(ImVec2(p.x + label_w + j * cw + 2, p.y), IM_COL32(0xC0, 0xC0, 0xC0, 0xFF), l.data(),
                l.data() + l.size());
  }
  float y = p.y + ImGui::GetTextLineHeight() + 2;
  v->matrix = {p.x + label_w, y, cw, ch, workers, ps, measured, value, {}};
  ImGuiIO& io = ImGui::GetIO();
  for (uint32_t w : workers) {
    std::string_view l = c.TaskLabelOf(w);
    if (ch >= 10) {
      dl->AddText(ImVec2(p.x, y - 2), IM_COL32(0xC0, 0xC0, 0xC0, 0xFF), l.data(),
                  l.data() + l.size());
    }
    for (size_t j = 0; j < ps.size(); ++j) {
      auto it = cells.find({w, ps[j]});
      const Cell cell = it == cells.end() ? Cell{} : it->second;
      v->matrix.values.push_back(cell.value);
      ImVec2 a(p.x + label_w + j * cw, y), b(a.x + cw - 1, y + ch - 1);
      dl->AddRectFilled(a, b,
                        cell.value > 0 ? Heat(static_cast<float>(cell.value / max_value))
                                       : IM_COL32(0x20, 0x22, 0x28, 0xFF));
      if (measured && cell.bytes > 0 && cw >= 56 && ch >= 13) {  // the bytes, where they fit
        std::string b = FormatBytes(static_cast<double>(cell.bytes));
        bool bright = cell.value / max_value > 0.5;
        dl->AddText(ImVec2(a.x + 3, a.y),
                    bright ? IM_COL32(0x10, 0x10, 0x10, 0xFF) : IM_COL32(0xE0, 0xE0, 0xE0, 0xFF),
                    b.c_str());
      }
      if (ImGui::IsWindowHovered() && io.MousePos.x >= a.x && io.MousePos.x < b.x &&
          io.MousePos.y >= a.y && io.MousePos.y < b.y) {
        std::string what = measured
                               ? FormatBytes(static_cast<double>(cell.bytes))
                               : fmt::format("{} transfers", std::max<int64_t>(cell.transfers, 0));
        if (!measured && cell.bytes >= 0)
          what += ", " + FormatBytes(static_cast<double>(cell.bytes));
        if (cell.busy_ns >= 0)
          what += fmt::format(", ~{} of the PS's busy time", FormatNs(cell.busy_ns));
        ImGui::SetTooltip("%.*s <-> %.*s: %s", static_cast<int>(l.size()), l.data(),
                          static_cast<int>(c.TaskLabelOf(ps[j]).size()),
                          c.TaskLabelOf(ps[j]).data(), what.c_str());
      }
    }
    y += ch;
  }
  ImGui::Dummy(ImVec2(label_w + cw * ps.size(), y - p.y));
}

// One bar of a bundle's PS (no timeline): `share` of the width filled, the first of `texts`
// that fits on it (see BarText); focuses the task when clicked.
void ShareBar(ViewState* v, uint32_t task, std::string_view label, double share,
              std::initializer_list<std::string> texts, const HotLook& look, float bar_w) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 o = ImGui::GetCursorScreenPos();
  const bool hot = task == look.task;
  float fill = static_cast<float>(std::clamp(share, 0.0, 1.0)) * bar_w;
  if (texts.size() > 0) v->figures.push_back("bar " + std::string(label) + ": " + *texts.begin());
  dl->AddText(ImVec2(o.x, o.y + 3), hot ? look.color : IM_COL32(0xE0, 0xE0, 0xE0, 0xFF),
              label.data(), label.data() + label.size());
  dl->AddRectFilled(ImVec2(o.x + 70, o.y), ImVec2(o.x + 70 + bar_w, o.y + 20),
                    IM_COL32(0x2A, 0x2D, 0x35, 0xFF));
  dl->AddRectFilled(ImVec2(o.x + 70, o.y), ImVec2(o.x + 70 + std::max(fill, 1.0f), o.y + 20),
                    hot ? look.color : colors::kPsBar);
  if (task == v->focus_task) {
    dl->AddRect(ImVec2(o.x + 68, o.y - 2), ImVec2(o.x + 72 + bar_w, o.y + 22), colors::kFocus, 0, 0,
                2);
  }
  BarText(dl, ImVec2(o.x + 70, o.y), ImVec2(o.x + 70 + bar_w, o.y + 20), 0, texts);
  ImGui::PushID(static_cast<int>(task));
  ImGui::Dummy(ImVec2(70 + bar_w, 24));
  if (ImGui::IsItemClicked()) FocusTask(v, task);
  ImGui::PopID();
}

// Bundles with the eBPF traffic probe: one bar per PS, its share of all bytes to and from PS.
void MeasuredBytesBars(const Snapshot& s, ViewState* v, const HotLook& hot) {
  // A bundle recorded without the traffic probe has no bytes: no heading promising them.
  if (!s.analysis.traffic.has_traffic || s.analysis.traffic.ps.empty()) return;
  const std::string head =
      fmt::format("Measured (eBPF) over {:.1f} s: bar = share of all bytes to and from PS",
                  s.analysis.traffic.window_s);
  v->figures.push_back(head);
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", head.c_str());
  ImGui::PopTextWrapPos();
  float bar_w = std::max(ImGui::GetContentRegionAvail().x - 80, 60.0f);
  for (const PsBytes& b : s.analysis.traffic.ps) {
    const std::string hot_tag = b.task == hot.task ? hot.tag : "";
    ShareBar(v, b.task, s.capture.TaskLabelOf(b.task), b.share,
             {fmt::format("{:.1f}%: {} received, {} sent{}", 100 * b.share,
                          FormatBytes(static_cast<double>(b.received)),
                          FormatBytes(static_cast<double>(b.sent)), hot_tag),
              fmt::format("{:.1f}%: {} received{}", 100 * b.share,
                          FormatBytes(static_cast<double>(b.received)), hot_tag),
              fmt::format("{:.1f}%{}", 100 * b.share, hot_tag)},
             hot, bar_w);
  }
}

// Bundles with PS processes: one bar per PS process, its share of the CPU all PS used.
void CpuShareBars(const Snapshot& s, ViewState* v, const HotLook& hot) {
  double total = 0;
  for (const ProcessStats& p : s.analysis.processes) {
    if (p.kind == JobKind::kPs) total += p.cpu_cores;
  }
  if (total <= 0) return;
  const char* head = "No timeline: bar = share of the CPU used by all PS processes";
  v->figures.push_back(head);
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%s", head);
  ImGui::PopTextWrapPos();
  float bar_w = std::max(ImGui::GetContentRegionAvail().x - 80, 60.0f);
  for (const ProcessStats& p : s.analysis.processes) {
    if (p.kind != JobKind::kPs) continue;
    uint32_t task = s.capture.processes[p.process].task;
    ShareBar(v, task, p.task, p.cpu_cores / total,
             {fmt::format("{:.2f} CPUs used{}", p.cpu_cores, task == hot.task ? hot.tag : "")}, hot,
             bar_w);
  }
}

}  // namespace

void DrawPsLoadPanel(const Snapshot& s, ViewState* v) {
  const TaskStatsTable& st = s.analysis.stats;
  if (st.num_ps == 0) {
    ImGui::TextDisabled("No PS tasks in this capture.");
    return;
  }
  const HotLook hot = HotLookOf(s);
  if (st.ps_busy_total_ns == 0 &&
      (!s.analysis.processes.empty() || !s.analysis.traffic.ps.empty())) {
    MeasuredBytesBars(s, v, hot);
    CpuShareBars(s, v, hot);
    TrafficMatrix(s, v);
    return;
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextDisabled("%d PS, %s of PS busy time in all; bar: share of it", st.num_ps,
                      FormatNs(static_cast<double>(st.ps_busy_total_ns)).c_str());
  ImGui::PopTextWrapPos();
  float bar_w = std::max(ImGui::GetContentRegionAvail().x - 80, 60.0f);
  for (const TaskStats& t : st.tasks) {
    if (t.kind != JobKind::kPs) continue;
    ImGui::PushID(static_cast<int>(t.task));
    const PsBytes* measured = nullptr;
    for (const PsBytes& b : s.analysis.traffic.ps) {
      if (b.task == t.task) measured = &b;
    }
    if (PsBar(t, measured, hot, t.task == v->focus_task, bar_w, &v->figures)) {
      FocusTask(v, t.task);
    }
    ImGui::PopID();
  }
  // The heat map before the (collapsed) variable lists, so that it is in view without scrolling.
  TrafficMatrix(s, v);
  for (const TaskStats& t : st.tasks) {
    if (t.kind == JobKind::kPs) Variables(t);
  }
}

}  // namespace tfdiag::view
