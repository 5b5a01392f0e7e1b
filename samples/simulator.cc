// The scheduler: replays every worker's step plan `steps` times on a simulated clock and streams
// the resulting events. An event-driven simulation of all workers at once: an op arrives at its
// device when its inputs are ready (plus its latency) and starts at once, except on a PS with
// bounded threads (Config::ps_threads), which serves the ops it receives in arrival order, a free
// thread never idling while an op waits (TF's PS runs incoming requests on its inter-op pool).
// A finished step's events wait in per-device queues until no step can produce an earlier event
// (the horizon: the start of the oldest unfinished step), then are sorted, given timeline.py's
// lanes (tid) and written.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "samples/sim_internal.h"

namespace tfdiag::sim::internal {
namespace {

constexpr int64_t kEpochNs = 1'600'000'000'000'000'000 + 123'456'789;  // ~2020-09-13

// One executed op.
struct Event {
  int64_t start = 0, end = 0;       // simulated ns
  int64_t out_ts = 0, out_end = 0;  // in output units (TF1: us, TF2: ns), set at flush
  int32_t tmpl = 0;
  int32_t lane = -1;
  int32_t flow_from = -1;  // producer index in the same block
};

// All events of one worker step.
struct Block {
  std::vector<Event> ev;
  int64_t end = 0;  // ns
  uint64_t seq = 0;
  size_t remaining = 0;  // events not yet written
  // While the step runs: its worker, start, per-op duration and latency (drawn at the start),
  // inputs not yet done, latest input end, and ops not yet ended.
  int worker = 0;
  int64_t t0 = 0, gap = -1;  // gap: idle time before the worker's next step, -1 if last
  std::vector<int64_t> len, lat, ready;
  std::vector<int32_t> waiting;
  size_t running = 0;
};

// A point of the simulated clock: a worker's step starts, an op arrives at its device, or an
// op ends. Ordered by time, then by creation (deterministic).
struct Tick {
  enum Kind : int8_t { kStepStart, kArrive, kEnd };
  int64_t t = 0;
  uint64_t order = 0;
  Kind kind = kStepStart;
  int32_t op = 0;  // kStepStart: the worker
  Block* block = nullptr;
  bool operator>(const Tick& o) const { return t != o.t ? t > o.t : order > o.order; }
};

struct Ref {
  Block* block;
  int32_t index;
  int64_t start() const { return block->ev[index].start; }
};

bool RefLess(const Ref& a, const Ref& b) {
  int64_t sa = a.start(), sb = b.start();
  if (sa != sb) return sa < sb;
  if (a.block->seq != b.block->seq) return a.block->seq < b.block->seq;
  return a.index < b.index;
}

class Scheduler {
 public:
  // `proto`: write events there instead of JSON into `out` (the protobuf formats).
  Scheduler(const Model& m, OutputSink& out, ProtoSink* proto = nullptr)
      : m_(m),
        c_(m.cfg),
        out_(out),
        proto_(proto),
        rng_(m.cfg.seed),
        pending_(m.devices.size()),
        lanes_(m.devices.size()),
        tf1_(m.cfg.format == TraceFormat::kTf1 || m.cfg.format == TraceFormat::kRunMetadata) {}

  Status Run();

 private:
  double Uniform() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }
  double Symmetric() { return 2.0 * Uniform() - 1.0; }
  int64_t Schedule(const StepPlan& plan, int64_t t0, int64_t target, double scale);
  void Step(int w, int64_t t0);
  void Push(int64_t t, Tick::Kind kind, Block* b, int32_t op) {
    queue_.push(Tick{t, next_order_++, kind, op, b});
  }
  void Arrive(Block* b, int32_t i, int64_t t);
  void Start(Block* b, int32_t i, int64_t t);
  Status End(Block* b, int32_t i, int64_t t);
  void Finish(Block* b);
  Status Flush(int64_t horizon);
  void WriteHeader();
  void WriteEvent(const Block& b, const Event& e);
  void Time(int64_t v) {  // a timestamp or duration in output units
    std::string& s = out_.buf();
    if (tf1_) {
      fmt::format_int f(v);
      s.append(f.data(), f.size());
      return;
    }
    fmt::format_int f(v / 1000);
    s.append(f.data(), f.size());
    int64_t frac = v % 1000;
    char d[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                 static_cast<char>('0' + frac % 10)};
    s.append(d, 4);
  }
  void Int(int64_t v) {
    fmt::format_int f(v);
    out_.buf().append(f.data(), f.size());
  }

