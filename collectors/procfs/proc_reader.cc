#include "collectors/procfs/proc_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "collectors/procfs/proc_io.h"
#include "core/escape.h"

namespace tfdiag {
using procfs_io::ErrnoStatus;
using procfs_io::FdCloser;
using procfs_io::ProcPath;
namespace {

// /proc/PID/{stat,status,schedstat,comm} are a few KiB (status lists cpus and memory nodes).
constexpr size_t kProcFileMaxBytes = size_t{1} << 20;
// How long a read of a file inside a workload's root may take (a local file: microseconds).
constexpr std::chrono::milliseconds kWorkloadReadTimeout{500};

}  // namespace

std::string_view Trim(std::string_view s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

namespace {

template <typename T>
bool ParseNum(std::string_view s, T* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> SplitWs(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t j = i;
    while (j < s.size() && !isspace(static_cast<unsigned char>(s[j]))) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

int64_t TicksToNs(int64_t ticks, int64_t per_second) {
  if (per_second <= 0) return 0;
  // Split to avoid overflow: ticks * 1e9 overflows int64 past ~292 years of ticks at 1 Hz.
  return (ticks / per_second) * 1000000000LL + (ticks % per_second) * 1000000000LL / per_second;
}

std::string TaskPath(const std::string& root, pid_t pid, pid_t tid, std::string_view file) {
  return RootedPath(root, fmt::format("/proc/{}/task/{}/{}", pid, tid, file));
}

template <typename T, typename Fn>
StatusOr<T> ReadAndParse(const std::string& path, Fn parse) {
  auto text = ReadKernelFile(path, kProcFileMaxBytes);
  if (!text.ok()) return text.status();
  StatusOr<T> r = parse(*text);
  if (!r.ok()) return r.status().WithPrefix(path);
  return r;
}

}  // namespace

std::string RootedPath(const std::string& root, std::string_view abs) {
  if (root.empty() || root == "/") return std::string(abs);
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  if (!abs.empty() && abs.front() != '/') r += '/';
  r.append(abs);
  return r;
}

namespace {

// Reads an open fd to its end, at most `max_bytes` (one more byte is tried, to tell a file of
// exactly `max_bytes` from a longer one). `truncate`: a longer file gives its prefix.
StatusOr<std::string> ReadFd(int fd, const std::string& path, size_t max_bytes, bool truncate) {
  std::string out;
  char buf[4096];
  for (;;) {
    const size_t want = std::min(sizeof(buf), max_bytes + 1 - out.size());
    ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > max_bytes) {
      if (truncate) {
        out.resize(max_bytes);
        break;
      }
      return InvalidInput("{}: larger than {} bytes", path, max_bytes);
    }
  }
  return out;
}

// Opens with `flags`; a directory is refused, and with `regular_only` anything but a regular
// file (a FIFO, device or socket: opened O_NONBLOCK by the caller, so the open did not wait).
StatusOr<std::string> OpenAndRead(const std::string& path, int flags, bool regular_only,
                                  size_t max_bytes, bool truncate) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) {
    if (errno == ELOOP && (flags & O_NOFOLLOW)) {
      return InvalidInput("{}: a symbolic link (not followed)", path);
    }
    return ErrnoStatus(path, errno);
  }
  FdCloser closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoStatus(path, errno);
  if (S_ISDIR(st.st_mode)) return InvalidInput("{}: is a directory", path);
  if (regular_only && !S_ISREG(st.st_mode)) return InvalidInput("{}: not a regular file", path);
  return ReadFd(fd, path, max_bytes, truncate);
}

}  // namespace

StatusOr<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  return OpenAndRead(path, O_RDONLY | O_CLOEXEC | O_NOCTTY, false, max_bytes, false);
}

StatusOr<std::string> ReadKernelFile(const std::string& path, size_t max_bytes, bool truncate) {
  return OpenAndRead(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW, true,
                     max_bytes, truncate);
}

