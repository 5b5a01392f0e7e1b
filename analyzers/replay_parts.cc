// VariableParts (analyzers/replay.h): how many parts each variable has over the whole job.
#include <algorithm>
#include <map>
#include <string_view>
#include <vector>

#include "analyzers/op_names.h"
#include "analyzers/replay.h"

namespace tfdiag {

std::map<std::string_view, int> VariableParts(const std::vector<TaskStats>& tasks) {
  std::map<std::string_view, int> parts;  // the base's highest k + 1; 0 while only whole names
  for (const TaskStats& t : tasks) {
    if (t.kind != JobKind::kPs) continue;
    for (const VariableLoad& v : t.variables) {
      int k = -1;
      const std::string_view base = PartitionBase(v.name, &k);
      int& n = parts[base];
      n = std::max(n, k + 1);
    }
  }
  for (auto& [base, n] : parts) n = std::max(1, n);  // seen whole only: one part
  return parts;
}

}  // namespace tfdiag