  const Model& m_;
  const Config& c_;
  OutputSink& out_;
  ProtoSink* proto_;
  std::mt19937_64 rng_;
  std::vector<std::vector<Ref>> pending_;    // per device, sorted by start
  std::vector<std::vector<int64_t>> lanes_;  // per device: end of the last op in each lane
  std::deque<std::unique_ptr<Block>> blocks_;
  uint64_t next_seq_ = 0;
  int64_t next_flow_ = 0, next_object_ = 0;
  bool tf1_;
  std::vector<double> speed_;          // per-worker step time factor
  std::vector<double> u_dur_, u_lat_;  // per-op random draws of the current step
  std::vector<int64_t> start_, end_, lat_, len_;
  std::vector<Ref> fresh_;
  // The simulated clock's pending ticks.
  std::priority_queue<Tick, std::vector<Tick>, std::greater<Tick>> queue_;
  uint64_t next_order_ = 0;
  std::vector<int> done_;  // steps started per worker
  // Per plan: the ops that consume each op (CSR: consumers_[w][first_[w][i] .. first_[w][i+1])).
  std::vector<std::vector<int32_t>> first_, consumers_;
  // Devices with bounded threads (Device::threads): threads busy, ops waiting in arrival order.
  std::vector<int> busy_;
  std::vector<std::deque<std::pair<Block*, int32_t>>> waiting_;
};

// Lays the plan out from t0 with compute `scale` as if no op waited for its device; returns the
// span (ns). Leaves each op's latency and duration in lat_ and len_.
int64_t Scheduler::Schedule(const StepPlan& plan, int64_t t0, int64_t target, double scale) {
  int64_t last = t0;
  for (size_t i = 0; i < plan.ops.size(); ++i) {
    const PlanOp& op = plan.ops[i];
    int64_t ready = t0;
    for (int d = op.dep_begin; d < op.dep_end; ++d) ready = std::max(ready, end_[plan.deps[d]]);
    int64_t lat =
        static_cast<int64_t>(static_cast<double>(op.cost.latency_ns) * (1.0 + 0.3 * u_lat_[i]));
    double dur = static_cast<double>(op.cost.base_ns) + op.cost.weight * scale +
                 op.cost.step_frac * static_cast<double>(target);
    dur *= 1.0 + op.cost.jitter * u_dur_[i];
    start_[i] = ready + lat;
    const int64_t len = std::max<int64_t>(500, static_cast<int64_t>(dur));
    lat_[i] = lat;
    len_[i] = len;
    end_[i] = start_[i] + len;
    last = std::max(last, end_[i]);
  }
  return last - t0;
}

void Scheduler::Step(int w, int64_t t0) {
  const StepPlan& plan = m_.plans[w];
  size_t n = plan.ops.size();
  u_dur_.resize(n);
  u_lat_.resize(n);
  start_.resize(n);
  end_.resize(n);
  lat_.resize(n);
  len_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    u_dur_[i] = Symmetric();
    u_lat_[i] = Symmetric();
  }
  int64_t target = static_cast<int64_t>(static_cast<double>(plan.step_ns) * speed_[w] *
                                        (1.0 + 0.03 * Symmetric()));
  double weight = plan.total_weight;
  double scale = 0;
  if (weight > 0) {
    // Compute fills whatever the fixed work leaves of the target, but at least 35% of it.
    int64_t span0 = Schedule(plan, t0, target, 0.0);
    double min_scale = 0.35 * static_cast<double>(target) / weight;
    scale = std::max(min_scale, static_cast<double>(target - span0) / weight);
    int64_t span1 = Schedule(plan, t0, target, scale);
    if (span1 > span0 && target > span0) {  // correct for compute hidden behind transfers
      scale = std::max(min_scale, scale * static_cast<double>(target - span0) /
                                      static_cast<double>(span1 - span0));
    }
  }
  Schedule(plan, t0, target, scale);  // the ops' latencies and durations

