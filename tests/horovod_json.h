// A Horovod timeline writer for tests, in the shape horovod/common/timeline.cc writes
// (TimelineWriter::DoWriteEvent/DoWriteMarker/WriteAtFileStart): a bare array, one process per
// tensor named by its process_name (registered at the tensor's first event), no tid; per tensor a
// B/E NEGOTIATE_ALLREDUCE holding one X event of dur 0 per rank ready (named "0".."N-1"), then a
// B/E ALLREDUCE with nested B/E activities started and ended for all tensors of the fused batch
// at once (ActivityStartAll/ActivityEndAll); the closing E carries args dtype and shape;
// CYCLE_START marks as `i` events without pid. The truth (waits, last ranks, wall times) is worked
// out here, from the plan, independently of tfdiag.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace tfdiag::test {

struct HorovodPlan {
  int tensors = 6, steps = 8, ranks = 4;
  int slow_rank = 2;      // late in every step but each 4th
  int64_t slow_us = 400;  // how late
  int64_t memcpy_in_us = 30, allreduce_us = 100, memcpy_out_us = 20, queue_us = 2;
  bool nccl = true;        // NCCL_ALLREDUCE, else MPI_ALLREDUCE
  int64_t step_us = 5000;  // steps never overlap
};

struct HorovodTruth {
  int64_t negotiations = 0, wait_us = 0;
  std::map<int, int64_t> last;  // rank -> negotiations it was last in
  std::map<std::string, int64_t> tensor_wait_us;
  int64_t allreduce_wall_us = 0, memcpy_wall_us = 0, queue_wall_us = 0;
};

inline std::string HorovodTensorName(int t) {
  return fmt::format(
      "DistributedAdamOptimizer_Allreduce/HorovodAllreduce_gradients_dense_{}_"
      "MatMul_grad_MatMul_1_0",
      t);
}

inline std::string HorovodTimeline(const HorovodPlan& p, HorovodTruth* truth) {
  std::string s = "[\n";
  s += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": "
       "{\"start_time_since_epoch_in_micros\":1600000000000000}},\n";
  s += "{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": 0, \"args\": "
       "{\"sort_index\": 0}},\n";
  std::vector<bool> registered(p.tensors, false);
  auto event = [&](int t, char ph, const std::string& name, int64_t ts, const std::string& extra) {
    const int pid = t + 1;
    if (!registered[t]) {
      registered[t] = true;
      s += fmt::format(
          "{{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": {}, \"args\": {{\"name\": "
          "\"{}\"}}}},\n{{\"name\": \"process_sort_index\", \"ph\": \"M\", \"pid\": {}, "
          "\"args\": {{\"sort_index\": {}}}}},\n",
          pid, HorovodTensorName(t), pid, pid);
    }
    s += fmt::format("{{\"ph\": \"{}\"", ph);
    if (ph != 'E') s += fmt::format(", \"name\": \"{}\"", name);
    s += fmt::format(", \"ts\": {}, \"pid\": {}", ts, pid);
    if (ph == 'X') s += ", \"dur\": 0";
    s += extra + "},\n";
  };
  const std::string collective = p.nccl ? "NCCL_ALLREDUCE" : "MPI_ALLREDUCE";
  for (int step = 0; step < p.steps; ++step) {
    const int64_t base = 1000 + step * p.step_us;
    s += fmt::format("{{\"ph\": \"i\", \"name\": \"CYCLE_START\", \"ts\": {}, \"s\": \"g\"}},\n",
                     base);
    const bool slow = step % 4 != 0;
    int64_t op_start = 0;
    for (int t = 0; t < p.tensors; ++t) {
      const int64_t start = base + 2 * t;
      event(t, 'B', "NEGOTIATE_ALLREDUCE", start, "");
      std::vector<std::pair<int64_t, int>> marks;
      for (int r = 0; r < p.ranks; ++r) {
        marks.emplace_back(start + r + (slow && r == p.slow_rank ? p.slow_us + t : 0), r);
      }
      std::sort(marks.begin(), marks.end());
      for (const auto& [ts, r] : marks) event(t, 'X', std::to_string(r), ts, "");
      event(t, 'E', "", marks.back().first + 5, "");
      op_start = std::max(op_start, marks.back().first + 10);
      ++truth->negotiations;
      const int64_t wait = marks.back().first - marks.front().first;
      truth->wait_us += wait;
      truth->tensor_wait_us[HorovodTensorName(t)] += wait;
      ++truth->last[marks.back().second];
    }
    // The fused batch: every activity starts and ends for all tensors at once.
    for (int t = 0; t < p.tensors; ++t) event(t, 'B', "ALLREDUCE", op_start, "");
    int64_t at = op_start + 1;
    for (const auto& [name, dur] : std::vector<std::pair<std::string, int64_t>>{
             {"QUEUE", p.queue_us},
             {"MEMCPY_IN_FUSION_BUFFER", p.memcpy_in_us},
             {collective, p.allreduce_us},
             {"MEMCPY_OUT_FUSION_BUFFER", p.memcpy_out_us}}) {
      for (int t = 0; t < p.tensors; ++t) event(t, 'B', name, at, "");
      for (int t = 0; t < p.tensors; ++t) event(t, 'E', "", at + dur, "");
      at += dur;
    }
    for (int t = 0; t < p.tensors; ++t) {
      event(t, 'E', "", at + 1, ", \"args\": {\"dtype\": \"float32\", \"shape\": \"[64, 10]\"}");
    }
    truth->allreduce_wall_us += p.allreduce_us;
    truth->memcpy_wall_us += p.memcpy_in_us + p.memcpy_out_us;
    truth->queue_wall_us += p.queue_us;
  }
  // The writer ends each event with "}]" and overwrites the ']' with ',' before the next one.
  s.resize(s.size() - 2);
  s += "]";
  return s;
}

}  // namespace tfdiag::test
