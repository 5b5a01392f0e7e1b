#include "analyzers/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <queue>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/replay_fixes.h"
#include "core/duration.h"
#include "core/median.h"

namespace tfdiag {

namespace {

double Median(std::vector<double> v) { return MedianInPlace(&v); }

// Most ops of `t` running at once (over all its devices and lanes); an op ending when another
// starts does not overlap it. Each device's ops are in start order (Capture): sweeps the devices'
// starts merged in time order with a min-heap of the running ops' ends, so memory is the ops
// running at once, not every op of the task.
int MaxConcurrent(const Capture& c, const TaskStats& t) {
  using Next = std::pair<TimeNs, size_t>;  // (start, device slot) of every device's next op
  struct Cursor {                          // one device: its ops decoded a block at a time
    uint32_t at, end;                      // next op to decode, device end (into Capture::ops)
    std::vector<OpRow> buf;                // decoded ops of positive length, in start order
    size_t pos = 0;
  };
  std::vector<Cursor> cur;
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> starts;
  auto advance = [&](size_t k) {  // pushes device slot k's next op of positive length
    Cursor& x = cur[k];
    while (x.pos == x.buf.size() && x.at < x.end) {
      x.buf.clear();
      x.pos = 0;
      const uint32_t to = std::min<uint32_t>(x.end, x.at + kPackBlock);
      c.ops.ForEach(x.at, to, [&](const OpRow& op) {
        if (op.dur() > 0) x.buf.push_back(op);
      });
      x.at = to;
    }
    if (x.pos < x.buf.size()) starts.push({x.buf[x.pos].start, k});
  };
  for (uint32_t d : t.device_ids) {
    cur.push_back({c.device_ops[d].first, c.device_ops[d].second, {}, 0});
    advance(cur.size() - 1);
  }
  std::priority_queue<TimeNs, std::vector<TimeNs>, std::greater<TimeNs>> ends;
  size_t most = 1;
  while (!starts.empty()) {
    const auto [ts, k] = starts.top();
    starts.pop();
    const OpRow& op = cur[k].buf[cur[k].pos++];
    while (!ends.empty() && ends.top() <= ts) ends.pop();
    ends.push(op.end());
    most = std::max(most, ends.size());
    advance(k);
  }
  return static_cast<int>(most);
}

double Simulate(const ReplayModel& m, const Fix& fix, int steps, std::vector<double>* ps_wait,
                std::vector<double>* mean_step = nullptr);

// Steps per replay, for bounded work: about 2e7 request services (4096 workers x 512 PS: 10).
int ReplaySteps(const ReplayModel& m) {
  const double per_step = double(m.workers.size()) * double(std::max<size_t>(1, m.ps.size()));
  return static_cast<int>(std::clamp(2e7 / std::max(1.0, per_step), 10.0, 40.0));
}

}  // namespace

ReplayModel BuildReplayModel(const AnalysisInput& in) {
  ReplayModel m;
  if (in.graph == nullptr) return m;
  const Capture& c = in.capture;
  std::vector<double> all_steps;
  for (const TaskStats& t : in.stats.tasks) {
    if (!IsTrainingTask(t.kind)) continue;
    const auto [b, e] = in.graph->TaskSteps(t.task);
    if (b == e) continue;
    std::vector<double> input, compute, recv;
    for (uint32_t s = b; s < e; ++s) {
      const StepNode& n = in.graph->steps()[s];
      m.sync |= n.sync_ns > 0;
      input.push_back(double(n.input_ns));
      compute.push_back(double(n.compute_ns));
      recv.push_back(double(n.recv_ns));
      all_steps.push_back(double(n.end - n.start));
    }
    m.workers.push_back({t.task, Median(input), Median(compute), Median(recv)});
  }
  m.steps = static_cast<int64_t>(all_steps.size());
  m.measured_step_ns = Median(all_steps);
  if (m.steps == 0) return m;
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs || t.busy_ns <= 0) continue;
    m.ps.push_back({t.task, double(t.busy_ns) / double(m.steps), MaxConcurrent(c, t)});
  }
  // A receive op on the worker often spans the PS's service of the request (TF's _Recv ends
  // when the tensor arrived), so the receive time the PS answer already explains is not counted
  // twice: each worker keeps only its receive time beyond its replayed wait for the PS.
  std::vector<double> measured(m.workers.size()), ps_wait;
  for (size_t w = 0; w < m.workers.size(); ++w) {
    measured[w] = m.workers[w].recv_ns;
    m.workers[w].recv_ns = 0;
  }
  Simulate(m, Fix{}, ReplaySteps(m), &ps_wait);
  for (size_t w = 0; w < m.workers.size() && w < ps_wait.size(); ++w) {
    m.workers[w].recv_ns = std::max(0.0, measured[w] - ps_wait[w]);
  }
  return m;
}

