// The --scaling view: runs of one job at different worker counts (analyzers/scaling.h) side by
// side. A chart of throughput against workers beside the ideal (linear from the smallest run),
// each run's PS busy shares as grouped bars (a PS at or above the rule's saturation_pct in
// colors::kHot), and a table of the runs' figures.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

constexpr ImU32 kAxis = IM_COL32(0x90, 0x90, 0x98, 0xFF);
constexpr ImU32 kText = IM_COL32(0xE0, 0xE0, 0xE0, 0xFF);
constexpr ImU32 kIdeal = IM_COL32(0x80, 0x80, 0x88, 0xFF);
constexpr ImU32 kMeasured = IM_COL32(0x4C, 0x8B, 0xF5, 0xFF);
constexpr ImU32 kLimit = IM_COL32(0xF5, 0xA6, 0x23, 0xFF);  // a pair where scaling-limit fired
constexpr ImU32 kTrack = IM_COL32(0x2A, 0x2D, 0x35, 0xFF);
constexpr ImU32 kHotLine = IM_COL32(0xE0, 0x4F, 0x4F, 0xFF);  // the outlook's saturation point

// "12.5" or "1.25k": short numbers for axis and point labels.
std::string Short(double x) {
  if (std::fabs(x) >= 1e6) return fmt::format("{:.3g}M", x / 1e6);
  if (std::fabs(x) >= 1e4) return fmt::format("{:.3g}k", x / 1e3);
  return fmt::format("{:.3g}", x);
}

// True when a scaling-limit finding covers the step from run a to run b ("A -> B workers").
bool LimitBetween(const Snapshot& s, const ScalingRun& a, const ScalingRun& b) {
  for (const Finding& f : s.analysis.findings) {
    for (const Figure& e : f.evidence) {
      if (e.label.rfind("workers (", 0) == 0 && e.value == b.workers) {
        for (const Figure& w : f.evidence) {
          if (w.label == "workers before" && w.value == a.workers) return true;
        }
      }
    }
  }
  return false;
}

}  // namespace

