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
#include <map>
#include <memory>
#include <set>

#include "collectors/runmetadata/run_metadata.pb.h"
#include "collectors/xplane/xplane.pb.h"
#include "core/atomic_file.h"
#include "samples/sim_internal.h"

namespace tfdiag::sim::internal {
namespace {

constexpr size_t kBatch = 1 << 16;   // node_stats / events buffered before a write
constexpr int64_t kGroupIdStat = 1;  // XStatMetadata id of "group_id" in every plane

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
  explicit XSpaceSink(const Model& m) : m_(m), spool_(m.devices.size()), lines_(m.devices.size()) {}
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
    }
    for (size_t d = 0; d < m_.devices.size(); ++d) {
      spool_[d] = std::tmpfile();
      if (spool_[d] == nullptr) return IoError("cannot create a temporary spool file");
    }
    return OkStatus();
  }

  Status Event(const OpTemplate& t, int64_t start_ns, int64_t end_ns, int lane,
               int64_t step) override {
    auto& lines = lines_[t.device];
    xplane::XLine& line = lines[lane];
    if (line.events_size() == 0) {
      line.set_id(lane);
      line.set_name(fmt::format("tf_Compute/{}", lane));
      line.set_timestamp_ns(start_ns);
    }
    xplane::XEvent* e = line.add_events();
    e->set_metadata_id(Metadata(t));
    e->set_offset_ps((start_ns - line.timestamp_ns()) * 1000);
    e->set_duration_ps((end_ns - start_ns) * 1000);
    xplane::XStat* group = e->add_stats();
    group->set_metadata_id(kGroupIdStat);
    group->set_int64_value(step);
    if (++pending_[t.device] >= kBatch / 8) return FlushDevice(t.device);
    return OkStatus();
  }

  Status Finish() override {
    for (size_t d = 0; d < m_.devices.size(); ++d) TFDIAG_RETURN_IF_ERROR(FlushDevice(d));
    for (const OutFile& f : files_) TFDIAG_RETURN_IF_ERROR(WriteFile(f));
    return OkStatus();
  }

 private:
  struct OutFile {
    std::string path;
    std::vector<int> devices;
  };

  // Event metadata id of a template: its index + 1, named "<node>:<type>" (TF op naming).
  int64_t Metadata(const OpTemplate& t) {
    const int64_t id = static_cast<int64_t>(&t - m_.templates.data()) + 1;
    used_[t.device].insert(id);
    return id;
  }

  std::string PlaneName(int d) const {
    const Device& dev = m_.devices[d];
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
        const OpTemplate& t = m_.templates[static_cast<size_t>(id - 1)];
        xplane::XEventMetadata& md = (*meta.mutable_event_metadata())[id];
        md.set_id(id);
        md.set_name(t.node + ":" + t.type);
      }
      xplane::XStatMetadata& gs = (*meta.mutable_stat_metadata())[kGroupIdStat];
      gs.set_id(kGroupIdStat);
      gs.set_name("group_id");
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
    return out.Commit();
  }

  const Model& m_;
  std::vector<std::FILE*> spool_;
  std::vector<std::map<int, xplane::XLine>> lines_;  // per device, per lane: the current batch
  std::map<size_t, size_t> pending_;
  std::map<int, std::set<int64_t>> used_;  // per device: metadata ids used
  std::vector<OutFile> files_;
  bool per_task_ = false;
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
