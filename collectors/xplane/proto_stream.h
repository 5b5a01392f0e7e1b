// A file of protobuf wire format read field by field, so that a large repeated field
// (XSpace.planes, StepStats.dev_stats, Trace.trace_events) is parsed one element at a time and
// never held whole. Byte offsets are tracked for error messages. A fresh CodedInputStream is made
// per read, so files past 2 GB (CodedInputStream's own limit) are fine. The file is read through
// one window of at most 1 MiB (pread); Seek() back into the window reads nothing, so a second
// pass over a message costs O(its bytes) and reading is linear in the file, however many small
// messages it holds (before, every Seek re-read a fresh 1 MiB buffer: 100,000 empty XSpace planes
// in 1.3 MB took 4.5 minutes). Thread-safety: not thread-safe; one stream per file.
#pragma once

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/message.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace google::protobuf::io {
class CodedInputStream;
}

#include "core/status.h"

namespace tfdiag {

class ProtoFieldStream {
 public:
  ProtoFieldStream();
  ~ProtoFieldStream();
  ProtoFieldStream(const ProtoFieldStream&) = delete;
  ProtoFieldStream& operator=(const ProtoFieldStream&) = delete;

  // Opens `path`. Errors: kIo naming the file.
  Status Open(const std::string& path);

  // One field's header.
  struct Field {
    uint32_t number = 0;
    int wire_type = 0;    // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
    int64_t offset = 0;   // byte offset of the tag
    int64_t payload = 0;  // byte offset of the payload (after the length for wire type 2)
    int64_t length = 0;   // payload bytes (wire type 2)
  };
  // Reads the next field header before `end` (a byte offset: the file size, or the end of an
  // enclosing message). Returns false at `end`. Errors (kInvalidInput, "<file>: byte N: ..."):
  // a bad tag, a length running past `end`. After a length-delimited header, call one of
  // Parse, Skip or descend by reading further headers with end = payload + length.
  StatusOr<bool> Next(int64_t end, Field* f);
  // Parses the payload of `f` (wire type 2) into `m`. Errors: "byte N: expected <what>".
  Status Parse(const Field& f, google::protobuf::Message* m, const std::string& what);
  // Reads the payload of `f` (wire type 2) with `fn`, given a CodedInputStream limited to it
  // (its CurrentPosition() counts from f.payload, for error offsets). After `fn`, the payload
  // must be used up ("byte N: expected the end of <what>" otherwise). For messages read by
  // hand (xline_stream.h).
  Status ReadMessage(const Field& f,
                     const std::function<Status(google::protobuf::io::CodedInputStream*)>& fn,
                     const std::string& what);
  // Skips the field's payload (any wire type).
  Status Skip(const Field& f);
  // Reads the payload of `f` (wire type 2) as bytes.
  Status ReadBytes(const Field& f, std::string* out);
  // Continues reading at byte `pos` (a field's offset seen before: a second pass over a message).
  // Free when `pos` is in the current window; else the next read refills it from `pos`.
  // Errors: kIo (pos outside the file).
  Status Seek(int64_t pos);

  int64_t position() const { return pos_; }
  int64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // "<file>: byte <at>: <what>" as kInvalidInput.
  Status Error(int64_t at, const std::string& what) const;

 private:
  std::string path_;
  int64_t size_ = 0, pos_ = 0;
  int fd_ = -1;
  class Window;  // the file's read window, a ZeroCopyInputStream
  std::unique_ptr<Window> in_;
};

}  // namespace tfdiag