void DrawThroughputChart(const Snapshot& s, ViewState* v) {
  const ScalingResult& r = *s.scaling;
  ViewState::Scaling& out = v->scaling;
  out.measured.clear();
  out.ideal.clear();
  if (r.runs.empty()) return;
  const ScalingRun& base = r.runs.front();
  ImGui::TextDisabled("%s against workers; dashed: ideal (linear from %d workers)",
                      base.throughput_unit.c_str(), base.workers);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float left = 56, bottom = 40, top = 10, right = 16;
  const float px0 = o.x + left, py0 = o.y + top;
  const float pw = std::max(avail.x - left - right, 60.0f);
  const float ph = std::max(avail.y - top - bottom, 60.0f);
  out.chart_x = px0, out.chart_y = py0, out.chart_w = pw, out.chart_h = ph;
  double max_w = 0, max_t = 0;
  std::vector<double> ideal;
  for (const ScalingRun& run : r.runs) {
    double id = base.workers > 0 ? base.throughput_steps_per_s * run.workers / base.workers : 0;
    ideal.push_back(id);
    max_w = std::max(max_w, static_cast<double>(run.workers));
    max_t = std::max({max_t, run.throughput_steps_per_s, id});
  }
  max_w = std::max(max_w * 1.05, 1.0);
  // Round y ticks: a step of 1, 2 or 5 times a power of ten, about four of them.
  const double raw = std::max(max_t * 1.1, 1e-9) / 4;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double tick = raw <= mag       ? mag
                      : raw <= 2 * mag ? 2 * mag
                      : raw <= 5 * mag ? 5 * mag
                                       : 10 * mag;
  max_t = tick * std::ceil(std::max(max_t * 1.1, 1e-9) / tick);
  auto X = [&](double w) { return px0 + static_cast<float>(w / max_w) * pw; };
  auto Y = [&](double t) { return py0 + ph - static_cast<float>(t / max_t) * ph; };
  dl->AddRectFilled(ImVec2(px0, py0), ImVec2(px0 + pw, py0 + ph), IM_COL32(0x16, 0x18, 0x1D, 0xFF));
  dl->AddLine(ImVec2(px0, py0 + ph), ImVec2(px0 + pw, py0 + ph), kAxis);
  dl->AddLine(ImVec2(px0, py0), ImVec2(px0, py0 + ph), kAxis);
  for (double t = 0; t <= max_t * 1.0001; t += tick) {  // y ticks
    std::string label = Short(t);
    float y = Y(t);
    dl->AddLine(ImVec2(px0 - 4, y), ImVec2(px0, y), kAxis);
    ImVec2 sz = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(px0 - 6 - sz.x, y - sz.y / 2), kAxis, label.c_str());
  }
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const ScalingRun& run = r.runs[i];
    out.measured.emplace_back(X(run.workers), Y(run.throughput_steps_per_s));
    out.ideal.emplace_back(X(run.workers), Y(ideal[i]));
    std::string label = std::to_string(run.workers);
    float x = X(run.workers);
    dl->AddLine(ImVec2(x, py0 + ph), ImVec2(x, py0 + ph + 4), kAxis);
    dl->AddText(ImVec2(x - ImGui::CalcTextSize(label.c_str()).x / 2, py0 + ph + 5), kAxis,
                label.c_str());
  }
  const char* xlabel = "workers";
  dl->AddText(ImVec2(px0 + pw / 2 - ImGui::CalcTextSize(xlabel).x / 2, py0 + ph + 22), kAxis,
              xlabel);
  for (size_t i = 1; i < r.runs.size(); ++i) {  // the ideal, dashed
    ImVec2 a(out.ideal[i - 1].first, out.ideal[i - 1].second);
    ImVec2 b(out.ideal[i].first, out.ideal[i].second);
    const int dashes = 12;
    for (int d = 0; d < dashes; d += 2) {
      float t0 = static_cast<float>(d) / dashes, t1 = static_cast<float>(d + 1) / dashes;
      dl->AddLine(ImVec2(a.x + (b.x - a.x) * t0, a.y + (b.y - a.y) * t0),
                  ImVec2(a.x + (b.x - a.x) * t1, a.y + (b.y - a.y) * t1), kIdeal, 2);
    }
  }
  for (size_t i = 1; i < r.runs.size(); ++i) {  // measured; orange where scaling-limit fired
    ImU32 col = LimitBetween(s, r.runs[i - 1], r.runs[i]) ? kLimit : kMeasured;
    dl->AddLine(ImVec2(out.measured[i - 1].first, out.measured[i - 1].second),
                ImVec2(out.measured[i].first, out.measured[i].second), col, 3);
  }
  for (size_t i = 0; i < r.runs.size(); ++i) {
    ImVec2 p(out.measured[i].first, out.measured[i].second);
    dl->AddCircleFilled(p, 5, kMeasured);
    std::string label = fmt::format("{} ({:.0f}%)", Short(r.runs[i].throughput_steps_per_s),
                                    100 * r.runs[i].efficiency);
    dl->AddText(ImVec2(p.x - ImGui::CalcTextSize(label.c_str()).x / 2, p.y - 20), kText,
                label.c_str());
    if (ImGui::IsMouseHoveringRect(ImVec2(p.x - 8, p.y - 8), ImVec2(p.x + 8, p.y + 8))) {
      const ScalingRun& run = r.runs[i];
      ImGui::SetTooltip(
          "%s\n%d workers, %d PS\nthroughput %.4g %s (ideal %.4g)\nspeed-up %.2fx of ideal "
          "%.2fx, efficiency %.0f%%\nmedian step %s\n%s",
          run.name.c_str(), run.workers, run.ps, run.throughput_steps_per_s,
          run.throughput_unit.c_str(), ideal[i], run.speedup, run.ideal_speedup,
          100 * run.efficiency, FormatNs(static_cast<double>(run.step_median_ns)).c_str(),
          run.throughput_source.c_str());
    }
  }
  ImGui::Dummy(ImVec2(avail.x, std::max(avail.y, ph + top + bottom)));
}

