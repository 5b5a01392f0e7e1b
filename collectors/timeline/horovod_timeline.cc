#include "collectors/timeline/horovod_timeline.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>
#include <utility>

namespace tfdiag {

namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// The rank of a ready mark ("0".."N-1"), or -1.
int32_t RankOf(std::string_view name) {
  int32_t r = -1;
  auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), r);
  if (ec != std::errc() || p != name.data() + name.size() || r < 0 || r > 1 << 20) return -1;
  return r;
}

// The <OP> phases, response types of horovod/common/message.h (Response::ResponseType).
bool IsOp(std::string_view n) {
  for (std::string_view op : {"ALLREDUCE", "ALLGATHER", "BROADCAST", "JOIN", "ADASUM", "ALLTOALL",
                              "BARRIER", "REDUCESCATTER", "ERROR"}) {
    if (n == op) return true;
  }
  return false;
}

bool IsCollective(std::string_view n) {
  return StartsWith(n, "NCCL_") || StartsWith(n, "MPI_") || StartsWith(n, "GLOO_") ||
         StartsWith(n, "CCL_");
}

// Total length of the union of [start, end) intervals.
int64_t UnionNs(std::vector<std::pair<int64_t, int64_t>> iv) {
  std::sort(iv.begin(), iv.end());
  int64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
      continue;
    }
    if (open) total += cur_e - cur_s;
    cur_s = s, cur_e = e, open = true;
  }
  if (open) total += cur_e - cur_s;
  return total;
}

}  // namespace

bool SummarizeHorovod(std::vector<HorovodEvent> events, const std::vector<std::string>& tensors,
                      HorovodStats* out) {
  bool any = false;
  for (const HorovodEvent& e : events) any = any || StartsWith(e.name, "NEGOTIATE_");
  if (!any) return false;
  std::sort(events.begin(), events.end(), [](const HorovodEvent& a, const HorovodEvent& b) {
    return std::tie(a.tensor, a.start_ns, b.dur_ns, a.name) <
           std::tie(b.tensor, b.start_ns, a.dur_ns, b.name);
  });
  HorovodStats h;
  h.files = 1;
  std::vector<HorovodTensor> rows(tensors.size());
  for (size_t t = 0; t < tensors.size(); ++t) rows[t].name = tensors[t];
  std::vector<std::pair<int64_t, int64_t>> negotiate, collective, allreduce, memcpy, queue, wait;
  std::map<std::string_view, std::vector<std::pair<int64_t, int64_t>>> by_activity;
  std::map<std::string_view, HorovodActivity> activity;
  int64_t first = INT64_MAX, last = INT64_MIN;
  // Negotiations of the current tensor: [start, end], and their ready marks (ts, rank).
  struct Negotiation {
    int64_t start, end;
    std::vector<std::pair<int64_t, int32_t>> marks;
  };
  auto close_tensor = [&](std::vector<Negotiation>* negs, HorovodTensor* row) {
    for (Negotiation& n : *negs) {
      if (n.marks.empty()) continue;
      std::sort(n.marks.begin(), n.marks.end());
      const int64_t w = n.marks.back().first - n.marks.front().first;
      const int32_t r = n.marks.back().second;
      if (h.ranks.size() <= static_cast<size_t>(r)) h.ranks.resize(r + 1);
      if (row->last_by_rank.size() <= static_cast<size_t>(r)) row->last_by_rank.resize(r + 1);
      ++h.ranks[r].last;
      h.ranks[r].wait_ns += w;
      ++row->last_by_rank[r];
      row->wait_ns += w;
      h.wait_ns += w;
    }
    negs->clear();
  };
  std::vector<Negotiation> negs;
  std::vector<std::pair<int64_t, int32_t>> marks;  // of the current tensor
  for (size_t i = 0; i < events.size(); ++i) {
    const HorovodEvent& e = events[i];
    const int64_t end = e.start_ns + e.dur_ns;
    first = std::min(first, e.start_ns);
    last = std::max(last, end);
    HorovodTensor& row = rows[e.tensor];
    const int32_t rank = RankOf(e.name);
    if (StartsWith(e.name, "NEGOTIATE_")) {
      negs.push_back({e.start_ns, end, {}});
      ++row.negotiations;
      ++h.negotiations;
      row.negotiate_ns += e.dur_ns;
      negotiate.emplace_back(e.start_ns, end);
    } else if (rank >= 0) {
      marks.emplace_back(e.start_ns, rank);
    } else if (IsOp(e.name)) {
      ++row.ops;
      ++h.ops;
    } else {
      HorovodActivity& a = activity[e.name];
      ++a.count;
      a.total_ns += e.dur_ns;
      by_activity[e.name].emplace_back(e.start_ns, end);
      if (IsCollective(e.name)) {
        row.collective_ns += e.dur_ns;
        collective.emplace_back(e.start_ns, end);
        if (e.name.find("ALLREDUCE") != std::string_view::npos) {
          allreduce.emplace_back(e.start_ns, end);
        }
      } else if (StartsWith(e.name, "MEMCPY_")) {
        row.memcpy_ns += e.dur_ns;
        memcpy.emplace_back(e.start_ns, end);
      } else if (e.name == "QUEUE") {
        queue.emplace_back(e.start_ns, end);
      } else if (StartsWith(e.name, "WAIT_FOR_")) {
        wait.emplace_back(e.start_ns, end);
      }
    }
    if (i + 1 == events.size() || events[i + 1].tensor != e.tensor) {
      // Each ready mark goes to the negotiation holding it (negotiations of one tensor do not
      // overlap: Timeline::NegotiateStart opens one at a time).
      for (const auto& [ts, r] : marks) {
        auto it = std::upper_bound(negs.begin(), negs.end(), ts,
                                   [](int64_t t, const Negotiation& n) { return t < n.start; });
        if (it == negs.begin() || ts > std::prev(it)->end) continue;
        std::prev(it)->marks.emplace_back(ts, r);
        ++h.ready_marks;
        if (h.ranks.size() <= static_cast<size_t>(r)) h.ranks.resize(r + 1);
        ++h.ranks[r].ready;
      }
      marks.clear();
      close_tensor(&negs, &row);
    }
  }
  h.span_ns = events.empty() ? 0 : last - first;
  h.negotiate_wall_ns = UnionNs(std::move(negotiate));
  h.collective_wall_ns = UnionNs(std::move(collective));
  h.allreduce_wall_ns = UnionNs(std::move(allreduce));
  h.memcpy_wall_ns = UnionNs(std::move(memcpy));
  h.queue_wall_ns = UnionNs(std::move(queue));
  h.wait_for_data_wall_ns = UnionNs(std::move(wait));
  for (auto& [name, a] : activity) {
    a.name = std::string(name);
    a.wall_ns = UnionNs(std::move(by_activity[name]));
    h.activities.push_back(std::move(a));
  }
  for (HorovodTensor& row : rows) {
    if (row.negotiations > 0 || row.ops > 0) h.tensors.push_back(std::move(row));
  }
  // Merging into an empty HorovodStats sorts and picks each tensor's last rank.
  HorovodStats sorted;
  sorted.Merge(h);
  *out = std::move(sorted);
  return true;
}

}  // namespace tfdiag
