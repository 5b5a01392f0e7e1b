// The first passes of CaptureBuilder::Finish (capture_finish.h): nodes and ops sorted into
// Capture order (plain or packed), each device scanned while its ops are in cache.
#include <algorithm>

#include "core/capture_finish.h"
#include "core/populate.h"

namespace tfdiag::capture_finish {

namespace {

// Insertion sort of [first, last) by `less`, for ranges that come nearly in order (a trace lists
// a device's ops by time, give or take nested ops that start together): one pass plus the
// displacements. Gives up, the range partly sorted, past 8 moves per element or when one element
// is more than 1,024 places out: the range is then several runs one after another (a PS
// device's ops from every worker's file), which insertion would move row by row.
template <typename It, typename Less>
bool InsertionSortWithin(It first, It last, Less less) {
  const auto n = last - first;
  auto budget = 8 * n;
  for (It i = first + (n > 0 ? 1 : 0); i < last; ++i) {
    if (!less(*i, *(i - 1))) continue;
    auto v = *i;
    It j = i;
    do {
      *j = *(j - 1);
      --j;
      --budget;
    } while (j != first && less(v, *(j - 1)) && i - j < 1024);
    *j = v;
    if (budget < 0 || (j != first && less(v, *(j - 1)))) return false;
  }
  return true;
}

// std::sort of [first, last) on `threads` threads: parts sorted in parallel, then merged pairwise
// (std::inplace_merge: a buffer of at most half the range).
template <typename It, typename Less>
void ParallelSort(It first, It last, Less less, int threads) {
  const int parts = std::max(1, std::min(threads, 8));
  const ptrdiff_t n = last - first;
  auto at = [&](int k) { return first + n * k / parts; };
#pragma omp parallel for schedule(static, 1) num_threads(parts) if (parts > 1)
  for (int k = 0; k < parts; ++k) std::sort(at(k), at(k + 1), less);
  for (int w = 1; w < parts; w *= 2) {
    for (int k = 0; k + w < parts; k += 2 * w) {
      std::inplace_merge(at(k), at(k + w), at(std::min(parts, k + 2 * w)), less);
    }
  }
}

// Sets c->start and c->end from the devices' first ops and the scans' latest ends.
void SetSpan(const std::vector<DeviceScan>& scans, Capture* c) {
  if (c->ops.empty()) return;
  c->start = INT64_MAX;
  c->end = INT64_MIN;
  for (size_t d = 0; d < c->device_ops.size(); ++d) {
    const auto [b, e] = c->device_ops[d];
    if (b == e) continue;
    c->start = std::min(c->start, c->ops[b].start);
    c->end = std::max(c->end, scans[d].max_end);
  }
}

// Scans device d's ops, sorted and still in cache: latest end, _SOURCE ops, producers.
DeviceScan ScanDevice(const Capture& c, uint32_t d, StrId source, const PartitionInputs& refs) {
  DeviceScan scan;
  c.ops.ForEach(c.device_ops[d].first, c.device_ops[d].second, [&](const OpRow& op) {
    scan.max_end = std::max(scan.max_end, op.end());
    const StrId name = c.OpName(op);
    if (name == source) {
      scan.first_source = std::min(scan.first_source, op.start);
      ++scan.sources;
    }
    const uint32_t slot = refs.SlotOfOp(name);
    if (slot != PartitionInputs::kNotPartition) scan.producers.push_back({slot, op.end()});
  });
  return scan;
}

}  // namespace

std::vector<uint32_t> SortNodes(BlockVector<NodeRow, 12>* nodes, Capture* c) {
  const size_t n = nodes->size();
  const BlockVector<NodeRow, 12>& rows = *nodes;
  // Counting sort by name (string ids are dense), then each name's few rows by (inputs, type).
  std::vector<uint32_t> begin(c->strings.size() + 1, 0);
  for (size_t i = 0; i < n; ++i) ++begin[rows[i].name + 1];
  for (size_t s = 1; s < begin.size(); ++s) begin[s] += begin[s - 1];
  std::vector<uint32_t> order(n);
  {
    std::vector<uint32_t> next(begin.begin(), begin.end() - 1);
    for (size_t i = 0; i < n; ++i) order[next[rows[i].name]++] = static_cast<uint32_t>(i);
  }
  const std::vector<StrId>& in = c->inputs;
  auto less = [&](uint32_t x, uint32_t y) {
    const NodeRow &a = rows[x], &b = rows[y];
    if (a.inputs_count != b.inputs_count) return a.inputs_count < b.inputs_count;
    if (a.inputs_begin != b.inputs_begin) {
      const auto ia = in.begin() + a.inputs_begin, ib = in.begin() + b.inputs_begin;
      const auto [da, db] = std::mismatch(ia, ia + a.inputs_count, ib);
      if (da != ia + a.inputs_count) return *da < *db;
    }
    return a.type < b.type;
  };
  for (size_t s = 0; s + 1 < begin.size(); ++s) {
    if (begin[s + 1] - begin[s] > 1) {
      std::sort(order.begin() + begin[s], order.begin() + begin[s + 1], less);
    }
  }
  std::vector<uint32_t> nmap(n);
  c->nodes.clear();
  c->nodes.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    const uint32_t i = order[k];
    if (k == 0 || rows[order[k - 1]].name != rows[i].name || less(order[k - 1], i)) {
      c->nodes.push_back(rows[i]);
    }
    nmap[i] = static_cast<uint32_t>(c->nodes.size() - 1);
  }
  c->nodes.shrink_to_fit();
  nodes->Clear();
  return nmap;
}

