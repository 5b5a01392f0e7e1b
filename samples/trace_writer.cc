// Text side of the simulator: op templates rendered for TF1/TF2, JSON escaping, the streaming
// pretty printer and the buffered (optionally gzip) output sink.
#include <fmt/format.h>
#include <zlib.h>

#include <map>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "samples/sim_internal.h"

namespace tfdiag::sim::internal {

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    unsigned char u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20) {
          out += fmt::format("\\u{:04x}", u);
        } else {
          out += ch;
        }
    }
  }
  return out;
}

namespace {

// The bytes of a tensor of shape `t` (its requested_bytes).
int64_t TensorBytes(const TensorShape& t) {
  int64_t bytes = t.elem_bytes;
  for (int64_t d : t.dims) bytes *= d;
  return bytes;
}

// The protobuf text of a TensorDescription, as timeline.py puts it in snapshots (quotes dropped).
std::string TensorDescription(const TensorShape& t, const std::string& allocator) {
  const int64_t bytes = TensorBytes(t);
  std::string s = fmt::format("dtype: {}\nshape {{\n", t.dtype);
  for (int64_t d : t.dims) s += fmt::format("  dim {{\n    size: {}\n  }}\n", d);
  int64_t allocated = (bytes + 255) / 256 * 256;
  s += fmt::format(
      "}}\nallocation_description {{\n  requested_bytes: {}\n  allocated_bytes: {}\n"
      "  allocator_name: {}\n}}\n",
      bytes, allocated, allocator);
  return s;
}

}  // namespace

OpTemplate RenderOp(const Config& c, const Device& d, int device, std::string_view type,
                    std::string_view node, const std::vector<std::string>& inputs,
                    const std::vector<TensorShape>& outputs, bool gputrace) {
  OpTemplate t;
  t.device = device;
  t.node = std::string(node);
  t.type = std::string(type);
  t.inputs = inputs;
  t.gputrace = gputrace;
  std::string ty = JsonEscape(type), nd = JsonEscape(node);
  t.flow_name = nd;
  if (c.format == TraceFormat::kTf1) {
    // timeline.py _create_event key order: ph, cat, name, pid, tid, ts, then dur, args.
    t.head = fmt::format(R"({{"ph":"X","cat":"Op","name":"{}","pid":{},"tid":)", ty, d.pid);
    t.mid = R"(,"dur":)";
    t.tail = fmt::format(R"(,"args":{{"name":"{}","op":"{}")", nd, ty);
    if (!gputrace) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        t.tail += fmt::format(R"(,"input{}":"{}")", i, JsonEscape(inputs[i]));
      }
    }
    t.tail += "}}";
  } else {
    // trace_events_to_json.cc: pid, tid, ts, name, ph, dur, args sorted by key, all strings.
    t.head = fmt::format(R"({{"pid":{},"tid":)", d.pid);
    t.mid = fmt::format(R"(,"name":"{}","ph":"X","dur":)", ty);
    std::map<std::string, std::string> args = {{"name", nd}, {"op", ty}};
    if (!gputrace) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        args[fmt::format("input{}", i)] = JsonEscape(inputs[i]);
      }
    }
    t.tail = R"(,"args":{)";
    bool first = true;
    for (const auto& [k, v] : args) {
      t.tail += fmt::format(R"({}"{}":"{}")", first ? "" : ",", k, v);
      first = false;
    }
    t.tail += "}}";
  }
  if (c.show_memory) {
    t.allocator = d.allocator;
    for (const TensorShape& o : outputs) t.output_bytes.push_back(TensorBytes(o));
    for (size_t k = 0; k < outputs.size(); ++k) {
      std::string tensor = k == 0 ? t.node : fmt::format("{}:{}", t.node, k);
      OpTemplate::Mem mem;
      mem.head = fmt::format(R"(,"cat":"Tensor","name":"{}","pid":{},"tid":0,"ts":)",
                             JsonEscape(tensor), d.tensors_pid);
      std::string desc = JsonEscape(TensorDescription(outputs[k], d.allocator));
      if (c.format == TraceFormat::kTf1) {
        mem.snapshot = fmt::format(R"({{"snapshot":{{"tensor_description":"{}"}}}})", desc);
      } else {
        mem.snapshot = fmt::format(R"({{"tensor_description":"{}"}})", desc);
      }
      t.mem.push_back(std::move(mem));
    }
  }
  return t;
}