namespace {

std::atomic<int> g_stuck_reads{0};

// A BoundedRead's result, shared by the caller and the reading thread (whichever ends last
// frees it).
struct ReadSlot {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<StatusOr<std::string>> result;
  bool abandoned = false;  // the caller gave up: the thread un-counts itself when it returns
};

}  // namespace

int StuckReads() { return g_stuck_reads.load(); }

StatusOr<std::string> BoundedRead(std::function<StatusOr<std::string>()> read,
                                  std::chrono::milliseconds timeout, std::string_view what) {
  if (g_stuck_reads.load() >= kMaxStuckReads) {
    return Status(StatusCode::kUnavailable,
                  fmt::format("{}: not read: {} earlier reads of workload files never returned",
                              what, kMaxStuckReads));
  }
  auto slot = std::make_shared<ReadSlot>();
  try {
    std::thread([slot, read = std::move(read)] {
      StatusOr<std::string> r = read();
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->result.emplace(std::move(r));
      if (slot->abandoned) g_stuck_reads.fetch_sub(1);
      slot->cv.notify_one();
    }).detach();
  } catch (const std::system_error& e) {
    return Status(StatusCode::kUnavailable, fmt::format("{}: no thread: {}", what, e.what()));
  }
  std::unique_lock<std::mutex> lock(slot->mu);
  if (!slot->cv.wait_for(lock, timeout, [&] { return slot->result.has_value(); })) {
    slot->abandoned = true;
    g_stuck_reads.fetch_add(1);
    return Status(StatusCode::kUnavailable,
                  fmt::format("{}: no answer within {} ms", what, timeout.count()));
  }
  return std::move(*slot->result);
}

StatusOr<std::string> ReadFileInRoot(pid_t pid, const std::string& rel, bool follow_last,
                                     const std::string& root, size_t max_bytes) {
  const std::string root_path = ProcPath(root, pid, "root");
  const std::string where = fmt::format("{} in the root of pid {}", rel, pid);
  auto read = [root_path, rel, follow_last, max_bytes, where]() -> StatusOr<std::string> {
    // /proc/PID/root is the kernel's magic link to the process's root: following it is the
    // point; everything after it is resolved by openat2 inside that root.
    int dir = ::open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return ErrnoStatus(root_path, errno);
    FdCloser dir_closer{dir};
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (follow_last ? 0 : O_NOFOLLOW);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, dir, rel.c_str(), &how, sizeof how);
    if (fd < 0) {
      const int err = errno;
      if (err == ENOSYS || err == E2BIG) {
        return Status(StatusCode::kUnavailable,
                      fmt::format("{}: not read: the kernel lacks openat2 (Linux 5.6), and a "
                                  "plain open could follow the workload's symlinks",
                                  where));
      }
      if (err == ELOOP) return InvalidInput("{}: a symbolic link (not followed)", where);
      if (err == EXDEV) return InvalidInput("{}: resolves through a magic link", where);
      return ErrnoStatus(where, err);
    }
    FdCloser closer{static_cast<int>(fd)};
    struct stat st;
    if (::fstat(static_cast<int>(fd), &st) != 0) return ErrnoStatus(where, errno);
    if (!S_ISREG(st.st_mode)) return InvalidInput("{}: not a regular file", where);
    return ReadFd(static_cast<int>(fd), where, max_bytes, false);
  };
  return BoundedRead(std::move(read), kWorkloadReadTimeout, where);
}

int64_t ClockTicksPerSecond() {
  static const int64_t ticks = [] {
    long t = ::sysconf(_SC_CLK_TCK);
    return t > 0 ? static_cast<int64_t>(t) : int64_t{100};
  }();
  return ticks;
}

StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  std::set<int> cpus;
  std::string_view s = Trim(text);
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = Trim(s.substr(0, comma));
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
    size_t dash = item.find('-');
    int lo = 0, hi = 0;
    bool ok = dash == std::string_view::npos
                  ? ParseNum(item, &lo) && (hi = lo, true)
                  : ParseNum(item.substr(0, dash), &lo) && ParseNum(item.substr(dash + 1), &hi);
    if (!ok || lo < 0 || hi < lo || hi - lo > 65535) {
      return InvalidInput("CPU list: bad element '{}' (expected N or N-M with N <= M)", item);
    }
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return std::vector<int>(cpus.begin(), cpus.end());
}

StatusOr<ProcStat> ParseProcStat(std::string_view text, int64_t ticks_per_second) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return InvalidInput("stat: no '(comm)' field");
  }
  ProcStat st;
  if (!ParseNum(Trim(text.substr(0, open)), &st.pid))
    return InvalidInput("stat: pid: not a number");
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  std::vector<std::string_view> f = SplitWs(text.substr(close + 1));
  // f[0] is field 3 (state) of proc.rst table 1-4, so field N is f[N - 3].
  if (f.size() < 20)
    return InvalidInput("stat: {} fields after comm, expected at least 20", f.size());
  auto num = [&](int field, auto* out, const char* name) -> Status {
    if (!ParseNum(f[field - 3], out)) {
      return InvalidInput("stat: {} (field {}): not a number: '{}'", name, field, f[field - 3]);
    }
    return OkStatus();
  };
  if (f[0].size() != 1) return InvalidInput("stat: state (field 3): '{}'", f[0]);
  st.state = f[0][0];
  TFDIAG_RETURN_IF_ERROR(num(4, &st.ppid, "ppid"));
  TFDIAG_RETURN_IF_ERROR(num(14, &st.utime_ticks, "utime"));
  TFDIAG_RETURN_IF_ERROR(num(15, &st.stime_ticks, "stime"));
  TFDIAG_RETURN_IF_ERROR(num(20, &st.num_threads, "num_threads"));
  TFDIAG_RETURN_IF_ERROR(num(22, &st.start_time_ticks, "starttime"));
  if (f.size() >= 37) TFDIAG_RETURN_IF_ERROR(num(39, &st.processor, "processor"));
  st.utime_ns = TicksToNs(st.utime_ticks, ticks_per_second);
  st.stime_ns = TicksToNs(st.stime_ticks, ticks_per_second);
  st.start_time_ns = TicksToNs(st.start_time_ticks, ticks_per_second);
  return st;
}

StatusOr<ProcStat> ReadProcStat(pid_t pid, const std::string& root) {
  return ReadAndParse<ProcStat>(ProcPath(root, pid, "stat"),
                                [](std::string_view t) { return ParseProcStat(t); });
}

StatusOr<ProcStat> ReadTaskStat(pid_t pid, pid_t tid, const std::string& root) {
  return ReadAndParse<ProcStat>(TaskPath(root, pid, tid, "stat"),
                                [](std::string_view t) { return ParseProcStat(t); });
}

StatusOr<ProcStatus> ParseProcStatus(std::string_view text) {
  ProcStatus st;
  bool have_name = false;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string_view value = Trim(line.substr(colon + 1));
    auto counter = [&](auto* out) -> Status {
      if (!ParseNum(value, out)) return InvalidInput("status: {}: not a number: '{}'", key, value);
      return OkStatus();
    };
    if (key == "Name") {
      st.name = std::string(value);
      have_name = true;
    } else if (key == "State") {
      if (!value.empty()) st.state = value[0];
    } else if (key == "Tgid") {
      TFDIAG_RETURN_IF_ERROR(counter(&st.tgid));
    } else if (key == "Threads") {
      TFDIAG_RETURN_IF_ERROR(counter(&st.threads));
    } else if (key == "voluntary_ctxt_switches") {
      TFDIAG_RETURN_IF_ERROR(counter(&st.voluntary_ctxt_switches));
    } else if (key == "nonvoluntary_ctxt_switches") {
      TFDIAG_RETURN_IF_ERROR(counter(&st.nonvoluntary_ctxt_switches));
    } else if (key == "Cpus_allowed_list") {
      st.cpus_allowed_list = std::string(value);
      auto cpus = ParseCpuList(value);
      if (!cpus.ok()) return cpus.status().WithPrefix("status: Cpus_allowed_list");
      st.cpus_allowed = std::move(*cpus);
    }
  }
  if (!have_name) return InvalidInput("status: no Name: line");
  return st;
}

