#include "collectors/bpf/traffic_collector.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <cerrno>

#include "collectors/bpf/bpf_util.h"
#include "collectors/bpf/traffic.h"
#include "collectors/bpf/traffic.skel.h"

namespace tfdiag {

void TrafficCollector::Deleter::operator()(traffic_bpf* s) const { traffic_bpf__destroy(s); }

TrafficCollector::~TrafficCollector() = default;

namespace {

std::string IpPort(__u32 ip_be, uint16_t port_host) {
  char buf[INET_ADDRSTRLEN] = {};
  in_addr a{};
  a.s_addr = ip_be;
  inet_ntop(AF_INET, &a, buf, sizeof(buf));
  return std::string(buf) + ":" + std::to_string(port_host);
}

}  // namespace

StatusOr<std::unique_ptr<TrafficCollector>> TrafficCollector::Open(BpfAttach want) {
  std::string type;
  StatusOr<traffic_bpf*> s =
      OpenFlavoured<traffic_bpf>("traffic", want, traffic_bpf__open, traffic_bpf__load,
                                 traffic_bpf__attach, traffic_bpf__destroy, &type);
  if (!s.ok()) return s.status();
  std::unique_ptr<traffic_bpf, Deleter> skel(*s);
  return std::unique_ptr<TrafficCollector>(new TrafficCollector(std::move(skel), type));
}

Status TrafficCollector::AddProcess(uint32_t tgid) {
  return AddToTgidFilter("traffic", skel_->maps.tgid_bits, tgid);
}

StatusOr<std::vector<SocketTraffic>> TrafficCollector::Drain() const {
  std::vector<SocketTraffic> out;
  const int fd = bpf_map__fd(skel_->maps.sockets);
  tfdiag_traffic_key key{}, next{};
  const tfdiag_traffic_key* prev = nullptr;
  while (bpf_map_get_next_key(fd, prev, &next) == 0) {
    tfdiag_traffic_val v{};
    if (bpf_map_lookup_elem(fd, &next, &v) == 0) {
      SocketTraffic t;
      t.tgid = next.tgid;
      t.remote_port = ntohs(next.remote_port);
      t.local = IpPort(next.local_ip, next.local_port);
      t.remote = IpPort(next.remote_ip, t.remote_port);
      t.bytes_sent = static_cast<int64_t>(v.bytes_sent);
      t.bytes_received = static_cast<int64_t>(v.bytes_received);
      t.sends = static_cast<int64_t>(v.sends);
      t.receives = static_cast<int64_t>(v.receives);
      out.push_back(std::move(t));
    }
    key = next;
    prev = &key;
  }
  return out;
}

}  // namespace tfdiag
