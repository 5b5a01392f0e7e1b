#include "analyzers/replay.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "analyzers/apply_locks.h"
#include "analyzers/capture_queries.h"
#include "analyzers/nic_rate.h"
#include "analyzers/op_fixed_cost.h"
#include "analyzers/op_names.h"
#include "analyzers/ps_host_speed.h"
#include "analyzers/replay_concurrency.h"
#include "analyzers/replay_cores.h"
#include "analyzers/replay_order.h"
#include "analyzers/replay_ps_nodes.h"
#include "analyzers/replay_run.h"
#include "analyzers/replay_waits.h"
#include "analyzers/sync_replicas.h"
#include "core/device_cursor.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

using replay_detail::AchievedConcurrency;
using replay_detail::Simulate;
using replay_detail::Waits;

namespace {

double Median(std::vector<double> v) { return MedianInPlace(&v); }

// A robust standard deviation of `v`: its interquartile range / 1.349 (a normal's), 0 under 4.
double Spread(std::vector<double> v) {
  if (v.size() < 4) return 0;
  std::sort(v.begin(), v.end());
  return (v[v.size() * 3 / 4] - v[v.size() / 4]) / 1.349;
}

// At least this share of the pooled ratios (ReplayModel::compute_ratios) beyond the median plus
// three robust spreads (IQR / 1.349) is a tail the normal draws around the median cannot give (a
// normal puts 0.13% there): the pool is replayed as drawn. Under it the normal draws are kept
// (gen2 report8 1815, indep report12 20014: light-tailed pools, whose redraw only reshuffled
// which worker is last at the barrier and moved a links replay's asynchronous prediction 25%).
// gen2 report8 1830 (pauses in one step in 12): 9% beyond.
constexpr double kHeavyTailShare = 0.05;

// Sorts `ratios`; whether kHeavyTailShare of them (and at least 2) lie beyond the median plus
// three robust spreads.
bool HeavyTail(std::vector<double>* ratios) {
  std::vector<double>& v = *ratios;
  if (v.size() < 8) return false;
  std::sort(v.begin(), v.end());
  const double sigma = Spread(v);
  // At least 10% over the median: with a spread of 0 (quantised times) every ratio above the
  // median would count.
  const double beyond = std::max(v[v.size() / 2] + 3 * sigma, 1.1 * v[v.size() / 2]);
  const size_t n = size_t(v.end() - std::upper_bound(v.begin(), v.end(), beyond));
  return n >= 2 && double(n) >= kHeavyTailShare * double(v.size());
}

// Applies: the push half of a PS's work (gradient push and apply after compute).
bool IsApplyOpType(std::string_view type) {
  return IsDenseApplyOpType(type) || IsSparseApplyOpType(type) || type.rfind("Scatter", 0) == 0 ||
         type.rfind("ResourceScatter", 0) == 0 || type == "AssignAdd" || type == "AssignSub" ||
         type == "AssignAddVariableOp" || type == "AssignSubVariableOp";
}

}  // namespace

namespace {

// Fits each worker's held waits (Worker::recv_ns, tail_ns) to the replay of `m` as is: what
// its measured receive and tail idle time (`measured`, per worker) and sync token wait
// (`sync_waits`) leave beyond the replayed waits, in the order m->any_order serves.
void FitHeldWaits(const std::vector<std::pair<double, double>>& measured,
                  const std::vector<double>& pull_idle, const std::vector<double>& sync_waits,
                  ReplayModel* mp) {
  ReplayModel& m = *mp;
  for (ReplayModel::Worker& w : m.workers) w.recv_ns = w.tail_ns = 0;
  Waits waits;
  Simulate(m, Fix{}, ReplaySteps(m), &waits);
  for (size_t w = 0; w < m.workers.size() && w < waits.pull.size(); ++w) {
    // The replayed wait for the applies that the measured tail idle time does not hold was
    // measured as receive time: TF's worker ends its step on a control _Recv from the PS that
    // spans the applies (psload, real TF1 timelines), so the step graph files that wait as
    // receive time, not as the step's idle tail. Counting it in both would replay the applies
    // twice (a psload hot-PS job: 9.2 ms replayed against a measured 6.3 ms step).
    const double push_in_recv = std::max(0.0, waits.push[w] - measured[w].second);
    m.workers[w].recv_ns = std::max(0.0, measured[w].first - waits.pull[w] - push_in_recv);
    // The replayed pull wait beyond the measured receive time is wait no receive op spans (the
    // PS's queue and service, where a receive op spans only the transfer): the idle time before
    // the worker's compute holds it (`pull_idle`, at most: 0 where the receive ops span the
    // wait, replay_waits.h UnspannedPullIdle), not the step's tail.
    const double unspanned = std::clamp(waits.pull[w] - measured[w].first - push_in_recv, 0.0,
                                        w < pull_idle.size() ? pull_idle[w] : 0.0);
    m.workers[w].tail_ns = std::max(0.0, measured[w].second - waits.push[w] - unspanned);
    // Under SyncReplicasOptimizer the barrier ends every worker's step together: what a worker
    // waits for its push and what it then waits for the token add up to the same whatever order
    // the PS serves the pushes in, but each alone does not. A PS that does not serve them in
    // arrival order (the independent suite's) leaves every worker a long push wait and a short
    // token wait where the replay's in-order service gives the early workers a short push wait
    // and a long barrier wait; held as a fixed tail, the difference was replayed before the
    // barrier on top of it (tune seed 4027: 51 workers on 1 PS, the replay as is 25.6 ms against
    // 18.9 ms). So the tail is what the two waits together do not explain.
    if (m.sync && w < waits.barrier.size() && w < sync_waits.size() && sync_waits[w] > 0) {
      m.workers[w].tail_ns = std::min(
          m.workers[w].tail_ns, std::max(0.0, measured[w].second + sync_waits[w] - waits.push[w] -
                                                  waits.barrier[w] - unspanned));
    }
  }
}

}  // namespace

