#include "collectors/timeline/gzip_import.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "collectors/timeline/chunk_parse.h"
#include "collectors/timeline/igzip_reader.h"

namespace tfdiag {

namespace {

// A segment with no event boundary in its last kCutSearch bytes grows, up to kMaxSegment.
constexpr size_t kCutSearch = 256 << 10;
constexpr size_t kCutNear = 8 << 10;
constexpr size_t kMaxSegment = 64 << 20;

// Inflated bytes; unlike std::vector<char>, growing it does not zero what is then overwritten.
class Bytes {
 public:
  Bytes() = default;
  Bytes(Bytes&& o) noexcept : p_(std::move(o.p_)), size_(o.size_), cap_(o.cap_) {
    o.size_ = o.cap_ = 0;
  }
  Bytes& operator=(Bytes&& o) noexcept {
    p_ = std::move(o.p_);
    size_ = o.size_;
    cap_ = o.cap_;
    o.size_ = o.cap_ = 0;
    return *this;
  }
  char* data() { return p_.get(); }
  size_t size() const { return size_; }
  // Makes room for `n` bytes in all, keeping the first size() (the new ones are left as they are).
  void Reserve(size_t n) {
    if (n <= cap_) return;
    n = std::max(n, cap_ + cap_ / 2);  // geometric: a segment grown many times copies O(n)
    std::unique_ptr<char[]> q(new char[n]);
    if (size_ > 0) std::memcpy(q.get(), p_.get(), size_);
    p_ = std::move(q);
    cap_ = n;
  }
  void Resize(size_t n) {
    Reserve(n);
    size_ = n;
  }
  void Assign(const char* p, size_t n) {
    Reserve(n);
    if (n > 0) std::memmove(p_.get(), p, n);
    size_ = n;
  }

 private:
  std::unique_ptr<char[]> p_;
  size_t size_ = 0, cap_ = 0;
};

// A chunk builder reused from segment to segment: its strings stay interned and its row storage
// allocated, so a segment costs neither fresh pages nor interning every name again; `sid` maps its
// string ids to the merged builder's (TraceHandler::MergeChunk).
struct BuilderSlot {
  CaptureBuilder builder;
  std::vector<StrId> sid;
};

struct Segment {
  Bytes bytes;       // inflated JSON
  size_t index = 0;  // in file order
  bool last = false;
  BuilderSlot* slot = nullptr;
  TimelineChunk chunk;
};

// Inflates up to `want` more bytes onto the end of `bytes`; false on an inflate failure.
bool InflateMore(IgzipReader* z, Bytes* bytes, size_t want) {
  const size_t had = bytes->size();
  bytes->Resize(had + want);
  size_t got = 0;
  while (got < want) {
    const size_t n = z->Read(bytes->data() + had + got, want - got);
    if (n == 0) break;
    got += n;
  }
  bytes->Resize(had + got);
  return !z->failed();
}

// Reads the next segment into `s` (starting with `carry`, the bytes after the previous cut) and
// cuts it at an event boundary near its end, leaving the rest in `carry`. False on failure.
bool NextSegment(IgzipReader* z, size_t target, std::vector<char>* carry, Segment* s) {
  s->bytes.Reserve(target + kCutSearch);
  s->bytes.Assign(carry->data(), carry->size());
  carry->clear();
  size_t searched = 0;  // bytes already known to hold no cut after the search start
  while (true) {
    const size_t before = s->bytes.size();
    const size_t more = before < target ? target - before : std::max<size_t>(target / 4, 4096);
    if (!InflateMore(z, &s->bytes, more)) return false;
    if (z->done() && s->bytes.size() == before) {
      s->last = true;
      return true;
    }
    const size_t size = s->bytes.size();
    size_t close = 0, open = 0;
    // Near the end first, so that few bytes carry over to the next segment.
    const size_t near = std::max(size > kCutNear ? size - kCutNear : 0, searched);
    const size_t from = std::max(size > kCutSearch ? size - kCutSearch : 0, searched);
    if (FindEventCut(s->bytes.data(), size, near, &close, &open) ||
        FindEventCut(s->bytes.data(), size, from, &close, &open)) {
      carry->assign(s->bytes.data() + open, s->bytes.data() + size);
      s->bytes.Resize(close);
      return true;
    }
    if (z->done()) {
      s->last = true;
      return true;
    }
    if (size >= kMaxSegment) return false;
    searched = size > 64 ? size - 64 : 0;  // a cut may straddle the old end
  }
}

// What the threads share. Each thread in turn takes the inflater, inflates the next segment into
// its own buffer and parses it at once, while the bytes are still in its core's cache; the
// parsed segments are merged in file order by whichever thread completes the next one.
class GzipImport {
 public:
  GzipImport(const std::string& path, int threads, CaptureBuilder* builder,
             const TimelineReadOptions& options)
      : threads_(threads),
        options_(options),
        target_(options.chunk_bytes > 0 ? options.chunk_bytes : kDefaultGzipChunkBytes),
        merged_(builder) {
    opened_ = z_.Open(path);
    merged_.MarkSawEvents();
    merged_.set_hosts(options.hosts, options.notes,
                      options.session_wall_ns);  // used by Finish, on the caller's thread
  }

