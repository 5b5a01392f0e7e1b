#include "analyzers/capture_queries.h"

#include "analyzers/op_names.h"

namespace tfdiag {

std::string_view FirstInput(const Capture& c, const OpRow& op) {
  return op.inputs_count > 0 ? c.Str(c.inputs[op.inputs_begin]) : std::string_view();
}

std::set<std::string, std::less<>> GatheredVariables(const Capture& c) {
  std::set<std::string, std::less<>> out;
  std::vector<bool> is_gather(c.strings.size(), false), seen(c.strings.size(), false);
  for (const OpRow& op : c.ops) {
    if (!seen[op.type]) {
      seen[op.type] = true;
      is_gather[op.type] = IsGatherOpType(c.Str(op.type));
    }
    if (!is_gather[op.type] || op.inputs_count == 0) continue;
    out.emplace(StripRead(InputNode(FirstInput(c, op))));
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

bool IsTrainingTask(JobKind k) {
  return k == JobKind::kWorker || k == JobKind::kChief || k == JobKind::kMaster ||
         k == JobKind::kLocal;
}

}  // namespace tfdiag
