#include "collectors/bpf/sched_collector.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include <cerrno>

#include "collectors/bpf/bpf_util.h"
#include "collectors/bpf/sched.h"
#include "collectors/bpf/sched.skel.h"

namespace tfdiag {

static_assert(kRunqSlots == TFDIAG_SCHED_MAX_SLOTS, "histogram sizes must agree");

void SchedCollector::Deleter::operator()(sched_bpf* s) const { sched_bpf__destroy(s); }

SchedCollector::~SchedCollector() = default;

StatusOr<std::unique_ptr<SchedCollector>> SchedCollector::Open(BpfAttach want) {
  std::string type;
  StatusOr<sched_bpf*> s = OpenFlavoured<sched_bpf>(
      "sched (sched_switch, sched_wakeup, sched_wakeup_new)", want, sched_bpf__open,
      sched_bpf__load, sched_bpf__attach, sched_bpf__destroy, &type);
  if (!s.ok()) return s.status();
  std::unique_ptr<sched_bpf, Deleter> skel(*s);
  return std::unique_ptr<SchedCollector>(new SchedCollector(std::move(skel), type));
}

Status SchedCollector::AddProcess(uint32_t tgid) {
  return AddToTgidFilter("sched", skel_->maps.tgid_bits, tgid);
}

StatusOr<std::map<uint32_t, SchedCounts>> SchedCollector::Drain() const {
  std::map<uint32_t, SchedCounts> out;
  // Threads: iterate keys; a thread may be added while we walk, which is harmless.
  const int tfd = bpf_map__fd(skel_->maps.threads);
  __u32 key = 0, next = 0;
  const __u32* prev = nullptr;
  while (bpf_map_get_next_key(tfd, prev, &next) == 0) {
    tfdiag_sched_thread v{};
    if (bpf_map_lookup_elem(tfd, &next, &v) == 0) {
      SchedCounts& c = out[v.tgid];
      c.voluntary += static_cast<int64_t>(v.voluntary);
      c.involuntary += static_cast<int64_t>(v.involuntary);
      c.oncpu_ns += static_cast<int64_t>(v.oncpu_ns);
    }
    key = next;
    prev = &key;
  }
  const int hfd = bpf_map__fd(skel_->maps.hists);
  prev = nullptr;
  while (bpf_map_get_next_key(hfd, prev, &next) == 0) {
    tfdiag_sched_hist h{};
    if (bpf_map_lookup_elem(hfd, &next, &h) == 0) {
      SchedCounts& c = out[next];
      for (int i = 0; i < kRunqSlots; ++i) c.runq_hist[i] = static_cast<int64_t>(h.slots[i]);
      c.runq_wait_ns = static_cast<int64_t>(h.total_ns);
      c.runq_waits = static_cast<int64_t>(h.count);
    }
    key = next;
    prev = &key;
  }
  return out;
}

StatusOr<std::map<uint32_t, std::pair<int64_t, int64_t>>> SchedCollector::ThreadSwitches(
    uint32_t tgid) const {
  std::map<uint32_t, std::pair<int64_t, int64_t>> out;
  const int tfd = bpf_map__fd(skel_->maps.threads);
  __u32 key = 0, next = 0;
  const __u32* prev = nullptr;
  while (bpf_map_get_next_key(tfd, prev, &next) == 0) {
    tfdiag_sched_thread v{};
    if (bpf_map_lookup_elem(tfd, &next, &v) == 0 && v.tgid == tgid) {
      out[next] = {static_cast<int64_t>(v.voluntary), static_cast<int64_t>(v.involuntary)};
    }
    key = next;
    prev = &key;
  }
  return out;
}

}  // namespace tfdiag
