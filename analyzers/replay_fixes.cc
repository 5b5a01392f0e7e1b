#include "analyzers/replay_fixes.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "analyzers/capture_queries.h"
#include "analyzers/gather_on_worker.h"
#include "analyzers/op_names.h"
#include "analyzers/step_graph.h"
#include "core/duration.h"

namespace tfdiag {

namespace {

// The variable a cross-task tensor carries: "dense_1/kernel/part_3/read:0" -> its variable.
std::string_view VariableOf(std::string_view tensor) { return StripRead(InputNode(tensor)); }

// Per worker of `m`: its waits (receive + idle, summed over steps) and the part of them ended by
// a tensor whose variable `pick` accepts.
struct WaitShare {
  uint32_t task = 0;
  double all_ns = 0, picked_ns = 0;
  double share() const { return all_ns > 0 ? picked_ns / all_ns : 0; }
};
WaitShare WaitsEndedBy(const AnalysisInput& in, uint32_t task,
                       const std::function<bool(std::string_view)>& pick) {
  WaitShare s;
  s.task = task;
  for (const WaitCause& w : in.graph->WaitCausesOf(task)) {
    s.all_ns += double(w.wait_ns);
    if (w.tensor != 0 && pick(VariableOf(in.capture.Str(w.tensor)))) {
      s.picked_ns += double(w.wait_ns);
    }
  }
  return s;
}

std::string MiB(double bytes) { return fmt::format("{:.1f} MiB", bytes / 1048576.0); }

std::vector<std::string> ObjectSubjects(const Finding& f) {
  std::vector<std::string> out;
  for (const FindingObject& o : f.objects) out.push_back(o.subject);
  if (out.empty()) out.push_back(f.subject);
  return out;
}

FixPlan Oversharding(const AnalysisInput& in, const ReplayModel& m, const Finding& f) {
  FixPlan plan;
  const int num_ps = in.stats.num_ps;
  std::map<std::string, std::set<std::string>, std::less<>> parts;  // base -> part names
  for (const std::string& base : ObjectSubjects(f)) parts[base];
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
  plan.what = fmt::format(
      "{} part(s) of {} variable(s) cut to {} (one per PS, fixed_size_partitioner(num_ps)); each "
      "worker's receive time scaled down by the share of its waits the parts' arrival ended "
      "({} per worker step) times the transfers removed (the bytes stay)",
      before, cut_of.size(), after,
      FormatDurationShort(m.steps > 0 ? waited / double(m.steps) : 0));
  return plan;
}

FixPlan GatherOnWorker(const AnalysisInput& in, const ReplayModel& m, const Finding& f) {
  FixPlan plan;
  const Capture& c = in.capture;
  std::set<std::string, std::less<>> ps_vars;
  std::map<std::string, uint32_t, std::less<>> host;  // variable -> PS task
  for (const TaskStats& t : in.stats.tasks) {
    for (const VariableLoad& v : t.variables) {
      ps_vars.insert(v.name);
      if (t.kind == JobKind::kPs) host[v.name] = t.task;
    }
  }
  double table_bytes = 0, row_bytes = 0, moved_ns = 0, waited = 0;
  std::map<uint32_t, double> ps_add;
  for (const std::string& label : ObjectSubjects(f)) {
    const TaskStats* t = in.stats.Find(label);
    if (t == nullptr || t->steps <= 0) continue;
    const WorkerGathers g = FindWorkerGathers(c, *t, ps_vars);
    if (g.count == 0) continue;
    double tables = 0, rows = 0;
    for (const auto& [var, v] : g.vars) {
      const int64_t tb = VariableBytes(c, var), rb = VariableBytes(c, v.op);
      if (tb < 0 || rb < 0) {
        plan.why = fmt::format(
            "the size of {} is unknown (no show_memory snapshot): the bytes the fix removes "
            "cannot be weighed",
            tb < 0 ? var : v.op);
        return plan;
      }
      tables += double(tb);
      rows += double(std::min(rb, tb));
      auto h = host.find(var);
      if (h != host.end()) ps_add[h->second] += double(v.ns);
    }
    table_bytes += tables;
    row_bytes += rows;
    moved_ns += double(g.ns);
    const WaitShare s = WaitsEndedBy(
        in, t->task, [&](std::string_view var) { return g.vars.find(var) != g.vars.end(); });
    waited += s.picked_ns;
    plan.fix.recv_cut.emplace_back(t->task, s.share() * (1 - rows / std::max(1.0, tables)));
    plan.fix.compute_cut.emplace_back(t->task, double(g.ns) / double(t->steps));
  }
  if (plan.fix.recv_cut.empty() || m.steps <= 0) {
    plan.why = "no gather on a received PS variable in the workers' steps";
    return plan;
  }
  for (const auto& [ps, ns] : ps_add) plan.fix.ps_demand_add.emplace_back(ps, ns / double(m.steps));
  const double n = double(plan.fix.recv_cut.size());
  plan.what = fmt::format(
      "the gathers beside their tables (embedding_lookup): {} of table per worker and lookup "
      "becomes {} of rows, so the receive time the tables' arrival ended ({} per worker step) "
      "shrinks by that ratio; the gathers ({} per worker step) move to the PS",
      MiB(table_bytes / n), MiB(row_bytes / n), FormatDurationShort(waited / double(m.steps)),
      FormatDurationShort(moved_ns / double(m.steps)));
  return plan;
}

FixPlan IdlePs(const AnalysisInput& in, const ReplayModel& m, const Finding& f) {
  FixPlan plan;
  double work = 0;
  for (const ReplayModel::Ps& p : m.ps) work += p.pull_ns + p.push_ns;
  for (const std::string& label : ObjectSubjects(f)) {
    const uint32_t t = in.capture.FindTask(label);
    if (t != kNoIndex) plan.fix.drop_ps.push_back(t);
  }
  if (plan.fix.drop_ps.empty() || plan.fix.drop_ps.size() >= size_t(in.stats.num_ps)) {
    plan.why = "the finding names no PS of the capture that could be removed";
    plan.fix = Fix{};
    return plan;
  }
  // The fix text: lower the PS count; the variables partitioned over the PS left (as
  // ps-worker-ratio's text says), so all PS work spreads evenly over them.
  plan.fix.ps_count = in.stats.num_ps - int(plan.fix.drop_ps.size());
  plan.what = fmt::format(
      "{} idle PS removed ({} PS left), the variables partitioned over the PS left "
      "(fixed_size_partitioner(num_ps)): all {} of PS work per worker step spread evenly, each "
      "part op at the PS's fixed cost per op",
      plan.fix.drop_ps.size(), plan.fix.ps_count, FormatDurationShort(work));
  return plan;
}

FixPlan PsWorkerRatio(const AnalysisInput& in, const Finding& f) {
  FixPlan plan;
  for (const Figure& e : f.evidence) {
    if (e.label == "suggested PS count") plan.fix.ps_count = static_cast<int>(e.value);
  }
  if (plan.fix.ps_count <= 0 || plan.fix.ps_count == in.stats.num_ps) {
    plan.fix.ps_count = 0;
    plan.why = "the finding suggests no other PS count";
    return plan;
  }
  plan.what = fmt::format(
      "{} PS -> {} (the finding's suggested count), the variables partitioned over the new count "
      "as the fix text says (fixed_size_partitioner(num_ps)): all PS work spread evenly, each "
      "part op at the PS's fixed cost per op{}",
      in.stats.num_ps, plan.fix.ps_count,
      f.cause.empty() ? "" : fmt::format(" ({}: the partitioning spreads it too)", f.cause));
  return plan;
}

}  // namespace

FixPlan PlanTransferOrPsFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f) {
  if (m.workers.empty() || in.graph == nullptr) return {};
  if (f.rule_id == "oversharding") return Oversharding(in, m, f);
  if (f.rule_id == "gather-on-worker") return GatherOnWorker(in, m, f);
  if (f.rule_id == "idle-ps") return IdlePs(in, m, f);
  if (f.rule_id == "ps-worker-ratio") return PsWorkerRatio(in, f);
  return {};
}

}  // namespace tfdiag
