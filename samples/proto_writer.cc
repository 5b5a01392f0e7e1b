// The simulator's protobuf formats (simulator.h TraceFormat::kXPlane, kRunMetadata), written with
// the classes generated from collectors/xplane/xplane.proto and
// collectors/runmetadata/run_metadata.proto (field numbers as TensorFlow's, cited there).
//
// RunMetadata: dev_stats are buffered and written every ~64k node_stats as another
// RunMetadata.step_stats occurrence; protobuf merges repeated occurrences of a message field, so
// the file parses as one RunMetadata (ParseFromString included).
// XSpace: each device's events are serialized as XLine messages (one per lane per batch; lines
// with the same id are one timeline, xplane.proto) into a temporary spool file per device; at the
// end each plane is written as its header, its spooled lines and its metadata. Memory stays at
// one batch per device, whatever the size of the file.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "collectors/runmetadata/run_metadata.pb.h"
#include "collectors/xplane/xplane.pb.h"
#include "core/atomic_file.h"
#include "samples/sim_internal.h"

namespace tfdiag::sim::internal {
namespace {

constexpr size_t kBatch = 1 << 16;       // node_stats / events buffered before a write
constexpr int64_t kGroupIdStat = 1;      // XStatMetadata id of "group_id" in every plane
constexpr int64_t kCorrelationStat = 2;  // "correlation_id"
constexpr int64_t kRootStat = 3;         // "_r": a user-defined step root (TraceMe metadata)
constexpr int64_t kStepNumStat = 4;      // "step_num"
// "rendezvous_key": a cross-device RecvTensor's key, "<src device>;<incarnation>;<dst device>;
// <tensor>;0:0" (the distributed runtime's rendezvous key, tf2_events.h RendezvousKey).
constexpr int64_t kRendezvousStat = 5;

// Event metadata ids besides the templates' (index + 1, "<node>:<type>"): a template's kernel
// name (kKernelIds + index + 1), and the TraceMe events of TF2's runtime.
constexpr int64_t kKernelIds = 1'000'000;
constexpr int64_t kTfDataFunctionId = 2'000'001;  // InstantiatedCapturedFunction::Run...
constexpr int64_t kFunctionRunId = 2'000'002;     // FunctionRun
constexpr int64_t kLaunchId = 2'000'003;          // cudaLaunchKernel
constexpr int64_t kTrainId = 2'000'004;           // Keras' per-step TraceMe "train"
// Lines besides the lanes: a worker's tf.data thread, a GPU plane's derived TensorFlow Ops row
// (xplane_schema.h's id for it).
constexpr int kTfDataLine = 30000;
constexpr int kMarkerLine = 30001;
constexpr int kTfOpsLine = -559038734;
// tf.data function runs are groups of their own (group_events.cc), numbered past the steps.
constexpr int64_t kTfDataGroups = 1'000'000'000;

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

class RunMetadataSink : public ProtoSink {
 public:
  RunMetadataSink(const Model& m) : m_(m) {}
  Status Open(const std::string& path) { return file_.Open(path); }

  Status Event(const OpTemplate& t, int64_t start_ns, int64_t end_ns, int lane, int64_t) override {
    auto [it, fresh] = dev_.emplace(t.device, nullptr);
    if (fresh) {
      it->second = md_.mutable_step_stats()->add_dev_stats();
      it->second->set_device(m_.devices[t.device].name);
    }
    tensorflow::NodeExecStats* n = it->second->add_node_stats();
    // As TF1's step stats: microseconds; timeline.py turns them into ts/dur as the TF1 writer.
    const int64_t us = start_ns / 1000;
    const int64_t dur = std::max<int64_t>(1, end_ns / 1000 - us);
    n->set_all_start_micros(us);
    n->set_op_start_rel_micros(0);
    n->set_op_end_rel_micros(dur);
    n->set_all_end_rel_micros(dur);
    n->set_thread_id(static_cast<uint32_t>(lane));
    if (t.gputrace) {
      n->set_node_name(t.node + ":" + t.type);  // timeline.py _parse_kernel_label
    } else if (t.type == "RecvTensor") {
      n->set_node_name("RecvTensor");
      if (t.recv_bytes >= 0 && t.recv_src >= 0) {
        // worker_cache_logger.cc: "[<N>B] " below 0.1 MB, else "[%.1fMB] ".
        const double b = static_cast<double>(t.recv_bytes);
        const std::string size = b >= 0.1 * 1048576.0 ? fmt::format("[{:.1f}MB] ", b / 1048576.0)
                                                      : fmt::format("[{}B] ", t.recv_bytes);
        n->set_timeline_label(fmt::format("{}{} from {} to {}", size, t.recv_edge,
                                          m_.devices[t.recv_src].name, m_.devices[t.device].name));
      }
    } else {
      n->set_node_name(t.node);
      n->set_timeline_label(fmt::format("{} = {}({})", t.node, t.type, Join(t.inputs)));
      for (size_t k = 0; k < t.output_bytes.size(); ++k) {
        tensorflow::NodeOutput* o = n->add_output();
        o->set_slot(static_cast<int32_t>(k));
        tensorflow::AllocationDescription* a =
            o->mutable_tensor_description()->mutable_allocation_description();
        a->set_requested_bytes(t.output_bytes[k]);
        a->set_allocator_name(t.allocator);
      }
    }
    if (++pending_ >= kBatch) return Write();
    return OkStatus();
  }

