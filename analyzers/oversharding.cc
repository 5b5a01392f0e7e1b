#include "analyzers/oversharding.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_fixes.h"
#include "core/duration.h"

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

FixPlan OvershardingFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                        const Rule&) {
  if (m.workers.empty() || in.graph == nullptr) return {};
  FixPlan plan;
  const int num_ps = in.stats.num_ps;
  std::map<std::string, std::set<std::string>, std::less<>> parts;  // base -> part names
  for (const std::string& base : FindingSubjects(f)) parts[base];
  for (const TaskStats& t : in.stats.tasks) {
    for (const VariableLoad& v : t.variables) {
      auto it = parts.find(PartitionBase(v.name));
      if (it != parts.end()) it->second.insert(v.name);
    }
  }
  // The share of each transfer of a part that goes: the count falls from n to num_ps per base.
  std::map<std::string, double, std::less<>> cut_of;
  size_t before = 0, after = 0;
  for (const auto& [base, names] : parts) {
    if (names.size() <= size_t(num_ps)) continue;
    cut_of[base] = 1 - double(num_ps) / double(names.size());
    before += names.size();
    after += size_t(num_ps);
  }
  if (cut_of.empty()) {
    plan.why = "no variable of the finding has more parts than PS in the capture";
    return plan;
  }
  double waited = 0;
  for (const ReplayModel::Worker& w : m.workers) {
    double cut = 0;
    for (const auto& [base, c] : cut_of) {
      const WaitShare s = WaitsEndedBy(
          in, w.task, [&, b = base](std::string_view var) { return PartitionBase(var) == b; });
      cut += s.share() * c;
      waited += s.picked_ns;
    }
    plan.fix.recv_cut.emplace_back(w.task, std::min(1.0, cut));
  }
  // The cut is per transfer removed, the bytes staying: where the transfers the replay holds
  // are over kMaxFixedTransferShare of the step, their bytes over the links may be what bounds
  // them, which no count of parts changes (gen3 report13 3114: 3 PS on one node's NIC, 77% of
  // the step in transfers; 16 -> 3 parts predicted at `high`, 18% under its twin).
  if (const double held = FixedTransferShare(m); held > kMaxFixedTransferShare) {
    plan.estimated = fmt::format(
        "the cut is per transfer removed, the bytes staying, and {:.0f}% of the step is "
        "transfers: their bytes over the links may bound them instead",
        100 * held);
  }
  plan.what = fmt::format(
      "{} part(s) of {} variable(s) cut to {} (one per PS, fixed_size_partitioner(num_ps)); each "
      "worker's receive time scaled down by the share of its waits the parts' arrival ended "
      "({} per worker step) times the transfers removed (the bytes stay)",
      before, cut_of.size(), after,
      FormatDurationShort(m.steps > 0 ? waited / double(m.steps) : 0));
  return plan;
}

}  // namespace tfdiag
