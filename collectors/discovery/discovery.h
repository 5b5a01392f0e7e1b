// Discovery of the TensorFlow tasks running on this node, for `tfdiag attach`.
//
// A process is a TF task when its environment has TF_CONFIG (read with ReadEnvVar: no other
// variable is ever read) or its argv has --job_name/--task_index. Each task gets its job and
// index, its TaskLabel ("ps:1"), the cluster spec, its cgroups and, when the cgroup path is a
// kubepods one, the pod UID, container id and QoS class; the pod name comes from the task's
// etc/hostname (the kubelet writes the pod name there) when the process runs in another root
// file system than ours, resolved inside that root (ReadFileInRoot: no symlink leaves it, no
// FIFO or device is opened, 256 bytes at most) and kept only when it is a DNS-1123 name. Threads
// are not tasks: only thread-group leaders count, and a TID given as a pid is mapped to its
// process. Thread-safety: DiscoverTfTasks has no shared state; safe from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/discovery/tf_config.h"
#include "collectors/procfs/cgroup_reader.h"
#include "collectors/procfs/kubepods.h"
#include "core/status.h"

namespace tfdiag {

struct TfTask {
  pid_t pid = 0;
  std::string comm;  // /proc/PID/stat comm ("python3")
  std::string job;   // "ps", "worker", ...; "" when the config names none
  int index = -1;
  std::string label;    // TaskLabel(job, 0, index): "ps:1"; "" without a job
  TfTaskConfig config;  // cluster spec and source ("TF_CONFIG" or "flags")
  std::string address;  // own "host:port" from the cluster spec, "" when unknown
  int num_threads = 0;
  std::vector<CgroupEntry> cgroups;  // /proc/PID/cgroup
  std::string cgroup_path;           // cpu controller's path (v1) or the v2 path
  KubeIdentity kube;                 // from cgroup_path
  std::string pod_name;              // /proc/PID/root/etc/hostname in a container; "" otherwise
  std::string identity_note;         // why pod_name is "" although the file exists; "" else
  // Whose root the pod name and namespace files are read from (IdentitySource): pid, or an
  // ancestor of its cgroup when the task made its own mount namespace; -1 none (not read).
  pid_t identity_pid = 0;
  std::vector<pid_t> other_pids;  // other processes claiming the same task (launcher shells)
  // The job's name as the process gives it: its TFDIAG_JOB environment variable (read with
  // ReadEnvVar, only that variable), else its --tf_job flag; "" none (or not an IsJobName, then
  // job_name_note says why without quoting it).
  std::string job_name;
  std::string job_name_note;
};

// What a process's environment said, kept per process by EnvironCache.
struct EnvironEntry {
  int64_t start_ticks = 0;  // /proc/PID/stat starttime: a new process under a reused pid differs
  uint64_t exec_hash = 0;   // of comm and argv: an exec (same pid and start time) changes them
  std::optional<std::string> tf_config;  // TF_CONFIG (at most kEnvValueMaxBytes); nullopt unset
  bool unreadable = false;               // environ not readable (no ptrace rights)
  bool job_read = false;                 // tfdiag_job holds TFDIAG_JOB as read
  std::optional<std::string> tfdiag_job;
  // Why its TF_CONFIG or flags are no task ("pid 42: TF_CONFIG: ..."), once parsed: the value is
  // then not kept (a malformed 128 KiB TF_CONFIG costs neither memory nor a scan's budget again).
  std::string config_error;
};

// Environment results of the processes seen by earlier scans, for an agent that rescans the
// node: a process's environment is fixed at exec (execve(2); /proc/PID/environ shows the
// initial one, proc(5)), so TF_CONFIG and TFDIAG_JOB are read once per process (pid, start
// time, comm and argv) instead of at every rescan (a 1 MB environment read every second cost
// 30% of a core). A process that rewrites its environment in its own memory after exec is not
// seen again (TensorFlow reads TF_CONFIG at start). Entries of processes a full scan no longer
// lists are dropped, so the cache holds at most one entry per live process, each at most
// TF_CONFIG's and TFDIAG_JOB's values. Not thread-safe: one scan at a time.
class EnvironCache {
 public:
  // The entry of `pid` when its key matches, else nullptr.
  EnvironEntry* Find(pid_t pid, int64_t start_ticks, uint64_t exec_hash);
  EnvironEntry& Put(pid_t pid, EnvironEntry e);
  void Erase(pid_t pid) { entries_.erase(pid); }
  // Keeps only the entries of `pids` (a full scan's list).
  void Retain(const std::vector<pid_t>& pids);
  size_t size() const { return entries_.size(); }