std::vector<DeviceScan> SortOps(BlockVector<OpRow>* ops, const std::vector<uint32_t>& dmap,
                                const std::vector<uint32_t>& nmap, StrId source,
                                const PartitionInputs& refs, int threads, Capture* c) {
  // Counting sort by final device while the blocks are drained (each block freed once copied:
  // peak memory is the ops plus a block per thread), then time order within each device, which
  // the input usually has already. Ties are broken so the order is total and the same whatever
  // order rows were added in (parallel import). With several threads, each drains a contiguous
  // run of blocks into its own slots of every device's range, so the order is the same.
  const size_t nd = c->devices.size();
  const size_t nb = ops->block_count();
  const int parts = static_cast<int>(
      std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(1, threads)), nb)));
  auto part_begin = [&](int k) { return nb * static_cast<size_t>(k) / static_cast<size_t>(parts); };
  // counts[k][d]: ops of part k on device d; then the part's first slot in device d's range.
  std::vector<std::vector<size_t>> counts(static_cast<size_t>(parts), std::vector<size_t>(nd, 0));
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
  for (int k = 0; k < parts; ++k) {
    std::vector<size_t>& mine = counts[static_cast<size_t>(k)];
    for (size_t b = part_begin(k); b < part_begin(k + 1); ++b) {
      const OpRow* rows = ops->block(b);
      for (size_t i = 0, n = ops->block_size(b); i < n; ++i) ++mine[dmap[rows[i].device]];
    }
  }
  std::vector<size_t> dev_begin(nd + 1, 0);
  for (size_t d = 0; d < nd; ++d) {
    size_t at = dev_begin[d];
    for (std::vector<size_t>& part : counts) {
      const size_t n = part[d];
      part[d] = at;
      at += n;
    }
    dev_begin[d + 1] = at;
  }
  OpStore::Plain& plain = c->ops.mutable_plain();
  plain.resize(ops->size());  // not zeroed (DefaultInitAllocator): pages fault in as written
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
  for (int k = 0; k < parts; ++k) {
    const size_t kk = static_cast<size_t>(k);
    std::vector<size_t>& next = counts[kk];
    // Each part writes its slots of every device's range front to back: prefault them 64 KiB at
    // a time (core/populate.h) instead of a page fault per 4 KiB.
    std::vector<PopulateAhead> ahead(nd);
    for (size_t d = 0; d < nd; ++d) {
      const size_t end = kk + 1 < counts.size() ? counts[kk + 1][d] : dev_begin[d + 1];
      ahead[d] = PopulateAhead(reinterpret_cast<char*>(plain.data() + end), 64 << 10);
    }
    for (size_t b = part_begin(k); b < part_begin(k + 1); ++b) {
      const OpRow* rows = ops->block(b);
      for (size_t i = 0, n = ops->block_size(b); i < n; ++i) {
        OpRow op = rows[i];
        op.device = static_cast<uint16_t>(dmap[op.device]);
        op.node = nmap[op.node];
        OpRow* to = plain.data() + next[op.device]++;
        ahead[op.device].Advance(reinterpret_cast<char*>(to));
        *to = op;
      }
      ops->ReleaseBlock(b);
    }
  }
  ops->Clear();
  c->device_ops.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    c->device_ops[d] = {static_cast<uint32_t>(dev_begin[d]),
                        static_cast<uint32_t>(dev_begin[d + 1])};
  }
  auto less = [](const OpRow& a, const OpRow& b) { return OpBefore(a, b); };
  // Devices sort and scan independently.
  std::vector<DeviceScan> scans(nd);
  const int n_dev = static_cast<int>(nd);
  auto range = [&](uint32_t d) {
    return std::make_pair(plain.begin() + static_cast<ptrdiff_t>(dev_begin[d]),
                          plain.begin() + static_cast<ptrdiff_t>(dev_begin[d + 1]));
  };
  // A large device that is not nearly in order (a PS device's ops from every worker's file, one
  // file's after another) would keep one thread sorting while the others wait: it is sorted after
  // the loop, with the other such devices (below).
  constexpr size_t kParallelSortRows = 1 << 15;
  std::vector<uint8_t> deferred(nd, 0);
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int d = 0; d < n_dev; ++d) {
    const auto [first, last] = range(static_cast<uint32_t>(d));
    if (!InsertionSortWithin(first, last, less)) {
      if (threads > 1 && dev_begin[d + 1] - dev_begin[d] >= kParallelSortRows) {
        deferred[static_cast<size_t>(d)] = 1;
        continue;
      }
      std::sort(first, last, less);
    }
    scans[d] = ScanDevice(*c, static_cast<uint32_t>(d), source, refs);
  }
  // Largest first: one larger than a thread's share of them all is sorted on every thread, the
  // others one per thread.
  std::vector<uint32_t> big;
  size_t total = 0;
  for (size_t d = 0; d < nd; ++d) {
    if (!deferred[d]) continue;
    big.push_back(static_cast<uint32_t>(d));
    total += dev_begin[d + 1] - dev_begin[d];
  }
  std::sort(big.begin(), big.end(), [&](uint32_t a, uint32_t b) {
    return dev_begin[a + 1] - dev_begin[a] > dev_begin[b + 1] - dev_begin[b];
  });
  size_t shared = 0;  // big[0, shared) are sorted on every thread
  while (shared < big.size() && (dev_begin[big[shared] + 1] - dev_begin[big[shared]]) *
                                        static_cast<size_t>(std::max(1, threads)) >
                                    total) {
    const auto [first, last] = range(big[shared]);
    ParallelSort(first, last, less, threads);
    scans[big[shared]] = ScanDevice(*c, big[shared], source, refs);
    ++shared;
  }
  const int n_rest = static_cast<int>(big.size() - shared);
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, threads)) if (threads > 1)
  for (int k = 0; k < n_rest; ++k) {
    const uint32_t d = big[shared + static_cast<size_t>(k)];
    const auto [first, last] = range(d);
    std::sort(first, last, less);
    scans[d] = ScanDevice(*c, d, source, refs);
  }
  SetSpan(scans, c);
  return scans;
}

