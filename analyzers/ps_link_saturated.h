#pragma once
// A PS link saturated in one direction (issue 44: a PS count the PS links bound, where the replay
// holds the workers' waits fixed and the links are not in a convoy). The busiest PS's answers out
// (or gradients in) per worker step x the workers, at the link rate the capture reads, fill the
// step: that direction of its NIC carries a worker step's bytes for every worker each step, and
// the step is that link's throughput bound. The workers' waits on it are then queueing on the
// link, not fixed delays: the links replay with no waits held (each worker's unexplained receive
// wait and tail dropped) must reproduce the measured step on its own, and a PS-count fix that
// re-partitions every variable over n PS is replayed on it, the bytes spread over the n PS links.
// Thread-safety: pure functions.
#include <string>

#include "analyzers/finding.h"
#include "analyzers/replay.h"

namespace tfdiag {

// The busiest direction of any PS's link: workers x its bytes that way per worker step / the
// link rate / the measured step, on `linked` (SetLinks: ChooseLinks' model; in its own time the
// bytes are the link's busy time at 1 byte/ns) against `m`'s measured step. 0 without links.
double BusiestLinkDirection(const ReplayModel& m, const ReplayModel& linked);

// A fix adding PS (`fix`, whose plan text is `what`) predicted on the links `linked` with no
// waits held, where BusiestLinkDirection is within [kMinSaturatedDirection, `max_direction`]
// (ps-worker-ratio's convoy_max_link_pct / 100, ConvoyLimits::max_link: above it the rate read
// is not the link's, it carries more than it can), the job is asynchronous, that replay as is
// reproduces the measured step within kMaxBaselineMiss, holds at most kMaxFixedTransferShare of the
// step fixed, and the fix's part ops at TF's dispatch cost move it at most kMaxPartOpSensitivity
// (the dearer is predicted). true with `*im` set (method replay, medium at most, low on a thin
// capture; range
// +-(|miss| + spread); `estimated` and `checks` appended to its why); false with `*im` untouched
// and `*why_not` (when given) set where not. Called by PredictFromConvoy (ps_links_convoy.h)
// where the links are in no convoy.
// `rate_from_answers`: the links' rate is the last answers' estimate (nic_rate.h
// EstimateJobNicRate); over kMaxAnswersDirection that reading cannot tell a saturated link from a
// PS slow to send, and the prediction is withheld: true with `*im`'s withheld and why set (the
// FIFO replay of the same capture holds those waits as the PS's op time, no better).
bool PredictFromSaturatedLink(const ReplayModel& m, const ReplayModel& linked, const Fix& fix,
                              double spread, const std::string& what, const std::string& estimated,
                              const std::string& checks, double max_direction, Impact* im,
                              std::string* why_not = nullptr, bool rate_from_answers = false);

// Sets `*im` to a prediction on the links, read or replayed but not fitted: method "replay", the
// step after the fix at `ratio` of the measured step, its range +-(|miss| + spread) (at least 1%),
// `miss` (share) its baseline miss, medium confidence, low on a thin capture (under 3 steps a
// worker, steps under 1 ms). Shared with PredictFromConvoy.
void SetLinksPrediction(const ReplayModel& m, double ratio, double miss, double spread, Impact* im);

// The low end of the band of BusiestLinkDirection read as a saturated link, a model constant no
// rule states (PredictFromSaturatedLink's `max_direction` is its high end). Set on gen2 report8
// (spent: 1818, 1 PS's answers 92% of the step, 1 -> 5 PS; 1813, 98%, its held transfers refuse
// it) and gen3 report7 (1920: 92% in the link's own time, 4 -> 24 PS).
inline constexpr double kMinSaturatedDirection = 0.90;

// The most of the step the busiest direction may carry, read at the rate the last answers give
// (EstimateJobNicRate), for a prediction on the saturated link. That estimate solves the
// processor-sharing queue's mean transfer time T for the rate R = b (1 / T + lambda), so the
// direction's share lambda b / R is lambda T / (1 + lambda T): under 1 by construction, and near it
// wherever each answer takes many times the answers' spacing (lambda T over 32 reads over 97%),
// whether the link queues the answers or a PS holds them (a CPU quota the capture does not show).
// Set on gen2 report4 1006 (98%: 3 -> 28 PS predicted +51% off its twin, its PS packed on shared
// NICs) and report22 4619 (100%: 9 -> 20 PS, +167%, its PS under a CPU quota; the FIFO replay of
// the same capture gives +350%), both withheld now; report21 4403 (96%, +10%) and report8 1818
// (92%, +7%) stay under it.
inline constexpr double kMaxAnswersDirection = 0.97;

}  // namespace tfdiag
