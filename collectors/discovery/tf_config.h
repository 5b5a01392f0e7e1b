// TensorFlow cluster configuration of a task, from the TF_CONFIG environment variable (TF2 and
// Estimator: tensorflow/python/distribute/cluster_resolver/tfconfig_cluster_resolver.py) or from
// the TF1 flags of hand-written PS/worker scripts (--job_name, --task_index, --ps_hosts, ...).
//
//   TF_CONFIG = {"cluster": {"ps": ["h:2222", ...], "worker": [...], "chief": [...]},
//                "task": {"type": "ps", "index": 0}}
// A job may also be a sparse {"<index>": "host:port"} object (tf.train.ClusterSpec accepts it).
// Thread-safety: pure functions.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// Tasks a TF_CONFIG (or the flags) may list, over all jobs; more are dropped with a warning
// naming the pid (a 340-byte sparse TF_CONFIG must not cost the agent a gigabyte).
constexpr int kMaxClusterTasks = 100000;

// One task of a job: its index and "host:port".
struct TaskAddress {
  int index = 0;
  std::string address;
  bool operator==(const TaskAddress& o) const { return index == o.index && address == o.address; }
};

// A job's tasks sorted by index, without gaps stored: a list ["a:1", "b:1"] is tasks 0 and 1;
// a sparse object {"0": "a:1", "1000000": "c:1"} (tf.train.ClusterSpec's dict form) keeps its
// two tasks, 2 x 40 bytes, not a million empty slots. Iterates as TaskAddress in index order.
class JobTasks {
 public:
  JobTasks() = default;
  // Tasks 0..n-1 in list order.
  JobTasks(std::initializer_list<std::string> dense);
  // Sorts by index; of several entries with one index the last wins (a JSON object's
  // duplicate key, as Python's json does).
  static JobTasks FromUnsorted(std::vector<TaskAddress> tasks);
  // Appends task size() (a list's next task).
  void Append(std::string address);
  // Address of task `index`, nullptr when the job has no such task. O(log n).
  const std::string* Find(int index) const;
  size_t size() const { return tasks_.size(); }
  bool empty() const { return tasks_.empty(); }
  std::vector<TaskAddress>::const_iterator begin() const { return tasks_.begin(); }
  std::vector<TaskAddress>::const_iterator end() const { return tasks_.end(); }
  bool operator==(const JobTasks& o) const { return tasks_ == o.tasks_; }

 private:
  std::vector<TaskAddress> tasks_;
};

// job name -> its tasks.
struct ClusterSpec {
  std::map<std::string, JobTasks> jobs;
  bool empty() const { return jobs.empty(); }
  // Number of tasks `job` lists (TF's ClusterSpec.num_tasks; 0 when absent).
  int NumTasks(std::string_view job) const;
  // Address of task `index` of `job`, "" when unknown.
  std::string Address(std::string_view job, int index) const;
  bool operator==(const ClusterSpec& o) const { return jobs == o.jobs; }
};

// A task's configuration: which cluster it belongs to and which task it is.
struct TfTaskConfig {
  ClusterSpec cluster;
  std::string job;        // "ps", "worker", "chief", "evaluator", ...; "" when not given
  int index = -1;         // task index; -1 when not given
  std::string source;     // "TF_CONFIG" or "flags"
  int tasks_dropped = 0;  // cluster tasks past kMaxClusterTasks, not kept
};

// Parses TF_CONFIG JSON (RapidJSON). "cluster" and "task" are both optional; other keys
// ("environment", "rpc_layer") are ignored. A name repeated in an object ("task" twice, a job
// twice, "index" twice) counts by its last occurrence, as TensorFlow's json.loads reads it. Errors:
// kInvalidInput naming the field, e.g. "TF_CONFIG: task.index: expected an integer", "TF_CONFIG:
// cluster.ps[1]: expected a 'host:port' string", "TF_CONFIG: byte 17: <JSON error>"; a task index
// its job does not list is an error ("evaluator" may be absent from the cluster), as TF's
// ClusterSpec.task_address. At most kMaxClusterTasks tasks are kept (in document order);
// tasks_dropped counts the rest.
StatusOr<TfTaskConfig> ParseTfConfig(std::string_view json);

// True when argv carries --job_name or --task_index (either "--flag=value" or "--flag value",
// one or two dashes).
bool HasTfFlags(const std::vector<std::string>& argv);

// Parses TF1 flags from argv (argv[0] and unrelated arguments are skipped): --job_name,
// --task_index and every --<job>_hosts=a:2222,b:2222 (ps, worker, chief, master, ...).
// Errors: kInvalidInput naming the flag ("--task_index: expected an integer, got 'x'",
// "--job_name: missing value"); kNotFound when neither --job_name nor --task_index is present.
StatusOr<TfTaskConfig> ParseTfFlags(const std::vector<std::string>& argv);

// The value of flag `name` ("tf_job") in argv (argv[0] skipped), as --name=value or --name value
// (one or two dashes); "" when absent or without a value.
std::string FlagValue(const std::vector<std::string>& argv, std::string_view name);

}  // namespace tfdiag
