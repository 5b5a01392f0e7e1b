// Queries over a Capture shared by several analyzers. Pure functions; no I/O.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/capture.h"

namespace tfdiag {

// Calls fn(const OpRow&) for every op of `task`, device by device, in start order per device.
template <typename Fn>
void ForEachOpOfTask(const Capture& c, uint32_t task, Fn fn) {
  for (uint32_t d = 0; d < c.devices.size(); ++d) {
    if (c.devices[d].task != task) continue;
    for (uint32_t i = c.device_ops[d].first; i < c.device_ops[d].second; ++i) fn(c.ops[i]);
  }
}

// The first input of `op` as written, or "".
std::string_view FirstInput(const Capture& c, const OpRow& op);

// Variables read by gather ops anywhere (embeddings): StripRead(InputNode(input0)) of each
// Gather/GatherV2/ResourceGather.
std::set<std::string, std::less<>> GatheredVariables(const Capture& c);

// Size in bytes of a variable from show_memory snapshots of "<var>" or "<var>/read", or -1.
int64_t VariableBytes(const Capture& c, std::string_view var);

// True for tasks that run training steps: worker, chief, master, and single-process (local).
bool IsTrainingTask(JobKind kind);

}  // namespace tfdiag
