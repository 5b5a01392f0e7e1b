#include "analyzers/outlook_links.h"

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "analyzers/analysis_input.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_concurrency.h"
#include "analyzers/replay_fix_reach.h"
#include "analyzers/replay_nic_bytes.h"
#include "analyzers/task_stats.h"

namespace tfdiag {

namespace {

// The slowdown `slow` (other findings' host speedups) names for `task`, the largest where two
// findings name it (their slowdowns are of one host, not a product); 0 where none does.
double Slowdown(const std::vector<std::pair<uint32_t, double>>& slow, uint32_t task) {
  double x = 0;
  for (const auto& [t, y] : slow) x = t == task ? std::max(x, y) : x;
  return x;
}

// Whether one variable's apply rows `v` (sorted by start) show a mutex: where a row overlaps the
// rows before it, what it adds after they end (end - max(start, the latest end before it), its
// service once the mutex is free) is about a lone row's duration, where applies that ran side by
// side would add little or nothing. Needs at least kMutexMinOverlapping overlapping rows and
// kMutexMinLone lone ones.
// Every constant here was set on gen3 report 700-731 (706: dense Adam on embedding parts, the
// mutex held 71%; the other 31 seeds must not show one), none on a held-out set; gen3 dev and
// gen2 dev only checked them.
constexpr size_t kMutexMinOverlapping = 4;  // a median of the added times needs a few
constexpr size_t kMutexMinLone = 2;
// Summed row time over the time covered: applies waiting on a mutex overlap for their whole
// wait; applies run side by side on idle threads overlap only by chance (below it).
constexpr double kMutexMinStacking = 1.25;
// An overlapping row's time after the rows before it end, against a lone row's (medians): a
// mutex serves it whole once free (about 1x); side-by-side applies add little.
constexpr double kMutexMinAddedOverLone = 0.5;
bool ShowsMutex(std::vector<std::pair<TimeNs, TimeNs>> v) {
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<TimeNs> lone, added;
  TimeNs last_end = INT64_MIN;
  for (const auto& [a, b] : v) {
    if (a >= last_end) {
      lone.push_back(b - a);
    } else {
      added.push_back(b - std::max(a, last_end));
    }
    last_end = std::max(last_end, b);
  }
  if (added.size() < kMutexMinOverlapping || lone.size() < kMutexMinLone) return false;
  // And they waited: their rows' summed time at least kMutexMinStacking x the time they cover.
  TimeNs sum = 0;
  for (const auto& [a, b] : v) sum += b - a;
  if (double(sum) < kMutexMinStacking * double(UnionLength(&v))) return false;
  std::nth_element(lone.begin(), lone.begin() + lone.size() / 2, lone.end());
  std::nth_element(added.begin(), added.begin() + added.size() / 2, added.end());
  return double(added[added.size() / 2]) >= kMutexMinAddedOverLone * double(lone[lone.size() / 2]);
}

}  // namespace

std::vector<PsLinkEvidence> PsLinks(const AnalysisInput& in, const ReplayModel& m) {
  std::vector<PsLinkEvidence> out(m.ps.size());
  const Capture& c = in.capture;
  // Each PS's receive rows the replay takes for the link's (replay_concurrency.h ReceiveRows:
  // where TaskStats kept them apart, or where they ran beyond the PS's threads, as under sync):
  // the time one was in flight and their summed time, every receive row (IsRecvOpType:
  // RecvTensor, _Recv, _HostRecv; TaskStats::recv_ns sums RecvTensor rows only), read in the
  // sweep that reads the applies below.
  std::vector<double> recv_sum(m.ps.size(), 0);
  StringTest is_dense(c, IsDenseApplyOpType), is_sparse(c, IsSparseApplyOpType);
  for (size_t p = 0; p < m.ps.size(); ++p) {
    const TaskStats* t = in.stats.Find(c.TaskLabelOf(m.ps[p].task));
    if (t == nullptr || t->busy_pct <= 0) continue;
    const double span = double(t->busy_ns) * 100 / t->busy_pct;
    PsLinkEvidence& e = out[p];
    std::vector<std::pair<std::string_view, TimeNs>> recv;  // by the received tensor's row name
    absl::flat_hash_map<std::string_view, std::vector<std::pair<TimeNs, TimeNs>>> applies;
    const replay_detail::ReceiveTime rt =
        replay_detail::ReceiveRows(c, *t, [&](const OpRow& op, bool on_link) {
          if (on_link) recv.emplace_back(c.Str(c.OpName(op)), op.dur());
          const StrId type = c.OpType(op);
          if (!is_dense(type) && !is_sparse(type)) return;
          const NodeRow& node = c.Node(op);
          if (node.inputs_count == 0) return;
          // The variable: the apply's first input (training_ops.cc: `var` is input 0), as
          // written.
          applies[InputNode(c.Str(c.inputs[node.inputs_begin]))].emplace_back(op.start, op.end());
        });
    e.recv_share = std::clamp(double(rt.busy_ns) / span, 0.0, 1.0);
    size_t recv_rows = 0;
    if (e.recv_share > 0) {
      recv_sum[p] = rt.sum_ns;
      recv_rows = rt.rows;
    } else {
      recv.clear();
    }
    e.recv_stretch = RecvStretch(std::move(recv));
    if (rt.busy_ns > 0) e.recv_concurrency = recv_sum[p] / double(rt.busy_ns);
    if (span > 0) e.recv_rows_per_s = double(recv_rows) / (span * 1e-9);
    for (auto& [var, v] : applies) {
      if (!ShowsMutex(v)) continue;
      const double share = span > 0 ? double(UnionLength(&v)) / span : 0;
      if (share > e.lock_share) e.lock_share = std::min(1.0, share), e.lock_variable = var;
    }
  }
  double recv_total = 0;
  for (const double x : recv_sum) recv_total += x;
  for (size_t p = 0; p < out.size(); ++p) {
    if (out[p].recv_share > 0 && recv_total > 0) {
      out[p].recv_load = recv_sum[p] / recv_total * double(m.workers.size());
    }
  }
  return out;
}

double RecvWorkersAtOnce(const PsLinkEvidence& e, double captured_steps_per_s) {
  if (e.recv_rows_per_s <= 0 || captured_steps_per_s <= 0) return 0;
  return e.recv_concurrency * captured_steps_per_s / e.recv_rows_per_s;
}

double RecvStretch(std::vector<std::pair<std::string_view, TimeNs>> rows) {
  std::sort(rows.begin(), rows.end());
  double stretched = 0, total = 0;
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    double sum = 0;
    while (j < rows.size() && rows[j].first == rows[i].first) sum += double(rows[j++].second);
    // One tensor's receives, sorted by duration: its quickest against its median.
    if (j - i >= kRecvStretchMinRows) {
      const double quickest = double(rows[i].second);
      const double median = double(rows[i + (j - i) / 2].second);
      if (median > 0) stretched += sum * std::clamp(1 - quickest / median, 0.0, 1.0);
      total += sum;
    }
    i = j;
  }
  return total > 0 ? stretched / total : 0;
}

