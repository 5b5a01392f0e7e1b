#include "viewer/loader.h"

#include <algorithm>

#include "analyzers/op_names.h"
#include "core/stopwatch.h"
#include "pipeline/pipeline.h"
#include "pipeline/run_files.h"
#include "rules/rule_set.h"

namespace tfdiag::view {

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool Contains(std::string_view s, std::string_view p) { return s.find(p) != s.npos; }

}  // namespace

std::string_view OpKindName(OpKind kind) {
  switch (kind) {
    case OpKind::kCompute:
      return "compute";
    case OpKind::kComm:
      return "communication";
    case OpKind::kInput:
      return "input";
    case OpKind::kApply:
      return "optimizer apply";
    default:
      return "other";
  }
}

OpKind ClassifyOp(std::string_view t, std::string_view name) {
  if (t == "RecvTensor" || t == "_Recv" || t == "_Send" || t == "_HostRecv" || t == "_HostSend" ||
      t == "Send" || t == "Recv" || StartsWith(t, "Collective") || Contains(t, "AllReduce") ||
      StartsWith(t, "Nccl") || StartsWith(t, "MEMCPY") || StartsWith(t, "Memcpy")) {
    return OpKind::kComm;
  }
  if (IsInputOp(t, name)) return OpKind::kInput;
  if (IsDenseApplyOpType(t) || IsSparseApplyOpType(t)) return OpKind::kApply;
  if (t.empty() || t == "NoOp" || t == "_SOURCE" || t == "_SINK" || t == "Identity" ||
      t == "IdentityN" || t == "Const" || t == "Placeholder" || t == "_Arg" || t == "_Retval" ||
      t == "ReadVariableOp" || t == "StopGradient" || t == "Snapshot" || IsVariableOpType(t) ||
      IsSyncReplicasOp(t, name)) {
    return OpKind::kOther;
  }
  return OpKind::kCompute;
}

TimelineIndex BuildTimelineIndex(const Capture& c) {
  TimelineIndex ix;
  ix.kinds.resize(c.ops.size());
  // An op's kind is its node's (type and name): classify each node once.
  std::vector<OpKind> node_kind(c.nodes.size());
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    node_kind[n] = ClassifyOp(c.Str(c.nodes[n].type), c.Str(c.nodes[n].name));
  }
  for (size_t i = 0; i < c.ops.size(); ++i) ix.kinds[i] = node_kind[c.ops.plain()[i].node];

  ix.order.resize(c.ops.size());
  ix.max_end.resize(c.ops.size());
  ix.task_rows.assign(c.tasks.size(), kNoIndex);
  uint32_t pos = 0;
  std::vector<uint16_t> lanes;
  std::vector<uint32_t> fill;
  for (uint32_t d = 0; d < c.devices.size() && d < c.device_ops.size(); ++d) {
    auto [b, e] = c.device_ops[d];
    if (b == e) continue;
    lanes.clear();
    for (uint32_t i = b; i < e; ++i) lanes.push_back(c.ops.plain()[i].lane);
    std::sort(lanes.begin(), lanes.end());
    lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
    // Counting sort by lane keeps each lane's ops in start order (device ops are sorted).
    std::vector<uint32_t> count(lanes.size(), 0);
    auto lane_of = [&](uint16_t lane) {
      return static_cast<size_t>(std::lower_bound(lanes.begin(), lanes.end(), lane) -
                                 lanes.begin());
    };
    for (uint32_t i = b; i < e; ++i) ++count[lane_of(c.ops.plain()[i].lane)];
    fill.assign(lanes.size(), 0);
    uint32_t task = c.devices[d].task;
    if (ix.task_rows[task] == kNoIndex) ix.task_rows[task] = static_cast<uint32_t>(ix.rows.size());
    size_t first_row = ix.rows.size();
    for (size_t l = 0; l < lanes.size(); ++l) {
      TimelineRow row;
      row.task = task;
      row.device = d;
      row.lane = lanes[l];
      row.begin = pos;
      row.end = pos + count[l];
      fill[l] = pos;
      pos = row.end;
      ix.rows.push_back(row);
    }
    for (uint32_t i = b; i < e; ++i) ix.order[fill[lane_of(c.ops.plain()[i].lane)]++] = i;
    for (size_t r = first_row; r < ix.rows.size(); ++r) {
      TimeNs m = INT64_MIN;
      for (uint32_t k = ix.rows[r].begin; k < ix.rows[r].end; ++k) {
        m = std::max(m, c.ops.plain()[ix.order[k]].end());
        ix.max_end[k] = m;
      }
    }
  }
  ix.order.resize(pos);
  ix.max_end.resize(pos);
  for (uint32_t& r : ix.task_rows) {
    if (r == kNoIndex) r = static_cast<uint32_t>(ix.rows.size());
  }
  return ix;
}

double LoadProgress::Fraction() const {
  switch (phase) {
    case kReading: {
      if (files == 0) return 0;
      double in_file = bytes_total > 0 ? double(bytes_done) / double(bytes_total) : 0;
      return 0.9 * (double(file) + std::min(1.0, in_file)) / double(files);
    }
    case kAnalyzing:
      return 0.9;
    case kIndexing:
      return 0.97;
    default:
      return 1;
  }
}

const char* LoadProgress::PhaseName() const {
  static const char* const kNames[] = {"reading", "analyzing", "indexing", "done", "failed"};
  return kNames[phase];
}