StatusOr<ProcStatus> ReadProcStatus(pid_t pid, const std::string& root) {
  return ReadAndParse<ProcStatus>(ProcPath(root, pid, "status"), ParseProcStatus);
}

StatusOr<ProcStatus> ReadTaskStatus(pid_t pid, pid_t tid, const std::string& root) {
  return ReadAndParse<ProcStatus>(TaskPath(root, pid, tid, "status"), ParseProcStatus);
}

StatusOr<SchedStat> ParseSchedStat(std::string_view text) {
  std::vector<std::string_view> f = SplitWs(text);
  SchedStat s;
  if (f.size() < 3 || !ParseNum(f[0], &s.run_ns) || !ParseNum(f[1], &s.wait_ns) ||
      !ParseNum(f[2], &s.timeslices)) {
    return InvalidInput("schedstat: expected 'run_ns wait_ns timeslices'");
  }
  return s;
}

StatusOr<SchedStat> ReadSchedStat(pid_t pid, const std::string& root) {
  return ReadAndParse<SchedStat>(ProcPath(root, pid, "schedstat"), ParseSchedStat);
}

StatusOr<SchedStat> ReadTaskSchedStat(pid_t pid, pid_t tid, const std::string& root) {
  return ReadAndParse<SchedStat>(TaskPath(root, pid, tid, "schedstat"), ParseSchedStat);
}

StatusOr<ThreadInfo> ReadThread(pid_t pid, pid_t tid, const std::string& root, ThreadReads reads) {
  auto stat = ReadTaskStat(pid, tid, root);
  if (!stat.ok()) return stat.status();
  ThreadInfo t;
  t.tid = tid;
  t.state = stat->state;
  t.utime_ns = stat->utime_ns;
  t.stime_ns = stat->stime_ns;
  t.cpu_ns = t.utime_ns + t.stime_ns;
  t.processor = stat->processor;
  // comm holds the same 15 bytes as stat's field 2; read it to follow proc.rst's advice, and
  // fall back to stat when it is missing (fake roots, old kernels).
  auto comm = reads == ThreadReads::kLean
                  ? StatusOr<std::string>(NotFound("comm not read"))
                  : ReadKernelFile(TaskPath(root, pid, tid, "comm"), kProcFileMaxBytes);
  if (comm.ok()) {
    std::string_view c = *comm;
    if (!c.empty() && c.back() == '\n') c.remove_suffix(1);
    t.name = std::string(c);
  } else if (comm.status().code() == StatusCode::kNotFound) {
    t.name = stat->comm;
  } else {
    return comm.status();
  }
  auto status = ReadTaskStatus(pid, tid, root);
  if (!status.ok()) return status.status();
  t.voluntary_switches = status->voluntary_ctxt_switches;
  t.involuntary_switches = status->nonvoluntary_ctxt_switches;
  if (reads == ThreadReads::kLean) return t;
  auto sched = ReadTaskSchedStat(pid, tid, root);
  if (sched.ok()) {
    t.run_ns = sched->run_ns;
    t.wait_ns = sched->wait_ns;
  }
  return t;
}

