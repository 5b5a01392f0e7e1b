#include "collectors/runmetadata/run_metadata_reader.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "collectors/runmetadata/run_metadata.pb.h"
#include "collectors/runmetadata/text_blocks.h"
#include "collectors/xplane/proto_stream.h"
#include "collectors/xplane/tf2_events.h"
#include "core/checked_number.h"
#include "core/device_name.h"

namespace tfdiag {

bool ParseRecvTensorLabel(std::string_view label, int64_t* bytes, std::string_view* edge,
                          std::string_view* src, std::string_view* dst) {
  if (label.empty() || label[0] != '[') return false;
  const size_t close = label.find("] ");
  if (close == std::string_view::npos) return false;
  std::string_view size = label.substr(1, close - 1);
  std::string num;
  double scale = 1;
  if (size.size() > 2 && size.substr(size.size() - 2) == "MB") {
    num = std::string(size.substr(0, size.size() - 2));
    scale = 1048576.0;
  } else if (size.size() > 1 && size.back() == 'B') {
    num = std::string(size.substr(0, size.size() - 1));
  } else {
    return false;
  }
  if (num.empty() || num.find_first_not_of("0123456789.") != std::string::npos) return false;
  char* end = nullptr;
  const double v = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size()) return false;
  std::string_view rest = label.substr(close + 2);
  const size_t from = rest.find(" from ");
  if (from == std::string_view::npos) return false;
  const size_t to = rest.find(" to ", from + 6);
  if (to == std::string_view::npos) return false;
  // Bounded: a label of "[1e300MB]" is no size (llround of it is undefined).
  if (!RoundedIn(v * scale, 0, int64_t{1} << 62, bytes)) return false;
  *edge = rest.substr(0, from);
  *src = rest.substr(from + 6, to - from - 6);
  *dst = rest.substr(to + 4);
  return !edge->empty() && !src->empty() && !dst->empty();
}

namespace {

class StepStatsImport {
 public:
  StepStatsImport(const std::string& path, CaptureBuilder* b) : path_(path), b_(b) {}

  // Imports one DeviceStepStats; `where` names it in errors ("byte 812 (dev_stats[0])").
  // Errors: kInvalidInput for a time that overflows int64 nanoseconds.
  Status Device(const tensorflow::DeviceStepStats& ds, const std::string& where);
  FileStats fs;

 private:
  uint32_t DeviceIndex(std::string_view name);
  Status Node(const tensorflow::NodeExecStats& n, uint32_t device, bool gputrace,
              const std::string& where, int index);