  auto block = std::make_unique<Block>();
  Block* b = block.get();
  b->seq = next_seq_++;
  b->worker = w;
  b->t0 = t0;
  if (++done_[w] < c_.steps) b->gap = static_cast<int64_t>((150 + 250 * Uniform()) * 1000);
  b->ev.resize(n);
  b->remaining = n;
  b->running = n;
  b->len.assign(len_.begin(), len_.begin() + static_cast<std::ptrdiff_t>(n));
  b->lat.assign(lat_.begin(), lat_.begin() + static_cast<std::ptrdiff_t>(n));
  b->ready.assign(n, t0);
  b->waiting.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Event& e = b->ev[i];
    e.tmpl = plan.ops[i].tmpl;
    e.flow_from = plan.ops[i].flow_from;
    b->waiting[i] = plan.ops[i].dep_end - plan.ops[i].dep_begin;
    if (b->waiting[i] == 0) Push(t0 + b->lat[i], Tick::kArrive, b, static_cast<int32_t>(i));
  }
  blocks_.push_back(std::move(block));
}

// Op i of b reaches its device at t: it starts, or waits for a thread of its PS.
void Scheduler::Arrive(Block* b, int32_t i, int64_t t) {
  const int dev = m_.templates[b->ev[i].tmpl].device;
  const int threads = m_.devices[dev].threads;
  if (threads > 0) {
    if (busy_[dev] == threads) {
      waiting_[dev].emplace_back(b, i);
      return;
    }
    ++busy_[dev];
  }
  Start(b, i, t);
}

void Scheduler::Start(Block* b, int32_t i, int64_t t) {
  b->ev[i].start = t;
  b->ev[i].end = t + b->len[i];
  Push(b->ev[i].end, Tick::kEnd, b, i);
}

// Op i of b ends at t: its thread takes the oldest waiting op; its consumers may become ready.
Status Scheduler::End(Block* b, int32_t i, int64_t t) {
  const int dev = m_.templates[b->ev[i].tmpl].device;
  if (m_.devices[dev].threads > 0) {
    if (waiting_[dev].empty()) {
      --busy_[dev];
    } else {
      auto [wb, wi] = waiting_[dev].front();
      waiting_[dev].pop_front();
      Start(wb, wi, t);
    }
  }
  const std::vector<int32_t>& first = first_[b->worker];
  const std::vector<int32_t>& consumers = consumers_[b->worker];
  for (int32_t k = first[i]; k < first[i + 1]; ++k) {
    const int32_t j = consumers[k];
    b->ready[j] = std::max(b->ready[j], t);
    if (--b->waiting[j] == 0) Push(b->ready[j] + b->lat[j], Tick::kArrive, b, j);
  }
  if (--b->running > 0) return OkStatus();
  // The step is over: its events join their devices' queues; the worker's next step follows.
  b->end = t;
  Finish(b);
  if (b->gap >= 0) Push(t + b->gap, Tick::kStepStart, nullptr, b->worker);
  // No step still running or yet to start can produce an event before the oldest running one.
  int64_t horizon = queue_.empty() ? std::numeric_limits<int64_t>::max() : queue_.top().t;
  for (const std::unique_ptr<Block>& o : blocks_) {
    if (o->running > 0) {
      horizon = std::min(horizon, o->t0);
      break;  // blocks_ is in order of start
    }
  }
  return Flush(horizon);
}

// Merges the events of the finished step b into each device's sorted queue.
void Scheduler::Finish(Block* b) {
  const size_t n = b->ev.size();
  b->len = {};
  b->lat = {};
  b->ready = {};
  b->waiting = {};
  fresh_.clear();
  for (size_t i = 0; i < n; ++i) fresh_.push_back(Ref{b, static_cast<int32_t>(i)});
  std::sort(fresh_.begin(), fresh_.end(), [this](const Ref& x, const Ref& y) {
    int dx = m_.templates[x.block->ev[x.index].tmpl].device;
    int dy = m_.templates[y.block->ev[y.index].tmpl].device;
    return dx != dy ? dx < dy : RefLess(x, y);
  });
  for (size_t i = 0; i < fresh_.size();) {
    int dev = m_.templates[fresh_[i].block->ev[fresh_[i].index].tmpl].device;
    std::vector<Ref>& q = pending_[dev];
    size_t mid = q.size();
    while (i < fresh_.size() &&
           m_.templates[fresh_[i].block->ev[fresh_[i].index].tmpl].device == dev) {
      q.push_back(fresh_[i++]);
    }
    std::inplace_merge(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(mid), q.end(), RefLess);
  }
}

