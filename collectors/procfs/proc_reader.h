// Readers of /proc/PID files for `tfdiag attach`: CPU time, threads, context switches, scheduler
// statistics, argv and one named environment variable.
//
// Formats: the kernel's Documentation/filesystems/proc.rst (sections 1.1-1.2, "Process-Specific
// Subdirectories", table 1-2 for status and 1-4 for stat) and Documentation/scheduler/
// sched-stats.rst (/proc/PID/schedstat). Each format has a pure Parse*(text) function, testable
// on fixture text, and a Read*(pid) wrapper. Every Read* takes a `root` prefix (default "/") so
// that tests can lay out a fake /proc under a temporary directory.
//
// Errors: a process or thread that no longer exists (ENOENT/ESRCH) gives StatusCode::kNotFound,
// so a sampler can end its series cleanly; EACCES/EPERM gives kUnavailable; other read failures
// kIo; malformed text kInvalidInput naming the file and field. Every message names the path.
// Thread-safety: free functions without shared state; safe from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// `root` + `abs` ("/proc/1/stat" under root "/tmp/x" -> "/tmp/x/proc/1/stat"); root "/" or ""
// leaves `abs` unchanged.
std::string RootedPath(const std::string& root, std::string_view abs);

// `s` without leading and trailing white space (proc and cgroup files end in newlines).
std::string_view Trim(std::string_view s);

// Default cap of ReadSmallFile: 16 MiB (a /proc/PID/mountinfo of a node with ~100,000 mounts).
constexpr size_t kSmallFileMaxBytes = size_t{16} << 20;

// Reads a whole (small) file, e.g. a /proc or cgroup file whose st_size is 0, or a file a user
// names (a FIFO such as <(...) is read too; the open may block until a writer comes). Reads at
// most `max_bytes`. Errors as above: kNotFound (ENOENT, ESRCH), kUnavailable (EACCES, EPERM),
// kIo (others); kInvalidInput "<path>: larger than N bytes" past the cap, "is a directory".
StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes = kSmallFileMaxBytes);

// For files the kernel writes (/proc, /sys, cgroupfs) whose path a workload may shape: as
// ReadSmallFile, but opened O_NONBLOCK | O_NOFOLLOW | O_NOCTTY and only a regular file is read
// (a FIFO, device or socket is kInvalidInput "not a regular file", never opened blocking).
// `truncate`: past `max_bytes`, return the first `max_bytes` instead of an error.
StatusOr<std::string> ReadKernelFile(const std::string& path, size_t max_bytes = kSmallFileMaxBytes,
                                     bool truncate = false);

// Runs `read` on a helper thread and waits at most `timeout` for it. A read of a file a workload
// serves (a FUSE mount in its own namespace) can block in the kernel whatever the open flags;
// this keeps the caller (the sampler) going. On timeout: kUnavailable "<what>: no answer within
// N ms", and the thread stays parked until the read returns (`read` must own what it uses: pass
// copies); while kMaxStuckReads threads are parked, calls fail at once without a new thread.
// Thread-safety: safe from any thread.
constexpr int kMaxStuckReads = 8;
StatusOr<std::string> BoundedRead(std::function<StatusOr<std::string>()> read,
                                  std::chrono::milliseconds timeout, std::string_view what);
// Threads BoundedRead has left parked on reads that have not returned yet.
int StuckReads();

// Cap of ReadFileInRoot: a pod name or namespace is a DNS name of at most 253 bytes.
constexpr size_t kInRootMaxBytes = 256;

// Reads `rel` ("etc/hostname") inside the root file system of process `pid` (/proc/PID/root
// under `root`), as the process would see it, never as tfdiag's root would: the root is opened
// O_PATH and `rel` resolved with openat2(2) RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so a
// symlink the workload plants ("/etc/shadow", "../../..", "/proc/1/root/...") cannot leave its
// root (the protection runc and containerd use since CVE-2018-15664 and CVE-2021-25741). The
// file is opened O_NONBLOCK | O_NOCTTY (plus O_NOFOLLOW when `follow_last` is false: the final
// component must not be a symlink even inside the root), must be a regular file, and at most
// `max_bytes` are read (more is kInvalidInput). The read runs under BoundedCall (a FUSE file
// the workload serves that never answers costs one parked thread, not the caller).
// Errors: kUnavailable when the kernel lacks openat2 (before Linux 5.6: refused, never a plain
// open) or a previous read of this kind is still stuck; kNotFound, kInvalidInput ("not a
// regular file", "larger than"), kIo otherwise. Thread-safety: reentrant.
StatusOr<std::string> ReadFileInRoot(pid_t pid, const std::string& rel, bool follow_last,
                                     const std::string& root = "/",
                                     size_t max_bytes = kInRootMaxBytes);

