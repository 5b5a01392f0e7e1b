#include "core/horovod_stats.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tfdiag {

namespace {

// Sets last_rank / last_rank_count from last_by_rank.
void PickLastRank(HorovodTensor* t) {
  t->last_rank = -1;
  t->last_rank_count = 0;
  for (size_t r = 0; r < t->last_by_rank.size(); ++r) {
    if (t->last_by_rank[r] > t->last_rank_count) {
      t->last_rank = static_cast<int32_t>(r);
      t->last_rank_count = t->last_by_rank[r];
    }
  }
}

template <typename T, typename Add>
void MergeByName(std::vector<T>* into, const std::vector<T>& from, Add add) {
  std::map<std::string, size_t> at;
  for (size_t i = 0; i < into->size(); ++i) at.emplace((*into)[i].name, i);
  for (const T& x : from) {
    auto it = at.find(x.name);
    if (it == at.end()) {
      at.emplace(x.name, into->size());
      into->push_back(x);
    } else {
      add(&(*into)[it->second], x);
    }
  }
}

}  // namespace

void HorovodStats::Merge(const HorovodStats& o) {
  files += o.files;
  negotiations += o.negotiations;
  ready_marks += o.ready_marks;
  ops += o.ops;
  span_ns += o.span_ns;
  wait_ns += o.wait_ns;
  negotiate_wall_ns += o.negotiate_wall_ns;
  collective_wall_ns += o.collective_wall_ns;
  allreduce_wall_ns += o.allreduce_wall_ns;
  memcpy_wall_ns += o.memcpy_wall_ns;
  queue_wall_ns += o.queue_wall_ns;
  wait_for_data_wall_ns += o.wait_for_data_wall_ns;
  if (ranks.size() < o.ranks.size()) ranks.resize(o.ranks.size());
  for (size_t r = 0; r < o.ranks.size(); ++r) {
    ranks[r].ready += o.ranks[r].ready;
    ranks[r].last += o.ranks[r].last;
    ranks[r].wait_ns += o.ranks[r].wait_ns;
  }
  MergeByName(&activities, o.activities, [](HorovodActivity* a, const HorovodActivity& b) {
    a->count += b.count;
    a->total_ns += b.total_ns;
    a->wall_ns += b.wall_ns;
  });
  std::sort(activities.begin(), activities.end(),
            [](const HorovodActivity& a, const HorovodActivity& b) { return a.name < b.name; });
  MergeByName(&tensors, o.tensors, [](HorovodTensor* a, const HorovodTensor& b) {
    a->negotiations += b.negotiations;
    a->ops += b.ops;
    a->negotiate_ns += b.negotiate_ns;
    a->wait_ns += b.wait_ns;
    a->collective_ns += b.collective_ns;
    a->memcpy_ns += b.memcpy_ns;
    if (a->last_by_rank.size() < b.last_by_rank.size())
      a->last_by_rank.resize(b.last_by_rank.size());
    for (size_t r = 0; r < b.last_by_rank.size(); ++r) a->last_by_rank[r] += b.last_by_rank[r];
  });
  for (HorovodTensor& t : tensors) PickLastRank(&t);
  std::sort(tensors.begin(), tensors.end(), [](const HorovodTensor& a, const HorovodTensor& b) {
    return std::tie(b.wait_ns, a.name) < std::tie(a.wait_ns, b.name);
  });
}

}  // namespace tfdiag
