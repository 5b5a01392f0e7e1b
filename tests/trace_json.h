// Helpers for timeline tests: build Chrome-trace / TF1-timeline JSON text event by event, write
// it (plain or gzip), read it back with ReadTimeline, and look rows up in the resulting Capture.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "collectors/timeline/timeline_reader.h"
#include "core/capture_builder.h"

namespace tfdiag::test {

// {"name":"process_name","ph":"M","pid":<pid>,"args":{"name":"<device>"}}
inline std::string MetaEvent(int64_t pid, const std::string& device) {
  return fmt::format(R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"{}"}}}})", pid,
                     device);
}

// A TF1 op: X event with integer-microsecond ts/dur and args name/op/inputN.
inline std::string OpEvent(int64_t pid, int64_t tid, int64_t ts_us, int64_t dur_us,
                           const std::string& node, const std::string& type,
                           const std::vector<std::string>& inputs = {}) {
  std::string args = fmt::format(R"("name":"{}","op":"{}")", node, type);
  for (size_t i = 0; i < inputs.size(); ++i) {
    args += fmt::format(R"(,"input{}":"{}")", i, inputs[i]);
  }
  return fmt::format(
      R"({{"ph":"X","cat":"Op","name":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})",
      type, pid, tid, ts_us, dur_us, args);
}

// A DataFlow arrow end: ph 's' or 't'.
inline std::string FlowEvent(char ph, int64_t pid, int64_t tid, int64_t ts_us, int id,
                             const std::string& tensor) {
  return fmt::format(
      R"({{"ph":"{}","cat":"DataFlow","name":"{}","pid":{},"tid":{},"ts":{},"id":{}}})", ph, tensor,
      pid, tid, ts_us, id);
}

// A show_memory tensor object event ('N', 'O' with a snapshot carrying requested_bytes, 'D').
inline std::string TensorEvent(char ph, int64_t pid, int64_t ts_us, int id,
                               const std::string& tensor, int64_t requested_bytes = -1) {
  std::string args;
  if (ph == 'O') {
    args = fmt::format(
        R"(,"args":{{"snapshot":{{"tensor_description":"dtype: DT_FLOAT\nshape {{\n  dim {{\n    )"
        R"(size: 4\n  }}\n}}\nallocation_description {{\n  requested_bytes: {}\n  )"
        R"(allocated_bytes: 512\n  allocator_name: cpu\n}}\n"}}}})",
        requested_bytes);
  }
  return fmt::format(
      R"({{"ph":"{}","cat":"Tensor","name":"{}","pid":{},"tid":0,"ts":{},"id":{}{}}})", ph, tensor,
      pid, ts_us, id, args);
}

inline std::string Join(const std::vector<std::string>& events, const char* sep = ",") {
  std::string s;
  for (size_t i = 0; i < events.size(); ++i) {
    if (i > 0) s += sep;
    s += events[i];
  }
  return s;
}

inline std::string ObjectForm(const std::vector<std::string>& events) {
  return "{\"traceEvents\":[" + Join(events) + "]}";
}
inline std::string BareArray(const std::vector<std::string>& events) {
  return "[" + Join(events) + "]";
}

// Writes `data` as one gzip member with zlib's gz* API.
inline bool WriteGzip(const std::string& path, const std::string& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  int n = gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  return gzclose(f) == Z_OK && n == static_cast<int>(data.size());
}

struct ReadResult {
  Status status;
  Capture capture;  // empty unless status is OK
};

// Reads `path` into a fresh builder and, when that succeeds, finishes it.
inline ReadResult ReadOne(const std::string& path) {
  ReadResult r;
  CaptureBuilder b;
  r.status = ReadTimeline(path, &b);
  if (r.status.ok()) r.capture = b.Finish();
  return r;
}

inline std::string TaskOf(const Capture& c, const OpRow& op) {
  return std::string(c.TaskLabelOf(c.devices[op.device].task));
}

inline std::vector<const OpRow*> OpsNamed(const Capture& c, std::string_view name) {
  // Pointers to rows: timelines keep their ops plain (profile readers pack theirs; use
  // c.ops.Rows() there).
  std::vector<const OpRow*> out;
  if (c.ops.packed()) ADD_FAILURE() << "OpsNamed: the capture's ops are packed";
  for (const OpRow& op : c.ops.plain()) {
    if (c.Str(c.OpName(op)) == name) out.push_back(&op);
  }
  return out;
}

// Edges as (src label, dst label, tensor, kind).
struct EdgeKey {
  std::string src, dst, tensor;
  EdgeKind kind;
  bool operator<(const EdgeKey& o) const {
    return std::tie(src, dst, tensor, kind) < std::tie(o.src, o.dst, o.tensor, o.kind);
  }
  bool operator==(const EdgeKey& o) const {
    return std::tie(src, dst, tensor, kind) == std::tie(o.src, o.dst, o.tensor, o.kind);
  }
};

inline const EdgeRow* FindEdge(const Capture& c, const std::string& src, const std::string& dst,
                               const std::string& tensor) {
  for (const EdgeRow& e : c.edges) {
    if (c.TaskLabelOf(e.src_task) == src && c.TaskLabelOf(e.dst_task) == dst &&
        c.Str(e.tensor) == tensor) {
      return &e;
    }
  }
  return nullptr;
}

}  // namespace tfdiag::test
