// Which TF task a profiled host is. A TF2 profile run holds one file per host, named by the
// host: `<host>.xplane.pb` (tf.profiler.experimental.start on that host: its hostname) or
// `<host>_<port>.xplane.pb` (tf.profiler.experimental.client.trace of several addresses: the
// address with ':' written '_'). The file says nothing about jobs, so a host is mapped
//   1. by the cluster spec (`--tf-config FILE|JSON`): the task whose address is host:port, or
//      whose host part is the host when only one task runs there;
//   2. by a pod list given beside the profile (`kubectl get pods -o json`, core/k8s_deployment.h):
//      the pod whose name, spec.hostname or status.podIP is the host (a DNS name's first label:
//      "<pod>.<service>.<ns>.svc"), read as the role and index of its replica-type and
//      replica-index labels (or "<job>-<type>-<i>" name);
//   3. by a job manifest given beside it, by the names its operator gives the pods:
//      TFJob "<job>-<replica type, lower case>-<i>" (kubeflow/training-operator GenGeneralName),
//      Volcano Job "<job>-<task>-<i>" (volcano's job helpers MakePodName), DLRover ElasticJob
//      "<job>-edljob-<type>-<i>", StatefulSet "<name>-<ordinal>"; i below the replica count;
//   4. by a Kubeflow TFJob pod name in the host alone ("<job>-ps-1", "<job>-worker-0", ...);
//   5. else to "localhost:<n>", n counting the distinct unmapped hosts of the load (one host's
//      files of several profiling sessions are one task: its sessions are separate captures).
// Each mapping says which rule made it (HostTask::source), for the notes a user sees.
// Thread-safety: HostMapper is not thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "collectors/discovery/tf_config.h"
#include "core/k8s_deployment.h"

namespace tfdiag {

// The largest task index read from a host or pod name (a TF cluster of a million tasks is
// already far past any real one); larger indexes are no task.
constexpr int kMaxHostTaskIndex = 999'999;

struct HostTask {
  std::string job = "localhost";
  int index = 0;
  // Which rule mapped it: "TF_CONFIG address h:p", "TF_CONFIG host h", "pod list <where>: pod
  // <name> (pod IP)", "manifest <where>: TFJob <name> replica type Worker", "pod name", "none".
  std::string source;
  // kInvalidInput when the host names a task whose index is out of range ("worker-99999999999");
  // the rest of the mapping is then meaningless.
  Status error;
};

// The host part of a profile file's name: "10.0.0.5_2222" from
// ".../plugins/profile/run/10.0.0.5_2222.xplane.pb" (the suffixes of log_dir.h
// ParseHostFileName: .xplane.pb, .trace and the trace viewer's .trace.json.gz / .trace.json);
// "" for other names.
std::string HostOfProfileFile(std::string_view path);

// The cluster of `--tf-config FILE|JSON`: JSON text when it starts with '{', else a file holding
// TF_CONFIG JSON. Errors: kIo (file), kInvalidInput naming the field (ParseTfConfig) or "no
// cluster in it".
StatusOr<ClusterSpec> ClusterFromTfConfigArg(const std::string& arg);

class HostMapper;

// Maps the host of profile file `path` with `mapper` and, when `notes` is set, says how in one
// line ("<path>: host 'h' read as worker:0 (pod name)"), or, when the mapper collects
// (HostMapper::CollectNotes), leaves the saying to HostMapper::HostNotes. Shared by the XSpace
// and the TF2 trace-viewer JSON readers.
HostTask MapProfileHost(const std::string& path, HostMapper* mapper,
                        std::vector<std::string>* notes);

class HostMapper {
 public:
  // `k8s`: manifests and pod lists given beside the profiles (nullptr: none); must outlive the
  // mapper.
  explicit HostMapper(ClusterSpec cluster = {}, const K8sDeployment* k8s = nullptr)
      : cluster_(std::move(cluster)), k8s_(k8s) {}
  // The task of `host` (HostOfProfileFile, possibly ""), by the rules above; HostTask::error set
  // for a Kubeflow pod name whose index is past kMaxHostTaskIndex.
  HostTask Map(std::string_view host);

  // When on, MapProfileHost records each mapped host file instead of a note per file (a log
  // directory of 20 hosts said 20 lines); HostNotes() then says it, one note per log directory.
  void CollectNotes(bool on) { collect_ = on; }
  bool collecting() const { return collect_; }
  void Record(const std::string& path, const std::string& host, const HostTask& task);
  // One note per log directory (the directory above `plugins/profile/<run>/`, else the file's
  // directory), in the order first met: a directory with one host gives the one-file note of
  // MapProfileHost; with several, "<dir>: N hosts read as tasks: h1 -> ps:0, h2 -> worker:0, ...
  // (by <rule>: n; ...)", each host once however many runs hold it, the first 12 listed.
  std::vector<std::string> HostNotes() const;

 private:
  struct Mapped {
    std::string path, host;
    HostTask task;
  };
  bool collect_ = false;
  std::vector<Mapped> mapped_;
  // Rules 2 and 3; false when no pod or replica type matches.
  bool MapByK8s(const std::string& host, HostTask* t) const;

  ClusterSpec cluster_;
  const K8sDeployment* k8s_ = nullptr;
  std::unordered_map<std::string, int> unmapped_;  // host -> its localhost index
};

}  // namespace tfdiag