void DrawPsBusyPerRun(const Snapshot& s, ViewState* v) {
  const ScalingResult& r = *s.scaling;
  std::vector<ViewState::Scaling::Bar>& bars = v->scaling.bars;
  bars.clear();
  ImGui::TextDisabled("busy share of each PS per run; red: at or above %.0f%% (saturated)",
                      s.saturation_pct);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const float left = 40, bottom = 40, top = 8;
  const float pw = std::max(avail.x - left - 8, 60.0f),
              ph = std::max(avail.y - top - bottom, 60.0f);
  const float px0 = o.x + left, py0 = o.y + top;
  auto Y = [&](double pct) {
    return py0 + ph - static_cast<float>(std::clamp(pct, 0.0, 100.0) / 100) * ph;
  };
  for (int pct = 0; pct <= 100; pct += 25) {
    std::string label = fmt::format("{}%", pct);
    float y = Y(pct);
    dl->AddLine(ImVec2(px0, y), ImVec2(px0 + pw, y), IM_COL32(0x30, 0x33, 0x3A, 0xFF));
    ImVec2 sz = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(px0 - 4 - sz.x, y - sz.y / 2), kAxis, label.c_str());
  }
  const float sat_y = Y(s.saturation_pct);
  for (float x = px0; x < px0 + pw; x += 10) {  // the saturation line, dashed
    dl->AddLine(ImVec2(x, sat_y), ImVec2(std::min(x + 5, px0 + pw), sat_y), kLimit);
  }
  const float group_w = pw / static_cast<float>(std::max<size_t>(r.runs.size(), 1));
  for (size_t i = 0; i < r.runs.size(); ++i) {
    const ScalingRun& run = r.runs[i];
    const float gx = px0 + group_w * static_cast<float>(i);
    const size_t n = std::max<size_t>(run.ps_busy.size(), 1);
    const float bw = std::max((group_w - 16) / static_cast<float>(n), 2.0f);
    for (size_t j = 0; j < run.ps_busy.size(); ++j) {
      const ScalingPs& ps = run.ps_busy[j];
      ViewState::Scaling::Bar b;
      b.run = i;
      b.task = ps.task;
      b.busy_pct = ps.busy_pct;
      b.hot = ps.busy_pct >= s.saturation_pct;
      b.x = gx + 8 + bw * static_cast<float>(j);
      b.w = std::max(bw - 2, 1.0f);
      b.y = Y(std::max(ps.busy_pct, 0.0));
      b.h = py0 + ph - b.y;
      ImVec2 b0(b.x, Y(100)), b1(b.x + b.w, py0 + ph);
      dl->AddRectFilled(b0, b1, kTrack);
      if (ps.busy_pct >= 0) {
        dl->AddRectFilled(ImVec2(b.x, b.y), b1, b.hot ? colors::kHot : colors::kPsBar);
      }
      if (ImGui::IsMouseHoveringRect(b0, b1)) {
        std::string var = ps.top_variable.empty()
                              ? std::string()
                              : fmt::format("\nmost op time on {} ({:.0f}%)", ps.top_variable,
                                            ps.top_variable_pct);
        ImGui::SetTooltip(
            "%s at %d workers: %s (%s)%s", ps.task.c_str(), run.workers,
            ps.busy_pct >= 0 ? fmt::format("{:.1f}%", ps.busy_pct).c_str() : "unknown",
            ps.basis.c_str(), var.c_str());
      }
      bars.push_back(std::move(b));
    }
    if (run.ps_busy.empty()) {
      dl->AddText(ImVec2(gx + 8, py0 + ph - 20), kAxis, "no PS figures");
    }
    std::string label = fmt::format("{} workers", run.workers);
    ImVec2 sz = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(gx + group_w / 2 - sz.x / 2, py0 + ph + 6), kText, label.c_str());
  }
  ImGui::Dummy(ImVec2(avail.x, std::max(avail.y, ph + top + bottom)));
}