namespace {

StatusOr<std::vector<pid_t>> ListNumericDir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoStatus(dir, errno);
  std::vector<pid_t> ids;
  while (struct dirent* e = ::readdir(d)) {
    pid_t id = 0;
    if (ParseNum(std::string_view(e->d_name), &id) && id > 0) ids.push_back(id);
  }
  ::closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

StatusOr<std::vector<ThreadInfo>> ReadThreads(pid_t pid, const std::string& root,
                                              ThreadReads reads) {
  auto tids = ListNumericDir(ProcPath(root, pid, "task"));
  if (!tids.ok()) return tids.status();
  std::vector<ThreadInfo> out;
  out.reserve(tids->size());
  for (pid_t tid : *tids) {
    auto t = ReadThread(pid, tid, root, reads);
    if (t.ok()) {
      out.push_back(std::move(*t));
    } else if (t.status().code() != StatusCode::kNotFound) {
      return t.status();
    }
  }
  // If every thread vanished, so has the process.
  if (out.empty() && !tids->empty()) return NotFound("process {} exited during the scan", pid);
  return out;
}

int HostCpuCount() {
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

int ParseProcStatCpuCount(std::string_view text) {
  int n = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() > 3 && line.substr(0, 3) == "cpu" &&
        isdigit(static_cast<unsigned char>(line[3]))) {
      ++n;
    }
  }
  return n;
}

StatusOr<int> ReadProcStatCpuCount(const std::string& root) {
  auto text = ReadKernelFile(RootedPath(root, "/proc/stat"));
  if (!text.ok()) return text.status();
  return ParseProcStatCpuCount(*text);
}

StatusOr<NodeCpuTicks> ParseProcStatCpuTicks(std::string_view text) {
  const size_t nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  if (line.substr(0, 4) != "cpu ") {
    return InvalidInput(
        "/proc/stat: expected a first line \"cpu  user nice system ...\", got \"{}\"",
        Printable(line.substr(0, 40)));
  }
  line.remove_prefix(4);
  static constexpr const char* kFields[] = {"user",   "nice", "system",  "idle",
                                            "iowait", "irq",  "softirq", "steal"};
  NodeCpuTicks t;
  for (int f = 0; f < 8; ++f) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty() && f == 7) break;  // before Linux 2.6.11: no steal
    size_t end = line.find(' ');
    std::string_view word = line.substr(0, end);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    // A field past 2^56 ticks (2^56 / 100 Hz is 22 million years of one CPU) is not a counter:
    // refused, so that the sum of eight cannot overflow.
    if (ec != std::errc() || p != word.data() + word.size() || v < 0 || v > (int64_t{1} << 56)) {
      return InvalidInput("/proc/stat: cpu field {} ({}): expected ticks >= 0, got \"{}\"", f + 1,
                          kFields[f], Printable(word.substr(0, 24)));
    }
    t.total += v;
    if (f == 7) t.steal = v;
    line = end == std::string_view::npos ? std::string_view() : line.substr(end);
  }
  return t;
}

StatusOr<NodeCpuTicks> ReadNodeCpuTicks(const std::string& root) {
  auto text = ReadKernelFile(RootedPath(root, "/proc/stat"));
  if (!text.ok()) return text.status();
  return ParseProcStatCpuTicks(*text);
}

double StealPct(const NodeCpuTicks& before, const NodeCpuTicks& after) {
  const int64_t total = after.total - before.total;
  if (total <= 0) return -1;
  // At most 100: steal counters have jumped after a VM's live migration (a guest's clock source
  // and the host's disagreeing), and a share over the whole is not one.
  return std::min(100.0,
                  100.0 * double(std::max<int64_t>(0, after.steal - before.steal)) / double(total));
}

std::vector<std::string> ParseCmdline(std::string_view text) {
  std::vector<std::string> argv;
  while (!text.empty()) {
    size_t nul = text.find('\0');
    argv.emplace_back(text.substr(0, nul));
    if (nul == std::string_view::npos) break;
    text.remove_prefix(nul + 1);
  }
  return argv;
}

StatusOr<std::vector<std::string>> ReadCmdline(pid_t pid, const std::string& root) {
  auto text = ReadKernelFile(ProcPath(root, pid, "cmdline"), kCmdlineMaxBytes, true);
  if (!text.ok()) return text.status();
  return ParseCmdline(*text);
}

StatusOr<std::vector<pid_t>> ListPids(const std::string& root) {
  return ListNumericDir(RootedPath(root, "/proc"));
}

}  // namespace tfdiag
