// Series Prometheus holds twice for one identity: the same container scraped by two jobs (a
// "kubelet" and a "cadvisor" job over one kubelet), or one task's agent series from two targets
// on one node (the agent scraped by two jobs, or two agents on the node). The job's queries take
// such series once (max by the identity); this says which ones, as a note of the analysis.
#include <fmt/format.h>

#include <map>
#include <set>

#include "collectors/prometheus/job_steps.h"

namespace tfdiag::prom {

namespace {

constexpr size_t kMaxDuplicateNotes = 5;  // then "N more"

}  // namespace

Status NoteDuplicateSeries(const QueryContext& q, bool agents, std::vector<std::string>* notes) {
  const std::string promql =
      agents ? "count by (pod, replica_type, replica_index, node, job, instance) "
               "(max_over_time(tfdiag_task_up{" +
                   q.agent_sel + "}[" + q.W + "]))"
             : "count by (pod, container, job) (last_over_time(container_cpu_usage_seconds_total{" +
                   q.pods_sel + ",container!=\"\",container!=\"POD\"}[" + q.W + "]))";
  StatusOr<std::vector<PromSeries>> r = q.client->Query(promql, q.o->end_s);
  if (!r.ok()) return r.status();
  // identity -> the scrape targets (job, or job/instance for agents) it came from
  std::map<std::string, std::set<std::string>> targets;
  for (const PromSeries& s : *r) {
    const std::string who =
        agents
            ? fmt::format("{} on node {}",
                          s.Label("pod").empty() ? "task " + AgentKey(s) : "pod " + s.Label("pod"),
                          s.Label("node"))
            : fmt::format("pod {} container {}", s.Label("pod"), s.Label("container"));
    targets[who].insert(agents ? s.Label("job") + "/" + s.Label("instance") : s.Label("job"));
  }
  size_t noted = 0, more = 0;
  for (const auto& [who, from] : targets) {
    if (from.size() < 2) continue;
    if (noted++ >= kMaxDuplicateNotes) {
      ++more;
      continue;
    }
    std::string list;
    for (const std::string& t : from) list += (list.empty() ? "" : ", ") + t;
    notes->push_back(fmt::format("{}: {} series from {} scrape {} ({}), the same {} counted once",
                                 who, agents ? "tfdiag agent" : "cAdvisor", from.size(),
                                 agents ? "targets" : "jobs", list, agents ? "task" : "container"));
  }
  if (more > 0) {
    notes->push_back(fmt::format("{} more {} with duplicate {} series, each counted once", more,
                                 agents ? "tasks" : "containers", agents ? "agent" : "cAdvisor"));
  }
  return OkStatus();
}

}  // namespace tfdiag::prom