void DrawScalingRunsTable(const Snapshot& s) {
  const ScalingResult& r = *s.scaling;
  for (const std::string& w : r.warnings) {
    ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1), "warning: %s", w.c_str());
  }
  constexpr ImGuiTableFlags kFlags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg |
                                     ImGuiTableFlags_ScrollX | ImGuiTableFlags_ScrollY |
                                     ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##runs", 11, kFlags)) return;
  for (const char* h : {"run", "workers", "PS", "throughput", "speed-up", "ideal", "efficiency",
                        "median step", "busiest PS", "CPU of node", "throughput from"}) {
    ImGui::TableSetupColumn(h);
  }
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableHeadersRow();
  for (const ScalingRun& run : r.runs) {
    const ScalingPs* hot = nullptr;
    for (const ScalingPs& ps : run.ps_busy) {
      if (hot == nullptr || ps.busy_pct > hot->busy_pct) hot = &ps;
    }
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(run.name.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%d", run.workers);
    ImGui::TableNextColumn();
    ImGui::Text("%d", run.ps);
    ImGui::TableNextColumn();
    ImGui::Text("%.4g %s", run.throughput_steps_per_s, run.throughput_unit.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.2fx", run.speedup);
    ImGui::TableNextColumn();
    ImGui::Text("%.2fx", run.ideal_speedup);
    ImGui::TableNextColumn();
    ImGui::Text("%.0f%%", 100 * run.efficiency);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(
        run.step_median_ns > 0 ? FormatNs(static_cast<double>(run.step_median_ns)).c_str() : "-");
    ImGui::TableNextColumn();
    if (hot != nullptr && hot->busy_pct >= 0) {
      ImGui::Text("%s %.0f%%", hot->task.c_str(), hot->busy_pct);
    } else {
      ImGui::TextUnformatted("-");
    }
    ImGui::TableNextColumn();
    if (run.cpu_used_pct >= 0) {
      ImGui::Text("%.0f%%", run.cpu_used_pct);
    } else {
      ImGui::TextUnformatted("-");
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(run.throughput_source.c_str());
  }
  ImGui::EndTable();
}

}  // namespace tfdiag::view

namespace tfdiag::view {

// The "Scaling outlook" tab of a single profile (issue 44 item 3, analyzers/outlook.h): the
// verdict, a chart of predicted steps/s against workers (as the job is, after Fix first, and the
// ideal linear from the captured count; the saturation point marked) and the table of points.
void DrawOutlookPanel(const Snapshot& s, ViewState* v) {
  const Outlook& o = s.analysis.outlook;
  ViewState::OutlookDrawn& out = v->outlook;
  out = {};
  if (!o.set) {
    ImGui::TextWrapped("%s", o.withheld.empty() ? "No scaling outlook: no worker steps or no PS."
                                                : ("Not predicted: " + o.withheld).c_str());
    return;
  }
  ImGui::TextWrapped("%s", o.verdict.c_str());
  ImGui::TextDisabled("confidence %s%s%s", o.confidence.c_str(),
                      o.confidence_why.empty() ? "" : ": ", o.confidence_why.c_str());
  const bool fix = !o.fix_rule.empty();
  const float table_h = ImGui::GetTextLineHeightWithSpacing() * (o.points.size() + 2.5f);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float left = 56, bottom = 40, top = 10, right = 16;
  const float chart_h = std::max(avail.y - table_h, 120.0f);
  const float px0 = origin.x + left, py0 = origin.y + top;
  const float pw = std::max(avail.x - left - right, 60.0f);
  const float ph = std::max(chart_h - top - bottom, 40.0f);
  out.chart_x = px0, out.chart_y = py0, out.chart_w = pw, out.chart_h = ph;
  double max_w = 1, max_t = 1e-9;
  const OutlookPoint& base = o.points.front();
  for (const OutlookPoint& p : o.points) {
    max_w = std::max(max_w, double(p.workers));
    max_t = std::max({max_t, p.steps_per_s, p.steps_per_s_after_fix,
                      base.steps_per_s * p.workers / base.workers});
  }
  max_w *= 1.05, max_t *= 1.1;
  auto X = [&](double w) { return px0 + static_cast<float>(w / max_w) * pw; };
  auto Y = [&](double t) { return py0 + ph - static_cast<float>(std::min(t / max_t, 1.0)) * ph; };
  dl->AddRectFilled(ImVec2(px0, py0), ImVec2(px0 + pw, py0 + ph), IM_COL32(0x16, 0x18, 0x1D, 0xFF));
  dl->AddLine(ImVec2(px0, py0 + ph), ImVec2(px0 + pw, py0 + ph), kAxis);
  dl->AddLine(ImVec2(px0, py0), ImVec2(px0, py0 + ph), kAxis);
  for (int k = 0; k <= 4; ++k) {  // y ticks: five, at quarters of the range
    const double t = max_t / 1.1 * k / 4;
    const std::string label = Short(t);
    const ImVec2 sz = ImGui::CalcTextSize(label.c_str());
    dl->AddText(ImVec2(px0 - 6 - sz.x, Y(t) - sz.y / 2), kAxis, label.c_str());
  }
  for (const OutlookPoint& p : o.points) {
    out.asis.emplace_back(X(p.workers), Y(p.steps_per_s));
    out.ideal.emplace_back(X(p.workers), Y(base.steps_per_s * p.workers / base.workers));
    if (fix) out.after.emplace_back(X(p.workers), Y(p.steps_per_s_after_fix));
    const std::string label = std::to_string(p.workers);
    dl->AddText(ImVec2(X(p.workers) - ImGui::CalcTextSize(label.c_str()).x / 2, py0 + ph + 5),
                kAxis, label.c_str());
  }
  auto polyline = [&](const std::vector<std::pair<float, float>>& pts, ImU32 col, float thick) {
    for (size_t i = 1; i < pts.size(); ++i) {
      dl->AddLine(ImVec2(pts[i - 1].first, pts[i - 1].second), ImVec2(pts[i].first, pts[i].second),
                  col, thick);
    }
    for (const auto& [x, y] : pts) dl->AddCircleFilled(ImVec2(x, y), 3.5f, col);
  };
  polyline(out.ideal, kIdeal, 1.0f);
  polyline(out.asis, kMeasured, 2.0f);
  if (fix) polyline(out.after, kLimit, 2.0f);
  if (o.saturates_at.workers > 0) {  // the saturation point: a vertical line
    out.saturation_x = X(o.saturates_at.workers);
    dl->AddLine(ImVec2(out.saturation_x, py0), ImVec2(out.saturation_x, py0 + ph), kHotLine, 1.5f);
    const std::string label = fmt::format("saturates: {}", o.saturates_at.workers);
    dl->AddText(ImVec2(out.saturation_x + 4, py0 + 2), kText, label.c_str());
  }
  const std::string legend = fix ? fmt::format(
                                       "blue: as is; orange: after Fix first ({}); grey: "
                                       "ideal",
                                       o.fix_rule)
                                 : std::string("blue: as is; grey: ideal");
  dl->AddText(ImVec2(px0, py0 + ph + 22), kAxis, legend.c_str());
  ImGui::Dummy(ImVec2(avail.x, chart_h));
  constexpr ImGuiTableFlags kFlags =
      ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("##outlook", fix ? 4 : 3, kFlags)) return;
  ImGui::TableSetupColumn("workers");
  ImGui::TableSetupColumn("steps/s");
  ImGui::TableSetupColumn("efficiency");
  if (fix) ImGui::TableSetupColumn("after Fix first");
  ImGui::TableHeadersRow();
  for (const OutlookPoint& p : o.points) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", p.workers);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(Short(p.steps_per_s).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.0f%%", 100 * p.efficiency);
    if (fix) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(Short(p.steps_per_s_after_fix).c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace tfdiag::view
