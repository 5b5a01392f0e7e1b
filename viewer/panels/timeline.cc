// Timeline panel: one row per task, device and lane, grouped by job (PS first); ops coloured by
// kind; zoom (wheel, W/S), pan (drag, A/D, arrows), fit (F); hover tooltips; step boundaries;
// a time ruler; DataFlow arrows on demand.
//
// Level of detail (after Tracy's zone drawing): an op narrower than a pixel is merged with its
// neighbours into one block, and the ops inside a block are skipped by binary search on the
// row's running max of op ends (TimelineIndex::max_end), so a frame costs O(rows x pixels x
// log ops) however many ops the capture has.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/escape.h"
#include "viewer/panels/timeline_view.h"

namespace tfdiag::view {

namespace {

constexpr float kHeaderH = 18;       // a job's header
constexpr float kTaskGap = 4;        // between tasks of a job
constexpr float kMinOpPx = 1.0f;     // narrower ops are merged
constexpr float kMergeGapPx = 2.0f;  // ...with neighbours closer than this
constexpr float kMinStepPx = 8.0f;   // step lines closer than this are thinned out
constexpr double kMinSpanNs = 200;

// Row positions of the current snapshot, recomputed per frame (O(rows)).
struct Layout {
  std::vector<float> row_y;  // top of each row, relative to the content top
  struct Header {
    float y;
    StrId job;
    int tasks;
  };
  std::vector<Header> headers;
  float height = 0;
};

Layout MakeLayout(const Snapshot& s) {
  const Capture& c = s.capture;
  const auto& rows = s.timeline.rows;
  Layout l;
  l.row_y.resize(rows.size());
  float y = 0;
  uint32_t prev_task = kNoIndex;
  for (size_t r = 0; r < rows.size(); ++r) {
    uint32_t task = rows[r].task;
    if (prev_task == kNoIndex || c.tasks[task].job != c.tasks[prev_task].job) {
      l.headers.push_back({y, c.tasks[task].job, 0});
      y += kHeaderH;
    } else if (task != prev_task) {
      y += kTaskGap;
    }
    if (task != prev_task) ++l.headers.back().tasks;
    prev_task = task;
    l.row_y[r] = y;
    y += kRowH;
  }
  l.height = y + kRowH;
  return l;
}

ImU32 Darker(ImU32 c, float f) {
  auto ch = [&](int shift) { return static_cast<ImU32>(((c >> shift) & 0xFF) * f) << shift; };
  return ch(IM_COL32_R_SHIFT) | ch(IM_COL32_G_SHIFT) | ch(IM_COL32_B_SHIFT) | (c & IM_COL32_A_MASK);
}

// A "nice" tick step (1, 2, 5 x 10^k ns) of at least `min_ns`.
double TickStep(double min_ns) {
  double p = std::pow(10.0, std::floor(std::log10(std::max(min_ns, 1.0))));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= min_ns) return m * p;
  }
  return 10 * p;
}

std::string TickLabel(double rel_ns, double step) {
  const char* unit = "ns";
  double div = 1;
  if (step >= 1e8) {
    unit = "s", div = 1e9;
  } else if (step >= 1e5) {
    unit = "ms", div = 1e6;
  } else if (step >= 1e2) {
    unit = "us", div = 1e3;
  }
  double v = rel_ns / div, st = step / div;
  int decimals = st >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(st) - 1e-9));
  return fmt::format("{:.{}f} {}", v, std::min(decimals, 6), unit);
}

void Zoom(ViewState* v, double factor, double anchor_ns, double max_span) {
  double span = std::clamp((v->view_end - v->view_start) * factor, kMinSpanNs, max_span);
  double a = (anchor_ns - v->view_start) / (v->view_end - v->view_start);
  v->view_start = anchor_ns - a * span;
  v->view_end = v->view_start + span;
}