namespace {

// The replay (ReplayMedianStep); `ps_wait`, when given, gets each worker's median time from its
// request to the last PS answer; `mean_step` each worker's mean step after the warm-up.
double Simulate(const ReplayModel& m, const Fix& fix, int steps, std::vector<double>* ps_wait,
                std::vector<double>* mean_step) {
  if (m.workers.empty()) return 0;
  // Demands after the fix.
  std::vector<double> demand(m.ps.size());
  std::vector<int> threads(m.ps.size());
  double moved = 0;
  for (size_t p = 0; p < m.ps.size(); ++p) {
    demand[p] = m.ps[p].demand_ns;
    threads[p] = std::max(1, m.ps[p].threads);
    for (const auto& [task, cut] : fix.ps_demand_cut) {
      if (task == m.ps[p].task) demand[p] = std::max(0.0, demand[p] - cut);
    }
    for (const auto& [task, add] : fix.ps_demand_add) {
      if (task == m.ps[p].task) demand[p] += add;
    }
    demand[p] *= m.ps_slowdown;
    if (m.ps[p].task == fix.partition_ps) {
      moved = demand[p] * std::clamp(fix.partition_share, 0.0, 1.0);
      demand[p] -= moved;
    }
  }
  for (double& d : demand) d += moved / double(m.ps.size());
  if (!fix.drop_ps.empty()) {  // the dropped PS's work spread over the others
    std::vector<double> kept_demand;
    std::vector<int> kept_threads;
    double dropped = 0;
    for (size_t p = 0; p < m.ps.size(); ++p) {
      if (std::find(fix.drop_ps.begin(), fix.drop_ps.end(), m.ps[p].task) != fix.drop_ps.end()) {
        dropped += demand[p];
      } else {
        kept_demand.push_back(demand[p]);
        kept_threads.push_back(threads[p]);
      }
    }
    if (!kept_demand.empty()) {
      for (double& d : kept_demand) d += dropped / double(kept_demand.size());
      demand.swap(kept_demand);
      threads.swap(kept_threads);
    }
  }
  if (fix.ps_count > 0 && !demand.empty()) {  // every PS's work spread over the new count
    double total = 0;
    for (double d : demand) total += d;
    std::vector<int> sorted = threads;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    demand.assign(size_t(fix.ps_count), total / fix.ps_count);
    threads.assign(size_t(fix.ps_count), sorted[sorted.size() / 2]);
  }
  std::vector<double> input(m.workers.size()), compute(m.workers.size()), recv(m.workers.size());
  std::vector<double> all_input, all_compute;
  for (const ReplayModel::Worker& w : m.workers) {
    all_input.push_back(w.input_ns);
    all_compute.push_back(w.compute_ns);
  }
  const double median_input = Median(all_input), median_compute = Median(all_compute);
  auto value_for = [](const std::vector<std::pair<uint32_t, double>>& v, uint32_t task) {
    for (const auto& [t, x] : v) {
      if (t == task) return x;
    }
    return 0.0;
  };
  for (size_t w = 0; w < m.workers.size(); ++w) {
    const uint32_t task = m.workers[w].task;
    const bool at_median = std::find(fix.median_workers.begin(), fix.median_workers.end(), task) !=
                           fix.median_workers.end();
    compute[w] = at_median ? median_compute : m.workers[w].compute_ns;
    compute[w] = std::max(0.0, compute[w] - value_for(fix.compute_cut, task));
    const bool prefetch = std::find(fix.prefetch_workers.begin(), fix.prefetch_workers.end(),
                                    task) != fix.prefetch_workers.end();
    input[w] = prefetch ? 0 : at_median ? median_input : m.workers[w].input_ns;
    recv[w] = m.workers[w].recv_ns * (1 - std::clamp(value_for(fix.recv_cut, task), 0.0, 1.0));
  }
  // Each PS: its threads' free times. Requests are served in arrival order: the queue hands
  // them out by arrival time.
  std::vector<std::vector<double>> free(demand.size());
  for (size_t p = 0; p < demand.size(); ++p) free[p].assign(size_t(threads[p]), 0);
  using Arrival = std::pair<double, size_t>;  // (time, worker)
  std::priority_queue<Arrival, std::vector<Arrival>, std::greater<Arrival>> q;
  std::vector<double> start(m.workers.size(), 0);
  std::vector<int> done(m.workers.size(), 0);
  std::vector<double> lengths;
  std::vector<std::vector<double>> waits(m.workers.size());
  for (size_t w = 0; w < m.workers.size(); ++w) q.push({input[w], w});
  const int warmup = std::min(5, steps / 4);
  std::vector<double> sum(m.workers.size(), 0);
  // Under sync (m.sync) the workers of a step wait for each other: the next step's requests
  // leave when the last worker of this one is done.
  std::vector<std::pair<size_t, double>> round;  // (worker, end) of the step under way
  while (!q.empty()) {
    const auto [a, w] = q.top();
    q.pop();
    double answered = a;
    for (size_t p = 0; p < demand.size(); ++p) {
      auto th = std::min_element(free[p].begin(), free[p].end());
      const double end = std::max(a, *th) + demand[p];
      *th = end;
      answered = std::max(answered, end);
    }
    const double end = answered + recv[w] + compute[w];
    if (done[w] >= warmup) waits[w].push_back(answered - a);
    if (!m.sync) {
      if (done[w] >= warmup) lengths.push_back(end - start[w]), sum[w] += end - start[w];
      start[w] = end;
      if (++done[w] < steps) q.push({end + input[w], w});
      continue;
    }
    round.emplace_back(w, end);
    if (round.size() < m.workers.size()) continue;
    double barrier = 0;
    for (const auto& r : round) barrier = std::max(barrier, r.second);
    for (const auto& [x, e] : round) {
      if (done[x] >= warmup) lengths.push_back(barrier - start[x]), sum[x] += barrier - start[x];
      start[x] = barrier;
      if (++done[x] < steps) q.push({barrier + input[x], x});
    }
    round.clear();
  }
  if (mean_step != nullptr) {
    mean_step->clear();
    for (size_t w = 0; w < sum.size(); ++w) {
      mean_step->push_back(steps > warmup ? sum[w] / double(steps - warmup) : 0);
    }
  }
  if (ps_wait != nullptr) {
    ps_wait->clear();
    for (std::vector<double>& v : waits) ps_wait->push_back(Median(std::move(v)));
  }
  return Median(lengths);
}

}  // namespace

