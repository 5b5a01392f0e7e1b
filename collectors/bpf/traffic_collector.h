// The traffic probe (traffic.bpf.c): bytes sent and received per IPv4 socket of the processes
// added with AddProcess(), keyed by local and remote address and port, counted from the return
// values of sock_sendmsg()/sock_recvmsg() (the sock:sock_send_length and sock:sock_recv_length
// tracepoints, Linux >= 6.3), so every send/recv/read/write on a socket counts once.
//
// Attach type, chosen by probing at Open(): tp_btf (BTF-typed raw tracepoint) first, then a
// plain raw tracepoint (or forced: BpfAttach, `tfdiag attach --bpf-attach`). Not used: fentry/fexit
// on tcp_sendmsg/tcp_recvmsg (needs BTF trampolines, which the dev kernel lacks:
// BPF_PROG_TYPE_TRACING is refused), kprobes (not available), tcp:tcp_probe (fires on ACK
// processing, not per byte sent by a process). Counters are cumulative since Open(), per socket
// while the socket is in the kernel map.
//
// Bound: the kernel map holds TFDIAG_TRAFFIC_MAX_SOCKETS (65,536) sockets and keeps closed ones
// until user space removes them with Take(); the owner (bpf_sampler.h) takes every socket it
// folds, each sample, so the map holds the sockets that moved bytes lately, not every socket ever.
// A socket that finds the map full is not counted; Untracked() says how many.
// Thread-safety: one owner; owns kernel objects: no copy.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collectors/bpf/bpf_util.h"
#include "core/status.h"

struct traffic_bpf;

namespace tfdiag {

// One socket as the kernel map keys it (traffic.h's tfdiag_traffic_key): addresses in network
// byte order, local port in host order, remote port in network order.
struct SocketKey {
  uint32_t tgid = 0, local_ip = 0, remote_ip = 0;
  uint16_t local_port = 0, remote_port = 0;
  bool operator==(const SocketKey& o) const {
    return tgid == o.tgid && local_ip == o.local_ip && remote_ip == o.remote_ip &&
           local_port == o.local_port && remote_port == o.remote_port;
  }
};
struct SocketKeyHash {
  size_t operator()(const SocketKey& k) const {
    const uint64_t a = (uint64_t{k.tgid} << 32) | k.local_ip;
    const uint64_t b =
        (uint64_t{k.remote_ip} << 32) | (uint64_t{k.local_port} << 16) | k.remote_port;
    return std::hash<uint64_t>()(a * 0x9E3779B97F4A7C15ull ^ b);
  }
};

struct SocketTraffic {
  SocketKey key;
  uint32_t tgid = 0;
  std::string local, remote;  // "127.0.0.1:47932"
  uint16_t remote_port = 0;   // host byte order
  int64_t bytes_sent = 0, bytes_received = 0;
  int64_t sends = 0, receives = 0;  // calls that moved bytes
};

class TrafficCollector {
 public:
  // Opens, loads and attaches in the flavours `want` allows (kAuto: tp_btf, then raw_tp).
  // Errors: kInternal naming the attach types tried, the failed step and errno.
  static StatusOr<std::unique_ptr<TrafficCollector>> Open(BpfAttach want = BpfAttach::kAuto);
  ~TrafficCollector();
  TrafficCollector(const TrafficCollector&) = delete;
  TrafficCollector& operator=(const TrafficCollector&) = delete;

  // "tp_btf" or "raw_tp": what attached.
  const std::string& attach_type() const { return attach_type_; }
  // Starts counting the sockets of process `tgid`. Errors: kInternal (a map update failed).
  Status AddProcess(uint32_t tgid);
  // Every socket in the kernel map, cumulative (closed sockets keep their totals until taken).
  // Errors: none today (a socket removed mid-walk is skipped).
  StatusOr<std::vector<SocketTraffic>> Drain() const;
  // Removes socket `key` from the kernel map and returns its final counters, read and deleted
  // in one step (BPF_MAP_LOOKUP_AND_DELETE_ELEM, Linux >= 5.14 for hash maps; lookup then delete
  // before that). Bytes a send/recv adds in the instant between the probe's lookup and its
  // add may be lost (at most one call per CPU). If the socket moves bytes again, it starts
  // from 0. Errors: kNotFound when the map has no such socket; kInternal with errno.
  StatusOr<SocketTraffic> Take(const SocketKey& key);
  // Sockets the probe could not count because the kernel map was full, since Open().
  int64_t Untracked() const;

 private:
  struct Deleter {
    void operator()(traffic_bpf* s) const;
  };
  TrafficCollector(std::unique_ptr<traffic_bpf, Deleter> skel, std::string type)
      : skel_(std::move(skel)), attach_type_(std::move(type)) {}
  std::unique_ptr<traffic_bpf, Deleter> skel_;
  std::string attach_type_;
  bool lookup_and_delete_unsupported_ = false;
};

}  // namespace tfdiag
