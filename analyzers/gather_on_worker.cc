#include "analyzers/gather_on_worker.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_fixes.h"
#include "core/duration.h"

namespace tfdiag {

WorkerGathers FindWorkerGathers(const Capture& c, const TaskStats& t,
                                const std::set<std::string, std::less<>>& ps_vars) {
  WorkerGathers g;
  StringTest is_gather(c, IsGatherOpType);
  ForEachOpOfTask(c, t, [&](const OpRow& op) {
    if (!is_gather(c.OpType(op)) || c.Node(op).inputs_count == 0) return;
    std::string_view input = FirstInput(c, op);
    if (!IsPartitionInput(input)) return;  // the table must have come from another task
    std::string_view var = StripRead(InputNode(input));
    if (ps_vars.find(var) == ps_vars.end()) return;
    ++g.count;
    g.ns += op.dur();
    WorkerGathers::Var& v = g.vars[std::string(var)];
    ++v.gathers;
    v.ns += op.dur();
    if (v.op.empty()) v.op = c.Str(c.OpName(op));
    if (g.example.empty()) g.example = c.Str(c.OpName(op));
  });
  return g;
}

std::vector<Finding> RunGatherOnWorker(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  std::set<std::string, std::less<>> ps_vars;
  for (const TaskStats& t : in.stats.tasks) {
    for (const VariableLoad& v : t.variables) ps_vars.insert(v.name);
  }
  if (ps_vars.empty()) return out;
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind)) continue;
    const WorkerGathers g = FindWorkerGathers(c, t, ps_vars);
    const int64_t count = g.count;
    const TimeNs ns = g.ns;
    const std::string& example = g.example;
    if (count < rule.Param("min_gathers")) continue;
    const auto& vars = g.vars;
    std::string base(PartitionBase(vars.begin()->first));
    int64_t bytes = 0;
    bool sized = true;
    for (const auto& [var, n] : vars) {
      int64_t b = VariableBytes(c, var);
      if (b < 0)
        sized = false;
      else
        bytes += b;
    }
    Finding f = MakeFinding(rule, "task", t.label);
    f.task = t.label;
    f.summary = fmt::format(
        "{} runs {} gather op(s) ({}) on {} PS variable(s) of {} received whole over the network; "
        "RecvTensor takes {:.0f}% of its op time{}",
        t.label, count, example, vars.size(), base,
        t.op_time_ns > 0 ? 100.0 * t.recv_ns / t.op_time_ns : 0.0,
        sized ? fmt::format(", {:.1f} MiB of table per lookup", bytes / 1048576.0) : "");
    f.evidence = {
        {"gather ops on the worker", double(count), "count"},
        {"gather time", ns / 1e3, "us"},
        {"RecvTensor time on the worker", t.recv_ns / 1e3, "us"},
        {"RecvTensor share of op time", t.op_time_ns ? 100.0 * t.recv_ns / t.op_time_ns : 0, "%"}};
    if (sized) f.evidence.push_back({"variable bytes pulled per lookup", double(bytes), "bytes"});
    f.ops.push_back(base);
    for (const auto& [var, n] : vars) {
      if (f.ops.size() >= 6) break;
      if (var != base) f.ops.push_back(var);
    }
    f.range_start = t.first_ns;
    f.range_end = t.last_ns;
    out.push_back(std::move(f));
  }
  return out;
}

FixPlan GatherOnWorkerFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                          const Rule&) {
  if (m.workers.empty() || in.graph == nullptr) return {};
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
  for (const std::string& label : FindingSubjects(f)) {
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

}  // namespace tfdiag
