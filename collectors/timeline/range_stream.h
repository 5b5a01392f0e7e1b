// RangeStream: a RapidJSON input stream over `head` + bytes [begin, end) of a plain file +
// `tail`, read with pread in 256 KiB pieces. The chunks of a file parsed in parallel are such
// ranges, with a synthetic head ({"traceEvents":[ or [) and tail (]} or ]) that make each chunk
// a complete document. Thread-safety: one reader per instance; several instances may share a fd.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace tfdiag {

class RangeStream {
 public:
  using Ch = char;
  // `fd` stays owned by the caller. `progress` (may be null) accumulates file bytes read.
  RangeStream(int fd, int64_t begin, int64_t end, std::string head, std::string tail,
              std::atomic<int64_t>* progress);

  char Peek() {
    if (cur_ == end_ && !Refill()) return '\0';
    return *cur_;
  }
  char Take() {
    if (cur_ == end_ && !Refill()) return '\0';
    return *cur_++;
  }
  size_t Tell() const { return static_cast<size_t>(consumed_ + (cur_ - begin_)); }
  // Bulk reads for FastJsonReader: copies up to `cap` bytes of the rest of the stream (head, range,
  // tail) into `dst`, the range with pread straight into `dst`; 0 at the end or after an error.
  // Not to be mixed with Peek/Take on one instance.
  size_t Read(char* dst, size_t cap);
  // True once everything (head, range, tail) has been consumed.
  bool AtEnd() { return cur_ == end_ && !Refill(); }
  // False after a read error.
  bool ok() const { return ok_; }
  char* PutBegin() { return nullptr; }
  void Put(char) {}
  void Flush() {}
  size_t PutEnd(char*) { return 0; }

 private:
  bool Refill();

  int fd_;
  int64_t pos_, stop_;
  std::string head_, tail_;
  int phase_ = 0;         // 0 head, 1 file, 2 tail, 3 done
  int64_t text_pos_ = 0;  // Read(): bytes of head_ or tail_ already copied
  std::vector<char> buf_;
  const char* begin_ = nullptr;
  const char* cur_ = nullptr;
  const char* end_ = nullptr;
  int64_t consumed_ = 0;
  bool ok_ = true;
  std::atomic<int64_t>* progress_;
};

}  // namespace tfdiag