namespace {

// BuildReplayModel with the applies' lock read (`locks`: ReplayModel::apply_locks) or not.
ReplayModel BuildReplayModelAs(const AnalysisInput& in, bool locks) {
  ReplayModel m;
  m.apply_locks = locks;
  if (in.graph == nullptr) return m;
  const Capture& c = in.capture;
  std::vector<double> all_steps, worker_medians, min_idle;
  std::vector<double> sync_waits;  // per worker: median wait for the sync token (step graph)
  std::vector<double> compute_ratios, input_ratios;  // ReplayModel's, kept under sync
  bool any_producer = false;
  StringTest sync_type(c, IsSyncReplicasOpType), sync_name(c, IsSyncReplicasOpName);
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind)) continue;
    const auto [b, e] = in.graph->TaskSteps(t.task);
    if (b == e) continue;
    std::vector<double> input, compute, recv, idle, own_steps, sync_wait;
    bool graph_sync = false;  // the step graph kept the sync waits apart (StepNode::sync_ns)
    for (uint32_t s = b; s < e; ++s) {
      const StepNode& n = in.graph->steps()[s];
      input.push_back(double(n.input_ns));
      compute.push_back(double(n.compute_ns));
      recv.push_back(double(n.recv_ns));
      idle.push_back(double(n.idle_ns));
      sync_wait.push_back(double(n.sync_ns));
      graph_sync |= n.sync_ns > 0;
      all_steps.push_back(double(n.end - n.start));
      own_steps.push_back(double(n.end - n.start));
    }
    worker_medians.push_back(Median(std::move(own_steps)));
    // SyncReplicasOptimizer's token and accumulator ops wait for the other workers: the replay's
    // barrier gives that wait, so it is neither compute nor idle time of the worker's own.
    TimeNs sync_op_ns = 0;
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
      if (sync_type(c.OpType(op)) || sync_name(c.Node(op).name)) sync_op_ns += op.dur();
    });
    const double sync_ns = double(sync_op_ns) / double(e - b);
    const double sigma = Spread(compute);
    double compute_ns = Median(compute), idle_ns = Median(idle);
    // Compute that holds the token wait (the step graph filed it there) holds the other
    // workers' pauses too, which the replay's barrier adds again: no compute ratios from it.
    const bool compute_own = graph_sync || sync_ns <= 0 || idle_ns >= sync_ns;
    if (graph_sync) {
      m.sync = true;  // already neither compute nor idle time
    } else if (sync_ns > 0) {
      m.sync = true;
      // Counted as compute by the step graph (or as idle time): taken out of whichever holds it.
      if (idle_ns >= sync_ns) {
        idle_ns -= sync_ns;
      } else {
        compute_ns = std::max(0.0, compute_ns - sync_ns);
      }
    }
    const double in_ns = Median(input);
    // Warm-up steps (WarmupSteps: graph building, over 3x the median) are no pause of a
    // running job: left out of the ratios.
    const std::vector<bool> warm = WarmupSteps(c, t.task);
    const auto is_warm = [&](size_t i) { return i < warm.size() && warm[i]; };
    const double compute_median = Median(compute);
    for (size_t i = 0; i < compute.size() && compute_own; ++i) {
      if (compute_median > 0 && !is_warm(i)) compute_ratios.push_back(compute[i] / compute_median);
    }
    // A prefetched pipeline's producer ops (tf.data's *Dataset ops, beside the step): the
    // pipeline's time per batch is their median duration (one op a batch, as the independent
    // suite writes them), and the worker's steps take their batch from its buffer.
    std::vector<double> produced;
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
      if (IsInputProducerOpType(c.Str(c.OpType(op)))) produced.push_back(double(op.dur()));
    });
    const bool prefetched = !produced.empty();
    m.workers.push_back({t.task, in_ns, compute_ns, Median(recv),
                         prefetched ? Median(produced) : in_ns, idle_ns,
                         replay_detail::PullTransfer(in, t.task), 0, sigma, prefetched});
    any_producer |= prefetched;
    for (size_t i = 0; i < input.size(); ++i) {
      if (!prefetched && in_ns > 0 && !is_warm(i)) input_ratios.push_back(input[i] / in_ns);
    }
    min_idle.push_back(*std::min_element(idle.begin(), idle.end()));
    sync_waits.push_back(graph_sync ? Median(std::move(sync_wait)) : 0);
  }
  replay_detail::ApplyPullBesideInput(*in.graph, &m);
  if (m.sync) {
    if (HeavyTail(&compute_ratios)) m.compute_ratios = std::move(compute_ratios);
    if (HeavyTail(&input_ratios)) m.input_ratios = std::move(input_ratios);
  }
  m.steps = static_cast<int64_t>(all_steps.size());
  m.measured_step_ns = Median(all_steps);
  m.worker_median_step_ns = Median(std::move(worker_medians));
  if (m.steps == 0) return m;
  std::sort(all_steps.begin(), all_steps.end());
  m.step_q1_ns = all_steps[all_steps.size() / 4];
  m.step_q3_ns = all_steps[all_steps.size() * 3 / 4];
  // The capture shows no iterator producer ops in TF1 timelines (a tf.data producer runs outside
  // the step's executor); the input ops' time is the pipeline's time per step when unprefetched.
  m.producer_source = any_producer
                          ? "the median of the iterator's producer ops (tf.data *Dataset ops)"
                          : "the input ops' time per step (the capture has no producer ops of the "
                            "iterator)";
  std::vector<int> seen_threads, seen_cores, seen_min_cores;
  std::map<uint32_t, double> work_share;  // per PS task: its ops' work over their time
  std::map<uint32_t, int> own_cores;      // per PS task: the cores its own ops' fit shows
  StringTest is_apply(c, IsApplyOpType), is_recv(c, IsRecvOpType);
  const std::map<std::string_view, int> parts = VariableParts(in.stats.tasks);
  const double push_fixed = m.sync ? PushFixedCost(c, in.stats.tasks, IsApplyOpType) : 0;
  std::set<uint32_t> slowed_ps;            // PS tasks whose ops' fit shows fewer cores than threads
  double lock_wait = 0, lock_applies = 0;  // the PS that show a lock: waits, applies' op time
  std::map<uint32_t, double> lock_wait_step;  // per PS task: its applies' lock waits per step
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs) continue;
    ReplayModel::Ps p;
    p.task = t.task;
    if (t.op_time_ns > 0) {
      TimeNs push = 0, all = 0, sync = 0;
      std::vector<double> noops;
      const bool recv_waits = replay_detail::ReceivesAreWaits(c, t);
      ForEachOpOfTask(c, t, [&](const OpRow& op) {
        if (recv_waits && is_recv(c.OpType(op)))
          return;  // gradients arriving: the link's time, not the PS's
        all += op.dur();
        if (is_apply(c.OpType(op))) push += op.dur();
        if (sync_type(c.OpType(op)) || sync_name(c.Node(op).name)) sync += op.dur();
        if (c.Str(c.OpType(op)) == "NoOp") noops.push_back(double(op.dur()));
      });
      p.op_floor_ns = noops.empty() ? 0 : Median(std::move(noops));
      p.pull_ns = double(all - push) / double(m.steps);
      p.push_ns = double(push) / double(m.steps);
      p.sync_ns = std::min(p.pull_ns, double(sync) / double(m.steps));
      if (sync > 0) p.async_apply_share = AsyncApplyShare(c, t, IsApplyOpType, push_fixed);
      p.threads = AchievedConcurrency(c, t);
      // Ops slowed by their PS's other ops (threads beyond cores): their work, not their time,
      // is the demand (replay_cores.h).
      const PsOpLoad load = FitPsCores(c, t, 0, locks);
      const double scale = load.op_ns > 0 ? load.work_ns / load.op_ns : 1;
      work_share[t.task] = scale;
      own_cores[t.task] = p.cores = load.cores;
      // Applies' waits on their variable's lock are no work (FitPsCores cut them from its ops).
      if (load.lock_wait_ns > 0) {
        ++m.lock_ps;
        lock_wait += load.lock_wait_ns, lock_applies += double(push);
        lock_wait_step[t.task] = load.lock_wait_ns / double(m.steps);
        p.push_ns = std::max(0.0, double(push) - load.lock_wait_ns) / double(m.steps);
        p.locked_ns = m.sync ? 0 : std::min(p.push_ns, load.locked_ns / double(m.steps));
      }
      p.pull_ns *= scale, p.push_ns *= scale, p.sync_ns *= scale, p.locked_ns *= scale;
      // A PS whose ops ran slower beside each other (its threads beyond the cores its ops' fit
      // shows) times its small ops by the big ones beside them: no line in their bytes.
      if (load.cores > 0 && load.cores < p.threads) slowed_ps.insert(t.task);
      for (const VariableLoad& v : t.variables) {
        p.var_ns.push_back(double(v.total_ns) / double(m.steps) * scale);
        p.var_ops.push_back(double(v.ops) / double(m.steps));
        const auto it = parts.find(PartitionBase(v.name));
        p.var_parts.push_back(double(it == parts.end() ? 1 : it->second));
      }
      seen_threads.push_back(p.threads);
      if (load.cores > 0) seen_cores.push_back(load.cores);
      if (load.min_cores > 0) seen_min_cores.push_back(load.min_cores);
    }
    m.ps.push_back(p);
  }
  m.lock_wait_share = lock_applies > 0 ? lock_wait / lock_applies : 0;
  ApplyJobCores(in, seen_threads, seen_cores, &m, &work_share, seen_min_cores);
  // Each op's fixed cost, where the dense variables' sizes show it (analyzers/op_fixed_cost.h):
  // a part op pays it as much as a NoOp's time. Each PS's op time as work, as its var_ns (its
  // own cores' scale, or the job's where its ops did not tell them).
  std::vector<OpCostPoint> cost_points;
  // Nor a PS whose applies waited on their variable's lock: their op time holds the waits.
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs || t.op_time_ns <= 0 || slowed_ps.count(t.task) ||
        lock_wait_step.count(t.task)) {
      continue;
    }
    const auto scale = work_share.find(t.task);
    for (const VariableLoad& v : t.variables) {
      if (v.sparse || v.bytes <= 0 || v.ops <= 0) continue;
      cost_points.push_back(
          {double(v.bytes),
           double(v.total_ns) / double(v.ops) * (scale == work_share.end() ? 1.0 : scale->second),
           double(v.ops)});
    }
  }
  const double fixed_ns = FitOpFixedCostNs(cost_points);
  for (ReplayModel::Ps& p : m.ps) p.op_floor_ns = std::max(p.op_floor_ns, fixed_ns);
  // A receive op on the worker often spans the PS's service of the request (TF's _Recv ends
  // when the tensor arrived), so the receive time the PS answer already explains is not counted
  // twice: each worker keeps only its receive time beyond its replayed wait for the PS; so for
  // the idle time after compute and the replayed wait for the applies. A pull wait that no
  // receive op spans (a capture whose receives span only the transfer: the worker's idle time
  // before its compute longer than its receive time) is idle time before the worker's compute
  // (replay_waits.h UnspannedPullIdle): the replayed pull wait beyond the receive time leaves the
  // tail, up to that idle time; held there as well, it was replayed twice (gen2 report10 2217:
  // the replay as is +10.7%, now +5.8%; 2227, sync: +18%, now +0.1%; the samples' hot-ps demo:
  // +8%, now +1%). Where the receive ops span the wait, the idle time inside the step is gaps
  // between ops, and taking it out only moved the fit (indep report12 20020: 2 us per worker
  // flipped the out-of-order replay's choice): nothing leaves the tail there. The replayed waits
  // include the answers' and pushes' transfers (Worker::pull_xfer_ns, push_xfer_ns).
  // The push's transfer: the pull's, at most the shortest idle time less the longest apply.
  // An apply as timed: with its wait on its variable's lock, which the idle time holds too.
  double longest_apply = 0;
  for (const ReplayModel::Ps& p : m.ps) {
    const auto wait = lock_wait_step.find(p.task);
    const auto scale = work_share.find(p.task);
    longest_apply = std::max(
        longest_apply,
        p.push_ns + (wait == lock_wait_step.end()
                         ? 0
                         : wait->second * (scale == work_share.end() ? 1.0 : scale->second)));
  }
  for (size_t w = 0; w < m.workers.size(); ++w) {
    m.workers[w].push_xfer_ns =
        std::clamp(min_idle[w] - longest_apply, 0.0, m.workers[w].pull_xfer_ns);
  }
  std::vector<std::pair<double, double>> measured;
  std::vector<double> pull_idle;  // per worker: its pull wait no receive op spans
  for (ReplayModel::Worker& w : m.workers) {
    measured.emplace_back(w.recv_ns, w.tail_ns);
    pull_idle.push_back(replay_detail::UnspannedPullIdle(*in.graph, w.task, w.tail_ns, w.recv_ns));
  }
  FitHeldWaits(measured, pull_idle, sync_waits, &m);
  // A PS that serves its waiting requests in no particular order spreads the steps that FIFO
  // keeps even: where the capture's steps show that spread, the model serves so
  // (analyzers/replay_order.h), its held waits fitted to that replay.
  if (!m.sync) {
    ReplayModel any = m;
    any.any_order = true;
    FitHeldWaits(measured, pull_idle, sync_waits, &any);
    bool alike = false;
    if (replay_detail::ServedOutOfOrder(m, any, &alike)) {
      m = std::move(any);
    } else {
      m.order_unseen = alike;
    }
  }
  // Each PS host's speed against the others' (analyzers/ps_host_speed.h): a fix that moves work
  // onto a slow PS runs it there at that speed.
  for (const auto& [task, slowdown] : PartSlowdowns(in, work_share, own_cores)) {
    for (ReplayModel::Ps& p : m.ps) {
      if (p.task != task) continue;
      p.parts_slowdown = slowdown;
      if (slowdown >= kMinModelledSlowdown) p.host_slowdown = slowdown;
    }
  }
  m.ps_node = PsNodesOf(in, m);
  if (m.sync) {
    const NicDemand d = PsNicBytes(in, m);
    for (size_t p = 0; d.known && p < m.ps.size() && p < d.out.size(); ++p) {
      m.ps[p].burst_out = d.out[p], m.ps[p].burst_in = d.in[p];
    }
  }
  return m;
}

}  // namespace

