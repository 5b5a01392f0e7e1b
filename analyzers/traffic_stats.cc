#include "analyzers/traffic_stats.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "analyzers/seen_seconds.h"

namespace tfdiag {

namespace {

bool IsWorkerLike(JobKind k) { return k != JobKind::kPs && k != JobKind::kOther; }

}  // namespace

// Seconds a process was measured running: from its first sample to the last one whose CPU time
// still grew (an agent keeps exporting an exited task's frozen counters for minutes, and a
// cluster capture's samples run on to the window's end); the window when unknown. A task that
// started, or was first found, mid-window has its rates over the time it was measured, not over
// the whole window (issue 36: a 40 s job found by a 30 s rescan read 7% and more too low).
double SeenSeconds(const Capture& c, uint32_t process, double window_s, TimeNs counted_until) {
  auto it = std::lower_bound(c.process_samples.begin(), c.process_samples.end(), process,
                             [](const ProcessSampleRow& r, uint32_t p) { return r.process < p; });
  if (it == c.process_samples.end() || it->process != process) return window_s;
  TimeNs first = it->ts;
  TimeNs last = first;
  for (auto prev = it++; it != c.process_samples.end() && it->process == process; prev = it++) {
    if (it->cpu_ns > prev->cpu_ns) last = it->ts;
  }
  // The process's own span where it is wider: an agent counted its bytes from first_ns (when it
  // found the task, before Prometheus's first sample of it) and it exited at last_ns.
  const ProcessRow& p = c.processes[process];
  if (p.first_ns > 0 && p.first_ns < first) first = p.first_ns;
  if (p.exited && p.last_ns > first) last = p.last_ns;
  // Counters from a sample before the exit (a store that missed the scrapes after it, on a
  // loaded machine: a hot PS's bytes read 8.7% low through VictoriaMetrics) end the span there.
  if (p.exited && counted_until > first && counted_until < last) last = counted_until;
  const double seen = (last - first) / 1e9;
  return seen > 0 && seen < window_s ? seen : window_s;
}

TrafficStats ComputeTrafficStats(const Capture& c) {
  TrafficStats out;
  if (c.traffic.empty()) return out;
  out.has_traffic = true;
  out.window_s = (c.meta.window_end - c.meta.window_start) / 1e9;
  // Totals per socket: rows are sorted by (process, peer, local, ts); the last row wins.
  std::map<std::pair<uint32_t, uint32_t>, TrafficCell> from_worker, from_ps;
  std::map<uint32_t, double> seen_s;  // worker task -> seconds its processes were measured
  std::map<uint32_t, std::map<TimeNs, int64_t>> hdfs_by_ts;  // process -> ts -> bytes
  for (size_t i = 0; i < c.traffic.size(); ++i) {
    const TrafficRow& t = c.traffic[i];
    if (t.hdfs) hdfs_by_ts[t.process][t.ts] += t.bytes_received;
    const bool last = i + 1 == c.traffic.size() || c.traffic[i + 1].process != t.process ||
                      c.traffic[i + 1].peer != t.peer || c.traffic[i + 1].local != t.local;
    if (!last || t.peer_task == kNoIndex) continue;
    const uint32_t self = c.processes[t.process].task;
    const JobKind sk = c.tasks[self].kind, pk = c.tasks[t.peer_task].kind;
    if (IsWorkerLike(sk) && pk == JobKind::kPs) {
      double& seen = seen_s[self];
      seen = std::max(seen, SeenSeconds(c, t.process, out.window_s, t.ts));
      TrafficCell& cell = from_worker[{self, t.peer_task}];
      cell.to_ps += t.bytes_sent;
      cell.from_ps += t.bytes_received;
    } else if (sk == JobKind::kPs && IsWorkerLike(pk)) {
      TrafficCell& cell = from_ps[{t.peer_task, self}];
      cell.to_ps += t.bytes_received;
      cell.from_ps += t.bytes_sent;
    }
  }
  for (auto& [key, cell] : from_ps) from_worker.emplace(key, cell);  // worker side wins
  std::map<uint32_t, PsBytes> ps;
  for (auto& [key, cell] : from_worker) {
    cell.worker = key.first;
    cell.ps = key.second;
    // Over the time the worker was measured (the window when only the PS side saw the bytes).
    const double w = seen_s.count(cell.worker) ? seen_s[cell.worker] : out.window_s;
    if (w > 0) {
      cell.to_ps_per_s = cell.to_ps / w;
      cell.from_ps_per_s = cell.from_ps / w;
    }
    out.matrix.push_back(cell);
    PsBytes& p = ps[cell.ps];
    p.task = cell.ps;
    p.received += cell.to_ps;
    p.sent += cell.from_ps;
    out.ps_total += cell.to_ps + cell.from_ps;
  }
  for (auto& [task, p] : ps) {
    p.share = out.ps_total > 0 ? double(p.received + p.sent) / double(out.ps_total) : 0;
    out.ps.push_back(p);
  }
  for (const auto& [process, series] : hdfs_by_ts) {
    HdfsInput h;
    h.process = process;
    h.task = c.processes[process].task;
    h.bytes = series.rbegin()->second;
    const double seen = SeenSeconds(c, process, out.window_s, series.rbegin()->first);
    if (seen > 0) h.bytes_per_s = h.bytes / seen;
    for (auto a = series.begin(), b = std::next(a); b != series.end(); ++a, ++b) {
      const double dt = (b->first - a->first) / 1e9;
      if (dt > 0) h.rate_series.push_back((b->second - a->second) / dt);
    }
    out.hdfs.push_back(std::move(h));
  }
  return out;
}

std::vector<SchedStats> ComputeSchedStats(const Capture& c) {
  std::vector<SchedStats> out;
  size_t i = 0;
  while (i < c.sched.size()) {
    size_t j = i;
    while (j + 1 < c.sched.size() && c.sched[j + 1].process == c.sched[i].process) ++j;
    const SchedRow& a = c.sched[i];
    const SchedRow& b = c.sched[j];
    if (j > i) {
      SchedStats s;
      s.process = a.process;
      s.window_s = (b.ts - a.ts) / 1e9;
      s.voluntary = b.voluntary - a.voluntary;
      s.involuntary = b.involuntary - a.involuntary;
      const int64_t all = s.voluntary + s.involuntary;
      s.involuntary_share = all > 0 ? double(s.involuntary) / double(all) : 0;
      s.runq_waits = b.runq_waits - a.runq_waits;
      const int64_t oncpu = b.oncpu_ns - a.oncpu_ns, wait = b.runq_wait_ns - a.runq_wait_ns;
      if (s.window_s > 0) {
        s.cpu_demand = (oncpu + wait) / 1e9 / s.window_s;
        s.oncpu_cores = oncpu / 1e9 / s.window_s;
      }
      if (oncpu >= 0 && wait >= 0 && oncpu + wait > 0) {
        s.runq_wait_share = double(wait) / double(oncpu + wait);
      }
      if (s.runq_waits > 0) {
        s.runq_mean_us = (b.runq_wait_ns - a.runq_wait_ns) / 1e3 / s.runq_waits;
        const double target = 0.99 * s.runq_waits;
        int64_t cum = 0;
        for (int k = 0; k < kRunqHistSlots; ++k) {
          cum += b.runq_hist[k] - a.runq_hist[k];
          if (cum >= target) {
            s.runq_p99_us = std::ldexp(1.0, k + 1) / 1e3;
            break;
          }
        }
      }
      out.push_back(s);
    }
    i = j + 1;
  }
  return out;
}

}  // namespace tfdiag
