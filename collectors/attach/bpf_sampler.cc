#include "collectors/attach/bpf_sampler.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>

#include "collectors/bpf/bpf_util.h"

namespace tfdiag {

namespace {

constexpr int kMaxResolvedNames = 1024;

// "host:port" -> "a.b.c.d:port" (IPv4 literal kept; a name resolved once); "" on failure.
std::string ResolveIpv4(const std::string& addr) {
  const size_t colon = addr.rfind(':');
  if (colon == std::string::npos) return "";
  const std::string host = addr.substr(0, colon), port = addr.substr(colon + 1);
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) == 1) return addr;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return "";
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, buf, sizeof(buf));
  freeaddrinfo(res);
  return std::string(buf) + ":" + port;
}

}  // namespace

BpfSampler::BpfSampler(const std::vector<TfTask>& tasks, const std::vector<int>& hdfs_ports,
                       BpfAttach attach, const TrafficTableLimits& limits, CaptureBuilder* builder,
                       std::vector<std::string>* warnings)
    : b_(builder), warnings_(warnings), hdfs_ports_(hdfs_ports), table_(limits) {
  if (Status ok = BpfAvailable(); !ok.ok()) {
    warnings->push_back("eBPF probes off: " + ok.message() + "; " + kWithoutBpf);
    return;
  }
  StatusOr<std::unique_ptr<SchedCollector>> s = SchedCollector::Open(attach);
  if (s.ok()) {
    sched_ = std::move(*s);
  } else {
    warnings->push_back(
        "eBPF sched probe off (no run-queue latency; context switches from /proc only): " +
        s.status().message());
  }
  StatusOr<std::unique_ptr<TrafficCollector>> t = TrafficCollector::Open(attach);
  if (t.ok()) {
    traffic_ = std::move(*t);
  } else {
    warnings->push_back("eBPF traffic probe off (no traffic matrix, no HDFS input): " +
                        t.status().message());
  }
  for (const TfTask& task : tasks) AddClusterSpec(task);
}

void BpfSampler::AddClusterSpec(const TfTask& task) {
  // The cluster spec: every task's address -> its label (ps, worker, chief, ...; not hdfs).
  {
    // Names are resolved (getaddrinfo, blocking) for at most kMaxResolvedNames addresses of a
    // spec: a TF_CONFIG of 100,000 host names must not hold the sampler for minutes.
    int names = 0, unresolved = 0;
    int64_t cut_addresses = 0;
    for (const auto& [job, addrs] : task.config.cluster.jobs) {
      if (job == "hdfs") continue;
      for (const TaskAddress& a : addrs) {
        if (a.address.empty()) continue;
        in_addr literal{};
        const size_t colon = a.address.rfind(':');
        const bool is_literal =
            colon != std::string::npos &&
            inet_pton(AF_INET, a.address.substr(0, colon).c_str(), &literal) == 1;
        if (!is_literal && ++names > kMaxResolvedNames) {
          ++unresolved;
          continue;
        }
        if (task_at_.size() >= kMaxSpecAddresses) {
          // Node-wide bound (issue 46: 320 tenants with 106 KiB TF_CONFIGs took an agent past
          // its 256 Mi): the rest of the specs' peers fold into "other"; counted once per task
          // (a task's spec is offered again when it joins), logged once.
          if (cut_.count(task.pid)) continue;
          ++cut_addresses;
          if (spec_addresses_dropped_ + cut_addresses == 1) {
            warnings_->push_back(fmt::format(
                "{} (pid {}): the cluster specs of this node's tasks list more than {} addresses; "
                "the rest are not learned (their bytes count as peer \"other\"; "
                "tfdiag_agent_spec_addresses_dropped_total)",
                task.label, task.pid, kMaxSpecAddresses));
          }
          continue;
        }
        const std::string ip = ResolveIpv4(a.address);
        if (ip.empty() || task_at_.count(ip)) continue;
        const uint32_t id = b_->AddTask(job, 0, a.index);
        task_at_[ip] = {TaskLabel(job, 0, a.index), id};
        addr_of_task_.emplace(id, ip);
      }
    }
    if (cut_addresses > 0) {
      spec_addresses_dropped_ += cut_addresses;
      cut_.insert(task.pid);
    }
    if (unresolved > 0) {
      warnings_->push_back(fmt::format(
          "{} (pid {}): {} host names of its cluster spec not resolved (at most {} are)",
          task.label, task.pid, unresolved, kMaxResolvedNames));
    }
  }
}

std::string BpfSampler::probes() const {
  std::string out;
  if (sched_) out = "sched(" + sched_->attach_type() + ")";
  if (traffic_) out += (out.empty() ? "" : ",") + ("traffic(" + traffic_->attach_type() + ")");
  return out;
}

void BpfSampler::Add(int32_t pid, uint32_t process, uint32_t task, const std::string& label) {
  process_of_[pid] = process;
  task_of_pid_[pid] = {label, task};
  if (sched_) {
    if (Status ok = sched_->AddProcess(pid); !ok.ok()) {
      warnings_->push_back(fmt::format("pid {}: {}", pid, ok.message()));
    }
  }
  if (traffic_) {
    if (Status ok = traffic_->AddProcess(pid); !ok.ok()) {
      warnings_->push_back(fmt::format("pid {}: {}", pid, ok.message()));
    }
  }
}

void BpfSampler::Forget(int32_t pid) {
  cut_.erase(pid);
  if (!traffic_) return;
  table_.Forget(static_cast<uint32_t>(pid),
                [this](const SocketKey& k) { return traffic_->Take(k); });
}

