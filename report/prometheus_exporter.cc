#include "report/prometheus_exporter.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/escape.h"
#include "report/label_value.h"

namespace tfdiag {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

std::vector<ClientMetric::Label> TaskLabels(const LiveTaskFigures& t) {
  std::vector<ClientMetric::Label> l = {
      {"namespace", t.namespace_},
      {"node", t.node},
      {"pod", t.pod},
      {"replica_index", t.index >= 0 ? std::to_string(t.index) : ""},
      {"replica_type", t.job},
      {"tf_job", t.tf_job}};
  if (t.conflict > 0) l.push_back({"conflict", std::to_string(t.conflict)});
  return l;
}

MetricFamily Family(const char* name, const char* help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

ClientMetric Value(const LiveTaskFigures& t, MetricType type, double v,
                   std::vector<ClientMetric::Label> extra = {}) {
  ClientMetric m;
  m.label = TaskLabels(t);
  for (auto& l : extra) m.label.push_back(std::move(l));
  if (type == MetricType::Counter) {
    m.counter.value = v;
  } else {
    m.gauge.value = v;
  }
  return m;
}

}  // namespace

namespace {

// Every string of the figures that becomes a label value, made valid UTF-8 and bounded
// (label_value.h): one task's bytes must not make the whole page invalid.
void RepairLabels(LiveFigures* f) {
  f->node = LabelValue(f->node);
  for (LiveTaskFigures& t : f->tasks) {
    for (std::string* s : {&t.job, &t.task, &t.pod, &t.node, &t.tf_job, &t.namespace_}) {
      *s = LabelValue(*s);
    }
    for (LivePeerFigures& p : t.peers) {
      p.peer = LabelValue(p.peer);
      p.peer_task = LabelValue(p.peer_task);
    }
  }
}

// The series task `t` puts on the page (as Collect writes them; a histogram counts its bucket,
// _sum and _count lines).
size_t SeriesOf(const LiveTaskFigures& t) {
  size_t n = 4 + (t.steps >= 0) + (t.nr_periods >= 0) + (t.nr_throttled >= 0) + (t.voluntary >= 0) +
             (t.involuntary >= 0);
  if (t.has_traffic) n += 2 * (t.peers.size() + 2) + 2 + (t.traffic_since_s > 0);
  n += (t.exit_time_s > 0) + (t.cpuset_cpus > 0) + (t.cpu_limit >= 0);
  if (t.has_sched) n += kRunqHistSlots + 3;
  return n;
}

}  // namespace

std::vector<std::string> TfdiagCollectable::Update(const LiveFigures& figures) {
  std::lock_guard<std::mutex> lock(mu_);
  // Keep the last figures of tasks that went away (counters must not vanish mid-scrape), marked
  // down, for kGoneKeepNs of the figures' own clock (whatever the sampling interval); then drop
  // them so the series count stays bounded.
  LiveFigures next = figures;
  RepairLabels(&next);
  const TimeNs now = next.ts;
  auto expired = [&](int32_t pid) {
    const TimeNs since = gone_since_.emplace(pid, now).first->second;
    return now - since > kGoneKeepNs;
  };
  std::set<int32_t> present;
  for (const LiveTaskFigures& t : next.tasks) {
    if (t.alive) gone_since_.erase(t.pid);
    present.insert(t.pid);
  }
  for (LiveTaskFigures& t : next.tasks) {
    if (!t.alive && expired(t.pid)) t.pid = -1;  // dropped below
  }
  // Carried-over gone tasks count against kMaxGoneTasks: a recorder that dropped an exited task
  // for churn does not see it come back here.
  size_t gone = 0;
  for (const LiveTaskFigures& t : next.tasks) gone += !t.alive && t.pid >= 0;
  std::set<int32_t> carried;
  for (const LiveTaskFigures& old : figures_.tasks) {
    if (present.count(old.pid) || old.pid < 0) continue;
    if (expired(old.pid) || gone >= kMaxGoneTasks) continue;
    ++gone;
    carried.insert(old.pid);
    next.tasks.push_back(old);
    next.tasks.back().alive = false;
  }
  // One series per label set: processes of the same task (a restart, short-lived launchers)
  // share labels; a live one wins over gone ones, else the first (the recorder's newest figures
  // first). Two live tasks with one label set (a pod that claims another's pod name, namespace
  // and task) are both kept, each marked conflict="1", "2", ... in pid order, so that neither
  // (a tenant with a lower pid least of all) owns the plain labels; the first sight is logged.
  std::map<std::vector<ClientMetric::Label>, std::vector<size_t>> by_labels;
  for (size_t i = 0; i < next.tasks.size(); ++i) {
    next.tasks[i].conflict = 0;
    if (next.tasks[i].pid >= 0) by_labels[TaskLabels(next.tasks[i])].push_back(i);
  }
  std::set<int32_t> conflicted;
  std::vector<std::string> news;
  conflicts_ = 0;
  for (auto& [labels, group] : by_labels) {
    std::vector<size_t> alive;
    for (size_t i : group) {
      if (next.tasks[i].alive) alive.push_back(i);
    }
    if (alive.empty()) {
      for (size_t k = 1; k < group.size(); ++k) next.tasks[group[k]].pid = -1;
      continue;
    }
    for (size_t i : group) {
      if (!next.tasks[i].alive) next.tasks[i].pid = -1;
    }
    if (alive.size() < 2) continue;
    std::sort(alive.begin(), alive.end(),
              [&](size_t a, size_t b) { return next.tasks[a].pid < next.tasks[b].pid; });
    std::string pids;
    for (size_t k = 0; k < alive.size(); ++k) {
      LiveTaskFigures& t = next.tasks[alive[k]];
      t.conflict = static_cast<int>(k) + 1;  // none keeps the plain labels: which is real?
      conflicted.insert(t.pid);
      pids += fmt::format("{}{}", k ? ", " : "", t.pid);
    }
    conflicts_ += alive.size();
    bool fresh = false;
    for (size_t i : alive) fresh |= !conflicted_.count(next.tasks[i].pid);
    if (fresh) {
      const LiveTaskFigures& t = next.tasks[alive[0]];
      news.push_back(fmt::format(
          "{} processes (pids {}) claim one identity: tf_job {} {} pod {} namespace {}; all are "
          "kept, marked conflict=\"1\"..\"{}\" in pid order (none keeps the plain labels: the "
          "agent cannot tell which one is real)",
          alive.size(), pids, Printable(t.tf_job), Printable(t.task), Printable(t.pod),
          Printable(t.namespace_), alive.size()));
    }
  }
  conflicted_ = std::move(conflicted);
  next.tasks.erase(std::remove_if(next.tasks.begin(), next.tasks.end(),
                                  [](const LiveTaskFigures& t) { return t.pid < 0; }),
                   next.tasks.end());
  for (auto it = gone_since_.begin(); it != gone_since_.end();) {
    const bool unseen = !present.count(it->first) && !carried.count(it->first);
    it = unseen ? gone_since_.erase(it) : std::next(it);
  }
  figures_ = std::move(next);
  return news;
}

size_t TfdiagCollectable::tasks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return figures_.tasks.size();
}

