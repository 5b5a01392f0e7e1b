#include "collectors/timeline/gzip_import.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
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
  char* data() { return p_.get(); }
  size_t size() const { return size_; }
  // Makes room for `n` bytes in all, keeping the first size() (the new ones are left as they are).
  void Reserve(size_t n) {
    if (n <= cap_) return;
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

struct Segment {
  Bytes bytes;  // inflated JSON; back to the pool once parsed
  TimelineChunk chunk;
  bool last = false;
  bool parsed = false;  // guarded by Pipeline::mu
};

void Parse(Segment* s, bool fast_path) {
  s->chunk.data = s->bytes.data();
  s->chunk.size = s->bytes.size();
  ParseTimelineChunk(&s->chunk, s->last, fast_path, nullptr);
}

// The queue of segments to parse, shared by the inflating thread and the workers.
class Pipeline {
 public:
  explicit Pipeline(bool fast_path) : fast_path_(fast_path) {}

  void Push(Segment* s) {
    std::lock_guard<std::mutex> lock(mu_);
    todo_.push_back(s);
    cv_.notify_one();
  }
  size_t waiting() {
    std::lock_guard<std::mutex> lock(mu_);
    return todo_.size();
  }
  // Parses one waiting segment on this thread; false if none waits.
  bool ParseOne() {
    Segment* s = Pop(false);
    if (s == nullptr) return false;
    Run(s);
    return true;
  }
  // A worker: parses segments until Close().
  void Work() {
    while (Segment* s = Pop(true)) Run(s);
  }
  // Blocks until `s` is parsed.
  void Wait(Segment* s) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_done_.wait(lock, [&] { return s->parsed; });
  }
  // A buffer for the next segment's bytes (empty, with the capacity of an earlier one if any).
  Bytes TakeBuffer() {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return {};
    Bytes b = std::move(free_.back());
    free_.pop_back();
    return b;
  }
  bool parsed(Segment* s) {
    std::lock_guard<std::mutex> lock(mu_);
    return s->parsed;
  }
  // Workers stop once the queue is empty; segments still waiting are dropped.
  void Close(bool drop) {
    std::lock_guard<std::mutex> lock(mu_);
    if (drop) todo_.clear();
    closed_ = true;
    cv_.notify_all();
  }

 private:
  Segment* Pop(bool wait) {
    std::unique_lock<std::mutex> lock(mu_);
    if (wait) cv_.wait(lock, [&] { return closed_ || !todo_.empty(); });
    if (todo_.empty()) return nullptr;
    Segment* s = todo_.front();
    todo_.pop_front();
    return s;
  }
  void Run(Segment* s) {
    Parse(s, fast_path_);
    std::lock_guard<std::mutex> lock(mu_);
    s->parsed = true;
    // The bytes go back to the pool: fresh pages for every segment would cost a page fault per
    // 4 KiB inflated.
    s->bytes.Resize(0);
    free_.push_back(std::move(s->bytes));
    cv_done_.notify_all();
  }

  const bool fast_path_;
  std::mutex mu_;
  std::condition_variable cv_, cv_done_;
  std::deque<Segment*> todo_;
  std::vector<Bytes> free_;
  bool closed_ = false;
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
    if (!InflateMore(z, &s->bytes, before < target ? target - before : target / 4)) return false;
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

}  // namespace

bool ReadGzipParallel(const std::string& path, int threads, CaptureBuilder* builder,
                      const TimelineReadOptions& options) {
  IgzipReader z;
  if (!z.Open(path)) return false;
  const size_t target = options.chunk_bytes > 0 ? options.chunk_bytes : kDefaultGzipChunkBytes;
  const CaptureBuilder::Checkpoint cp = builder->MakeCheckpoint();

  Pipeline pipe(options.fast_path);
  std::vector<std::thread> workers;
  for (int k = 1; k < threads; ++k) workers.emplace_back([&pipe] { pipe.Work(); });
  std::deque<std::unique_ptr<Segment>> inflight;  // pushed, not yet merged, in file order
  TraceHandler merged(builder);
  merged.MarkSawEvents();
  FileStats fs;
  fs.path = path;
  fs.gzip = true;
  fs.bytes = z.file_size();
  fs.fast_path = true;
  std::string head, tail;
  bool ok = true;
  int merged_chunks = 0;
  // Merges the parsed segments at the front, in order; with `all`, waits for every one.
  auto merge_ready = [&](bool all) {
    while (ok && !inflight.empty()) {
      Segment* s = inflight.front().get();
      if (all) {
        while (pipe.ParseOne()) {
        }
        pipe.Wait(s);
      } else if (!pipe.parsed(s)) {
        return;
      }
      if (!s->chunk.ok || (merged_chunks == 0 && !s->chunk.handler->saw_events())) {
        ok = false;
        return;
      }
      fs.fast_path = fs.fast_path && s->chunk.fast;
      merged.MergeChunk(std::move(*s->chunk.handler), std::move(s->chunk.builder));
      ++merged_chunks;
      inflight.pop_front();
    }
  };

  std::vector<char> carry;
  for (bool last = false; ok && !last;) {
    auto s = std::make_unique<Segment>();
    s->bytes = pipe.TakeBuffer();
    if (!NextSegment(&z, target, &carry, s.get())) {
      ok = false;
      break;
    }
    if (head.empty()) {  // the first segment
      const char first = FirstNonBlank(s->bytes.data(), s->bytes.size());
      if (first != '{' && first != '[') {
        ok = false;
        break;
      }
      head = ChunkHead(first);
      tail = ChunkTail(first);
    } else {
      s->chunk.head = head;
    }
    last = s->last;
    if (!last) s->chunk.tail = tail;
    pipe.Push(s.get());
    inflight.push_back(std::move(s));
    if (options.progress) options.progress(z.compressed_read(), z.file_size());
    // Help parse when enough segments wait (this also bounds the memory held).
    while (pipe.waiting() >= static_cast<size_t>(threads)) pipe.ParseOne();
    merge_ready(false);
  }
  if (ok) merge_ready(true);
  pipe.Close(true);
  for (std::thread& t : workers) t.join();
  if (!ok) {
    builder->Rollback(cp);
    return false;
  }
  fs.chunks = merged_chunks;
  merged.Finish(&fs);
  builder->stats().files.push_back(std::move(fs));
  if (options.progress) options.progress(z.file_size(), z.file_size());
  return true;
}

}  // namespace tfdiag