Status Scheduler::Flush(int64_t horizon) {
  std::vector<size_t> ready(pending_.size());
  // Lanes first for every device, so DataFlow arrows can name their producer's lane.
  for (size_t d = 0; d < pending_.size(); ++d) {
    std::vector<Ref>& q = pending_[d];
    size_t k = 0;
    while (k < q.size() && q[k].start() < horizon) {
      Event& e = q[k].block->ev[q[k].index];
      if (tf1_) {
        e.out_ts = e.start / 1000;
        e.out_end = e.out_ts + std::max<int64_t>(1, e.end / 1000 - e.out_ts);
      } else {
        e.out_ts = e.start;
        e.out_end = e.end;
      }
      // timeline.py _assign_lanes: first lane whose last op ended before this one starts.
      std::vector<int64_t>& lanes = lanes_[d];
      if (lanes.empty()) lanes.push_back(0);
      size_t l = 0;
      while (l < lanes.size() && !(e.out_ts > lanes[l])) ++l;
      if (l == lanes.size()) lanes.push_back(0);
      lanes[l] = e.out_end;
      e.lane = static_cast<int32_t>(l);
      ++k;
    }
    ready[d] = k;
  }
  for (size_t d = 0; d < pending_.size(); ++d) {
    std::vector<Ref>& q = pending_[d];
    for (size_t k = 0; k < ready[d]; ++k) {
      const Event& e = q[k].block->ev[q[k].index];
      if (proto_ != nullptr) {
        TFDIAG_RETURN_IF_ERROR(proto_->Event(m_.templates[e.tmpl], e.start, e.end, e.lane,
                                             static_cast<int64_t>(q[k].block->seq)));
      } else {
        WriteEvent(*q[k].block, e);
      }
      --q[k].block->remaining;
      if (proto_ == nullptr) TFDIAG_RETURN_IF_ERROR(out_.MaybeFlush());
    }
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(ready[d]));
  }
  while (!blocks_.empty() && blocks_.front()->remaining == 0) blocks_.pop_front();
  return OkStatus();
}

void Scheduler::WriteEvent(const Block& b, const Event& e) {
  std::string& s = out_.buf();
  const OpTemplate& t = m_.templates[e.tmpl];
  s += ',';
  s += t.head;
  Int(e.lane);
  s += R"(,"ts":)";
  Time(e.out_ts);
  s += t.mid;
  Time(e.out_end - e.out_ts);
  s += t.tail;
  const Device& dev = m_.devices[t.device];
  if (e.flow_from >= 0) {
    const Event& p = b.ev[e.flow_from];
    const OpTemplate& pt = m_.templates[p.tmpl];
    int64_t id = next_flow_++;
    const char* phases[2] = {"s", "t"};
    for (int k = 0; k < 2; ++k) {
      s += R"(,{"ph":")";
      s += phases[k];
      s += R"(","cat":"DataFlow","name":")";
      s += pt.flow_name;
      s += R"(","pid":)";
      Int(k == 0 ? m_.devices[pt.device].pid : dev.pid);
      s += R"(,"tid":)";
      Int(k == 0 ? p.lane : e.lane);
      s += R"(,"ts":)";
      Time(k == 0 ? p.out_end : e.out_ts);
      s += R"(,"id":)";
      Int(id);
      s += '}';
    }
  }
  for (const OpTemplate::Mem& mem : t.mem) {
    int64_t id = next_object_++;
    int64_t unit = tf1_ ? 1 : 1000;
    int64_t snap = std::max(e.out_ts, e.out_end - unit);  // timeline.py: end_time - 1
    int64_t dealloc = tf1_ ? b.end / 1000 : b.end;
    const int64_t times[3] = {e.out_ts, snap, dealloc};
    const char* phases[3] = {"N", "O", "D"};
    for (int k = 0; k < 3; ++k) {
      s += R"(,{"ph":")";
      s += phases[k];
      s += '"';
      s += mem.head;
      Time(times[k]);
      s += R"(,"id":)";
      Int(id);
      if (k == 1) {
        s += R"(,"args":)";
        s += mem.snapshot;
      }
      s += '}';
    }
  }
}