// sysconf(_SC_CLK_TCK): the unit of utime/stime in /proc/PID/stat (usually 100 per second).
int64_t ClockTicksPerSecond();

// Parses a kernel CPU list ("0-5,8,10-11", as in cpuset.cpus or Cpus_allowed_list; surrounding
// whitespace ignored) into sorted, distinct CPU numbers. "" gives an empty list (an unset
// cpuset). Errors: kInvalidInput naming the bad element ("5-3", "x").
StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

// /proc/PID/stat or /proc/PID/task/TID/stat (proc.rst table 1-4). comm may hold spaces and
// parentheses, so fields are counted from the LAST ')'.
struct ProcStat {
  int pid = 0;
  std::string comm;  // up to 15 bytes, without the parentheses
  char state = '?';  // R running, S sleeping, D disk wait, Z zombie, T, t, I, ...
  int ppid = 0;
  int64_t utime_ticks = 0;  // user CPU time, clock ticks
  int64_t stime_ticks = 0;  // system CPU time, clock ticks
  int64_t utime_ns = 0;     // utime_ticks converted with the given ticks per second
  int64_t stime_ns = 0;
  int num_threads = 0;
  int64_t start_time_ticks = 0;  // since boot, clock ticks
  int64_t start_time_ns = 0;     // since boot (CLOCK_BOOTTIME), ns
  int processor = -1;            // CPU last run on; -1 when the line is too short
};
// Errors: kInvalidInput when there is no "(comm)" or fewer than 20 fields follow it.
StatusOr<ProcStat> ParseProcStat(std::string_view text,
                                 int64_t ticks_per_second = ClockTicksPerSecond());
StatusOr<ProcStat> ReadProcStat(pid_t pid, const std::string& root = "/");
StatusOr<ProcStat> ReadTaskStat(pid_t pid, pid_t tid, const std::string& root = "/");

// /proc/PID/status (proc.rst table 1-2): "Key:<tabs or spaces>value" lines. Counters missing
// from the text are -1.
struct ProcStatus {
  std::string name;                         // Name:
  char state = '?';                         // first letter of State:
  pid_t tgid = -1;                          // Tgid: the process a thread belongs to
  int threads = -1;                         // Threads:
  int64_t voluntary_ctxt_switches = -1;     // blocked or yielded
  int64_t nonvoluntary_ctxt_switches = -1;  // preempted: time slice over or a waker
  std::string cpus_allowed_list;            // e.g. "0-7"
  std::vector<int> cpus_allowed;            // cpus_allowed_list parsed
};
// Errors: kInvalidInput when Name: is absent or a counter is not a number (names the key).
StatusOr<ProcStatus> ParseProcStatus(std::string_view text);
StatusOr<ProcStatus> ReadProcStatus(pid_t pid, const std::string& root = "/");
StatusOr<ProcStatus> ReadTaskStatus(pid_t pid, pid_t tid, const std::string& root = "/");

// /proc/PID[/task/TID]/schedstat (sched-stats.rst): "run_ns wait_ns timeslices".
struct SchedStat {
  int64_t run_ns = 0;      // time spent on the CPU
  int64_t wait_ns = 0;     // time spent runnable, waiting on a run queue
  int64_t timeslices = 0;  // number of times run on a CPU
};
StatusOr<SchedStat> ParseSchedStat(std::string_view text);
StatusOr<SchedStat> ReadSchedStat(pid_t pid, const std::string& root = "/");
StatusOr<SchedStat> ReadTaskSchedStat(pid_t pid, pid_t tid, const std::string& root = "/");

// One thread of a process, merged from task/TID/{stat,comm,status,schedstat}.
struct ThreadInfo {
  pid_t tid = 0;
  std::string name;  // task/TID/comm: "tf_inter_op", "grpc_global_timer"...
  char state = '?';  // R, S, D, ...
  int64_t utime_ns = 0, stime_ns = 0;
  int64_t cpu_ns = 0;               // utime_ns + stime_ns
  int64_t voluntary_switches = -1;  // -1 when status lacks the counter
  int64_t involuntary_switches = -1;
  int64_t run_ns = -1, wait_ns = -1;  // schedstat; -1 without CONFIG_SCHED_INFO
  int processor = -1;
};
// Which files of a thread are read: kAll reads stat, comm, status and schedstat; kLean (an
// agent's sample, which keeps no thread names or run-queue waits) only stat and status: the name
// then comes from stat's comm field (the same 15 bytes) and run_ns/wait_ns stay -1.
enum class ThreadReads { kAll, kLean };
// Reads one thread. Errors: kNotFound when the thread (or process) has gone.
StatusOr<ThreadInfo> ReadThread(pid_t pid, pid_t tid, const std::string& root = "/",
                                ThreadReads reads = ThreadReads::kAll);
