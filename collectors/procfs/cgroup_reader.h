// cgroup v1 and v2 readers: which cgroup a process is in, where the hierarchies are mounted, and
// the CPU limits, cpuset, throttling and usage of that cgroup.
//
// Formats: Documentation/admin-guide/cgroup-v2.rst ("Processes", /proc/PID/cgroup; "CPU Interface
// Files": cpu.max, cpu.weight, cpu.stat; "Cpuset Interface Files"), Documentation/scheduler/
// sched-bwc.rst (v1 cpu.cfs_quota_us, cpu.cfs_period_us, cpu.stat throttling), Documentation/
// admin-guide/cgroup-v1/cpusets.rst and cpuacct.rst, and proc.rst 3.5 (/proc/PID/mountinfo).
// Every Read* takes a `root` prefix (default "/") under which /proc and /sys are looked up.
// Thread-safety: free functions without shared state; safe from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// One line of /proc/PID/cgroup: "hierarchy-ID:controller-list:cgroup-path". v2's line is
// "0::/path" (no controllers). The path may itself contain ':' and, across cgroup namespaces,
// "/.." components.
struct CgroupEntry {
  int hierarchy_id = 0;
  std::vector<std::string> controllers;  // "cpu", "cpuacct", "name=systemd"; empty for v2
  std::string path;                      // "/kubepods/burstable/pod<uid>/<id>"
  bool v2() const { return hierarchy_id == 0 && controllers.empty(); }
};
// Errors: kInvalidInput naming the 1-based line and quoting it ("line 2: 'invalid-line:'").
StatusOr<std::vector<CgroupEntry>> ParseProcCgroup(std::string_view text);
StatusOr<std::vector<CgroupEntry>> ReadProcCgroup(pid_t pid, const std::string& root = "/");

// A cgroup or cgroup2 mount from /proc/PID/mountinfo (other filesystems are dropped).
struct CgroupMount {
  bool v2 = false;                       // fstype cgroup2
  std::string root;                      // field 4: the cgroup mounted there ("/", "/docker")
  std::string mount_point;               // field 5, octal escapes (\040) decoded
  std::vector<std::string> controllers;  // v1 only: super options naming controllers
};
// Errors: kInvalidInput naming the line when a cgroup line lacks the " - " separator.
StatusOr<std::vector<CgroupMount>> ParseMountInfo(std::string_view text);
// `pid` 0 reads /proc/self/mountinfo.
StatusOr<std::vector<CgroupMount>> ReadMountInfo(pid_t pid = 0, const std::string& root = "/");

// A CFS bandwidth limit: quota per period, both microseconds.
struct CfsQuota {
  int64_t quota_us = -1;  // -1: unlimited ("max" in v2, -1 in v1)
  int64_t period_us = 0;
};
// v2 cpu.max: "max 100000" or "20000 100010" (a lone quota is rejected: the kernel always prints
// two fields). Errors: kInvalidInput for one field, more than two, a bad number, a zero period.
StatusOr<CfsQuota> ParseCpuMax(std::string_view text);
// v1 cpu.cfs_quota_us and cpu.cfs_period_us texts. Same errors; a quota of -1 is unlimited.
StatusOr<CfsQuota> ParseCfsQuotaPeriod(std::string_view quota_text, std::string_view period_text);
// One integer file (cpu.shares, cpu.weight, cpuacct.usage). `what` names it in errors.
StatusOr<int64_t> ParseIntFile(std::string_view text, std::string_view what);

// cpu.stat, v1 (sched-bwc.rst: nr_periods, nr_throttled, throttled_time ns, nr_bursts,
// burst_time ns) or v2 (cgroup-v2.rst: usage_usec, user_usec, system_usec, nr_periods,
// nr_throttled, throttled_usec, nr_bursts, burst_usec; newer kernels add more). Absent keys stay
// nullopt ("unknown", not 0): a v2 cgroup without the cpu controller has no throttling keys.
struct CpuStat {
  std::optional<int64_t> nr_periods, nr_throttled, throttled_ns;
  std::optional<int64_t> nr_bursts, burst_ns;
  std::optional<int64_t> usage_ns, user_ns, system_ns;  // v2 only (v1: cpuacct.usage)
};
// Errors: kInvalidInput naming a known key whose value is not a number. Unknown keys ignored.
StatusOr<CpuStat> ParseCpuStat(std::string_view text);

// Everything tfdiag needs about a process's CPU cgroup.
struct CgroupCpu {
  int version = 0;                 // 1 or 2
  std::string path;                // cgroup path of the cpu controller (/proc/PID/cgroup)
  std::string dir;                 // directory read (root prefix included)
  int64_t quota_us = -1;           // -1 unlimited
  int64_t period_us = 0;           // 0 when the cgroup has no bandwidth files (v2 root)
  double cpu_limit = 0;            // quota_us / period_us; 0 when unlimited
  double effective_cpu_limit = 0;  // tightest limit of the cgroup and its ancestors; 0 none
  std::vector<int> cpuset;         // CPUs it may run on; empty when unknown
  int cpuset_count = 0;
  std::optional<int64_t> shares;    // v1 cpu.shares (default 1024)
  std::optional<int64_t> weight;    // v2 cpu.weight (1..10000, default 100)
  CpuStat stat;                     // throttling counters (unknown when absent)
  std::optional<int64_t> usage_ns;  // v1 cpuacct.usage, v2 cpu.stat usage_usec * 1000
};

// Reads the CPU cgroup of `pid`: /proc/PID/cgroup for its paths and /proc/self/mountinfo for
// the hierarchies (our own mount namespace: the target's mountinfo describes its container's
// view, not paths we can open). v1 is used when the cpu controller is mounted as v1, else v2.
// Errors: kNotFound (process gone), kUnavailable (no cpu hierarchy mounted, or the cgroup lies
// outside our cgroup namespace), kInvalidInput (malformed files, naming the file).
StatusOr<CgroupCpu> ReadCgroupCpu(pid_t pid, const std::string& root = "/");
// The same from already-parsed inputs (tests, or a sampler that caches the mounts).
StatusOr<CgroupCpu> ResolveCgroupCpu(const std::vector<CgroupEntry>& cgroups,
                                     const std::vector<CgroupMount>& mounts,
                                     const std::string& root = "/");

}  // namespace tfdiag