  // Runs on every thread until the input is consumed or a failure is seen.
  void Work() {
    Bytes buffer;
    while (auto s = Next(std::move(buffer))) {
      s->chunk.data = s->bytes.data();
      s->chunk.size = s->bytes.size();
      ParseTimelineChunk(&s->chunk, s->last, options_.fast_path, nullptr);
      buffer = std::move(s->bytes);
      buffer.Resize(0);
      Done(std::move(s));
    }
  }
  bool opened() const { return opened_; }
  bool ok() {
    std::lock_guard<std::mutex> lock(merge_mu_);
    return !failed_ && merged_count_ == taken_count_ && at_end_;
  }
  // After every Work() returned and ok(): the FileStats of the import, merged state finished.
  void Finish(FileStats* fs) {
    fs->chunks = static_cast<int>(merged_count_);
    fs->fast_path = all_fast_;
    merged_.Finish(fs);
  }
  IgzipReader& reader() { return z_; }

 private:
  // The next segment, inflated into `buffer`; null at the end or after a failure.
  std::unique_ptr<Segment> Next(Bytes buffer) {
    {
      // Bounded memory: parsed segments wait for their turn to merge only so far ahead.
      std::unique_lock<std::mutex> lock(merge_mu_);
      merge_cv_.wait(lock, [&] {
        return failed_ || taken_count_ - merged_count_ < static_cast<size_t>(4 * threads_);
      });
      if (failed_) return nullptr;
    }
    auto s = std::make_unique<Segment>();
    s->bytes = std::move(buffer);
    {
      std::lock_guard<std::mutex> lock(inflate_mu_);
      if (Failed() || AtEnd()) return nullptr;
      if (!NextSegment(&z_, target_, &carry_, s.get())) return Fail(), nullptr;
      if (head_.empty()) {  // the first segment
        const char first = FirstNonBlank(s->bytes.data(), s->bytes.size());
        if (first != '{' && first != '[') return Fail(), nullptr;
        head_ = ChunkHead(first);
        tail_ = ChunkTail(first);
      } else {
        s->chunk.head = head_;
      }
      if (!s->last) s->chunk.tail = tail_;
      s->index = Take(s->last);
      if (options_.progress) options_.progress(z_.compressed_read(), z_.file_size());
    }
    std::lock_guard<std::mutex> lock(merge_mu_);
    if (free_slots_.empty()) {
      slots_.push_back(std::make_unique<BuilderSlot>());
      free_slots_.push_back(slots_.back().get());
    }
    s->slot = free_slots_.back();
    free_slots_.pop_back();
    s->chunk.builder = &s->slot->builder;
    return s;
  }

