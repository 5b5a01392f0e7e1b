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

// Opens and loads the skeleton with only one flavour of the programs enabled, then attaches.
Status TryFlavour(bool btf, traffic_bpf** out) {
  const char* name = btf ? "traffic (tp_btf)" : "traffic (raw_tp)";
  traffic_bpf* s = traffic_bpf__open();
  if (s == nullptr) return BpfStepError(name, "open", -errno);
  bpf_program__set_autoload(s->progs.send_btf, btf);
  bpf_program__set_autoload(s->progs.recv_btf, btf);
  bpf_program__set_autoload(s->progs.send_raw, !btf);
  bpf_program__set_autoload(s->progs.recv_raw, !btf);
  if (int err = traffic_bpf__load(s); err != 0) {
    traffic_bpf__destroy(s);
    return BpfStepError(name, "load", err);
  }
  bpf_link* send = bpf_program__attach(btf ? s->progs.send_btf : s->progs.send_raw);
  if (send == nullptr) {
    const int e = -errno;
    traffic_bpf__destroy(s);
    return BpfStepError(name, "attach sock_send_length", e);
  }
  (btf ? s->links.send_btf : s->links.send_raw) = send;  // destroyed with the skeleton
  bpf_link* recv = bpf_program__attach(btf ? s->progs.recv_btf : s->progs.recv_raw);
  if (recv == nullptr) {
    const int e = -errno;
    traffic_bpf__destroy(s);
    return BpfStepError(name, "attach sock_recv_length", e);
  }
  (btf ? s->links.recv_btf : s->links.recv_raw) = recv;
  *out = s;
  return OkStatus();
}

std::string IpPort(__u32 ip_be, uint16_t port_host) {
  char buf[INET_ADDRSTRLEN] = {};
  in_addr a{};
  a.s_addr = ip_be;
  inet_ntop(AF_INET, &a, buf, sizeof(buf));
  return std::string(buf) + ":" + std::to_string(port_host);
}

}  // namespace

StatusOr<std::unique_ptr<TrafficCollector>> TrafficCollector::Open() {
  InstallBpfLogger();
  traffic_bpf* s = nullptr;
  Status btf = TryFlavour(true, &s);
  std::string type = "tp_btf";
  if (!btf.ok()) {
    Status raw = TryFlavour(false, &s);
    if (!raw.ok()) return Internal("{}; then {}", btf.message(), raw.message());
    type = "raw_tp";
  }
  std::unique_ptr<traffic_bpf, Deleter> skel(s);
  return std::unique_ptr<TrafficCollector>(new TrafficCollector(std::move(skel), type));
}

Status TrafficCollector::AddProcess(uint32_t tgid) {
  const __u8 one = 1;
  if (bpf_map__update_elem(skel_->maps.tgids, &tgid, sizeof(tgid), &one, sizeof(one), BPF_ANY)) {
    return BpfStepError("traffic", "add a process to the tgids map", -errno);
  }
  return OkStatus();
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