std::string WholeTableRead(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    if (f.rule_id == kGatherOnWorkerRule && !f.ops.empty()) return f.ops.front();
  }
  return "";
}

PsLoad LoadAfter(const ReplayModel& m, const Fix& fix) {
  PsLoad l;
  // Work moved between PS is counted at the others' speed and runs each PS's host slowdown
  // (Ps::host_slowdown, less the fix's own speedup) longer there, as PlanPs does.
  std::vector<double> slow;
  double moved = 0, total = 0;
  for (const ReplayModel::Ps& p : m.ps) {
    double speedup = 1;
    for (const auto& [t, x] : fix.host_speedup) speedup = t == p.task ? std::max(1.0, x) : speedup;
    slow.push_back(std::max(1.0, p.host_slowdown / speedup));
    double d = p.pull_ns + p.push_ns;
    d += ForTask(fix.ps_demand_add, p.task) - ForTask(fix.ps_demand_cut, p.task);
    d = std::max(0.0, d);
    for (const auto& [t, share] : fix.partition) {
      if (t == p.task)
        moved += d * std::clamp(share, 0.0, 1.0) / slow.back(),
            d *= 1 - std::clamp(share, 0.0, 1.0);
    }
    l.demand.push_back(d);
    l.threads.push_back(std::max(1, p.threads));
    total += d / slow.back();
  }
  for (size_t p = 0; p < l.demand.size(); ++p) {
    l.demand[p] += moved / double(l.demand.size()) * slow[p];
  }
  total += moved;
  if (fix.ps_count > 0 || !fix.drop_ps.empty()) {
    const size_t n = fix.ps_count > 0 ? size_t(fix.ps_count)
                                      : std::max<size_t>(1, m.ps.size() - fix.drop_ps.size());
    for (size_t p = 0; p < l.demand.size(); ++p) {
      const bool dropped =
          std::find(fix.drop_ps.begin(), fix.drop_ps.end(), m.ps[p].task) != fix.drop_ps.end();
      l.demand[p] = fix.ps_count > 0 || !dropped ? total / double(n) * slow[p] : 0;
    }
  }
  return l;
}

