#include "analyzers/apply_locks.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"
#include "core/median.h"

namespace tfdiag {

namespace {

bool IsApply(std::string_view type) {
  return IsDenseApplyOpType(type) || IsSparseApplyOpType(type);
}

struct Apply {
  TimeNs start, end;
  size_t row;
};

// Adds the waits of one node's applies where they show the lock.
void ReadNode(std::vector<Apply>* ops, ApplyLockWaits* out) {
  std::sort(ops->begin(), ops->end(), [](const Apply& a, const Apply& b) { return a.end < b.end; });
  std::vector<double> alone, spacing, longer;
  TimeNs prev = std::numeric_limits<TimeNs>::min();
  for (const Apply& op : *ops) {
    if (op.start < prev) {
      spacing.push_back(double(op.end - prev));
      longer.push_back(double(op.end - op.start));
    } else {
      alone.push_back(double(op.end - op.start));
    }
    prev = std::max(prev, op.end);
  }
  if (spacing.size() < std::max(kLockMinOverlaps, ops->size() / 5) || alone.size() < 3) return;
  const double solo = MedianInPlace(&alone);
  if (solo <= 0) return;
  const double apart = MedianInPlace(&spacing) / solo, waited = MedianInPlace(&longer) / solo;
  if (apart < kLockSpacingLo || apart > kLockSpacingHi || waited < kLockWaitLonger) return;
  ++out->nodes;
  prev = std::numeric_limits<TimeNs>::min();
  for (const Apply& op : *ops) {
    const TimeNs wait = op.start < prev ? std::min(prev, op.end) - op.start : 0;
    if (wait > 0) out->wait[op.row] = wait;
    out->wait_ns += wait;
    out->locked_ns += op.end - op.start - wait;
    prev = std::max(prev, op.end);
  }
}

}  // namespace

ApplyLockWaits ReadApplyLockWaits(const Capture& c, const TaskStats& t) {
  ApplyLockWaits out;
  StringTest is_apply(c, IsApply);
  std::unordered_map<StrId, std::vector<Apply>> by_name;
  ForEachOpRowOfTask(c, t, [&](const OpRow& op, uint32_t row) {
    if (op.dur() > 0 && is_apply(c.OpType(op))) {
      by_name[c.Node(op).name].push_back({op.start, op.end(), row});
    }
  });
  for (auto& [name, ops] : by_name) ReadNode(&ops, &out);
  return out;
}

}  // namespace tfdiag
