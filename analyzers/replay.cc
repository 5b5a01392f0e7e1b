#include "analyzers/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_cores.h"
#include "analyzers/replay_link.h"
#include "core/device_cursor.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

double Median(std::vector<double> v) { return MedianInPlace(&v); }

// A robust standard deviation of `v`: its interquartile range / 1.349 (a normal's), 0 under 4.
double Spread(std::vector<double> v) {
  if (v.size() < 4) return 0;
  std::sort(v.begin(), v.end());
  return (v[v.size() * 3 / 4] - v[v.size() / 4]) / 1.349;
}

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

// The concurrency `t`'s ops really reached: the most ops running at once for at least 5% of its
// busy time (over all its devices and lanes; an op ending when another starts does not overlap
// it), so a brief overlap of two small ops does not double a PS's capacity. Each device's ops
// are in start order (Capture): sweeps the devices' starts merged in time order with a min-heap
// of the running ops' ends, so memory is the ops running at once, not every op of the task.
int AchievedConcurrency(const Capture& c, const TaskStats& t) {
  using Next = std::pair<TimeNs, size_t>;  // (start, device slot) of every device's next op
  std::vector<DeviceCursor> cur;
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> starts;
  auto advance = [&](size_t k) {  // pushes device slot k's next op of positive length
    const OpRow* op;
    while ((op = cur[k].Peek()) != nullptr && op->dur() <= 0) cur[k].Pop();
    if (op != nullptr) starts.push({op->start, k});
  };
  for (uint32_t d : t.device_ids) {
    cur.emplace_back(c.ops, c.device_ops[d]);
    advance(cur.size() - 1);
  }
  std::priority_queue<TimeNs, std::vector<TimeNs>, std::greater<TimeNs>> ends;
  std::vector<double> at_level(2, 0);  // time with exactly k ops running
  TimeNs now = 0;
  auto settle = [&](TimeNs until) {  // ends ops up to `until`, crediting time to each level
    while (!ends.empty() && ends.top() <= until) {
      const TimeNs e = ends.top();
      if (e > now) at_level[ends.size()] += double(e - now), now = e;
      ends.pop();
    }
    if (until > now) at_level[ends.size()] += double(until - now), now = until;
  };
  while (!starts.empty()) {
    const auto [ts, k] = starts.top();
    starts.pop();
    const OpRow op = *cur[k].Peek();
    cur[k].Pop();
    settle(std::max(ts, now));
    ends.push(op.end());
    if (at_level.size() <= ends.size()) at_level.resize(ends.size() + 1, 0);
    advance(k);
  }
  settle(std::numeric_limits<TimeNs>::max() / 2);
  double busy = 0;
  for (size_t k = 1; k < at_level.size(); ++k) busy += at_level[k];
  int level = 1;
  double at_least = 0;  // time with >= k ops running
  for (size_t k = at_level.size() - 1; k >= 1; --k) {
    at_least += at_level[k];
    if (at_least >= 0.05 * busy) {
      level = static_cast<int>(k);
      break;
    }
  }
  return std::max(1, level);
}

// ReplayModel::Worker::pull_xfer_ns of `task`: in its median step, the longest time from the
// last op of a PS's answer (StepWait::last_sent of a wait a PS's tensor ended) to the wait's
// end, at most the wait.
double PullTransfer(const AnalysisInput& in, uint32_t task) {
  const StepGraph& g = *in.graph;
  const uint32_t s = g.MedianStep(task);
  if (s == kNoIndex) return 0;
  const StepNode& n = g.steps()[s];
  double x = 0;
  for (uint32_t i = n.waits_begin; i < n.waits_end; ++i) {
    const StepWait& w = g.waits()[i];
    if (w.step_tail || w.edge == kNoIndex) continue;
    const GraphEdge& e = g.edges()[w.edge];
    if (e.push || e.src_task >= in.capture.tasks.size() ||
        in.capture.tasks[e.src_task].kind != JobKind::kPs) {
      continue;
    }
    x = std::max(
        x, double(std::clamp<TimeNs>(w.end - std::max(e.sent, w.last_sent), 0, w.end - w.start)));
  }
  return x;
}