bool MovesWork(const Fix& fix) {
  return !fix.partition.empty() || !fix.drop_ps.empty() || fix.ps_count > 0;
}

std::string WholeTableReadWithheld(const AnalysisInput& in, const ReplayModel& m,
                                   const std::string& table) {
  const NicDemand sized = PsNicBytesBesideControl(in, m);
  double most = 0;
  for (const double b : sized.out) most = std::max(most, b);
  if (sized.known && most > 0) {
    return fmt::format(
        "the workers read {} whole from its PS every step (a gather on the worker): the capture "
        "sizes the PS answers (up to {:.1f} MB per worker step from one PS) but not the bandwidth "
        "of the PS's transmit link that carries the table, so where it saturates as workers are "
        "added cannot be told",
        table, most / 1e6);
  }
  return fmt::format(
      "the workers read {} whole from its PS every step (a gather on the worker): the PS's "
      "transmit link carries the table each step, and the capture sizes no transfer, so where "
      "that link saturates as workers are added cannot be told",
      table);
}

// The most worker steps per ns the PS CPUs allow after `fix` when some PS's host stays slow
// (`slow`: per PS task, its slowdown >= 1, from a finding whose fix is not `fix`; where the
// replay model measures the host on its parts, Ps::host_slowdown > 1, that figure, which the
// replay itself applies to moved work (PlanPs); the like-sized figure can over-read it). Here the
// work is first taken at the normal speed (each PS's op time over its slowdown), spread as the
// fix text says (PlanPs in replay_plan.cc: parts over all PS, a dropped PS's work over the rest,
// a new count: the work and the part ops it adds evenly over it, the PS kept first in their
// order, new ones at normal speed, as a redeployment keeps the tasks on their hosts), then each
// PS's share times its slowdown over its threads bounds the rate. INFINITY when no slow host
// stays or `fix` moves no work.
// `*ps` gets the binding PS's index into m.ps (-1: a new PS, or no bound).
double SlowHostCap(const ReplayModel& m, const Fix& fix,
                   const std::vector<std::pair<uint32_t, double>>& slow, int* ps) {
  *ps = -1;
  std::vector<double> speed, work;  // per PS of m.ps: slowdown kept after the fix, its work
  bool any = false;
  double moved = 0;
  for (const ReplayModel::Ps& p : m.ps) {
    const double fixed = std::max(1.0, ForTask(fix.host_speedup, p.task));
    const double s =
        fixed > 1 ? 1.0
                  : std::max(1.0, p.host_slowdown > 1 ? p.host_slowdown : Slowdown(slow, p.task));
    any |= s > 1;
    double d = p.pull_ns + p.push_ns + ForTask(fix.ps_demand_add, p.task) -
               ForTask(fix.ps_demand_cut, p.task);
    d = std::max(0.0, d) / fixed / s;
    const double share = std::clamp(ForTask(fix.partition, p.task), 0.0, 1.0);
    moved += d * share;
    work.push_back(d * (1 - share));
    speed.push_back(s);
  }
  if (!any || !MovesWork(fix) || m.ps.empty()) return INFINITY;
  for (double& w : work) w += moved / double(work.size());
  std::vector<double> kept_speed, kept_work;
  std::vector<int> kept_index;
  double total = 0;
  for (size_t p = 0; p < m.ps.size(); ++p) {
    total += work[p];
    if (std::find(fix.drop_ps.begin(), fix.drop_ps.end(), m.ps[p].task) != fix.drop_ps.end()) {
      continue;
    }
    kept_speed.push_back(speed[p]);
    kept_work.push_back(work[p]);
    kept_index.push_back(int(p));
  }
  if (kept_work.empty()) return INFINITY;
  const double dropped = total - std::accumulate(kept_work.begin(), kept_work.end(), 0.0);
  for (double& w : kept_work) w += dropped / double(kept_work.size());
  if (fix.ps_count > 0) {
    // Each variable's ops one per part over the new count, each part op at its PS's fixed cost
    // per op, as the replay's plan adds them (PlanPs, replay_plan.cc), except that a PS whose
    // variables already have more parts than the new count counts no ops off here (the plan
    // counts them off) (indep report31 39002, spent: 12 dense variables over 4 PS cut into 5
    // parts each, their part ops 38% more PS work; left out, the slow host's cap after Fix first
    // read 3254 steps/s at 40 workers, the simulated sweep 1434).
    double extra = 0;
    for (const ReplayModel::Ps& p : m.ps) {
      extra += std::max(0.0, PartOpsAdded(p, fix.ps_count)) * p.op_floor_ns;
    }
    kept_speed.resize(size_t(fix.ps_count), 1.0);
    kept_index.resize(size_t(fix.ps_count), -1);
    kept_work.assign(size_t(fix.ps_count), (total + extra) / double(fix.ps_count));
  }
  // No slow host left after the fix (a new PS count dropped them): nothing of this cap's binds.
  if (std::none_of(kept_speed.begin(), kept_speed.end(), [](double v) { return v > 1; })) {
    return INFINITY;
  }
  int threads = 1;
  for (const ReplayModel::Ps& p : m.ps) threads = std::max(threads, p.threads);
  double cap = INFINITY;
  for (size_t k = 0; k < kept_work.size(); ++k) {
    const double busy = kept_work[k] * kept_speed[k];
    if (busy > 0 && double(threads) / busy < cap) cap = double(threads) / busy, *ps = kept_index[k];
  }
  return cap;
}

