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

}  // namespace

std::vector<Finding> RunThreadConfig(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.k8s == nullptr) return out;
  static const Setting kSettings[] = {
      {"TF_NUM_INTRAOP_THREADS", {"intra_op_parallelism_threads", "num_intra_threads"}},
      {"TF_NUM_INTEROP_THREADS", {"inter_op_parallelism_threads", "num_inter_threads"}},
      {"OMP_NUM_THREADS", {}},
  };
  for (const K8sReplicaType& r : in.k8s->replicas) {
    if (r.role.empty()) continue;
    for (const K8sContainer& c : r.containers) {
      // CPU limit in whole cores (a fractional limit rounds up, as the downward API does).
      const int limit =
          c.res.cpu_limit_m > 0 ? static_cast<int>((c.res.cpu_limit_m + 999) / 1000) : 0;
      // What to set: the whole cores of the limit (floor, at least 1), so a 0.5-CPU container
      // is not told to run 4 threads; the rounded-up value of the downward API counts as right.
      const int want =
          c.res.cpu_limit_m > 0 ? std::max(1, static_cast<int>(c.res.cpu_limit_m / 1000)) : 0;
      std::vector<std::string> missing, wrong;
      for (const Setting& s : kSettings) {
        std::string from;
        int v = ValueOf(c, s, limit, &from);
        if (v == 0) {
          missing.push_back(s.env);
        } else if (v < 0) {
          wrong.push_back(from + " is not a number");
        } else if (limit > 0 && v != limit && v != want &&
                   !(s.env == std::string_view("TF_NUM_INTEROP_THREADS") && want < 2 && v == 2)) {
          // Inter-op 2 under a 1-CPU limit is right: one inter-op thread can deadlock TF1 queue
          // runners (tfdiag fix never sets fewer than 2).
          wrong.push_back(fmt::format("{}={} but the CPU limit is {}", from, v, limit));
        }
      }
      if (missing.empty() && wrong.empty()) continue;
      Finding f = MakeFinding(rule, "manifest", c.source.path + ".env");
      f.subject = c.source.Where() + ".env";
      f.task = r.role;
      std::string what;
      for (const std::string& w : wrong) what += (what.empty() ? "" : "; ") + w;
      if (!missing.empty()) {
        std::string m;
        for (const std::string& x : missing) m += (m.empty() ? "" : ", ") + x;
        what += (what.empty() ? "" : "; ") + ("not set: " + m);
      }
      f.summary = fmt::format(
          "{} '{}' {} container '{}': {}; {}", r.object_kind, r.object_name,
          r.name.empty() ? r.role : r.name, c.name, what,
          limit > 0 ? fmt::format("set them to the CPU limit ({})", want)
                    : std::string("TF sizes its pools from the node's cores; set a CPU limit and "
                                  "the thread counts equal to it"));
      f.cause = !wrong.empty() && !missing.empty() ? "thread counts missing or not the CPU limit"
                : !wrong.empty()                   ? "thread counts not the CPU limit"
                                 : "not set: " + what.substr(what.find("not set: ") + 9);
      SetManifestObject(r, &f);
      f.fix = rule.fix + "\n" +
              (want > 0 ? fmt::format("For this container: TF_NUM_INTRAOP_THREADS and "
                                      "OMP_NUM_THREADS \"{}\", TF_NUM_INTEROP_THREADS \"{}\"",
                                      want, std::max(2, want))
                        : std::string("For this container: set a CPU limit first (tfdiag fix "
                                      "--cpus N), then the thread counts to it"));
      if (c.res.cpu_limit_m >= 0)
        f.evidence.push_back({"CPU limit", c.res.cpu_limit_m / 1e3, "CPUs"});
      f.evidence.push_back({"settings missing", double(missing.size()), "count"});
      f.evidence.push_back({"settings wrong", double(wrong.size()), "count"});
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace tfdiag
