#include "collectors/discovery/discovery.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "collectors/procfs/proc_reader.h"
#include "collectors/procfs/task_mounts.h"
#include "core/device_name.h"
#include "core/tf_roles.h"

namespace tfdiag {
namespace {

// The pod name, when the process runs in another root file system (a container): the kubelet
// bind-mounts a file holding the pod name on the container's /etc/hostname. Read inside the
// root of `pid` (the task, or IdentitySource's ancestor) on local mounts only, never through a
// symlink (ReadNameInRoot), a world-readable regular file of at most 256 bytes, kept only when
// it is a DNS-1123 subdomain (a pod name is one); else "" and *note says why.
std::string PodName(pid_t pid, const std::string& root, std::string* note) {
  struct stat theirs, ours;
  std::string their_root = RootedPath(root, fmt::format("/proc/{}/root/", pid));
  if (::stat(their_root.c_str(), &theirs) != 0 ||
      ::stat(RootedPath(root, "/proc/self/root/").c_str(), &ours) != 0) {
    return "";
  }
  if (theirs.st_dev == ours.st_dev && theirs.st_ino == ours.st_ino) return "";
  return ReadNameInRoot(pid, "etc/hostname", /*follow_last=*/false, root, IsDns1123Subdomain,
                        "pod name", note);
}

// The text of /proc/PID/cgroup, "" when unreadable.
std::string CgroupText(pid_t pid, const std::string& root) {
  StatusOr<std::string> t =
      ReadKernelFile(RootedPath(root, fmt::format("/proc/{}/cgroup", pid)), size_t{1} << 16);
  return t.ok() ? *t : "";
}

// The path that identifies the task's container: the cpu controller's (v1), else v2's.
std::string CpuCgroupPath(const std::vector<CgroupEntry>& cgroups) {
  for (const CgroupEntry& e : cgroups) {
    if (std::find(e.controllers.begin(), e.controllers.end(), "cpu") != e.controllers.end()) {
      return e.path;
    }
  }
  for (const CgroupEntry& e : cgroups) {
    if (e.v2()) return e.path;
  }
  return cgroups.empty() ? "" : cgroups.front().path;
}

// The name filters match: the pod name, else the first DNS label of the task's own address
// ("myjob-ps-0.default.svc:2222" -> "myjob-ps-0").
std::string FilterName(const TfTask& t) {
  if (!t.pod_name.empty()) return t.pod_name;
  std::string_view a = t.address;
  return std::string(a.substr(0, std::min(a.find('.'), a.find(':'))));
}

// The task's label, pod and a 64-bit hash of its cluster spec: a scan keeps one key per task, and
// a key holding the whole spec (up to 128 KiB) took 32 MiB more at the agent's peak beside 1,000
// tenants with TF_CONFIGs at the kernel's limit.
std::string DedupKey(const TfTask& t) {
  std::string spec;
  for (const auto& [job, hosts] : t.config.cluster.jobs) {
    spec += job + "=";
    for (const TaskAddress& h : hosts) spec += fmt::format("{}:{},", h.index, h.address);
    spec += ";";
  }
  return fmt::format("{}\n{}\n{:016x}", t.label, t.kube.pod_uid, std::hash<std::string>()(spec));
}

}  // namespace

pid_t IdentitySource(pid_t pid, const std::string& root, std::string* note) {
  const std::string cgroup = CgroupText(pid, root);
  pid_t p = pid;
  for (int depth = 0; depth < 64 && p > 1; ++depth) {
    StatusOr<bool> owned = MountNsOwnedByNode(p, root);
    // No namespace files at all: a laid-out /proc tree (tests), or a kernel before 3.8.
    if (!owned.ok() && owned.status().code() == StatusCode::kNotFound && p == pid) return pid;
    if (!owned.ok()) {
      *note =
          fmt::format("pid {}: pod name and namespace unknown: {}", pid, owned.status().message());
      return -1;
    }
    if (*owned) {
      if (p != pid) {
        *note = fmt::format(
            "pid {}: runs in a mount namespace of its own user namespace: its pod name and "
            "namespace are read from its ancestor pid {} of the same cgroup",
            pid, p);
      }
      return p;
    }
    StatusOr<ProcStat> st = ReadProcStat(p, root);
    if (!st.ok() || st->ppid <= 1 || cgroup.empty() || CgroupText(st->ppid, root) != cgroup) break;
    p = st->ppid;
  }
  *note = fmt::format(
      "pid {}: pod name and namespace not read: its mount namespace belongs to a user namespace "
      "other than the node's (made by the workload, or a pod with hostUsers: false) and no "
      "ancestor of its cgroup runs in one of the node's",
      pid);
  return -1;
}

std::string ReadNameInRoot(pid_t pid, const std::string& rel, bool follow_last,
                           const std::string& root, bool (*valid)(std::string_view),
                           std::string_view what, std::string* note) {
  StatusOr<std::string> text =
      ReadFileOnLocalMounts(pid, "/" + rel, follow_last, root, kInRootMaxBytes);
  if (!text.ok()) {
    if (text.status().code() != StatusCode::kNotFound) {
      *note = fmt::format("pid {}: {} unknown: {}", pid, what, text.status().message());
    }
    return "";
  }
  std::string_view name = Trim(*text);
  if (!valid(name)) {
    *note = fmt::format("pid {}: {} unknown: {} in its root is not a DNS-1123 name ({} bytes)", pid,
                        what, rel, text->size());
    return "";
  }
  return std::string(name);
}

bool IsDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  while (true) {
    const size_t dot = s.find('.');
    if (!IsDns1123Label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool PodMatchesJob(std::string_view pod_name, std::string_view job_prefix) {
  return job_prefix.empty() || IsPodOfTfJob(pod_name, job_prefix);
}

EnvironEntry* EnvironCache::Find(pid_t pid, int64_t start_ticks, uint64_t exec_hash) {
  auto it = entries_.find(pid);
  if (it == entries_.end() || it->second.start_ticks != start_ticks ||
      it->second.exec_hash != exec_hash) {
    return nullptr;
  }
  return &it->second;
}

EnvironEntry& EnvironCache::Put(pid_t pid, EnvironEntry e) { return entries_[pid] = std::move(e); }

void EnvironCache::Retain(const std::vector<pid_t>& pids) {
  std::set<pid_t> keep(pids.begin(), pids.end());
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = keep.count(it->first) ? std::next(it) : entries_.erase(it);
  }
}

bool IsJobName(std::string_view s) {
  if (s.empty() || s.size() > 63 || !isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::string UnnamedJobName(const ClusterSpec& cluster) {
  std::vector<std::string> addresses;
  auto ps = cluster.jobs.find("ps");
  if (ps != cluster.jobs.end()) {
    for (const TaskAddress& t : ps->second) addresses.push_back(t.address);
  }
  if (addresses.empty()) {
    for (const auto& [job, tasks] : cluster.jobs) {
      for (const TaskAddress& t : tasks) addresses.push_back(t.address);
    }
  }
  if (addresses.empty()) return "";
  std::sort(addresses.begin(), addresses.end());
  uint32_t h = 2166136261u;  // FNV-1a, 32 bit: offset basis and prime
  auto feed = [&h](unsigned char c) { h = (h ^ c) * 16777619u; };
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (i > 0) feed(',');
    for (char c : addresses[i]) feed(static_cast<unsigned char>(c));
  }
  return fmt::format("ip-{:08x}", h);
}

StatusOr<std::optional<TfTask>> InspectProcess(pid_t pid, const std::string& root,
                                               bool* environ_unreadable, EnvironCache* cache,
                                               int* environ_reads, int64_t* environ_budget,
                                               bool* over_budget) {
  auto status = ReadProcStatus(pid, root);
  if (!status.ok()) return status.status();
  if (status->tgid > 0 && status->tgid != pid) return std::optional<TfTask>();  // a thread
  auto stat = ReadProcStat(pid, root);
  if (!stat.ok()) return stat.status();
  auto argv = ReadCmdline(pid, root);
  if (!argv.ok()) return argv.status();

  // The environment: from the cache when this process (pid, start time, comm, argv) was read
  // before, else read once (only TF_CONFIG) and kept.
  std::string exec_key = stat->comm;
  for (const std::string& a : *argv) exec_key += '\0' + a;
  const uint64_t exec_hash = std::hash<std::string>()(exec_key);
  EnvironEntry scratch;
  EnvironEntry* entry = nullptr;
  if (cache != nullptr) {
    entry = cache->Find(pid, stat->start_time_ticks, exec_hash);
  }
  if (entry == nullptr) {
    size_t environ_bytes = 0;
    auto env = ReadEnvVar(pid, "TF_CONFIG", root, &environ_bytes);
    if (environ_reads != nullptr) ++*environ_reads;
    // The pid may have been reused between the stat and the environ read: check it is the same.
    auto again = ReadProcStat(pid, root);
    if (!again.ok()) return again.status();
    if (again->start_time_ticks != stat->start_time_ticks) {
      return NotFound("pid {}: exited during the scan", pid);
    }
    // A process that is still there but whose environ gives ESRCH has no memory of its own: a
    // kernel thread (or a zombie). It has no environment: kept as such, not read again.
    const bool no_mm = !env.ok() && env.status().code() == StatusCode::kNotFound;
    if (!env.ok() && !no_mm && env.status().code() != StatusCode::kUnavailable) {
      return env.status();
    }
    scratch.start_ticks = stat->start_time_ticks;
    scratch.exec_hash = exec_hash;
    scratch.unreadable = !env.ok() && !no_mm;
    scratch.job_read = no_mm;
    if (env.ok()) scratch.tf_config = std::move(*env);
    // An environ of no bytes is what a process shows while its exec is under way (posix_spawn
    // returns then): its new comm and even argv may be there, its environment not yet (the
    // kernel sets its range last, and environ reads nothing before: environ_read in
    // fs/proc/base.c). Cached, that read would hide its TF_CONFIG for the process's life; so
    // it is not kept, and the next scan reads again (an empty environment costs nothing).
    const bool keep = cache != nullptr && !(env.ok() && environ_bytes == 0);
    if (cache != nullptr && !keep) cache->Erase(pid);  // an older entry under another key
    entry = keep ? &cache->Put(pid, std::move(scratch)) : &scratch;
  }
  if (entry->unreadable && environ_unreadable != nullptr) *environ_unreadable = true;
  if (!entry->config_error.empty()) return InvalidInput("{}", entry->config_error);
  if (environ_budget != nullptr && entry->tf_config.has_value()) {
    const int64_t size = static_cast<int64_t>(entry->tf_config->size());
    if (size > *environ_budget) {
      if (over_budget != nullptr) *over_budget = true;
      if (cache != nullptr) cache->Erase(pid);
      return std::optional<TfTask>();
    }
    *environ_budget -= size;
  }

  // A config that is no task is remembered as its error alone (the entry is the cache's when
  // `cache` is set: a later scan returns the error without the value).
  auto refuse = [&](const Status& st) {
    Status e = st.WithPrefix(fmt::format("pid {}", pid));
    entry->config_error = e.message();
    entry->tf_config.reset();
    return e;
  };
  std::optional<TfTaskConfig> cfg;
  if (entry->tf_config.has_value() && !Trim(*entry->tf_config).empty()) {
    auto parsed = ParseTfConfig(*entry->tf_config);
    if (!parsed.ok()) return refuse(parsed.status());
    cfg = std::move(*parsed);
  }
  // Flags name the task when TF_CONFIG does not (or is absent).
  if ((!cfg || cfg->job.empty()) && HasTfFlags(*argv)) {
    auto flags = ParseTfFlags(*argv);
    if (!flags.ok()) return refuse(flags.status());
    if (cfg && flags->cluster.empty()) flags->cluster = cfg->cluster;
    cfg = std::move(*flags);
  }
  if (!cfg) return std::optional<TfTask>();

  TfTask t;
  t.pid = pid;
  t.config = std::move(*cfg);
  t.job = t.config.job;
  t.index = t.config.index;
  if (!t.job.empty()) t.label = TaskLabel(t.job, 0, std::max(t.index, 0));
  t.address = t.config.cluster.Address(t.job, t.index);
  t.comm = stat->comm;
  t.num_threads = stat->num_threads;
  // The job's own name: TFDIAG_JOB (a TF task's environment only, once), else --tf_job.
  if (!entry->job_read && !entry->unreadable) {
    auto job = ReadEnvVar(pid, "TFDIAG_JOB", root);
    if (environ_reads != nullptr) ++*environ_reads;
    if (!job.ok() && job.status().code() == StatusCode::kNotFound) return job.status();
    if (job.ok()) entry->tfdiag_job = std::move(*job);
    entry->job_read = true;
  }
  std::string_view named;
  std::string_view from;
  if (entry->tfdiag_job.has_value()) {
    named = Trim(*entry->tfdiag_job), from = "TFDIAG_JOB";
  }
  const std::string flag = FlagValue(*argv, "tf_job");
  if (named.empty() && !flag.empty()) named = flag, from = "--tf_job";
  if (IsJobName(named)) {
    t.job_name = std::string(named);
  } else if (!named.empty()) {
    t.job_name_note = fmt::format(
        "pid {}: {} ignored: not 1-63 of [A-Za-z0-9._-] starting with a letter or digit ({} "
        "bytes)",
        pid, from, named.size());
  }
  auto cgroups = ReadProcCgroup(pid, root);
  if (!cgroups.ok() && cgroups.status().code() == StatusCode::kNotFound) return cgroups.status();
  if (cgroups.ok()) t.cgroups = std::move(*cgroups);
  t.cgroup_path = CpuCgroupPath(t.cgroups);
  t.kube = ParseKubepodsPath(t.cgroup_path);
  for (size_t i = 0; !t.kube.in_kubepods && i < t.cgroups.size(); ++i) {
    t.kube = ParseKubepodsPath(t.cgroups[i].path);
  }
  t.identity_pid = IdentitySource(pid, root, &t.identity_note);
  if (t.identity_pid > 0) {
    std::string note;
    t.pod_name = PodName(t.identity_pid, root, &note);
    if (!note.empty()) t.identity_note = std::move(note);
  }
  return std::optional<TfTask>(std::move(t));
}

StatusOr<DiscoveryResult> DiscoverTfTasks(const DiscoveryOptions& options) {
  DiscoveryResult result;
  std::vector<pid_t> pids;
  bool scanning = options.pids.empty();
  if (scanning) {
    auto all = ListPids(options.root);
    if (!all.ok()) return all.status();
    pids = std::move(*all);
  } else {
    std::set<pid_t> tgids;  // a TID given as a pid stands for its process
    for (pid_t p : options.pids) {
      auto st = ReadProcStatus(p, options.root);
      if (!st.ok()) {
        if (st.status().code() != StatusCode::kNotFound) return st.status();
        ++result.vanished;
        result.warnings.push_back(fmt::format("pid {}: no such process", p));
        continue;
      }
      tgids.insert(st->tgid > 0 ? st->tgid : p);
    }
    pids.assign(tgids.begin(), tgids.end());
  }
  std::set<std::string> pod_names(options.pod_names.begin(), options.pod_names.end());
  std::map<std::string, size_t> by_key;  // dedup key -> index in result.tasks
  if (scanning && options.cache != nullptr) options.cache->Retain(pids);
  int64_t budget = options.environ_budget_bytes;
  int64_t* budget_left = budget > 0 ? &budget : nullptr;
  if (options.resume_at > 0) {  // round the node: from resume_at up, then the lower pids
    std::stable_partition(pids.begin(), pids.end(),
                          [&](pid_t p) { return p >= options.resume_at; });
  }
  for (pid_t pid : pids) {
    if (options.stop != nullptr && options.stop->load()) {
      result.stopped = true;  // SIGTERM mid-scan: what was scanned so far
      break;
    }
    // tfdiag run with `kubectl exec` inherits the pod's TF_CONFIG: never report ourselves.
    if (scanning && (options.root.empty() || options.root == "/") && pid == ::getpid()) continue;
    if (options.skip != nullptr && options.skip->count(pid)) continue;
    ++result.scanned;
    bool unreadable = false, over_budget = false;
    auto task = InspectProcess(pid, options.root, &unreadable, options.cache, &result.environ_reads,
                               budget_left, &over_budget);
    if (over_budget) {
      ++result.environ_dropped;
      result.environ_dropped_pids.push_back(pid);
      if (result.resume_at == 0) result.resume_at = pid;
    }
    if (unreadable) ++result.unreadable;
    if (!task.ok()) {
      if (task.status().code() == StatusCode::kNotFound) {
        ++result.vanished;
      } else {
        result.warnings.push_back(task.status().message());
      }
      continue;
    }
    if (!task->has_value()) continue;
    TfTask& t = **task;
    if (t.config.tasks_dropped > 0) {
      result.warnings.push_back(
          fmt::format("pid {}: {}: the cluster lists more than {} tasks: {} not kept", t.pid,
                      t.config.source, kMaxClusterTasks, t.config.tasks_dropped));
    }
    if (!t.job_name_note.empty()) result.warnings.push_back(t.job_name_note);
    if (!t.identity_note.empty()) {
      ++result.rejected_names;
      result.warnings.push_back(t.identity_note);
    }
    std::string name = FilterName(t);
    if ((!pod_names.empty() && pod_names.count(name) == 0) ||
        !PodMatchesJob(name, options.job_prefix)) {
      result.filtered_out.push_back({name, t.label, t.address, t.pid});
      continue;
    }
    std::string key = DedupKey(t);
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      by_key.emplace(key, result.tasks.size());
      result.tasks.push_back(std::move(t));
      continue;
    }
    TfTask& kept = result.tasks[it->second];
    if (t.num_threads > kept.num_threads) {
      t.other_pids = std::move(kept.other_pids);
      t.other_pids.push_back(kept.pid);
      kept = std::move(t);
    } else {
      kept.other_pids.push_back(t.pid);
    }
  }
  std::sort(result.tasks.begin(), result.tasks.end(), [](const TfTask& a, const TfTask& b) {
    return a.label != b.label ? a.label < b.label : a.pid < b.pid;
  });
  return result;
}

std::string TfJobOfPod(std::string_view pod_name) {
  const std::optional<TfPodName> pod = ParseTfPodName(pod_name);
  return pod.has_value() ? pod->job : "";
}

std::string DescribeFilteredOut(const DiscoveryResult& r) {
  if (r.filtered_out.empty()) return "";
  std::map<std::string, std::vector<std::string>> by_job;  // TFJob ("" unknown) -> tasks
  for (const DiscoveryResult::Filtered& f : r.filtered_out) {
    std::string job = TfJobOfPod(f.name);
    std::string label = f.label.empty() ? "no task" : f.label;
    by_job[job].push_back(!job.empty() ? fmt::format("{} ({})", f.name, label)
                                       : fmt::format("{} pid {}{}{}", label, f.pid,
                                                     f.address.empty() ? "" : " at ", f.address));
  }
  std::string out =
      fmt::format("the {} TF task{} found belong{} to ", r.filtered_out.size(),
                  r.filtered_out.size() == 1 ? "" : "s", r.filtered_out.size() == 1 ? "s" : "");
  bool first = true;
  for (const auto& [job, tasks] : by_job) {
    if (!first) out += "; ";
    first = false;
    out += job.empty() ? std::string(
                             "no TFJob (their pod or host is not named "
                             "<job>-<type>-<index>)")
                       : "TFJob " + job;
    out += ": ";
    const size_t shown = std::min<size_t>(tasks.size(), 6);
    for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + tasks[i];
    if (shown < tasks.size()) out += fmt::format(" and {} more", tasks.size() - shown);
  }
  return out;
}

std::string EnvironUnreadableHint(int unreadable) {
  std::string what = fmt::format("{} process{}' environment could not be read", unreadable,
                                 unreadable == 1 ? "" : "es");
  if (::geteuid() != 0) {
    return what +
           ": run as root (or with CAP_SYS_PTRACE) to see TF_CONFIG of other users' "
           "processes";
  }
  // CAP_SYS_PTRACE is capability 19 (linux/capability.h); CapEff is hex in /proc/self/status.
  bool ptrace_cap = true;
  StatusOr<std::string> status = ReadSmallFile("/proc/self/status");
  if (status.ok()) {
    size_t at = status->find("CapEff:");
    if (at != std::string::npos) {
      unsigned long long caps = std::strtoull(status->c_str() + at + 7, nullptr, 16);
      ptrace_cap = (caps >> 19) & 1;
    }
  }
  if (!ptrace_cap) {
    return what +
           " although tfdiag runs as root: this root lacks CAP_SYS_PTRACE, which reading "
           "another user's /proc/PID/environ needs (containers drop it by default: docker "
           "run --cap-add SYS_PTRACE, or securityContext.capabilities.add: [SYS_PTRACE])";
  }
  return what +
         " although tfdiag runs as root with CAP_SYS_PTRACE: the kernel protects them "
         "(another user namespace, Yama ptrace_scope 3, or an LSM policy); only their "
         "command line (--job_name/--task_index) was checked";
}

}  // namespace tfdiag
