#include "samples/psload/timeline.h"

#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace psload {

namespace {

Timeline* g_timeline = nullptr;

// A JSON string's characters are plain here: names are built from fixed text and numbers.
struct Named {
  std::string type, name;
  std::vector<std::string> inputs;
};

// The TF names of `op` in task `o` (see timeline.h).
Named NameOf(const Options& o, Timeline::Op op, int peer) {
  const bool hot = o.placement == Placement::kHot;
  const int ps = o.job == "ps" ? o.index : peer;
  const std::string var = hot ? std::string("embedding/embedding_weights")
                              : fmt::format("embedding/embedding_weights/part_{}", ps);
  const std::string gather = hot || ps == 0
                                 ? std::string("embedding/embedding_lookup/GatherV2")
                                 : fmt::format("embedding/embedding_lookup/GatherV2_{}", ps);
  const std::string apply = fmt::format("Adagrad/update_{}/SparseApplyAdagrad", var);
  switch (op) {
    case Timeline::Op::kSource:
      return {"NoOp", "_SOURCE", {}};
    case Timeline::Op::kInput:
      return {"IteratorGetNext", "IteratorGetNext", {"IteratorV2"}};
    case Timeline::Op::kPullRecv:
      return {"_Recv", fmt::format("{}/_recv_{}", gather, ps), {}};
    case Timeline::Op::kDenseRecv:
      return {"_Recv", fmt::format("dense/kernel/Read/_recv_{}", ps), {}};
    case Timeline::Op::kCompute: {  // takes what every PS sent (hot: rows from ps:0 only)
      Named n{"MatMul", "dense/MatMul", {}};
      for (size_t p = 0; p < o.ps_hosts.size(); ++p) {
        const std::string from = p == 0 ? std::string("embedding/embedding_lookup/GatherV2")
                                 : hot  ? std::string("dense/kernel/Read/ReadVariableOp")
                                        : fmt::format("embedding/embedding_lookup/GatherV2_{}", p);
        n.inputs.push_back(fmt::format("{}_S{}", from, 2 * p + 301));
      }
      return n;
    }
    case Timeline::Op::kPushRecv:
      return {"_Recv", fmt::format("{}/_ctrl_recv_{}", apply, ps), {}};
    case Timeline::Op::kTrain:
      return {"NoOp", "group_deps", {}};
    case Timeline::Op::kPartition:
      return {"DynamicPartition",
              "embedding/embedding_lookup/DynamicPartition",
              {"IteratorGetNext", "embedding/embedding_lookup/Cast"}};
    case Timeline::Op::kGradient:
      return {"Reshape",
              "gradients/embedding/embedding_lookup_grad/Reshape",
              {"gradients/dense/MatMul_grad/MatMul", "gradients/embedding/Reshape_grad/Shape"}};
    case Timeline::Op::kGather:
      return {"GatherV2",
              gather,
              {var + "/read",
               fmt::format("embedding/embedding_lookup/DynamicPartition_S{}", 2 * ps + 1),
               gather + "/axis"}};
    case Timeline::Op::kApply:
      return {"SparseApplyAdagrad",
              apply,
              {var, var + "/Adagrad", "Adagrad/learning_rate",
               fmt::format("gradients/embedding/embedding_lookup_grad/Reshape_S{}", 2 * ps + 101),
               fmt::format("embedding/embedding_lookup/DynamicPartition_S{}", 2 * ps + 1)}};
    case Timeline::Op::kDenseRead:
      return {"ReadVariableOp", "dense/kernel/Read/ReadVariableOp", {"dense/kernel"}};
  }
  return {};
}

// --show-memory: the variables PS `o` holds, each as timeline.py's show_memory=True writes a
// tensor: an `O` snapshot on the device's "Tensors" process whose tensor_description (protobuf
// text) gives the shape and requested_bytes. Hot: ps:0 holds the whole table (rows * num_ps
// rows: every id of [0, rows * num_ps)), the others the dense variable; balanced: ps:p holds
// part_<p> (rows rows).
std::string VariableSnapshots(const Options& o, const std::string& device,
                              const std::vector<Timeline::Event>& ev) {
  const int64_t num_ps = static_cast<int64_t>(o.ps_hosts.size());
  std::string name;
  int64_t rows = 0, cols = 0;
  if (o.placement == Placement::kHot && o.index != 0) {
    name = "dense/kernel", rows = o.dense_floats, cols = 1;
  } else if (o.placement == Placement::kHot) {
    name = "embedding/embedding_weights", rows = o.rows * num_ps, cols = o.dim;
  } else {
    name = fmt::format("embedding/embedding_weights/part_{}", o.index), rows = o.rows, cols = o.dim;
  }
  const int64_t bytes = rows * cols * 4, ts = ev.empty() ? 0 : ev.front().start_ns / 1000;
  return fmt::format(
      ",{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":2,\"args\":{{\"name\":\"{} "
      "Tensors\"}}}},{{\"ph\":\"O\",\"cat\":\"Tensor\",\"name\":\"{}\",\"pid\":2,\"tid\":0,"
      "\"ts\":{},\"id\":1,\"args\":{{\"snapshot\":{{\"tensor_description\":\"dtype: "
      "DT_FLOAT\\nshape {{\\n  dim {{\\n    size: {}\\n  }}\\n  dim {{\\n    size: {}\\n  "
      "}}\\n}}\\nallocation_description {{\\n  requested_bytes: {}\\n  allocated_bytes: "
      "{}\\n  allocator_name: cpu\\n}}\\n\"}}}}}}",
      device, name, ts, rows, cols, bytes, bytes);
}

}  // namespace