// Reads every thread under /proc/PID/task, sorted by tid; threads that exit mid-scan are
// skipped. Errors: kNotFound when the process has gone.
StatusOr<std::vector<ThreadInfo>> ReadThreads(pid_t pid, const std::string& root = "/",
                                              ThreadReads reads = ThreadReads::kAll);

// Online CPUs as sysconf(_SC_NPROCESSORS_ONLN) sees them.
int HostCpuCount();
// Number of "cpuN" lines in /proc/stat text (proc.rst 1.8); 0 when none.
int ParseProcStatCpuCount(std::string_view text);
StatusOr<int> ReadProcStatCpuCount(const std::string& root = "/");

// The node's CPU time so far, from /proc/stat's first line ("cpu  user nice system idle iowait
// irq softirq steal ...", proc(5)), clock ticks (USER_HZ): all eight of those fields summed, and
// steal, the time this VM's CPUs were runnable but the hypervisor ran other guests (0 on bare
// metal). guest and guest_nice are left out: user and nice already count them.
struct NodeCpuTicks {
  int64_t total = 0, steal = 0;
};
// Errors: kInvalidInput (naming the field) when the line is missing or a field is not an
// integer in [0, 2^56]; kernels before 2.6.11 have no steal field (then steal is 0).
StatusOr<NodeCpuTicks> ParseProcStatCpuTicks(std::string_view text);
// Reads ROOT/proc/stat and parses it; errors: those of the read (kNotFound, a symlink refused)
// and of the parse.
StatusOr<NodeCpuTicks> ReadNodeCpuTicks(const std::string& root = "/");
// Steal's share of the node's CPU time between two reads, percent in [0, 100]; -1 when no time
// passed.
double StealPct(const NodeCpuTicks& before, const NodeCpuTicks& after);

// /proc/PID/cmdline: NUL-separated argv (a trailing NUL does not add an empty argument). Kernel
// threads give an empty vector.
std::vector<std::string> ParseCmdline(std::string_view text);
// Reads at most kCmdlineMaxBytes (Linux's ARG_MAX ceiling is 6 MiB; TF flags come first): a
// longer command line is parsed from its first kCmdlineMaxBytes.
constexpr size_t kCmdlineMaxBytes = size_t{1} << 20;
StatusOr<std::vector<std::string>> ReadCmdline(pid_t pid, const std::string& root = "/");

// The value of environment variable `name` in NUL-separated environ text, or nullopt. Only the
// named entry is copied; nothing else is kept. The first occurrence wins (as getenv).
std::optional<std::string> FindEnvVar(std::string_view environ_text, std::string_view name);
// Streams /proc/PID/environ through a fixed buffer (wiped afterwards) and returns ONLY the value
// of `name`, or nullopt when unset. No other variable is kept, returned or logged; errors never
// quote the file's content. Errors: kInvalidInput for an empty name or one holding '=';
// kNotFound (process gone); kUnavailable (no ptrace rights over the process, EACCES).
// Bounds: the value is at most kEnvValueMaxBytes (kInvalidInput "longer than N bytes" past it)
// and at most kEnvironMaxBytes of environ are read (a process with CAP_SYS_RESOURCE can point
// its environ range anywhere, prctl(2) PR_SET_MM_ENV_END); past that the variable is unset.
// `environ_bytes` (optional): the bytes of environ read; 0 for an empty environment and for a
// process whose exec is under way (the kernel sets the new program's environment range last,
// and environ reads nothing before: environ_read in fs/proc/base.c).
constexpr size_t kEnvValueMaxBytes = size_t{1} << 20;
constexpr size_t kEnvironMaxBytes = size_t{16} << 20;
StatusOr<std::optional<std::string>> ReadEnvVar(pid_t pid, std::string_view name,
                                                const std::string& root = "/",
                                                size_t* environ_bytes = nullptr);

// Lists numeric entries of <root>/proc (processes; threads are not listed there), sorted.
StatusOr<std::vector<pid_t>> ListPids(const std::string& root = "/");

}  // namespace tfdiag