void Scheduler::WriteHeader() {
  std::string& s = out_.buf();
  auto meta = [&](int pid, const std::string& name) {
    if (tf1_) {
      s += fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"{}"}}}})", pid,
                       JsonEscape(name));
    } else {
      s += fmt::format(R"({{"ph":"M","pid":{},"name":"process_name","args":{{"name":"{}"}}}})", pid,
                       JsonEscape(name));
    }
  };
  s += tf1_ ? R"({"traceEvents":[)"
            : R"({"displayTimeUnit":"ns","metadata":{"highres-ticks":true},"traceEvents":[)";
  meta(0, "Allocators");  // every later event starts with ','
  for (const Device& d : m_.devices) {
    s += ',';
    meta(d.pid, d.name + " Compute");
    s += ',';
    meta(d.tensors_pid, d.name + " Tensors");
  }
}

Status Scheduler::Run() {
  if (proto_ == nullptr) WriteHeader();
  busy_.assign(m_.devices.size(), 0);
  waiting_.resize(m_.devices.size());
  done_.assign(c_.workers, 0);
  first_.resize(c_.workers);
  consumers_.resize(c_.workers);
  for (int w = 0; w < c_.workers; ++w) {  // each op's consumers, from the plan's inputs
    const StepPlan& plan = m_.plans[w];
    std::vector<int32_t>& first = first_[w];
    first.assign(plan.ops.size() + 1, 0);
    for (int d : plan.deps) ++first[d + 1];
    for (size_t i = 0; i < plan.ops.size(); ++i) first[i + 1] += first[i];
    consumers_[w].resize(plan.deps.size());
    std::vector<int32_t> at(first.begin(), first.end() - 1);
    for (size_t i = 0; i < plan.ops.size(); ++i) {
      for (int d = plan.ops[i].dep_begin; d < plan.ops[i].dep_end; ++d) {
        consumers_[w][at[plan.deps[d]]++] = static_cast<int32_t>(i);
      }
    }
  }
  speed_.resize(c_.workers);
  for (int w = 0; w < c_.workers; ++w) {
    speed_[w] = 1.0 + 0.02 * Symmetric();  // per-worker machine speed, well inside +-10%
    int64_t offset = m_.plans[w].step_ns * w / c_.workers;
    Push((c_.session_clock ? 1'000'000 : kEpochNs) + c_.epoch_offset_ns + offset +
             static_cast<int64_t>(Uniform() * 2e6),
         Tick::kStepStart, nullptr, w);
  }
  while (!queue_.empty()) {
    const Tick k = queue_.top();
    queue_.pop();
    if (k.kind == Tick::kStepStart) {
      Step(k.op, k.t);
    } else if (k.kind == Tick::kArrive) {
      Arrive(k.block, k.op, k.t);
    } else {
      TFDIAG_RETURN_IF_ERROR(End(k.block, k.op, k.t));
    }
  }
  TFDIAG_RETURN_IF_ERROR(Flush(std::numeric_limits<int64_t>::max()));
  if (proto_ != nullptr) return proto_->Finish();
  std::string& s = out_.buf();
  if (!tf1_) s += ",{}";
  s += R"(],"tfdiagGroundTruth":)";
  s += GroundTruthJson(c_);
  s += '}';
  return out_.Finish();
}

}  // namespace

Status WriteModel(const Model& m, const std::string& path) {
  const bool trace_json = m.cfg.format == TraceFormat::kTraceJson;
  if (trace_json && (path == "-" || path.find(".json") != std::string::npos ||
                     path.find(".xplane.pb") != std::string::npos)) {
    return UsageError(
        "--format trace-json writes a log directory, one <task>.trace.json.gz per task: -o DIR");
  }
  if (m.cfg.tool_files && (path == "-" || path.find(".xplane.pb") != std::string::npos)) {
    return UsageError("--tool-files: the tool files sit in a log directory: -o DIR");
  }
  if (m.cfg.format == TraceFormat::kXPlane || m.cfg.format == TraceFormat::kRunMetadata ||
      trace_json) {
    StatusOr<std::unique_ptr<ProtoSink>> sink = OpenProtoSink(m, path);
    if (!sink.ok()) return sink.status();
    OutputSink unused;
    Scheduler s(m, unused, sink->get());
    TFDIAG_RETURN_IF_ERROR(s.Run());
    if (trace_json) TFDIAG_RETURN_IF_ERROR(ConvertLogDirToTraceJson(path));
    return m.cfg.tool_files ? WriteToolFiles(m, path) : OkStatus();
  }
  OutputSink out;
  TFDIAG_RETURN_IF_ERROR(out.Open(path, m.cfg.pretty, m.cfg.gzip));
  Scheduler s(m, out);
  return s.Run();
}

}  // namespace tfdiag::sim::internal
