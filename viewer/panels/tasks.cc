// Tasks panel: a sortable table of the per-task figures (TaskStats); clicking a row focuses the
// task in the timeline.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "analyzers/step_breakdown.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

enum Column {
  kTask,
  kKind,
  kDevices,
  kOps,
  kBusy,
  kBusyPct,
  kOpTime,
  kRecv,
  kRecvTime,
  kSteps,
  kStepMean,
  kStepMedian,
  kBreakdown,
  kTopType,
  kColumns
};

// The sort key of a column (numbers; text columns sort by their position or kind).
double Key(const Capture& c, const TaskStats& t, int col) {
  switch (col) {
    case kBreakdown:  // by input share: the first thing XProf's overview names
      return InputPct(BreakdownOfTask(c, t.task));
    case kKind:
      return static_cast<double>(t.kind);
    case kDevices:
      return t.devices;
    case kOps:
      return static_cast<double>(t.ops);
    case kBusy:
      return static_cast<double>(t.busy_ns);
    case kBusyPct:
      return t.busy_pct;
    case kOpTime:
      return static_cast<double>(t.op_time_ns);
    case kRecv:
      return static_cast<double>(t.recv_count);
    case kRecvTime:
      return static_cast<double>(t.recv_ns);
    case kSteps:
      return static_cast<double>(t.steps);
    case kStepMean:
      return static_cast<double>(t.step_mean_ns);
    case kStepMedian:
      return static_cast<double>(t.step_median_ns);
    case kTopType:
      return t.by_type.empty() ? 0 : static_cast<double>(t.by_type[0].total_ns);
    default:
      return t.task;
  }
}

// XProf's step-time breakdown of the task's steps (analyzers/step_breakdown.h), largest share
// first; "-" without one (no TF2 XSpace).
std::string BreakdownCell(const Capture& c, uint32_t task) {
  const BreakdownTotals b = BreakdownOfTask(c, task);
  return b.empty() ? "-" : BreakdownShareText(b);
}

}  // namespace

void DrawTasksPanel(const Snapshot& s, ViewState* v) {
  const auto& tasks = s.analysis.stats.tasks;
  ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_SortMulti |
                          ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_BordersInnerV |
                          ImGuiTableFlags_ScrollY | ImGuiTableFlags_Resizable |
                          ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_Hideable;
  if (!ImGui::BeginTable("##tasks", kColumns, flags)) return;
  static const char* const kNames[kColumns] = {"task",
                                               "job",
                                               "devices",
                                               "ops",
                                               "busy",
                                               "busy %",
                                               "op time",
                                               "RecvTensor",
                                               "recv time",
                                               "steps",
                                               "step mean",
                                               "step median",
                                               "step time (XProf)",
                                               "top op type (time)"};
  ImGui::TableSetupScrollFreeze(1, 1);
  for (int i = 0; i < kColumns; ++i) {
    ImGuiTableColumnFlags cf = i == kTask ? ImGuiTableColumnFlags_DefaultSort : 0;
    if (i == kTopType) cf |= ImGuiTableColumnFlags_WidthStretch;
    ImGui::TableSetupColumn(kNames[i], cf, 0, static_cast<ImGuiID>(i));
  }
  ImGui::TableHeadersRow();
  // Rows are re-sorted every frame: a few hundred tasks at most, so this costs nothing.
  std::vector<size_t> order(tasks.size());
  std::iota(order.begin(), order.end(), 0);
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      for (int i = 0; i < specs->SpecsCount; ++i) {
        const ImGuiTableColumnSortSpecs& sp = specs->Specs[i];
        double ka = Key(s.capture, tasks[a], sp.ColumnUserID),
               kb = Key(s.capture, tasks[b], sp.ColumnUserID);
        if (ka != kb) return sp.SortDirection == ImGuiSortDirection_Ascending ? ka < kb : ka > kb;
      }
      return a < b;
    });
    specs->SpecsDirty = false;
  }
  for (size_t i : order) {
    const TaskStats& t = tasks[i];
    ImGui::TableNextRow();
    if (t.task == v->focus_task)
      ImGui::TableSetBgColor(ImGuiTableBgTarget_RowBg1, colors::kFocusBg);
    ImGui::TableNextColumn();
    if (ImGui::Selectable(t.label.c_str(), t.task == v->focus_task,
                          ImGuiSelectableFlags_SpanAllColumns)) {
      FocusTask(v, t.task);
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(JobKindName(t.kind).data());
    ImGui::TableNextColumn();
    ImGui::Text("%d", t.devices);
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(t.ops));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(FormatNs(static_cast<double>(t.busy_ns)).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f", t.busy_pct);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(FormatNs(static_cast<double>(t.op_time_ns)).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(t.recv_count));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(FormatNs(static_cast<double>(t.recv_ns)).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%lld", static_cast<long long>(t.steps));
    ImGui::TableNextColumn();
    // No steps: their length is unknown, not 0.
    ImGui::TextUnformatted(t.steps > 0 ? FormatNs(static_cast<double>(t.step_mean_ns)).c_str()
                                       : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(t.steps > 0 ? FormatNs(static_cast<double>(t.step_median_ns)).c_str()
                                       : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(BreakdownCell(s.capture, t.task).c_str());
    ImGui::TableNextColumn();
    std::string top;
    for (size_t k = 0; k < t.by_type.size() && k < 3; ++k) {
      top += fmt::format("{}{} {}", k ? ", " : "", t.by_type[k].type,
                         FormatNs(static_cast<double>(t.by_type[k].total_ns)));
    }
    ImGui::TextUnformatted(top.c_str());
  }
  ImGui::EndTable();
}

}  // namespace tfdiag::view
