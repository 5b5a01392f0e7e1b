// What ComputeImpacts (analyzers/replay_impact.cc) reads of the job once, before its findings
// (ImpactJob), and the replay it judges each finding's fix on (ImpactReplay), moved out of
// replay_impact.cc as they were. Internal to the replay (namespace replay_detail); the public API
// is analyzers/replay.h. Thread-safety: pure functions of their arguments.
#pragma once

#include <string>

#include "analyzers/nic_rate.h"
#include "analyzers/ps_count_saturated.h"
#include "analyzers/replay.h"
#include "analyzers/replay_queued_waits.h"

namespace tfdiag::replay_detail {

// A share of the step beside which a fix that re-places the PS work (PS added, or the applies
// run per push once asynchronous) is judged: held there (Worker::recv_ns, tail_ns), at most
// medium; made by the PS queues for a pull no receive op spans (UnspannedPullShare), a fix
// adding PS gets the queues-alone replay's guards. Set on indep report9: 17018 (2 -> 7 PS, 7.5%
// held) and 17005 (asynchronous, 7.0%) were high and 12-13% off their twins, the other high
// predictions of such fixes on the six spent sets (gen3 report3-4, gen2 report4-5, indep
// report8-9) held at most 3.2% and were within 4%.
inline constexpr double kReplacedWaitShare = 0.05;

// The job as every finding's prediction reads it: the FIFO replay's checks (shares of the
// measured median step, ratios), the PS NICs replayed as links where the FIFO replay's transfers
// would withhold, the replays with no waits held, and the texts each prediction's `why` names.
struct ImpactJob {
  int steps = 0;  // the steps each replay runs (ReplaySteps)
  Baseline base;  // the FIFO replay of the capture as is
  // The gates' limits: kMaxUnexplainedShare, kMaxBaselineMiss, kMaxFixedTransferShare,
  // kMaxPartOpSensitivity (analyzers/replay.h).
  double unexplained = 0;    // UnexplainedWaitShare, ratio of the step
  double spread = 0;         // half the steps' interquartile range over the median step, ratio
  double transfer = 0;       // FixedTransferShare, ratio of the step
  ReplayModel linked;        // the PS NICs as links (link_bytes_per_ns 0: none)
  Baseline linked_base;      // its replay of the capture as is
  NicRateEstimate nic;       // the links' bandwidth and its source
  std::string recv_refused;  // why the PS receive links gave no rate (ChooseLinks)
  bool in_time = false;      // the links in their own time: nic.bytes_per_s is a unit, not a NIC's
  bool links = false;        // the fixes are replayed over the links
  double unexplained_links = 0;  // the unexplained share the fixes over the links weigh, ratio
  double held_links = 0;         // the transfers they hold fixed, ratio of the step
  PsCpuBound cpu;                // the busiest PS's CPU bound (ps_count_saturated.h)
  bool cpu_bound = false;
  bool even_ps = false;  // the PS share the load about evenly
  // PS of one thread, or of cores (at least their threads) the capture shows.
  bool cores_shown = false;
  bool added_queues_known = false;  // cores_shown && even_ps
  // Every PS's node is known (the pod list's, or the pods' processes': ReplayModel::ps_node)
  // and none holds two PS: the NIC rate the links read is one PS's own, which a PS added on a
  // node of its own (PsNodesAfter) gets too.
  bool own_nics = false;
  std::string uneven_load;                // why not even_ps, in words
  double unspanned_pull = 0;              // UnspannedPullShare, ratio of the step
  QueuedWaits queued_fifo, queued_links;  // the replays with no waits held (ok: built, matching)
  std::string links_as;                   // what the links were read as (in time), "" otherwise
  std::string nic_from;                   // where the links' bandwidth was read
  std::string no_links;  // why the network could not be replayed (for a withheld prediction)
  std::string network;   // the transfers' part of `checks`
  std::string checks;    // the checks on evidence the replay is not fitted to, in words
};

// Reads the ImpactJob of `m` (BuildReplayModel of `in`) under `rules`: the links and the replays
// with no waits held only where a gate would withhold.
ImpactJob ReadImpactJob(const AnalysisInput& in, const ReplayModel& m, const ImpactRules& rules);

// The replay one finding's fix is judged on: the FIFO model, the links', or one with no waits
// held (QueuedWaits), and the baseline its prediction is scaled from (the median step, or the
// mean one where FixPlan::mean_step_ns says so). `model` and `queued` point into the ReplayModel
// and ImpactJob ChooseImpactReplay was given, which must outlive it.
struct ImpactReplay {
  bool use_links = false;               // replayed over the PS NICs as links
  const ReplayModel* model = nullptr;   // the model replayed
  Baseline base;                        // its replay as is against the step it is judged on
  Baseline median_base;                 // ... against the workers' median step
  Baseline mean_base;                   // ... against the mean step (on_mean)
  bool on_mean = false;                 // judged on the mean step (FixPlan::mean_step_ns)
  double held = 0;                      // the transfers held fixed, ratio of the step
  double unexplained_here = 0;          // the unexplained share its gate weighs, ratio
  bool drops_wait = false;              // the fix acts on the exposed receive wait itself
  bool adds_ps = false;                 // the fix adds PS
  const QueuedWaits* queued = nullptr;  // the replay with no waits held, where used
  std::string not_queued;  // why the replay with no waits held, which matches, is not used
  double scale_ns = 0;     // the step the prediction is scaled from, ns
  double pnow = 0;         // base.replay_ns, ns
};

// Chooses the replay for `fix` (the finding's FixPlan `plan`) on `m` and `job`.
ImpactReplay ChooseImpactReplay(const ReplayModel& m, const ImpactJob& job, const Fix& fix,
                                const FixPlan& plan);

}  // namespace tfdiag::replay_detail