namespace {

// Merges the sorted parts `from` of one device into `to` in Capture order (OpBefore), node ids
// mapped through `nmap` on the way (the builder's node rows are gone): a k-way merge that
// decodes a block of each part at a time and frees each part once read, so memory is the packed
// rows, not the device's plain ones. Parts sorted in builder node order stay sorted with their
// nodes mapped (SortNodes keeps that order).
void MergePacked(const std::vector<PackedOps*>& from, const std::vector<uint32_t>& nmap,
                 PackedOps* to) {
  struct Cursor {
    PackedOps* part;
    uint32_t next = 0;  // next row of the part to decode
    OpRow buf[kPackBlock];
    uint32_t at = 0, n = 0;  // buf[at, n) not yet merged
    bool Fill(const std::vector<uint32_t>& nmap) {
      if (at < n) return true;
      if (next >= part->count) {
        *part = PackedOps();  // read: freed
        return false;
      }
      n = std::min(kPackBlock, part->count - next);
      part->Decode(next, n, 0, nmap, buf);
      next += n;
      at = 0;
      return true;
    }
  };
  // The output is reserved once, not grown: a growing vector copies itself (twice the device's
  // bytes at a time), and so would shrinking it. Reserved pages are touched only as written. A
  // block's ops are coded from its own head, so the merged bytes are about the parts' sum; they
  // can be more (final node ids may take longer varints than the builder's; a block mixing a
  // whole-microsecond part with a nanosecond one loses the 1000 ns scale: 1.2x measured), hence
  // a quarter more, which costs address space, not memory.
  size_t n_bytes = 0, n_blocks = 0;
  for (const PackedOps* p : from) n_bytes += p->bytes.size(), n_blocks += p->blocks.size();
  to->bytes.reserve(n_bytes + n_bytes / 4 + 4096);
  to->blocks.reserve(n_blocks);
  std::vector<Cursor> cur(from.size());
  std::vector<uint32_t> live;  // cursors with rows left
  for (size_t k = 0; k < from.size(); ++k) {
    cur[k].part = from[k];
    if (cur[k].Fill(nmap)) live.push_back(static_cast<uint32_t>(k));
  }
  // Smallest head on top (a heap on the heads; ties by part order keep the merge deterministic).
  auto later = [&](uint32_t a, uint32_t b) {
    const OpRow &x = cur[a].buf[cur[a].at], &y = cur[b].buf[cur[b].at];
    if (OpBefore(y, x)) return true;
    if (OpBefore(x, y)) return false;
    return a > b;
  };
  std::make_heap(live.begin(), live.end(), later);
  std::vector<OpRow> out;
  constexpr size_t kOut = kPackBlock * 64;  // appended whole blocks at a time
  out.reserve(kOut);
  while (!live.empty()) {
    std::pop_heap(live.begin(), live.end(), later);
    Cursor& c = cur[live.back()];
    out.push_back(c.buf[c.at++]);
    if (out.size() == kOut) {
      to->Append(out.data(), out.size());
      out.clear();
    }
    if (c.Fill(nmap)) {
      std::push_heap(live.begin(), live.end(), later);
    } else {
      live.pop_back();
    }
  }
  to->Append(out.data(), out.size());
  to->nodes_mapped = true;
}

}  // namespace