// Applies: the push half of a PS's work (gradient push and apply after compute).
bool IsApplyOpType(std::string_view type) {
  return IsDenseApplyOpType(type) || IsSparseApplyOpType(type) || type.rfind("Scatter", 0) == 0 ||
         type.rfind("ResourceScatter", 0) == 0 || type == "AssignAdd" || type == "AssignSub" ||
         type == "AssignAddVariableOp" || type == "AssignSubVariableOp";
}

// Per worker, the median replayed wait for the pull answers and for the applies.
struct Waits {
  std::vector<double> pull, push;
};
double Simulate(const ReplayModel& m, const Fix& fix, int steps, Waits* waits,
                std::vector<double>* mean_step = nullptr);

}  // namespace

// Steps per replay, for bounded work: about 2e7 request services (4096 workers x 512 PS: 10).
int ReplaySteps(const ReplayModel& m) {
  const double per_step = double(m.workers.size()) * double(std::max<size_t>(1, m.ps.size()));
  return static_cast<int>(std::clamp(2e7 / std::max(1.0, per_step), 10.0, 40.0));
}

ReplayModel BuildReplayModel(const AnalysisInput& in) {
  ReplayModel m;
  if (in.graph == nullptr) return m;
  const Capture& c = in.capture;
  std::vector<double> all_steps, worker_medians, min_idle;
  bool any_producer = false;
  StringTest sync_type(c, IsSyncReplicasOpType), sync_name(c, IsSyncReplicasOpName);
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind)) continue;
    const auto [b, e] = in.graph->TaskSteps(t.task);
    if (b == e) continue;
    std::vector<double> input, compute, recv, idle, own_steps;
    bool graph_sync = false;  // the step graph kept the sync waits apart (StepNode::sync_ns)
    for (uint32_t s = b; s < e; ++s) {
      const StepNode& n = in.graph->steps()[s];
      input.push_back(double(n.input_ns));
      compute.push_back(double(n.compute_ns));
      recv.push_back(double(n.recv_ns));
      idle.push_back(double(n.idle_ns));
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
    // A prefetched pipeline's producer ops (tf.data's *Dataset ops, beside the step): the
    // pipeline's time per batch is their median duration (one op a batch, as the independent
    // suite writes them), and the worker's steps take their batch from its buffer.
    std::vector<double> produced;
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
      if (IsInputProducerOpType(c.Str(c.OpType(op)))) produced.push_back(double(op.dur()));
    });
    const bool prefetched = !produced.empty();
    m.workers.push_back({t.task, in_ns, compute_ns, Median(recv),
                         prefetched ? Median(produced) : in_ns, idle_ns, PullTransfer(in, t.task),
                         0, sigma, prefetched});
    any_producer |= prefetched;
    min_idle.push_back(*std::min_element(idle.begin(), idle.end()));
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
  std::vector<int> seen_threads, seen_cores;
  StringTest is_apply(c, IsApplyOpType);
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs) continue;
    ReplayModel::Ps p;
    p.task = t.task;
    if (t.op_time_ns > 0) {
      TimeNs push = 0, all = 0, sync = 0;
      std::vector<double> noops;
      ForEachOpOfTask(c, t, [&](const OpRow& op) {
        all += op.dur();
        if (is_apply(c.OpType(op))) push += op.dur();
        if (sync_type(c.OpType(op)) || sync_name(c.Node(op).name)) sync += op.dur();
        if (c.Str(c.OpType(op)) == "NoOp") noops.push_back(double(op.dur()));
      });
      p.op_floor_ns = noops.empty() ? 0 : Median(std::move(noops));
      p.pull_ns = double(all - push) / double(m.steps);
      p.push_ns = double(push) / double(m.steps);
      p.sync_ns = std::min(p.pull_ns, double(sync) / double(m.steps));
      p.threads = AchievedConcurrency(c, t);
      // Ops slowed by their PS's other ops (threads beyond cores): their work, not their time,
      // is the demand (replay_cores.h).
      const PsOpLoad load = FitPsCores(c, t);
      const double scale = load.op_ns > 0 ? load.work_ns / load.op_ns : 1;
      p.cores = load.cores;
      p.pull_ns *= scale, p.push_ns *= scale, p.sync_ns *= scale;
      for (const VariableLoad& v : t.variables) {
        p.var_ns.push_back(double(v.total_ns) / double(m.steps) * scale);
        p.var_ops.push_back(double(v.ops) / double(m.steps));
      }
      seen_threads.push_back(p.threads);
      if (load.cores > 0) seen_cores.push_back(load.cores);
    }
    m.ps.push_back(p);
  }
  // Threads and cores are the job's configuration (one PS spec for all PS): every PS, idle and
  // lightly loaded ones included, serves on the most threads any PS was seen using, at most the
  // cores the slowdown fit found (the median of the PS where it could tell), so a PS that only
  // needed one thread in the capture gets its real capacity after a fix moves work to it.
  if (!seen_threads.empty()) {
    m.ps_threads = *std::max_element(seen_threads.begin(), seen_threads.end());
    m.ps_cores =
        seen_cores.empty() ? 0 : static_cast<int>(Median({seen_cores.begin(), seen_cores.end()}));
    const int servers = m.ps_cores > 0 ? std::min(m.ps_threads, m.ps_cores) : m.ps_threads;
    for (ReplayModel::Ps& p : m.ps) p.threads = std::max(1, servers);
  }
  // A receive op on the worker often spans the PS's service of the request (TF's _Recv ends
  // when the tensor arrived), so the receive time the PS answer already explains is not counted
  // twice: each worker keeps only its receive time beyond its replayed wait for the PS; so for
  // the idle time after compute and the replayed wait for the applies. (A pull wait that no
  // receive op spans stays in the idle time as well: taking it out, which the baseline would
  // want, made the twin suite's hot-PS partitions 0.4-2 points more optimistic, hot-idle 11.6%
  // off with confidence high, before the transfers were measured; not tried since.) The replayed
  // waits include the answers' and pushes' transfers (Worker::pull_xfer_ns, push_xfer_ns).
  // The push's transfer: the pull's, at most the shortest idle time less the longest apply.
  double longest_apply = 0;
  for (const ReplayModel::Ps& p : m.ps) longest_apply = std::max(longest_apply, p.push_ns);
  for (size_t w = 0; w < m.workers.size(); ++w) {
    m.workers[w].push_xfer_ns =
        std::clamp(min_idle[w] - longest_apply, 0.0, m.workers[w].pull_xfer_ns);
  }
  std::vector<std::pair<double, double>> measured;
  for (ReplayModel::Worker& w : m.workers) {
    measured.emplace_back(w.recv_ns, w.tail_ns);
    w.recv_ns = w.tail_ns = 0;
  }
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
    m.workers[w].tail_ns = std::max(0.0, measured[w].second - waits.push[w]);
  }
  return m;
}