 private:
  std::map<pid_t, EnvironEntry> entries_;
};

struct DiscoveryOptions {
  std::string root = "/";              // prefix for /proc (tests lay out a fake tree)
  std::vector<pid_t> pids;             // only these; empty: every process under <root>/proc
  std::vector<std::string> pod_names;  // keep tasks whose pod name is one of these
  std::string job_prefix;              // TFJob name: keep pods "<job>-<type>-<i>"
  // Set (e.g. by SIGTERM) to end a scan between two processes: the result then holds what was
  // scanned so far and `stopped` is true.
  const std::atomic<bool>* stop = nullptr;
  EnvironCache* cache = nullptr;  // environments of earlier scans (agent rescans); may be null
  // Bytes of TF_CONFIG values one scan parses at most (cached ones included), 0 = no limit: past
  // it a process is left for a later scan (counted in environ_dropped) and its value is not
  // kept, so an agent's memory and scan time stay bounded whatever the environments hold.
  int64_t environ_budget_bytes = 0;
  // Pids not inspected at all (an agent's tracked tasks: their environment was read, and a
  // rescan that parsed each again held every task's cluster spec at once); may be null.
  const std::set<pid_t>* skip = nullptr;
  // Where a scan with a budget starts (DiscoveryResult::resume_at of the scan before): the pids
  // from it up come first, then the lower ones, so that the budget goes round the node's
  // processes and every one is parsed within a few rescans, whatever the lower pids hold. 0: in
  // pid order.
  pid_t resume_at = 0;
};

struct DiscoveryResult {
  std::vector<TfTask> tasks;          // sorted by label, then pid
  std::vector<std::string> warnings;  // e.g. "pid 42: TF_CONFIG: task.index: ..."
  int scanned = 0;                    // processes examined
  int vanished = 0;                   // processes that exited mid-scan (skipped)
  int unreadable = 0;                 // environ not readable (no ptrace rights): cmdline only
  int rejected_names = 0;   // pod names refused (not a regular file, a symlink, no DNS-1123 name)
  int environ_reads = 0;    // /proc/PID/environ reads made by this scan (cached ones not counted)
  int environ_dropped = 0;  // processes left unparsed: environ_budget_bytes was spent
  std::vector<pid_t> environ_dropped_pids;  // those processes, in scan order
  // The first process the budget left unparsed: where the next scan starts (resume_at); 0 when
  // none was left.
  pid_t resume_at = 0;
  bool stopped = false;  // DiscoveryOptions::stop ended the scan early
  // TF tasks that the pod/job filters left out, in scan order, so that an empty result can say
  // what there was.
  struct Filtered {
    std::string name;     // what the filters matched: the pod name, else the address's host
    std::string label;    // "ps:0"; "" without a job
    std::string address;  // own "host:port", "" when unknown
    pid_t pid = 0;
  };
  std::vector<Filtered> filtered_out;
};

// Why `unreadable` processes' environment could not be read, for this process's privileges:
// not root: "run as root (or with CAP_SYS_PTRACE)"; root without CAP_SYS_PTRACE (a container's
// default): how to add it; root with it: those processes are protected (another user namespace,
// Yama or an LSM) and only their command line was checked. Reads /proc/self/status.
std::string EnvironUnreadableHint(int unreadable);

// The TFJob a Kubeflow pod name belongs to: "myjob" for "myjob-worker-3", "" when the name is not
// "<job>-<replica type>-<index>" (ParseTfPodName, core/tf_roles.h).
std::string TfJobOfPod(std::string_view pod_name);

// What a filtered scan that found nothing did find: "the 3 TF tasks found belong to TFJob
// myjob: myjob-ps-0 (ps:0), ..."; tasks whose name is no TFJob pod name are listed by label, pid
// and address. "" when the filters left nothing out.
std::string DescribeFilteredOut(const DiscoveryResult& r);

// Scans processes and returns the TF tasks that pass the filters (all filters must match; the
// pod name, or when unknown the first DNS label of the task's own cluster address, is matched
// against pod_names and job_prefix). Processes claiming the same task (same label, pod and
// cluster) are merged into the one with the most threads; the rest go to other_pids. A task
// whose config is malformed is skipped with a warning. Errors: kIo/kNotFound when <root>/proc
// cannot be listed.
StatusOr<DiscoveryResult> DiscoverTfTasks(const DiscoveryOptions& options);

// Examines one process: nullopt when it is not a TF task (or is a thread, not a process).
// `environ_unreadable` (optional) is set when TF_CONFIG could not be read (no ptrace rights) and
// only argv was checked. Errors: kNotFound (the process exited), kInvalidInput (malformed
// TF_CONFIG or flags, prefixed with "pid N"). Ignores DiscoveryOptions' filters.
// `cache` (optional): environments read by earlier scans, and where this one's go;
// `environ_reads` (optional) is incremented per /proc/PID/environ read. `environ_budget`
// (optional): bytes of TF_CONFIG still allowed; a larger value is not parsed (nullopt, *over_budget
// set, the cache entry dropped), a parsed one is subtracted.
StatusOr<std::optional<TfTask>> InspectProcess(pid_t pid, const std::string& root = "/",
                                               bool* environ_unreadable = nullptr,
                                               EnvironCache* cache = nullptr,
                                               int* environ_reads = nullptr,
                                               int64_t* environ_budget = nullptr,
                                               bool* over_budget = nullptr);

// A job name given by a process (TFDIAG_JOB, --tf_job) or tfdiag attach --tf-job: 1-63 of
// [A-Za-z0-9._-], starting with a letter or digit (a Prometheus label value that also fits a
// Kubernetes name and a file name).
bool IsJobName(std::string_view s);

// The name of a job that has none (IP addresses in TF_CONFIG: bare metal, psload's run_job.sh):
// "ip-" and 8 hex digits of the 32-bit FNV-1a hash (http://www.isthe.com/chongo/tech/comp/fnv/)
// of its PS addresses, sorted and joined by ','; without PS, of every address of the cluster
// spec. Every task of one job gets the same name, two jobs on one node (other ports) get two.
// "" when the cluster spec lists no address.
std::string UnnamedJobName(const ClusterSpec& cluster);

// Kubernetes name syntax (k8s.io/apimachinery/pkg/util/validation: IsDNS1123Label,
// IsDNS1123Subdomain): a label is 1-63 of [a-z0-9-], starting and ending alphanumeric (a
// namespace); a subdomain is dot-separated labels, at most 253 bytes (a pod name).
bool IsDns1123Label(std::string_view s);
bool IsDns1123Subdomain(std::string_view s);

// The process whose root holds `pid`'s identity files (etc/hostname, the service account
// namespace) as the container runtime put them there: `pid` when its mount namespace is owned
// by the node's user namespace (MountNsOwnedByNode), else its nearest ancestor with the same
// /proc/PID/cgroup (the same container) whose is; -1 when none (then *note says why). A tenant
// in a user and mount namespace of its own (unshare -rm) can bind-mount any file it can look up
// over its etc/hostname; the namespace its container started in it cannot change.
pid_t IdentitySource(pid_t pid, const std::string& root, std::string* note);

// A Kubernetes name from file `rel` inside process `pid`'s root (ReadFileOnLocalMounts: local
// mounts only, a world-readable regular file, `follow_last` as there), trimmed: "" when the file is
// absent, unreadable, or fails `valid`; then (but not for a missing file) *note says why, naming
// `what` ("pod name"), never quoting the content.
std::string ReadNameInRoot(pid_t pid, const std::string& rel, bool follow_last,
                           const std::string& root, bool (*valid)(std::string_view),
                           std::string_view what, std::string* note);

// True when `pod_name` is "<job_prefix>-<replica type>-<index>" (Kubeflow TFJob pod naming,
// IsPodOfTfJob in core/tf_roles.h), or `job_prefix` is empty (no filter).
bool PodMatchesJob(std::string_view pod_name, std::string_view job_prefix);

}  // namespace tfdiag