double ConvoyStretch(const std::vector<PsLinkEvidence>& ev) {
  // The least stretch of the receiving PS: a convoy stretches every PS's receives alike, and a
  // stretch on some PS only is those PS's own.
  double least = INFINITY;
  for (const PsLinkEvidence& e : ev) {
    if (e.recv_share > 0) least = std::min(least, e.recv_stretch);
  }
  return std::isinf(least) ? 0 : least;
}

double RecvLinkCap(const ReplayModel& m, const std::vector<PsLinkEvidence>& ev, const Fix& fix,
                   int workers, int captured, double captured_steps_per_s, double fixed_steps_per_s,
                   bool sync, int* ps, double* share, bool* convoy) {
  *ps = -1;
  *share = 0;
  if (convoy != nullptr) *convoy = false;
  if (ev.size() != m.ps.size() || captured <= 0 || captured_steps_per_s <= 0) return INFINITY;
  const double k = double(workers) / double(captured);
  // The receive share per PS after the fix, at the captured throughput; under sync, the part of
  // it spent on shared bytes.
  std::vector<double> recv, after;
  for (const PsLinkEvidence& e : ev) {
    // A synchronous capture's receives wait on the burst after the barrier: only their
    // stretched part is the link's, after going asynchronous too.
    // The recv_load gate was designed on gen2 report2 (600-631: 621), the sync reading (only
    // the stretched part) on gen3 report 704 and gen2 report2 615 (kRecvLoadMin). The gate is
    // read at `workers`: k times the workers send k times the bytes over the PS's link, and
    // their own links are as they were (gen3 report3 1119: 8 PS of 6 workers, recv_load 0.75,
    // the links left out at 2x and 4x, +31% and +140%).
    const double r = e.recv_load * std::max(1.0, k) < kRecvLoadMin ? 0
                     : m.sync                                      ? e.recv_share * e.recv_stretch
                                                                   : e.recv_share;
    recv.push_back(r);
    after.push_back(r);
  }
  if (std::none_of(after.begin(), after.end(), [](double x) { return x > 0; })) return INFINITY;
  std::vector<int> index(m.ps.size());
  std::iota(index.begin(), index.end(), 0);
  double moved = 0;
  for (size_t p = 0; p < m.ps.size(); ++p) {
    const double s = PartitionByteShare(fix, m.ps[p].task);  // a link's share moves by bytes
    moved += after[p] * s;
    after[p] *= 1 - s;
  }
  for (double& x : after) x += moved / double(after.size());
  if (fix.ps_count > 0 || !fix.drop_ps.empty()) {
    const double total = std::accumulate(after.begin(), after.end(), 0.0);
    std::vector<int> kept_index;
    for (size_t p = 0; p < m.ps.size(); ++p) {
      if (std::find(fix.drop_ps.begin(), fix.drop_ps.end(), m.ps[p].task) != fix.drop_ps.end()) {
        continue;
      }
      kept_index.push_back(int(p));
    }
    const size_t n = fix.ps_count > 0 ? size_t(fix.ps_count) : kept_index.size();
    if (n == 0) return INFINITY;
    kept_index.resize(n, -1);
    after.assign(n, total / double(n));
    index = kept_index;
  }
  // A complete convoy from the throughput at the captured count after the fix: pull and push
  // bursts k times as long, the rest as there, `r` the link's stretched share (grown with it).
  const double g = fixed_steps_per_s > 0 ? fixed_steps_per_s / captured_steps_per_s : 1;
  auto convoy_rate = [&](double r) {
    return k <= 1 ? INFINITY : g * k / (1 + 2 * std::min(r * g, 0.5) * (k - 1));
  };
  const double job_stretch = ConvoyStretch(ev);
  double max_load = 0;
  for (const PsLinkEvidence& e : ev) max_load = std::max(max_load, e.recv_load);
  // A link with many workers' receives at once (kManyWorkersAtOnce), as captured; whether every
  // receiving PS's is.
  // `seen`: its captured share (recv).
  auto many_at_once = [&](const PsLinkEvidence& e, double seen) {
    return RecvWorkersAtOnce(e, captured_steps_per_s) >=
               std::max(kManyWorkersAtOnce * double(captured), kManyWorkersAtOnceMin) &&
           e.recv_stretch >= kDominantLinkMinStretch && seen >= kDominantLinkMinShare &&
           seen < kManyAtOnceMaxShare;
  };
  bool every_many = false;
  for (size_t p = 0; p < ev.size(); ++p) {
    if (recv[p] <= 0) continue;
    every_many = many_at_once(ev[p], recv[p]);
    if (!every_many) break;
  }
  double cap = INFINITY;
  for (size_t q = 0; q < after.size(); ++q) {
    const double r = after[q];
    if (r <= 0) continue;
    double x;
    bool by_convoy = false;
    if (sync) {
      x = convoy_rate(r);
    } else {
      // A link the capture shows at a share above the one it stops at runs at least at it.
      const PsLinkEvidence* e = index[q] >= 0 ? &ev[size_t(index[q])] : nullptr;
      const double seen = e != nullptr ? recv[size_t(index[q])] : 0;
      // Its captured load and stretch (a new PS: the job's).
      const double load = e != nullptr ? e->recv_load : max_load;
      const double stretch = e != nullptr ? e->recv_stretch : job_stretch;
      // Its link's own share where the workers' ends throttled its receives (kWorkerEnd*).
      const double fan_out = max_load > 0 ? double(captured) / max_load : 0;
      // Not for a synchronous capture gone asynchronous: its stretch is the barrier's burst, not
      // a share of the link (review v62 item 9; set on asynchronous gen2 report7 1622 alone).
      const double own = !m.sync && e != nullptr && e->recv_stretch >= kWorkerEndMinStretch &&
                                 e->recv_concurrency > 0 &&
                                 e->recv_concurrency < kWorkerEndMaxConcurrency * fan_out
                             ? e->recv_concurrency / fan_out
                             : 1.0;
      x = std::max(kRecvLinkAsyncMax, seen * own) / (r * own);
      // Where the replay runs the links (here only a synchronous capture gone asynchronous),
      // or the capture is synchronous (its stretch is the barrier's burst, and its share is
      // already the stretched part), the 60% share as before: no convoy was measured there.
      if (!m.sync && m.link_bytes_per_ns <= 0 && job_stretch >= kConvoyMinStretch &&
          load >= kRecvLoadMin && r * stretch >= kConvoyMinShare && convoy_rate(r * stretch) < x) {
        x = convoy_rate(r * stretch), by_convoy = true;
      }
      // One dominant link lines the workers up on it (kDominantLinkLoad): its whole share. Read
      // as captured, so not after a fix that moves work between PS.
      if (!m.sync && m.link_bytes_per_ns <= 0 && e != nullptr && !MovesWork(fix) &&
          e->recv_load >= kDominantLinkLoad * double(captured) &&
          e->recv_stretch >= kDominantLinkMinStretch && r >= kDominantLinkMinShare &&
          convoy_rate(r) < x) {
        x = convoy_rate(r), by_convoy = true;
      }
      // Many workers' receives at once on a busy, shared link (kManyWorkersAtOnce): its whole
      // share. Read as captured: after a fix that moves work between PS, only where every
      // receiving PS showed it (the workers', so every link after the move).
      if (!m.sync && m.link_bytes_per_ns <= 0 &&
          (MovesWork(fix) ? every_many : e != nullptr && many_at_once(*e, seen)) &&
          convoy_rate(r) < x) {
        x = convoy_rate(r), by_convoy = true;
      }
    }
    if (x * captured_steps_per_s < cap) {
      cap = x * captured_steps_per_s;
      *ps = index[q];
      *share = index[q] >= 0 ? recv[size_t(index[q])] : r;
      if (convoy != nullptr) *convoy = by_convoy;
    }
  }
  return cap;
}

double LockCap(const ReplayModel& m, const std::vector<PsLinkEvidence>& ev, const Fix& fix,
               double captured_steps_per_s, bool sync, double saturated, int* ps) {
  *ps = -1;
  if (sync || fix.to_async || fix.ps_count > 0 || ev.size() != m.ps.size()) return INFINITY;
  auto touched = [&](uint32_t task) {
    for (const auto& [t, x] : fix.partition) {
      if (t == task) return true;
    }
    for (const auto& [t, x] : fix.ps_demand_cut) {
      if (t == task) return true;
    }
    for (const auto& [t, x] : fix.host_speedup) {
      if (t == task) return true;
    }
    return std::find(fix.drop_ps.begin(), fix.drop_ps.end(), task) != fix.drop_ps.end();
  };
  double cap = INFINITY;
  for (size_t p = 0; p < m.ps.size(); ++p) {
    const double u = ev[p].lock_share;
    if (u <= 0 || touched(m.ps[p].task)) continue;
    const double x = std::max(saturated, u) / u * captured_steps_per_s;
    if (x < cap) cap = x, *ps = int(p);
  }
  return cap;
}

}  // namespace tfdiag
