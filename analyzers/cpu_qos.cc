#include "analyzers/cpu_qos.h"

namespace tfdiag {

namespace {

// What keeps a container from exclusive cores, "" when nothing does.
std::string Problems(const K8sContainer& c) {
  const K8sResources& r = c.res;
  std::vector<std::string> p;
  if (r.cpu_limit_m < 0) {
    p.push_back(r.cpu_request_m < 0 ? "no CPU request or limit" : "no CPU limit");
  } else {
    if (r.CpuRequestM() != r.cpu_limit_m)
      p.push_back(fmt::format("CPU request {} != limit {}", r.cpu_request_text, r.cpu_limit_text));
    if (r.cpu_limit_m % 1000 != 0)
      p.push_back(fmt::format("fractional CPU limit {} ({}m)", r.cpu_limit_text, r.cpu_limit_m));
  }
  if (r.mem_limit < 0) {
    p.push_back("no memory limit");
  } else if (r.MemRequest() != r.mem_limit) {
    p.push_back("memory request != limit");
  }
  std::string s;
  for (const std::string& x : p) s += (s.empty() ? "" : "; ") + x;
  return s;
}

}  // namespace

std::vector<Finding> RunCpuQos(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.k8s == nullptr) return out;
  for (const K8sReplicaType& r : in.k8s->replicas) {
    if (r.role.empty()) continue;
    for (const K8sContainer& c : r.containers) {
      std::string why = Problems(c);
      if (why.empty()) continue;
      Finding f = MakeFinding(rule, "manifest", c.source.path + ".resources");
      f.subject = c.source.Where() + ".resources";
      f.task = r.role;
      f.summary = fmt::format(
          "{} '{}' {} container '{}': {} (pod QoS {}); without Guaranteed QoS and integer CPUs "
          "the static CPU Manager cannot give it exclusive cores",
          r.object_kind, r.object_name, r.name.empty() ? r.role : r.name, c.name, why, r.Qos());
      if (c.res.CpuRequestM() >= 0)
        f.evidence.push_back({"CPU request", c.res.CpuRequestM() / 1e3, "CPUs"});
      if (c.res.cpu_limit_m >= 0)
        f.evidence.push_back({"CPU limit", c.res.cpu_limit_m / 1e3, "CPUs"});
      f.evidence.push_back({"replicas", double(r.replicas), "count"});
      out.push_back(std::move(f));
    }
  }
  for (const K8sPod& p : in.k8s->pods) {
    if (p.role.empty()) continue;
    std::string why;
    for (const K8sContainer& c : p.containers) {
      std::string w = Problems(c);
      if (!w.empty()) why += (why.empty() ? "" : "; ") + c.name + ": " + w;
    }
    if (why.empty() && (p.qos.empty() || p.qos == "Guaranteed")) continue;
    Finding f = MakeFinding(rule, "pod", p.name);
    f.task = p.role;
    f.ops.push_back(p.source.Where());
    f.summary =
        fmt::format("{} pod {} on {}: QoS {}{}{}", p.role, p.name, p.node,
                    p.qos.empty() ? QosOf(p.containers) : p.qos, why.empty() ? "" : "; ", why);
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
