#include "analyzers/gather_on_worker.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "analyzers/capture_queries.h"
#include "analyzers/gather_rows.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_fixes.h"
#include "core/duration.h"

namespace tfdiag {

namespace {
// The high end of an estimated gather's rows, as a multiple of the largest peer table's lookup
// (the low end is no rows; the prediction takes the peers' mean): tables of one job differ in ids
// per step and in row width. It widens only the range said, not the prediction. Set on gen3
// report5, whose gathered rows were 0.35x (1510), 0.83x (1516), 1.1x (1531) and 3.4x (1507) the
// peers' mean (gen3sim's specs); gen3 report4's two gather jobs have no peer table to check it.
constexpr double kRowsHighPeers = 4;
}  // namespace

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
  // The tables gathered on a worker are left out of the peers the rows are estimated from.
  std::set<std::string, std::less<>> gathered;
  std::vector<std::pair<const TaskStats*, WorkerGathers>> tasks;
  for (const std::string& label : FindingSubjects(f)) {
    const TaskStats* t = in.stats.Find(label);
    if (t == nullptr || t->steps <= 0) continue;
    WorkerGathers g = FindWorkerGathers(c, *t, ps_vars);
    if (g.count == 0) continue;
    for (const auto& [var, v] : g.vars) gathered.emplace(PartitionBase(var));
    tasks.emplace_back(t, std::move(g));
  }
  PeerLookups peers;
  bool peers_read = false;
  double table_bytes = 0, row_bytes = 0, moved_ns = 0, waited = 0, cut_span = 0;
  std::set<std::string> estimated;  // gathers whose rows are estimated from the peers
  std::map<uint32_t, double> ps_add;
  for (const auto& [t, g] : tasks) {
    double tables = 0, rows = 0, high = 0;
    for (const auto& [var, v] : g.vars) {
      const int64_t tb = VariableBytes(c, var), rb = VariableBytes(c, v.op);
      if (tb < 0) {
        plan.why = fmt::format(
            "the size of {} is unknown (no show_memory snapshot): the bytes the fix removes "
            "cannot be weighed",
            var);
        return plan;
      }
      double r = double(std::min(rb, tb));
      if (rb < 0) {
        if (!peers_read) peers = FindPeerLookups(in, gathered), peers_read = true;
        if (peers.tables == 0) {
          plan.why = fmt::format(
              "the size of {} (the rows it reads) is unknown (no show_memory snapshot of its "
              "output) and no other table's lookup on a PS is sized to estimate it from: the "
              "bytes the fix leaves on the network cannot be weighed",
              v.op);
          return plan;
        }
        r = std::min(peers.mean_bytes, double(tb));
        const double r_high = std::min(kRowsHighPeers * peers.max_bytes, double(tb));
        estimated.insert(v.op);
        high += r_high;  // the estimated rows' span, 0 to r_high; sized rows add none
      }
      tables += double(tb);
      rows += r;
      auto h = host.find(var);
      if (h != host.end()) ps_add[h->second] += double(v.ns);
    }
    table_bytes += tables;
    row_bytes += rows;
    moved_ns += double(g.ns);
    const WaitShare s = WaitsEndedBy(
        in, t->task, [&](std::string_view var) { return g.vars.find(var) != g.vars.end(); });
    waited += s.picked_ns;
    // The wait the cut leaves between the estimated rows at 0 bytes and at their high estimate
    // (review v61 item 5: sized rows are known and widen nothing).
    cut_span += s.picked_ns * high / std::max(1.0, tables);
    plan.fix.recv_cut.emplace_back(t->task, s.share() * (1 - rows / std::max(1.0, tables)));
    plan.fix.compute_cut.emplace_back(t->task, double(g.ns) / double(t->steps));
  }
  if (plan.fix.recv_cut.empty() || m.steps <= 0) {
    plan.why = "no gather on a received PS variable in the workers' steps";
    return plan;
  }
  // The PS no longer reads the tables whole for the workers: each table's read op on its PS
  // ("<table>/read", whose output went to the workers) leaves that PS's pull work.
  std::set<std::string, std::less<>> tables;
  for (const auto& [t, g] : tasks) {
    for (const auto& [var, v] : g.vars) tables.insert(var + "/read");
  }
  double read_cut = 0;
  for (const auto& [ps, ns] : ps_add) {
    double reads = 0, pull = 0;
    if (const TaskStats* t = in.stats.Find(c.TaskLabelOf(ps)); t != nullptr) {
      ForEachOpOfTask(c, *t, [&](const OpRow& op) {
        if (tables.find(c.Str(c.OpName(op))) != tables.end()) reads += double(op.dur());
      });
    }
    for (const ReplayModel::Ps& p : m.ps) pull = p.task == ps ? p.pull_ns : pull;
    const double net = std::max(-pull, (ns - reads) / double(m.steps));
    read_cut += (ns / double(m.steps)) - net;
    plan.fix.ps_demand_add.emplace_back(ps, net);
  }
  const double n = double(plan.fix.recv_cut.size());
  plan.what = fmt::format(
      "the gathers beside their tables (embedding_lookup): {} of table per worker and lookup "
      "becomes {} of rows, so the receive time the tables' arrival ended ({} per worker step) "
      "shrinks by that ratio; the gathers ({} per worker step) move to the PS, whose reads of "
      "the tables for the workers ({} per worker step) go",
      MiB(table_bytes / n), MiB(row_bytes / n), FormatDurationShort(waited / double(m.steps)),
      FormatDurationShort(moved_ns / double(m.steps)), FormatDurationShort(read_cut));
  if (!estimated.empty()) {
    const double n_steps = double(m.steps);
    // The peer tables are not named: the finding names the table its fix moves, alone.
    plan.estimated = fmt::format(
        "the rows {} read{} are not sized (no show_memory snapshot of {}): taken as the mean "
        "lookup of the job's {} other table(s) looked up on their PS ({} per lookup, from their "
        "gathers' sized outputs); rows from 0 to {}x the largest of those ({}), at most the "
        "table, move the receive time the fix removes by up to {} per worker step",
        *estimated.begin(),
        estimated.size() > 1 ? fmt::format(" (and {} more)", estimated.size() - 1) : std::string(),
        estimated.size() > 1 ? "their outputs" : "its output", peers.tables, MiB(peers.mean_bytes),
        kRowsHighPeers, MiB(peers.max_bytes), FormatDurationShort(cut_span / n_steps));
  }
  return plan;
}

}  // namespace tfdiag
