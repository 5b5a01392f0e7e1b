#include "analyzers/ps_link_saturated.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzers/format_range.h"
#include "analyzers/nic_rate.h"
#include "analyzers/replay_dispatch.h"
#include "core/duration.h"

namespace tfdiag {

double BusiestLinkDirection(const ReplayModel& m, const ReplayModel& l) {
  if (l.link_bytes_per_ns <= 0 || m.measured_step_ns <= 0) return 0;
  double most = 0;
  for (const ReplayModel::Ps& p : l.ps) most = std::max({most, p.out_bytes, p.in_bytes});
  return most / l.link_bytes_per_ns * double(m.workers.size()) / m.measured_step_ns;
}

void SetLinksPrediction(const ReplayModel& m, double ratio, double miss, double spread,
                        Impact* im) {
  // As for a replayed prediction: medium at most (review v63 item 2).
  const bool thin = m.steps < 3 * int64_t(m.workers.size()) || m.measured_step_ns < 1e6;
  im->method = "replay";
  im->confidence = thin ? "low" : "medium";
  im->baseline_miss_pct = 100 * miss;
  im->step_ns_after_fix = m.measured_step_ns * ratio;
  im->saving_pct = 100 * (1 - ratio);
  const double u = std::max(0.01, std::abs(miss) + spread);
  im->low_ns = im->step_ns_after_fix * (1 - u);
  im->high_ns = im->step_ns_after_fix * (1 + u);
}

bool PredictFromSaturatedLink(const ReplayModel& m, const ReplayModel& linked, const Fix& fix,
                              double spread, const std::string& what, const std::string& estimated,
                              const std::string& checks, double max_direction, Impact* im_out,
                              std::string* why_not, bool rate_from_answers) {
  std::string no;
  std::string& why = why_not != nullptr ? *why_not : no;
  const double dir = BusiestLinkDirection(m, linked);
  if (m.workers.empty() || dir <= 0) {
    why = "no PS links";
    return false;
  }
  if (m.sync) {
    why = "SyncReplicasOptimizer: the barrier, not a PS link, paces the step";
    return false;
  }
  if (dir < kMinSaturatedDirection || dir > max_direction) {
    why = fmt::format(
        "the busiest PS link direction carries {:.0f}% of the step, outside {:.0f}-{:.0f}%",
        100 * dir, 100 * kMinSaturatedDirection, 100 * max_direction);
    return false;
  }
  if (rate_from_answers && dir > kMaxAnswersDirection) {
    Impact& im = *im_out;
    im.withheld = fmt::format(
        "the busiest PS link direction carries {:.0f}% of the step at the rate the last answers "
        "give, over {:.0f}%: that estimate reads so wherever each answer takes many times the "
        "answers' spacing, whether the link queues them or the PS is slow to send them (a CPU "
        "quota the capture does not show), and which of the two the capture cannot tell",
        100 * dir, 100 * kMaxAnswersDirection);
    im.why = im.withheld + "; the fix modelled: " + what + "; " + checks;
    why = im.withheld;
    return true;
  }
  // The waits on a saturated link are its queue: none held, the links replay must reproduce the
  // step on its own.
  ReplayModel q = linked;
  for (ReplayModel::Worker& w : q.workers) w.recv_ns = w.tail_ns = 0;
  const Baseline qb = ReplayBaseline(q);
  if (qb.replay_ns <= 0 || std::abs(qb.miss) > kMaxBaselineMiss) {
    why = fmt::format(
        "over the PS links with no wait held the replay of the capture as is misses it by {:.0f}%",
        std::abs(100 * qb.miss));
    return false;
  }
  if (const double h = HeldTransferShare(q); h > kMaxFixedTransferShare) {
    why =
        fmt::format("over the PS links the transfers held fixed are {:.0f}% of the step", 100 * h);
    return false;
  }
  const int steps = ReplaySteps(q);
  const double after = ReplayMedianStep(q, fix, steps);
  const double after_dear = ReplayMedianStep(AtDispatchCost(q), fix, steps);
  if (after <= 0 || std::abs(after_dear - after) / after > kMaxPartOpSensitivity) {
    why = "the fix's part ops at TF's dispatch cost move the replay more than 25%";
    return false;
  }
  Impact& im = *im_out;
  SetLinksPrediction(m, std::max(after, after_dear) / qb.replay_ns, qb.miss, spread, &im);
  im.why = fmt::format(
      "a PS link saturated: the workers x the busiest PS's bytes one way per worker step are "
      "{:.0f}% of the step at the links' rate, so its link's queue, not a fixed delay, is the "
      "workers' wait; replayed over the PS links with no wait held (the replay of the capture as "
      "is with none: {:+.0f}%): {}: median step {} -> {} ({}); {} confidence: the new PS's links "
      "are taken to be as fast as the busiest one's (set on two spent sets){}; {}",
      100 * dir, 100 * qb.miss, what, FormatDurationShort(im.step_ns),
      FormatDurationShort(im.step_ns_after_fix), FormatRange(im.low_ns, im.high_ns), im.confidence,
      estimated.empty() ? "" : "; " + estimated, checks);
  return true;
}

}  // namespace tfdiag