void DrawRuler(const View& vw, ImDrawList* dl, ImVec2 p0, float h) {
  dl->AddRectFilled(p0, ImVec2(vw.x0 + vw.w, p0.y + h), IM_COL32(0x24, 0x26, 0x2C, 0xFF));
  double step = TickStep(vw.NsPerPx() * 90);
  double first = std::ceil(vw.start / step) * step;
  for (double rel = first; rel <= vw.end; rel += step) {
    float x = vw.XRel(rel);
    dl->AddLine(ImVec2(x, p0.y + h - 8), ImVec2(x, p0.y + h), IM_COL32(0xC0, 0xC0, 0xC0, 0xFF));
    for (int m = 1; m < 5; ++m) {
      float xm = vw.XRel(rel + m * step / 5);
      dl->AddLine(ImVec2(xm, p0.y + h - 3), ImVec2(xm, p0.y + h), IM_COL32(0x90, 0x90, 0x90, 0xFF));
    }
    if (std::fabs(rel) < step * 1e-6) rel = 0;  // no "-0"
    std::string label = (rel < 0 ? "-" : "+") + TickLabel(std::fabs(rel), step);
    // Right of its tick, or left of it when it would run past the track (the panel cut it off).
    float tw = ImGui::CalcTextSize(label.c_str()).x;
    float tx = x + 3 + tw <= vw.x0 + vw.w ? x + 3 : x - 3 - tw;
    dl->AddText(ImVec2(tx, p0.y + 2), IM_COL32(0xD0, 0xD0, 0xD0, 0xFF), label.c_str());
  }
}

// Draws one row's ops with level of detail.
void DrawRowOps(const Snapshot& s, const TimelineRow& row, const View& vw, ImDrawList* dl, float y0,
                float y1) {
  const Capture& c = s.capture;
  const TimelineIndex& ix = s.timeline;
  const TimeNs* me = ix.max_end.data();
  const float left = vw.x0, right = vw.x0 + vw.w;
  const TimeNs t_lo = vw.origin + static_cast<TimeNs>(std::floor(vw.start));
  const TimeNs t_hi = vw.origin + static_cast<TimeNs>(std::ceil(vw.end));
  uint32_t k = static_cast<uint32_t>(std::upper_bound(me + row.begin, me + row.end, t_lo) - me);
  while (k < row.end) {
    const OpRow& op = c.ops.plain()[ix.order[k]];
    if (op.start > t_hi) break;
    float x0 = vw.X(op.start), x1 = vw.X(op.end());
    OpKind kind = ix.kinds[ix.order[k]];
    if (x1 - x0 >= kMinOpPx) {
      float a = std::max(x0, left), b = std::min(x1, right);
      dl->AddRectFilled(ImVec2(a, y0), ImVec2(b, y1), colors::ForKind(kind));
      if (b - a > 40) {
        std::string_view name = c.Str(c.OpName(op));
        ImVec4 clip(a + 2, y0, b - 2, y1);
        dl->AddText(nullptr, 0, ImVec2(a + 3, y0), IM_COL32(0x10, 0x10, 0x10, 0xFF), name.data(),
                    name.data() + name.size(), 0, &clip);
      }
      ++k;
      continue;
    }
    // A block of sub-pixel ops: extend it while the next op that reaches past its right edge
    // starts within a pixel of it and is itself narrow; skip everything in between.
    float rx0 = x0, rx1 = std::max(x1, x0 + 1);
    int votes[static_cast<int>(OpKind::kCount)] = {0};
    ++votes[static_cast<int>(kind)];
    ++k;
    while (k < row.end && rx1 < right) {
      TimeNs t_next = vw.T(rx1 + kMergeGapPx);
      k = static_cast<uint32_t>(std::lower_bound(me + k, me + row.end, t_next) - me);
      if (k >= row.end) break;
      const OpRow& nx = c.ops.plain()[ix.order[k]];
      float nx0 = vw.X(nx.start), nx1 = vw.X(nx.end());
      if (nx0 > rx1 + kMergeGapPx || nx1 - nx0 >= kMinOpPx) break;
      ++votes[static_cast<int>(ix.kinds[ix.order[k]])];
      rx1 = std::max(nx1, rx1 + kMergeGapPx);
      ++k;
    }
    int best = static_cast<int>(std::max_element(votes, votes + 5) - votes);
    dl->AddRectFilled(ImVec2(std::max(rx0, left), y0 + 1), ImVec2(std::min(rx1, right), y1 - 1),
                      Darker(colors::ForKind(static_cast<OpKind>(best)), 0.8f));
  }
}

