#pragma once
// The PS links in a convoy (issue 44: a PS count the PS links bound, where the replay holds the
// workers' waits fixed). Workers that start their pulls together share the busiest PS's links
// equally, so each waits for all of them: every worker's step is the workers x that PS's link
// time per worker step (its answers out, then its gradients in, one after the other) plus what
// does not wait on it, and the transfers keep the workers together (equal shares end together).
// The capture shows it where the busiest PS's link time per worker step x the workers is about the
// measured step, and the workers spend about that share of their step waiting on receives and
// transfers. A PS-count fix that re-partitions every variable over n PS spreads the link time
// evenly: the busiest link's load becomes the sum over the PS / n, or, where PS share a node's NIC
// (ReplayModel::ps_node), the busiest node's share of it (LinkConvoy::BusiestAfterNs).
// Thread-safety: pure functions.
#include <string>
#include <vector>

#include "analyzers/finding.h"
#include "analyzers/replay.h"
#include "analyzers/replay_nic_bytes.h"

namespace tfdiag {

// The convoy ReadLinkConvoy reads off a capture: the shares of the step (of the measured median
// step, 0-1 and over) the busiest PS's links and the workers' waits take, each PS's link time per
// worker step (ns), and the readings' flags; the savings a fix buys follow from them (SavingFor).
struct LinkConvoy {
  bool convoy = false;    // a convoy is read (why_not says why not)
  double link_share = 0;  // workers x the busiest PS's link time per worker step / the step
  double wait_share = 0;  // the median worker's receive wait and transfers / the step
  double busiest_ns = 0;  // the busiest PS's link time (out + in) per worker step, ns
  double sum_ns = 0;      // the same summed over the PS, ns
  std::string why_not;    // why no convoy is read ("" when one is)
  // Every PS's link time at least ConvoyLimits::even_min_link of the busiest's: the count's
  // saving is the same whether the PS have NICs of their own or share one (ConvoyLimitsOf's note).
  bool even = false;
  // The links' time read one way (each PS's busier direction) where both ways exceed
  // ConvoyLimits::max_link of the step: the NICs carry both directions at once.
  bool one_way = false;
  double both_share = 0;  // with one_way: both ways' share of the step, over the band's top
  // With one_way: the busier direction's share is under the band's bottom (from
  // ConvoyLimits::one_way_min_link): how far the two directions overlap decides the convoy, and
  // the capture does not show it (links read in time have both ways equal). Predicted `low`, its
  // range at least kOneWayUnderBandSpread.
  bool under_band = false;
  // The workers' NICs as links in the replay as is (ReplayModel::worker_links: ChooseLinks kept
  // them). Each worker's NIC still carries its every pull and push after a fix of the PS, so the
  // step keeps the median worker's compute and unprefetched input (own_share, of the step; the
  // input left out where the pull ran beside it, Worker::pull_beside_input) and
  // its own transfers at the links' rate (worker_share: every PS's bytes out and in per worker
  // step over the rate, of the step): MostSaving.
  bool worker_nics = false;
  double own_share = 0, worker_share = 0;  // with worker_nics: shares of the step, as above
  // The links replay of the capture as is misses it by over kMaxBaselineMiss (at most
  // kMaxPredictedBaselineMiss): the convoy is read for a PS count only, not for a partition or a
  // spread of packed PS (session 63, spent: the counts read so were gen3 report38 8305 -2%, 8321
  // -4%, gen2 report39 8209 -19%, gen2 report38 8003 -14%, gen3 6322 +15% off their twins; the
  // partitions indep report43 51017 +59% and gen2 report39 8209 -44%, two of four).
  bool loose_fit = false;
  // Per PS (the model's order): its link time per worker step each way (answers out, gradients
  // in), ns, and its node (ReplayModel::ps_node; empty: each PS on a node of its own).
  std::vector<double> out_ns, in_ns;
  std::vector<int> ps_node;
  std::vector<uint32_t> ps_task;  // per PS (the model's order): its task index
  // The busiest link's time per worker step after a partition (Fix::partition, no PS-count
  // change): each hot PS's share of its link time (Fix::partition_bytes, else its op time share,
  // as the replay moves its bytes) leaves it, spread evenly over every PS, as
  // fixed_size_partitioner(num_ps) spreads the variable; on PS that share a node's NIC, the
  // busiest node's, scaled as BusiestAfterNs scales it. 0 where the fix moves no link time.
  double PartitionedNs(const Fix& fix) const;
  // The busiest link's time per worker step after `fix`, ns: with every variable re-partitioned
  // over fix.ps_count PS, sum_ns / that count where each PS has a NIC of its own; a partition
  // with no PS-count change, PartitionedNs. Where PS share a
  // node's NIC (PsPacked), the busiest node's: its PS's link times summed (each direction apart
  // where one_way), after the fix placed as PsNodesAfter says (a new PS count spreads every PS's
  // link time evenly; Fix::spread_ps keeps each PS's own), scaled by busiest_ns over the busiest
  // node's sum now (the capture's busiest PS reads its node's shared NIC: PS packed on one NIC
  // each read its busy time as their link time). 0 where the fix moves no link time.
  double BusiestAfterNs(const Fix& fix) const;
  // The step `fix` saves, share of the step: ConvoyShare() x (1 - BusiestAfterNs / busiest_ns),
  // at least 0 (gen3 report6 1724: link share 1.11, 6 PS; 74% uncapped, 67% capped, the twin
  // 67%), and at most MostSaving(): the links' fix removes at most what the workers wait on them,
  // less what each worker's own NIC keeps. 0 for a fix that moves no link time.
  double SavingFor(const Fix& fix) const;
  // The share of the step the convoy holds the workers in, which a fix spreading the links'
  // time shrinks: the busiest link's (link_share) or, where the workers wait longer, their waits
  // (wait_share: in a convoy the rest of the wait is the other PS's turns in the same pulls and
  // pushes, spread with them), at most 1 (above it the two directions overlap). Taken as
  // link_share alone, the waits beyond it were held as compute (gen2 report19 4000, spent: link
  // share 0.91, the workers waiting 0.97 of a 2.23 s step; 14 -> 28 PS predicted +112% off its
  // twin, now +26%).
  double ConvoyShare() const;
  // The most a fix of the PS links saves, share of the step: wait_share, and where worker_nics,
  // at most 1 - own_share - worker_share (gen2 report38 8008, spent: 9 PS, 8 workers, each
  // worker's own transfers 22% of the step and its compute and input 9%; read one way, the hot
  // PS's partition was 46% under its twin without the floor, 8% over with it).
  double MostSaving() const;
  // SavingFor a new PS count `n` (every variable re-partitioned over n PS).
  double SavingAt(int n) const;
  // The busiest link's time per worker step with every PS on a NIC of its own (Fix::spread_ps),
  // read the other way: each PS's link time as read is its share of the NIC its node's k PS
  // shared, so alone it takes 1 / k of it (the most over the PS, ns). BusiestAfterNs reads it as
  // the PS's own time on a whole NIC. The capture cannot tell the two apart (no profile records
  // a NIC's speed); 0 where no PS shares a node.
  double BusiestAloneNs() const;
  // Whether the two readings of the spread put a step of `step_ns` (ns) within
  // kMaxSpreadReadingsApart of each other, either way; `*shared` and `*alone` get the step each
  // gives (ns, BusiestAfterNs's and BusiestAloneNs's). False where no PS shares a node.
  bool SpreadReadingsAgree(double step_ns, double* shared, double* alone) const;
};

// The most the two readings of a spread of packed PS (BusiestAfterNs and BusiestAloneNs) may put
// the step apart, either way, relative to the lower step, for a prediction: on gen2 report17-19
// (spent) the first reading was -1% to +65% off the spread twin and the second -64% to -5%, neither
// on every job.
inline constexpr double kMaxSpreadReadingsApart = 0.25;

// The least half-width of a prediction's range (share of the predicted step) from a convoy read
// one way under the band (LinkConvoy::under_band): on the spent tune cases of session 62 (gen2
// report38 8008, 8026; gen2 6021, 6402, 6403, 6421; indep 50014; gen3 6111) those predictions
// were 34% under to 35% over their twins.
inline constexpr double kOneWayUnderBandSpread = 0.35;

// The convoy on `m` with its links `linked` (SetLinks; ChooseLinks) and their replay as is
// `base`, under the limits `lim` (ConvoyLimitsOf): read where that replay reproduces the capture
// within kMaxPredictedBaselineMiss (over kMaxBaselineMiss: LinkConvoy::loose_fit), link_share is
// within [lim.min_link, lim.max_link] (both ways, or where both ways are over lim.max_link the
// busier direction alone from min(lim.min_link, lim.one_way_min_link): LinkConvoy::one_way,
// under_band), and wait_share is at least lim.min_wait x min(link_share, 1) (lim.even_min_wait
// where the links are even: LinkConvoy::even), in an asynchronous job.
LinkConvoy ReadLinkConvoy(const ReplayModel& m, const ReplayModel& linked, const Baseline& base,
                          const ConvoyLimits& lim);

// A fix adding PS (`fix`, whose plan text is `what`) predicted from the convoy on `m` and its
// links `linked` replayed as is (`linked_base`): true with `*im` set (method replay, medium at
// most, low on a thin capture or read one way under the band; range +-(|linked_base.miss| +
// spread), at least +-kOneWayUnderBandSpread under the band; `estimated` and `checks`
// appended to its why) where ReadLinkConvoy reads one under `lim`, false with `*im` untouched where
// not. Called by ComputeImpacts (replay_impact.cc) where the links bound the step. Set on gen3
// report6 (spent; 1701 +1%, 1709 -7%, 1722 +9%, 1723 +13%, 1724 +0% against their twins); checked
// on gen3 report7 (1901 -2%, 1919 +22%); gen3 report8 (2115 -1%, 2118 -1%) was checked on before it
// tuned the even-links reading (2124 -16%). `*why_not` (when given): why the convoy is not read
// ("no convoy: ..."), or that it moves no link time for `fix`; on LinkConvoy::loose_fit a
// partition or a spread is not read (false, `*why_not` saying so). `rate_from_answers`: the links'
// rate is the last answers' estimate (PredictFromSaturatedLink's, which may withhold: true with
// `*im` withheld).
bool PredictFromConvoy(const ReplayModel& m, const ReplayModel& linked, const Baseline& linked_base,
                       const Fix& fix, double spread, const std::string& what,
                       const std::string& estimated, const std::string& checks,
                       const ConvoyLimits& lim, Impact* im, std::string* why_not = nullptr,
                       bool rate_from_answers = false);

// The limits (ConvoyLimits, analyzers/replay.h) read from ps-worker-ratio's `rule`, each a
// param of it in percent (rules/default.rules.json gives each one's source); a param the rule
// lacks keeps the refusing default:
// - convoy_min_link_pct, convoy_max_link_pct: the band of link_share read as a convoy. Where both
//   ways exceed its top, each PS's busier direction alone is read against it (LinkConvoy::
//   one_way): a full-duplex NIC carries one worker's gradients in while it sends another's
//   answers out.
// - convoy_min_wait_pct: the least wait_share over link_share clamped at 1 (the workers wait on
//   what the links carry, at most the whole step; the waits also bound the saving,
//   LinkConvoy::SavingAt). Not lowered for PS packed on one node's NIC with uneven links: the
//   convoy's saving spreads each PS's link time over the new count as if each PS had a NIC of its
//   own, and the packed NIC keeps the busiest's time x np / n, more than the sum / n.
// - convoy_one_way_min_link_pct: where both ways exceed the band's top, the bottom of the band
//   for the busier direction alone (under convoy_min_link_pct: LinkConvoy::under_band).
// - convoy_even_min_link_pct, convoy_even_min_wait_pct: where every PS's link time is at least
//   the first share of the busiest's (LinkConvoy::even), the least wait_share over link_share
//   (clamped at 1) is the second. PS packed on one node's NIC each read the NIC's busy time as
//   their link time; with even links the sum over the PS / n is then the packed NIC's time at n PS,
//   the same saving as for PS on NICs of their own, so the convoy holds either way.
ConvoyLimits ConvoyLimitsOf(const Rule& rule);

}  // namespace tfdiag
