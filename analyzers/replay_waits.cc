#include "analyzers/replay_waits.h"

#include <algorithm>
#include <vector>

#include "core/median.h"

namespace tfdiag::replay_detail {

double PullSideIdleShare(const StepGraph& g, uint32_t task) {
  const uint32_t s = g.MedianStep(task);
  if (s == kNoIndex || s >= g.steps().size()) return 0;
  const StepNode& n = g.steps()[s];
  if (!n.waits_kept) return 0;
  double inside = 0, all = 0;
  for (uint32_t i = n.waits_begin; i < n.waits_end && i < g.waits().size(); ++i) {
    const StepWait& w = g.waits()[i];
    all += double(w.idle_ns);
    // The step's last wait, up to its end (at most the closing op after it), is its tail.
    const bool last =
        i + 1 == n.waits_end && double(n.end - w.end) <= kTailEndShare * double(n.end - n.start);
    if (!w.step_tail && !last) inside += double(w.idle_ns);
  }
  return all > 0 ? inside / all : 0;
}

double UnspannedPullIdle(const StepGraph& g, uint32_t task, double idle_ns, double recv_ns) {
  const double pull_idle = idle_ns * PullSideIdleShare(g, task);
  return pull_idle > recv_ns ? pull_idle : 0;
}

double UnspannedPullShare(const AnalysisInput& in, const ReplayModel& m) {
  if (in.graph == nullptr || m.measured_step_ns <= 0) return 0;
  const StepGraph& g = *in.graph;
  std::vector<double> shares;
  for (const ReplayModel::Worker& w : m.workers) {
    const auto [b, e] = g.TaskSteps(w.task);
    if (b == e) continue;
    std::vector<double> idle, recv;
    for (uint32_t s = b; s < e; ++s) {
      idle.push_back(double(g.steps()[s].idle_ns));
      recv.push_back(double(g.steps()[s].recv_ns));
    }
    shares.push_back(UnspannedPullIdle(g, w.task, MedianInPlace(&idle), MedianInPlace(&recv)) /
                     m.measured_step_ns);
  }
  return MedianInPlace(&shares);
}

double PullTransfer(const AnalysisInput& in, uint32_t task) {
  const StepGraph& g = *in.graph;
  const uint32_t s = g.MedianStep(task);
  if (s == kNoIndex) return 0;
  const StepNode& n = g.steps()[s];
  double x = 0;
  for (uint32_t i = n.waits_begin; i < n.waits_end; ++i) {
    const StepWait& w = g.waits()[i];
    if (w.step_tail || w.edge == kNoIndex) continue;
    const GraphEdge& e = g.edges()[w.edge];
    if (e.push || e.src_task >= in.capture.tasks.size() ||
        in.capture.tasks[e.src_task].kind != JobKind::kPs) {
      continue;
    }
    x = std::max(
        x, double(std::clamp<TimeNs>(w.end - std::max(e.sent, w.last_sent), 0, w.end - w.start)));
  }
  return x;
}

void ApplyPullBesideInput(const StepGraph& g, ReplayModel* m) {
  if (m->sync) return;
  std::vector<double> hidden;
  for (ReplayModel::Worker& w : m->workers) {
    if (w.prefetched) continue;
    const PullBeside b = g.MedianPullBeside(w.task);
    w.pull_beside_input = b.beside;
    if (b.beside) hidden.push_back(double(b.xfer_ns));
  }
  if (hidden.empty()) return;
  const double xfer = MedianInPlace(&hidden);
  for (ReplayModel::Worker& w : m->workers) {
    if (w.pull_beside_input) w.pull_xfer_ns = std::max(w.pull_xfer_ns, xfer);
  }
}

}  // namespace tfdiag::replay_detail
