#include "collectors/timeline/parallel_import.h"

#include <fcntl.h>
#include <rapidjson/reader.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "collectors/timeline/fast_json.h"
#include "collectors/timeline/range_stream.h"
#include "collectors/timeline/trace_handler.h"

namespace tfdiag {

namespace {

constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                            rapidjson::kParseTrailingCommasFlag | rapidjson::kParseNanAndInfFlag;

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// First non-blank byte of the file ('{' or '['), or 0.
char FirstByte(int fd) {
  char buf[4096];
  ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  for (ssize_t i = 0; i < n; ++i) {
    if (!IsSpace(buf[i])) return buf[i];
  }
  return 0;
}

// Finds a "}" blank* "," blank* "{" at or after `from`, within 4 MiB. Sets *close to just after
// the '}' and *open to the '{'. Returns false if none.
bool FindCut(int fd, int64_t from, int64_t size, int64_t* close, int64_t* open) {
  constexpr int64_t kWindow = 4 << 20;
  std::vector<char> buf(static_cast<size_t>(std::min(kWindow, size - from)));
  ssize_t n = ::pread(fd, buf.data(), buf.size(), from);
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] != '}') continue;
    ssize_t j = i + 1;
    while (j < n && IsSpace(buf[j])) ++j;
    if (j >= n || buf[j] != ',') continue;
    ++j;
    while (j < n && IsSpace(buf[j])) ++j;
    if (j >= n || buf[j] != '{') continue;
    *close = from + i + 1;
    *open = from + j;
    return true;
  }
  return false;
}

struct Chunk {
  int64_t begin = 0, end = 0;  // file bytes [begin, end)
  std::string head, tail;
  CaptureBuilder builder;
  std::unique_ptr<TraceHandler> handler;
  bool ok = false;
  bool fast = false;  // parsed by the fast tokenizer
};

// A fresh handler on the chunk's builder, deferring what may pair with an earlier chunk.
void StartChunk(Chunk* c) {
  c->handler = std::make_unique<TraceHandler>(&c->builder);
  c->handler->set_deferred(true);
}

// Whether a parse of `c` stands. `parsed`: the whole chunk parsed; `open_bare`: it ended inside a
// bare root array that the handler stands between two events of. The last chunk may leave such
// an array open (Horovod), as the sequential reader allows; any other chunk must close its events
// array exactly at the synthetic tail's ']'.
bool ChunkStands(Chunk* c, bool last, bool parsed, bool open_bare) {
  if (last) {
    if (!parsed && open_bare) ++c->builder.stats().ignored["bare array without closing bracket"];
    return parsed || open_bare;
  }
  const int64_t tail_close = static_cast<int64_t>(c->head.size()) + (c->end - c->begin) + 1;
  return parsed && c->handler->events_end() == tail_close;
}

// The fast tokenizer over one chunk; false (builder and handler to be replaced) if it gave up.
bool ParseChunkFast(int fd, Chunk* c, bool last, std::atomic<int64_t>* progress) {
  RangeStream in(fd, c->begin, c->end, c->head, c->tail, progress);
  StartChunk(c);
  FastJsonReader<RangeStream, TraceHandler> reader(&in, c->handler.get());
  c->handler->set_tell([&reader] { return reader.Tell(); });
  const bool ok = reader.Run();
  c->handler->set_tell(nullptr);
  if (!in.ok()) return false;
  return ChunkStands(c, last, ok,
                     !ok && reader.ended_in_root_array() && c->handler->BetweenBareArrayEvents());
}

void ParseChunk(int fd, Chunk* c, bool last, std::atomic<int64_t>* progress, bool fast) {
  if (fast) {
    std::atomic<int64_t> fast_progress{0};
    if (ParseChunkFast(fd, c, last, &fast_progress)) {
      progress->fetch_add(fast_progress.load());
      c->ok = true;
      c->fast = true;
      return;
    }
    c->builder = CaptureBuilder();
  }
  RangeStream in(fd, c->begin, c->end, c->head, c->tail, progress);
  StartChunk(c);
  c->handler->set_tell([&in] { return in.Tell(); });
  rapidjson::Reader reader;
  rapidjson::ParseResult r = reader.Parse<kFlags>(in, *c->handler);
  c->handler->set_tell(nullptr);
  if (!in.ok()) return;
  const bool at_end = in.AtEnd();
  const bool open_bare = r.IsError() && at_end && c->handler->BetweenBareArrayEvents() &&
                         (r.Code() == rapidjson::kParseErrorArrayMissCommaOrSquareBracket ||
                          r.Code() == rapidjson::kParseErrorValueInvalid);
  c->ok = ChunkStands(c, last, !r.IsError() && at_end, open_bare);
}

}  // namespace

bool ReadTimelineParallel(const std::string& path, int threads, CaptureBuilder* builder,
                          const TimelineReadOptions& options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return false;
  const int64_t size = st.st_size;
  const char first = FirstByte(fd);
  if (first != '{' && first != '[') return false;
  const std::string head = first == '{' ? "{\"traceEvents\":[" : "[";
  const std::string tail = first == '{' ? "]}" : "]";

  std::vector<std::unique_ptr<Chunk>> chunks;
  int64_t begin = 0;
  for (int k = 1; k < threads; ++k) {
    int64_t close_at = 0, open_at = 0;
    int64_t nominal = size * k / threads;
    if (nominal <= begin || !FindCut(fd, nominal, size, &close_at, &open_at)) break;
    auto c = std::make_unique<Chunk>();
    c->begin = begin;
    c->end = close_at;
    c->head = chunks.empty() ? "" : head;
    c->tail = tail;
    chunks.push_back(std::move(c));
    begin = open_at;
  }
  if (chunks.empty()) return false;
  auto last = std::make_unique<Chunk>();
  last->begin = begin;
  last->end = size;
  last->head = head;
  chunks.push_back(std::move(last));

  std::atomic<int64_t> progress{0};
  std::vector<std::thread> workers;
  for (size_t k = 1; k < chunks.size(); ++k) {
    workers.emplace_back(ParseChunk, fd, chunks[k].get(), k + 1 == chunks.size(), &progress,
                         options.fast_path);
  }
  {
    // Chunk 0 on this thread, reporting progress for all chunks.
    std::atomic<int64_t>* p = &progress;
    ParseChunk(fd, chunks[0].get(), false, p, options.fast_path);
    if (options.progress) options.progress(progress.load(), size);
  }
  for (std::thread& t : workers) t.join();
  for (const auto& c : chunks) {
    if (!c->ok) return false;
  }
  if (!chunks[0]->handler->saw_events()) return false;

  // Merge in file order into a handler on the caller's builder.
  TraceHandler merged(builder);
  merged.MarkSawEvents();
  for (auto& c : chunks) merged.MergeChunk(std::move(*c->handler), std::move(c->builder));
  FileStats fs;
  fs.path = path;
  fs.bytes = size;
  fs.chunks = static_cast<int>(chunks.size());
  fs.fast_path = true;
  for (const auto& c : chunks) fs.fast_path = fs.fast_path && c->fast;
  merged.Finish(&fs);
  builder->stats().files.push_back(std::move(fs));
  if (options.progress) options.progress(size, size);
  return true;
}

}  // namespace tfdiag
