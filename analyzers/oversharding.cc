#include "analyzers/oversharding.h"

#include <map>
#include <set>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"

namespace tfdiag {

std::vector<Finding> RunOversharding(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  if (in.stats.num_ps == 0) return out;
  const auto gathered = GatheredVariables(c);
  struct Group {
    std::set<int> parts;
    std::set<std::string> ps;
    int64_t bytes = 0;
    bool sized = true;
  };
  std::map<std::string, Group> groups;  // partitioned dense variable base -> parts
  for (const TaskStats& t : in.stats.tasks) {
    for (const VariableLoad& v : t.variables) {
      int part = -1;
      std::string base(PartitionBase(v.name, &part));
      if (part < 0 || gathered.count(v.name) || gathered.count(base)) continue;
      Group& g = groups[base];
      g.parts.insert(part);
      g.ps.insert(t.label);
      if (v.bytes < 0)
        g.sized = false;
      else
        g.bytes += v.bytes;
    }
  }
  // Worker-side fan-in: transfers a worker receives per step.
  double recv_per_step = 0;
  int workers = 0;
  for (const TaskStats& t : in.stats.tasks) {
    if (IsTrainingTask(t.kind) && t.steps > 0) {
      recv_per_step += static_cast<double>(t.recv_count) / t.steps;
      ++workers;
    }
  }
  if (workers > 0) recv_per_step /= workers;
  for (const auto& [base, g] : groups) {
    const double parts = static_cast<double>(g.parts.size());
    if (parts < rule.Param("min_parts") ||
        parts <= rule.Param("max_shards_per_ps") * in.stats.num_ps) {
      continue;
    }
    Finding f = MakeFinding(rule, "variable", base);
    f.summary = fmt::format(
        "dense variable {} is split into {} partitions over {} PS ({:.1f} per PS){}; every worker "
        "waits for all of them ({:.0f} RecvTensor per worker step)",
        base, g.parts.size(), in.stats.num_ps, parts / in.stats.num_ps,
        g.sized ? fmt::format(", {:.1f} KiB each", g.bytes / parts / 1024) : "", recv_per_step);
    f.evidence = {{"partitions", parts, "count"},
                  {"PS tasks", double(in.stats.num_ps), "count"},
                  {"partitions per PS", parts / in.stats.num_ps, "ratio"},
                  {"RecvTensor per worker step", recv_per_step, "count"}};
    if (g.sized) f.evidence.push_back({"variable bytes (all parts)", double(g.bytes), "bytes"});
    f.ops = {base + "/part_0", base + "/part_" + std::to_string(*g.parts.rbegin())};
    f.range_start = c.start;
    f.range_end = c.end;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace tfdiag
