// The replay model's shares of the measured step (what it holds fixed, what it leaves
// unexplained), its replay of the capture as is, and the part ops a new count adds: queries on a
// built ReplayModel (analyzers/replay.h declares them), apart from the model's building and
// simulation in analyzers/replay.cc and analyzers/replay_run.cc.
#include <algorithm>
#include <vector>

#include "analyzers/replay.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// The upper median over m's workers of `of(worker)` ns, as a share of the measured median step;
// 0 without workers or a measured step.
template <typename Of>
double WorkerShare(const ReplayModel& m, Of of) {
  if (m.workers.empty() || m.measured_step_ns <= 0) return 0;
  std::vector<double> u;
  for (const ReplayModel::Worker& w : m.workers) u.push_back(of(w));
  return UpperMedian(std::move(u)) / m.measured_step_ns;
}

}  // namespace

double FixedTransferShare(const ReplayModel& m) {
  return WorkerShare(m,
                     [](const ReplayModel::Worker& w) { return w.pull_xfer_ns + w.push_xfer_ns; });
}

double UnexplainedWaitShare(const ReplayModel& m) {
  return WorkerShare(m, [](const ReplayModel::Worker& w) { return w.recv_ns + w.tail_ns; });
}

double ScaledWaitShare(const ReplayModel& m) {
  return WorkerShare(m, [](const ReplayModel::Worker& w) { return w.recv_ns; });
}

double HeldTailShare(const ReplayModel& m) {
  return WorkerShare(m, [](const ReplayModel::Worker& w) { return w.tail_ns; });
}

Baseline ReplayBaseline(const ReplayModel& m) {
  Baseline b;
  if (m.workers.empty() || m.measured_step_ns <= 0) return b;
  b.replay_ns = ReplayMedianStep(m, Fix{}, ReplaySteps(m));
  const double measured =
      m.worker_median_step_ns > 0 ? m.worker_median_step_ns : m.measured_step_ns;
  b.measured_ns = measured;
  b.miss = (b.replay_ns - measured) / measured;
  return b;
}

double PartOpsAdded(const ReplayModel::Ps& p, size_t v, int count) {
  if (v >= p.var_ops.size()) return 0;
  const double k = v < p.var_parts.size() ? std::max(1.0, p.var_parts[v]) : 1.0;
  return p.var_ops[v] * (double(std::max(1, count)) / k - 1);
}

double PartOpsAdded(const ReplayModel::Ps& p, int count) {
  double added = 0;
  for (size_t v = 0; v < p.var_ops.size(); ++v) added += PartOpsAdded(p, v, count);
  return added;
}

}  // namespace tfdiag
