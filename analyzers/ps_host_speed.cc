#include "analyzers/ps_host_speed.h"

#include <algorithm>
#include <map>
#include <string>

#include "analyzers/op_names.h"
#include "analyzers/replay_cores.h"
#include "core/median.h"

namespace tfdiag {

namespace {

// One part of a partitioned variable on one PS: its time per op and bytes per answer.
struct Part {
  uint32_t task;
  double per_op_ns, bytes_per_answer;
};

double MedianOf(std::vector<double> v) { return MedianInPlace(&v); }

}  // namespace

std::vector<std::pair<uint32_t, double>> PartSlowdowns(const AnalysisInput& in,
                                                       const std::map<uint32_t, double>& work_share,
                                                       const std::map<uint32_t, int>& own_cores) {
  const Capture& c = in.capture;
  // Bytes per answer of each variable part: its tensors sent to other tasks (the part's name,
  // then "/": "<base>/part_<k>/Gather", "<base>/part_<k>/read").
  std::map<std::string, std::pair<double, double>, std::less<>> sent;  // part: bytes, answers
  for (const EdgeRow& e : c.edges) {
    if (e.bytes <= 0 || e.count <= 0) continue;
    const std::string_view tensor = InputNode(c.Str(e.tensor));  // without an output slot
    int k = -1;
    const size_t slash = tensor.find("/part_");
    if (slash == std::string_view::npos) continue;
    const size_t end = tensor.find('/', slash + 1);
    const std::string_view var = tensor.substr(0, end);
    if (PartitionBase(var, &k) == var || k < 0) continue;
    auto& [bytes, answers] = sent[std::string(var)];
    bytes += double(e.bytes), answers += double(e.count);
  }
  const bool pair = in.stats.num_ps == 2;
  std::map<std::string_view, std::vector<Part>> bases;
  std::map<uint32_t, std::pair<int, double>> shared;  // a pair's PS: fitted cores, ops at once
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs) continue;
    // The ops' time less the slowdown of ops sharing too few cores, where the fit shows the
    // cores (analyzers/replay_cores.h), as slow-ps-host takes it: a loaded PS is not a slow host.
    const auto known = work_share.find(t.task);
    const auto cores = own_cores.find(t.task);
    double scale = known != work_share.end() ? known->second : 1.0;
    int fitted = cores != own_cores.end() ? cores->second : 0;
    if (known == work_share.end() || (pair && cores == own_cores.end())) {
      const PsOpLoad fit = FitPsCores(c, t);
      if (known == work_share.end() && fit.op_ns > 0) scale = fit.work_ns / fit.op_ns;
      fitted = fit.cores;
    }
    if (pair && t.busy_ns > 0) {
      shared[t.task] = {fitted, double(t.op_time_ns) / double(t.busy_ns)};
    }
    for (const VariableLoad& v : t.variables) {
      int k = -1;
      const std::string_view base = PartitionBase(v.name, &k);
      const auto it = sent.find(v.name);
      if (k < 0 || v.ops <= 0 || v.total_ns <= 0 || it == sent.end()) continue;
      bases[base].push_back({t.task, double(v.total_ns) * scale / double(v.ops),
                             it->second.first / it->second.second});
    }
  }
  // Parts on at least 3 PS: the median over the other parts outvotes one slow part. A job of 2
  // PS has only the pair, and their ratio is its figure (kMinPartsPs).
  const long min_parts = in.stats.num_ps == 2 ? 2 : kMinPartsPs;
  std::map<uint32_t, std::vector<double>> per_ps;
  for (const auto& [base, parts] : bases) {
    std::vector<uint32_t> tasks;
    for (const Part& p : parts) tasks.push_back(p.task);
    std::sort(tasks.begin(), tasks.end());
    if (std::unique(tasks.begin(), tasks.end()) - tasks.begin() < min_parts) continue;
    for (const Part& p : parts) {
      std::vector<double> bounds;
      for (const Part& q : parts) {
        if (q.task == p.task) continue;
        bounds.push_back(p.per_op_ns / q.per_op_ns /
                         std::max(1.0, p.bytes_per_answer / q.bytes_per_answer));
      }
      per_ps[p.task].push_back(MedianOf(std::move(bounds)));
    }
  }
  // A pair has no third PS to outvote what the fit leaves of a slowdown of ops sharing too few
  // cores: no figure for a PS of fitted cores where either PS runs more ops at once than them
  // (indep report26 34010, spent: 2 PS of 8 threads on 1 core, hosts of one speed, one part
  // 1.64x the other's).
  double most_at_once = 0;
  for (const auto& [task, fit] : shared) most_at_once = std::max(most_at_once, fit.second);
  std::vector<std::pair<uint32_t, double>> out;
  for (auto& [task, figures] : per_ps) {
    const auto it = shared.find(task);
    if (it != shared.end() && it->second.first > 0 && most_at_once > it->second.first) continue;
    out.emplace_back(task, MedianOf(std::move(figures)));
  }
  return out;
}

}  // namespace tfdiag