double ReplayMedianStep(const ReplayModel& m, const Fix& fix, int steps) {
  return Simulate(m, fix, steps, nullptr);
}

double ReplayThroughputStep(const ReplayModel& m, const Fix& fix, int steps) {
  std::vector<double> mean;
  Simulate(m, fix, steps, nullptr, &mean);
  double rate = 0;
  for (double x : mean) rate += x > 0 ? 1 / x : 0;
  return rate > 0 ? double(mean.size()) / rate : 0;
}

void ComputeImpacts(const AnalysisInput& in, std::vector<Finding>* findings) {
  ReplayModel m = BuildReplayModel(in);
  const int steps = ReplaySteps(m);
  auto replay = [&](const ReplayModel& x, const Fix& f) { return ReplayMedianStep(x, f, steps); };
  double now = m.workers.empty() ? 0 : replay(m, Fix{});
  // A replay that comes out short of the measured step misses a queue: the PS serve slower than
  // their op time says. Fit one slowdown of every PS's service (bisection, 1..4x, 16 halvings) so
  // the replay of the capture as is gives the measured step, and keep it for the fixes.
  if (now > 0 && now < 0.95 * m.measured_step_ns) {
    ReplayModel hi_m = m;
    hi_m.ps_slowdown = 4;
    if (replay(hi_m, Fix{}) >= m.measured_step_ns) {
      double lo = 1, hi = 4;
      for (int i = 0; i < 16; ++i) {
        m.ps_slowdown = (lo + hi) / 2;
        (replay(m, Fix{}) < m.measured_step_ns ? lo : hi) = m.ps_slowdown;
      }
      m.ps_slowdown = hi;
      now = replay(m, Fix{});
    }
  }
  for (Finding& f : *findings) {
    Impact& im = f.impact;
    im.set = true;
    im.step_ns = m.measured_step_ns;
    im.step_ns_after_fix = m.measured_step_ns;
    im.method = "none";
    im.confidence = "low";
    Fix fix;
    std::string what;
    if (f.rule_id == "hot-ps") {
      const TaskStats* hot = in.stats.Find(f.subject);
      if (hot != nullptr && !hot->variables.empty() && in.capture.traffic.empty()) {
        fix.partition_ps = hot->task;
        fix.partition_share = hot->variables[0].share;
        what = fmt::format("{} ({:.0f}% of {}'s op time) spread over {} PS", hot->variables[0].name,
                           100 * hot->variables[0].share, hot->label, m.ps.size());
      }
    } else if (f.rule_id == "input-bound") {
      for (const FindingObject& o : f.objects) {
        const uint32_t t = in.capture.FindTask(o.subject);
        if (t != kNoIndex) fix.prefetch_workers.push_back(t);
      }
      if (f.objects.empty()) fix.prefetch_workers.push_back(in.capture.FindTask(f.subject));
      what = fmt::format("the exposed input wait of {} worker(s) overlapped by prefetch",
                         fix.prefetch_workers.size());
    } else if (f.rule_id == "dense-optimizer-on-embedding" && m.steps > 0) {
      // A sparse apply touches the rows the step gathered: its cost is taken as the gathers' of
      // the same variable on the same PS; the dense apply's time beyond that goes.
      double cut_total = 0;
      for (const FindingObject& o : f.objects) {
        const TaskStats* ps = in.stats.Find(o.task);
        if (ps == nullptr) continue;
        TimeNs dense = 0, gather = 0;
        ForEachOpOfTask(in.capture, *ps, [&](const OpRow& op) {
          const NodeRow& n = in.capture.Node(op);
          if (n.inputs_count == 0) return;
          const std::string_view var = StripRead(InputNode(FirstInput(in.capture, op)));
          if (var != o.subject) return;
          const std::string_view type = in.capture.Str(n.type);
          if (IsDenseApplyOpType(type)) dense += op.dur();
          if (IsGatherOpType(type)) gather += op.dur();
        });
        const double cut = std::max<double>(0, double(dense - gather)) / double(m.steps);
        fix.ps_demand_cut.emplace_back(ps->task, cut);
        cut_total += cut;
      }
      what = fmt::format("sparse applies at the gathers' cost: {} less PS work per worker step",
                         FormatDurationShort(cut_total));
    } else if (f.rule_id == "straggler-worker") {
      for (const FindingObject& o : f.objects) {
        const uint32_t t = in.capture.FindTask(o.subject);
        if (t != kNoIndex) fix.median_workers.push_back(t);
      }
      what = fmt::format("{} slow worker(s) at the median worker's input and compute ({})",
                         fix.median_workers.size(),
                         m.sync ? "sync: every replica's step waits for the slowest"
                                : "async: the step at the job's throughput, steps/s of all "
                                  "workers");
    }
    std::string why_none;
    if (what.empty()) {
      FixPlan plan = PlanTransferOrPsFix(in, m, f);
      fix = std::move(plan.fix);
      what = std::move(plan.what);
      why_none = std::move(plan.why);
    }
    if (what.empty()) {
      im.why = in.capture.ops.empty()
                   ? "no timeline: a manifest or live samples alone do not show the step to replay"
               : !why_none.empty() ? why_none
                                   : "the replay does not model this fix yet";
      continue;
    }
    if (m.workers.empty() || now <= 0) {
      im.why = "the capture has no worker steps to replay";
      continue;
    }
    // An asynchronous job's straggler slows only itself: what fixing it buys is the job's
    // throughput (steps/s of all workers), shown as the step at that throughput (issue 35).
    const bool throughput = f.rule_id == "straggler-worker" && !m.sync;
    const double after = throughput ? now * ReplayThroughputStep(m, fix, steps) /
                                          ReplayThroughputStep(m, Fix{}, steps)
                                    : replay(m, fix);
    im.method = "replay";
    // When the replay of the capture as is reproduces its median step, the ratio carries over
    // what the model leaves out; when it does not (queues the model misses), the replay's own
    // step after the fix is the better figure, with less confidence.
    const double fit = now / m.measured_step_ns;
    const bool fits = fit > 0.85 && fit < 1.15;
    im.step_ns_after_fix = fits ? m.measured_step_ns * after / now : after;
    im.saving_pct = 100 * (im.step_ns - im.step_ns_after_fix) / im.step_ns;
    // Evidence behind the prediction.
    std::string weak;
    const int64_t per_worker = m.steps / int64_t(m.workers.size());
    if (per_worker < 3) {
      weak = fmt::format("only {} step(s) per worker (one may be warm-up)", per_worker);
    }
    if (m.measured_step_ns < 1e6) {
      weak += (weak.empty() ? "" : "; ") + std::string("steps under 1 ms");
    }
    if (!fits) {
      weak += (weak.empty() ? "" : "; ") +
              fmt::format("the replay of the capture as is gives {}, not the measured {}",
                          FormatDurationShort(now), FormatDurationShort(m.measured_step_ns));
    }
    im.confidence = weak.empty() ? "high" : fits ? "low" : "medium";
    if (!fits && (per_worker < 3 || m.measured_step_ns < 1e6)) im.confidence = "low";
    im.why = fmt::format(
        "replayed {} worker(s) x {} PS (FIFO per PS, threads as seen{}), {}: median step {} -> {}",
        m.workers.size(), m.ps.size(),
        m.ps_slowdown > 1.001
            ? fmt::format(", PS service {:.2f}x their op time to match the measured step",
                          m.ps_slowdown)
            : "",
        what, FormatDurationShort(im.step_ns), FormatDurationShort(im.step_ns_after_fix));
    if (!weak.empty()) im.why += "; low confidence: " + weak;
    // Severity by what the fix buys and the evidence (issue 29): HIGH needs a predicted saving
    // of >= 20% of the step on >= 3 steps of >= 1 ms; MEDIUM from 5%; LOW below.
    const bool enough = per_worker >= 3 && m.measured_step_ns >= 1e6;
    // Fewer PS (idle-ps, ps-worker-ratio): what the fix buys is the PS tasks it frees, which the
    // step time does not show; the rule's severity stands, short of HIGH without the saving.
    const size_t freed = !fix.drop_ps.empty() ? fix.drop_ps.size()
                         : fix.ps_count > 0 && size_t(fix.ps_count) < m.ps.size()
                             ? m.ps.size() - size_t(fix.ps_count)
                             : 0;
    if (freed > 0) {
      im.why += fmt::format("; the fix frees {} PS task(s)", freed);
      if (f.severity == Severity::kHigh && !(im.saving_pct >= 20 && enough)) {
        f.severity = Severity::kMedium;
      }
      continue;
    }
    f.severity = im.saving_pct >= 20 && enough ? Severity::kHigh
                 : im.saving_pct >= 5          ? Severity::kMedium
                                               : Severity::kLow;
  }
}

}  // namespace tfdiag