  Status Finish() override {
    TFDIAG_RETURN_IF_ERROR(Write());
    return file_.Commit();
  }

 private:
  Status Write() {
    if (pending_ == 0) return OkStatus();
    std::string bytes;
    if (!md_.SerializeToString(&bytes)) return IoError("cannot serialize RunMetadata");
    md_.Clear();
    dev_.clear();
    pending_ = 0;
    return file_.Write(bytes);
  }

  const Model& m_;
  AtomicFile file_;
  tensorflow::RunMetadata md_;
  std::map<int, tensorflow::DeviceStepStats*> dev_;
  size_t pending_ = 0;
};

void PutVarint(std::string* s, uint64_t v) {
  while (v >= 0x80) {
    s->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  s->push_back(static_cast<char>(v));
}

class XSpaceSink : public ProtoSink {
 public:
  explicit XSpaceSink(const Model& m)
      : m_(m), spool_(m.devices.size()), lines_(m.devices.size()), steps_(m.devices.size(), -1) {}
  ~XSpaceSink() override {
    for (std::FILE* f : spool_) {
      if (f != nullptr) std::fclose(f);
    }
  }

  Status Open(const std::string& path) {
    const bool single = path.size() > 10 && path.compare(path.size() - 10, 10, ".xplane.pb") == 0;
    if (single) {
      files_.push_back({path, {}});
      for (size_t d = 0; d < m_.devices.size(); ++d)
        files_[0].devices.push_back(static_cast<int>(d));
    } else {
      // One file per task: <path>/plugins/profile/<run>/<job>-<index>.xplane.pb.
      const std::string run = path + "/plugins/profile/2020_09_13_12_26_40";
      for (const std::string& d : {path, path + "/plugins", path + "/plugins/profile", run}) {
        if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST) {
          return IoError("{}: cannot create directory", d);
        }
      }
      std::map<std::string, size_t> by_task;
      for (size_t d = 0; d < m_.devices.size(); ++d) {
        const std::string host =
            fmt::format("{}-{}", m_.devices[d].ps ? "ps" : "worker", m_.devices[d].task);
        auto [it, fresh] = by_task.emplace(host, files_.size());
        if (fresh) files_.push_back({run + "/" + host + ".xplane.pb", {}});
        files_[it->second].devices.push_back(static_cast<int>(d));
      }
      per_task_ = true;
      // TF2's GPU tracer layout (tf2_events.h): a GPU's kernels on a "/device:GPU:N" plane's
      // "Stream #N" lines, named by the kernel, without a tf_op stat; the launch, a TraceMe
      // nested in the TF op on the compute device, shares the kernel's correlation_id.
      for (const OpTemplate& t : m_.templates) {
        if (!t.gputrace || !m_.devices[t.device].stream) continue;
        const std::string& sd = m_.devices[t.device].name;
        const std::string compute = sd.substr(0, sd.rfind("/stream:"));
        for (size_t d = 0; d < m_.devices.size(); ++d) {
          if (m_.devices[d].name == compute) launches_[{static_cast<int>(d), t.node}] = t.device;
        }
      }
    }
    for (size_t d = 0; d < m_.devices.size(); ++d) {
      spool_[d] = std::tmpfile();
      if (spool_[d] == nullptr) return IoError("cannot create a temporary spool file");
    }
    return OkStatus();
  }

  Status Event(const OpTemplate& t, int64_t start_ns, int64_t end_ns, int lane,
               int64_t step) override {
    const Device& dev = m_.devices[t.device];
    const bool tracer = per_task_ && dev.stream;  // a GPU tracer plane's stream
    if (m_.cfg.tf2_steps && !dev.ps && !dev.stream && !dev.gpu) {
      if (t.node == "_SOURCE") return OkStatus();  // a TF2 function runs no _SOURCE op
      auto [it, fresh] = marks_[t.device].emplace(step, std::make_pair(start_ns, end_ns));
      if (!fresh) {
        it->second.first = std::min(it->second.first, start_ns);
        it->second.second = std::max(it->second.second, end_ns);
      }
    }
    if (!dev.ps && !dev.stream && !dev.gpu && steps_[t.device] != step) {
      // A worker's tf.data: each step's input element comes from a captured-function run, a
      // group of its own (the step's is `step`).
      steps_[t.device] = step;
      Add(t.device, kTfDataLine, "tf_data_iterator_resource", kTfDataFunctionId, start_ns,
          start_ns + 30'000, -1, -1);
      Add(t.device, kTfDataLine, "tf_data_iterator_resource", kFunctionRunId, start_ns + 2'000,
          start_ns + 22'000, kTfDataGroups + step, -1);
    }
    if (!tracer) {
      Add(t.device, lane, fmt::format("tf_Compute/{}", lane), Metadata(t), start_ns, end_ns, step,
          -1);
      if (m_.cfg.rendezvous_keys && t.recv_src >= 0 && !t.recv_edge.empty()) {
        // The key as a ref_value to a stat metadata named by it, as TF's XPlaneBuilder keeps a
        // repeated string (one per template: a worker's RecvTensor of one tensor each step).
        auto [it, fresh] = key_ids_.emplace(&t, 0);
        if (fresh) {
          it->second = kRendezvousStat + 1 + static_cast<int64_t>(keys_[t.device].size());
          keys_[t.device].emplace_back(
              it->second, fmt::format("{};{:016x};{};{};0:0", m_.devices[t.recv_src].name,
                                      0x5eed0000u + unsigned(t.recv_src), dev.name, t.recv_edge));
        }
        xplane::XLine& line = lines_[t.device][lane];
        xplane::XStat* st = line.mutable_events(line.events_size() - 1)->add_stats();
        st->set_metadata_id(kRendezvousStat);
        st->set_ref_value(static_cast<uint64_t>(it->second));
      }
      auto launch = launches_.find({t.device, t.node});
      if (launch != launches_.end()) {
        const int64_t at = start_ns + (end_ns - start_ns) / 4;
        const int64_t corr = ++correlation_;
        Add(t.device, lane, "", kLaunchId, at, at + std::max<int64_t>(1, (end_ns - start_ns) / 4),
            step, corr);
        pending_launches_[{launch->second, t.node}].push_back(corr);
      }
    } else {
      const bool memcpy = t.type.rfind("MEMCPY", 0) == 0;
      int64_t corr = -1;
      auto& fifo = pending_launches_[{t.device, t.node}];
      if (!fifo.empty()) {
        corr = fifo.front();
        fifo.pop_front();
      }
      const int64_t id = memcpy ? kKernelIds : Metadata(t) + kKernelIds;
      used_[t.device].insert(id);
      Add(t.device, lane, fmt::format("Stream #{}(Compute)", lane), id, start_ns, end_ns, step,
          corr);
      if (!memcpy) {
        Add(t.device, kTfOpsLine, "TensorFlow Ops", Metadata(t), start_ns, end_ns, step, -1);
      }
    }
    if (pending_[t.device] >= kBatch / 8) return FlushDevice(t.device);
    return OkStatus();
  }

  Status Finish() override {
    // Each worker step's marker spans the step's events (written last: known once they are).
    for (const auto& [d, steps] : marks_) {
      for (const auto& [step, span] : steps) {
        Add(d, kMarkerLine, "python3", kTrainId, span.first, span.second, step, -1);
        xplane::XEvent* e =
            lines_[d][kMarkerLine].mutable_events(lines_[d][kMarkerLine].events_size() - 1);
        for (const auto& [id, v] :
             {std::make_pair(kRootStat, int64_t{1}), std::make_pair(kStepNumStat, step)}) {
          xplane::XStat* st = e->add_stats();
          st->set_metadata_id(id);
          st->set_int64_value(v);
        }
      }
    }
    for (size_t d = 0; d < m_.devices.size(); ++d) TFDIAG_RETURN_IF_ERROR(FlushDevice(d));
    for (const OutFile& f : files_) TFDIAG_RETURN_IF_ERROR(WriteFile(f));
    return OkStatus();
  }

 private:
  struct OutFile {
    std::string path;
    std::vector<int> devices;
  };

  // One event on line `line_id` of device `d`'s plane; `group`, `corr` < 0: no such stat.
  void Add(int d, int line_id, const std::string& name, int64_t metadata, int64_t start_ns,
           int64_t end_ns, int64_t group, int64_t corr) {
    xplane::XLine& line = lines_[d][line_id];
    if (line.events_size() == 0) {
      line.set_id(line_id);
      line.set_name(name.empty() ? fmt::format("tf_Compute/{}", line_id) : name);
      line.set_timestamp_ns(start_ns);
    }
    xplane::XEvent* e = line.add_events();
    e->set_metadata_id(metadata);
    e->set_offset_ps((start_ns - line.timestamp_ns()) * 1000);
    e->set_duration_ps((end_ns - start_ns) * 1000);
    if (group >= 0) {
      xplane::XStat* s = e->add_stats();
      s->set_metadata_id(kGroupIdStat);
      s->set_int64_value(group);
    }
    if (corr >= 0) {
      xplane::XStat* s = e->add_stats();
      s->set_metadata_id(kCorrelationStat);
      s->set_int64_value(corr);
    }
    if (metadata > kKernelIds) used_[d].insert(metadata);
    ++pending_[d];
  }

  // Event metadata id of a template: its index + 1, named "<node>:<type>" (TF op naming).
  int64_t Metadata(const OpTemplate& t) {
    const int64_t id = static_cast<int64_t>(&t - m_.templates.data()) + 1;
    used_[t.device].insert(id);
    return id;
  }

  std::string PlaneName(int d) const {
    const Device& dev = m_.devices[d];
    if (per_task_ && dev.stream) {  // ".../device:GPU:0/stream:all" -> "/device:GPU:0"
      const size_t at = dev.name.find("/device:");
      return dev.name.substr(at, dev.name.rfind("/stream:") - at);
    }
    if (per_task_ && dev.name.size() > 13 &&
        dev.name.compare(dev.name.size() - 13, 13, "/device:CPU:0") == 0) {
      return "/host:CPU";
    }
    return dev.name;
  }

  Status FlushDevice(size_t d) {
    std::string buf, bytes;
    for (auto& [lane, line] : lines_[d]) {
      if (line.events_size() == 0) continue;
      bytes.clear();
      line.SerializeToString(&bytes);
      buf.push_back(0x1a);  // XPlane.lines = 3, length-delimited
      PutVarint(&buf, bytes.size());
      buf += bytes;
      line.Clear();
    }
    pending_[d] = 0;
    if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), spool_[d]) != buf.size()) {
      return IoError("cannot write the spool file (disk full?)");
    }
    return OkStatus();
  }

