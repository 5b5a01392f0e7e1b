// Nodes tab (issue 30 item 8): for a cluster bundle (`analyze --prometheus --save`), the nodes
// the job's pods ran on (ProcessRow::node, from kube_pod_info): which PS and workers share each
// node, and each node's CPU used (cAdvisor, ProcessStats::cpu_cores) against its pods' CFS
// limits (kube_pod_container_resource_limits), one segment per pod: its limit as a frame, its
// use filled in.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/escape.h"
#include "core/plural.h"
#include "viewer/panels/panels.h"

namespace tfdiag::view {

namespace {

constexpr ImU32 kWorkerBar = IM_COL32(0x5B, 0xC0, 0xBE, 0xFF);
constexpr ImU32 kFrame = IM_COL32(0x90, 0x90, 0x98, 0xFF);
constexpr ImU32 kTrack = IM_COL32(0x1C, 0x1E, 0x24, 0xFF);

// "4", "0.25": CPUs without trailing zeros.
std::string Cpus(double x) {
  std::string s = fmt::format("{:.2f}", x);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

std::vector<NodeLoad> NodeLoads(const Snapshot& s) {
  const Capture& c = s.capture;
  std::map<std::string, NodeLoad> by_node;
  bool any_node = false;
  for (const ProcessRow& p : c.processes) any_node |= p.node != 0;
  if (!any_node) return {};
  for (uint32_t i = 0; i < s.analysis.processes.size(); ++i) {
    const ProcessStats& ps = s.analysis.processes[i];
    if (ps.process >= c.processes.size()) continue;
    const ProcessRow& p = c.processes[ps.process];
    NodeLoad& n = by_node[std::string(c.Str(p.node))];
    n.node = c.Str(p.node);
    n.stats.push_back(i);
    if (ps.kind == JobKind::kPs) ++n.ps;
    if (ps.kind == JobKind::kWorker || ps.kind == JobKind::kChief || ps.kind == JobKind::kMaster) {
      ++n.workers;
    }
    n.cpu_used += std::max(ps.cpu_cores, 0.0);
    if (p.cpu_limit > 0) {
      n.cpu_limit = std::max(n.cpu_limit, 0.0) + p.cpu_limit;
    } else {
      ++n.unlimited;
    }
    if (p.cpu_request > 0) n.cpu_request = std::max(n.cpu_request, 0.0) + p.cpu_request;
  }
  std::vector<NodeLoad> out;
  for (auto& [name, n] : by_node) {
    // PS first, then the others, each in task order.
    std::stable_sort(n.stats.begin(), n.stats.end(), [&](uint32_t a, uint32_t b) {
      const ProcessStats &x = s.analysis.processes[a], &y = s.analysis.processes[b];
      const bool xp = x.kind == JobKind::kPs, yp = y.kind == JobKind::kPs;
      if (xp != yp) return xp;
      return c.processes[x.process].task < c.processes[y.process].task;
    });
    out.push_back(std::move(n));
  }
  // Named nodes in name order; pods whose node is unknown (Pending) last.
  std::stable_partition(out.begin(), out.end(), [](const NodeLoad& n) { return !n.node.empty(); });
  return out;
}

void DrawNodesPanel(const Snapshot& s, ViewState* v) {
  const Capture& c = s.capture;
  const std::vector<NodeLoad> nodes = NodeLoads(s);
  v->node_bars.clear();
  if (nodes.empty()) {
    ImGui::TextWrapped(
        "No nodes. Cluster bundles (`tfdiag analyze --prometheus ... --save FILE`) say which node "
        "each pod ran on; timelines and bundles from `tfdiag attach` do not.");
    return;
  }
  int shared = 0;
  for (const NodeLoad& n : nodes) shared += !n.node.empty() && n.ps >= 2;
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  const std::string head =
      Count(static_cast<int64_t>(nodes.size()), "node") +
      (shared ? fmt::format(", {} with 2 or more PS", shared) : std::string()) +
      "; bar per node: one segment per pod, its CPU limit framed, its CPU used filled (PS blue, "
      "the hot PS red, workers teal)";
  ImGui::TextWrapped("%s", head.c_str());
  ImGui::PopStyleColor();
  const uint32_t hot = HotPsTask(s);
  // One scale for every node: the widest node's limits (or use, where a pod has no limit).
  double scale_cpus = 1;
  for (const NodeLoad& n : nodes) {
    double w = 0;
    for (uint32_t i : n.stats) {
      const ProcessStats& ps = s.analysis.processes[i];
      const ProcessRow& p = c.processes[ps.process];
      w += std::max(p.cpu_limit > 0 ? p.cpu_limit : 0.0, ps.cpu_cores);
    }
    scale_cpus = std::max(scale_cpus, w);
  }
  ImGui::BeginChild("##nodes", ImVec2(0, 0), false);
  const float bar_w = std::max(ImGui::GetContentRegionAvail().x - 12, 100.0f), bar_h = 18;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  for (const NodeLoad& n : nodes) {
    const std::string name = n.node.empty() ? "(node unknown: Pending pods)" : Printable(n.node);
    ImGui::TextUnformatted(name.c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%d PS, %d workers", n.ps, n.workers);
    if (!n.node.empty() && n.ps >= 2) {
      ImGui::SameLine();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(colors::kHot), "%d PS share this node",
                         n.ps);
    }
    const ImVec2 o = ImGui::GetCursorScreenPos();
    dl->AddRectFilled(o, ImVec2(o.x + bar_w, o.y + bar_h), kTrack);
    float x = o.x;
    std::string tasks;
    for (uint32_t i : n.stats) {
      const ProcessStats& ps = s.analysis.processes[i];
      const ProcessRow& p = c.processes[ps.process];
      const double frame = std::max(p.cpu_limit > 0 ? p.cpu_limit : 0.0, ps.cpu_cores);
      const float w = static_cast<float>(frame / scale_cpus * bar_w);
      const float used = static_cast<float>(std::max(ps.cpu_cores, 0.0) / scale_cpus * bar_w);
      const ImU32 col = ps.kind != JobKind::kPs ? kWorkerBar
                        : p.task == hot         ? colors::kHot
                                                : colors::kPsBar;
      dl->AddRectFilled(ImVec2(x, o.y + 2), ImVec2(x + used, o.y + bar_h - 2), col);
      if (p.cpu_limit > 0) dl->AddRect(ImVec2(x, o.y), ImVec2(x + w, o.y + bar_h), kFrame);
      const std::string label = Printable(ps.task);
      if (ImGui::CalcTextSize(label.c_str()).x + 6 < w) {
        dl->AddText(ImVec2(x + 3, o.y + 1), IM_COL32(0xF0, 0xF0, 0xF0, 0xFF), label.c_str());
      }
      tasks += (tasks.empty() ? "" : ", ") + label;
      x += w;
    }
    v->node_bars.push_back({n.node, o.x, o.y, bar_w, bar_h});
    ImGui::Dummy(ImVec2(bar_w, bar_h));
    std::string limit = n.cpu_limit < 0 ? "-" : fmt::format("{} CPUs", Cpus(n.cpu_limit));
    if (n.unlimited > 0 && n.cpu_limit >= 0) {
      limit += fmt::format(" (+{} pod{} with no limit)", n.unlimited, n.unlimited == 1 ? "" : "s");
    }
    const std::string pct = n.cpu_limit > 0 && n.unlimited == 0
                                ? fmt::format(" ({:.0f}%)", 100 * n.cpu_used / n.cpu_limit)
                                : std::string();
    const std::string line =
        fmt::format("CPU used {} of limits {}{} | requests {} | {}", Cpus(n.cpu_used), limit, pct,
                    OrDash(n.cpu_request, Cpus(n.cpu_request) + " CPUs"), tasks);
    ImGui::PushTextWrapPos(0);
    ImGui::TextDisabled("%s", line.c_str());
    ImGui::PopTextWrapPos();
    v->figures.push_back(name + ": " + line);
    ImGui::Spacing();
  }
  ImGui::EndChild();
}

}  // namespace tfdiag::view
