#include "analyzers/replay_nic_bytes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzers/analysis_input.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/recv_link_time.h"
#include "analyzers/task_stats.h"
#include "core/median.h"

namespace tfdiag {

NicDemand PsNicBytesBesideControl(const AnalysisInput& in, const ReplayModel& m) {
  NicDemand d = PsNicBytes(in, m);
  if (d.known || m.steps <= 0) return d;
  NicDemand r = PsNicBytes(in, m, /*beside_control=*/true);
  return r.known ? r : d;
}

PsReceiveIntervals PsReceives(const AnalysisInput& in, const ReplayModel& m) {
  const Capture& c = in.capture;
  StringTest is_recv(c, IsRecvOpType);
  PsReceiveIntervals recv(m.ps.size());
  for (size_t p = 0; p < m.ps.size(); ++p) {
    const TaskStats* t = in.stats.Find(c.TaskLabelOf(m.ps[p].task));
    if (t == nullptr) continue;
    ForEachOpOfTask(c, *t, [&](const OpRow& op) {
      if (is_recv(c.OpType(op))) recv[p].emplace_back(op.start, op.end());
    });
  }
  return recv;
}

TimeNs ReceiveLatency(const PsReceiveIntervals& recv) {
  TimeNs shortest = -1;
  for (const auto& iv : recv) {
    for (const auto& [a, b] : iv) {
      if (shortest < 0 || b - a < shortest) shortest = b - a;
    }
  }
  return shortest < 0 ? -1 : std::min(shortest, kMaxReceiveLatencyNs);
}

RecvLinkRead RecvLinkRateOf(PsReceiveIntervals recv, const std::vector<double>& bytes_in,
                            int steps) {
  RecvLinkRead r;
  const TimeNs latency = ReceiveLatency(recv);
  if (latency < 0 || steps <= 0) {
    r.refused = "the PS show no receive ops";
    return r;
  }
  struct Read {
    double rate, share;
  };
  std::vector<Read> reads;  // the PS with bytes and receives
  int best = -1;
  for (size_t p = 0; p < recv.size() && p < bytes_in.size(); ++p) {
    auto& iv = recv[p];
    if (iv.size() < 2 || bytes_in[p] <= 0) continue;
    TimeNs first = iv[0].first, last = iv[0].second;
    for (auto& [a, b] : iv) {
      first = std::min(first, a), last = std::max(last, b);
      a = std::min(b, a + latency);
    }
    const TimeNs busy = UnionLength(&iv);
    if (busy <= 0 || last <= first) continue;
    reads.push_back(
        {bytes_in[p] * double(steps) / (double(busy) * 1e-9), double(busy) / double(last - first)});
    if (reads.back().share >= kMinRecvLinkBusy &&
        (best < 0 || reads.back().share > reads[size_t(best)].share)) {
      best = int(reads.size()) - 1;
    }
  }
  if (best < 0) {
    r.refused = fmt::format("no PS receive link is busy {:.0f}% of its receives' span",
                            100 * kMinRecvLinkBusy);
    return r;
  }
  // The check: where the PS links bound the receives, every PS's receives read the same rate,
  // the less loaded ones' too (their receives are the bytes' time on a less busy link), so the
  // median of the OTHER PS busy at least kMinRecvLinkCheckBusy (one at least) must read it. Where
  // it reads another, something else (the workers' own NICs sending to every PS at once, gen2
  // report5 1227: the busiest PS 13.8 Gb/s, the median 5.2) stretches them: no estimate.
  const double estimate = reads[size_t(best)].rate;
  std::vector<double> others;
  for (size_t i = 0; i < reads.size(); ++i) {
    if (int(i) != best && reads[i].share >= kMinRecvLinkCheckBusy) others.push_back(reads[i].rate);
  }
  if (others.empty()) {
    r.refused = fmt::format(
        "the busiest PS receive link reads {:.2g} Gb/s, and no other PS's receives (busy {:.0f}% "
        "of their span at least) check it",
        estimate * 8 / 1e9, 100 * kMinRecvLinkCheckBusy);
    return r;
  }
  const double median = MedianInPlace(&others);
  if (std::abs(median / estimate - 1) > kMaxRecvLinkRateSpread) {
    r.refused = fmt::format(
        "the busiest PS receive link reads {:.2g} Gb/s and the other PS's median {:.2g}, more "
        "than {:.0f}% apart (the receives are not the PS links' time)",
        estimate * 8 / 1e9, median * 8 / 1e9, 100 * kMaxRecvLinkRateSpread);
    r.disagree = true;
    return r;
  }
  r.bytes_per_s = estimate;
  return r;
}

NicRateEstimate ReceiveLinkRate(const AnalysisInput& in, const ReplayModel& m, const NicDemand& d,
                                std::string* refused, bool* disagree) {
  NicRateEstimate r;
  RecvLinkRead read;
  if (!d.known || m.steps <= 0) {
    read.refused = "the capture does not size the bytes the PS receive";
  } else {
    read = RecvLinkRateOf(PsReceives(in, m), d.in, m.steps);
  }
  if (refused != nullptr) *refused = read.refused;
  if (disagree != nullptr) *disagree = read.disagree;
  r.bytes_per_s = read.bytes_per_s;
  r.limited_by_ps = r.bytes_per_s > 0;
  return r;
}

namespace {

// The workers' NICs as links too (ReplayModel::worker_links), `rate_of` giving the rate with
// them (a fit to the answers' times moves with them), kept unless the replay of the capture as is
// misses the step by more than kMaxWorkerNicMissGain beyond its miss with the PS ends alone (a
// capture whose workers took their answers faster than their NICs at that rate would carry, a
// worker on a faster NIC than the PS's, is not replayed as if they were bound), or past
// kMaxBaselineMiss where the PS ends alone are within it (the links' gate, which they would fail).
template <typename RateOf>
void TryWorkerNics(const NicDemand& d, const ReplayModel& m, RateOf rate_of, ChosenLinks* r) {
  ReplayModel with = m;
  with.worker_links = true;
  const NicRateEstimate nic = rate_of(with);
  if (nic.bytes_per_s <= 0) return;
  SetLinks(d, nic.bytes_per_s, /*as_captured=*/true, &with);
  const Baseline base = ReplayBaseline(with);
  const double was = std::abs(r->base.miss), miss = std::abs(base.miss);
  if (base.replay_ns <= 0 || miss > was + kMaxWorkerNicMissGain ||
      (r->base.replay_ns > 0 && was <= kMaxBaselineMiss && miss > kMaxBaselineMiss)) {
    return;
  }
  r->nic = nic, r->linked = std::move(with), r->base = base;
}

}  // namespace

ChosenLinks ChooseLinks(const AnalysisInput& in, const ReplayModel& m) {
  ChosenLinks r;
  const NicDemand beside = PsNicBytesBesideControl(in, m);
  bool disagree = false;
  r.nic = ReceiveLinkRate(in, m, beside, &r.recv_refused, &disagree);
  if (r.nic.bytes_per_s > 0) {
    r.linked = m;
    SetLinks(beside, r.nic.bytes_per_s, /*as_captured=*/true, &r.linked);
    r.base = ReplayBaseline(r.linked);
    const NicRateEstimate nic = r.nic;  // the PS receive links' rate: the workers' NICs leave it
    TryWorkerNics(
        beside, m, [&](const ReplayModel&) { return nic; }, &r);
    // Kept where its replay as is misses too (the replay with no wait held may still match the
    // step, replay_impact.cc): the answers' estimate in its place, where it replayed the capture
    // as is within kMaxBaselineMiss, was measured worse (2026-11-30: gen2 report4 1010, 2 -> 16 PS
    // predicted +118% off its twin over the answers' 14 Gb/s, withheld over the receives' 9.7;
    // gen2 report5 1228, hot-ps -1% with no wait held over the receives' 1 Gb/s, withheld over the
    // answers' 1.7).
    return r;
  }
  const NicDemand bytes = PsNicBytes(in, m);
  r.nic = JobNicRate(in, m, bytes);
  if (r.nic.bytes_per_s > 0) {
    r.linked = m;
    SetLinks(bytes, r.nic.bytes_per_s, /*as_captured=*/true, &r.linked);
    r.base = ReplayBaseline(r.linked);
    TryWorkerNics(
        bytes, m, [&](const ReplayModel& w) { return JobNicRate(in, w, bytes); }, &r);
    return r;
  }
  // Receives shown not to be the links' time (the PS read rates that disagree): no links.
  if (disagree) return r;
  // No rate from bytes (none sized, or no other PS to check the one read): the links in their
  // own time (analyzers/recv_link_time.h), each PS's load its receive link's busy time, which
  // needs no bytes and no rate (gen3 report6 1701: 1 PS whose 1 Gb/s link carries 97% of the
  // step in transfers; the rate the one PS reads has no other to check it).
  std::string time_refused;
  const NicDemand time = RecvLinkTimeDemand(in, m, &time_refused);
  if (time.known) {
    r.nic.bytes_per_s = kLinkTimeBytesPerS;
    r.nic.limited_by_ps = 1;
    r.in_time = true;
    r.linked = m;
    r.linked.worker_links = false;  // the loads are times, not bytes a worker's NIC carries
    SetLinks(time, kLinkTimeBytesPerS, /*as_captured=*/true, &r.linked);
    r.base = ReplayBaseline(r.linked);
  } else if (!time_refused.empty() && !r.recv_refused.empty()) {
    r.recv_refused += "; in time, " + time_refused;
  }
  return r;
}

}  // namespace tfdiag
