// The traffic probe (traffic.bpf.c): bytes sent and received per IPv4 socket of the processes
// added with AddProcess(), keyed by local and remote address and port, counted from the return
// values of sock_sendmsg()/sock_recvmsg() (the sock:sock_send_length and sock:sock_recv_length
// tracepoints, Linux >= 6.3), so every send/recv/read/write on a socket counts once.
//
// Attach type, chosen by probing at Open(): tp_btf (BTF-typed raw tracepoint) first, then a
// plain raw tracepoint (or forced: BpfAttach, `tfdiag attach --bpf-attach`). Not used: fentry/fexit
// on tcp_sendmsg/tcp_recvmsg (needs BTF trampolines, which the dev kernel lacks:
// BPF_PROG_TYPE_TRACING is refused), kprobes (not available), tcp:tcp_probe (fires on ACK
// processing, not per byte sent by a process). Counters are cumulative since Open(). Thread-safety:
// one owner; owns kernel objects: no copy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectors/bpf/bpf_util.h"
#include "core/status.h"

struct traffic_bpf;

namespace tfdiag {

struct SocketTraffic {
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
  // Every socket seen so far, cumulative (closed sockets keep their totals).
  StatusOr<std::vector<SocketTraffic>> Drain() const;

 private:
  struct Deleter {
    void operator()(traffic_bpf* s) const;
  };
  TrafficCollector(std::unique_ptr<traffic_bpf, Deleter> skel, std::string type)
      : skel_(std::move(skel)), attach_type_(std::move(type)) {}
  std::unique_ptr<traffic_bpf, Deleter> skel_;
  std::string attach_type_;
};

}  // namespace tfdiag
