#include "viewer/app.h"

#include <fmt/format.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>

#include "core/plural.h"
#include "core/saturating.h"

namespace tfdiag::view {

namespace {

constexpr ImGuiWindowFlags kFixed = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize |
                                    ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                    ImGuiWindowFlags_NoBringToFrontOnFocus;

}  // namespace

std::string JoinPaths(const std::vector<std::string>& paths) {
  std::string s;
  for (std::string p : paths) {
    // A directory given as "logs/" is named by its last component, not by "" (issue 39).
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    std::string base = p.substr(
        p.find_last_of('/') == std::string::npos || p == "/" ? 0 : p.find_last_of('/') + 1);
    s += (s.empty() ? "" : ", ") + base;
  }
  return s;
}

App::App(AppOptions options) : options_(std::move(options)), loader_(options_.load) {}

void App::TakeSnapshot() {
  if (snapshot_ || !loader_.Done()) return;
  snapshot_ = loader_.snapshot();
  if (!snapshot_) return;
  // A bundle without a timeline opens on its CPU samples.
  if (!snapshot_->capture.processes.empty() && snapshot_->capture.ops.empty()) view_.bottom_tab = 1;
  // A cluster bundle (its pods' nodes known) opens on its nodes.
  if (view_.bottom_tab == 1 && !NodeLoads(*snapshot_).empty()) view_.bottom_tab = 3;
}

Status App::Select(const std::string& which) {
  if (!snapshot_) return UsageError("--select: nothing loaded");
  const auto& findings = snapshot_->analysis.findings;
  int index = -1;
  auto digit = [](char ch) { return ch >= '0' && ch <= '9'; };
  if (!which.empty() && which.size() < 7 && std::all_of(which.begin(), which.end(), digit)) {
    index = std::atoi(which.c_str());
    if (index >= static_cast<int>(findings.size())) index = -1;
  } else {
    for (size_t i = 0; i < findings.size() && index < 0; ++i) {
      if (findings[i].rule_id == which) index = static_cast<int>(i);
    }
  }
  if (index < 0) {
    std::string have;
    for (size_t i = 0; i < findings.size() && i < 20; ++i) {
      have += fmt::format("{}{} {} {}", i ? ", " : "", i, findings[i].rule_id, findings[i].subject);
    }
    if (findings.size() > 20) have += fmt::format(", ... {} in all", findings.size());
    return UsageError("--select {}: no such finding ({})", which,
                      have.empty() ? "no rule fired" : "findings: " + have);
  }
  SelectFinding(*snapshot_, &view_, index);
  return OkStatus();
}

Status App::SelectPath(const std::string& task) {
  if (!snapshot_) return UsageError("--path: nothing loaded");
  if (task == "none") {
    view::SelectPath(*snapshot_, &view_, kNoIndex, false);
    return OkStatus();
  }
  const std::vector<uint32_t> tasks = PathTasks(*snapshot_);
  const uint32_t t = snapshot_->capture.FindTask(task);
  if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) {
    std::string have;
    for (size_t i = 0; i < tasks.size() && i < 20; ++i) {
      have += fmt::format("{}{}", i ? ", " : "", snapshot_->capture.TaskLabelOf(tasks[i]));
    }
    if (tasks.size() > 20) have += fmt::format(", ... {} in all", tasks.size());
    return UsageError("--path {}: no critical path for that task ({})", task,
                      have.empty() ? "no worker has steps" : "workers with one: " + have);
  }
  view::SelectPath(*snapshot_, &view_, t, true);
  return OkStatus();
}

void App::BenchView(int i, int n) {
  if (!snapshot_) return;
  const Capture& c = snapshot_->capture;
  double full = static_cast<double>(std::max<TimeNs>(c.end - c.start, 1000));
  double t = n > 1 ? static_cast<double>(i) / (n - 1) : 0;
  double tri = 1 - std::fabs(2 * t - 1);  // 0 -> 1 -> 0
  double span = full * std::pow(2000.0, -tri);
  double center = full * (0.1 + 0.8 * std::fmod(3 * t, 1.0));  // relative to c.start
  view_.view_start = center - span / 2;
  view_.view_end = center + span / 2;
}