std::vector<DeviceScan> AdoptPacked(std::vector<std::pair<uint32_t, PackedOps>>* parts,
                                    const std::vector<uint32_t>& dmap,
                                    const std::vector<uint32_t>& nmap, StrId source,
                                    const PartitionInputs& refs, int threads, Capture* c) {
  const size_t nd = c->devices.size();
  std::vector<std::vector<size_t>> of(nd);  // the parts of each (new) device, in order added
  for (size_t k = 0; k < parts->size(); ++k) of[dmap[(*parts)[k].first]].push_back(k);
  std::vector<PackedOps> devices(nd);
  const int n_dev = static_cast<int>(nd);
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int d = 0; d < n_dev; ++d) {
    const std::vector<size_t>& mine = of[static_cast<size_t>(d)];
    PackedOps& to = devices[static_cast<size_t>(d)];
    if (mine.size() == 1) {
      to = std::move((*parts)[mine[0]].second);
    } else if (mine.size() > 1) {
      std::vector<PackedOps*> from;
      for (size_t k : mine) from.push_back(&(*parts)[k].second);
      MergePacked(from, nmap, &to);
    }
  }
  parts->clear();
  parts->shrink_to_fit();
  c->device_ops.resize(nd);
  uint32_t at = 0;
  for (size_t d = 0; d < nd; ++d) {
    c->device_ops[d] = {at, at + devices[d].count};
    at += devices[d].count;
  }
  c->ops.SetPacked(std::move(devices), nmap);
  std::vector<DeviceScan> scans(nd);
#pragma omp parallel for schedule(dynamic) num_threads(std::max(1, threads)) if (threads > 1)
  for (int d = 0; d < n_dev; ++d) {
    scans[static_cast<size_t>(d)] = ScanDevice(*c, static_cast<uint32_t>(d), source, refs);
  }
  SetSpan(scans, c);
  return scans;
}

}  // namespace tfdiag::capture_finish
