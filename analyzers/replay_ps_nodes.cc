#include "analyzers/replay_ps_nodes.h"

#include <algorithm>
#include <map>
#include <string>

namespace tfdiag {

std::vector<int> PsNodesOf(const AnalysisInput& in, const ReplayModel& m) {
  const Capture& c = in.capture;
  std::map<int, std::string> by_index;  // PS task index -> node
  if (in.k8s != nullptr) {
    for (const K8sPod& p : in.k8s->pods) {
      if (p.role != "ps" || p.index < 0 || p.node.empty()) continue;
      // Two PS pods of one index on different nodes (a list of several jobs): which one the
      // capture's task ran in is not known, so no PS's node is.
      const auto [it, added] = by_index.emplace(p.index, p.node);
      if (!added && it->second != p.node) return {};
    }
  }
  if (by_index.empty()) {
    for (const ProcessRow& p : c.processes) {
      if (p.task < c.tasks.size() && c.tasks[p.task].kind == JobKind::kPs && p.node != 0 &&
          !c.Str(p.pod).empty())
        by_index.emplace(c.tasks[p.task].index, std::string(c.Str(p.node)));
    }
  }
  std::vector<int> out;
  std::map<std::string, int> ids;
  for (const ReplayModel::Ps& p : m.ps) {
    if (p.task >= c.tasks.size()) return {};
    const auto it = by_index.find(c.tasks[p.task].index);
    if (it == by_index.end()) return {};
    out.push_back(ids.emplace(it->second, int(ids.size())).first->second);
  }
  return out;
}

std::map<int, int> PsPerNode(const std::vector<int>& ps_node) {
  std::map<int, int> per_node;
  for (const int n : ps_node) ++per_node[n];
  return per_node;
}

bool PsPacked(const std::vector<int>& ps_node) {
  for (const auto& [node, count] : PsPerNode(ps_node)) {
    if (count > 1) return true;
  }
  return false;
}

std::vector<int> PsNodesAfter(const std::vector<int>& ps_node, const Fix& fix) {
  if (ps_node.empty()) return {};
  std::vector<int> out = ps_node;
  int next = *std::max_element(out.begin(), out.end()) + 1;
  if (fix.spread_ps) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = int(i);
    return out;
  }
  if (fix.ps_count > 0) {
    out.resize(size_t(std::min<size_t>(out.size(), size_t(fix.ps_count))));
    while (out.size() < size_t(fix.ps_count)) out.push_back(next++);
  }
  return out;
}

}  // namespace tfdiag