void App::Panel(const char* title, const char* name, ImVec2 pos, ImVec2 size,
                ImGuiWindowFlags flags) {
  ImGui::SetNextWindowPos(pos, ImGuiCond_Always);
  ImGui::SetNextWindowSize(size, ImGuiCond_Always);
  ImGui::Begin(title, nullptr, kFixed | flags);
  rects_.push_back({name, pos.x, pos.y, size.x, size.y});
}

void App::StatusBar(ImVec2 size, float h) {
  Panel("##status", "status", ImVec2(0, 0), ImVec2(size.x, h),
        ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar);
  ImGui::Text("tfdiag view");
  ImGui::SameLine();
  if (!snapshot_) {
    LoadProgress p = loader_.Progress();
    std::string label =
        p.phase == LoadProgress::kReading
            ? fmt::format("reading file {}/{}: {:.0f}%", p.file + 1, p.files,
                          p.bytes_total > 0 ? 100.0 * p.bytes_done / p.bytes_total : 0.0)
            : p.PhaseName();
    ImGui::ProgressBar(static_cast<float>(p.Fraction()), ImVec2(std::min(size.x * 0.5f, 500.0f), 0),
                       label.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled(
        "%s",
        JoinPaths(options_.load.names.empty() ? options_.load.paths : options_.load.names).c_str());
  } else if (snapshot_->scaling) {
    std::string workers;
    for (const ScalingRun& r : snapshot_->scaling->runs) {
      workers += fmt::format("{}{}", workers.empty() ? "" : ", ", r.workers);
    }
    view_.status = fmt::format("| scaling: {} ({} workers) | {}",
                               Count(snapshot_->scaling->runs.size(), "run"), workers,
                               Count(snapshot_->analysis.findings.size(), "finding"));
    ImGui::TextDisabled("%s", view_.status.c_str());
  } else {
    const Capture& c = snapshot_->capture;
    // The windows the text report gives (report/text_report.cc, Cluster): the timeline's span
    // ("span"), and the recording's window for sampled processes ("live ... over 47.0 s"), not
    // the span of the samples (a task that started late or exited early shortens it: 26 s).
    const std::string span =
        c.ops.empty() ? "" : ", span " + FormatNs(static_cast<double>(SatSub(c.end, c.start)));
    std::string procs =
        c.processes.empty()
            ? ""
            : fmt::format(", {} over {:.1f} s", Count(c.processes.size(), "process"),
                          (c.meta.window_end - c.meta.window_start) / 1e9);
    // Manifests and pod lists alone: nothing recorded, so no "0 ops, span 0 ns".
    const bool recorded = !c.ops.empty() || !c.processes.empty() || !c.tasks.empty();
    if (!recorded) {
      view_.status = fmt::format("| {} | no timeline or samples | {}", JoinPaths(snapshot_->paths),
                                 Count(snapshot_->analysis.findings.size(), "finding"));
    } else {
      view_.status = fmt::format("| {} | {}, {}{}{} | {}", JoinPaths(snapshot_->paths),
                                 Count(c.ops.size(), "op"), Count(c.tasks.size(), "task"), span,
                                 procs, Count(snapshot_->analysis.findings.size(), "finding"));
    }
    ImGui::TextDisabled("%s", view_.status.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("| wheel/W/S zoom, drag/A/D pan, F fit, Shift+wheel scroll");
  }
  ImGui::End();
}

void App::Frame(ImVec2 size) {
  rects_.clear();
  TakeSnapshot();
  const float bar_h = ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().WindowPadding.y;
  StatusBar(size, bar_h);
  if (!snapshot_) return;
  const Snapshot& s = *snapshot_;
  if (s.scaling) return ScalingFrame(s, size, bar_h);
  view_.track_w = 0;  // set again by the timeline when it is drawn
  view_.drawn_rows.clear();
  view_.matrix = {};
  view_.figures.clear();
  const float body = size.y - bar_h;
  const float left_w = std::clamp(size.x * 0.3f, 320.0f, 560.0f);
  const float findings_h = std::floor(body * 0.5f);
  const float timeline_h = std::floor(body * 0.62f);

  std::string title = fmt::format("Findings ({})###findings", s.analysis.findings.size());
  Panel(title.c_str(), "findings", ImVec2(0, bar_h), ImVec2(left_w, findings_h), 0);
  DrawFindingsPanel(s, &view_);
  ImGui::End();

  Panel("PS load###ps_load", "ps_load", ImVec2(0, bar_h + findings_h),
        ImVec2(left_w, body - findings_h), 0);
  DrawPsLoadPanel(s, &view_);
  ImGui::End();

  // A bundle without a timeline gives the timeline's room to the CPU samples.
  const bool live_only = s.capture.ops.empty() && !s.capture.processes.empty();
  float details_y = bar_h;
  if (!live_only) {
    Panel("Timeline###timeline", "timeline", ImVec2(left_w, bar_h),
          ImVec2(size.x - left_w, timeline_h),
          ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    DrawTimelinePanel(s, &view_);
    ImGui::End();
    details_y += timeline_h;
  }

  Panel("##details", "details", ImVec2(left_w, details_y),
        ImVec2(size.x - left_w, size.y - details_y), ImGuiWindowFlags_NoTitleBar);
  if (ImGui::BeginTabBar("##tabs")) {
    // Indices as ViewState::bottom_tab; Nodes shown beside CPU.
    static const char* const kTabs[] = {"Tasks", "CPU", "Import statistics", "Nodes",
                                        "Scaling outlook"};
    for (int t : {0, 1, 3, 2, 4}) {
      ImGuiTabItemFlags f = view_.bottom_tab == t ? ImGuiTabItemFlags_SetSelected : 0;
      if (!ImGui::BeginTabItem(kTabs[t], nullptr, f)) continue;
      view_.active_tab = t;
      if (t == 0) DrawTasksPanel(s, &view_);
      if (t == 1) DrawCpuPanel(s, &view_);
      if (t == 2) DrawImportPanel(s, &view_);
      if (t == 3) DrawNodesPanel(s, &view_);
      if (t == 4) DrawOutlookPanel(s, &view_);
      ImGui::EndTabItem();
    }
    view_.bottom_tab = -1;
    ImGui::EndTabBar();
  }
  ImGui::End();
  RecordOverflow();
}

void App::ScalingFrame(const Snapshot& s, ImVec2 size, float bar_h) {
  const float body = size.y - bar_h;
  const float left_w = std::clamp(size.x * 0.3f, 320.0f, 560.0f);
  const float chart_h = std::floor(body * 0.6f);
  const float chart_w = std::floor((size.x - left_w) * 0.5f);
  std::string title = fmt::format("Findings ({})###findings", s.analysis.findings.size());
  Panel(title.c_str(), "findings", ImVec2(0, bar_h), ImVec2(left_w, body), 0);
  DrawFindingsPanel(s, &view_);
  ImGui::End();
  Panel("Throughput###throughput", "throughput", ImVec2(left_w, bar_h), ImVec2(chart_w, chart_h),
        ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawThroughputChart(s, &view_);
  ImGui::End();
  Panel("PS busy per run###ps_busy", "ps_busy", ImVec2(left_w + chart_w, bar_h),
        ImVec2(size.x - left_w - chart_w, chart_h),
        ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawPsBusyPerRun(s, &view_);
  ImGui::End();
  Panel("Runs###runs", "runs", ImVec2(left_w, bar_h + chart_h),
        ImVec2(size.x - left_w, body - chart_h), 0);
  DrawScalingRunsTable(s);
  ImGui::End();
  RecordOverflow();
}

void App::RecordOverflow() {
  view_.overflow.clear();
  // Items of each window drawn this frame end at DC.CursorMaxPos; past the inner clip rect's
  // right edge they are cut off (no window scrolls horizontally). Tables size and clip their
  // own columns, so only windows that are not a table's scrolling region are checked.
  for (ImGuiWindow* w : GImGui->Windows) {
    if (!w->Active || w->Hidden || (w->Flags & ImGuiWindowFlags_Tooltip)) continue;
    if (ImGui::TableFindByID(w->ChildId) != nullptr) continue;
    float past = w->DC.CursorMaxPos.x - w->InnerClipRect.Max.x;
    if (past > 1) view_.overflow.emplace_back(w->Name, past);
  }
}

}  // namespace tfdiag::view