ReplayModel BuildReplayModel(const AnalysisInput& in) {
  ReplayModel plain = BuildReplayModelAs(in, false);
  if (plain.workers.empty() || plain.sync) return plain;
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind == JobKind::kPs && t.op_time_ns > 0 && ReadApplyLockWaits(in.capture, t).nodes > 0) {
      ++plain.lock_seen_ps;
    }
  }
  if (plain.lock_seen_ps == 0) return plain;
  // The lock is read only where the model without it does not reproduce the capture (its replay
  // as is misses the measured step by over kMaxBaselineMiss, or leaves over kMaxUnexplainedShare
  // of it unexplained): where it does, its predictions stood (gen3 report39, spent: read there
  // too, 8508's partition went from -0.4% to +19% off its twin while seven other jobs moved
  // within 3 points). It is then kept where its replay reproduces the capture better, its miss
  // plus the wait it leaves unexplained (as replay_detail::ServedOutOfOrder weighs the PS's
  // order), and passes the gates itself: its replay as is within kMaxBaselineMiss, and the
  // workers' waits explained (at most kMaxUnexplainedShare left). A lock read beside waits
  // neither reading explains is no evidence for it (8529: a PS NIC-bound, 67% of the step
  // unexplained with the lock, 83% without; read, its two predictions within 10% of their twins
  // were withheld), nor one whose replay misses the step where the model without it, over the
  // PS links, does not (gen3 report6 1708, spent: a convoy, the lock's replay as is +14%; read,
  // its scaling outlook, within 15% of the sweep, was withheld).
  const double plain_miss = std::abs(ReplayBaseline(plain).miss);
  const double plain_unexplained = UnexplainedWaitShare(plain);
  if (plain_miss <= kMaxBaselineMiss && plain_unexplained <= kMaxUnexplainedShare) return plain;
  ReplayModel locked = BuildReplayModelAs(in, true);
  if (locked.lock_ps == 0 || locked.workers.empty()) return plain;
  const double unexplained = UnexplainedWaitShare(locked);
  const double locked_miss = std::abs(ReplayBaseline(locked).miss);
  if (locked_miss <= kMaxBaselineMiss && unexplained <= kMaxUnexplainedShare &&
      locked_miss + unexplained < plain_miss + plain_unexplained) {
    return locked;
  }
  plain.lock_unexplained = unexplained;
  return plain;
}

}  // namespace tfdiag
