#include "collectors/attach/traffic_table.h"

namespace tfdiag {

void TrafficTable::Observe(TimeNs now, const std::vector<SocketTraffic>& drain,
                           const std::function<PeerMatch(const SocketTraffic&)>& match,
                           const std::function<StatusOr<SocketTraffic>(const SocketKey&)>& take) {
  ++generation_;
  size_t live_other = 0;
  for (const SocketTraffic& d : drain) {
    auto [it, fresh] = live_.try_emplace(d.key);
    Socket& s = it->second;
    s.generation = generation_;
    if (fresh || d.bytes_sent != s.last.bytes_sent || d.bytes_received != s.last.bytes_received) {
      s.changed = now;
      s.idle_samples = 0;
    } else {
      ++s.idle_samples;
    }
    s.last = d;
    if (!s.match.resolved) {
      PeerMatch m = match(d);
      if (m.resolved) {
        Folded& f = folded_[d.tgid];
        if (f.admitted.count(m.peer) || f.admitted.size() < limits_.max_peers) {
          f.admitted.insert(m.peer);
          s.match = std::move(m);
        }
      }
    }
    if (!s.match.resolved) ++live_other;
  }
  const bool fold_all_other = live_other > limits_.max_live_other;
  for (auto it = live_.begin(); it != live_.end();) {
    const Socket& s = it->second;
    bool fold;
    if (s.generation != generation_) {
      fold = true;  // gone from the kernel map (not by us): keep what it counted
    } else if (!s.match.resolved) {
      fold = s.idle_samples >= 1 || fold_all_other;
    } else {
      fold = limits_.resolved_idle_ns > 0 && now - s.changed >= limits_.resolved_idle_ns;
    }
    if (!fold) {
      ++it;
      continue;
    }
    SocketTraffic final_counts = s.last;
    if (s.generation == generation_) {
      StatusOr<SocketTraffic> t = take(it->first);
      // Counters only grow; a socket that moved bytes since the drain gives its later total.
      if (t.ok() && t->bytes_sent >= s.last.bytes_sent &&
          t->bytes_received >= s.last.bytes_received) {
        final_counts = *t;
      }
    }
    Fold(s, final_counts);
    it = live_.erase(it);
  }
}

void TrafficTable::Fold(const Socket& s, const SocketTraffic& c) {
  Folded& f = folded_[s.last.tgid];
  if (!s.match.resolved) {
    ++f.other_sockets;
    f.other_sent += c.bytes_sent;
    f.other_received += c.bytes_received;
    return;
  }
  LivePeerFigures& p = f.peers[s.match.peer];
  p.peer = s.match.peer;
  p.peer_task = s.match.peer_task;
  p.hdfs = s.match.hdfs;
  p.bytes_sent += c.bytes_sent;
  p.bytes_received += c.bytes_received;
}

std::map<uint32_t, TrafficTable::ProcessFigures> TrafficTable::Figures() const {
  std::map<uint32_t, std::map<std::string, LivePeerFigures>> peers;
  std::map<uint32_t, ProcessFigures> out;
  for (const auto& [tgid, f] : folded_) {
    ProcessFigures& o = out[tgid];
    o.other_sockets = f.other_sockets;
    o.other_sent = f.other_sent;
    o.other_received = f.other_received;
    peers[tgid] = f.peers;
  }
  for (const auto& [key, s] : live_) {
    ProcessFigures& o = out[key.tgid];
    if (!s.match.resolved) {
      o.other_sent += s.last.bytes_sent;
      o.other_received += s.last.bytes_received;
      continue;
    }
    LivePeerFigures& p = peers[key.tgid][s.match.peer];
    p.peer = s.match.peer;
    p.peer_task = s.match.peer_task;
    p.hdfs = s.match.hdfs;
    p.bytes_sent += s.last.bytes_sent;
    p.bytes_received += s.last.bytes_received;
  }
  for (auto& [tgid, o] : out) {
    for (auto& [name, p] : peers[tgid]) {
      if (p.hdfs) o.hdfs_read_bytes += p.bytes_received;
      o.peers.push_back(std::move(p));
    }
    if (o.other_sent + o.other_received > 0) {
      o.peers.push_back({"other", "", false, o.other_sent, o.other_received});
    }
  }
  return out;
}

void TrafficTable::ForEachLiveResolved(
    const std::function<void(const SocketTraffic&, const PeerMatch&)>& fn) const {
  for (const auto& [key, s] : live_) {
    if (s.match.resolved) fn(s.last, s.match);
  }
}

void TrafficTable::Forget(uint32_t tgid,
                          const std::function<StatusOr<SocketTraffic>(const SocketKey&)>& take) {
  folded_.erase(tgid);
  for (auto it = live_.begin(); it != live_.end();) {
    if (it->first.tgid != tgid) {
      ++it;
      continue;
    }
    (void)take(it->first);  // gone already is fine
    it = live_.erase(it);
  }
}

}  // namespace tfdiag
