#include "analyzers/thread_config.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string_view>

#include "analyzers/cpu_qos.h"
#include "core/checked_number.h"

namespace tfdiag {

namespace {

struct Setting {
  const char* env;
  std::vector<const char*> flags;
};

// The value a setting has in container `c`: >0 threads, 0 absent, -1 unreadable. `from` says
// where it was found. A downward-API resourceFieldRef limits.cpu equals the limit (in cores).
int ValueOf(const K8sContainer& c, const Setting& s, int limit_cpus, std::string* from) {
  for (const char* fl : s.flags) {
    auto it = c.flags.find(fl);
    if (it != c.flags.end()) {
      *from = std::string("--") + fl;
      int v = -1;  // "8"; "", "x", "-2" or past INT_MAX: unreadable (atoi was undefined there)
      return ParseIntIn(std::string_view(it->second), 1, INT_MAX, &v) ? v : -1;
    }
  }
  if (const K8sEnvVar* e = c.Env(s.env)) {
    *from = s.env;
    if (e->value_from == "resourceFieldRef:limits.cpu") return limit_cpus > 0 ? limit_cpus : -1;
    int v = -1;
    return ParseIntIn(std::string_view(e->value), 1, INT_MAX, &v) ? v : -1;
  }
  return 0;
}

// What one container's thread settings lack against its CPU limit.
struct Judged {
  int limit = 0;  // CPU limit in whole cores, rounded up (0: none)
  int want = 0;   // the threads to set: the limit's whole cores, at least 1 (0: no limit)
  std::vector<std::string> missing, wrong;
  std::string what;   // "OMP_NUM_THREADS=64 but the CPU limit is 2; not set: ..."
  std::string cause;  // what grouped findings share
  bool ok() const { return missing.empty() && wrong.empty(); }
};

Judged Judge(const K8sContainer& c) {
  static const Setting kSettings[] = {
      {"TF_NUM_INTRAOP_THREADS", {"intra_op_parallelism_threads", "num_intra_threads"}},
      {"TF_NUM_INTEROP_THREADS", {"inter_op_parallelism_threads", "num_inter_threads"}},
      {"OMP_NUM_THREADS", {}},
  };
  Judged j;
  // CPU limit in whole cores (a fractional limit rounds up, as the downward API does).
  j.limit = c.res.cpu_limit_m > 0 ? static_cast<int>((c.res.cpu_limit_m + 999) / 1000) : 0;
  // What to set: the whole cores of the limit (floor, at least 1), so a 0.5-CPU container
  // is not told to run 4 threads; the rounded-up value of the downward API counts as right.
  j.want = c.res.cpu_limit_m > 0 ? std::max(1, static_cast<int>(c.res.cpu_limit_m / 1000)) : 0;
  for (const Setting& s : kSettings) {
    std::string from;
    int v = ValueOf(c, s, j.limit, &from);
    if (v == 0) {
      j.missing.push_back(s.env);
    } else if (v < 0) {
      j.wrong.push_back(from + " is not a number");
    } else if (j.limit > 0 && v != j.limit && v != j.want &&
               !(s.env == std::string_view("TF_NUM_INTEROP_THREADS") && j.want < 2 && v == 2)) {
      // Inter-op 2 under a 1-CPU limit is right: one inter-op thread can deadlock TF1 queue
      // runners (tfdiag fix never sets fewer than 2).
      j.wrong.push_back(fmt::format("{}={} but the CPU limit is {}", from, v, j.limit));
    }
  }
  for (const std::string& w : j.wrong) j.what += (j.what.empty() ? "" : "; ") + w;
  if (!j.missing.empty()) {
    std::string m;
    for (const std::string& x : j.missing) m += (m.empty() ? "" : ", ") + x;
    j.what += (j.what.empty() ? "" : "; ") + ("not set: " + m);
  }
  j.cause = !j.wrong.empty() && !j.missing.empty() ? "thread counts missing or not the CPU limit"
            : !j.wrong.empty()                     ? "thread counts not the CPU limit"
            : j.ok()                               ? ""
                     : "not set: " + j.what.substr(j.what.find("not set: ") + 9);
  return j;
}

// Intra-op and OpenMP threads: the limit's whole cores; inter-op: the same, at least 2 (one
// inter-op thread can deadlock TF1 queue runners). Advice and FixFor say the same numbers (issue
// 39: "set them to the CPU limit (1)" sat above a snippet saying inter-op "at least 2").
std::string PerPod(const Judged& j) {
  return fmt::format("intra-op {0}, inter-op {1}, OMP {0}", j.want, std::max(2, j.want));
}

std::string Advice(const Judged& j) {
  return j.limit > 0 ? fmt::format("set them for its CPU limit: {}", PerPod(j))
                     : std::string(
                           "TF sizes its pools from the node's cores; set a CPU limit and "
                           "the thread counts equal to it");
}

std::string FixFor(const Rule& rule, const Judged& j) {
  return rule.fix + "\n" +
         (j.want > 0 ? fmt::format("For this container: TF_NUM_INTRAOP_THREADS and "
                                   "OMP_NUM_THREADS \"{}\", TF_NUM_INTEROP_THREADS \"{}\"",
                                   j.want, std::max(2, j.want))
                     : std::string("For this container: set a CPU limit first (tfdiag fix "
                                   "--cpus N), then the thread counts to it"));
}

void AddEvidence(const K8sContainer& c, const Judged& j, Finding* f) {
  if (c.res.cpu_limit_m >= 0) f->evidence.push_back({"CPU limit", c.res.cpu_limit_m / 1e3, "CPUs"});
  f->evidence.push_back({"settings missing", double(j.missing.size()), "count"});
  f->evidence.push_back({"settings wrong", double(j.wrong.size()), "count"});
}

}  // namespace

std::vector<Finding> RunThreadConfig(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.k8s == nullptr) return out;
  for (const K8sReplicaType& r : in.k8s->replicas) {
    if (r.role.empty()) continue;
    for (const K8sContainer& c : r.containers) {
      const Judged j = Judge(c);
      if (j.ok()) continue;
      Finding f = MakeFinding(rule, "manifest", c.source.path + ".env");
      f.subject = c.source.Where() + ".env";
      f.task = r.role;
      f.summary = fmt::format("{} '{}' {} container '{}': {}; {}", r.object_kind, r.object_name,
                              r.name.empty() ? r.role : r.name, c.name, j.what, Advice(j));
      f.cause = j.cause;
      SetManifestObject(r, &f);
      f.fix = FixFor(rule, j);
      AddEvidence(c, j, &f);
      out.push_back(std::move(f));
    }
  }
  // Pod lists (kubectl get pods -o json): each TF pod's containers as they run, env and
  // resources included (issue 39: six pods with a 2-CPU limit and 64 threads went unjudged).
  for (const K8sPod& p : in.k8s->pods) {
    if (p.role.empty() || !p.SpecKnown()) continue;
    for (const K8sContainer& c : p.containers) {
      const Judged j = Judge(c);
      if (j.ok()) continue;
      const std::string task = p.index >= 0 ? fmt::format("{}:{}", p.role, p.index) : p.role;
      Finding f = MakeFinding(rule, "pod", p.name);
      f.subject = p.name;
      f.task = task;
      f.pod = p.name;
      f.node = p.node;
      f.ops.push_back(c.source.Where() + ".env");
      f.summary =
          fmt::format("{} pod {} container '{}': {}; {}", task, p.name, c.name, j.what, Advice(j));
      f.cause = j.cause;
      f.fix = FixFor(rule, j) + "\n(in the pod's owner: a running pod's env cannot be changed)";
      AddEvidence(c, j, &f);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace tfdiag