Timeline* ProcessTimeline() { return g_timeline; }
void SetProcessTimeline(Timeline* t) { g_timeline = t; }

int64_t Timeline::NowNs() {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

void Timeline::Add(Op op, int peer, int64_t start_ns, int64_t end_ns, int lane) {
  std::lock_guard<std::mutex> lock(mu_);
  if (events_.size() >= max_) {
    ++dropped_;
    return;
  }
  events_.push_back({start_ns, std::max(start_ns, end_ns), lane, static_cast<int16_t>(peer), op});
}

bool Timeline::Write(const Options& o, const std::string& path, std::string* error) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Event> ev = events_;
  std::stable_sort(ev.begin(), ev.end(),
                   [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
  const std::string device = fmt::format("/job:{}/replica:0/task:{}/device:CPU:0",
                                         o.job == "chief" ? "chief" : o.job, o.index);
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    *error = fmt::format("cannot write {}: {}", tmp, std::strerror(errno));
    return false;
  }
  // Streamed a megabyte at a time: the file is ~200 bytes an op.
  bool ok = true;
  std::string out = fmt::format(
      "{{\"traceEvents\":[{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{{\"name\":"
      "\"{} Compute\"}}}}",
      device);
  if (o.show_memory && o.job == "ps") out += VariableSnapshots(o, device, ev);
  for (size_t k = 0; k <= ev.size(); ++k) {
    if (k == ev.size() || out.size() >= (1 << 20)) {
      if (k == ev.size()) out += "]}\n";
      ok = ok && std::fwrite(out.data(), 1, out.size(), f) == out.size();
      out.clear();
      if (k == ev.size()) break;
    }
    const Event& e = ev[k];
    const Named n = NameOf(o, e.op, e.peer);
    const int64_t ts = e.start_ns / 1000, dur = std::max<int64_t>(1, e.end_ns / 1000 - ts);
    out += fmt::format(
        ",{{\"ph\":\"X\",\"cat\":\"Op\",\"name\":\"{}\",\"pid\":1,\"tid\":{},\"ts\":{},\"dur\":{},"
        "\"args\":{{\"name\":\"{}\",\"op\":\"{}\"",
        n.type, e.lane, ts, dur, n.name, n.type);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      out += fmt::format(",\"input{}\":\"{}\"", i, n.inputs[i]);
    }
    out += "}}";
  }
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace psload
