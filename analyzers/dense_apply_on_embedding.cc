#include "analyzers/dense_apply_on_embedding.h"

#include <fmt/format.h>

#include <map>

#include "analyzers/apply_locks.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "core/duration.h"

namespace tfdiag {

std::vector<Finding> RunDenseApplyOnEmbedding(const AnalysisInput& in, const Rule& rule) {
  std::vector<Finding> out;
  const Capture& c = in.capture;
  const auto gathered = GatheredVariables(c);
  if (gathered.empty()) return out;
  StringTest is_dense(c, IsDenseApplyOpType), is_sparse(c, IsSparseApplyOpType);
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs || t.op_time_ns == 0) continue;
    struct Agg {
      int64_t count = 0;
      TimeNs ns = 0, longest = 0;
      std::string type, op;
      bool sparse_too = false;
    };
    std::map<std::string, Agg, std::less<>> by_var;
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
      const StrId type = c.OpType(op);
      const bool dense = is_dense(type), sparse = is_sparse(type);
      if ((!dense && !sparse) || c.Node(op).inputs_count == 0) return;
      std::string_view var = StripRead(InputNode(FirstInput(c, op)));
      if (gathered.find(var) == gathered.end()) return;
      Agg& a = by_var[std::string(var)];
      if (sparse) {
        a.sparse_too = true;
        return;
      }
      ++a.count;
      a.ns += op.dur();
      if (op.dur() >= a.longest)
        a.longest = op.dur(), a.type = c.Str(type), a.op = c.Str(c.OpName(op));
    });
    for (const auto& [var, a] : by_var) {
      const double share = 100.0 * a.ns / t.op_time_ns;
      if (a.count == 0 || share < rule.Param("min_apply_share_pct")) continue;
      Finding f = MakeFinding(rule, "variable", var);
      f.task = t.label;
      f.summary = fmt::format(
          "{} on {} updates the embedding {} densely: {} {} ops take {:.0f}% of {}'s op time{}",
          a.type, t.label, var, a.count, a.type, share, t.label,
          a.sparse_too ? "" : "; no sparse apply updates it");
      f.evidence = {{"dense apply ops", double(a.count), "count"},
                    {"dense apply time", a.ns / 1e3, "us"},
                    {"share of " + t.label + " op time", share, "%"},
                    {"longest apply", a.longest / 1e3, "us"}};
      int64_t bytes = VariableBytes(c, var);
      if (bytes >= 0) f.evidence.push_back({"size of " + var, double(bytes), "bytes"});
      f.ops = {a.op};
      f.range_start = t.first_ns;
      f.range_end = t.last_ns;
      out.push_back(std::move(f));
    }
  }
  return out;
}

FixPlan DenseApplyOnEmbeddingFix(const AnalysisInput& in, const ReplayModel& m, const Finding& f,
                                 const Rule&) {
  FixPlan plan;
  if (m.steps <= 0) return plan;
  // A sparse apply touches the rows the step gathered: its cost is taken as the gathers' of
  // the same variable on the same PS; the dense apply's time beyond that goes. Where the model
  // reads the applies' lock (ReplayModel::apply_locks), a dense apply's wait on it is no work
  // the fix removes: its push holds it no longer once the applies are short.
  double cut_total = 0;
  for (const FindingObject& o : f.objects) {
    const TaskStats* ps = in.stats.Find(o.task);
    if (ps == nullptr) continue;
    const ApplyLockWaits locks =
        m.apply_locks ? ReadApplyLockWaits(in.capture, *ps) : ApplyLockWaits{};
    TimeNs dense = 0, gather = 0;
    ForEachOpRowOfTask(in.capture, *ps, [&](const OpRow& op, uint32_t row) {
      const NodeRow& n = in.capture.Node(op);
      if (n.inputs_count == 0) return;
      const std::string_view var = StripRead(InputNode(FirstInput(in.capture, op)));
      if (var != o.subject) return;
      const std::string_view type = in.capture.Str(n.type);
      if (IsDenseApplyOpType(type)) dense += op.dur() - LockWaitOf(locks, row);
      if (IsGatherOpType(type)) gather += op.dur();
    });
    const double cut = std::max<double>(0, double(dense - gather)) / double(m.steps);
    plan.fix.ps_demand_cut.emplace_back(ps->task, cut);
    cut_total += cut;
  }
  plan.what = fmt::format("sparse applies at the gathers' cost: {} less PS work per worker step",
                          FormatDurationShort(cut_total));
  return plan;
}

}  // namespace tfdiag
