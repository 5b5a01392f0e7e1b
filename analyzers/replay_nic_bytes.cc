#include "analyzers/replay_nic_bytes.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "analyzers/analysis_input.h"
#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "analyzers/task_stats.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// An op whose output a worker receives only as a control input (train_op's): applies and the
// accumulators' gradient ops (their outputs are the variable's ref or nothing).
bool IsControlOnlyOpType(std::string_view type) {
  return IsDenseApplyOpType(type) || IsSparseApplyOpType(type) || type.rfind("Scatter", 0) == 0 ||
         type.rfind("ResourceScatter", 0) == 0 || type == "AssignAdd" || type == "AssignSub" ||
         type == "AssignAddVariableOp" || type == "AssignSubVariableOp" ||
         type == "AccumulatorApplyGradient" || type == "SparseAccumulatorApplyGradient";
}

}  // namespace

NicDemand PsNicBytesBesideControl(const AnalysisInput& in, const ReplayModel& m) {
  NicDemand d = PsNicBytes(in, m);
  if (d.known || m.steps <= 0) return d;
  const Capture& c = in.capture;
  StringTest control(c, IsControlOnlyOpType);
  NicDemand r;
  r.known = true;
  for (const ReplayModel::Ps& p : m.ps) {
    const TaskStats* t = in.stats.Find(c.TaskLabelOf(p.task));
    // The PS's nodes whose outputs are control only, by name.
    std::unordered_map<StrId, bool> control_node;
    if (t != nullptr) {
      ForEachOpOfTask(c, *t, [&](const OpRow& op) {
        if (control(c.OpType(op))) control_node[c.OpName(op)] = true;
      });
    }
    bool sized = true, any = false;
    double out = 0, inb = 0;
    bool in_sized = true, any_in = false;
    for (const EdgeRow& e : c.edges) {
      if (e.src_task == p.task) {
        any = true;
        if (e.bytes >= 0) {
          out += double(e.bytes);
        } else if (control_node.count(e.tensor) == 0) {
          sized = false;
        }
      }
      if (e.dst_task == p.task) {
        any_in = true;
        if (e.bytes >= 0) {
          inb += double(e.bytes);
        } else {
          in_sized = false;
        }
      }
    }
    const bool busy = p.pull_ns + p.push_ns > 0;
    double o = any && sized ? out / double(m.steps) : -1;
    double i = any_in && in_sized ? inb / double(m.steps) : -1;
    // As PsNicBytes: a worker pushes a gradient of each variable it pulled, of its shape.
    if (o < 0 && i >= 0) o = i, r.mirrored = true;
    if (i < 0 && o >= 0) i = o, r.mirrored = true;
    if (busy && o < 0) return d;
    r.out.push_back(std::max(0.0, o));
    r.in.push_back(std::max(0.0, i));
  }
  return r;
}

NicRateEstimate ReceiveLinkRate(const AnalysisInput& in, const ReplayModel& m, const NicDemand& d) {
  NicRateEstimate r;
  if (!d.known || m.steps <= 0) return r;
  const Capture& c = in.capture;
  StringTest is_recv(c, IsRecvOpType);
  std::vector<std::vector<std::pair<TimeNs, TimeNs>>> recv(m.ps.size());
  TimeNs latency = -1;  // the shortest receive op of any PS
  for (size_t p = 0; p < m.ps.size(); ++p) {
    const TaskStats* t = in.stats.Find(c.TaskLabelOf(m.ps[p].task));
    if (t == nullptr) continue;
    ForEachOpOfTask(c, *t, [&](const OpRow& op) {
      if (!is_recv(c.OpType(op))) return;
      recv[p].emplace_back(op.start, op.end());
      if (latency < 0 || op.dur() < latency) latency = op.dur();
    });
  }
  if (latency < 0) return r;
  double best_busy = 0;
  std::vector<double> rates;  // every PS's bytes over its busy time
  for (size_t p = 0; p < m.ps.size() && p < d.in.size(); ++p) {
    auto& iv = recv[p];
    if (iv.size() < 2 || d.in[p] <= 0) continue;
    TimeNs first = iv[0].first, last = iv[0].second;
    for (auto& [a, b] : iv) {
      first = std::min(first, a), last = std::max(last, b);
      a = std::min(b, a + latency);
    }
    const TimeNs busy = UnionLength(&iv);
    if (busy <= 0 || last <= first) continue;
    const double rate = d.in[p] * double(m.steps) / (double(busy) * 1e-9);
    const double share = double(busy) / double(last - first);
    if (share >= kMinRecvLinkCheckBusy) rates.push_back(rate);
    if (share < kMinRecvLinkBusy || share <= best_busy) continue;
    best_busy = share;
    r.bytes_per_s = rate;
  }
  // The check: where the PS links bound the receives, every PS's receives read the same rate,
  // the less loaded ones' too (their receives are the bytes' time on a less busy link), so the
  // median of the PS busy at least kMinRecvLinkCheckBusy (two at least) must read it. Where the
  // median PS reads another, something else (the workers' own NICs sending to every PS at once,
  // gen2 report5 1227: the busiest PS 13.8 Gb/s, the median 5.2) stretches them: no estimate.
  if (r.bytes_per_s > 0 && (rates.size() < 2 || std::abs(MedianInPlace(&rates) / r.bytes_per_s -
                                                         1) > kMaxRecvLinkRateSpread)) {
    r.bytes_per_s = 0;
  }
  r.limited_by_ps = r.bytes_per_s > 0;
  return r;
}

}  // namespace tfdiag