  // Files a parsed segment and merges every segment whose turn has come.
  void Done(std::unique_ptr<Segment> s) {
    std::lock_guard<std::mutex> lock(merge_mu_);
    const size_t index = s->index;
    ready_[index] = std::move(s);
    for (auto it = ready_.find(merged_count_); !failed_ && it != ready_.end();
         it = ready_.find(merged_count_)) {
      Segment* r = it->second.get();
      // A segment that numbers pids past the 16-bit device slots: the sequential reader is the
      // reference for which ops that skips (TraceHandler::AddSlotsOf).
      // A TF2 trace-viewer JSON is read whole by one handler (TraceHandler::tf2_xspace).
      if (!r->chunk.ok || (merged_count_ == 0 && !r->chunk.handler->saw_events()) ||
          (merged_count_ > 0 && merged_.tf2_xspace()) ||
          merged_.AddSlotsOf(*r->chunk.handler) > kMaxDevices) {
        failed_ = true;
        break;
      }
      all_fast_ = all_fast_ && r->chunk.fast;
      merged_.MergeChunk(std::move(*r->chunk.handler), &r->slot->builder, &r->slot->sid);
      free_slots_.push_back(r->slot);
      ready_.erase(it);
      ++merged_count_;
    }
    merge_cv_.notify_all();
  }

  // Under inflate_mu_: numbers the segment just inflated.
  size_t Take(bool last) {
    std::lock_guard<std::mutex> lock(merge_mu_);
    at_end_ = last;
    return taken_count_++;
  }
  bool AtEnd() {
    std::lock_guard<std::mutex> lock(merge_mu_);
    return at_end_;
  }
  // Under inflate_mu_.
  bool Failed() {
    std::lock_guard<std::mutex> lock(merge_mu_);
    return failed_;
  }
  void Fail() {
    std::lock_guard<std::mutex> lock(merge_mu_);
    failed_ = true;
    merge_cv_.notify_all();
  }

  const int threads_;
  const TimelineReadOptions& options_;
  const size_t target_;
  bool opened_ = false;

  std::mutex inflate_mu_;  // guards the inflater and what follows it
  IgzipReader z_;
  std::vector<char> carry_;  // inflated bytes after the last cut
  std::string head_, tail_;

  std::mutex merge_mu_;  // guards what follows; taken inside inflate_mu_, never around it
  std::condition_variable merge_cv_;
  // Declared before the segments, whose handlers point at the slots' builders.
  std::vector<std::unique_ptr<BuilderSlot>> slots_;
  std::vector<BuilderSlot*> free_slots_;
  TraceHandler merged_;
  bool at_end_ = false;     // the last segment was taken
  size_t taken_count_ = 0;  // segments taken (both written inside inflate_mu_ too)
  std::map<size_t, std::unique_ptr<Segment>> ready_;  // parsed, waiting for their turn
  size_t merged_count_ = 0;
  bool failed_ = false, all_fast_ = true;
};

}  // namespace

bool ReadGzipParallel(const std::string& path, int threads, CaptureBuilder* builder,
                      const TimelineReadOptions& options) {
  const CaptureBuilder::Checkpoint cp = builder->MakeCheckpoint();
  bool ok = false;
  FileStats fs;
  {
    GzipImport import(path, threads, builder, options);
    if (!import.opened()) return false;
    std::vector<std::thread> workers;
    for (int k = 1; k < threads; ++k) workers.emplace_back([&import] { import.Work(); });
    import.Work();
    for (std::thread& t : workers) t.join();
    ok = import.ok();
    if (ok) {
      fs.path = path;
      fs.gzip = true;
      fs.bytes = import.reader().file_size();
      import.Finish(&fs);
    }
  }
  if (!ok) {
    builder->Rollback(cp);
    return false;
  }
  const int64_t bytes = fs.bytes;
  builder->stats().files.push_back(std::move(fs));
  if (options.progress) options.progress(bytes, bytes);
  return true;
}

}  // namespace tfdiag
