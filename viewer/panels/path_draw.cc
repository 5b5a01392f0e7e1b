// The critical path drawn over the timeline (issue 29): compute segments outlined in green,
// waits tinted orange with their label, and for each wait an arrow from the op on the producing
// task that it waited for (outlined) to the wait's end; the path's tag in the ruler. Drawn only
// where it reads (issue 39); else a hint over the timeline says how to see it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/duration.h"
#include "core/escape.h"
#include "viewer/panels/timeline_view.h"

namespace tfdiag::view {

namespace {

void Arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float thick) {
  dl->AddLine(a, b, col, thick);
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::max(std::sqrt(dx * dx + dy * dy), 1.0f);
  const float ux = dx / len, uy = dy / len;  // along the arrow, and across it: (-uy, ux)
  const float head = 3 + 3 * thick;
  dl->AddTriangleFilled(b, ImVec2(b.x - head * ux - head / 2 * uy, b.y - head * uy + head / 2 * ux),
                        ImVec2(b.x - head * ux + head / 2 * uy, b.y - head * uy - head / 2 * ux),
                        col);
}

// The hint in the rows' top-left corner, on a dark plate, in the UI's dim text colour (not the
// path's orange: nothing orange is drawn while the path does not read).
void DrawHint(ImDrawList* dl, const std::string& hint, float x, float y) {
  const ImVec2 ts = ImGui::CalcTextSize(hint.c_str());
  dl->AddRectFilled(ImVec2(x, y), ImVec2(x + ts.x + 8, y + ts.y + 4),
                    IM_COL32(0x10, 0x10, 0x14, 0xE0));
  dl->AddText(ImVec2(x + 4, y + 2), IM_COL32(0xC8, 0xC8, 0xC8, 0xFF), hint.c_str());
}

}  // namespace

std::pair<size_t, size_t> TaskRowRange(const Snapshot& s, uint32_t task) {
  const auto& rows = s.timeline.rows;
  if (task >= s.timeline.task_rows.size()) return {1, 0};
  size_t a = s.timeline.task_rows[task], b = a;
  if (a >= rows.size()) return {1, 0};
  while (b + 1 < rows.size() && rows[b + 1].task == task) ++b;
  return {a, b};
}

