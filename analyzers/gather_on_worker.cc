#include "analyzers/gather_on_worker.h"

#include <map>
#include <set>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"

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

}  // namespace tfdiag