  std::string path_;
  CaptureBuilder* b_;
  std::unordered_map<std::string, uint32_t> devices_;
  std::unordered_map<StrId, int64_t> tensor_bytes_;  // last size recorded per tensor
  std::vector<StrId> inputs_;
};

uint32_t StepStatsImport::DeviceIndex(std::string_view name) {
  auto [it, fresh] = devices_.emplace(std::string(name), kNoIndex);
  if (fresh) {
    StatusOr<DeviceName> dn = ParseDeviceName(name);
    if (dn.ok()) it->second = b_->AddDevice(*dn);
  }
  return it->second;
}

Status StepStatsImport::Device(const tensorflow::DeviceStepStats& ds, const std::string& where) {
  const uint32_t device = DeviceIndex(ds.device());
  fs.events += ds.node_stats_size();
  if (device == kNoIndex) {
    b_->stats().skipped["runmetadata node on an unparseable device"] += ds.node_stats_size();
    fs.skipped += ds.node_stats_size();
    return OkStatus();
  }
  // timeline.py _is_gputrace_device.
  const bool gputrace = ds.device().find("/stream:") != std::string::npos ||
                        ds.device().find("/memcpy") != std::string::npos;
  for (int i = 0; i < ds.node_stats_size(); ++i) {
    TFDIAG_RETURN_IF_ERROR(Node(ds.node_stats(i), device, gputrace, where, i));
  }
  return OkStatus();
}

// `where` names the device stats, `index` the node in it (formatted only for an error).
Status StepStatsImport::Node(const tensorflow::NodeExecStats& n, uint32_t device, bool gputrace,
                             const std::string& where, int index) {
  // Times in ns since the epoch up to 2^62 (year 2116), durations too, so that start + duration
  // and the sums the analyzers make stay within int64 (UBSan found micros * 1000 overflowing).
  constexpr int64_t kMaxNs = int64_t{1} << 62;
  const bool nanos = n.all_start_micros() == 0 && n.all_start_nanos() != 0;
  TimeNs start = n.all_start_nanos(), dur = n.all_end_rel_nanos(), end = 0;
  if (!nanos && (!CheckedMul(n.all_start_micros(), 1000, &start) ||
                 !CheckedMul(n.all_end_rel_micros(), 1000, &dur))) {
    start = -1;  // reported below
  }
  if (start < 0 || start > kMaxNs || dur > kMaxNs ||
      !CheckedAdd(start, std::max<TimeNs>(dur, 0), &end)) {
    return InvalidInput(
        "{}: {}.node_stats[{}] (node {}): all_start_{} {} / all_end_rel_{} {}: expected a time "
        "since the epoch in [0, 2^62] ns and a duration of at most 2^62 ns",
        fs.path, where, index, n.node_name(), nanos ? "nanos" : "micros",
        nanos ? n.all_start_nanos() : n.all_start_micros(), nanos ? "nanos" : "micros",
        nanos ? n.all_end_rel_nanos() : n.all_end_rel_micros());
  }
  if (dur < 0) {
    ++b_->stats().skipped["runmetadata node with a negative duration"];
    ++fs.skipped;
    return OkStatus();
  }
  const std::string& label = n.timeline_label();
  std::string_view node = n.node_name(), type = "unknown";
  inputs_.clear();
  if (gputrace) {
    // _parse_kernel_label: "<...>@@<node>:<type>#..." else the node_name "<node>:<type>".
    std::string_view nn = n.node_name();
    const size_t at = label.find("@@"), hash = label.find('#');
    if (at != std::string::npos && hash != std::string::npos && at + 2 < hash) {
      nn = std::string_view(label).substr(at + 2, hash - at - 2);
    }
    const size_t colon = nn.find(':');
    node = nn.substr(0, colon);
    if (colon != std::string_view::npos) {
      std::string_view rest = nn.substr(colon + 1);
      type = rest.substr(0, rest.find(':'));
    }
  } else if (n.node_name() == "RecvTensor") {
    type = "RecvTensor";
    int64_t bytes = 0;
    std::string_view edge, src, dst;
    if (ParseRecvTensorLabel(label, &bytes, &edge, &src, &dst)) {
      const uint32_t sd = DeviceIndex(src), dd = DeviceIndex(dst);
      if (sd != kNoIndex && dd != kNoIndex) {
        const StrId tensor = b_->Intern(ProducerOfEdge(edge));
        b_->AddFlow(FlowRow{start, start + dur, sd, dd, tensor});
        auto [it, fresh] = tensor_bytes_.emplace(tensor, -1);
        if (it->second != bytes) {
          it->second = bytes;
          b_->AddTensor(TensorRow{tensor, sd, bytes});
        }
      } else {
        ++b_->stats().skipped["RecvTensor label with an unparseable device"];
      }
    } else if (!label.empty()) {
      ++b_->stats().skipped["RecvTensor label not '[<N>B] <edge> from <src> to <dst>'"];
    }
  } else {
    // _parse_op_label: "(.*) = (.*)\((.*)\)", greedy as Python's re.
    const size_t eq = label.rfind(" = ");
    const size_t open = eq == std::string::npos ? eq : label.find('(', eq + 3);
    if (eq != std::string::npos && open != std::string::npos && label.back() == ')') {
      std::string_view l = label;
      type = l.substr(eq + 3, open - eq - 3);
      std::string_view args = l.substr(open + 1, l.size() - open - 2);
      while (!args.empty()) {
        const size_t comma = args.find(", ");
        inputs_.push_back(b_->Intern(args.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        args = args.substr(comma + 2);
      }
    } else {
      ++b_->stats().ignored["runmetadata timeline_label not '<node> = <Type>(<inputs>)'"];
    }
  }
  b_->AddOp(start, dur, device, static_cast<uint16_t>(n.thread_id() & 0xffff), b_->Intern(node),
            b_->Intern(type), inputs_.data(), inputs_.size());
  ++fs.ops;
  // The sizes of its outputs, named as timeline.py's show_memory names them ("<node>" for slot 0,
  // "<node>:<slot>"): a tensor once per size it has.
  if (!gputrace) {
    for (const tensorflow::NodeOutput& o : n.output()) {
      const int64_t bytes = o.tensor_description().allocation_description().requested_bytes();
      if (bytes <= 0 || o.slot() < 0) continue;
      const StrId tensor =
          b_->Intern(o.slot() == 0 ? std::string(node) : fmt::format("{}:{}", node, o.slot()));
      auto [it, fresh] = tensor_bytes_.emplace(tensor, -1);
      if (it->second != bytes) {
        it->second = bytes;
        b_->AddTensor(TensorRow{tensor, device, bytes});
      }
    }
  }
  return OkStatus();
}

// Collects libprotobuf's text-format errors: the first one's line, column (0-based) and message.
class TextErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (!seen) {
      seen = true;
      this->line = line;
      this->column = column;
      this->message = message;
    }
  }
  bool seen = false;
  int line = 0, column = 0;
  std::string message;
};

// A text RunMetadata / StepStats, one dev_stats block at a time (text_blocks.h) parsed by
// libprotobuf's TextFormat into a DeviceStepStats: memory follows the largest device block.
Status ReadText(const std::string& path, ProfileFormat format, StepStatsImport* imp) {
  const bool run_metadata = format == ProfileFormat::kRunMetadataText;
  const std::string what = run_metadata ? "RunMetadata" : "StepStats";
  google::protobuf::TextFormat::Parser parser;
  parser.AllowUnknownField(true);
  // The scanner already refuses deeper blocks; the parser's own limit (unset, INT_MAX, by
  // default: text_format.h SetRecursionLimit) is the second guard.
  parser.SetRecursionLimit(static_cast<int>(kMaxTextDepth));
  tensorflow::DeviceStepStats ds;
  int index = 0;
  auto on_block = [&](std::string_view body, int line) -> Status {
    TextErrors errors;
    parser.RecordErrorsTo(&errors);
    google::protobuf::io::ArrayInputStream in(body.data(), static_cast<int>(body.size()));
    ds.Clear();
    if (!parser.Parse(&in, &ds)) {
      // The body starts just after the block's '{' on `line`.
      return InvalidInput(
          "{}: line {}{}: {} (dev_stats[{}], expected a DeviceStepStats of a {} "
          "in protobuf text format)",
          path, line + errors.line, errors.seen ? fmt::format(" column {}", errors.column + 1) : "",
          errors.seen ? errors.message : "parse error", index, what);
    }
    return imp->Device(ds, fmt::format("line {} (dev_stats[{}])", line, index++));
  };
  return ScanTextBlocks(path,
                        run_metadata ? std::vector<std::string>{"step_stats", "dev_stats"}
                                     : std::vector<std::string>{"dev_stats"},
                        what, on_block, &imp->fs.bytes);
}

// Walks StepStats fields in [.., end): dev_stats one at a time.
Status ReadStepStats(ProtoFieldStream& in, int64_t end, StepStatsImport* imp) {
  tensorflow::DeviceStepStats ds;
  ProtoFieldStream::Field f;
  int index = 0;
  while (true) {
    StatusOr<bool> more = in.Next(end, &f);
    if (!more.ok()) return more.status();
    if (!*more) return OkStatus();
    if (f.number != 1 || f.wire_type != 2) {
      return in.Error(f.offset, fmt::format("expected StepStats.dev_stats (field 1, a message), "
                                            "got field {} of wire type {}",
                                            f.number, f.wire_type));
    }
    TFDIAG_RETURN_IF_ERROR(
        in.Parse(f, &ds, fmt::format("StepStats.dev_stats[{}], a DeviceStepStats", index)));
    TFDIAG_RETURN_IF_ERROR(
        imp->Device(ds, fmt::format("byte {} (StepStats.dev_stats[{}])", f.offset, index++)));
  }
}

}  // namespace