void DrawCriticalPath(const Snapshot& s, ViewState* v, const View& vw, ImDrawList* dl,
                      const std::function<float(size_t)>& row_y, float rows_top, float rows_bottom,
                      bool hovered) {
  ViewState::PathDrawn& out = v->path;
  out.hovered = -1;
  out.legible = false;
  out.hint.clear();
  if (out.step == kNoIndex) return;
  const auto [r_first, r_last] = TaskRowRange(s, v->path_task);
  if (r_first > r_last) return;
  const Capture& c = s.capture;
  const StepGraph& g = *s.analysis.graph;
  const StepNode& step = g.steps()[out.step];
  const float y0 = row_y(r_first), y1 = row_y(r_last) + kRowH - 1;
  const float left = vw.x0, right = vw.x0 + vw.w;
  // Legible: the step spans enough of the track for its waits to be bands, not slivers, and its
  // rows are on screen (else its arrows run to an edge, from nothing visible).
  const float step_px = std::min(vw.X(step.end), right) - std::max(vw.X(step.start), left);
  out.legible = step_px >= kPathLegibleShare * vw.w && y0 >= rows_top && y1 <= rows_bottom;
  if (!out.legible) {
    out.hint = fmt::format(
        "critical path of {} (step {}) not drawn at this zoom: zoom in, or click the orange "
        "step tag at left",
        Printable(c.TaskLabelOf(v->path_task)), step.index + 1);
    for (ViewState::PathDrawn::Segment& d : out.segments) d.visible = d.arrow = false;
    DrawHint(dl, out.hint, left + 4, rows_top + 4);
    return;
  }
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  for (ViewState::PathDrawn::Segment& d : out.segments) {
    const PathSegment& p = d.seg;
    const float xa = vw.X(p.start), xb = std::max(vw.X(p.end), xa + 1);
    d.visible = xb >= left && xa <= right;
    d.x0 = std::clamp(xa, left, right);
    d.x1 = std::clamp(xb, left, right);
    d.y0 = y0;
    d.y1 = y1;
    d.arrow = false;
    if (d.visible) {
      if (p.wait) {
        dl->AddRectFilled(ImVec2(d.x0, y0), ImVec2(d.x1, y1), colors::kPathWaitBg);
        dl->AddRect(ImVec2(d.x0, y0), ImVec2(d.x1, y1), colors::kPathWait, 0, 0, 2);
      } else {
        dl->AddRect(ImVec2(d.x0, y0 + 1), ImVec2(d.x1, y1 - 1), colors::kPathCompute, 0, 0, 2);
      }
      // The label inside the band when it fits (else "waits 18 ms", else "18 ms"), on a dark
      // plate so it reads over the ops.
      if (d.x1 - d.x0 > 30) {
        std::string shown = d.label;
        for (int k = 1; k < 3 && ImGui::CalcTextSize(shown.c_str()).x + 8 >= d.x1 - d.x0; ++k) {
          shown = (k == 1 ? (p.wait ? "waits " : "computes ") : "") +
                  FormatDurationShort(static_cast<double>(p.end - p.start));
        }
        const ImVec2 ts = ImGui::CalcTextSize(shown.c_str());
        if (d.x1 - d.x0 > ts.x + 8) {
          const ImVec2 at(d.x0 + 4, y0 + 1);
          dl->AddRectFilled(ImVec2(at.x - 2, at.y), ImVec2(at.x + ts.x + 2, at.y + ts.y),
                            IM_COL32(0x10, 0x10, 0x14, 0xE0));
          dl->AddText(at, p.wait ? colors::kPathWait : colors::kPathCompute, shown.c_str());
        }
      }
      if (hovered && mouse.x >= d.x0 && mouse.x < d.x1 && mouse.y >= y0 && mouse.y < y1) {
        out.hovered = static_cast<int>(&d - out.segments.data());
      }
    }
    if (d.producer == kNoIndex) continue;
    const GraphEdge& e = g.edges()[p.edge];
    const OpRow& op = c.ops.plain()[d.producer];
    const float py = row_y(d.producer_row);
    const float px0 = vw.X(op.start), px1 = std::max(vw.X(op.end()), px0 + 2);
    if (px1 >= left && px0 <= right) {
      dl->AddRect(ImVec2(px0 - 1, py), ImVec2(px1 + 1, py + kRowH - 1), colors::kPathWait, 0, 0, 2);
    }
    const float sent_x = vw.X(e.sent);
    if (!d.visible && !(sent_x >= left && sent_x <= right)) continue;
    const ImVec2 a(std::clamp(sent_x, left, right), py + kRowH / 2);
    const ImVec2 b(std::clamp(vw.X(p.end), left, right), py < y0 ? y0 : y1);
    // Waits under 3 pixels get a thin, faint arrow: they would hide the long ones.
    const bool faint = xb - xa < 3;
    Arrow(dl, a, b, faint ? (colors::kPathWait & 0x00FFFFFF) | 0x70000000 : colors::kPathWait,
          faint ? 1.0f : 2.0f);
    d.arrow = true;
    d.ax0 = a.x, d.ay0 = a.y, d.ax1 = b.x, d.ay1 = b.y;
  }
}

void DrawPathTag(const Snapshot& s, ViewState* v, ImDrawList* dl, ImVec2 p0, float label_w) {
  std::string tag = v->path.tag;
  if (tag.empty()) return;
  // "path: step 2, 161 ms", without "path: " when the column is too narrow for it.
  if (ImGui::CalcTextSize(tag.c_str()).x > label_w - 8) tag = tag.substr(6);
  const ImVec4 clip(p0.x, p0.y, p0.x + label_w - 4, p0.y + kRulerH);
  dl->AddText(nullptr, 0, ImVec2(p0.x + 4, p0.y + 3), colors::kPathWait, tag.data(),
              tag.data() + tag.size(), 0, &clip);
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && m.x >= p0.x && m.x < p0.x + label_w && m.y >= p0.y &&
      m.y < p0.y + kRulerH) {
    ImGui::SetTooltip("%s\n(click: zoom to this step)", v->path.summary.c_str());
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) SelectPath(s, v, v->path_task, true);
  }
}

}  // namespace tfdiag::view
