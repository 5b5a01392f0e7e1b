// IgzipReader: inflates a gzip file with ISA-L's igzip (libisal), about 3x faster than zlib. It
// reads concatenated members in sequence, as InputStream does, and verifies each member's CRC.
// It is the fast path of the parallel gzip import: anything it does not accept (a corrupt or
// truncated stream, bytes after a member that are not another gzip member) makes Read() return 0
// with failed() set, and the caller reads the file again with InputStream (zlib), which is the
// reference for what the file holds and for the error message.
// Thread-safety: none; one reader per instance.
#pragma once

#include <isa-l/igzip_lib.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace tfdiag {

class IgzipReader {
 public:
  IgzipReader();
  ~IgzipReader();
  IgzipReader(const IgzipReader&) = delete;
  IgzipReader& operator=(const IgzipReader&) = delete;

  // Opens `path`; false if it cannot be opened.
  bool Open(const std::string& path);
  // Inflates up to `cap` bytes into `out`; returns the count, 0 at the end or on failure.
  size_t Read(char* out, size_t cap);
  // The whole stream was inflated and every member's CRC matched.
  bool done() const { return done_; }
  bool failed() const { return failed_; }
  // Compressed bytes read from the file so far, and the file's size (bytes).
  int64_t compressed_read() const { return read_; }
  int64_t file_size() const { return file_size_; }

 private:
  // Reads the next compressed piece into in_; false at the end of the file or on a read error.
  bool Refill();
  // After a member's end: starts the next member, or sets done_ at the end of the file.
  void NextMember();

  std::FILE* file_ = nullptr;
  std::unique_ptr<inflate_state> st_;
  std::vector<uint8_t> in_;
  int64_t read_ = 0, file_size_ = 0;
  int64_t inflated_ = 0;  // bytes produced, against kMaxInflateRatio (core/input_limits.h)
  bool in_eof_ = false, done_ = false, failed_ = false;
};

}  // namespace tfdiag
