#include "collectors/attach/job_groups.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "core/plural.h"
#include "core/tf_roles.h"

namespace tfdiag {
namespace {

// The TFJob's name from a pod name "<job>-<type>-<index>" (Kubeflow's naming, ParseTfPodName)
// of the task's own type and index, else "".
std::string TfJobOf(const std::string& pod, const std::string& type, int index) {
  const std::optional<TfPodName> p = ParseTfPodName(pod);
  if (!p.has_value() || type.empty() || p->type != type || p->index != index) return "";
  return p->job;
}

}  // namespace

std::string NamespaceOf(const std::string& root, pid_t pid, std::string* note) {
  if (pid <= 0) return "";
  return ReadNameInRoot(pid, "var/run/secrets/kubernetes.io/serviceaccount/namespace",
                        /*follow_last=*/true, root, IsDns1123Label, "namespace", note);
}

std::string JobNameOf(const TfTask& t, const std::string& tf_job_flag) {
  const std::string& a = t.address;
  std::string name = !t.job_name.empty() ? t.job_name : tf_job_flag;
  if (name.empty()) {
    name =
        TfJobOf(t.pod_name.empty() ? a.substr(0, std::min(a.find('.'), a.find(':'))) : t.pod_name,
                t.job, t.index);
  }
  return name.empty() ? UnnamedJobName(t.config.cluster) : name;
}

std::vector<std::string> KeepFirstJob(std::vector<TfTask>* tasks, const std::string& tf_job_flag) {
  std::vector<std::string> others;
  const std::vector<JobGroup> groups =
      GroupByCluster(*tasks, [&](const TfTask& t) { return JobNameOf(t, tf_job_flag); });
  if (groups.size() <= 1) return others;
  std::vector<TfTask> mine;
  for (size_t i : groups[0].tasks) mine.push_back(std::move((*tasks)[i]));
  for (size_t g = 1; g < groups.size(); ++g) others.push_back(DescribeOtherJob(*tasks, groups[g]));
  *tasks = std::move(mine);
  return others;
}

std::string NoTaskFound(const DiscoveryResult& found, const DiscoveryOptions& asked) {
  std::string why = fmt::format(
      "no TF task found among {} (a TF task has TF_CONFIG in "
      "its environment or --job_name/--task_index flags)",
      Count(found.scanned, "process"));
  if (!found.filtered_out.empty()) {
    std::string filters;
    if (!asked.job_prefix.empty()) filters = "--job " + asked.job_prefix;
    for (const std::string& p : asked.pod_names) {
      filters += (filters.empty() ? "--pod " : ", --pod ") + p;
    }
    why = fmt::format("{} matched none of the TF tasks found among {}: {}", filters,
                      Count(found.scanned, "process"), DescribeFilteredOut(found));
  }
  if (found.unreadable > 0) why += "; " + EnvironUnreadableHint(found.unreadable);
  // Why processes with a TF_CONFIG were not tasks ("pid 42: TF_CONFIG: byte 64: nesting ...").
  for (size_t i = 0; i < found.warnings.size() && i < 3; ++i) why += "; " + found.warnings[i];
  return why;
}

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
