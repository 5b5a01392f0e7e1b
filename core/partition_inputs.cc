#include "core/partition_inputs.h"

#include <tuple>

namespace tfdiag::capture_finish {

namespace {

// Splits "w/read:1_S11" into the tensor name "w/read:1" and the node name "w/read".
// Returns false when the input carries no _S<N> partition suffix or is a control input.
bool ParsePartitionInput(std::string_view in, std::string_view* tensor, std::string_view* node) {
  if (in.empty() || in[0] == '^') return false;
  size_t i = in.size();
  while (i > 0 && in[i - 1] >= '0' && in[i - 1] <= '9') --i;
  if (i == in.size() || i < 3 || in[i - 1] != 'S' || in[i - 2] != '_') return false;
  *tensor = in.substr(0, i - 2);
  *node = *tensor;
  size_t colon = tensor->rfind(':');
  if (colon != std::string_view::npos && colon + 1 < tensor->size()) {
    bool digits = std::all_of(tensor->begin() + colon + 1, tensor->end(),
                              [](char c) { return c >= '0' && c <= '9'; });
    if (digits) {
      *node = tensor->substr(0, colon);
      if (tensor->substr(colon + 1) == "0") *tensor = *node;
    }
  }
  return true;
}

// The partition inputs of `c` (see PartitionInputs); `tensor_id(tensor, node_id)` gives an
// input's tensor id (Parse interns the name, Find looks it up).
template <typename TensorId>
PartitionInputs ScanPartitionInputs(const Capture& c, TensorId tensor_id) {
  const size_t n_strings = c.strings.size();
  PartitionInputs r;
  r.slot.assign(n_strings, PartitionInputs::kNotPartition);
  r.tensor.assign(n_strings, 0);
  r.node_slot.assign(n_strings, PartitionInputs::kNotPartition);
  std::vector<uint8_t> parsed(n_strings, 0);
  for (StrId in : c.inputs) {
    if (parsed[in]) continue;
    parsed[in] = 1;
    std::string_view tensor, node;
    if (!ParsePartitionInput(c.Str(in), &tensor, &node)) continue;
    const StrId node_id = c.strings.Find(node);
    if (node_id == StringPool::kNotFound) {
      r.slot[in] = PartitionInputs::kNoProducer;
      continue;
    }
    if (r.node_slot[node_id] == PartitionInputs::kNotPartition) {
      r.node_slot[node_id] = static_cast<uint32_t>(r.nodes.size());
      r.nodes.push_back(node_id);
    }
    r.slot[in] = r.node_slot[node_id];
    r.tensor[in] = tensor_id(tensor, node_id);
  }
  return r;
}

}  // namespace

PartitionInputs ParsePartitionInputs(Capture* c) {
  return ScanPartitionInputs(
      *c, [c](std::string_view tensor, StrId) { return c->strings.Intern(tensor); });
}

void ProducerEnds::Index(size_t n_slots, std::vector<std::pair<uint64_t, uint32_t>>* counts) {
  std::sort(counts->begin(), counts->end());
  size_t out = 0;  // equal keys (a task's rows on several devices) merged
  for (size_t i = 0; i < counts->size(); ++i) {
    if (out > 0 && (*counts)[out - 1].first == (*counts)[i].first) {
      (*counts)[out - 1].second += (*counts)[i].second;
    } else {
      (*counts)[out++] = (*counts)[i];
    }
  }
  counts->resize(out);
  slot_groups.assign(n_slots + 1, 0);
  group_task.resize(out);
  group_ends.resize(out + 1);
  uint32_t at = 0;
  for (size_t g = 0; g < out; ++g) {
    auto& [key, n] = (*counts)[g];
    ++slot_groups[(key >> 32) + 1];
    group_task[g] = static_cast<uint32_t>(key);
    group_ends[g] = at;
    at += n;
    n = group_ends[g];  // the group's next row to fill
  }
  group_ends[out] = at;
  for (size_t s = 0; s < n_slots; ++s) slot_groups[s + 1] += slot_groups[s];
  ends.resize(at);
}

ProducerEnds::Match ProducerEnds::Find(uint32_t slot, uint32_t task, TimeNs lo, TimeNs at,
                                       TimeNs hi) const {
  Match m;
  if (slot + 1 >= slot_groups.size()) return m;
  // The latest end by `at` of group g in [from, ...), or INT64_MIN; its first end after `at`.
  auto before = [&](uint32_t g, TimeNs from) {
    const TimeNs* first = ends.data() + group_ends[g];
    const TimeNs* by = std::upper_bound(first, ends.data() + group_ends[g + 1], at);
    return by != first && *(by - 1) >= from ? *(by - 1) : INT64_MIN;
  };
  auto after = [&](uint32_t g) {
    const TimeNs* last = ends.data() + group_ends[g + 1];
    const TimeNs* it = std::upper_bound(ends.data() + group_ends[g], last, at);
    return it == last ? INT64_MAX : *it;
  };
  bool local = false;
  uint32_t others = 0, other = 0, in_window = 0;
  TimeNs latest = INT64_MIN;
  for (uint32_t g = slot_groups[slot]; g < slot_groups[slot + 1]; ++g) {
    const TimeNs* first = ends.data() + group_ends[g];
    const TimeNs* last = ends.data() + group_ends[g + 1];
    const TimeNs* from = std::lower_bound(first, last, lo);
    const bool in = from != last && *from <= hi;
    if (group_task[g] == task) {
      local = in && *from <= at;
      continue;
    }
    ++others, other = g;
    if (!in) continue;
    ++m.candidates, in_window = g;
    latest = std::max(latest, before(g, lo));
  }
  if (m.candidates > 1) {
    m.kind = Match::kAmbiguous;
    m.sent = latest == INT64_MIN ? 0 : latest;
  } else if (m.candidates == 1) {
    const TimeNs b = before(in_window, lo);
    m = {Match::kEdge, group_task[in_window], b != INT64_MIN ? b : after(in_window), 1};
  } else if (local) {
    m.kind = Match::kLocal;
  } else if (others == 1) {
    const TimeNs b = before(other, INT64_MIN);
    m = {Match::kEdge, group_task[other], b != INT64_MIN ? b : ends[group_ends[other]], 0};
  }
  return m;
}

Window ConsumerWindow(StepRange steps, bool ps, TimeNs start, TimeNs job_step) {
  if (ps && job_step > 0) return {start - job_step, start + job_step};
  Window w{INT64_MIN, start};
  const StepRow* s = std::upper_bound(steps.begin(), steps.end(), start,
                                      [](TimeNs ts, const StepRow& r) { return ts < r.start; });
  if (s != steps.begin()) w = {(s - 1)->start, std::max(start, (s - 1)->end)};
  return w;
}

TimeNs JobStep(const Capture& c) {
  std::vector<TimeNs> lengths;
  for (uint32_t t = 0; t < c.tasks.size(); ++t) {
    if (c.tasks[t].kind != JobKind::kWorker) continue;
    for (const StepRow& s : c.TaskSteps(t)) lengths.push_back(s.end - s.start);
  }
  if (lengths.empty()) return 0;
  std::nth_element(lengths.begin(), lengths.begin() + lengths.size() / 2, lengths.end());
  return lengths[lengths.size() / 2];
}

std::string_view NodeOfInput(std::string_view in) {
  if (!in.empty() && in[0] == '^') in.remove_prefix(1);
  std::string_view tensor, node;
  if (ParsePartitionInput(in, &tensor, &node)) return node;
  const size_t colon = in.rfind(':');
  return colon == std::string_view::npos ? in : in.substr(0, colon);
}

bool StepInputs::Seen(StepRange steps, TimeNs start, StrId in) {
  const StepRow* s = std::upper_bound(steps.begin(), steps.end(), start,
                                      [](TimeNs ts, const StepRow& r) { return ts < r.start; });
  const size_t step = static_cast<size_t>(s - steps.begin());  // 0: before the first step
  if (step != step_) {
    step_ = step;
    seen_.clear();
  }
  return !seen_.insert(in).second;
}

bool ArrowKey::operator<(const ArrowKey& o) const {
  return std::tie(device, ts, node) < std::tie(o.device, o.ts, o.node);
}

std::vector<ArrowKey> ArrowKeys(const Capture& c) {
  std::vector<ArrowKey> keys;
  for (const FlowRow& f : c.flows) {
    if (c.devices[f.src_device].task == c.devices[f.dst_device].task) continue;
    const StrId node = c.strings.Find(NodeOfInput(c.Str(f.name)));
    if (node != StringPool::kNotFound) keys.push_back({f.dst_device, f.dst_ts, node});
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

bool Covered(const std::vector<ArrowKey>& keys, uint32_t device, TimeNs ts, StrId node) {
  return !keys.empty() && std::binary_search(keys.begin(), keys.end(), ArrowKey{device, ts, node});
}

PartitionInputs FindPartitionInputs(const Capture& c) {
  return ScanPartitionInputs(c, [&c](std::string_view tensor, StrId node_id) {
    const StrId t = c.strings.Find(tensor);
    return t == StringPool::kNotFound ? node_id : t;
  });
}

InputIndex IndexInputs(const Capture& c) {
  InputIndex x;
  x.refs = FindPartitionInputs(c);
  if (!x.refs.nodes.empty()) {
    x.producers = ProducerEnds::Build(x.refs.nodes.size(), [&](auto&& emit) {
      c.ops.ForEach([&](const OpRow& op) {
        const uint32_t slot = x.refs.SlotOfOp(c.OpName(op));
        if (slot != PartitionInputs::kNotPartition) emit(slot, c.devices[op.device].task, op.end());
      });
    });
  }
  x.arrows = ArrowKeys(c);
  x.job_step = JobStep(c);
  return x;
}

}  // namespace tfdiag::capture_finish