namespace {

// Per PS after the fix: pull and push demand (ns per worker step) and threads; under
// SyncReplicasOptimizer, `push` is the accumulators' share and `once` the applies of the
// aggregated gradients, run once per step of the job after every worker's push (the chief's
// update, before the tokens release the workers).
struct PsPlan {
  std::vector<double> pull, push, once;
  std::vector<int> threads;
  std::vector<double> out, in;  // bytes per worker step answered / received (Ps::out_bytes)
};

PsPlan PlanPs(const ReplayModel& m, const Fix& fix) {
  PsPlan s;
  auto value_for = [](const std::vector<std::pair<uint32_t, double>>& v, uint32_t task) {
    double x = 0;
    for (const auto& [t, y] : v) x += t == task ? y : 0;
    return x;
  };
  double moved_pull = 0, moved_push = 0, moved_out = 0, moved_in = 0;
  const double n_ps = double(m.ps.size());
  // Asynchronous: no accumulators; the applies, once per global step under sync, once per push.
  const double apply_scale = fix.to_async && m.sync ? double(m.workers.size()) : 1.0;
  for (const ReplayModel::Ps& p : m.ps) {
    // slow-ps-host: the task on a host at the others' speed.
    const double speedup = std::max(1.0, value_for(fix.host_speedup, p.task));
    double pull =
        (p.pull_ns + value_for(fix.ps_demand_add, p.task) - (m.sync ? p.sync_ns : 0)) / speedup;
    double push =
        std::max(0.0, p.push_ns * apply_scale - value_for(fix.ps_demand_cut, p.task)) / speedup;
    const double share = std::clamp(value_for(fix.partition, p.task), 0.0, 1.0);
    moved_pull += pull * share;
    moved_push += push * share;
    if (share > 0 && pull + push > 0 && !p.var_ops.empty()) {
      // The hottest variable's ops, one per part now: n_ps - 1 more of each, at the op's fixed
      // cost, split between pull and push as its time is.
      const double extra = p.var_ops[0] * (n_ps - 1) * p.op_floor_ns;
      moved_pull += extra * pull / (pull + push);
      moved_push += extra * push / (pull + push);
    }
    s.pull.push_back(pull * (1 - share));
    s.push.push_back(push * (1 - share));
    s.threads.push_back(std::max(1, p.threads));
    moved_out += p.out_bytes * share, moved_in += p.in_bytes * share;
    s.out.push_back(p.out_bytes * (1 - share));
    s.in.push_back(p.in_bytes * (1 - share));
  }
  for (size_t p = 0; p < s.pull.size(); ++p) {  // parts over all PS, as the partitioner's
    s.pull[p] += moved_pull / double(s.pull.size());
    s.push[p] += moved_push / double(s.push.size());
    s.out[p] += moved_out / double(s.out.size());
    s.in[p] += moved_in / double(s.in.size());
  }
  if (!fix.drop_ps.empty()) {  // the dropped PS's work spread over the others
    PsPlan kept;
    double pull = 0, push = 0, out = 0, in = 0;
    for (size_t p = 0; p < m.ps.size(); ++p) {
      if (std::find(fix.drop_ps.begin(), fix.drop_ps.end(), m.ps[p].task) != fix.drop_ps.end()) {
        pull += s.pull[p], push += s.push[p], out += s.out[p], in += s.in[p];
      } else {
        kept.pull.push_back(s.pull[p]);
        kept.push.push_back(s.push[p]);
        kept.threads.push_back(s.threads[p]);
        kept.out.push_back(s.out[p]);
        kept.in.push_back(s.in[p]);
      }
    }
    if (!kept.pull.empty()) {
      for (double& d : kept.pull) d += pull / double(kept.pull.size());
      for (double& d : kept.push) d += push / double(kept.push.size());
      for (double& d : kept.out) d += out / double(kept.out.size());
      for (double& d : kept.in) d += in / double(kept.in.size());
      s = std::move(kept);
    }
  }
  if (fix.ps_count > 0 && !s.pull.empty()) {
    // The fix text (ps-worker-ratio, idle-ps): variables partitioned over the new PS count
    // (fixed_size_partitioner(num_ps)): all PS work spread evenly, each variable's ops one per
    // part, each part op paying the PS's fixed cost per op (Ps::op_floor_ns).
    const size_t n = size_t(fix.ps_count);
    double pull = 0, push = 0, extra = 0;
    for (size_t p = 0; p < s.pull.size(); ++p) pull += s.pull[p], push += s.push[p];
    for (const ReplayModel::Ps& p : m.ps) {
      double ops = 0;
      for (double o : p.var_ops) ops += o;
      extra += ops * double(n > 0 ? n - 1 : 0) * p.op_floor_ns;
    }
    const double all = pull + push;
    const double pull_share = all > 0 ? pull / all : 0.5;
    const int threads = *std::max_element(s.threads.begin(), s.threads.end());
    double out = 0, in = 0;
    for (size_t p = 0; p < s.out.size(); ++p) out += s.out[p], in += s.in[p];
    s.out.assign(n, out / double(n));
    s.in.assign(n, in / double(n));
    s.pull.assign(n, (pull + extra * pull_share) / double(n));
    s.push.assign(n, (push + extra * (1 - pull_share)) / double(n));
    s.threads.assign(n, threads);
  }
  if (m.sync && !fix.to_async && !s.push.empty()) {
    double accum = 0;
    for (const ReplayModel::Ps& p : m.ps) {
      accum += p.sync_ns / std::max(1.0, value_for(fix.host_speedup, p.task));
    }
    s.once = s.push;
    for (double& d : s.once) d *= double(m.workers.size());
    s.push.assign(s.push.size(), accum / double(s.push.size()));
  }
  return s;
}

// Per worker, what the replay runs each step with `fix` applied (Simulate's inputs).
struct WorkerPlan {
  std::vector<double> input, compute, recv, producer, pull_xfer, push_xfer, sigma;
  std::vector<bool> prefetch;
};

WorkerPlan PlanWorkers(const ReplayModel& m, const Fix& fix) {
  const size_t nw = m.workers.size();
  WorkerPlan p;
  std::vector<double> input(nw), compute(nw), recv(nw), producer(nw), pull_xfer(nw), push_xfer(nw),
      sigma(nw);
  std::vector<double> all_input, all_compute;
  for (const ReplayModel::Worker& w : m.workers) {
    all_input.push_back(w.input_ns);
    all_compute.push_back(w.compute_ns);
  }
  std::vector<double> all_producer;
  for (const ReplayModel::Worker& w : m.workers) all_producer.push_back(w.producer_ns);
  const double median_input = Median(all_input), median_compute = Median(all_compute),
               median_producer = Median(all_producer);
  auto has = [](const std::vector<uint32_t>& v, uint32_t task) {
    return std::find(v.begin(), v.end(), task) != v.end();
  };
  auto value_for = [](const std::vector<std::pair<uint32_t, double>>& v, uint32_t task) {
    for (const auto& [t, x] : v) {
      if (t == task) return x;
    }
    return 0.0;
  };
  std::vector<bool> prefetch(nw);
  for (size_t w = 0; w < nw; ++w) {
    const ReplayModel::Worker& x = m.workers[w];
    const bool at_median = has(fix.median_workers, x.task);
    compute[w] = std::max(
        0.0, (at_median ? median_compute : x.compute_ns) - value_for(fix.compute_cut, x.task));
    input[w] = at_median ? median_input : x.input_ns;
    sigma[w] = x.compute_ns > 0 ? x.compute_sigma_ns * compute[w] / x.compute_ns : 0;
    producer[w] = at_median ? std::min(x.producer_ns, median_producer) : x.producer_ns;
    prefetch[w] = x.prefetched || has(fix.prefetch_workers, x.task);
    const double kept = 1 - std::clamp(value_for(fix.recv_cut, x.task), 0.0, 1.0);
    recv[w] = x.recv_ns * kept;  // the receive time a fix cuts: the transfers' and beyond
    pull_xfer[w] = x.pull_xfer_ns * kept;
    push_xfer[w] = x.push_xfer_ns;
  }
  p.input = std::move(input), p.compute = std::move(compute), p.recv = std::move(recv);
  p.producer = std::move(producer), p.pull_xfer = std::move(pull_xfer);
  p.push_xfer = std::move(push_xfer), p.sigma = std::move(sigma), p.prefetch = std::move(prefetch);
  return p;
}

// The replay (ReplayMedianStep); `waits`, when given, gets each worker's median time from its
// pull request to the last PS answer and from its push to the last apply; `mean_step`, when
// given, each worker's mean step after the warm-up.
double Simulate(const ReplayModel& m, const Fix& fix, int steps, Waits* waits,
                std::vector<double>* mean_step) {
  if (m.workers.empty()) return 0;
  const PsPlan ps = PlanPs(m, fix);
  const size_t nw = m.workers.size();
  const bool sync = m.sync && !fix.to_async;
  const WorkerPlan wp = PlanWorkers(m, fix);
  const std::vector<double>&input = wp.input, &compute = wp.compute, &recv = wp.recv,
        &producer = wp.producer, &pull_xfer = wp.pull_xfer, &push_xfer = wp.push_xfer,
        &sigma = wp.sigma;
  const std::vector<bool>& prefetch = wp.prefetch;
  // Each PS: its threads' free times; requests served in arrival order (the event queue hands
  // them out by time). Events: (time, worker, phase), phase 0 a pull, 1 a push.
  std::vector<std::vector<double>> free(ps.pull.size());
  for (size_t p = 0; p < free.size(); ++p) free[p].assign(size_t(ps.threads[p]), 0);
  // A request reaching every PS with demand at `a` (events are handled in arrival order, so
  // each PS serves in arrival order), answered `after` its service; returns when the last
  // answer is back.
  auto serve = [&](double a, const std::vector<double>& demand, double after) {
    double answered = a;
    for (size_t p = 0; p < demand.size(); ++p) {
      if (demand[p] <= 0) continue;
      auto th = std::min_element(free[p].begin(), free[p].end());
      *th = std::max(a, *th) + demand[p];
      answered = std::max(answered, *th + after);
    }
    return answered;
  };
  using Event = std::tuple<double, size_t, int>;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
  std::vector<double> start(nw, 0), ready(nw, 0), pulled_at(nw, 0);
  std::vector<int> done(nw, 0);
  std::vector<double> lengths, sum(nw, 0);
  std::vector<std::vector<double>> pull_waits(nw), push_waits(nw);
  const int warmup = std::min(5, steps / 4);
  // The step of worker w begins at `t`: its input (a prefetched batch is taken when ready and
  // the producer starts the next), then its pull.
  auto begin = [&](size_t w, double t) {
    start[w] = t;
    double pulled = t + input[w];
    if (prefetch[w]) {
      pulled = std::max(t, ready[w]);
      ready[w] = pulled + producer[w];
    }
    q.push({pulled, w, 0});
  };
  std::vector<double> barrier_end;  // sync: per step, the latest worker's end
  std::vector<int> barrier_count;
  for (size_t w = 0; w < nw; ++w) {
    ready[w] = producer[w];
    begin(w, 0);
  }
  while (!q.empty()) {
    const auto [a, w, phase] = q.top();
    q.pop();
    if (phase == 0) {
      const double answered = serve(a, ps.pull, pull_xfer[w]);
      pulled_at[w] = answered - a;
      const double c = std::max(0.0, compute[w] + sigma[w] * Jitter(w, uint64_t(done[w])));
      q.push({answered + recv[w] + c + push_xfer[w], w, 1});  // the push reaches the PS
      continue;
    }
    const double pushed = serve(a, ps.push, 0), end = pushed + m.workers[w].tail_ns;
    const int k = done[w]++;
    if (k >= warmup) {
      pull_waits[w].push_back(pulled_at[w]);
      push_waits[w].push_back(pushed - a + push_xfer[w]);  // from the compute's end
    }
    if (!sync) {
      if (k >= warmup) lengths.push_back(end - start[w]), sum[w] += end - start[w];
      if (done[w] < steps) begin(w, end);
      continue;
    }
    if (barrier_end.size() <= size_t(k)) barrier_end.resize(k + 1, 0), barrier_count.resize(k + 1);
    barrier_end[k] = std::max(barrier_end[k], end);
    if (++barrier_count[k] < int(nw)) continue;
    if (!ps.once.empty()) barrier_end[k] = serve(barrier_end[k], ps.once, 0);
    for (size_t v = 0; v < nw; ++v) {  // the slowest worker releases every worker's next step
      if (k >= warmup) {
        lengths.push_back(barrier_end[k] - start[v]);
        sum[v] += barrier_end[k] - start[v];
      }
      if (done[v] < steps) begin(v, barrier_end[k]);
    }
  }
  if (waits != nullptr) {
    for (std::vector<double>& v : pull_waits) waits->pull.push_back(Median(std::move(v)));
    for (std::vector<double>& v : push_waits) waits->push.push_back(Median(std::move(v)));
  }
  if (mean_step != nullptr) {
    mean_step->clear();
    for (double x : sum) mean_step->push_back(steps > warmup ? x / double(steps - warmup) : 0);
  }
  return Median(lengths);
}

// Simulate with the PS NICs as links shared by the transfers crossing them
// (ReplayModel::link_bytes_per_ns > 0): each PS answers on its transmit link and takes the
// gradients on its receive link; of each measured transfer only what its bytes' time on an idle
// link does not explain (latency, the worker's side) is held fixed. Otherwise as Simulate.
double SimulateLinks(const ReplayModel& m, const Fix& fix, int steps,
                     std::vector<double>* mean_step) {
  if (m.workers.empty()) return 0;
  const PsPlan ps = PlanPs(m, fix);
  const size_t nw = m.workers.size(), np = ps.pull.size();
  const bool sync = m.sync && !fix.to_async;
  const WorkerPlan wp = PlanWorkers(m, fix);
  const double rate = m.link_bytes_per_ns;
  // Held fixed: each measured transfer less its largest answer's (push's) time on an idle link.
  double max_out = 0, max_in = 0;
  for (const ReplayModel::Ps& p : m.ps) {
    max_out = std::max(max_out, p.out_bytes), max_in = std::max(max_in, p.in_bytes);
  }
  std::vector<double> fixed_pull(nw), fixed_push(nw);
  for (size_t w = 0; w < nw; ++w) {
    fixed_pull[w] = std::max(0.0, wp.pull_xfer[w] - max_out / rate);
    fixed_push[w] = std::max(0.0, wp.push_xfer[w] - max_in / rate);
  }
  std::vector<std::vector<double>> free(np);
  for (size_t p = 0; p < np; ++p) free[p].assign(size_t(ps.threads[p]), 0);
  auto serve_one = [&](size_t p, double a, double demand) {  // a PS's threads, arrival order
    if (demand <= 0) return a;
    auto th = std::min_element(free[p].begin(), free[p].end());
    *th = std::max(a, *th) + demand;
    return *th;
  };
  std::vector<SharedLink> tx(np, SharedLink(rate)), rx(np, SharedLink(rate));
  enum Kind : uint8_t { kPull, kAnswerReady, kLinkTx, kLinkRx, kAnswerIn, kPushOut, kGradIn };
  struct Event {
    double t;
    uint64_t seq;
    uint32_t who;  // a worker, or a PS for kLinkTx / kLinkRx
    uint32_t ps;
    Kind kind;
    uint64_t version;
    bool operator>(const Event& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
  };
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q;
  uint64_t seq = 0;
  auto push = [&](double t, uint32_t who, Kind k, uint32_t p = 0, uint64_t version = 0) {
    q.push({t, seq++, who, p, k, version});
  };
  auto arm = [&](SharedLink& l, uint32_t p, Kind k) {  // the link's next completion event
    l.Touch();
    const double t = l.NextDone();
    if (std::isfinite(t)) push(t, p, k, p, l.version());
  };
  std::vector<double> start(nw, 0), ready(nw, 0), pushed(nw, 0);
  std::vector<int> done(nw, 0), pending(nw, 0), pending_push(nw, 0);
  std::vector<double> lengths, sum(nw, 0);
  const int warmup = std::min(5, steps / 4);
  auto begin = [&](size_t w, double t) {
    start[w] = t;
    double pulled = t + wp.input[w];
    if (wp.prefetch[w]) {
      pulled = std::max(t, ready[w]);
      ready[w] = pulled + wp.producer[w];
    }
    push(pulled, uint32_t(w), kPull);
  };
  std::vector<double> barrier_end;
  std::vector<int> barrier_count;
  auto finish = [&](size_t w, double applied) {
    const double end = applied + m.workers[w].tail_ns;
    const int k = done[w]++;
    if (!sync) {
      if (k >= warmup) lengths.push_back(end - start[w]), sum[w] += end - start[w];
      if (done[w] < steps) begin(w, end);
      return;
    }
    if (barrier_end.size() <= size_t(k)) barrier_end.resize(k + 1, 0), barrier_count.resize(k + 1);
    barrier_end[k] = std::max(barrier_end[k], end);
    if (++barrier_count[k] < int(nw)) return;
    double release = barrier_end[k];
    for (size_t p = 0; p < ps.once.size(); ++p) {
      release = std::max(release, serve_one(p, barrier_end[k], ps.once[p]));
    }
    for (size_t v = 0; v < nw; ++v) {
      if (k >= warmup) lengths.push_back(release - start[v]), sum[v] += release - start[v];
      if (done[v] < steps) begin(v, release);
    }
  };
  auto pulled_all = [&](size_t w, double t) {
    const double c = std::max(0.0, wp.compute[w] + wp.sigma[w] * Jitter(w, uint64_t(done[w])));
    push(t + wp.recv[w] + c, uint32_t(w), kPushOut);
  };
  for (size_t w = 0; w < nw; ++w) {
    ready[w] = wp.producer[w];
    begin(w, 0);
  }
  std::vector<uint64_t> ids;
  // Each worker step makes a bounded number of events (a pull, an answer, a gradient and a
  // link completion per PS, a few more); past 16x that, something loops: no replay.
  const double budget = 16.0 * double(steps + 1) * double(nw) * double(2 * np + 4);
  double events = 0;
  while (!q.empty()) {
    if (++events > budget) return 0;
    const Event e = q.top();
    q.pop();
    const size_t w = e.who;
    switch (e.kind) {
      case kPull:
        pending[w] = 0;
        for (size_t p = 0; p < np; ++p) {
          if (ps.pull[p] <= 0 && ps.out[p] <= 0) continue;
          ++pending[w];
          push(serve_one(p, e.t, ps.pull[p]), e.who, kAnswerReady, uint32_t(p));
        }
        if (pending[w] == 0) pulled_all(w, e.t);
        break;
      case kAnswerReady:
        if (ps.out[e.ps] > 0) {
          tx[e.ps].Add(e.t, ps.out[e.ps], w);
          arm(tx[e.ps], e.ps, kLinkTx);
        } else {
          push(e.t + wp.pull_xfer[w], e.who, kAnswerIn);
        }
        break;
      case kLinkTx:
      case kLinkRx: {
        SharedLink& l = e.kind == kLinkTx ? tx[e.ps] : rx[e.ps];
        if (e.version != l.version()) break;  // stale: the link changed since
        ids.clear();
        l.PopDone(e.t, &ids);
        for (uint64_t id : ids) {
          if (e.kind == kLinkTx) {
            push(e.t + fixed_pull[id], uint32_t(id), kAnswerIn);
          } else {
            push(e.t + fixed_push[id], uint32_t(id), kGradIn, e.ps);
          }
        }
        arm(l, e.ps, e.kind);
        break;
      }
      case kAnswerIn:
        if (--pending[w] == 0) pulled_all(w, e.t);
        break;
      case kPushOut:
        pending_push[w] = 0;
        pushed[w] = e.t;
        for (size_t p = 0; p < np; ++p) {
          if (ps.push[p] <= 0 && ps.in[p] <= 0) continue;
          ++pending_push[w];
          if (ps.in[p] > 0) {
            rx[p].Add(e.t, ps.in[p], w);
            arm(rx[p], uint32_t(p), kLinkRx);
          } else {
            push(e.t + wp.push_xfer[w], e.who, kGradIn, uint32_t(p));
          }
        }
        if (pending_push[w] == 0) finish(w, e.t);
        break;
      case kGradIn:
        pushed[w] = std::max(pushed[w], serve_one(e.ps, e.t, ps.push[e.ps]));
        if (--pending_push[w] == 0) finish(w, pushed[w]);
        break;
    }
  }
  if (mean_step != nullptr) {
    mean_step->clear();
    for (double x : sum) mean_step->push_back(steps > warmup ? x / double(steps - warmup) : 0);
  }
  return Median(lengths);
}

}  // namespace

double ReplayMedianStep(const ReplayModel& m, const Fix& fix, int steps) {
  if (m.link_bytes_per_ns > 0) return SimulateLinks(m, fix, steps, nullptr);
  return Simulate(m, fix, steps, nullptr);
}

double ReplayThroughputStep(const ReplayModel& m, const Fix& fix, int steps) {
  std::vector<double> mean;
  if (m.link_bytes_per_ns > 0) {
    SimulateLinks(m, fix, steps, &mean);
  } else {
    Simulate(m, fix, steps, nullptr, &mean);
  }
  double rate = 0;
  for (double x : mean) rate += x > 0 ? 1 / x : 0;
  return rate > 0 ? double(mean.size()) / rate : 0;
}

Baseline ReplayBaseline(const ReplayModel& m) {
  Baseline b;
  if (m.workers.empty() || m.measured_step_ns <= 0) return b;
  b.replay_ns = ReplayMedianStep(m, Fix{}, ReplaySteps(m));
  const double measured =
      m.worker_median_step_ns > 0 ? m.worker_median_step_ns : m.measured_step_ns;
  b.measured_ns = measured;
  b.miss = (b.replay_ns - measured) / measured;
  return b;
}

}  // namespace tfdiag