std::vector<MetricFamily> TfdiagCollectable::Collect() const {
  std::lock_guard<std::mutex> lock(mu_);
  const MetricType kC = MetricType::Counter, kG = MetricType::Gauge;
  MetricFamily up = Family("tfdiag_task_up", "1 while the task's process lives", kG);
  MetricFamily cpu =
      Family("tfdiag_task_cpu_seconds_total", "CPU time of all threads of the task, s", kC);
  MetricFamily threads = Family("tfdiag_task_threads", "Threads of the task", kG);
  MetricFamily steps = Family("tfdiag_task_steps_total",
                              "Steps the task counted itself (its *.tfdiag-steps file)", kC);
  MetricFamily runnable =
      Family("tfdiag_task_runnable_threads", "Threads of the task in state R", kG);
  MetricFamily periods =
      Family("tfdiag_cgroup_periods_total", "CFS periods of the task's CPU cgroup", kC);
  MetricFamily throttled = Family("tfdiag_cgroup_throttled_periods_total",
                                  "CFS periods in which the task's CPU cgroup was throttled", kC);
  MetricFamily switches = Family("tfdiag_context_switches_total",
                                 "Context switches of all threads, by kind (/proc)", kC);
  MetricFamily traffic =
      Family("tfdiag_traffic_bytes_total",
             "Socket bytes by direction and remote TF task (eBPF); HDFS DataNodes fold into "
             "peer=\"hdfs\", other peers into peer=\"other\"",
             kC);
  MetricFamily since = Family("tfdiag_task_traffic_since_seconds",
                              "Unix time from which the task's byte counters "
                              "(tfdiag_traffic_bytes_total, tfdiag_hdfs_read_bytes_total) count: "
                              "the agent found the task then, and they were 0",
                              kG);
  MetricFamily exit_time = Family("tfdiag_task_exit_time_seconds",
                                  "Unix time the task's process exited (to 20 ms with pidfds, else "
                                  "to the sampling interval); only for exited tasks",
                                  kG);
  // What the floors need on every path (analyzers/hot_ps_floor.h): the CPUs a task may use.
  MetricFamily node_cpus = Family("tfdiag_node_cpus", "CPUs of the node (/proc/stat)", kG);
  if (figures_.host_cpus > 0) {
    ClientMetric m;
    m.label = {{"node", figures_.node}};
    m.gauge.value = figures_.host_cpus;
    node_cpus.metric.push_back(std::move(m));
  }
  MetricFamily cpuset =
      Family("tfdiag_task_cpuset_cpus",
             "CPUs in the cpuset of the task's cgroup (cpuset.cpus.effective)", kG);
  MetricFamily cpu_limit = Family(
      "tfdiag_task_cpu_limit_cores",
      "CFS quota / period of the task's cgroup in CPUs, the tightest of it and its parents; 0: no "
      "quota (the task may use its cpuset, else the node)",
      kG);
  MetricFamily hdfs =
      Family("tfdiag_hdfs_read_bytes_total", "Bytes received from HDFS DataNode ports (eBPF)", kC);
  MetricFamily other_sockets = Family(
      "tfdiag_traffic_other_sockets_total",
      "Sockets whose bytes were folded into peer=\"other\" (neither a TF task nor HDFS)", kC);
  MetricFamily untracked = Family(
      "tfdiag_traffic_untracked_sockets_total",
      "Sockets the eBPF traffic probe could not count: its kernel map (65,536 sockets) was full",
      kC);
  // A counter of the agent itself, labelled by node; -1 (unknown) adds no series.
  auto NodeCounter = [&](MetricFamily* f, int64_t v) {
    if (v < 0) return;
    ClientMetric m;
    m.label = {{"node", figures_.node}};
    m.counter.value = double(v);
    f->metric.push_back(std::move(m));
  };
  MetricFamily dropped = Family(
      "tfdiag_agent_exited_tasks_dropped_total",
      "Exited tasks dropped from these figures before 5 minutes: more than 256 had exited", kC);
  NodeCounter(&dropped, figures_.exited_tasks_dropped);
  MetricFamily environ_reads =
      Family("tfdiag_agent_environ_reads_total",
             "Reads of /proc/PID/environ since start (each process once, not every rescan)", kC);
  NodeCounter(&environ_reads, figures_.environ_reads);
  NodeCounter(&untracked, figures_.untracked_sockets);
  MetricFamily conflicts = Family(
      "tfdiag_agent_identity_conflicts",
      "Live tasks that share their labels with another live task (marked conflict=\"N\")", kG);
  if (figures_.environ_reads >= 0 || conflicts_ > 0) {  // an agent's page, or a conflict
    ClientMetric m;
    m.label = {{"node", figures_.node}};
    m.gauge.value = double(conflicts_);
    conflicts.metric.push_back(std::move(m));
  }
  MetricFamily runq = Family("tfdiag_runqueue_latency_seconds",
                             "Run-queue latency of the task's threads, wakeup to on-CPU (eBPF)",
                             MetricType::Histogram);
  MetricFamily refused =
      Family("tfdiag_agent_connections_refused_total",
             "HTTP connections closed by the caps: more than 32 from one non-loopback address, or "
             "256 in all (the oldest still sending its request closed)",
             kC);
  NodeCounter(&refused, figures_.connections_refused);
  MetricFamily environ_dropped =
      Family("tfdiag_agent_environ_dropped_total",
             "Processes whose TF_CONFIG was left for a later rescan: the rescan's 32 MiB of "
             "environment bytes were spent",
             kC);
  NodeCounter(&environ_dropped, figures_.environ_dropped);
  MetricFamily tasks_dropped =
      Family("tfdiag_agent_tasks_dropped_total",
             "TF tasks not tracked: the agent tracked its maximum of 1,024 live tasks", kC);
  NodeCounter(&tasks_dropped, figures_.tasks_dropped);
  MetricFamily spec_dropped =
      Family("tfdiag_agent_spec_addresses_dropped_total",
             "Cluster-spec addresses not learned as peers: the node's tasks' specs listed more "
             "than 65,536 (their bytes count as peer=\"other\")",
             kC);
  NodeCounter(&spec_dropped, figures_.spec_addresses_dropped);
  // The page's budget: tasks in order until their series would pass kMaxSeries; the series of
  // the others are counted, not shown.
  size_t series = 0;
  for (const LiveTaskFigures& t : figures_.tasks) {
    const size_t n = SeriesOf(t);
    if (series + n > kMaxSeries) {
      series_dropped_ += static_cast<int64_t>(n);
      continue;
    }
    series += n;
    up.metric.push_back(Value(t, kG, t.alive ? 1 : 0));
    cpu.metric.push_back(Value(t, kC, t.cpu_seconds));
    threads.metric.push_back(Value(t, kG, t.threads));
    if (t.steps >= 0) steps.metric.push_back(Value(t, kC, double(t.steps)));
    runnable.metric.push_back(Value(t, kG, t.runnable));
    if (t.nr_periods >= 0) periods.metric.push_back(Value(t, kC, double(t.nr_periods)));
    if (t.nr_throttled >= 0) throttled.metric.push_back(Value(t, kC, double(t.nr_throttled)));
    if (t.voluntary >= 0) {
      switches.metric.push_back(Value(t, kC, double(t.voluntary), {{"kind", "voluntary"}}));
    }
    if (t.involuntary >= 0) {
      switches.metric.push_back(Value(t, kC, double(t.involuntary), {{"kind", "involuntary"}}));
    }
    if (t.has_traffic) {
      // Peers: TF tasks by address (bounded by the cluster spec); HDFS and everything else
      // folded, so 10,000 short connections make two series, not 20,000.
      std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> by_peer;
      for (const LivePeerFigures& p : t.peers) {
        const bool tf = !p.peer_task.empty() && !p.hdfs;
        auto& v = by_peer[{tf ? p.peer : (p.hdfs ? "hdfs" : "other"),
                           tf ? p.peer_task : (p.hdfs ? "hdfs" : "other")}];
        v.first += p.bytes_sent;
        v.second += p.bytes_received;
      }
      for (const auto& [peer, v] : by_peer) {
        for (const auto& [dir, n] :
             {std::make_pair("sent", v.first), std::make_pair("received", v.second)}) {
          traffic.metric.push_back(
              Value(t, kC, double(n),
                    {{"direction", dir}, {"peer", peer.first}, {"peer_task", peer.second}}));
        }
      }
      hdfs.metric.push_back(Value(t, kC, double(t.hdfs_read_bytes)));
      if (t.traffic_since_s > 0) since.metric.push_back(Value(t, kG, t.traffic_since_s));
      other_sockets.metric.push_back(Value(t, kC, double(t.other_sockets)));
    }
    if (t.exit_time_s > 0) exit_time.metric.push_back(Value(t, kG, t.exit_time_s));
    if (t.cpuset_cpus > 0) cpuset.metric.push_back(Value(t, kG, t.cpuset_cpus));
    if (t.cpu_limit >= 0) cpu_limit.metric.push_back(Value(t, kG, t.cpu_limit));
    if (t.has_sched) {
      ClientMetric m;
      m.label = TaskLabels(t);
      uint64_t cum = 0;
      for (int i = 0; i < kRunqHistSlots; ++i) {
        cum += static_cast<uint64_t>(t.runq_hist[i]);
        m.histogram.bucket.push_back({cum, std::ldexp(1.0, i + 1) / 1e9});  // [.., 2^(i+1) ns)
      }
      m.histogram.bucket.push_back({cum, std::numeric_limits<double>::infinity()});
      m.histogram.sample_count = cum;
      m.histogram.sample_sum = t.runq_wait_ns / 1e9;
      runq.metric.push_back(std::move(m));
    }
  }
  MetricFamily series_dropped = Family(
      "tfdiag_agent_series_dropped_total",
      "Series left off the page because it held its maximum of 50,000 (summed over updates)", kC);
  if (figures_.environ_reads >= 0 || series_dropped_ > 0) {
    ClientMetric m;
    m.label = {{"node", figures_.node}};
    m.counter.value = double(series_dropped_);
    series_dropped.metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> out;
  for (MetricFamily* f : {&up,
                          &cpu,
                          &threads,
                          &steps,
                          &runnable,
                          &periods,
                          &throttled,
                          &switches,
                          &traffic,
                          &hdfs,
                          &since,
                          &exit_time,
                          &cpuset,
                          &cpu_limit,
                          &node_cpus,
                          &other_sockets,
                          &untracked,
                          &dropped,
                          &environ_reads,
                          &conflicts,
                          &refused,
                          &environ_dropped,
                          &tasks_dropped,
                          &spec_dropped,
                          &series_dropped,
                          &runq}) {
    if (!f->metric.empty()) out.push_back(std::move(*f));
  }
  return out;
}

}  // namespace tfdiag
