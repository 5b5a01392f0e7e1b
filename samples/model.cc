// Builds the simulated job: devices, variables and their placement on the PS tasks.
// The per-worker step plans are built in samples/step_plan.cc.
#include <fmt/format.h>

#include <algorithm>

#include "samples/model_internal.h"

namespace tfdiag::sim::internal {

int64_t Var::bytes() const {
  int64_t n = elem_bytes;
  for (int64_t d : dims) n *= d;
  return n;
}

double EstimateLoadNs(const Config& c, const Var& v) {
  if (v.kind == VarKind::kEmbedding) {
    int64_t ids = c.batch * c.ids_per_example;
    int64_t rows = c.emb_parts > 1 ? ids / c.emb_parts : ids;
    return static_cast<double>(GatherNs(rows, c.emb_dim, c.emb_rows) +
                               SparseApplyNs(rows, c.emb_dim) + 2 * RecvNs(rows * c.emb_dim * 4));
  }
  return static_cast<double>(RecvNs(v.bytes()) + DenseApplyNs(v.bytes()) + 10 * kUs);
}

namespace {

// Creates the trainable variables and global_step in creation order (placement not yet set).
Vars CreateVars(const Config& c) {
  Vars vs;
  auto add = [&vs](Var v) {
    vs.v.push_back(std::move(v));
    return static_cast<int>(vs.v.size()) - 1;
  };
  if (c.sparse) {
    int64_t base = c.emb_rows / c.emb_parts, extra = c.emb_rows % c.emb_parts;
    for (int k = 0; k < c.emb_parts; ++k) {
      Var v;
      v.name = c.emb_parts == 1 ? std::string("embedding/embedding_weights")
                                : fmt::format("embedding/embedding_weights/part_{}", k);
      v.kind = VarKind::kEmbedding;
      v.part = c.emb_parts == 1 ? -1 : k;
      v.dims = {base + (k < extra ? 1 : 0), c.emb_dim};
      vs.emb.push_back(add(v));
    }
  }
  int64_t in = c.sparse ? c.ids_per_example * c.emb_dim : c.dense_input;
  int layers = c.dense_layers + 1;  // hidden layers plus the logits layer
  vs.kernel.resize(layers);
  vs.bias.resize(layers);
  for (int l = 0; l < layers; ++l) {
    bool logits = l == c.dense_layers;
    int64_t out =
        logits ? 1 : (c.taper ? std::max<int64_t>(16, c.dense_width >> l) : c.dense_width);
    std::string scope = logits ? std::string("logits") : fmt::format("dense_{}", l + 1);
    vs.in_dim.push_back(in);
    vs.out_dim.push_back(out);
    int parts = logits ? 1 : c.kernel_parts;
    for (int j = 0; j < parts; ++j) {
      Var k;
      k.name = parts == 1 ? scope + "/kernel" : fmt::format("{}/kernel/part_{}", scope, j);
      k.kind = VarKind::kKernel;
      k.layer = l;
      k.part = parts == 1 ? -1 : j;
      k.dims = {in / parts + (j < in % parts ? 1 : 0), out};
      vs.kernel[l].push_back(add(k));
    }
    Var b;
    b.name = scope + "/bias";
    b.kind = VarKind::kBias;
    b.layer = l;
    b.dims = {out};
    vs.bias[l] = add(b);
    in = out;
  }
  Var gs;
  gs.name = "global_step";
  gs.kind = VarKind::kGlobalStep;
  gs.elem_bytes = 8;
  gs.trainable = false;
  vs.global_step = add(gs);
  return vs;
}

int LeastLoaded(const std::vector<double>& load, int first, int count) {
  int best = first;
  for (int p = first; p < first + count; ++p) {
    if (load[p] < load[best]) best = p;
  }
  return best;
}

// Sets Var::ps for every variable according to c.placement.
void Place(const Config& c, Vars& vs) {
  if (c.placement == Placement::kRoundRobin) {
    for (size_t i = 0; i < vs.v.size(); ++i) vs.v[i].ps = static_cast<int>(i % c.ps);
    return;
  }
  bool idle = c.placement == Placement::kIdle;
  int busy = idle ? c.busy_ps : c.ps;
  std::vector<double> load(c.ps, 0.0);
  std::vector<int> rest;  // variables placed greedily (biggest load first)
  std::vector<int> tiny;  // kIdle: variables that go to the idle PS
  for (size_t i = 0; i < vs.v.size(); ++i) {
    Var& v = vs.v[i];
    v.load = EstimateLoadNs(c, v);
    bool logits = v.layer == c.dense_layers && v.kind != VarKind::kEmbedding;
    if (v.kind == VarKind::kEmbedding || (v.kind == VarKind::kKernel && v.part >= 0)) {
      v.ps = (v.part < 0 ? 0 : v.part) % busy;
      load[v.ps] += v.load;
    } else if (idle && (v.kind != VarKind::kKernel || logits)) {
      tiny.push_back(static_cast<int>(i));
    } else if (v.kind != VarKind::kGlobalStep) {
      rest.push_back(static_cast<int>(i));
    }
  }
  std::stable_sort(rest.begin(), rest.end(),
                   [&vs](int a, int b) { return vs.v[a].load > vs.v[b].load; });
  for (int i : rest) {
    vs.v[i].ps = LeastLoaded(load, 0, busy);
    load[vs.v[i].ps] += vs.v[i].load;
  }
  if (!idle) {
    vs.v[vs.global_step].ps = LeastLoaded(load, 0, busy);
    return;
  }
  int idle_count = c.ps - busy;
  for (size_t t = 0; t < tiny.size(); ++t) {
    vs.v[tiny[t]].ps = busy + static_cast<int>(t % idle_count);
  }
  // Idle PS left without a variable still get one tiny streaming counter, so they show up.
  for (int p = busy + static_cast<int>(tiny.size()); p < c.ps; ++p) {
    Var v;
    v.name = fmt::format("counters/examples_{}", p - busy);
    v.kind = VarKind::kCounter;
    v.elem_bytes = 8;
    v.trainable = false;
    v.ps = p;
    vs.v.push_back(v);
  }
}

// Adds optimizer slot variables (colocated with their variable) after placement.
void AddSlots(const Config& c, Vars& vs) {
  size_t n = vs.v.size();
  for (size_t i = 0; i < n; ++i) {
    if (vs.v[i].kind != VarKind::kEmbedding) continue;
    std::vector<std::string> suffixes;
    if (c.emb_opt == EmbeddingOptimizer::kDenseAdam) {
      suffixes = {"/Adam", "/Adam_1"};
    } else {
      suffixes = {"/Adagrad"};
    }
    for (const std::string& s : suffixes) {
      Var slot = vs.v[i];
      slot.name = vs.v[i].name + s;
      slot.kind = VarKind::kSlot;
      slot.read = false;
      slot.trainable = false;
      slot.owner = static_cast<int>(i);
      vs.v.push_back(slot);
    }
  }
  if (c.sparse && c.emb_opt == EmbeddingOptimizer::kDenseAdam) {
    for (const char* name : {"beta1_power", "beta2_power"}) {
      Var b;
      b.name = name;
      b.kind = VarKind::kSlot;
      b.trainable = false;
      b.ps = vs.v[vs.emb[0]].ps;
      b.owner = vs.emb[0];
      vs.beta_power.push_back(static_cast<int>(vs.v.size()));
      vs.v.push_back(b);
    }
  }
}

std::vector<Device> CreateDevices(const Config& c) {
  std::vector<Device> devs;
  for (int p = 0; p < c.ps; ++p) {
    Device d;
    d.ps = true;
    d.task = p;
    d.name = fmt::format("/job:ps/replica:0/task:{}/device:{}:0", p, c.ps_gpu ? "GPU" : "CPU");
    d.allocator = c.ps_gpu ? "GPU_0_bfc" : "cpu";
    d.threads = c.ps_threads;
    devs.push_back(d);
    if (c.ps_gpu) {
      d.name += "/stream:all";
      d.stream = true;
      devs.push_back(d);
    }
  }
  for (int w = 0; w < c.workers; ++w) {
    Device d;
    d.task = w;
    d.name = fmt::format("/job:worker/replica:0/task:{}/device:CPU:0", w);
    d.allocator = "cpu";
    devs.push_back(d);
    if (c.worker_gpu) {
      d.name = fmt::format("/job:worker/replica:0/task:{}/device:GPU:0", w);
      d.allocator = "GPU_0_bfc";
      d.gpu = true;
      devs.push_back(d);
    }
  }
  for (size_t i = 0; i < devs.size(); ++i) {  // pid 0 is "Allocators"
    devs[i].pid = static_cast<int>(2 * i + 1);
    devs[i].tensors_pid = devs[i].pid + 1;
  }
  return devs;
}

}  // namespace

Model BuildModel(const Config& c) {
  Model m;
  m.cfg = c;
  m.devices = CreateDevices(c);
  Vars vs = CreateVars(c);
  Place(c, vs);
  AddSlots(c, vs);
  DeviceIndex dx;
  for (size_t i = 0; i < m.devices.size(); ++i) {
    const Device& d = m.devices[i];
    if (d.gpu) {
      dx.worker_gpu.push_back(static_cast<int>(i));
    } else if (!d.ps) {
      dx.worker.push_back(static_cast<int>(i));
    } else if (d.stream) {
      dx.stream.back() = static_cast<int>(i);
    } else {
      dx.ps.push_back(static_cast<int>(i));
      dx.stream.push_back(-1);
    }
  }
  RecvNames names;
  m.plans.resize(c.workers);
  for (int w = 0; w < c.workers; ++w) BuildStepPlan(m, vs, dx, w, names);
  return m;
}

}  // namespace tfdiag::sim::internal
