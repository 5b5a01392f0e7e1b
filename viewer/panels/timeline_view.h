// Geometry the timeline panel shares with what it draws over its rows (the critical path,
// viewer/panels/path_draw.cc): row height, the time <-> x map of the track area, a task's rows.
// Thread-safety: UI thread only, as the panels.
#pragma once

#include <imgui.h>

#include <cmath>
#include <functional>
#include <utility>

#include "viewer/panels/panels.h"

namespace tfdiag::view {

constexpr float kRowH = 15;     // one lane, pixels
constexpr float kLabelW = 150;  // the label column, pixels
constexpr float kRulerH = 22;   // the time ruler, pixels

// The maps between time and x of the track area. The visible range is kept relative to the
// capture's start: epoch nanoseconds (~1.7e18) are not exact in a double (steps of 256 ns).
struct View {
  TimeNs origin;      // Capture::start
  double start, end;  // visible range, ns relative to origin
  float x0, w;        // track area in screen pixels
  double NsPerPx() const { return (end - start) / w; }
  float XRel(double rel) const { return x0 + static_cast<float>((rel - start) / NsPerPx()); }
  float X(TimeNs t) const { return XRel(static_cast<double>(t - origin)); }
  double TRel(float x) const { return start + (x - x0) * NsPerPx(); }
  // The absolute time at x, rounded up to a whole ns.
  TimeNs T(float x) const { return origin + static_cast<TimeNs>(std::ceil(TRel(x))); }
};

// The first and last row (indices into TimelineIndex::rows) of `task`; first > last when it has
// none.
std::pair<size_t, size_t> TaskRowRange(const Snapshot& s, uint32_t task);

// The critical path of v->path_task's median step over its rows (issue 29), recorded in v->path.
// `row_y(r)` is the screen y of the top of row r; [rows_top, rows_bottom) the rows' visible
// screen band. Drawn only where it reads: when the step spans at least kPathLegibleShare of the
// track and its rows are on screen; else nothing of it is drawn and v->path.hint says how to see
// it (issue 39: unzoomed, its waits were a few orange slivers and stray arrows).
constexpr double kPathLegibleShare = 0.4;
void DrawCriticalPath(const Snapshot& s, ViewState* v, const View& vw, ImDrawList* dl,
                      const std::function<float(size_t)>& row_y, float rows_top, float rows_bottom,
                      bool hovered);
// The path's tag in the ruler's label column at `p0` ("path: step 2, 161 ms"): its summary on
// hover; a click zooms to the step.
void DrawPathTag(const Snapshot& s, ViewState* v, ImDrawList* dl, ImVec2 p0, float label_w);

}  // namespace tfdiag::view