void PrettyPrinter::Feed(std::string_view in, std::string& out) {
  static const std::string kSpaces(512, ' ');
  auto newline = [&out](int depth) {
    out += '\n';
    size_t n = static_cast<size_t>(depth) * 4;
    while (n > 0) {
      size_t k = std::min(n, kSpaces.size());
      out.append(kSpaces, 0, k);
      n -= k;
    }
  };
  out.reserve(out.size() + in.size() + in.size() / 2);
  for (size_t i = 0; i < in.size(); ++i) {
    char ch = in[i];
    if (in_string_) {
      // Copy the run of plain string characters in one go.
      size_t j = i;
      while (j < in.size() && in[j] != '"' && in[j] != '\\' && !escape_) ++j;
      if (j > i) {
        out.append(in.data() + i, j - i);
        i = j - 1;
        continue;
      }
      out += ch;
      if (escape_) {
        escape_ = false;
      } else if (ch == '\\') {
        escape_ = true;
      } else if (ch == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (pending_open_) {
      pending_open_ = false;
      if (ch == '}' || ch == ']') {  // empty container stays "{}" / "[]"
        --depth_;
        out += ch;
        continue;
      }
      newline(depth_);
    }
    switch (ch) {
      case '"':
        in_string_ = true;
        out += ch;
        break;
      case '{':
      case '[':
        out += ch;
        ++depth_;
        pending_open_ = true;
        break;
      case '}':
      case ']':
        --depth_;
        newline(depth_);
        out += ch;
        break;
      case ',':
        out += ',';
        newline(depth_);
        break;
      case ':':
        out += ": ";
        break;
      default:
        out += ch;
    }
  }
}

struct OutputSink::Impl {
  AtomicFile file;
  z_stream zs{};
  bool z_open = false;
  std::string zbuf;
  ~Impl() {
    if (z_open) deflateEnd(&zs);
  }
};

OutputSink::OutputSink() : impl_(std::make_unique<Impl>()) {}
OutputSink::~OutputSink() = default;

Status OutputSink::Open(const std::string& path, bool pretty, bool gzip) {
  pretty_ = pretty;
  gzip_ = gzip;
  buf_.reserve(kFlushBytes + (64 << 10));
  TFDIAG_RETURN_IF_ERROR(impl_->file.Open(path));
  if (gzip_) {
    // windowBits 15 + 16: gzip wrapper; mtime 0 in the header keeps output deterministic.
    if (deflateInit2(&impl_->zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
      return IoError("{}: cannot initialise zlib", path);
    }
    impl_->z_open = true;
    impl_->zbuf.resize(256 << 10);
  }
  return OkStatus();
}

Status OutputSink::Deflate(std::string_view data, bool finish) {
  z_stream& zs = impl_->zs;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int flush = finish ? Z_FINISH : Z_NO_FLUSH;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(impl_->zbuf.data());
    zs.avail_out = static_cast<uInt>(impl_->zbuf.size());
    int rc = deflate(&zs, flush);
    if (rc == Z_STREAM_ERROR) return IoError("zlib deflate failed");
    size_t produced = impl_->zbuf.size() - zs.avail_out;
    TFDIAG_RETURN_IF_ERROR(impl_->file.Write(std::string_view(impl_->zbuf.data(), produced)));
    if (finish ? rc == Z_STREAM_END : (zs.avail_in == 0 && zs.avail_out != 0)) break;
  }
  return OkStatus();
}

Status OutputSink::Flush(bool finish) {
  std::string_view data = buf_;
  if (pretty_) {
    pretty_buf_.clear();
    printer_.Feed(buf_, pretty_buf_);
    data = pretty_buf_;
  }
  Status st = gzip_ ? Deflate(data, finish) : impl_->file.Write(data);
  buf_.clear();
  return st;
}

Status OutputSink::Finish() {
  TFDIAG_RETURN_IF_ERROR(Flush(true));
  return impl_->file.Commit();
}

}  // namespace tfdiag::sim::internal
