// The agent's table of recorded processes' sockets and peers, between the eBPF traffic probe's
// kernel map (traffic_collector.h) and the figures (/metrics) and bundle rows. It keeps memory,
// per-sample work and the peers of every task bounded whatever the node's traffic: 10,000 short
// connections to a PS port leave one peer "other", not 10,000 peers.
//
// Each sample, every socket of the drain is matched to its peer once (the match sticks):
//  - a TF task (cluster spec address, or the local address of another recorded process's socket),
//    named by the task's spec address; or an HDFS DataNode (a --hdfs-port remote), by ip:port;
//  - else "other" (clients, health checks, scans, ...).
// Then sockets are folded out of the table and removed from the kernel map (`take`):
//  - "other" sockets that moved no byte over the last sample (closed short connections), or all
//    of them at once when more than `max_live_other` are live;
//  - TF/HDFS sockets idle for `resolved_idle_ns` (0 never: a recording keeps one row series per
//    socket, which the analysis reads by socket);
// and their final counters are added to the process's per-peer totals, so totals never go back.
// A process has at most `max_peers` TF/HDFS peers; sockets to more peers count as "other".
// Memory: O(sockets moving bytes within about one sample + tasks x peers); never per socket ever.
// Thread-safety: not thread-safe; owned by the recorder's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "collectors/bpf/traffic_collector.h"
#include "core/capture.h"
#include "core/live_figures.h"
#include "core/status.h"

namespace tfdiag {

struct TrafficTableLimits {
  // Live "other" sockets kept apart before all are folded at once (about 200 B each). Past it,
  // a socket folded while still moving bytes comes back as a new one, and the bytes of a call
  // in flight at that instant may be lost (TrafficCollector::Take).
  size_t max_live_other = 4096;
  TimeNs resolved_idle_ns = 0;  // fold TF/HDFS sockets idle this long, ns; 0 never
  size_t max_peers = 1024;      // TF task + HDFS DataNode peers per process
};

// What a socket's remote is. `resolved` false: "other".
struct PeerMatch {
  bool resolved = false;
  std::string peer;                     // TF task: its spec "ip:port"; HDFS: the remote "ip:port"
  std::string peer_task;                // "ps:0"; "" for HDFS
  uint32_t peer_task_index = kNoIndex;  // CaptureBuilder task index; kNoIndex for HDFS
  bool hdfs = false;
};

class TrafficTable {
 public:
  explicit TrafficTable(const TrafficTableLimits& limits) : limits_(limits) {}

  // One drain of the kernel map at `now`. `match` names a socket's peer (called once per socket
  // until it resolves); `take` removes a folded socket from the kernel map and returns its final
  // counters (on error the drained ones are used). Sockets missing from `drain` that the table
  // still holds are folded with their last counters.
  void Observe(TimeNs now, const std::vector<SocketTraffic>& drain,
               const std::function<PeerMatch(const SocketTraffic&)>& match,
               const std::function<StatusOr<SocketTraffic>(const SocketKey&)>& take);

  // Per process (tgid): its peers (TF/HDFS by peer, then "other" when it has bytes), live and
  // folded sockets summed; bytes received from HDFS; sockets folded into "other".
  struct ProcessFigures {
    std::vector<LivePeerFigures> peers;
    int64_t hdfs_read_bytes = 0;
    int64_t other_sockets = 0;
    int64_t other_sent = 0, other_received = 0;  // bytes, folded and live "other" sockets
  };
  std::map<uint32_t, ProcessFigures> Figures() const;

  // The live TF/HDFS sockets (one bundle row each), in no particular order.
  void ForEachLiveResolved(
      const std::function<void(const SocketTraffic&, const PeerMatch&)>& fn) const;

  // Forgets process `tgid` (a gone task the agent dropped), taking its sockets out of the
  // kernel map with `take`.
  void Forget(uint32_t tgid, const std::function<StatusOr<SocketTraffic>(const SocketKey&)>& take);

  size_t live_sockets() const { return live_.size(); }
  size_t processes() const { return folded_.size(); }

 private:
  struct Socket {
    SocketTraffic last;  // the latest drained counters
    PeerMatch match;
    TimeNs changed = 0;    // when its counters last moved
    int idle_samples = 0;  // samples in a row without a byte
    uint64_t generation = 0;
  };
  struct Folded {
    std::map<std::string, LivePeerFigures> peers;  // by peer
    std::set<std::string> admitted;                // TF/HDFS peers seen (<= max_peers)
    int64_t other_sockets = 0, other_sent = 0, other_received = 0;
  };
  void Fold(const Socket& s, const SocketTraffic& final_counts);

  TrafficTableLimits limits_;
  uint64_t generation_ = 0;
  std::unordered_map<SocketKey, Socket, SocketKeyHash> live_;
  std::map<uint32_t, Folded> folded_;  // tgid ->
};

}  // namespace tfdiag
