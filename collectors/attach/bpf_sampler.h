// The eBPF side of `tfdiag attach`: opens the sched and traffic probes for the recorded
// processes (or says why not: no BTF, no rights, a failed step) and, every sample, drains them
// into TrafficRow/SchedRow rows. Remote ip:port become TF tasks through the cluster spec of the
// recorded tasks (resolving host names once), or through the local address of another
// recorded process's socket; remote ports in `hdfs_ports` count as HDFS input. Every other
// peer folds into "other", and sockets are folded out of the kernel map as traffic_table.h
// says, so memory and per-sample work stay bounded under any number of connections.
// Rows: one per live TF/HDFS socket per sample, plus one per process for peer "other" (local
// "", cumulative bytes of all its "other" sockets).
// Thread-safety: not thread-safe; owned by the recorder's thread.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "collectors/attach/traffic_table.h"
#include "collectors/bpf/sched_collector.h"
#include "collectors/bpf/traffic_collector.h"
#include "collectors/discovery/discovery.h"
#include "core/capture_builder.h"
#include "core/live_figures.h"

namespace tfdiag {

// What a bundle lacks without the probes, for the warnings of `attach` without eBPF.
inline constexpr char kWithoutBpf[] =
    "this bundle has no traffic matrix, no HDFS input rate and no run-queue latency (CPU, "
    "threads and context switches come from /proc only)";

class BpfSampler {
 public:
  // Opens what can be opened, in the attach flavours `attach` allows; each failure becomes one
  // line in `warnings` saying what is missing. `tasks` are the recorded tasks, `builder` gets
  // peer tasks from the cluster spec (AddTask).
  BpfSampler(const std::vector<TfTask>& tasks, const std::vector<int>& hdfs_ports, BpfAttach attach,
             const TrafficTableLimits& limits, CaptureBuilder* builder,
             std::vector<std::string>* warnings);
  BpfSampler(const BpfSampler&) = delete;
  BpfSampler& operator=(const BpfSampler&) = delete;

  bool any() const { return sched_ != nullptr || traffic_ != nullptr; }
  // "sched(tp_btf),traffic(tp_btf)", "" when none runs.
  std::string probes() const;
  // Follows process `pid` (task `label`, builder task `task`), whose rows go to builder
  // process `process`.
  void Add(int32_t pid, uint32_t process, uint32_t task, const std::string& label);
  // Drops what is kept for process `pid` (a gone task the agent stopped reporting).
  void Forget(int32_t pid);
  // Addresses of cluster specs learned at most, over every task (each costs ~300 bytes in the
  // sampler's and the builder's tables): 65,536 is 16 jobs of 4,096 tasks.
  static constexpr size_t kMaxSpecAddresses = 65536;
  // Learns the addresses of `task`'s cluster spec (peers named by task; agent rescans), at most
  // kMaxSpecAddresses in all; past it the rest are counted (spec_addresses_dropped, once per
  // task), the first time with a warning.
  void AddClusterSpec(const TfTask& task);
  int64_t spec_addresses_dropped() const { return spec_addresses_dropped_; }
  // Drains both probes; adds rows (when `keep_rows`) for the processes in `emit` (pids) and
  // fills figures.tasks[i] for figure_of[pid] = i. Errors are counted and reported once.
  void Sample(TimeNs now, const std::vector<int32_t>& emit, bool keep_rows,
              const std::map<int32_t, size_t>& figure_of, LiveFigures* figures);
  const SchedCollector* sched() const { return sched_.get(); }

 private:
  PeerMatch Match(const SocketTraffic& s,
                  const std::map<std::string, std::pair<std::string, uint32_t>>& by_local) const;
  void SampleTraffic(TimeNs now, const std::vector<int32_t>& emit, bool keep_rows,
                     const std::map<int32_t, size_t>& figure_of, LiveFigures* figures);

  CaptureBuilder* b_;
  std::vector<std::string>* warnings_;
  std::unique_ptr<SchedCollector> sched_;
  std::unique_ptr<TrafficCollector> traffic_;
  std::vector<int> hdfs_ports_;
  std::map<int32_t, uint32_t> process_of_;                           // pid -> builder process
  std::map<std::string, std::pair<std::string, uint32_t>> task_at_;  // "ip:port" -> label, task
  std::map<int32_t, std::pair<std::string, uint32_t>> task_of_pid_;  // pid -> label, task
  std::map<uint32_t, std::string> addr_of_task_;                     // task -> spec "ip:port"
  TrafficTable table_;
  bool drain_failed_ = false;
  int64_t spec_addresses_dropped_ = 0;
  std::set<int32_t> cut_;  // pids whose spec was cut (counted once each; one entry per task)
};

}  // namespace tfdiag
