// Internal to the simulator's model builder (samples/model.cc, samples/step_plan.cc): variables,
// their placement, the duration cost model and the step-plan builder entry point.
// Durations are int64 nanoseconds, sizes bytes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "samples/sim_internal.h"

namespace tfdiag::sim::internal {

constexpr int64_t kUs = 1000;  // nanoseconds per microsecond

// Cost model. Network: one transfer ~1.25 GB/s (10 GbE) plus ~45 us of RPC overhead.
inline int64_t RecvNs(int64_t bytes) { return 45 * kUs + bytes * 4 / 5; }
// Gathering `rows` rows of `dim` floats from a table of `table_rows` rows (cache misses grow
// with the table).
inline int64_t GatherNs(int64_t rows, int64_t dim, int64_t table_rows) {
  double cache = 1.0 + 0.15 * std::log10(std::max(1.0, static_cast<double>(table_rows) / 1e5));
  return 15 * kUs + static_cast<int64_t>(static_cast<double>(rows * dim * 4) * cache);
}
// SparseApplyAdagrad over `rows` rows (reads and writes var and accumulator rows).
inline int64_t SparseApplyNs(int64_t rows, int64_t dim) { return 20 * kUs + rows * dim * 8; }
// ApplyGradientDescent over a dense variable of `bytes` (~4 GB/s).
inline int64_t DenseApplyNs(int64_t bytes) { return 4 * kUs + bytes / 4; }
// ApplyAdam over a dense variable of `bytes`: var, m, v and grad streamed (~0.7 ns/byte).
inline int64_t AdamNs(int64_t bytes) { return 10 * kUs + bytes * 7 / 10; }
// Host-to-device copy over PCIe (~12 GB/s).
inline int64_t MemcpyNs(int64_t bytes) { return 3 * kUs + bytes / 12; }

enum class VarKind { kEmbedding, kKernel, kBias, kGlobalStep, kSlot, kCounter };

// A variable (or one partition of one) hosted on a PS.
struct Var {
  std::string name;
  VarKind kind = VarKind::kKernel;
  int ps = 0;
  int layer = 0;  // 0-based dense layer; dense_layers is the logits layer
  int part = -1;  // partition index, -1 when not partitioned
  std::vector<int64_t> dims;
  int elem_bytes = 4;
  bool read = true;       // has an Identity "<name>/read"
  bool trainable = true;  // gets a gradient and an apply op
  int owner = -1;         // kSlot: index of the variable it belongs to
  double load = 0;        // estimated PS busy ns per worker step
  int64_t bytes() const;  // total size
};

// All variables plus indexes into them.
struct Vars {
  std::vector<Var> v;
  std::vector<int> emb;                  // embedding parts
  std::vector<std::vector<int>> kernel;  // per layer (0..dense_layers), its partitions
  std::vector<int> bias;                 // per layer
  std::vector<int64_t> in_dim, out_dim;  // per layer
  std::vector<int> beta_power;           // Adam beta1_power, beta2_power
  int global_step = -1;
};

// Device indices into Model::devices.
struct DeviceIndex {
  std::vector<int> ps;          // compute device of each PS task
  std::vector<int> stream;      // GPU stream device of each PS task, -1 if none
  std::vector<int> worker;      // device of each worker task
  std::vector<int> worker_gpu;  // GPU compute device of each worker task (Config::worker_gpu)
};

// Names of the Recv nodes the graph partitioner creates: "<tensor>_S<N>" with N unique per
// (tensor, destination device) and shared by every consumer there.
struct RecvNames {
  std::map<std::string, int> ids;
  int next = 1;
  int next_edge = 1;  // edge ids of GPU memcpy records
};

// Estimated PS busy time (ns) per worker step caused by variable `v`.
double EstimateLoadNs(const Config& c, const Var& v);

// Builds m.plans[w] (and its templates) for worker task `w`.
void BuildStepPlan(Model& m, const Vars& vs, const DeviceIndex& dx, int w, RecvNames& names);

}  // namespace tfdiag::sim::internal