// The op of `row` under time t (within `tol` ns), preferring the shortest.
const OpRow* OpAt(const Snapshot& s, const TimelineRow& row, TimeNs t, TimeNs tol) {
  const Capture& c = s.capture;
  const TimeNs* me = s.timeline.max_end.data();
  TimeNs lo = t - tol, hi = t + tol;
  uint32_t k = static_cast<uint32_t>(std::lower_bound(me + row.begin, me + row.end, lo) - me);
  const OpRow* best = nullptr;
  for (int n = 0; k < row.end && n < 256; ++k, ++n) {
    const OpRow& op = c.ops.plain()[s.timeline.order[k]];
    if (op.start > hi) break;
    if (op.end() >= lo && (!best || op.dur() < best->dur())) best = &op;
  }
  return best;
}

// The label of the critical-path segment under the mouse, or "".
std::string PathTip(const ViewState& v) {
  if (v.path.hovered < 0) return "";
  return "critical path: " + v.path.segments[v.path.hovered].label;
}

void PathTooltipLine(const std::string& tip) {
  ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::kPathWait), "%s", tip.c_str());
}

// The op's tooltip, under `path_tip` (the critical-path segment there) unless it is empty.
void OpTooltip(const Snapshot& s, const TimelineRow& row, const OpRow& op,
               const std::string& path_tip) {
  const Capture& c = s.capture;
  ImGui::BeginTooltip();
  if (!path_tip.empty()) {
    PathTooltipLine(path_tip);
    ImGui::Separator();
  }
  const NodeRow& node = c.Node(op);
  const std::string_view name = c.Str(node.name), type = c.Str(node.type);
  ImGui::Text("%.*s", static_cast<int>(name.size()), name.data());
  ImGui::TextDisabled("%.*s  (%s)", static_cast<int>(type.size()), type.data(),
                      OpKindName(ClassifyOp(type, name)).data());
  ImGui::Text("duration %s, at +%s", FormatNs(static_cast<double>(op.dur())).c_str(),
              FormatNs(static_cast<double>(op.start - c.start)).c_str());
  ImGui::Text("%.*s  %s  lane %d", static_cast<int>(c.TaskLabelOf(row.task).size()),
              c.TaskLabelOf(row.task).data(), DeviceLabel(c, row.device).c_str(), op.lane);
  const int n_inputs = static_cast<int>(node.inputs_count);
  if (n_inputs > 0) ImGui::Separator();
  for (int i = 0; i < n_inputs && i < 12; ++i) {
    std::string_view in = c.Str(c.inputs[node.inputs_begin + i]);
    ImGui::BulletText("%.*s", static_cast<int>(in.size()), in.data());
  }
  if (n_inputs > 12) ImGui::TextDisabled("... %d more inputs", n_inputs - 12);
  ImGui::EndTooltip();
}

// Step starts of `task` as 1-pixel lines (plain rectangles: cheaper than anti-aliased lines),
// at most one per kMinStepPx pixels.
void DrawSteps(const Snapshot& s, uint32_t task, const View& vw, ImDrawList* dl, float y0,
               float y1) {
  const StepRange steps = s.capture.TaskSteps(task);
  auto by_start = [](const StepRow& st, TimeNs t) { return st.start < t; };
  auto it = std::lower_bound(steps.begin(), steps.end(), vw.T(vw.x0), by_start);
  const TimeNs t_end = vw.T(vw.x0 + vw.w);
  while (it != steps.end() && it->start <= t_end) {
    float x = vw.X(it->start);
    x = std::floor(x);
    dl->AddRectFilled(ImVec2(x, y0), ImVec2(x + 1, y1), IM_COL32(0xFF, 0xFF, 0xFF, 0x60));
    it = std::lower_bound(it + 1, steps.end(), vw.T(x + kMinStepPx), by_start);
  }
}

void DrawFlows(const Snapshot& s, const View& vw, ImDrawList* dl, const std::vector<float>& dev_y) {
  int drawn = 0;
  for (const FlowRow& f : s.capture.flows) {
    if (f.src_device >= dev_y.size() || f.dst_device >= dev_y.size()) continue;
    float ya = dev_y[f.src_device], yb = dev_y[f.dst_device];
    if (ya < 0 || yb < 0) continue;
    if (std::max(f.src_ts, f.dst_ts) < vw.T(vw.x0) ||
        std::min(f.src_ts, f.dst_ts) > vw.T(vw.x0 + vw.w)) {
      continue;
    }
    ImVec2 a(vw.X(f.src_ts), ya), b(vw.X(f.dst_ts), yb);
    ImU32 col = IM_COL32(0xF0, 0xE0, 0x60, 0xB0);
    dl->AddLine(a, b, col, 1.2f);
    dl->AddTriangleFilled(b, ImVec2(b.x - 4, b.y + (yb > ya ? -6 : 6)),
                          ImVec2(b.x + 4, b.y + (yb > ya ? -6 : 6)), col);
    if (++drawn >= 4000) break;
  }
}

