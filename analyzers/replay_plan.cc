#include "analyzers/replay_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "analyzers/replay_fix_reach.h"
#include "core/median.h"

namespace tfdiag::replay_detail {

namespace {
double Median(std::vector<double> v) { return MedianInPlace(&v); }
}  // namespace

// A standard normal draw for (worker, step), the same on every platform (splitmix64 and
// Box-Muller; std::normal_distribution differs between standard libraries), clamped to +-3.
double Jitter(uint64_t worker, uint64_t step) {
  auto mix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const uint64_t a = mix(worker * 1000003 + step), b = mix(a);
  const double u1 = (double(a >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = double(b >> 11) / 9007199254740992.0;
  const double z = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return std::clamp(z, -3.0, 3.0);
}

namespace {

// A uniform draw in [0, 1) for (worker, step, stream), the same on every platform.
double Uniform(uint64_t worker, uint64_t step, uint64_t stream) {
  uint64_t x = (worker * 1000003 + step) * 0x9e3779b97f4a7c15ULL + stream * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return double(x >> 11) / 9007199254740992.0;
}

// One of `ratios` (sorted), drawn for (worker, step, stream); 1 when there is none.
double Drawn(const std::vector<double>& ratios, uint64_t worker, uint64_t step, uint64_t stream) {
  if (ratios.empty()) return 1;
  const size_t i = size_t(Uniform(worker, step, stream) * double(ratios.size()));
  return ratios[std::min(i, ratios.size() - 1)];
}

}  // namespace

double SyncHold(const std::vector<double>& tails) { return tails.empty() ? 0 : Median(tails); }

double WorkerPlan::Compute(size_t w, uint64_t step) const {
  if (!compute_ratios.empty()) return compute[w] * Drawn(compute_ratios, w, step, 1);
  return std::max(0.0, compute[w] + sigma[w] * Jitter(w, step));
}

double WorkerPlan::Input(size_t w, uint64_t step) const {
  return input_ratios.empty() ? input[w] : input[w] * Drawn(input_ratios, w, step, 2);
}

PsPlan PlanPs(const ReplayModel& m, const Fix& fix) {
  PsPlan s;
  double moved_pull = 0, moved_push = 0, moved_out = 0, moved_in = 0, moved_locked = 0;
  const double n_ps = double(m.ps.size());
  // Asynchronous: no accumulators; the applies, once per global step under sync, once per push,
  // each at its share of the aggregated apply (Ps::async_apply_share: an embedding's push holds
  // one replica's rows).
  const bool to_async = fix.to_async && m.sync;
  // Each PS's host speed left after the fix (Ps::host_slowdown over the fix's own speedup): work
  // moved between PS is counted at the others' speed (its time here / slow) and runs `slow`
  // times longer on the PS it lands on.
  std::vector<double> slow;
  for (const ReplayModel::Ps& p : m.ps) {
    const double apply_scale =
        to_async ? double(m.workers.size()) * std::clamp(p.async_apply_share, 0.0, 1.0) : 1.0;
    // slow-ps-host: the task on a host at the others' speed.
    const double speedup = std::max(1.0, ForTask(fix.host_speedup, p.task));
    slow.push_back(std::max(1.0, p.host_slowdown / speedup));
    double pull =
        (p.pull_ns + ForTask(fix.ps_demand_add, p.task) - (m.sync ? p.sync_ns : 0)) / speedup;
    const double cut = ForTask(fix.ps_demand_cut, p.task);
    double push = std::max(0.0, p.push_ns * apply_scale - cut) / speedup;
    // The locked applies: a cut of the PS's applies (dense -> sparse applies) comes off them
    // first, as the dense applies it removes are the ones the lock serialized.
    const double locked = m.sync ? 0 : std::min(push, std::max(0.0, p.locked_ns - cut) / speedup);
    // A partition's share is of the PS's op time (VariableLoad::share: accumulators included);
    // under SyncReplicasOptimizer the replayed queue leaves the accumulator ops out (Ps::sync_ns),
    // so the variable's ops are that much larger a share of what the queue holds (gen2 report25
    // 5423, spent: a read 63% of ps:0's op time and 100% of its queue beside the accumulators,
    // 37%; moved at 63% of the queue, the partition was predicted +92% off its twin).
    const double queued = pull + push, held_out = m.sync ? p.sync_ns / speedup : 0;
    double share = std::clamp(ForTask(fix.partition, p.task), 0.0, 1.0);
    if (queued > 0) share = std::min(1.0, share * (queued + held_out) / queued);
    moved_pull += pull * share / slow.back();
    moved_push += push * share / slow.back();
    moved_locked += locked * share / slow.back();
    if (share > 0 && queued > 0 && !p.var_ops.empty() && !fix.rebalance) {
      // The hottest variable's ops, one per part now: cut into n_ps parts, an entry that is one
      // of k parts already grows to n_ps / k of its ops (PartOpsAdded), at the op's fixed cost,
      // split between pull and push as its time is.
      const double extra = std::max(0.0, PartOpsAdded(p, 0, int(n_ps))) * p.op_floor_ns;
      moved_pull += extra * pull / queued;
      moved_push += extra * push / queued;
    }
    s.pull.push_back(pull * (1 - share));
    s.push.push_back(push * (1 - share));
    s.locked.push_back(locked * (1 - share));
    s.threads.push_back(std::max(1, p.threads));
    s.requests.push_back(std::max(1.0, double(p.var_ns.size())));
    // Its NIC's bytes by the variable's share of them (gen2 report13 2811: 59% of ps:0's op time,
    // 89% of its answer bytes; moved by op time, the partition was predicted +32% off its twin).
    const double bytes = PartitionByteShare(fix, p.task);
    moved_out += p.out_bytes * bytes, moved_in += p.in_bytes * bytes;
    s.out.push_back(p.out_bytes * (1 - bytes));
    s.in.push_back(p.in_bytes * (1 - bytes));
  }
  for (size_t p = 0; p < s.pull.size() && !fix.partition.empty(); ++p) s.requests[p] += 1;
  for (size_t p = 0; p < s.pull.size(); ++p) {  // parts over all PS, as the partitioner's
    s.pull[p] += moved_pull / double(s.pull.size()) * slow[p];
    s.push[p] += moved_push / double(s.push.size()) * slow[p];
    s.locked[p] += moved_locked / double(s.locked.size()) * slow[p];
    s.out[p] += moved_out / double(s.out.size());
    s.in[p] += moved_in / double(s.in.size());
  }
  if (!fix.drop_ps.empty()) {  // the dropped PS's work spread over the others
    PsPlan kept;
    std::vector<double> kept_slow;
    double pull = 0, push = 0, out = 0, in = 0, locked = 0;
    for (size_t p = 0; p < m.ps.size(); ++p) {
      if (std::find(fix.drop_ps.begin(), fix.drop_ps.end(), m.ps[p].task) != fix.drop_ps.end()) {
        pull += s.pull[p] / slow[p], push += s.push[p] / slow[p], out += s.out[p], in += s.in[p];
        locked += s.locked[p] / slow[p];
      } else {
        kept_slow.push_back(slow[p]);
        kept.pull.push_back(s.pull[p]);
        kept.push.push_back(s.push[p]);
        kept.locked.push_back(s.locked[p]);
        kept.threads.push_back(s.threads[p]);
        kept.requests.push_back(s.requests[p]);
        kept.out.push_back(s.out[p]);
        kept.in.push_back(s.in[p]);
      }
    }
    if (!kept.pull.empty()) {
      for (size_t k = 0; k < kept.pull.size(); ++k) {
        kept.pull[k] += pull / double(kept.pull.size()) * kept_slow[k];
        kept.push[k] += push / double(kept.push.size()) * kept_slow[k];
        kept.locked[k] += locked / double(kept.locked.size()) * kept_slow[k];
      }
      for (double& d : kept.out) d += out / double(kept.out.size());
      for (double& d : kept.in) d += in / double(kept.in.size());
      s = std::move(kept);
      slow = std::move(kept_slow);
    }
  }
  if (fix.ps_count > 0 && !s.pull.empty()) {
    // The fix text (ps-worker-ratio, idle-ps): variables partitioned over the new PS count
    // (fixed_size_partitioner(num_ps)): all PS work spread evenly, each variable's ops one per
    // part, each part op paying the PS's fixed cost per op (Ps::op_floor_ns).
    const size_t n = size_t(fix.ps_count);
    double pull = 0, push = 0, extra = 0, locked = 0;
    // Work at the others' speed; each PS the cluster keeps runs its share at its host's speed
    // (the first n of today's PS keep their hosts), each PS added at the others'.
    for (size_t p = 0; p < s.pull.size(); ++p) {
      pull += s.pull[p] / slow[p], push += s.push[p] / slow[p], locked += s.locked[p] / slow[p];
    }
    for (const ReplayModel::Ps& p : m.ps) extra += PartOpsAdded(p, int(n)) * p.op_floor_ns;
    const double all = pull + push;
    const double pull_share = all > 0 ? pull / all : 0.5;
    const int threads = *std::max_element(s.threads.begin(), s.threads.end());
    double out = 0, in = 0;
    for (size_t p = 0; p < s.out.size(); ++p) out += s.out[p], in += s.in[p];
    s.out.assign(n, out / double(n));
    s.in.assign(n, in / double(n));
    s.pull.assign(n, std::max(0.0, pull + extra * pull_share) / double(n));
    s.push.assign(n, std::max(0.0, push + extra * (1 - pull_share)) / double(n));
    s.locked.assign(n, locked / double(n));
    for (size_t q = 0; q < n && q < slow.size(); ++q) {
      s.pull[q] *= slow[q], s.push[q] *= slow[q], s.locked[q] *= slow[q];
    }
    s.threads.assign(n, threads);
    double bases = 0;  // each base variable over its parts of the job: one part per PS now
    for (const ReplayModel::Ps& p : m.ps) {
      for (const double k : p.var_parts) bases += 1 / std::max(1.0, k);
    }
    s.requests.assign(n, std::max(1.0, std::round(bases)));
  }
  if (m.sync && !fix.to_async && !s.push.empty()) {
    double accum = 0;
    for (const ReplayModel::Ps& p : m.ps) {
      accum += p.sync_ns / std::max(1.0, ForTask(fix.host_speedup, p.task));
    }
    s.once = s.push;
    for (double& d : s.once) d *= double(m.workers.size());
    s.push.assign(s.push.size(), accum / double(s.push.size()));
    s.locked.clear();
  }
  for (size_t p = 0; p < s.locked.size(); ++p) s.locked[p] = std::min(s.locked[p], s.push[p]);
  return s;
}

double HeldTransferScale(const ReplayModel& m, const Fix& fix) {
  if (!m.sync || fix.to_async || fix.hold_burst_queue || m.ps.empty()) return 1;
  double sum = 0, most = 0;
  for (const ReplayModel::Ps& p : m.ps) {
    sum += p.burst_out + p.burst_in, most = std::max(most, p.burst_out + p.burst_in);
  }
  if (most <= 0) return 1;
  // At most 1: only reached with more PS than now, and every PS's bytes are at most the busiest's.
  if (fix.ps_count > int(m.ps.size())) return sum / double(fix.ps_count) / most;
  if (!fix.partition_only()) return 1;
  // A partition: each hot PS's share of its bytes (Fix::partition_bytes, else its op time share)
  // leaves its NIC, spread evenly over every PS of the cluster.
  std::vector<double> after(m.ps.size());
  double moved = 0;
  for (size_t i = 0; i < m.ps.size(); ++i) {
    const ReplayModel::Ps& p = m.ps[i];
    const double share = PartitionByteShare(fix, p.task);
    after[i] = (p.burst_out + p.burst_in) * (1 - share);
    moved += (p.burst_out + p.burst_in) * share;
  }
  double busiest = 0;
  for (const double x : after) busiest = std::max(busiest, x + moved / double(m.ps.size()));
  return std::min(1.0, busiest / most);
}

void ScaleBurstQueue(const ReplayModel& m, const Fix& fix, std::vector<double>* pull,
                     std::vector<double>* push) {
  const double scale = HeldTransferScale(m, fix);
  if (scale >= 1) return;
  for (auto [v, cap] :
       {std::pair{pull, BurstQueueCapNs(m, true)}, std::pair{push, BurstQueueCapNs(m, false)}}) {
    if (v->empty()) continue;
    const double shortest = *std::min_element(v->begin(), v->end());
    for (double& x : *v) x -= std::min(cap, x - shortest) * (1 - scale);
  }
}

double BurstQueueCapNs(const ReplayModel& m, bool pull) {
  double most = 0;
  for (const ReplayModel::Ps& p : m.ps) most = std::max(most, pull ? p.burst_out : p.burst_in);
  const double others = m.workers.empty() ? 0 : double(m.workers.size() - 1);
  return others * most / kMinBurstNicBytesPerS * 1e9;
}

WorkerPlan PlanWorkers(const ReplayModel& m, const Fix& fix) {
  const size_t nw = m.workers.size();
  WorkerPlan p;
  std::vector<double> input(nw), compute(nw), recv(nw), producer(nw), pull_xfer(nw), push_xfer(nw),
      sigma(nw), tail(nw);
  auto has = [](const std::vector<uint32_t>& v, uint32_t task) {
    return std::find(v.begin(), v.end(), task) != v.end();
  };
  // straggler: the slow workers at the median of the workers the fix leaves as they are (all of
  // them where it names every worker), as straggler-worker judges each against the others'
  // median: with 2 workers the median of both is halfway to the straggler's own (gen2 report12
  // 2625, sync, one worker at half speed: the fixed step predicted +29% off its twin).
  const bool others =
      std::any_of(m.workers.begin(), m.workers.end(),
                  [&](const ReplayModel::Worker& w) { return !has(fix.median_workers, w.task); });
  std::vector<double> all_input, all_compute, all_producer;
  for (const ReplayModel::Worker& w : m.workers) {
    if (others && has(fix.median_workers, w.task)) continue;
    all_input.push_back(w.input_ns);
    all_compute.push_back(w.compute_ns);
    all_producer.push_back(w.producer_ns);
  }
  const double median_input = Median(all_input), median_compute = Median(all_compute),
               median_producer = Median(all_producer);
  // Under SyncReplicasOptimizer the barrier ends every step at the slowest worker's end, so a
  // held receive wait that only a few workers carry becomes the whole step once a fix shortens
  // the others' (gen2 report13 2811: 2 of 199 workers held 4.0 s against a median 0.18 s, the
  // steps where the capture's PS served them last; 2 -> 40 PS predicted 3.9 s against its twin's
  // 0.33 s). Each worker's held wait is at most the workers' 90th percentile of the waits as
  // measured: a wait more than a tenth of them carry stays as it is (jobs of 10 workers or fewer
  // keep their largest). The cap is taken before a fix's cut and the cut applies to the capped
  // wait, so the replay as is and the fixed one hold the same waits and a fix that cuts a capped
  // worker's wait keeps its share of the saving.
  double held_cap = std::numeric_limits<double>::infinity();
  if (m.sync && !fix.to_async && nw > 10) {
    std::vector<double> sorted;
    for (const ReplayModel::Worker& w : m.workers) sorted.push_back(w.recv_ns);
    const size_t at = nw - 1 - nw / 10;  // a tenth of the workers (rounded down) above it
    std::nth_element(sorted.begin(), sorted.begin() + ptrdiff_t(at), sorted.end());
    held_cap = sorted[at];
  }
  std::vector<bool> prefetch(nw), beside(nw);
  std::vector<double> kept(nw);  // per worker: the share of its receives a fix's cut leaves
  for (size_t w = 0; w < nw; ++w) {
    const ReplayModel::Worker& x = m.workers[w];
    const bool at_median = has(fix.median_workers, x.task);
    compute[w] = std::max(
        0.0, (at_median ? median_compute : x.compute_ns) - ForTask(fix.compute_cut, x.task));
    input[w] = at_median ? median_input : x.input_ns;
    sigma[w] = x.compute_ns > 0 ? x.compute_sigma_ns * compute[w] / x.compute_ns : 0;
    producer[w] = at_median ? std::min(x.producer_ns, median_producer) : x.producer_ns;
    prefetch[w] = x.prefetched || has(fix.prefetch_workers, x.task);
    beside[w] = x.pull_beside_input;
    kept[w] = 1 - std::clamp(ForTask(fix.recv_cut, x.task), 0.0, 1.0);
    recv[w] =
        std::min(x.recv_ns, held_cap) * kept[w];  // what a fix cuts: the transfers' and beyond
    // Asynchronous training (sync-replicas' fix): the receive time the PS queue does not explain
    // was the burst of every worker pulling at once after the barrier, which workers that no
    // longer pull together do not meet (analyzers/sync_replicas.cc).
    if (fix.to_async && m.sync) recv[w] = 0;
    pull_xfer[w] = x.pull_xfer_ns;
    push_xfer[w] = x.push_xfer_ns;
    tail[w] = x.tail_ns * (1 - std::clamp(ForTask(fix.tail_cut, x.task), 0.0, 1.0));
  }
  // The sync burst's queue in the held transfers, scaled where a fix adding PS spreads it
  // (HeldTransferScale); over the PS links, in what they leave held instead (replay_links.cc).
  if (m.link_bytes_per_ns <= 0) ScaleBurstQueue(m, fix, &pull_xfer, &push_xfer);
  for (size_t w = 0; w < nw; ++w) pull_xfer[w] *= kept[w];
  p.tail = std::move(tail);
  p.compute_ratios = m.compute_ratios, p.input_ratios = m.input_ratios;
  p.input = std::move(input), p.compute = std::move(compute), p.recv = std::move(recv);
  p.producer = std::move(producer), p.pull_xfer = std::move(pull_xfer);
  p.push_xfer = std::move(push_xfer), p.sigma = std::move(sigma), p.prefetch = std::move(prefetch);
  p.beside = std::move(beside);
  return p;
}

}  // namespace tfdiag::replay_detail
