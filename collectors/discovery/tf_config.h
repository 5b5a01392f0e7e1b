// TensorFlow cluster configuration of a task, from the TF_CONFIG environment variable (TF2 and
// Estimator: tensorflow/python/distribute/cluster_resolver/tfconfig_cluster_resolver.py) or from
// the TF1 flags of hand-written PS/worker scripts (--job_name, --task_index, --ps_hosts, ...).
//
//   TF_CONFIG = {"cluster": {"ps": ["h:2222", ...], "worker": [...], "chief": [...]},
//                "task": {"type": "ps", "index": 0}}
// A job may also be a sparse {"<index>": "host:port"} object (tf.train.ClusterSpec accepts it).
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// job name -> task addresses ("host:port") by task index. Gaps of a sparse job are "".
struct ClusterSpec {
  std::map<std::string, std::vector<std::string>> jobs;
  bool empty() const { return jobs.empty(); }
  // Number of tasks of `job` (0 when absent).
  int NumTasks(std::string_view job) const;
  // Address of task `index` of `job`, "" when unknown.
  std::string Address(std::string_view job, int index) const;
  bool operator==(const ClusterSpec& o) const { return jobs == o.jobs; }
};

// A task's configuration: which cluster it belongs to and which task it is.
struct TfTaskConfig {
  ClusterSpec cluster;
  std::string job;     // "ps", "worker", "chief", "evaluator", ...; "" when not given
  int index = -1;      // task index; -1 when not given
  std::string source;  // "TF_CONFIG" or "flags"
};

// Parses TF_CONFIG JSON (RapidJSON). "cluster" and "task" are both optional; other keys
// ("environment", "rpc_layer") are ignored. Errors: kInvalidInput naming the field, e.g.
// "TF_CONFIG: task.index: expected an integer", "TF_CONFIG: cluster.ps[1]: expected a
// 'host:port' string", "TF_CONFIG: byte 17: <JSON error>"; an index outside its job's task list
// is an error ("evaluator" may be absent from the cluster).
StatusOr<TfTaskConfig> ParseTfConfig(std::string_view json);

// True when argv carries --job_name or --task_index (either "--flag=value" or "--flag value",
// one or two dashes).
bool HasTfFlags(const std::vector<std::string>& argv);

// Parses TF1 flags from argv (argv[0] and unrelated arguments are skipped): --job_name,
// --task_index and every --<job>_hosts=a:2222,b:2222 (ps, worker, chief, master, ...).
// Errors: kInvalidInput naming the flag ("--task_index: expected an integer, got 'x'",
// "--job_name: missing value"); kNotFound when neither --job_name nor --task_index is present.
StatusOr<TfTaskConfig> ParseTfFlags(const std::vector<std::string>& argv);

}  // namespace tfdiag
