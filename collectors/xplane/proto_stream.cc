#include "collectors/xplane/proto_stream.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tfdiag {

using google::protobuf::io::CodedInputStream;

// A ZeroCopyInputStream over a file through one buffer of `window` bytes read with pread():
// [start_, start_ + len_) holds the file's bytes there, cur_ the next one to hand out. BackUp()
// and Seek() move cur_ inside the window without reading.
class ProtoFieldStream::Window : public google::protobuf::io::ZeroCopyInputStream {
 public:
  Window(int fd, int64_t file_size, size_t window)
      : fd_(fd), size_(file_size), buf_(new uint8_t[window]), cap_(window) {}
  bool Next(const void** data, int* size) override {
    if (cur_ == len_ && !Fill(start_ + static_cast<int64_t>(len_))) return false;
    *data = buf_.get() + cur_;
    *size = static_cast<int>(len_ - cur_);
    cur_ = len_;
    return true;
  }
  void BackUp(int count) override { cur_ -= static_cast<size_t>(count); }
  bool Skip(int count) override {
    const int64_t to = position() + count;
    if (to > size_) {
      Seek(size_);
      return false;
    }
    Seek(to);
    return true;
  }
  int64_t ByteCount() const override { return position(); }
  int64_t position() const { return start_ + static_cast<int64_t>(cur_); }
  // Moves to byte `pos`: inside the window for free, else the next Next() reads from there.
  void Seek(int64_t pos) {
    if (pos >= start_ && pos <= start_ + static_cast<int64_t>(len_)) {
      cur_ = static_cast<size_t>(pos - start_);
    } else {
      start_ = pos;
      len_ = cur_ = 0;
    }
  }
  int GetErrno() const { return errno_; }

 private:
  bool Fill(int64_t at) {
    ssize_t n;
    do {
      n = ::pread(fd_, buf_.get(), cap_, at);
    } while (n < 0 && errno == EINTR);
    if (n < 0) errno_ = errno;
    start_ = at;
    len_ = n > 0 ? static_cast<size_t>(n) : 0;
    cur_ = 0;
    return n > 0;
  }
  int fd_;
  int64_t size_;
  std::unique_ptr<uint8_t[]> buf_;
  size_t cap_;
  int64_t start_ = 0;
  size_t len_ = 0, cur_ = 0;
  int errno_ = 0;
};

Status ProtoFieldStream::Open(const std::string& path) {
  // libprotobuf logs to stderr when it rejects data (e.g. a proto3 string that is not UTF-8);
  // the reader reports every failure itself, as one line with the byte offset, so its log lines
  // are dropped (process-wide; tfdiag uses libprotobuf for nothing else).
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return IoError("{}: not a regular file", path);
  }
  size_ = st.st_size;
  fd_ = fd;
  // 1 MiB, or the whole file when smaller (at least 4 KiB).
  const size_t window = static_cast<size_t>(std::clamp<int64_t>(size_, 4096, 1 << 20));
  in_ = std::make_unique<Window>(fd, size_, window);
  pos_ = 0;
  return OkStatus();
}

ProtoFieldStream::ProtoFieldStream() = default;

ProtoFieldStream::~ProtoFieldStream() {
  in_.reset();
  if (fd_ >= 0) ::close(fd_);
}

Status ProtoFieldStream::Seek(int64_t pos) {
  if (pos < 0 || pos > size_) {
    return IoError("{}: cannot seek to byte {}: the file has {} bytes", path_, pos, size_);
  }
  in_->Seek(pos);
  pos_ = pos;
  return OkStatus();
}

Status ProtoFieldStream::ReadBytes(const Field& f, std::string* out) {
  CodedInputStream cis(in_.get());
  if (!cis.ReadString(out, static_cast<int>(f.length))) {
    return Error(f.payload, "expected " + std::to_string(f.length) + " bytes (file truncated)");
  }
  pos_ += cis.CurrentPosition();
  return OkStatus();
}

