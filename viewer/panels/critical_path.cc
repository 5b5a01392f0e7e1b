// The critical path of a worker's step (issue 29), as the timeline draws it: the segments of the
// task's median step from StepGraph::Segments (compute runs, and the waits with the cross-task
// edge that ended each), a label naming each, and the op on the producing task (a PS op, or
// another worker's) that the wait was for.
#include <fmt/format.h>

#include <algorithm>

#include "analyzers/worker_wait.h"
#include "core/duration.h"
#include "core/escape.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

bool IsWorker(JobKind k) {
  return k == JobKind::kWorker || k == JobKind::kChief || k == JobKind::kMaster;
}

// "emb/read:1" -> "emb/read": a tensor names its producing node and output slot.
std::string_view NodeOfTensor(std::string_view tensor) {
  const size_t colon = tensor.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == tensor.size()) return tensor;
  for (size_t i = colon + 1; i < tensor.size(); ++i) {
    if (tensor[i] < '0' || tensor[i] > '9') return tensor;
  }
  return tensor.substr(0, colon);
}

}  // namespace

uint32_t DefaultPathTask(const Snapshot& s) {
  const StepGraph* g = s.analysis.graph.get();
  if (g == nullptr) return kNoIndex;
  uint32_t best = kNoIndex;
  TimeNs best_len = -1;
  for (uint32_t t = 0; t < s.capture.tasks.size(); ++t) {
    if (!IsWorker(s.capture.tasks[t].kind)) continue;
    const uint32_t m = g->MedianStep(t);
    if (m == kNoIndex) continue;
    const TimeNs len = g->steps()[m].end - g->steps()[m].start;
    if (len > best_len) best = t, best_len = len;  // first of the longest, as the text report
  }
  return best;
}

std::vector<uint32_t> PathTasks(const Snapshot& s) {
  std::vector<uint32_t> out;
  const StepGraph* g = s.analysis.graph.get();
  if (g == nullptr) return out;
  for (uint32_t t = 0; t < s.capture.tasks.size(); ++t) {
    if (IsWorker(s.capture.tasks[t].kind) && g->MedianStep(t) != kNoIndex) out.push_back(t);
  }
  return out;
}

void SelectPath(const Snapshot& s, ViewState* v, uint32_t task, bool zoom) {
  v->path_task = task;
  v->path_chosen = true;
  const StepGraph* g = s.analysis.graph.get();
  if (!zoom || g == nullptr || task == kNoIndex) return;
  const uint32_t m = g->MedianStep(task);
  if (m == kNoIndex) return;
  const StepNode& n = g->steps()[m];
  const double pad = 0.03 * static_cast<double>(n.end - n.start);
  v->view_start = static_cast<double>(n.start - s.capture.start) - pad;
  v->view_end = static_cast<double>(n.end - s.capture.start) + pad;
  v->focus_task = task;
  v->scroll_to_path = true;
}

uint32_t ProducerOp(const Snapshot& s, const GraphEdge& e) {
  const Capture& c = s.capture;
  const TimelineIndex& ix = s.timeline;
  if (e.src_task >= ix.task_rows.size()) return kNoIndex;
  const std::string_view node = NodeOfTensor(c.Str(e.tensor));
  // Of the producer's ops that cover `sent` or end within 1 us before it: the one of the
  // tensor's node if there is one, else the one that ended last.
  uint32_t best = kNoIndex;
  bool best_named = false;
  TimeNs best_end = INT64_MIN;
  for (uint32_t r = ix.task_rows[e.src_task]; r < ix.rows.size() && ix.rows[r].task == e.src_task;
       ++r) {
    const TimelineRow& row = ix.rows[r];
    const TimeNs lo = e.sent - 1000;
    uint32_t k = static_cast<uint32_t>(
        std::lower_bound(ix.max_end.begin() + row.begin, ix.max_end.begin() + row.end, lo) -
        ix.max_end.begin());
    for (; k < row.end; ++k) {
      const uint32_t i = ix.order[k];
      const OpRow& op = c.ops.plain()[i];
      if (op.start > e.sent) break;
      if (op.end() < lo) continue;
      const bool named = c.Str(c.OpName(op)) == node;
      if (best == kNoIndex || (named && !best_named) ||
          (named == best_named && op.end() > best_end)) {
        best = i, best_named = named, best_end = op.end();
      }
    }
  }
  return best;
}

std::string PathLabel(const Snapshot& s, const PathSegment& p) {
  const std::string dur = FormatDurationShort(static_cast<double>(p.end - p.start));
  if (!p.wait) return "computes " + dur;
  const StepGraph* g = s.analysis.graph.get();
  if (g == nullptr) return "waits " + dur;
  const WaitLabel l = LabelWait(s.capture, *g, p);
  if (l.input) return "input " + dur;
  if (l.what.empty()) return "waits " + dur + " (no cross-task edge ended it)";
  return "waits " + dur + Printable(l.what);
}

void UpdatePathModel(const Snapshot& s, ViewState* v) {
  ViewState::PathDrawn& m = v->path;
  if (m.task == v->path_task) return;
  m = {};
  m.task = v->path_task;
  const StepGraph* g = s.analysis.graph.get();
  if (g == nullptr || v->path_task == kNoIndex) return;
  m.step = g->MedianStep(v->path_task);
  if (m.step == kNoIndex) return;
  const Capture& c = s.capture;
  const TimelineIndex& ix = s.timeline;
  const StepNode& n = g->steps()[m.step];
  TimeNs compute = 0, wait = 0;
  const PathSegment* longest = nullptr;
  const std::vector<PathSegment> segments = g->Segments(m.step);
  for (const PathSegment& p : segments) {
    ViewState::PathDrawn::Segment d;
    d.seg = p;
    d.label = PathLabel(s, p);
    (p.wait ? wait : compute) += p.end - p.start;
    if (p.wait && (!longest || p.end - p.start > longest->end - longest->start)) longest = &p;
    // A step tail's push came from this task itself: no producer on another task to draw.
    if (p.wait && p.edge < g->edges().size() && !g->edges()[p.edge].push) {
      const GraphEdge& e = g->edges()[p.edge];
      d.producer = ProducerOp(s, e);
      if (d.producer != kNoIndex) {
        // Its row: the producer task's row of the op's device and lane.
        const OpRow& op = c.ops.plain()[d.producer];
        for (uint32_t r = ix.task_rows[e.src_task];
             r < ix.rows.size() && ix.rows[r].task == e.src_task; ++r) {
          if (ix.rows[r].device == op.device && ix.rows[r].lane == op.lane) {
            d.producer_row = r;
            break;
          }
        }
        if (d.producer_row == kNoIndex) d.producer = kNoIndex;
      }
    }
    m.segments.push_back(std::move(d));
  }
  const std::string len = FormatDurationShort(static_cast<double>(n.end - n.start));
  m.tag = fmt::format("path: step {}, {}", n.index + 1, len);
  m.summary =
      fmt::format("critical path of {}'s median step (step {}, {}): computes {}, waits {}{}",
                  Printable(c.TaskLabelOf(v->path_task)), n.index + 1, len,
                  FormatDurationShort(static_cast<double>(compute)),
                  FormatDurationShort(static_cast<double>(wait)),
                  longest ? "; longest: " + PathLabel(s, *longest) : std::string());
}

}  // namespace tfdiag::view
