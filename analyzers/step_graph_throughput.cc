#include "analyzers/step_graph_throughput.h"

#include <algorithm>

#include "core/median.h"

namespace tfdiag {

double WorkerThroughput(const StepGraph& graph, uint32_t task) {
  const std::vector<StepNode>& steps = graph.steps();
  const auto [b, e] = graph.TaskSteps(task);
  if (e < b + 3) return 0;
  const TimeNs span = steps[e - 1].end - steps[b].end;
  if (span <= 0) return 0;
  std::vector<double> dur;
  for (size_t i = b; i < e; ++i) dur.push_back(double(steps[i].end - steps[i].start));
  const double median = UpperMedian(std::move(dur));
  const double rate = double(e - b - 1) * 1e9 / double(span);
  return median > 0 ? std::min(rate, 2e9 / median) : rate;
}

double CapturedThroughput(const StepGraph& graph, const std::vector<uint32_t>& workers) {
  if (workers.empty()) return 0;
  double sum = 0;
  for (uint32_t w : workers) {
    const double r = WorkerThroughput(graph, w);
    if (r <= 0) return 0;
    sum += r;
  }
  return sum;
}

}  // namespace tfdiag