void Legend() {
  for (int k = 0; k < static_cast<int>(OpKind::kCount); ++k) {
    ImGui::SameLine();
    ImVec2 p = ImGui::GetCursorScreenPos();
    float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + h - 3, p.y + h),
                                              colors::ForKind(static_cast<OpKind>(k)));
    ImGui::Dummy(ImVec2(h - 1, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(OpKindName(static_cast<OpKind>(k)).data());
  }
}

// The rows of `task` as [first, last] indices into TimelineIndex::rows; first > last when none.
void HandleInput(const Capture& c, ViewState* v, const View& vw, bool hovered) {
  ImGuiIO& io = ImGui::GetIO();
  const double full = static_cast<double>(c.end - c.start);
  const double max_span = std::max(full * 1.5, kMinSpanNs);
  double span = v->view_end - v->view_start;
  double mouse_t = vw.TRel(io.MousePos.x);
  bool over_track = hovered && io.MousePos.x >= vw.x0 && io.MousePos.x < vw.x0 + vw.w;
  if (over_track && io.MouseWheel != 0 && !io.KeyShift) {
    Zoom(v, std::pow(0.8, io.MouseWheel), mouse_t, max_span);
  }
  if (over_track && (ImGui::IsMouseClicked(0) || ImGui::IsMouseClicked(1))) v->dragging = true;
  if (!ImGui::IsMouseDown(0) && !ImGui::IsMouseDown(1)) v->dragging = false;
  if (v->dragging) {
    double dt = -io.MouseDelta.x * vw.NsPerPx();
    v->view_start += dt;
    v->view_end += dt;
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
  }
  if (io.WantTextInput) return;
  // GLFW key codes are the upper-case ASCII letters, and Dear ImGui 1.86 indexes
  // io.KeysDown by the backend's key code.
  double center = 0.5 * (v->view_start + v->view_end);
  if (ImGui::IsKeyPressed('W') || ImGui::IsKeyPressed('=')) Zoom(v, 0.7, center, max_span);
  if (ImGui::IsKeyPressed('S') || ImGui::IsKeyPressed('-')) Zoom(v, 1 / 0.7, center, max_span);
  double pan = 0;
  if (ImGui::IsKeyPressed('A') || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow)))
    pan = -0.15 * span;
  if (ImGui::IsKeyPressed('D') || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow)))
    pan = 0.15 * span;
  v->view_start += pan;
  v->view_end += pan;
  if (ImGui::IsKeyPressed('F') || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home))) {
    v->view_start = v->view_end = 0;
  }
}

}  // namespace

