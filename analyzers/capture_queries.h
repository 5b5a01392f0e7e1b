// Queries over a Capture shared by several analyzers. Pure functions; no I/O.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "analyzers/task_stats.h"
#include "core/capture.h"

namespace tfdiag {

// Calls fn(const OpRow&) for every op of `task` (a row of ComputeTaskStats(c)), device by device,
// in start order per device. O(ops of the task).
template <typename Fn>
void ForEachOpOfTask(const Capture& c, const TaskStats& task, Fn fn) {
  for (uint32_t d : task.device_ids) {
    c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) { fn(op); });
  }
}

// ForEachOpOfTask with each op's row index in Capture::ops: fn(const OpRow&, uint32_t row), the
// row reference valid during the call only (OpStore::ForEach). O(ops of the task).
template <typename Fn>
void ForEachOpRowOfTask(const Capture& c, const TaskStats& task, Fn fn) {
  for (uint32_t d : task.device_ids) {
    c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second,
                  [&](const OpRow& op, uint32_t row) { fn(op, row); });
  }
}

// A predicate on interned strings, evaluated once per distinct string (op types and names repeat
// across steps): StringTest is_gather(c, IsGatherOpType); if (is_gather(op.type)) ...
// Not thread-safe (one instance per analyzer run).
class StringTest {
 public:
  StringTest(const Capture& c, bool (*pred)(std::string_view))
      : c_(c), pred_(pred), memo_(c.strings.size(), -1) {}
  bool operator()(StrId id) {
    int8_t& m = memo_[id];
    if (m < 0) m = pred_(c_.Str(id)) ? 1 : 0;
    return m == 1;
  }

 private:
  const Capture& c_;
  bool (*pred_)(std::string_view);
  std::vector<int8_t> memo_;
};

// The first input of `op` as written, or "".
std::string_view FirstInput(const Capture& c, const OpRow& op);

// Variables read by gather ops anywhere (embeddings): StripRead(InputNode(input0)) of each
// Gather/GatherV2/ResourceGather.
std::set<std::string, std::less<>> GatheredVariables(const Capture& c);

// Size in bytes of a variable from show_memory snapshots of "<var>" or "<var>/read", or -1.
int64_t VariableBytes(const Capture& c, std::string_view var);

// Devices as XProf counts them: distinct (task, type, index), a GPU once however many CUDA
// stream or memcpy rows (DeviceRow::sub) it has.
int DeviceCount(const Capture& c);

// True for tasks that run training steps: worker, chief, master, and single-process (local).
bool IsTrainingTask(JobKind kind);

}  // namespace tfdiag
