#include "collectors/attach/job_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace tfdiag {

std::vector<JobGroup> GroupByCluster(const std::vector<TfTask>& tasks,
                                     const std::function<std::string(const TfTask&)>& name_of) {
  std::map<std::pair<std::string, std::string>, size_t> index;  // (name, cluster) -> group
  std::vector<JobGroup> out;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::string name = name_of(tasks[i]);
    const std::string cluster = UnnamedJobName(tasks[i].config.cluster);
    auto [it, fresh] = index.emplace(std::make_pair(name, cluster), out.size());
    if (fresh) out.push_back({name, cluster, {}});
    out[it->second].tasks.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(), [](const JobGroup& a, const JobGroup& b) {
    return std::make_tuple(b.tasks.size(), a.name, a.cluster) <
           std::make_tuple(a.tasks.size(), b.name, b.cluster);
  });
  return out;
}

std::string DescribeOtherJob(const std::vector<TfTask>& tasks, const JobGroup& g) {
  constexpr size_t kShown = 8;
  std::string list, pids;
  for (size_t k = 0; k < g.tasks.size(); ++k) {
    const TfTask& t = tasks[g.tasks[k]];
    if (k < 64) pids += fmt::format(" --pid {}", t.pid);
    if (k >= kShown) continue;
    list += fmt::format("{}{} (pid {}{}{})", k ? ", " : "", t.label.empty() ? "no task" : t.label,
                        t.pid, t.address.empty() ? "" : ", ", t.address);
  }
  if (g.tasks.size() > kShown) list += fmt::format(" and {} more", g.tasks.size() - kShown);
  return fmt::format(
      "another TF job on this node was not recorded (a job is one cluster spec; its tasks are "
      "not mixed into this one): {}{}: {}; record it with{}",
      g.name.empty() ? "(unnamed)" : g.name,
      g.cluster.empty() || g.cluster == g.name ? "" : " (cluster " + g.cluster + ")", list, pids);
}

}  // namespace tfdiag
