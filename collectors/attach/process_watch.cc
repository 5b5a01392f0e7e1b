#include "collectors/attach/process_watch.h"

#include <poll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "collectors/procfs/proc_reader.h"

namespace tfdiag {

std::vector<pid_t> NewPidWatch::Next(const std::set<pid_t>& skip) {
  std::vector<pid_t> out;
  StatusOr<std::vector<pid_t>> all = ListPids(root_);
  if (!all.ok()) return out;
  std::set<pid_t> now(all->begin(), all->end());
  if (primed_) {
    for (pid_t p : now) {
      if (!listed_.count(p)) young_.emplace(p, Young{kLooks, seq_++});
    }
  }
  primed_ = true;
  // First looks before repeat looks, oldest first: under a flood of short-lived processes a
  // task still gets its first look within a few samples (before, a pid past the cap waited for
  // the full rescan: 9.2 s beside 100 new processes a second, up to 30 s at the defaults).
  std::vector<std::pair<uint64_t, pid_t>> first, again;
  for (auto it = young_.begin(); it != young_.end();) {
    if (!now.count(it->first) || skip.count(it->first)) {
      it = young_.erase(it);
      continue;
    }
    (it->second.looks == kLooks ? first : again).push_back({it->second.seq, it->first});
    ++it;
  }
  std::sort(first.begin(), first.end());
  std::sort(again.begin(), again.end());
  for (const auto* v : {&first, &again}) {
    for (const auto& [seq, pid] : *v) {
      if (out.size() >= kMaxPerSample) break;
      out.push_back(pid);
    }
  }
  if (first.size() > kMaxPerSample) capped_ += static_cast<int64_t>(first.size() - kMaxPerSample);
  for (pid_t p : out) {
    auto it = young_.find(p);
    if (--it->second.looks <= 0) young_.erase(it);
  }
  listed_ = std::move(now);
  return out;
}

ExitWatch::~ExitWatch() {
  for (const auto& [pid, fd] : fds_) ::close(fd);
}

bool ExitWatch::Add(pid_t pid) {
  if (fds_.count(pid)) return true;
#ifdef SYS_pidfd_open
  const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return false;
  fds_[pid] = fd;
  exited_.erase(pid);
  return true;
#else
  return false;
#endif
}

void ExitWatch::Poll(int timeout_ms) {
  if (fds_.empty()) {
    if (timeout_ms > 0) ::usleep(static_cast<useconds_t>(timeout_ms) * 1000);
    return;
  }
  std::vector<pollfd> p;
  std::vector<pid_t> pids;
  p.reserve(fds_.size());
  for (const auto& [pid, fd] : fds_) {
    p.push_back({fd, POLLIN, 0});
    pids.push_back(pid);
  }
  if (::poll(p.data(), p.size(), timeout_ms) <= 0) return;
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const TimeNs now = static_cast<TimeNs>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i].revents == 0) continue;
    exited_[pids[i]] = now;
    ::close(p[i].fd);
    fds_.erase(pids[i]);
  }
}

TimeNs ExitWatch::TakeExit(pid_t pid) {
  auto it = exited_.find(pid);
  if (it == exited_.end()) return 0;
  const TimeNs t = it->second;
  exited_.erase(it);
  return t;
}

void ExitWatch::Forget(pid_t pid) {
  if (auto it = fds_.find(pid); it != fds_.end()) {
    ::close(it->second);
    fds_.erase(it);
  }
  exited_.erase(pid);
}

}  // namespace tfdiag
