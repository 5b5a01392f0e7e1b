#include "analyzers/capture_queries.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "analyzers/op_names.h"

namespace tfdiag {

std::string_view FirstInput(const Capture& c, const OpRow& op) {
  const NodeRow& node = c.Node(op);
  return node.inputs_count > 0 ? c.Str(c.inputs[node.inputs_begin]) : std::string_view();
}

std::set<std::string, std::less<>> GatheredVariables(const Capture& c) {
  std::set<std::string, std::less<>> out;
  StringTest is_gather(c, IsGatherOpType);
  std::vector<bool> input_seen(c.strings.size(), false);  // each distinct input once
  for (const NodeRow& node : c.nodes) {                   // every node ran at least once
    if (!is_gather(node.type) || node.inputs_count == 0) continue;
    const StrId input = c.inputs[node.inputs_begin];
    if (input_seen[input]) continue;
    input_seen[input] = true;
    out.emplace(StripRead(InputNode(c.Str(input))));
  }
  return out;
}

int64_t VariableBytes(const Capture& c, std::string_view var) {
  std::string read = std::string(var) + "/read";
  for (const TensorRow& t : c.tensors) {
    std::string_view n = c.Str(t.name);
    if (n == var || n == read) return t.bytes;
  }
  return -1;
}

int DeviceCount(const Capture& c) {
  std::vector<std::tuple<uint32_t, StrId, int32_t>> seen;
  seen.reserve(c.devices.size());
  for (const DeviceRow& d : c.devices) seen.emplace_back(d.task, d.type, d.index);
  std::sort(seen.begin(), seen.end());
  return static_cast<int>(std::unique(seen.begin(), seen.end()) - seen.begin());
}

bool IsTrainingTask(JobKind k) {
  return k == JobKind::kWorker || k == JobKind::kChief || k == JobKind::kMaster ||
         k == JobKind::kLocal;
}

}  // namespace tfdiag
