// Two watches an agent keeps between its full rescans of the node
// (collectors/attach/recorder_tasks.cc), so that a task started after the agent is counted from
// its first second, not from the next rescan (issue 36: a 40 s job found by the default 30 s
// rescan lost up to 30 s of its bytes).
//  - NewPidWatch: every sample, the pids of <root>/proc that were not listed at the previous
//    sample (one readdir of /proc, no file of the process opened), each offered for inspection on
//    its first kLooks samples, at most kMaxPerSample a sample: a process inspected between fork()
//    and execve() still shows its parent's environment, so it is looked at again once it ran the
//    program it was started for. First looks go before repeat looks, the oldest first; pids past
//    the cap wait for the next sample (while they live), not for the full rescan.
//  - ExitWatch: a pidfd (pidfd_open(2), Linux >= 5.3) per live task, polled while the recorder
//    waits for its next sample, so a task's exit time is known as the poll returns (to
//    milliseconds), not to the sampling interval. Without pidfds (an old kernel, EMFILE) a task has
//    no exit time of its own and the recorder uses the sample that found it gone.
// Both open no path a workload controls (/proc's directory listing; pidfds name pids).
// Thread-safety: not thread-safe; owned by the recorder's thread. ExitWatch owns its fds: no copy.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

class NewPidWatch {
 public:
  static constexpr int kLooks = 3;  // samples a new pid is offered on
  // Pids offered per sample at most: 100 new processes a second that live a second each (a
  // build's compilers) put about 100 new pids in every listing; at 64 a task among them could
  // wait a sample more (AgentFlood). A look is 4 small /proc reads (the environment's bytes are
  // bounded apart).
  static constexpr size_t kMaxPerSample = 256;
  explicit NewPidWatch(std::string root = "/") : root_(std::move(root)) {}
  // Lists <root>/proc and returns the pids to inspect now: those new since the last call (the
  // first call only records the listing and returns none: the full scan covered them) and those
  // still within their kLooks samples, at most kMaxPerSample, first looks first (oldest first).
  // `skip` (tracked tasks) are never offered. An unreadable /proc returns none.
  std::vector<pid_t> Next(const std::set<pid_t>& skip);
  // Offers `pid` again on its next kLooks samples while it is listed: a tracked task exited and
  // a new process may have its pid (pid reuse: not new to the listing, so not offered else).
  void Offer(pid_t pid) { young_[pid] = Young{kLooks, seq_++}; }
  // Pids seen so far that are still listed (for tests and the agent's bound: one entry per live
  // process).
  size_t listed() const { return listed_.size(); }
  // First looks deferred to a later sample by the cap, summed over samples.
  int64_t capped() const { return capped_; }

 private:
  std::string root_;
  bool primed_ = false;
  std::set<pid_t> listed_;
  struct Young {
    int looks = kLooks;  // looks left
    uint64_t seq = 0;    // order first listed: the oldest is looked at first
  };
  std::map<pid_t, Young> young_;
  uint64_t seq_ = 0;
  int64_t capped_ = 0;
};

class ExitWatch {
 public:
  ExitWatch() = default;
  ~ExitWatch();
  ExitWatch(const ExitWatch&) = delete;
  ExitWatch& operator=(const ExitWatch&) = delete;
  // Starts watching `pid`; false when no pidfd could be opened (then it has no exit time).
  bool Add(pid_t pid);
  // Waits up to `timeout_ms` for an exit; exits seen are stamped with CLOCK_REALTIME ns and
  // their pidfds closed.
  void Poll(int timeout_ms);
  // The exit time of `pid` (CLOCK_REALTIME ns) once seen, else 0; forgets it.
  TimeNs TakeExit(pid_t pid);
  void Forget(pid_t pid);
  size_t watching() const { return fds_.size(); }

 private:
  std::map<pid_t, int> fds_;        // pid -> pidfd
  std::map<pid_t, TimeNs> exited_;  // pid -> exit time
};

}  // namespace tfdiag
