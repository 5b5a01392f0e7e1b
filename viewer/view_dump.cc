#include "viewer/view_dump.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cmath>

#include "core/atomic_file.h"
#include "core/json_utf8_writer.h"

namespace tfdiag::view {

namespace {

using Writer = ValidUtf8Writer<rapidjson::PrettyWriter<rapidjson::StringBuffer>>;

// A number, or null when it is not finite (RapidJSON's Writer would write nothing for it and
// leave the key without a value).
void Num(Writer& w, double x) {
  if (std::isfinite(x)) {
    w.Double(x);
  } else {
    w.Null();
  }
}

void Str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// The "task", "device" and "lane" keys of a timeline row or op.
void Where(Writer& w, const Capture& c, uint32_t task, uint32_t device, int lane) {
  w.Key("task");
  Str(w, c.TaskLabelOf(task));
  w.Key("device");
  Str(w, DeviceLabel(c, device));
  w.Key("lane");
  w.Int(lane);
}

void Hovered(Writer& w, const Snapshot& s, const ViewState& v) {
  const Capture& c = s.capture;
  if (v.hovered_op >= c.ops.size() || v.hovered_row >= s.timeline.rows.size()) {
    w.Null();
    return;
  }
  const OpRow& op = c.ops.plain()[v.hovered_op];
  const TimelineRow& row = s.timeline.rows[v.hovered_row];
  w.StartObject();
  Where(w, c, row.task, op.device, op.lane);
  w.Key("node");
  Str(w, c.Str(c.OpName(op)));
  w.Key("op");
  Str(w, c.Str(c.OpType(op)));
  w.Key("kind");
  Str(w, OpKindName(s.timeline.kinds[v.hovered_op]));
  w.Key("start_us");
  Num(w, static_cast<double>(op.start - c.start) / 1e3);
  w.Key("duration_us");
  Num(w, static_cast<double>(op.dur()) / 1e3);
  w.Key("inputs");
  w.StartArray();
  const NodeRow& node = c.Node(op);
  for (uint32_t i = 0; i < node.inputs_count; ++i) Str(w, c.Str(c.inputs[node.inputs_begin + i]));
  w.EndArray();
  w.EndObject();
}

void Matrix(Writer& w, const Capture& c, const ViewState::Matrix& m) {
  if (m.ps.empty()) {
    w.Null();
    return;
  }
  w.StartObject();
  for (auto [key, value] : {std::pair<const char*, float>{"x", m.x},
                            {"y", m.y},
                            {"cell_w", m.cell_w},
                            {"cell_h", m.cell_h}}) {
    w.Key(key);
    Num(w, value);
  }
  w.Key("measured");
  w.Bool(m.measured);
  w.Key("value");
  Str(w, m.value);
  w.Key("values");
  w.StartArray();
  for (double x : m.values) Num(w, x);
  w.EndArray();
  for (auto [key, tasks] :
       {std::pair<const char*, const std::vector<uint32_t>*>{"workers", &m.workers},
        {"ps", &m.ps}}) {
    w.Key(key);
    w.StartArray();
    for (uint32_t t : *tasks) Str(w, c.TaskLabelOf(t));
    w.EndArray();
  }
  w.EndObject();
}

void Points(Writer& w, const std::vector<std::pair<float, float>>& pts) {
  w.StartArray();
  for (const auto& [x, y] : pts) {
    w.StartArray();
    Num(w, x);
    Num(w, y);
    w.EndArray();
  }
  w.EndArray();
}

// The Scaling outlook tab: the outlook's points and saturation, and where the chart drew them.
void Outlook(Writer& w, const Snapshot& s, const ViewState::OutlookDrawn& v) {
  const tfdiag::Outlook& o = s.analysis.outlook;
  if (!o.set) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("verdict");
  Str(w, o.verdict);
  w.Key("points");
  w.StartArray();
  for (const OutlookPoint& p : o.points) {
    w.StartObject();
    w.Key("workers");
    w.Int(p.workers);
    w.Key("steps_per_s");
    Num(w, p.steps_per_s);
    w.Key("steps_per_s_after_fix");
    Num(w, p.steps_per_s_after_fix);
    w.EndObject();
  }
  w.EndArray();
  w.Key("saturates_at");
  w.Int(o.saturates_at.workers);
  w.Key("chart");
  w.StartObject();
  for (auto [k, x] : {std::pair{"x", v.chart_x},
                      {"y", v.chart_y},
                      {"w", v.chart_w},
                      {"h", v.chart_h},
                      {"saturation_x", v.saturation_x}}) {
    w.Key(k);
    Num(w, x);
  }
  w.Key("as_is");
  Points(w, v.asis);
  w.Key("after_fix");
  Points(w, v.after);
  w.Key("ideal");
  Points(w, v.ideal);
  w.EndObject();
  w.EndObject();
}

// --scaling: the runs as the view shows them, and where the chart and bars were drawn.
void Scaling(Writer& w, const Snapshot& s, const ViewState::Scaling& v) {
  if (!s.scaling) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("runs");
  w.StartArray();
  for (const ScalingRun& r : s.scaling->runs) {
    w.StartObject();
    w.Key("name");
    Str(w, r.name);
    w.Key("workers");
    w.Int(r.workers);
    w.Key("ps");
    w.Int(r.ps);
    w.Key("throughput");
    Num(w, r.throughput_steps_per_s);
    w.Key("unit");
    Str(w, r.throughput_unit);
    w.Key("efficiency");
    Num(w, r.efficiency);
    w.EndObject();
  }
  w.EndArray();
  w.Key("chart");
  w.StartObject();
  w.Key("x");
  Num(w, v.chart_x);
  w.Key("y");
  Num(w, v.chart_y);
  w.Key("w");
  Num(w, v.chart_w);
  w.Key("h");
  Num(w, v.chart_h);
  w.Key("measured");
  Points(w, v.measured);
  w.Key("ideal");
  Points(w, v.ideal);
  w.EndObject();
  w.Key("bars");
  w.StartArray();
  for (const ViewState::Scaling::Bar& b : v.bars) {
    w.StartObject();
    w.Key("run");
    w.Uint64(b.run);
    w.Key("task");
    Str(w, b.task);
    w.Key("busy_pct");
    Num(w, b.busy_pct);
    w.Key("hot");
    w.Bool(b.hot);
    for (auto [k, x] : {std::pair{"x", b.x}, {"y", b.y}, {"w", b.w}, {"h", b.h}}) {
      w.Key(k);
      Num(w, x);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// The critical path drawn (ViewState::PathDrawn), checked against the step graph by tests.
void CriticalPath(Writer& w, const Snapshot& s, const ViewState& v) {
  const Capture& c = s.capture;
  const StepGraph* g = s.analysis.graph.get();
  if (g == nullptr || v.path_task >= c.tasks.size() || v.path.step >= g->steps().size()) {
    w.Null();
    return;
  }
  const StepNode& n = g->steps()[v.path.step];
  auto us = [&](TimeNs t) { return static_cast<double>(t - c.start) / 1e3; };
  w.StartObject();
  w.Key("task");
  Str(w, c.TaskLabelOf(v.path_task));
  w.Key("step");
  w.Uint(n.index + 1);
  w.Key("start_us");
  Num(w, us(n.start));
  w.Key("duration_us");
  Num(w, static_cast<double>(n.end - n.start) / 1e3);
  w.Key("hovered");
  if (v.path.hovered >= 0) {
    w.Int(v.path.hovered);
  } else {
    w.Null();
  }
  w.Key("legible");
  w.Bool(v.path.legible);
  w.Key("hint");
  Str(w, v.path.hint);
  w.Key("segments");
  w.StartArray();
  for (const ViewState::PathDrawn::Segment& d : v.path.segments) {
    w.StartObject();
    w.Key("kind");
    w.String(d.seg.wait ? "wait" : "compute");
    w.Key("start_us");
    Num(w, us(d.seg.start));
    w.Key("duration_us");
    Num(w, static_cast<double>(d.seg.end - d.seg.start) / 1e3);
    w.Key("label");
    Str(w, d.label);
    w.Key("step_tail");
    w.Bool(d.seg.step_tail);
    w.Key("edge");
    if (d.seg.edge < g->edges().size()) {
      const GraphEdge& e = g->edges()[d.seg.edge];
      w.StartObject();
      w.Key("tensor");
      Str(w, c.Str(e.tensor));
      w.Key("from");
      if (e.ambiguous() || e.src_task >= c.tasks.size()) {
        w.Null();
      } else {
        Str(w, c.TaskLabelOf(e.src_task));
      }
      w.Key("candidates");
      w.Uint(e.candidates);
      // A step tail's push (issue 35): what the task sent, and the task whose apply it awaited.
      w.Key("push");
      w.Bool(e.push);
      if (e.push) {
        w.Key("to");
        Str(w, c.TaskLabelOf(e.dst_task));
      }
      w.Key("sent_us");
      Num(w, us(e.sent));
      w.EndObject();
    } else {
      w.Null();
    }
    w.Key("producer");
    if (d.producer < c.ops.size()) {
      const OpRow& op = c.ops.plain()[d.producer];
      w.StartObject();
      w.Key("task");
      Str(w, c.TaskLabelOf(c.devices[op.device].task));
      w.Key("node");
      Str(w, c.Str(c.OpName(op)));
      w.Key("op");
      Str(w, c.Str(c.OpType(op)));
      w.Key("start_us");
      Num(w, us(op.start));
      w.Key("duration_us");
      Num(w, static_cast<double>(op.dur()) / 1e3);
      w.EndObject();
    } else {
      w.Null();
    }
    w.Key("rect");
    if (d.visible) {
      w.StartArray();
      for (float x : {d.x0, d.y0, d.x1, d.y1}) Num(w, x);
      w.EndArray();
    } else {
      w.Null();
    }
    w.Key("arrow");
    if (d.arrow) {
      w.StartArray();
      for (float x : {d.ax0, d.ay0, d.ax1, d.ay1}) Num(w, x);
      w.EndArray();
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

// The nodes of a cluster bundle (NodeLoads) and, when the Nodes tab was drawn, each one's bar.
void Nodes(Writer& w, const Snapshot& s, const ViewState& v) {
  const Capture& c = s.capture;
  w.StartArray();
  const std::vector<NodeLoad> nodes = NodeLoads(s);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeLoad& n = nodes[i];
    w.StartObject();
    w.Key("node");
    Str(w, n.node);
    w.Key("tasks");
    w.StartArray();
    for (uint32_t k : n.stats) {
      Str(w, c.TaskLabelOf(c.processes[s.analysis.processes[k].process].task));
    }
    w.EndArray();
    w.Key("ps");
    w.Int(n.ps);
    w.Key("workers");
    w.Int(n.workers);
    for (auto [key, x] : {std::pair{"cpu_used", n.cpu_used},
                          {"cpu_limit", n.cpu_limit},
                          {"cpu_request", n.cpu_request}}) {
      w.Key(key);
      Num(w, x);
    }
    w.Key("unlimited");
    w.Int(n.unlimited);
    w.Key("bar");
    if (i < v.node_bars.size() && v.node_bars[i].node == n.node) {
      const ViewState::NodeBar& b = v.node_bars[i];
      w.StartArray();
      for (float x : {b.x, b.y, b.w, b.h}) Num(w, x);
      w.EndArray();
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
}

}  // namespace

std::string ViewDumpJson(const Snapshot& s, const ViewState& v) {
  const Capture& c = s.capture;
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("files");
  w.StartArray();
  for (const std::string& p : s.paths) Str(w, p);
  w.EndArray();
  w.Key("status");
  Str(w, v.status);
  w.Key("ops");
  w.Uint64(c.ops.size());
  w.Key("span_us");
  Num(w, static_cast<double>(c.end - c.start) / 1e3);
  w.Key("visible");
  w.StartObject();
  w.Key("start_us");
  Num(w, v.view_start / 1e3);
  w.Key("end_us");
  Num(w, v.view_end / 1e3);
  w.EndObject();
  w.Key("track");
  w.StartObject();
  w.Key("x");
  Num(w, v.track_x0);
  w.Key("w");
  Num(w, v.track_w);
  w.EndObject();
  static const char* const kTabs[] = {"tasks", "cpu", "import", "nodes", "scaling"};
  w.Key("tab");
  w.String(kTabs[v.active_tab >= 0 && v.active_tab < 5 ? v.active_tab : 0]);
  w.Key("fix_first");
  if (v.fix_first.empty()) {
    w.Null();
  } else {
    Str(w, v.fix_first);
  }
  w.Key("selected");
  const auto& findings = s.analysis.findings;
  if (v.selected >= 0 && v.selected < static_cast<int>(findings.size())) {
    Str(w, findings[v.selected].rule_id);
  } else {
    w.Null();
  }
  w.Key("focus_task");
  if (v.focus_task < c.tasks.size()) {
    Str(w, c.TaskLabelOf(v.focus_task));
  } else {
    w.Null();
  }
  w.Key("flows");
  w.Bool(v.show_flows);
  w.Key("hovered");
  Hovered(w, s, v);
  w.Key("matrix");
  Matrix(w, c, v.matrix);
  w.Key("scaling");
  Scaling(w, s, v.scaling);
  w.Key("outlook");
  Outlook(w, s, v.outlook);
  w.Key("critical_path");
  CriticalPath(w, s, v);
  w.Key("nodes");
  Nodes(w, s, v);
  w.Key("figures");
  w.StartArray();
  for (const std::string& f : v.figures) Str(w, f);
  w.EndArray();
  w.Key("overflow");
  w.StartArray();
  for (const auto& [name, past] : v.overflow) {
    w.StartObject();
    w.Key("window");
    Str(w, name);
    w.Key("px");
    Num(w, past);
    w.EndObject();
  }
  w.EndArray();
  w.Key("rows");
  w.StartArray();
  for (const auto& [r, y] : v.drawn_rows) {
    const TimelineRow& row = s.timeline.rows[r];
    w.StartObject();
    Where(w, c, row.task, row.device, row.lane);
    w.Key("y");
    Num(w, y);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

Status WriteViewDump(const Snapshot& s, const ViewState& v, const std::string& path) {
  return WriteFileAtomically(path, ViewDumpJson(s, v));
}

}  // namespace tfdiag::view
