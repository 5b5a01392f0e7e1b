// Scenario catalogue: names, descriptions, defaults, parameter validation and ground truth.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "samples/sim_internal.h"
#include "samples/simulator.h"

namespace tfdiag::sim {
namespace internal {
namespace {

// A scenario: name, one-line description and how it changes the healthy baseline.
struct ScenarioDef {
  const char* name;
  const char* description;
  void (*apply)(Config& c);
};

// Healthy sparse baseline: 2 PS, 8 workers, embedding partitioned one part per PS.
void SparseBase(Config& c) {
  c.ps = 2;
  c.workers = 8;
  c.sparse = true;
  c.emb_rows = 2'000'000;
  c.emb_dim = 64;
  c.dense_layers = 3;
  c.dense_width = 256;
  c.taper = true;
  c.step_ms = 100;
}

// Healthy dense baseline: 2 PS, 2 workers, 4 equal layers (even count keeps 2 PS balanced).
void DenseBase(Config& c) {
  c.ps = 2;
  c.workers = 2;
  c.sparse = false;
  c.emb_rows = 0;
  c.emb_dim = 0;
  c.dense_layers = 4;
  c.dense_width = 1024;
  c.dense_input = 1024;
  c.taper = false;
  c.batch = 256;
  c.step_ms = 60;
}

const ScenarioDef kScenarios[] = {
    {"balanced", "healthy sparse job: 2 PS, 8 workers, embedding partitioned one part per PS",
     [](Config& c) { SparseBase(c); }},
    {"hot-ps", "one large unpartitioned embedding on ps:0 takes most PS time (4 PS, 16 workers)",
     [](Config& c) {
       SparseBase(c);
       c.ps = 4;
       c.workers = 16;
       c.emb_rows = 10'000'000;
       c.emb_parts = 1;
       c.batch = 1024;
       c.placement = Placement::kRoundRobin;
       c.step_ms = 150;
     }},
    {"idle-ps", "8 PS for 4 workers, embedding parts only on ps:0-1: ps:2-7 idle, too many PS",
     [](Config& c) {
       SparseBase(c);
       c.ps = 8;
       c.workers = 4;
       c.placement = Placement::kIdle;
     }},
    {"dense-optimizer-on-embedding",
     "embedding parts updated by dense ApplyAdam every step instead of a sparse apply",
     [](Config& c) {
       SparseBase(c);
       c.emb_rows = 400'000;
       c.emb_dim = 32;
       c.emb_opt = EmbeddingOptimizer::kDenseAdam;
       c.step_ms = 150;
     }},
    {"gather-on-worker",
     "tf.gather runs on the workers: whole embedding partitions (400 MB) travel every step",
     [](Config& c) {
       SparseBase(c);
       c.emb_rows = 1'000'000;
       c.emb_dim = 100;
       c.gather_on_worker = true;
       c.show_memory = true;
     }},
    {"oversharding", "dense kernels cut into 32 tiny partitions each; layers wait for every shard",
     [](Config& c) {
       DenseBase(c);
       c.dense_layers = 3;
       c.dense_width = 512;
       c.kernel_parts = 32;
     }},
    {"sync-replicas",
     "SyncReplicasOptimizer: accumulators and a token queue; workers wait ~25% of each step",
     [](Config& c) {
       SparseBase(c);
       c.sync_replicas = true;
     }},
    {"input-bound", "IteratorGetNext takes 30% of every worker step on every worker",
     [](Config& c) {
       SparseBase(c);
       c.ign_frac = 0.30;
     }},
    {"ps-on-gpu", "PS tasks run on GPUs: host-to-device copies of every incoming gradient",
     [](Config& c) {
       DenseBase(c);
       c.ps_gpu = true;
     }},
    {"allreduce-candidate",
     "small dense model (~50 MB of variables, memory shown) that would fit all-reduce",
     [](Config& c) {
       DenseBase(c);
       c.dense_width = 1792;
       c.dense_input = 1792;
       c.show_memory = true;
       c.step_ms = 80;
     }},
    {"straggler-worker", "worker:3 takes twice as long per step as the other workers",
     [](Config& c) {
       SparseBase(c);
       c.straggler = 3;
       c.straggler_factor = 2.0;
     }},
};

const ScenarioDef* FindScenario(const std::string& name) {
  for (const ScenarioDef& s : kScenarios) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

}  // namespace

StatusOr<Config> ResolveConfig(const ScenarioParams& p) {
  const ScenarioDef* def = FindScenario(p.scenario);
  if (def == nullptr) {
    std::vector<std::string> names = ScenarioNames();
    return UsageError("unknown scenario '{}' (known: {})", p.scenario, fmt::join(names, ", "));
  }
  Config c;
  c.scenario = def->name;
  def->apply(c);
  if (p.ps != -1) c.ps = p.ps;
  if (p.workers != -1) c.workers = p.workers;
  c.steps = p.steps;
  c.format = p.format;
  c.pretty = p.pretty;
  c.tf2_steps = p.tf2_steps;
  c.worker_gpu = p.worker_gpu;
  c.tool_files = p.tool_files;
  c.session_clock = p.session_clock;
  c.device_tail_ns = p.device_tail_ns;
  c.rendezvous_keys = p.rendezvous_keys;
  c.gzip = p.gzip;
  c.seed = p.seed;
  if (p.dense_layers != -1) c.dense_layers = p.dense_layers;
  if (c.sparse) {
    if (p.embedding_rows != -1) c.emb_rows = p.embedding_rows;
    if (p.embedding_dim != -1) c.emb_dim = p.embedding_dim;
  }

  if (c.ps < 1 || c.ps > 512) return UsageError("ps must be in 1..512, got {}", c.ps);
  if (c.workers < 1 || c.workers > 4096) {
    return UsageError("workers must be in 1..4096, got {}", c.workers);
  }
  if (c.steps < 1 || c.steps > 100'000'000) {
    return UsageError("steps must be in 1..100000000, got {}", c.steps);
  }
  if (p.profiler_hook_minutes < 0 || p.profiler_hook_minutes > 100'000) {
    return UsageError("profiler_hook_minutes must be in 0..100000, got {}",
                      p.profiler_hook_minutes);
  }
  if (p.profiler_hook_minutes > 0 && c.steps > 10'000) {
    return UsageError("a ProfilerHook run writes a file per step: steps must be <= 10000, got {}",
                      c.steps);
  }
  if (p.profiler_hook_minutes > 0 && p.format != TraceFormat::kTf1 &&
      p.format != TraceFormat::kTf2 && p.format != TraceFormat::kXPlane) {
    return UsageError("ProfilerHook files are timelines (tf1, tf2) or XSpaces (xplane)");
  }
  if (p.tool_files && p.format != TraceFormat::kXPlane && p.format != TraceFormat::kTraceJson) {
    return UsageError("tool files sit in a log directory: --format xplane -o DIR or trace-json");
  }
  if (p.session_clock && p.format != TraceFormat::kXPlane && p.format != TraceFormat::kTraceJson) {
    return UsageError("--session-clock: TF 2.4+ XSpaces and trace JSON (xplane, trace-json)");
  }
  if (p.device_tail_ns < 0 || p.device_tail_ns > 10'000'000'000 ||
      (p.device_tail_ns > 0 && (!p.tf2_steps || (p.format != TraceFormat::kXPlane &&
                                                 p.format != TraceFormat::kTraceJson)))) {
    return UsageError(
        "--device-tail: 0 to 10000 ms, with --tf2-steps and a log directory (xplane -o DIR, "
        "trace-json)");
  }
  if (p.rendezvous_keys && p.format != TraceFormat::kXPlane &&
      p.format != TraceFormat::kTraceJson) {
    return UsageError("--rendezvous-keys: TF2 XSpaces and trace JSON (xplane, trace-json)");
  }
  if (c.dense_layers < 1 || c.dense_layers > 64) {
    return UsageError("dense_layers must be in 1..64, got {}", c.dense_layers);
  }
  if (c.scenario == "hot-ps" && c.ps < 2) return UsageError("hot-ps needs at least 2 PS");
  if (c.scenario == "idle-ps" && c.ps < 3) return UsageError("idle-ps needs at least 3 PS");
  if (c.scenario == "straggler-worker" && c.workers < 2) {
    return UsageError("straggler-worker needs at least 2 workers");
  }

  if (c.placement == Placement::kIdle) c.busy_ps = 2;
  // The hot PS serves its lookups and updates one at a time, in arrival order, so sweeps over the
  // worker count flatten where it saturates (tfdiag scaling).
  if (c.scenario == "hot-ps") c.ps_threads = 1;
  if (p.ps_threads != -1) c.ps_threads = p.ps_threads;
  if (c.ps_threads < 0 || c.ps_threads > 256) {
    return UsageError("ps_threads must be in 0..256 (0: unbounded), got {}", c.ps_threads);
  }
  if (c.sparse) {
    if (c.scenario != "hot-ps") c.emb_parts = c.placement == Placement::kIdle ? c.busy_ps : c.ps;
    if (c.emb_dim < 1 || c.emb_dim > 65536) {
      return UsageError("embedding_dim must be in 1..65536, got {}", c.emb_dim);
    }
    if (c.emb_rows < c.emb_parts || c.emb_rows > 100'000'000'000) {
      return UsageError("embedding_rows must be in {}..100000000000, got {}", c.emb_parts,
                        c.emb_rows);
    }
  }
  if (c.straggler >= c.workers) c.straggler = c.workers - 1;
  return c;
}

std::vector<Expectation> ExpectedFindings(const Config& c) {
  std::vector<Expectation> e;
  const std::string& s = c.scenario;
  if (s == "hot-ps") {
    e.push_back({"hot-ps", "ps:0", "embedding/embedding_weights"});
  } else if (s == "idle-ps") {
    for (int i = c.busy_ps; i < c.ps; ++i) e.push_back({"idle-ps", fmt::format("ps:{}", i), ""});
  } else if (s == "dense-optimizer-on-embedding") {
    for (int k = 0; k < c.emb_parts; ++k) {
      e.push_back({"dense-optimizer-on-embedding", fmt::format("ps:{}", k % c.ps),
                   fmt::format("embedding/embedding_weights/part_{}", k)});
    }
  } else if (s == "gather-on-worker") {
    for (int w = 0; w < c.workers; ++w) {
      e.push_back({"gather-on-worker", fmt::format("worker:{}", w), "embedding/embedding_weights"});
    }
  } else if (s == "oversharding") {
    for (int l = 1; l <= c.dense_layers; ++l) {
      e.push_back({"oversharding", fmt::format("dense_{}/kernel", l), ""});
    }
  } else if (s == "sync-replicas") {
    e.push_back({"sync-replicas", "job", ""});
  } else if (s == "input-bound") {
    for (int w = 0; w < c.workers; ++w)
      e.push_back({"input-bound", fmt::format("worker:{}", w), ""});
  } else if (s == "ps-on-gpu") {
    for (int i = 0; i < c.ps; ++i) e.push_back({"ps-on-gpu", fmt::format("ps:{}", i), ""});
  } else if (s == "allreduce-candidate") {
    e.push_back({"allreduce-candidate", "job", ""});
  } else if (s == "straggler-worker") {
    e.push_back({"straggler-worker", fmt::format("worker:{}", c.straggler), ""});
  }
  // The PS:worker ratio band (sparse 1:3..1:5, dense 2:1..1:2) is checked for every scenario.
  double ratio = static_cast<double>(c.workers) / c.ps;
  bool bad_ratio = c.sparse ? (ratio < 3.0 || ratio > 5.0) : (ratio < 0.5 || ratio > 2.0);
  if (bad_ratio) e.push_back({"ps-worker-ratio", "ps", ""});
  return e;
}

std::string GroundTruthJson(const Config& c) {
  std::string out = fmt::format(
      "{{\"scenario\":\"{}\",\"format\":\"{}\",\"ps\":{},\"workers\":{},\"steps\":{},"
      "\"seed\":{},\"embedding_rows\":{},\"embedding_dim\":{},\"dense_layers\":{},"
      "\"show_memory\":{},\"expect\":[",
      c.scenario, c.format == TraceFormat::kTf1 ? "tf1" : "tf2", c.ps, c.workers, c.steps, c.seed,
      c.sparse ? c.emb_rows : 0, c.sparse ? c.emb_dim : 0, c.dense_layers,
      c.show_memory ? "true" : "false");
  std::vector<Expectation> e = ExpectedFindings(c);
  for (size_t i = 0; i < e.size(); ++i) {
    if (i > 0) out += ',';
    out += fmt::format("{{\"rule\":\"{}\",\"subject\":\"{}\"", e[i].rule, JsonEscape(e[i].subject));
    if (!e[i].variable.empty()) out += fmt::format(",\"variable\":\"{}\"", e[i].variable);
    out += '}';
  }
  out += "]}";
  return out;
}

}  // namespace internal

std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  for (const internal::ScenarioDef& s : internal::kScenarios) names.emplace_back(s.name);
  return names;
}

std::string ScenarioDescription(const std::string& name) {
  const internal::ScenarioDef* s = internal::FindScenario(name);
  return s == nullptr ? std::string() : std::string(s->description);
}

Status WriteScenario(const ScenarioParams& p, const std::string& path) {
  StatusOr<internal::Config> c = internal::ResolveConfig(p);
  if (!c.ok()) return c.status();
  if (p.profiler_hook_minutes == 0) return internal::WriteModel(internal::BuildModel(*c), path);
  // ProfilerHook: one capture per step, minutes apart, each its own file.
  if (path == "-") return UsageError("ProfilerHook files go to a directory: -o DIR");
  if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) {
    return IoError("{}: cannot create directory: {}", path, std::strerror(errno));
  }
  for (int k = 0; k < c->steps; ++k) {
    internal::Config one = *c;
    one.steps = 1;
    one.seed = c->seed + static_cast<uint64_t>(k);
    one.epoch_offset_ns = int64_t{k} * p.profiler_hook_minutes * 60'000'000'000;
    const std::string file =
        p.format == TraceFormat::kXPlane
            ? fmt::format("{}/step-{}.xplane.pb", path, k + 1)
            : fmt::format("{}/timeline-{}.json{}", path, k + 1, p.gzip ? ".gz" : "");
    TFDIAG_RETURN_IF_ERROR(internal::WriteModel(internal::BuildModel(one), file));
  }
  return OkStatus();
}

}  // namespace tfdiag::sim
