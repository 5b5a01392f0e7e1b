#include "analyzers/cpu_pinning.h"

namespace tfdiag {

std::vector<Finding> RunCpuPinning(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  for (const ProcessStats& p : in.processes) {
    const ProcessRow& row = c.processes[p.process];
    // A CFS-limited task whose cpuset covers the whole node shares every core ("cpushare").
    if (row.cpu_limit <= 0 || row.host_cpus <= 0 || row.cpuset_cpus < row.host_cpus ||
        row.cpu_limit >= row.host_cpus) {
      continue;
    }
    Finding f = MakeFinding(rule, "task", p.task);
    f.task = p.task;
    const std::string qos(c.Str(row.qos));
    f.summary = fmt::format(
        "{} is limited to {:.2g} CPU by CFS quota but may run on all {} CPUs of the node (cpuset "
        "{}){}: its threads migrate and share cores instead of owning them",
        p.task, row.cpu_limit, row.host_cpus, c.Str(row.cpuset),
        qos.empty() ? "" : fmt::format(", QoS {}", qos));
    f.evidence = {{"CFS limit", row.cpu_limit, "CPUs"},
                  {"CPUs in its cpuset", double(row.cpuset_cpus), "count"},
                  {"CPUs of the node", double(row.host_cpus), "count"}};
    if (p.throttled_pct >= 0) f.evidence.push_back({"throttled CFS periods", p.throttled_pct, "%"});
    f.ops = {std::string(c.Str(row.cgroup))};
    f.range_start = row.first_ns;
    f.range_end = row.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
