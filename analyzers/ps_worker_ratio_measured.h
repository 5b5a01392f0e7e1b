// ps-worker-ratio by measurement (issue 44): the band is a starting point, "then tune by
// measurement". Where the replay of the capture as is reproduces the job, more PS are replayed
// (what-if) at a few candidate counts, every variable re-partitioned over each as the rule's fix
// text says (the fix model PsWorkerRatioFix replays), and the smallest count that buys nearly all
// of the best saving is the measured count. Thread-safety: pure functions.
#pragma once

#include <string>

#include "analyzers/analysis_input.h"
#include "analyzers/ps_count_saturated.h"
#include "analyzers/replay.h"
#include "analyzers/replay_nic_bytes.h"

namespace tfdiag {

// The most PS the what-if tries, as a multiple of the captured count (and never over the rule's
// measured_max_ps): +1, 1.5x, 2x, 3x and 4x are tried, two replays each (at the PS's own cost per
// op and at TF's dispatch cost per part op). A model constant, the top of that grid: the
// generators' candidate counts are at most 2x; 4x bounds the analysis time (11 replays, each
// bounded as ReplaySteps bounds one, and a PS-count replay's queue scaling,
// ReplayWithPsQueueScaled, up to 3 simulations each).
inline constexpr int kMaxPsMultiple = 4;

struct MeasuredPsCount {
  int count = 0;            // the suggested count; 0: no count buys rule.measured_min_saving_pct
  double saving = 0;        // its replayed saving, share of the measured step
  int best_count = 0;       // the candidate of the largest saving
  double best_saving = 0;   // its saving, share of the step
  int tried = 0;            // candidates replayed
  int lo = 0, hi = 0;       // the smallest and largest candidate replayed
  double busiest_util = 0;  // the busiest PS's op time x workers / threads / step
  // What re-partitioning every variable over the captured count buys in the replay, share of the
  // step (part of `saving` and `best_saving`).
  double placement_saving = 0;
  std::string why_none;  // why no measurement was made ("" when one was)
  // Measured over the PS links (ChooseLinks' model) rather than the PS queues alone.
  bool over_links = false;
  // Over the links: the busiest PS's links' load, its bytes in and out per worker step x workers
  // / their rate / the step (a worker's pull and push cross them one after the other).
  double busiest_link = 0;
  // Over the links in a convoy (analyzers/ps_links_convoy.h): the savings are the convoy's, not
  // a replay's; `busiest_link` is its link share, `convoy_wait` the workers' waits' share.
  bool convoy = false;
  double convoy_wait = 0;
  // The convoy read on each PS's busier direction alone (LinkConvoy::one_way), and under the
  // band's bottom (LinkConvoy::under_band: how far the directions overlap decides it).
  bool convoy_one_way = false, convoy_under_band = false;
  // Measured on the PS queues alone (no worker's wait held: replay_queued_waits.h), the busiest
  // PS's CPU bounding the throughput (ps_count_saturated.h) where the FIFO replay's waits fail
  // its gates.
  bool cpu_bound = false;
  double queued_miss = 0;  // there, the PS queues alone off the measured step, ratio (signed)
};

// Why the FIFO replay of `m` (`base`: its ReplayBaseline) cannot measure (MeasurePsCount's gates
// before the links), "" where it can. No floor on the PS's load: where the replay reproduces the
// job, its queues decide what a count buys (issue 44, session 35: gen3 report11 2707 and 2725, one
// PS busy 37-39% of its threads' time for 4 workers whose pulls arrive together; 2-3 PS buy 8-18%
// in their twins, and the replay's count is within 1% of each; before, a 50% floor left both with
// no finding).
std::string FifoRefused(const ReplayModel& m, const Baseline& base);

// The measurement on `m`, the capture's replay model (BuildReplayModel).
// No count where the replay of the capture as is misses the measured step by more than
// kMaxPredictedBaselineMiss (past kMaxBaselineMiss the PS queues alone first where the CPU bounds
// the step), more than kMaxUnexplainedShare of the step is wait the PS model does not
// explain, or the transfers held fixed are more than kMaxFixedTransferShare of it
// (ComputeImpacts' gates, analyzers/replay.h: its prediction would be withheld or made on
// another model), under SyncReplicasOptimizer (ReplayModel::sync), or where no count buys
// measured_min_saving_pct with measured_min_count_saving_pct its own (beyond
// MeasuredPsCount::placement_saving). The FIFO replay measures whatever the PS's load: its queues
// decide what a count buys.
// Where those gates refuse the FIFO replay and `links` (ChooseLinks on `m`) are given, the
// counts are replayed over the PS links instead where ComputeImpacts would replay them so: the
// FIFO replay's transfers over kMaxFixedTransferShare, the links' replay as is within
// kMaxBaselineMiss, what they leave unexplained and held within kMaxUnexplainedShare and
// kMaxFixedTransferShare, and the busiest PS's links (its bytes in and out per worker step x
// workers / rate) loaded at least measured_min_ps_util_pct of the step. Where the links replay
// cannot measure either, the links in a convoy (ReadLinkConvoy) give each count's saving.
// Before the links: where `cpu` (ReadPsCpuBound on `m`) reads the busiest PS's CPU as the bound
// and the FIFO replay with no wait held passes the FIFO gates on its own, the counts are replayed
// on it (MeasuredPsCount::cpu_bound).
MeasuredPsCount MeasurePsCount(const ReplayModel& m, const Rule& rule,
                               const ChosenLinks* links = nullptr, const PsCpuBound* cpu = nullptr);

}  // namespace tfdiag
