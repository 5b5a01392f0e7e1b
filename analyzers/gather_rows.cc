#include "analyzers/gather_rows.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "analyzers/capture_queries.h"
#include "analyzers/op_names.h"

namespace tfdiag {

PeerLookups FindPeerLookups(const AnalysisInput& in,
                            const std::set<std::string, std::less<>>& exclude) {
  const Capture& c = in.capture;
  std::unordered_map<StrId, int64_t> sized;  // tensor name -> requested bytes (output 0)
  for (const TensorRow& t : c.tensors) sized.emplace(t.name, t.bytes);
  struct Table {
    std::set<StrId> ops;  // distinct gather node names (one per part)
    double bytes = 0;
    bool all_sized = true;
  };
  std::map<std::string, Table, std::less<>> tables;  // by partition base
  StringTest is_gather(c, IsGatherOpType);
  for (const TaskStats& t : in.stats.tasks) {
    if (t.kind != JobKind::kPs) continue;
    ForEachOpOfTask(c, t, [&](const OpRow& op) {
      if (!is_gather(c.OpType(op)) || c.Node(op).inputs_count == 0) return;
      const std::string_view input = FirstInput(c, op);
      if (IsPartitionInput(input)) return;  // a table received from another task
      const std::string_view base = PartitionBase(StripRead(InputNode(input)));
      if (exclude.find(base) != exclude.end()) return;
      const StrId name = c.OpName(op);
      auto it = tables.find(base);
      if (it == tables.end()) it = tables.emplace(std::string(base), Table{}).first;
      if (!it->second.ops.insert(name).second) return;
      auto s = sized.find(name);
      if (s == sized.end() || s->second <= 0) {
        it->second.all_sized = false;
      } else {
        it->second.bytes += double(s->second);
      }
    });
  }
  PeerLookups p;
  double sum = 0;
  for (const auto& [base, t] : tables) {
    if (!t.all_sized) continue;
    ++p.tables;
    sum += t.bytes;
    p.max_bytes = std::max(p.max_bytes, t.bytes);
  }
  if (p.tables > 0) p.mean_bytes = sum / p.tables;
  return p;
}

}  // namespace tfdiag
