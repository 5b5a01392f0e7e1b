#include "collectors/bpf/traffic_collector.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <cerrno>
#include <cstring>

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

// The kernel's internal ENOTSUPP (include/linux/errno.h), which a BPF syscall can return for a
// map operation the kernel lacks; user-space headers do not define it.
constexpr int kKernelEnotsupp = 524;

SocketTraffic FromKernel(const tfdiag_traffic_key& k, const tfdiag_traffic_val& v) {
  SocketTraffic t;
  t.key.tgid = k.tgid;
  t.key.local_ip = k.local_ip;
  t.key.remote_ip = k.remote_ip;
  t.key.local_port = k.local_port;
  t.key.remote_port = k.remote_port;
  t.tgid = k.tgid;
  t.remote_port = ntohs(k.remote_port);
  t.local = IpPort(k.local_ip, k.local_port);
  t.remote = IpPort(k.remote_ip, t.remote_port);
  t.bytes_sent = static_cast<int64_t>(v.bytes_sent);
  t.bytes_received = static_cast<int64_t>(v.bytes_received);
  t.sends = static_cast<int64_t>(v.sends);
  t.receives = static_cast<int64_t>(v.receives);
  return t;
}

tfdiag_traffic_key ToKernel(const SocketKey& s) {
  tfdiag_traffic_key k;
  std::memset(&k, 0, sizeof k);  // the padding is part of the hash key
  k.tgid = s.tgid;
  k.local_ip = s.local_ip;
  k.remote_ip = s.remote_ip;
  k.local_port = s.local_port;
  k.remote_port = s.remote_port;
  return k;
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
    if (bpf_map_lookup_elem(fd, &next, &v) == 0) out.push_back(FromKernel(next, v));
    key = next;
    prev = &key;
  }
  return out;
}

StatusOr<SocketTraffic> TrafficCollector::Take(const SocketKey& key) {
  const int fd = bpf_map__fd(skel_->maps.sockets);
  const tfdiag_traffic_key k = ToKernel(key);
  tfdiag_traffic_val v{};
  if (!lookup_and_delete_unsupported_) {
    if (bpf_map_lookup_and_delete_elem(fd, &k, &v) == 0) return FromKernel(k, v);
    const int err = errno;
    if (err == ENOENT) return NotFound("traffic: socket no longer in the map");
    if (err != EINVAL && err != kKernelEnotsupp && err != EOPNOTSUPP) {
      return BpfStepError("traffic", "lookup and delete", -err);
    }
    lookup_and_delete_unsupported_ = true;  // an older kernel: lookup, then delete
  }
  if (bpf_map_lookup_elem(fd, &k, &v) != 0) {
    if (errno == ENOENT) return NotFound("traffic: socket no longer in the map");
    return BpfStepError("traffic", "lookup", -errno);
  }
  if (bpf_map_delete_elem(fd, &k) != 0 && errno != ENOENT) {
    return BpfStepError("traffic", "delete", -errno);
  }
  return FromKernel(k, v);
}

int64_t TrafficCollector::Untracked() const {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) return 0;
  std::vector<uint64_t> per_cpu(static_cast<size_t>(cpus));
  const uint32_t zero = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.untracked), &zero, per_cpu.data()) != 0) return 0;
  uint64_t sum = 0;
  for (uint64_t n : per_cpu) sum += n;
  return static_cast<int64_t>(sum);
}

}  // namespace tfdiag
