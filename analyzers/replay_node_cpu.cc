#include "analyzers/replay_node_cpu.h"

#include <algorithm>
#include <map>

namespace tfdiag {

NodeCpuAfter BusiestNodeAfter(const AnalysisInput& in, double step_ns, double after_ns) {
  NodeCpuAfter best;
  if (step_ns <= 0 || after_ns <= 0) return best;
  const Capture& c = in.capture;
  std::map<std::string, NodeCpuAfter> nodes;
  for (const ProcessStats& p : in.processes) {
    const ProcessRow& row = c.processes[p.process];
    if (p.samples < 2 || row.host_cpus <= 0) continue;
    std::string node(c.Str(row.node));
    if (node.empty()) node = c.meta.host.empty() ? std::string("this node") : c.meta.host;
    NodeCpuAfter& n = nodes[node];
    n.node = node;
    n.cpus = std::max(n.cpus, int(row.host_cpus));
    n.used += p.cpu_cores;
  }
  for (auto& [name, n] : nodes) {
    n.after = n.used * step_ns / after_ns;
    if (best.node.empty() || n.after / n.cpus > best.after / best.cpus) best = n;
  }
  best.nodes = int(nodes.size());
  return best;
}

}  // namespace tfdiag
