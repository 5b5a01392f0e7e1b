#include "analyzers/allreduce_candidate.h"

#include "analyzers/ps_worker_ratio.h"

namespace tfdiag {

std::vector<Finding> RunAllreduceCandidate(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  if (in.stats.num_ps == 0 || in.stats.num_workers == 0) return out;
  std::string why;
  if (InferModelKind(in.capture, &why) != "dense") return out;
  int64_t vars = 0, sized = 0, bytes = 0;
  std::string largest;
  int64_t largest_bytes = -1;
  for (const TaskStats& t : in.stats.tasks) {
    for (const VariableLoad& v : t.variables) {
      ++vars;
      if (v.bytes < 0) continue;
      ++sized;
      bytes += v.bytes;
      if (v.bytes > largest_bytes) largest_bytes = v.bytes, largest = v.name;
    }
  }
  if (vars == 0 || sized < rule.Param("min_sized_fraction") * vars) return out;
  if (bytes > rule.Param("max_model_bytes")) return out;
  Finding f = MakeFinding(rule, "job", "job");
  f.summary = fmt::format(
      "dense model ({}) whose {} variables total {:.1f} MiB (sizes known for {} of {}): it fits "
      "on one GPU, so ring all-reduce would avoid the PS round trips",
      why, vars, bytes / 1048576.0, sized, vars);
  f.evidence = {{"variables", double(vars), "count"},
                {"variables with a known size", double(sized), "count"},
                {"variable bytes", double(bytes), "bytes"},
                {"limit for one GPU", rule.Param("max_model_bytes"), "bytes"},
                {"PS tasks", double(in.stats.num_ps), "count"},
                {"workers", double(in.stats.num_workers), "count"}};
  if (!largest.empty()) f.ops = {largest};
  f.range_start = in.capture.start;
  f.range_end = in.capture.end;
  out.push_back(std::move(f));
  return out;
}

}  // namespace tfdiag