Status ProtoFieldStream::Error(int64_t at, const std::string& what) const {
  return InvalidInput("{}: byte {}: {}", path_, at, what);
}

StatusOr<bool> ProtoFieldStream::Next(int64_t end, Field* f) {
  if (pos_ >= end) return false;
  CodedInputStream cis(in_.get());
  f->offset = pos_;
  const uint32_t tag = cis.ReadTag();
  if (tag == 0) {
    if (in_->GetErrno() != 0)
      return IoError("{}: read error: {}", path_, std::strerror(in_->GetErrno()));
    return Error(pos_, "expected a protobuf field tag (file truncated or not a protobuf)");
  }
  f->number = tag >> 3;
  f->wire_type = static_cast<int>(tag & 7);
  f->length = 0;
  if (f->number == 0 || f->wire_type == 3 || f->wire_type == 4 || f->wire_type > 5) {
    return Error(pos_, "expected a protobuf field tag, got field " + std::to_string(f->number) +
                           " of wire type " + std::to_string(f->wire_type) + " (corrupt data)");
  }
  if (f->wire_type == 2) {
    uint32_t len = 0;
    if (!cis.ReadVarint32(&len)) return Error(pos_, "expected a field length (file truncated)");
    f->length = len;
  }
  pos_ += cis.CurrentPosition();
  f->payload = pos_;
  if (f->wire_type == 2 && f->payload + f->length > end) {
    return Error(f->offset, "field " + std::to_string(f->number) + " says " +
                                std::to_string(f->length) + " bytes but only " +
                                std::to_string(end - f->payload) +
                                (end == size_ ? " remain in the file (truncated)"
                                              : " remain in the enclosing message (corrupt)"));
  }
  return true;
}

Status ProtoFieldStream::Parse(const Field& f, google::protobuf::Message* m,
                               const std::string& what) {
  CodedInputStream cis(in_.get());
  cis.SetRecursionLimit(64);
  const auto limit = cis.PushLimit(static_cast<int>(f.length));
  m->Clear();
  const bool ok = m->MergePartialFromCodedStream(&cis) && cis.ConsumedEntireMessage();
  const int used = cis.CurrentPosition();
  cis.PopLimit(limit);
  if (!ok) {
    return Error(f.payload, "expected " + what + " (" + std::to_string(f.length) +
                                " bytes), could not parse it (corrupt data or another message "
                                "type)");
  }
  pos_ += used;
  if (used != f.length) return Error(f.payload + used, "expected the end of " + what);
  return OkStatus();
}

Status ProtoFieldStream::ReadMessage(const Field& f,
                                     const std::function<Status(CodedInputStream*)>& fn,
                                     const std::string& what) {
  CodedInputStream cis(in_.get());
  const auto limit = cis.PushLimit(static_cast<int>(f.length));
  TFDIAG_RETURN_IF_ERROR(fn(&cis));
  const int used = cis.CurrentPosition();
  if (cis.BytesUntilLimit() != 0) return Error(f.payload + used, "expected the end of " + what);
  cis.PopLimit(limit);
  pos_ += used;
  return OkStatus();
}

Status ProtoFieldStream::Skip(const Field& f) {
  CodedInputStream cis(in_.get());
  bool ok = true;
  switch (f.wire_type) {
    case 0: {
      uint64_t v;
      ok = cis.ReadVarint64(&v);
      break;
    }
    case 1:
      ok = cis.Skip(8);
      break;
    case 5:
      ok = cis.Skip(4);
      break;
    case 2:
      ok = cis.Skip(static_cast<int>(f.length));
      break;
  }
  if (!ok)
    return Error(f.payload,
                 "expected the value of field " + std::to_string(f.number) + " (file truncated)");
  pos_ += cis.CurrentPosition();
  return OkStatus();
}

}  // namespace tfdiag