Status ReadRunMetadata(const std::string& path, ProfileFormat format, CaptureBuilder* b) {
  StepStatsImport imp(path, b);
  imp.fs.path = path;
  imp.fs.format = ProfileFormatName(format);
  if (format == ProfileFormat::kRunMetadataText || format == ProfileFormat::kStepStatsText) {
    TFDIAG_RETURN_IF_ERROR(ReadText(path, format, &imp));
  } else {
    ProtoFieldStream in;
    TFDIAG_RETURN_IF_ERROR(in.Open(path));
    imp.fs.bytes = in.size();
    if (format == ProfileFormat::kStepStats) {
      TFDIAG_RETURN_IF_ERROR(ReadStepStats(in, in.size(), &imp));
    } else {
      ProtoFieldStream::Field f;
      while (true) {
        StatusOr<bool> more = in.Next(in.size(), &f);
        if (!more.ok()) return more.status();
        if (!*more) break;
        if (f.number == 1) {
          if (f.wire_type != 2) {
            return in.Error(f.offset, "expected RunMetadata.step_stats (field 1, a message)");
          }
          TFDIAG_RETURN_IF_ERROR(ReadStepStats(in, f.payload + f.length, &imp));
        } else {
          TFDIAG_RETURN_IF_ERROR(in.Skip(f));  // cost_graph, partition_graphs, ...
        }
      }
    }
  }
  if (imp.fs.events == 0) {
    return InvalidInput("{}: byte 0: expected a {} with node_stats, found none", path,
                        ProfileFormatName(format));
  }
  b->stats().files.push_back(imp.fs);
  return OkStatus();
}

}  // namespace tfdiag