struct Loader::State {
  std::atomic<int> phase{LoadProgress::kReading};
  std::atomic<size_t> file{0};
  std::atomic<int64_t> bytes_done{0}, bytes_total{0};
  std::atomic<size_t> files{0};
  std::atomic<bool> done{false};
  mutable std::mutex mu;
  std::shared_ptr<const Snapshot> snapshot;  // guarded by mu
  Status error;                              // guarded by mu

  void Fail(Status s) {
    {
      std::lock_guard<std::mutex> lock(mu);
      error = std::move(s);
    }
    phase = LoadProgress::kFailed;
    done = true;
  }
  void Finish(std::shared_ptr<const Snapshot> snap) {
    {
      std::lock_guard<std::mutex> lock(mu);
      snapshot = std::move(snap);
    }
    phase = LoadProgress::kDone;
    done = true;
  }
};

Loader::Loader(LoadRequest rq) : state_(std::make_shared<State>()) {
  state_->files = rq.paths.size();
  if (rq.threads <= 0) {
    rq.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }
  const bool scaling = rq.scaling;
  thread_ = std::thread(scaling ? RunScaling : Run, state_, std::move(rq));
}

Loader::~Loader() {
  if (!thread_.joinable()) return;
  if (state_->done) {
    thread_.join();
  } else {
    thread_.detach();  // the thread keeps the shared state alive; the process may exit under it
  }
}

LoadProgress Loader::Progress() const {
  LoadProgress p;
  p.phase = static_cast<LoadProgress::Phase>(state_->phase.load());
  p.file = state_->file;
  p.files = state_->files;
  p.bytes_done = state_->bytes_done;
  p.bytes_total = state_->bytes_total;
  return p;
}

bool Loader::Done() const { return state_->done; }

std::shared_ptr<const Snapshot> Loader::snapshot() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->snapshot;
}

Status Loader::error() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->error;
}

void Loader::Run(std::shared_ptr<State> st, LoadRequest rq) {
  auto Fail = [&st](Status s) { st->Fail(std::move(s)); };
  Stopwatch watch;
  StatusOr<RuleSet> rules = DefaultRuleSet();
  if (!rules.ok()) return Fail(rules.status());
  // The CLI's pipeline (pipeline/pipeline.h): the same inputs give the same findings.
  PipelineOptions po;
  po.names = rq.names;
  po.threads = rq.threads;
  po.run = rq.run;
  po.tf_config = rq.tf_config;
  po.progress = [&st](size_t i, size_t files, const std::string&, int64_t done, int64_t total) {
    st->files = files;
    st->file = i;
    st->bytes_done = done;
    st->bytes_total = total;
  };
  po.on_analyze = [&st] { st->phase = LoadProgress::kAnalyzing; };
  StatusOr<PipelineResult> run = AnalyzeInputs(rq.paths, *rules, std::move(po));
  if (!run.ok()) return Fail(run.status());
  // No input gave the rules anything (a misspelt kind, a pod list without TF pods): the load
  // fails with the line `tfdiag analyze` exits 2 with, not an empty "No rule fired" view.
  const std::string nothing = NothingToJudge(*run);
  if (!nothing.empty()) return Fail(InvalidInput("{}", nothing));
  auto snap = std::make_shared<Snapshot>();
  snap->paths = rq.names.empty() ? std::move(rq.paths) : std::move(rq.names);
  snap->capture = std::move(run->capture);
  snap->k8s = std::move(run->k8s);  // what snap->analysis.k8s points to
  snap->analysis = std::move(run->analysis);
  // The timeline draws from row pointers (ops packed by a profile reader are unpacked: the
  // viewer indexes every op anyway).
  snap->capture.ops.Unpack();
  st->phase = LoadProgress::kIndexing;
  snap->timeline = BuildTimelineIndex(snap->capture);
  snap->load_seconds = watch.Seconds();
  st->Finish(std::move(snap));
}

void Loader::RunScaling(std::shared_ptr<State> st, LoadRequest rq) {
  const std::vector<std::string>& paths = rq.paths;
  const std::vector<std::string>& names = rq.names;
  auto Fail = [&st](Status s) { st->Fail(std::move(s)); };
  Stopwatch watch;
  StatusOr<RuleSet> rules = DefaultRuleSet();
  if (!rules.ok()) return Fail(rules.status());
  const Rule* rule = rules->Find("scaling-limit");
  if (rule == nullptr) return Fail(InvalidInput("the rule set has no rule 'scaling-limit'"));
  if (paths.size() < 2) {
    return Fail(
        UsageError("--scaling compares runs of one job: give at least two (got {})", paths.size()));
  }
  std::vector<ScalingRun> runs;
  for (size_t i = 0; i < paths.size(); ++i) {
    st->file = i;  // runs are analyzed whole: progress moves run by run
    StatusOr<ScalingRun> run = LoadScalingRun(paths[i], *rules, 0, rq.threads);
    if (!run.ok()) return Fail(run.status());
    if (i < names.size()) run->name = names[i];
    runs.push_back(std::move(*run));
  }
  st->phase = LoadProgress::kAnalyzing;
  StatusOr<ScalingResult> result = CompareRuns(std::move(runs), *rule);
  if (!result.ok()) return Fail(result.status());
  if (!rule->enabled) result->findings.clear();
  auto snap = std::make_shared<Snapshot>();
  snap->paths = names.empty() ? paths : names;
  snap->analysis.findings = result->findings;
  snap->saturation_pct = rule->Param("saturation_pct");
  snap->scaling = std::make_shared<const ScalingResult>(std::move(*result));
  snap->load_seconds = watch.Seconds();
  st->Finish(std::move(snap));
}

}  // namespace tfdiag::view