void DrawTimelinePanel(const Snapshot& s, ViewState* v) {
  const Capture& c = s.capture;
  const auto& rows = s.timeline.rows;
  if (rows.empty()) {
    ImGui::TextDisabled("No ops to show: no input holds a timeline.");
    return;
  }
  if (v->view_end <= v->view_start) {  // fit
    double full = static_cast<double>(std::max<TimeNs>(c.end - c.start, 1000));
    v->view_start = -0.01 * full;
    v->view_end = 1.01 * full;
  }
  if (ImGui::SmallButton("Fit (F)")) v->view_start = v->view_end = 0;
  ImGui::SameLine();
  ImGui::Checkbox("Flows", &v->show_flows);
  if (!v->path_chosen) SelectPath(s, v, DefaultPathTask(s), false);
  UpdatePathModel(s, v);
  const std::vector<uint32_t> path_tasks = PathTasks(s);
  if (!path_tasks.empty()) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(110);
    const std::string current =
        v->path_task == kNoIndex ? "no path" : Printable(c.TaskLabelOf(v->path_task));
    if (ImGui::BeginCombo("##path", current.c_str())) {
      if (ImGui::Selectable("no path", v->path_task == kNoIndex)) SelectPath(s, v, kNoIndex, false);
      for (uint32_t t : path_tasks) {
        const std::string label = Printable(c.TaskLabelOf(t));
        if (ImGui::Selectable(label.c_str(), t == v->path_task)) SelectPath(s, v, t, true);
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered()) {
      const std::string& summary = v->path.summary;
      ImGui::SetTooltip("The worker whose median step's critical path is drawn%s%s",
                        summary.empty() ? "" : "\n", summary.c_str());
    }
  }
  Legend();
  ImGui::SameLine();
  ImGui::TextDisabled("  | visible %s", FormatNs(v->view_end - v->view_start).c_str());

  ImVec2 p0 = ImGui::GetCursorScreenPos();
  float width = ImGui::GetContentRegionAvail().x;
  View vw{c.start, v->view_start, v->view_end, p0.x + kLabelW,
          std::max(width - kLabelW - 14, 50.0f)};
  ImDrawList* dl = ImGui::GetWindowDrawList();
  DrawRuler(vw, dl, ImVec2(vw.x0, p0.y), kRulerH);
  if (v->focus_end > v->focus_start) {  // the focused range, in the ruler
    float a = std::max(vw.X(v->focus_start), vw.x0);
    float b = std::min(vw.X(v->focus_end), vw.x0 + vw.w);
    if (b > a)
      dl->AddRectFilled(ImVec2(a, p0.y + kRulerH - 4), ImVec2(b, p0.y + kRulerH), colors::kFocus);
  }
  // The path's step in the ruler's label column (the rows keep their place).
  DrawPathTag(s, v, dl, p0, vw.x0 - p0.x);
  ImGui::Dummy(ImVec2(width, kRulerH));

  Layout lay = MakeLayout(s);
  v->hovered.clear();
  v->hovered_op = v->hovered_row = kNoIndex;
  v->track_x0 = vw.x0;
  v->track_w = vw.w;
  v->drawn_rows.clear();
  ImGui::BeginChild("##rows", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
  ImVec2 origin = ImGui::GetCursorScreenPos();
  float scroll = ImGui::GetScrollY(), view_h = ImGui::GetWindowHeight();
  if (v->scroll_to_focus && v->focus_task < s.timeline.task_rows.size()) {
    uint32_t r = s.timeline.task_rows[v->focus_task];
    if (r < rows.size()) ImGui::SetScrollY(std::max(0.0f, lay.row_y[r] - kHeaderH - 4));
    v->scroll_to_focus = false;
  }
  if (v->scroll_to_path) {
    const auto [a, b] = TaskRowRange(s, v->path_task);
    if (a <= b) {
      const float bottom_at = lay.row_y[b] + 2 * kRowH - view_h;  // the rows at the bottom
      const float top_at = lay.row_y[a] - kHeaderH - 4;           // ...unless taller than the view
      ImGui::SetScrollY(std::max(0.0f, std::min(bottom_at, top_at)));
    }
    v->scroll_to_path = false;
  }
  // The rows' own width: inside the child, less its vertical scrollbar.
  ImGui::Dummy(ImVec2(ImGui::GetContentRegionAvail().x, lay.height));
  ImDrawList* rl = ImGui::GetWindowDrawList();
  bool hovered = ImGui::IsWindowHovered();
  ImGuiIO& io = ImGui::GetIO();
  if (hovered && io.MouseWheel != 0 && io.KeyShift) ImGui::SetScrollY(scroll - io.MouseWheel * 40);
  const float top = origin.y + scroll - kRowH, bottom = origin.y + scroll + view_h;
  auto first = std::lower_bound(lay.row_y.begin(), lay.row_y.end(), top - origin.y);
  size_t r0 = static_cast<size_t>(first - lay.row_y.begin());
  std::vector<float> dev_y(v->show_flows ? c.devices.size() : 0, -1.0f);
  if (v->show_flows) {
    for (size_t r = 0; r < rows.size(); ++r) {
      if (dev_y[rows[r].device] < 0) dev_y[rows[r].device] = origin.y + lay.row_y[r] + kRowH / 2;
    }
  }
  for (const Layout::Header& h : lay.headers) {
    float y = origin.y + h.y;
    if (y + kHeaderH < top || y > bottom) continue;
    std::string_view job = c.Str(h.job);
    std::string text = fmt::format("{} ({} task{})", job, h.tasks, h.tasks == 1 ? "" : "s");
    rl->AddRectFilled(ImVec2(origin.x, y), ImVec2(vw.x0 + vw.w, y + kHeaderH - 2),
                      IM_COL32(0x30, 0x34, 0x40, 0xFF));
    rl->AddText(ImVec2(origin.x + 4, y + 1), IM_COL32(0xE8, 0xE8, 0xE8, 0xFF), text.c_str());
  }
  uint32_t hover_row = kNoIndex;
  for (size_t r = r0; r < rows.size(); ++r) {
    float y = origin.y + lay.row_y[r];
    if (y > bottom) break;
    const TimelineRow& row = rows[r];
    v->drawn_rows.emplace_back(static_cast<uint32_t>(r), y);
    bool focus = row.task == v->focus_task;
    // No background for ordinary rows: every shaded pixel costs on software GL.
    if (focus)
      rl->AddRectFilled(ImVec2(vw.x0, y), ImVec2(vw.x0 + vw.w, y + kRowH - 1), colors::kFocusBg);
    bool first_of_device = r == 0 || rows[r - 1].device != row.device;
    if (first_of_device) {
      bool first_of_task = r == 0 || rows[r - 1].task != row.task;
      std::string label = fmt::format("{:<10}{}", first_of_task ? c.TaskLabelOf(row.task) : "",
                                      DeviceLabel(c, row.device));
      rl->AddText(ImVec2(origin.x + 4, y),
                  focus ? colors::kFocus : IM_COL32(0xD8, 0xD8, 0xD8, 0xFF), label.c_str());
    }
    rl->PushClipRect(ImVec2(vw.x0, y), ImVec2(vw.x0 + vw.w, y + kRowH), true);
    DrawRowOps(s, row, vw, rl, y + 1, y + kRowH - 2);
    rl->PopClipRect();
    if (hovered && io.MousePos.y >= y && io.MousePos.y < y + kRowH) hover_row = r;
  }
  // Step boundaries over each task's rows.
  rl->PushClipRect(ImVec2(vw.x0, origin.y + scroll), ImVec2(vw.x0 + vw.w, bottom), true);
  for (size_t r = r0; r < rows.size();) {
    size_t e = r;
    while (e < rows.size() && rows[e].task == rows[r].task) ++e;
    float y0 = origin.y + lay.row_y[r], y1 = origin.y + lay.row_y[e - 1] + kRowH;
    if (y0 > bottom) break;
    DrawSteps(s, rows[r].task, vw, rl, y0, y1);
    r = e;
  }
  if (v->focus_end > v->focus_start) {
    float a = vw.X(v->focus_start), b = vw.X(v->focus_end);
    rl->AddLine(ImVec2(a, origin.y + scroll), ImVec2(a, bottom), colors::kFocus, 2);
    rl->AddLine(ImVec2(b, origin.y + scroll), ImVec2(b, bottom), colors::kFocus, 2);
  }
  if (v->show_flows) DrawFlows(s, vw, rl, dev_y);
  DrawCriticalPath(
      s, v, vw, rl, [&](size_t r) { return origin.y + lay.row_y[r]; }, origin.y + scroll, bottom,
      hovered);
  rl->PopClipRect();

  if (hover_row != kNoIndex && !v->dragging && io.MousePos.x >= vw.x0) {
    const OpRow* op = OpAt(s, rows[hover_row], vw.T(io.MousePos.x),
                           static_cast<TimeNs>(std::ceil(2 * vw.NsPerPx())));
    if (op) {
      OpTooltip(s, rows[hover_row], *op, PathTip(*v));
      v->hovered_op = static_cast<uint32_t>(op - c.ops.plain().data());
      v->hovered_row = hover_row;
      v->hovered = fmt::format("{} {} ({})", c.TaskLabelOf(rows[hover_row].task),
                               c.Str(c.OpName(*op)), c.Str(c.OpType(*op)));
    } else if (!PathTip(*v).empty()) {
      ImGui::BeginTooltip();
      PathTooltipLine(PathTip(*v));
      ImGui::EndTooltip();
    }
  }
  HandleInput(c, v, vw, hovered);
  ImGui::EndChild();
}

}  // namespace tfdiag::view
