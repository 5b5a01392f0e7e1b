// What readers do to a CaptureBuilder's rows in bulk while a file is read (capture_builder.h):
// provisional device ids remapped (RemapDevices), a failed fast parse undone (MakeCheckpoint,
// Rollback), the chunk builders of a file parsed in parallel merged in (Absorb, AbsorbRows,
// MergeRows).
#include <algorithm>
#include <numeric>

#include "core/capture_builder.h"

namespace tfdiag {

size_t CaptureBuilder::RemapDevices(size_t first_op, size_t first_flow, size_t first_tensor,
                                    const std::vector<uint32_t>& map, int threads) {
  auto lookup = [&](uint32_t d) {
    uint32_t m = d < map.size() ? map[d] : kNoIndex;
    return m < kMaxDevices ? m : kNoIndex;
  };
  // Ops in place on `threads` threads, a row to drop marked with kMaxDevices (never a device);
  // then, only if there are such rows, one pass to close the gaps.
  const int64_t n_ops = static_cast<int64_t>(ops_.size() - first_op);
  int64_t marked = 0;
#pragma omp parallel for schedule(static) num_threads(std::max(1, threads)) \
    if (threads > 1 && n_ops > (int64_t{1} << 16)) reduction(+ : marked)
  for (int64_t k = 0; k < n_ops; ++k) {
    OpRow& op = ops_[first_op + static_cast<size_t>(k)];
    const uint32_t d = lookup(op.device);
    marked += d == kNoIndex;
    op.device = static_cast<uint16_t>(d == kNoIndex ? kMaxDevices : d);
  }
  size_t dropped = static_cast<size_t>(marked);
  size_t w = first_op;
  if (marked > 0) {
    for (size_t r = first_op; r < ops_.size(); ++r) {
      if (ops_[r].device != kMaxDevices) ops_[w++] = ops_[r];
    }
    ops_.truncate(w);
  }
  w = first_flow;
  for (size_t r = first_flow; r < flows_.size(); ++r) {
    FlowRow f = flows_[r];
    f.src_device = lookup(f.src_device);
    f.dst_device = lookup(f.dst_device);
    if (f.src_device == kNoIndex || f.dst_device == kNoIndex) {
      ++dropped;
      continue;
    }
    flows_[w++] = f;
  }
  flows_.truncate(w);
  w = first_tensor;
  for (size_t r = first_tensor; r < c_.tensors.size(); ++r) {
    TensorRow t = c_.tensors[r];
    t.device = lookup(t.device);
    if (t.device == kNoIndex) {
      ++dropped;
      continue;
    }
    c_.tensors[w++] = t;
  }
  c_.tensors.resize(w);
  return dropped;
}

CaptureBuilder::Checkpoint CaptureBuilder::MakeCheckpoint() const {
  return {c_.strings.size(), ops_.size(),       nodes_.size(),    inputs_.size(),
          flows_.size(),     c_.tensors.size(), c_.stats.skipped, c_.stats.ignored};
}

void CaptureBuilder::Rollback(const Checkpoint& cp) {
  last_node_.clear();  // may point past cp.nodes
  multi_nodes_.clear();
  c_.strings.Truncate(cp.strings);
  ops_.truncate(cp.ops);
  nodes_.truncate(cp.nodes);
  inputs_.truncate(cp.inputs);
  flows_.truncate(cp.flows);
  c_.tensors.resize(cp.tensors);
  c_.stats.skipped = cp.skipped;
  c_.stats.ignored = cp.ignored;
}

std::vector<StrId> CaptureBuilder::Absorb(CaptureBuilder&& other,
                                          const std::vector<uint32_t>& device_map, int threads) {
  std::vector<StrId> sid(other.c_.strings.size());
  open_input_.Add(other.open_input_.start, other.open_input_.end);
  // Into an empty builder with the devices kept as they are (the first chunk of the first file):
  // take the other's storage as it is instead of copying every row.
  bool identity = true;
  for (uint32_t d = 0; d < device_map.size() && identity; ++d) identity = device_map[d] == d;
  if (identity && c_.strings.size() == 1 && ops_.empty() && nodes_.empty() && inputs_.empty() &&
      flows_.empty() && c_.tensors.empty() && c_.stats.skipped.empty() &&
      c_.stats.ignored.empty()) {
    std::iota(sid.begin(), sid.end(), StrId{0});
    c_.strings = std::move(other.c_.strings);
    ops_ = std::move(other.ops_);
    nodes_ = std::move(other.nodes_);
    inputs_ = std::move(other.inputs_);
    last_node_ = std::move(other.last_node_);
    multi_nodes_ = std::move(other.multi_nodes_);
    flows_ = std::move(other.flows_);
    c_.tensors = std::move(other.c_.tensors);
    c_.stats.skipped = std::move(other.c_.stats.skipped);
    c_.stats.ignored = std::move(other.c_.stats.ignored);
    other.c_ = Capture{};
    return sid;
  }
  sid.clear();
  MergeRows(&other, device_map, &sid, /*keep_storage=*/false, threads);
  other = CaptureBuilder();
  return sid;
}

void CaptureBuilder::AbsorbRows(CaptureBuilder* other, const std::vector<uint32_t>& device_map,
                                std::vector<StrId>* sid) {
  open_input_.Add(other->open_input_.start, other->open_input_.end);
  other->open_input_ = InputRange{};
  MergeRows(other, device_map, sid, /*keep_storage=*/true, /*threads=*/1);
}

void CaptureBuilder::MergeRows(CaptureBuilder* other, const std::vector<uint32_t>& device_map,
                               std::vector<StrId>* sid, bool keep_storage, int threads) {
  // Intern the other pool's new strings here.
  for (StrId i = static_cast<StrId>(sid->size()); i < other->c_.strings.size(); ++i) {
    sid->push_back(Intern(other->c_.strings.Get(i)));
  }
  const std::vector<StrId>& map = *sid;
  auto dev = [&](uint32_t d) { return d < device_map.size() ? device_map[d] : kNoIndex; };
  // Block by block on `threads` threads into preallocated rows; the source blocks are freed as
  // they are copied (peak: the rows plus a block per thread), or kept for reuse.
  auto copy = [&](auto& from, auto& to, auto transform) {
    using Rows = std::remove_reference_t<decltype(from)>;
    const size_t base = to.size();
    to.GrowTo(base + from.size());
    const int blocks = static_cast<int>(from.block_count());
#pragma omp parallel for schedule(static) num_threads(std::max(1, threads)) if (threads > 1)
    for (int b = 0; b < blocks; ++b) {
      const auto* src = from.block(static_cast<size_t>(b));
      const size_t n = from.block_size(static_cast<size_t>(b));
      const size_t at = base + static_cast<size_t>(b) * Rows::kBlock;
      to.PopulateRange(at, at + n);
      for (size_t i = 0; i < n; ++i) to[at + i] = transform(src[i]);
      if (!keep_storage) from.ReleaseBlock(static_cast<size_t>(b));
    }
    if (keep_storage) {
      from.Reset();
    } else {
      from.Clear();
    }
  };
  // Nodes one by one through AddNode (a file has a few per op name): one found here already is
  // shared; only new nodes' inputs are copied. Every worker's file holds the same nodes, so the
  // merged builder keeps each once instead of once per file.
  std::vector<uint32_t> node_map(other->nodes_.size());
  std::vector<StrId> in;
  for (size_t k = 0; k < other->nodes_.size(); ++k) {
    const NodeRow& n = other->nodes_[k];
    in.resize(n.inputs_count);
    for (uint32_t i = 0; i < n.inputs_count; ++i) in[i] = map[other->inputs_[n.inputs_begin + i]];
    node_map[k] = AddNode(map[n.name], map[n.type], in.data(), in.size());
  }
  if (keep_storage) {
    other->nodes_.Reset();
    other->inputs_.Reset();
  } else {
    other->nodes_.Clear();
    other->inputs_.Clear();
  }
  copy(other->ops_, ops_, [&](OpRow op) {
    uint32_t d = dev(op.device);
    op.device = static_cast<uint16_t>(d == kNoIndex ? kMaxDevices : d);  // dropped by Remap
    op.node = node_map[op.node];
    return op;
  });
  copy(other->flows_, flows_, [&](FlowRow f) {
    f.src_device = dev(f.src_device);
    f.dst_device = dev(f.dst_device);
    f.name = map[f.name];
    return f;
  });
  for (TensorRow t : other->c_.tensors) {
    t.device = dev(t.device);
    t.name = map[t.name];
    c_.tensors.push_back(t);
  }
  for (const auto& [k, v] : other->c_.stats.skipped) c_.stats.skipped[k] += v;
  for (const auto& [k, v] : other->c_.stats.ignored) c_.stats.ignored[k] += v;
  other->c_.tensors.clear();
  other->last_node_.clear();
  other->multi_nodes_.clear();
  other->c_.stats.skipped.clear();
  other->c_.stats.ignored.clear();
}

}  // namespace tfdiag
