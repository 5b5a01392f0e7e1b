#include "analyzers/cpu_qos.h"

#include <algorithm>

namespace tfdiag {

namespace {

// What keeps a container from exclusive cores, "" when nothing does; `cause` gets the same
// without numbers (the group's cause: "no CPU limit; no memory limit").
std::string Problems(const K8sContainer& c, std::string* cause) {
  const K8sResources& r = c.res;
  std::vector<std::pair<std::string, std::string>> p;  // (with numbers, cause)
  if (r.cpu_limit_m < 0) {
    p.emplace_back(r.cpu_request_m < 0 ? "no CPU request or limit" : "no CPU limit", "");
  } else {
    if (r.CpuRequestM() != r.cpu_limit_m)
      p.emplace_back(
          fmt::format("CPU request {} != limit {}", r.cpu_request_text, r.cpu_limit_text),
          "CPU request != limit");
    if (r.cpu_limit_m % 1000 != 0)
      p.emplace_back(fmt::format("fractional CPU limit {} ({}m)", r.cpu_limit_text, r.cpu_limit_m),
                     "fractional CPU limit");
  }
  if (r.mem_limit < 0) {
    p.emplace_back("no memory limit", "");
  } else if (r.MemRequest() != r.mem_limit) {
    p.emplace_back("memory request != limit", "");
  }
  std::string s;
  cause->clear();
  for (const auto& [x, why] : p) {
    s += (s.empty() ? "" : "; ") + x;
    *cause += (cause->empty() ? "" : "; ") + (why.empty() ? x : why);
  }
  return s;
}

// Bytes as a Kubernetes quantity: "8Gi", "512Mi", else plain bytes.
std::string MemoryText(int64_t b) {
  if (b > 0 && b % (1LL << 30) == 0) return fmt::format("{}Gi", b >> 30);
  if (b > 0 && b % (1LL << 20) == 0) return fmt::format("{}Mi", b >> 20);
  return std::to_string(b);
}

// "cpu: \"N\"" for the fix line: the CPU limit (or request) rounded up to whole cores.
std::string FixLine(const K8sContainer& c) {
  const K8sResources& r = c.res;
  const int64_t m = std::max(r.cpu_limit_m, r.CpuRequestM());
  std::string cpu = m > 0
                        ? fmt::format("cpu: \"{}\"", std::max<int64_t>(1, (m + 999) / 1000))
                        : std::string("cpu: a whole number of your choosing (tfdiag fix --cpus N)");
  std::string mem = r.mem_limit >= 0     ? "memory: " + MemoryText(r.mem_limit)
                    : r.mem_request >= 0 ? "memory: " + MemoryText(r.mem_request)
                                         : "memory: your choice (tfdiag fix --memory Q)";
  return fmt::format("For this container: requests = limits, {}, {}", cpu, mem);
}

}  // namespace

void SetManifestObject(const K8sReplicaType& r, Finding* f) {
  const std::string& k = r.object_kind;
  const bool workload = r.name.empty();
  f->object_kind = workload ? k : k + " replica type";
  f->object_file = r.source.file;
  f->object_name =
      workload ? fmt::format("{} '{}' (doc {})", k, r.object_name, r.source.doc + 1)
               : fmt::format("{} '{}' (doc {}) {}", k, r.object_name, r.source.doc + 1, r.name);
}

std::vector<Finding> RunCpuQos(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.k8s == nullptr) return out;
  for (const K8sReplicaType& r : in.k8s->replicas) {
    if (r.role.empty()) continue;
    for (const K8sContainer& c : r.containers) {
      std::string cause;
      std::string why = Problems(c, &cause);
      if (why.empty()) continue;
      Finding f = MakeFinding(rule, "manifest", c.source.path + ".resources");
      f.subject = c.source.Where() + ".resources";
      f.task = r.role;
      f.cause = cause;
      SetManifestObject(r, &f);
      f.fix = rule.fix + "\n" + FixLine(c);
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
      std::string unused;
      std::string w = Problems(c, &unused);
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
