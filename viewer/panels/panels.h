// The viewer's panels, one per file, and the UI state they share.
//
// Each Draw*Panel() function draws into the current ImGui window (App opens the window and sizes
// it); it reads the Snapshot and reads or changes the ViewState. Colours that tests look for in
// screenshots are defined here and nowhere else.
// Thread-safety: UI thread only (Dear ImGui is single-threaded).
#pragma once

#include <imgui.h>

#include <string>
#include <utility>
#include <vector>

#include "viewer/loader.h"

namespace tfdiag::view {

// Colours (ImU32 as IM_COL32(r, g, b, a)).
namespace colors {
// The hot PS's bar in the PS load panel, and a saturated PS's bar in the --scaling view: pure red
// 0xFF3030, drawn opaque so that screenshots contain this exact RGB value (tests/viewer_test.cc
// and viewer_scaling_test.cc look for it). Nothing else uses it.
constexpr ImU32 kHot = IM_COL32(0xFF, 0x30, 0x30, 0xFF);
constexpr ImU32 kPsBar = IM_COL32(0x4A, 0x90, 0xD9, 0xFF);    // other PS bars
constexpr ImU32 kFocus = IM_COL32(0xFF, 0xD7, 0x40, 0xFF);    // outline of the focused subject
constexpr ImU32 kFocusBg = IM_COL32(0xFF, 0xD7, 0x40, 0x30);  // tint of the focused rows/range
// The critical path drawn over the timeline: compute segments outlined in green; waits tinted
// and outlined in orange, with an orange arrow from the op the wait was for (its outline too).
// kPathWait is drawn opaque so screenshots contain this exact RGB value (tests look for it).
constexpr ImU32 kPathCompute = IM_COL32(0x3C, 0xE0, 0x78, 0xFF);
constexpr ImU32 kPathWait = IM_COL32(0xFF, 0x8C, 0x1A, 0xFF);
constexpr ImU32 kPathWaitBg = IM_COL32(0xFF, 0x8C, 0x1A, 0x38);
// Fill colour of an op of this kind (merged ops use a darker shade).
ImU32 ForKind(OpKind kind);
// Text colour for a severity.
ImU32 ForSeverity(Severity s);
}  // namespace colors

// UI state shared by the panels. TimeNs fields are absolute ns (Capture's clock).
struct ViewState {
  int selected = -1;               // index into analysis.findings, -1 none
  uint32_t focus_task = kNoIndex;  // task whose rows are highlighted (finding or table click)
  TimeNs focus_start = 0, focus_end = 0;  // highlighted time range, 0/0 none
  bool scroll_to_focus = false;           // the timeline scrolls to focus_task on its next frame
  // The timeline's visible range in ns relative to Capture::start (epoch ns are not exact in a
  // double); equal values: fit the whole capture.
  double view_start = 0, view_end = 0;
  bool show_flows = false;  // DataFlow arrows in the timeline
  bool dragging = false;    // a timeline drag (pan) is in progress
  int bottom_tab = -1;      // tab to open in the bottom panel once (-1: leave as is)
  std::string hovered;  // the op under the mouse in the last frame: "<task> <node> (<type>)", or ""
  // The same op as an index into Capture::ops, and its row in TimelineIndex::rows; kNoIndex none.
  uint32_t hovered_op = kNoIndex, hovered_row = kNoIndex;
  // The bottom tab shown in the last frame: 0 Tasks, 1 CPU, 2 Import, 3 Nodes, 4 Scaling outlook.
  int active_tab = 0;
  // The timeline's track area in the last frame, screen pixels (width 0: not drawn), and the
  // screen y of the top of each row drawn: (index into TimelineIndex::rows, y).
  float track_x0 = 0, track_w = 0;
  std::vector<std::pair<uint32_t, float>> drawn_rows;
  // The worker x PS traffic heat map drawn in the last frame: cell (i, j) of worker workers[i]
  // and PS ps[j] (task indices) covers [x + j * cell_w, +cell_w) x [y + i * cell_h, +cell_h)
  // in screen pixels. Empty when not drawn.
  struct Matrix {
    float x = 0, y = 0, cell_w = 0, cell_h = 0;
    std::vector<uint32_t> workers, ps;
    bool measured = false;  // bytes from the eBPF probe (else transfers from the timeline)
    // What the colour shows: "bytes" (measured or tensor sizes), "busy" (each PS's busy time
    // split by its transfers, ns) or "transfers" (counts, when neither is known).
    std::string value;
    std::vector<double> values;  // per cell, row-major (workers x ps)
  } matrix;
  // Windows (panels and their child regions) whose items reached past their right edge in the
  // last frame, so that text or widgets were cut off: (window name, pixels past the edge).
  std::vector<std::pair<std::string, float>> overflow;
  // --scaling (Snapshot::scaling): what the throughput chart and the PS busy bars drew in the
  // last frame, in screen pixels. Empty when not drawn.
  struct Scaling {
    float chart_x = 0, chart_y = 0, chart_w = 0, chart_h = 0;  // the chart's plot area
    // One point per run, in run order: measured throughput, and the ideal (linear in workers
    // from the smallest run).
    std::vector<std::pair<float, float>> measured, ideal;
    struct Bar {
      size_t run = 0;    // index into ScalingResult::runs
      std::string task;  // "ps:0"
      float x = 0, y = 0, w = 0, h = 0;
      double busy_pct = -1;  // -1 unknown (drawn as an empty frame)
      bool hot = false;      // at or above Snapshot::saturation_pct: drawn in colors::kHot
    };
    std::vector<Bar> bars;
  } scaling;
  // The Scaling outlook tab (DrawOutlookPanel) in the last frame, screen pixels: the plot area,
  // one point per Outlook::points entry as the job is, after Fix first (empty without one) and
  // the ideal, and the saturation point's x (-1: none drawn). All empty when not drawn.
  struct OutlookDrawn {
    float chart_x = 0, chart_y = 0, chart_w = 0, chart_h = 0;
    std::vector<std::pair<float, float>> asis, after, ideal;
    float saturation_x = -1;
  } outlook;
  // The critical path (issue 29): the median step of worker `path_task` (index into
  // Capture::tasks; kNoIndex: none drawn). Until path_chosen the timeline picks
  // DefaultPathTask() on its first frame.
  uint32_t path_task = kNoIndex;
  bool path_chosen = false;
  // The timeline scrolls on its next frame so that the path's rows are at the bottom of the view
  // and as many rows above them (the PS, listed first) as fit.
  bool scroll_to_path = false;
  // The path of path_task (built by UpdatePathModel when the task changes: the graph's segments,
  // labels and producer ops are looked up once, not per frame) and what the timeline drew of
  // it in the last frame (screen pixels), one entry per StepGraph::Segments() of the step, in
  // time order. Empty when no path is drawn.
  struct PathDrawn {
    uint32_t task = kNoIndex;  // the task the model was built for
    uint32_t step = kNoIndex;  // index into StepGraph::steps()
    std::string summary;       // PathSummary(): "critical path of worker:0's median step ..."
    std::string tag;           // "path: step 2, 161 ms"
    struct Segment {
      PathSegment seg;
      std::string label;                     // PathLabel()
      uint32_t producer = kNoIndex;          // waits: ProducerOp() of the edge, kNoIndex none
      uint32_t producer_row = kNoIndex;      // its row (index into TimelineIndex::rows)
      bool visible = false;                  // some of it is inside the visible range
      float x0 = 0, x1 = 0, y0 = 0, y1 = 0;  // the band over the task's rows (clamped to the track)
      bool arrow = false;  // an arrow from the producer to the wait's end was drawn
      float ax0 = 0, ay0 = 0, ax1 = 0, ay1 = 0;
    };
    std::vector<Segment> segments;
    int hovered = -1;  // the segment under the mouse, -1 none
    // Whether the path was drawn in the last frame (its step wide enough and its rows on
    // screen); when not, `hint` (shown over the timeline) says how to see it.
    bool legible = false;
    std::string hint;
  } path;
  // The Nodes tab's bars drawn in the last frame (screen pixels), one per NodeLoads() entry.
  struct NodeBar {
    std::string node;
    float x = 0, y = 0, w = 0, h = 0;
  };
  std::vector<NodeBar> node_bars;
  // Figures written as text in the last frame, one line each: the CPU tab's per-process lines
  // and chart scales, the selected finding's evidence ("label: value"), the Nodes tab's lines.
  // For tests: an unknown figure (-1 in analyzers and bundles) must read "-", never a number.
  std::vector<std::string> figures;
  // The findings panel's "Fix first" line in the last frame, as the text report opens with it
  // (text::FixFirst); "" when no trusted prediction saves anything or the panel was not drawn.
  std::string fix_first;
  // The status bar's text after "tfdiag view" in the last frame: the inputs' names, counts and
  // span ("| hot-ps.json | 4608 ops, 20 tasks, span 713.00 ms | 1 findings").
  std::string status;
};

// "-" when `v` is unknown (negative: analyzers and bundles use -1), else `known`.
std::string OrDash(double v, const std::string& known);

// A node of a cluster bundle and the job's pods on it (ProcessRow::node).
struct NodeLoad {
  std::string node;  // "" for pods whose node is unknown (Pending)
  // Indices into AnalysisResult::processes: PS first, then the others, in task order.
  std::vector<uint32_t> stats;
  int ps = 0, workers = 0;  // workers count chief and master too
  double cpu_used = 0;      // CPUs used, summed over its pods (ProcessStats::cpu_cores)
  double cpu_limit = -1;    // the pods' CFS limits summed; -1 unknown (none of them has one)
  int unlimited = 0;        // pods without a CFS limit (left out of cpu_limit)
  double cpu_request = -1;  // the pods' CPU requests summed; -1 unknown (none known)
};

// Selects finding `index` (-1 clears): focuses its task and zooms the timeline to its range.
void SelectFinding(const Snapshot& s, ViewState* v, int index);
// Focuses a task (from a table click): highlighted and scrolled to in the timeline.
void FocusTask(ViewState* v, uint32_t task);
// The hot-ps (or, for bundles, ps-cpu-imbalance) finding, or nullptr.
const Finding* HotPsFinding(const Snapshot& s);
// The index of the PS that finding names, or kNoIndex.
uint32_t HotPsTask(const Snapshot& s);

// The critical path (viewer/panels/critical_path.cc). Workers (worker, chief, master) whose
// median step keeps its segments, in task order; the one with the longest median step (the text
// report's first), or kNoIndex.
std::vector<uint32_t> PathTasks(const Snapshot& s);
uint32_t DefaultPathTask(const Snapshot& s);
// Draws the median step of `task` (kNoIndex: none); with `zoom`, the timeline zooms to that step
// and focuses the task.
void SelectPath(const Snapshot& s, ViewState* v, uint32_t task, bool zoom);
// The op (index into Capture::ops) on the edge's producing task that made its tensor: of the ops
// there covering the edge's send time (or ending within 1 us before it), the tensor's node's,
// else the one that ended last. kNoIndex when the edge has no single producer or none fits.
uint32_t ProducerOp(const Snapshot& s, const GraphEdge& e);
// "computes 34.7 ms", "waits 12.3 ms for emb/read from ps:0", "waits 1 ms to the step's end".
std::string PathLabel(const Snapshot& s, const PathSegment& p);
// Rebuilds v->path (all but its pixels) when v->path_task changed since it was built.
void UpdatePathModel(const Snapshot& s, ViewState* v);

void DrawFindingsPanel(const Snapshot& s, ViewState* v);
void DrawTimelinePanel(const Snapshot& s, ViewState* v);
void DrawPsLoadPanel(const Snapshot& s, ViewState* v);
void DrawTasksPanel(const Snapshot& s, ViewState* v);
// --scaling: throughput against workers beside ideal; each run's PS busy shares side by side
// (saturated PS in colors::kHot); the runs table. Need s.scaling.
void DrawThroughputChart(const Snapshot& s, ViewState* v);
void DrawPsBusyPerRun(const Snapshot& s, ViewState* v);
void DrawScalingRunsTable(const Snapshot& s);
// A single profile's "Scaling outlook" tab (AnalysisResult::outlook): verdict, chart, table.
void DrawOutlookPanel(const Snapshot& s, ViewState* v);
void DrawCpuPanel(const Snapshot& s, ViewState* v);
// The nodes of a cluster bundle, named ones in name order, then the pods of unknown node; empty
// when no process names its node (timelines, bundles from tfdiag attach).
std::vector<NodeLoad> NodeLoads(const Snapshot& s);
// Nodes tab: per node its PS and workers, and a bar of its pods' CPU used against their limits.
void DrawNodesPanel(const Snapshot& s, ViewState* v);
void DrawImportPanel(const Snapshot& s, ViewState* v);

// Formatting shared by panels: "1.25 ms", "3.0 MB", "12.5%"; "-" for a negative (unknown)
// duration or size.
std::string FormatNs(double ns);
std::string FormatBytes(double bytes);  // report/table.h's (SI: "74.2 MB"); "-" below 0
// A short device label: "CPU:0", "GPU:1 stream:12".
std::string DeviceLabel(const Capture& c, uint32_t device);

}  // namespace tfdiag::view