  Status WriteFile(const OutFile& f) {
    AtomicFile out;
    TFDIAG_RETURN_IF_ERROR(out.Open(f.path));
    for (int d : f.devices) {
      xplane::XPlane head;
      head.set_id(d);
      head.set_name(PlaneName(d));
      xplane::XPlane meta;
      for (int64_t id : used_[d]) {
        xplane::XEventMetadata& md = (*meta.mutable_event_metadata())[id];
        md.set_id(id);
        md.set_name(EventName(id));
      }
      for (const auto& [id, name] :
           {std::make_pair(kGroupIdStat, "group_id"),
            std::make_pair(kCorrelationStat, "correlation_id"), std::make_pair(kRootStat, "_r"),
            std::make_pair(kStepNumStat, "step_num")}) {
        xplane::XStatMetadata& sm = (*meta.mutable_stat_metadata())[id];
        sm.set_id(id);
        sm.set_name(name);
      }
      if (m_.cfg.rendezvous_keys) {
        xplane::XStatMetadata& sm = (*meta.mutable_stat_metadata())[kRendezvousStat];
        sm.set_id(kRendezvousStat);
        sm.set_name("rendezvous_key");
      }
      for (const auto& [id, key] : keys_[d]) {
        xplane::XStatMetadata& sm = (*meta.mutable_stat_metadata())[id];
        sm.set_id(id);
        sm.set_name(key);
      }
      std::string h, mt;
      head.SerializeToString(&h);
      meta.SerializeToString(&mt);
      std::FILE* sp = spool_[d];
      std::fflush(sp);
      const long spooled = std::ftell(sp);
      std::string top;
      top.push_back(0x0a);  // XSpace.planes = 1, length-delimited
      PutVarint(&top, h.size() + static_cast<uint64_t>(spooled) + mt.size());
      TFDIAG_RETURN_IF_ERROR(out.Write(top));
      TFDIAG_RETURN_IF_ERROR(out.Write(h));
      std::rewind(sp);
      std::vector<char> chunk(1 << 20);
      for (long left = spooled; left > 0;) {
        const size_t n = std::fread(chunk.data(), 1, chunk.size(), sp);
        if (n == 0) return IoError("cannot read back the spool file");
        TFDIAG_RETURN_IF_ERROR(out.Write(std::string_view(chunk.data(), n)));
        left -= static_cast<long>(n);
      }
      TFDIAG_RETURN_IF_ERROR(out.Write(mt));
      std::fclose(sp);
      spool_[d] = nullptr;
    }
    // ScenarioParams::device_tail_ns: a worker host's GPU tracer plane (device_tail.cc).
    for (int d : f.devices) {
      auto marks = marks_.find(d);
      if (m_.cfg.device_tail_ns <= 0 || !per_task_ || marks == marks_.end()) continue;
      const std::string plane =
          DeviceTailPlane(marks->second, m_.cfg.device_tail_ns, 100'000 + d, kGroupIdStat);
      std::string top;
      top.push_back(0x0a);  // XSpace.planes = 1, length-delimited
      PutVarint(&top, plane.size());
      TFDIAG_RETURN_IF_ERROR(out.Write(top + plane));
    }
    return out.Commit();
  }

  std::string EventName(int64_t id) const {
    if (id == kTfDataFunctionId) return "InstantiatedCapturedFunction::RunWithBorrowedArgs";
    if (id == kFunctionRunId) return "FunctionRun";
    if (id == kLaunchId) return "cudaLaunchKernel";
    if (id == kTrainId) return "train";
    if (id == kKernelIds) return "MemcpyH2D";
    if (id > kKernelIds) {  // a kernel: a CUDA-like name, no TF op in it
      const OpTemplate& t = m_.templates[static_cast<size_t>(id - kKernelIds - 1)];
      return fmt::format("void tensorflow::functor::{}Kernel<float>(float*, int)", t.type);
    }
    const OpTemplate& t = m_.templates[static_cast<size_t>(id - 1)];
    return t.node + ":" + t.type;
  }

  const Model& m_;
  std::vector<std::FILE*> spool_;
  std::vector<std::map<int, xplane::XLine>> lines_;  // per device, per lane: the current batch
  std::map<size_t, size_t> pending_;
  std::map<int, std::set<int64_t>> used_;  // per device: metadata ids used
  // Rendezvous keys: the stat metadata id of each RecvTensor template's key, and per device the
  // (id, key) pairs its plane's stat metadata names.
  std::map<const OpTemplate*, int64_t> key_ids_;
  std::map<int, std::vector<std::pair<int64_t, std::string>>> keys_;
  std::vector<OutFile> files_;
  bool per_task_ = false;
  std::vector<int64_t> steps_;  // per device: the step of its last event (tf.data groups)
  // (compute device, node) -> its stream device, for the ops that launch a GPU kernel; the
  // correlation ids launched and not yet met on the stream, per (stream device, node).
  std::map<std::pair<int, std::string>, int> launches_;
  std::map<std::pair<int, std::string>, std::deque<int64_t>> pending_launches_;
  int64_t correlation_ = 0;
  // tf2_steps: per worker device, per step, the span of its events (the step's marker).
  std::map<int, std::map<int64_t, std::pair<int64_t, int64_t>>> marks_;
};

}  // namespace

StatusOr<std::unique_ptr<ProtoSink>> OpenProtoSink(const Model& m, const std::string& path) {
  if (path == "-") return UsageError("the protobuf formats need a file or directory, not stdout");
  if (m.cfg.format == TraceFormat::kRunMetadata) {
    auto sink = std::make_unique<RunMetadataSink>(m);
    TFDIAG_RETURN_IF_ERROR(sink->Open(path));
    return std::unique_ptr<ProtoSink>(std::move(sink));
  }
  auto sink = std::make_unique<XSpaceSink>(m);
  TFDIAG_RETURN_IF_ERROR(sink->Open(path));
  return std::unique_ptr<ProtoSink>(std::move(sink));
}

}  // namespace tfdiag::sim::internal
