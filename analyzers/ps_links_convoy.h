#pragma once
// The PS links in a convoy (issue 44: a PS count the PS links bound, where the replay holds the
// workers' waits fixed). Workers that start their pulls together share the busiest PS's links
// equally, so each waits for all of them: every worker's step is the workers x that PS's link
// time per worker step (its answers out, then its gradients in, one after the other) plus what
// does not wait on it, and the transfers keep the workers together (equal shares end together).
// The capture shows it where the busiest PS's link time per worker step x the workers is about the
// measured step, and the workers spend about that share of their step waiting on receives and
// transfers. A PS-count fix that re-partitions every variable over n PS spreads the link time
// evenly: the busiest link's load becomes the sum over the PS / n. Thread-safety: pure functions.
#include <string>
#include <vector>

#include "analyzers/finding.h"
#include "analyzers/replay.h"
#include "analyzers/replay_nic_bytes.h"

namespace tfdiag {

struct LinkConvoy {
  bool convoy = false;
  double link_share = 0;  // workers x the busiest PS's link time per worker step / the step
  double wait_share = 0;  // the median worker's receive wait and transfers / the step
  double busiest_ns = 0;  // the busiest PS's link time (out + in) per worker step, ns
  double sum_ns = 0;      // the same summed over the PS, ns
  std::string why_not;    // why no convoy is read ("" when one is)
  // Every PS's link time at least kMinEvenLinkShare of the busiest's: the count's saving is the
  // same whether the PS have NICs of their own or share one (LinkConvoy::even's note below).
  bool even = false;
  // The links' time read one way (each PS's busier direction) where both ways exceed
  // kMaxConvoyLinkShare of the step: the NICs carry both directions at once.
  bool one_way = false;
  double both_share = 0;  // with one_way: both ways' share of the step, over the band's top
  // The step saved with every variable re-partitioned over `n` PS, share of the step:
  // min(1, link_share) x (1 - sum_ns / n / busiest_ns), at least 0 (gen3 report6 1724: link share
  // 1.11, 6 PS; 74% uncapped, 67% capped, the twin 67%), and at most wait_share: the links' fix
  // removes at most what the workers wait on them.
  double SavingAt(int n) const;
};

// The convoy on `m` with its links `linked` (SetLinks; ChooseLinks) and their replay as is
// `base`: read where that replay reproduces the capture within kMaxBaselineMiss, link_share is
// within [kMinConvoyLinkShare, kMaxConvoyLinkShare], and wait_share is at least
// kMinConvoyWaitOverLink x link_share (kMinEvenConvoyWaitOverLink where the links are even:
// LinkConvoy::even), in an asynchronous job.
LinkConvoy ReadLinkConvoy(const ReplayModel& m, const ReplayModel& linked, const Baseline& base);

// A fix adding PS (`fix`, whose plan text is `what`) predicted from the convoy on `m` and its
// links `linked` replayed as is (`linked_base`): true with `*im` set (method replay, medium at
// most, low on a thin capture; range +-(|linked_base.miss| + spread); `estimated` and `checks`
// appended to its why) where ReadLinkConvoy reads one, false with `*im` untouched where not.
// Called by ComputeImpacts (replay_impact.cc) where the links bound the step. Set on gen3 report6
// (spent; 1701 +1%, 1709 -7%, 1722 +9%, 1723 +13%, 1724 +0% against their twins); checked on
// gen3 report7 (1901 -2%, 1919 +22%); gen3 report8 (2115 -1%, 2118 -1%) was checked on before
// it tuned the even-links reading (2124 -16%).
bool PredictFromConvoy(const ReplayModel& m, const ReplayModel& linked, const Baseline& linked_base,
                       const Fix& fix, double spread, const std::string& what,
                       const std::string& estimated, const std::string& checks, Impact* im);

// Where both ways exceed the band's top, each PS's busier direction alone is read against the
// band (LinkConvoy::one_way): a full-duplex NIC carries one worker's gradients in while it sends
// another's answers out. Set on gen2 report9 2010 (1 PS, both ways 1.85, one way in the band: 1 ->
// 3 PS predicted +20% of the twin; 1 -> 7 over the links replay +26%) and checked on gen2 report8
// 1818 (1 -> 3 PS +7%; 1 -> 5 before, -20%) and 1813 (8 -> 12 PS -28%, withheld before, `Fix
// first` right); gen3 report7-8 and indep report12-13 unchanged.
// The band of link_share read as a convoy: its low end set on gen3 report6, its high end on gen3
// report5 1503 (no set has checked the high end: review v62 item 4). Set on gen3 report6 (1701,
// 1709, 1722, 1723, 1724: 0.92-1.11, the model within 6 points of each twin's saving at 1.5-3x the
// PS); above it the links overlap the two directions (gen3 report5 1503: 1.17, 32 PS would be said
// to buy 70%, the twin 51%), below it the links are not all of the step: tfdiag's gather-on-worker
// scenario as ProfilerHook's files (tests/scenario_matrix_test.cc) reads 0.86 with the workers
// waiting 79% of the step, its fix the gathers on the PS (their count was named at 0.85).
inline constexpr double kMinConvoyLinkShare = 0.90;
inline constexpr double kMaxConvoyLinkShare = 1.15;

// The least wait_share over link_share: the workers wait on what the links carry. Set on gen3
// report6 (the five above: 0.87-1.05) and gen2 report7 (1607: link time 1.03 of the step, the
// workers' waits 7%; 4 PS would be said to buy 62%, the twin 6%). Not lowered for PS packed on one
// node's NIC (gen3 report8 2124: 0.82, 2127: 0.76): the convoy's saving spreads each PS's link
// time over the new count as if each PS had a NIC of its own, and 2127's 10 packed PS, their
// link times unequal, read 10 -> 15 PS as -74% against the twin's -29% (the 10 stay on one NIC).
// The waits also bound the saving (LinkConvoy::SavingAt).
inline constexpr double kMinConvoyWaitOverLink = 0.85;

// Where the links are even (every PS's link time at least kMinEvenLinkShare of the busiest's),
// the least wait_share over link_share is kMinEvenConvoyWaitOverLink. PS packed on one node's NIC
// each read the NIC's busy time as their link time (their transfers share it, so each PS's are in
// flight while the NIC is busy); with even links the sum over the PS / n is then the packed NIC's
// time at n PS (it keeps np / n of the bytes, the new PS on hosts of their own less), the same
// saving as for PS on NICs of their own, so the convoy holds either way. With uneven links the
// packed NIC keeps the busiest's time x np / n, more than the sum / n (2127 above). Set on gen3
// report8 2124 (3 packed PS, even; 0.82: 3 -> 9 PS predicted 29.7 ms, the twin 35.4 ms); no job
// of gen3 report7-8, gen2 report8-9 or indep report12-13 reads 0.07-0.75.
inline constexpr double kMinEvenLinkShare = 0.9;
inline constexpr double kMinEvenConvoyWaitOverLink = 0.75;

}  // namespace tfdiag
