// The scheduling probe (sched.bpf.c): per-thread voluntary/involuntary context switches and
// on-CPU time, and per-process run-queue latency, for the processes added with AddProcess().
// Attaches to sched_switch, sched_wakeup and sched_wakeup_new as tp_btf (BTF-enabled raw
// tracepoints), else as plain raw tracepoints, chosen by probing at Open() (no tracefs, no
// kprobes). Counters are cumulative since Open().
// Thread-safety: not thread-safe; one owner calls AddProcess/Drain. Owns kernel objects: no copy.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "collectors/bpf/bpf_util.h"
#include "core/status.h"

struct sched_bpf;

namespace tfdiag {

constexpr int kRunqSlots = 32;  // log2 ns buckets, as tfdiag_sched_hist

struct SchedCounts {
  int64_t voluntary = 0;                        // switches while blocking (the kernel's nvcsw)
  int64_t involuntary = 0;                      // preemptions while runnable (nivcsw)
  int64_t oncpu_ns = 0;                         // ns on a CPU, summed over threads
  int64_t runq_wait_ns = 0;                     // total run-queue wait, ns
  int64_t runq_waits = 0;                       // waits measured
  std::array<int64_t, kRunqSlots> runq_hist{};  // waits in [2^i, 2^(i+1)) ns
};

class SchedCollector {
 public:
  // Opens, loads and attaches the probe in the flavours `want` allows (kAuto: tp_btf, then
  // raw_tp). Errors: kInternal naming the attach types tried, the failed step and errno.
  static StatusOr<std::unique_ptr<SchedCollector>> Open(BpfAttach want = BpfAttach::kAuto);
  // "tp_btf" or "raw_tp": what attached.
  const std::string& attach_type() const { return attach_type_; }
  ~SchedCollector();
  SchedCollector(const SchedCollector&) = delete;
  SchedCollector& operator=(const SchedCollector&) = delete;

  // Starts following the threads of process `tgid`. Errors: kInternal (a map update failed).
  Status AddProcess(uint32_t tgid);
  // Per-tgid totals so far (threads summed; exited threads keep their counts).
  StatusOr<std::map<uint32_t, SchedCounts>> Drain() const;
  // Per-thread voluntary/involuntary counts of one process, by tid (for tests).
  StatusOr<std::map<uint32_t, std::pair<int64_t, int64_t>>> ThreadSwitches(uint32_t tgid) const;

 private:
  struct Deleter {
    void operator()(sched_bpf* s) const;
  };
  SchedCollector(std::unique_ptr<sched_bpf, Deleter> skel, std::string type)
      : skel_(std::move(skel)), attach_type_(std::move(type)) {}
  std::unique_ptr<sched_bpf, Deleter> skel_;
  std::string attach_type_;
};

}  // namespace tfdiag
