// A job is its cluster (issue 46): the TF tasks found on a node grouped by the cluster they
// belong to, so that a process of another TF cluster (its own TF_CONFIG, other addresses) is
// another job, listed apart and never merged into a recording. The agent labels each task with
// its job (tf_job) by the same names; `attach` records one job and names the others.
// Also the job's name of a task, its pod's namespace, and why a recording found none.
// Thread-safety: pure functions (NamespaceOf reads a file).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collectors/discovery/discovery.h"

namespace tfdiag {

struct JobGroup {
  std::string name;           // the job's name (name_of its first task), "ip-3f2a9c1e", "mnist"
  std::string cluster;        // the cluster's identity: UnnamedJobName of its spec ("" none)
  std::vector<size_t> tasks;  // indexes into the tasks given, in their order
};

// Groups `tasks` by (name_of(task), the identity of its cluster spec: the hash of its PS
// addresses, else of every address, discovery.h UnnamedJobName). Two tasks of one TFJob share
// both; a process of another cluster differs in its addresses even when it claims the same name
// (TFDIAG_JOB, --tf-job). Groups are ordered by task count (most first), then name, then cluster.
std::vector<JobGroup> GroupByCluster(const std::vector<TfTask>& tasks,
                                     const std::function<std::string(const TfTask&)>& name_of);

// One line naming a job a recording left out: "another TF job on this node was not recorded:
// ip-1a2b3c4d (cluster ip-1a2b3c4d): ps:0 (pid 42, 127.0.0.1:2222), worker:0 (pid 43, ...);
// record it with --pid 42 --pid 43" (at most 8 tasks named, then a count). Values come from
// workloads: the caller prints them escaped.
std::string DescribeOtherJob(const std::vector<TfTask>& tasks, const JobGroup& g);

// The job's name of task `t`: the process's own (TFDIAG_JOB, --tf_job), else `tf_job_flag`
// (attach --tf-job), else the TFJob of its pod name or, outside a pod (no hostname of its own),
// of its own address in Kubeflow's TF_CONFIG ("myjob-ps-0.ns.svc:2222" -> "myjob"), else its PS
// addresses' hash (UnnamedJobName: "ip-3f2a9c1e").
std::string JobNameOf(const TfTask& t, const std::string& tf_job_flag);

// A recording's job: keeps in *tasks the first group of GroupByCluster (the most tasks) and
// returns one DescribeOtherJob line per other group (empty when there is one job).
std::vector<std::string> KeepFirstJob(std::vector<TfTask>* tasks, const std::string& tf_job_flag);

// The pod's namespace, from the service account mount Kubernetes puts in every container that
// has one (automountServiceAccountToken, the default); "" when absent, `pid` <= 0, or not a
// DNS-1123 label (*note then says why). Read inside the process's root under `root`
// (ReadNameInRoot): the file is a symlink to "..data/namespace" in a real pod (the kubelet's
// AtomicWriter, pkg/volume/util/atomic_writer.go), so symlinks are followed, but only within it.
std::string NamespaceOf(const std::string& root, pid_t pid, std::string* note);

// Why a recording found no task: how many processes were looked at, which filters (`asked`:
// --job, --pod) left which tasks out, whose environment could not be read, and the first three
// warnings (malformed TF_CONFIGs), joined by "; ".
std::string NoTaskFound(const DiscoveryResult& found, const DiscoveryOptions& asked);

}  // namespace tfdiag
