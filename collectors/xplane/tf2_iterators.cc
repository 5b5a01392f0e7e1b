#include "collectors/xplane/tf2_iterators.h"

#include <algorithm>
#include <vector>

#include "core/capture_builder.h"
#include "core/saturating.h"

namespace tfdiag {

bool IsInputIteratorName(std::string_view full) {
  return full.size() > 10 && full.substr(0, 10) == "Iterator::";
}

bool Tf2InputIterators::Add(uint32_t key, StrId path, TimeNs start, TimeNs dur) {
  if (dur < 0 || start < 0) return true;  // not counted (the readers count such events)
  auto it = rows_.find({key, path});
  if (it == rows_.end()) {
    size_t& n = stages_[key];
    if (n >= kMaxStages) return false;
    ++n;
    InputIteratorRow r;
    r.task = key;
    r.path = path;
    r.first = start;
    it = rows_.emplace(std::make_pair(key, path), r).first;
  }
  InputIteratorRow& r = it->second;
  r.first = std::min(r.first, start);
  ++r.count;
  SatAccumulate(&r.total_ns, dur);  // durations come from the file: a hostile one sums past int64
  return true;
}

void Tf2InputIterators::FlushByTask(CaptureBuilder* b) {
  std::vector<InputIteratorRow> rows;
  for (const auto& [k, r] : rows_) rows.push_back(r);
  std::sort(rows.begin(), rows.end(), [](const InputIteratorRow& a, const InputIteratorRow& x) {
    return std::tie(a.task, a.path) < std::tie(x.task, x.path);
  });
  for (const InputIteratorRow& r : rows) b->AddInputIterator(r);
  rows_.clear();
  stages_.clear();
}

void Tf2InputIterators::FlushAs(uint32_t task, CaptureBuilder* b) {
  for (auto& [k, r] : rows_) r.task = task;
  FlushByTask(b);
}

}  // namespace tfdiag
