#include "analyzers/k8s_live_mismatch.h"

#include <cmath>

#include "analyzers/live_stats.h"

namespace tfdiag {

std::vector<Finding> RunK8sLiveMismatch(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.k8s == nullptr) return out;
  const Capture& c = in.capture;
  const double max_diff_pct = rule.Param("max_diff_pct", 1);
  for (const ProcessRow& p : c.processes) {
    std::string label(c.TaskLabelOf(p.task));  // "ps:0"
    std::string role = label.substr(0, label.find(':'));
    const K8sReplicaType* rt = nullptr;
    for (const K8sReplicaType& r : in.k8s->replicas) {
      if (r.role == role) rt = &r;
    }
    if (rt == nullptr || rt->containers.empty()) continue;
    // The TF container: the first with a CPU limit, else the first.
    const K8sContainer* tc = &rt->containers[0];
    for (const K8sContainer& k : rt->containers) {
      if (k.res.cpu_limit_m >= 0) {
        tc = &k;
        break;
      }
    }
    const double manifest = tc->res.cpu_limit_m >= 0 ? tc->res.cpu_limit_m / 1000.0 : 0;
    const double live = p.cpu_limit;
    const bool differ =
        (manifest > 0) != (live > 0) ||
        (manifest > 0 && std::fabs(live - manifest) > manifest * max_diff_pct / 100.0);
    if (!differ) continue;
    Finding f = MakeFinding(rule, "task", label);
    f.task = label;
    f.ops.push_back(tc->source.Where() + ".resources.limits.cpu");
    const std::string who = ProcessWho(c, p);
    f.summary = fmt::format(
        "{}{}: live CPU limit {} but the manifest says {} ({}): the pods running are not "
        "deployed from this manifest, or something (a LimitRange, a webhook) changed it",
        label, who.empty() ? "" : " (" + who + ")",
        live > 0 ? fmt::format("{:.3g} CPUs", live) : std::string("none"),
        manifest > 0 ? fmt::format("{:.3g} CPUs", manifest) : std::string("none"),
        tc->source.Where());
    f.evidence = {{"live CPU limit", live, "CPUs"}, {"manifest CPU limit", manifest, "CPUs"}};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