PeerMatch BpfSampler::Match(
    const SocketTraffic& s,
    const std::map<std::string, std::pair<std::string, uint32_t>>& by_local) const {
  PeerMatch m;
  const std::pair<std::string, uint32_t>* task = nullptr;
  if (auto it = task_at_.find(s.remote); it != task_at_.end()) {
    task = &it->second;
  } else if (auto l = by_local.find(s.remote); l != by_local.end()) {
    task = &l->second;  // a PS sees its workers on ephemeral ports
  }
  if (task != nullptr) {
    m.resolved = true;
    m.peer_task = task->first;
    m.peer_task_index = task->second;
    auto addr = addr_of_task_.find(task->second);
    m.peer = addr != addr_of_task_.end() ? addr->second : s.remote;
  }
  // An HDFS DataNode port; a TF task listening on one stays that task.
  m.hdfs = std::find(hdfs_ports_.begin(), hdfs_ports_.end(), s.remote_port) != hdfs_ports_.end();
  if (m.hdfs && !m.resolved) {
    m.resolved = true;
    m.peer = s.remote;
  }
  return m;
}

void BpfSampler::SampleTraffic(TimeNs now, const std::vector<int32_t>& emit, bool keep_rows,
                               const std::map<int32_t, size_t>& figure_of, LiveFigures* figures) {
  StatusOr<std::vector<SocketTraffic>> socks = traffic_->Drain();
  if (!socks.ok()) {
    if (!drain_failed_) warnings_->push_back("eBPF drain failed: " + socks.status().message());
    drain_failed_ = true;
    return;
  }
  // A remote that is the local address of another recorded process's socket is that task.
  std::map<std::string, std::pair<std::string, uint32_t>> by_local;
  for (const SocketTraffic& s : *socks) {
    auto t = task_of_pid_.find(static_cast<int32_t>(s.tgid));
    if (t != task_of_pid_.end()) by_local[s.local] = t->second;
  }
  table_.Observe(
      now, *socks, [&](const SocketTraffic& s) { return Match(s, by_local); },
      [this](const SocketKey& k) { return traffic_->Take(k); });
  auto emitting = [&](int32_t pid) {
    return std::find(emit.begin(), emit.end(), pid) != emit.end();
  };
  auto add_row = [&](int32_t pid, const std::string& local, const std::string& peer,
                     uint32_t peer_task, bool hdfs, int64_t sent, int64_t received) {
    auto proc = process_of_.find(pid);
    if (!keep_rows || proc == process_of_.end() || sent + received == 0 || !emitting(pid)) return;
    TrafficRow row;
    row.ts = now;
    row.process = proc->second;
    row.local = b_->Intern(local);
    row.peer = b_->Intern(peer);
    row.peer_task = peer_task;
    row.hdfs = hdfs;
    row.bytes_sent = sent;
    row.bytes_received = received;
    b_->AddTraffic(row);
  };
  table_.ForEachLiveResolved([&](const SocketTraffic& s, const PeerMatch& m) {
    add_row(static_cast<int32_t>(s.tgid), s.local, s.remote, m.peer_task_index, m.hdfs,
            s.bytes_sent, s.bytes_received);
  });
  const std::map<uint32_t, TrafficTable::ProcessFigures> per_process = table_.Figures();
  for (const auto& [tgid, pf] : per_process) {
    const int32_t pid = static_cast<int32_t>(tgid);
    add_row(pid, "", "other", kNoIndex, false, pf.other_sent, pf.other_received);
    auto f = figure_of.find(pid);
    if (f == figure_of.end()) continue;
    LiveTaskFigures& tf = figures->tasks[f->second];
    tf.peers = pf.peers;
    tf.hdfs_read_bytes = pf.hdfs_read_bytes;
    tf.other_sockets = pf.other_sockets;
  }
  for (LiveTaskFigures& tf : figures->tasks) tf.has_traffic = true;
  figures->untracked_sockets = traffic_->Untracked();
}

void BpfSampler::Sample(TimeNs now, const std::vector<int32_t>& emit, bool keep_rows,
                        const std::map<int32_t, size_t>& figure_of, LiveFigures* figures) {
  auto fail = [&](const Status& s) {
    if (!drain_failed_) warnings_->push_back("eBPF drain failed: " + s.message());
    drain_failed_ = true;
  };
  auto emitting = [&](int32_t pid) {
    return std::find(emit.begin(), emit.end(), pid) != emit.end();
  };
  if (traffic_) SampleTraffic(now, emit, keep_rows, figure_of, figures);
  if (sched_) {
    StatusOr<std::map<uint32_t, SchedCounts>> counts = sched_->Drain();
    if (!counts.ok()) {
      fail(counts.status());
      return;
    }
    for (const auto& [pid, process] : process_of_) {
      auto c = counts->find(static_cast<uint32_t>(pid));
      if (c == counts->end()) continue;
      const SchedCounts& sc = c->second;
      if (keep_rows && emitting(pid)) {
        SchedRow row;
        row.ts = now;
        row.process = process;
        row.voluntary = sc.voluntary;
        row.involuntary = sc.involuntary;
        row.oncpu_ns = sc.oncpu_ns;
        row.runq_wait_ns = sc.runq_wait_ns;
        row.runq_waits = sc.runq_waits;
        std::copy(sc.runq_hist.begin(), sc.runq_hist.end(), row.runq_hist);
        b_->AddSched(row);
      }
      auto f = figure_of.find(pid);
      if (f == figure_of.end()) continue;
      LiveTaskFigures& tf = figures->tasks[f->second];
      tf.has_sched = true;
      tf.runq_wait_ns = sc.runq_wait_ns;
      tf.runq_waits = sc.runq_waits;
      std::copy(sc.runq_hist.begin(), sc.runq_hist.end(), tf.runq_hist);
    }
  }
}

}  // namespace tfdiag
