#include "collectors/timeline/parallel_import.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "collectors/timeline/chunk_parse.h"
#include "collectors/timeline/mapped_file.h"

namespace tfdiag {

namespace {

// A cut is searched for within this many bytes after a chunk's nominal start.
constexpr size_t kCutWindow = 4 << 20;

// Mapped pages behind the parser are released in steps of kEarlyRelease bytes, and of
// kLateRelease bytes in the last quarter of a chunk. A release of a mapping shared by running
// threads costs a TLB shootdown (an interrupt of the other parsing threads), so larger steps are
// faster; but a step's pages stay resident until it is released. The resident set peaks at the end
// of the parse, when a chunk's rows are all built: large steps early cost nothing at that peak,
// small ones late keep it down. Measured on this 2-core VM, 2 threads, medians of 9 interleaved
// runs: the 200 MB pretty file took 144.7 ms with 512 KiB steps throughout, 140.9 ms tapered,
// 140.1 ms with 2 MiB throughout. The 200 MB compact file's peak RSS (target 48,922 KiB), with the
// page cache holding it in 2 MiB folios: 49,000-51,100 KiB with 2 MiB throughout, 48,500-49,100
// with 512 KiB throughout, 47,600-48,100 tapered (with MappedFile's MADV_NOHUGEPAGE).
constexpr size_t kEarlyRelease = 2 << 20, kLateRelease = 256 << 10;

}  // namespace

void ParseMappedChunk(const MappedFile& map, TimelineChunk* c, bool last, bool fast_path,
                      std::atomic<int64_t>* progress, const std::function<void(int64_t)>& report) {
  const size_t offset = c->offset;
  size_t released = 0;  // chunk bytes before this are released
  ParseTimelineChunk(c, last, fast_path, [&](size_t begin, size_t end) {
    const size_t step = end < c->size / 4 * 3 ? kEarlyRelease : kLateRelease;
    if (end - released >= step || end == c->size) {
      map.Release(offset + released, offset + end);
      released = end;
    }
    const int64_t total =
        progress->fetch_add(static_cast<int64_t>(end - begin), std::memory_order_relaxed) +
        static_cast<int64_t>(end - begin);
    if (report) report(total);
  });
}

bool CutTimelineChunks(const MappedFile& map, int pieces, std::vector<TimelineChunk>* chunks) {
  const char* p = map.data();
  const size_t size = map.size();
  const char first = FirstNonBlank(p, std::min(size, size_t{4096}));
  if (first != '{' && first != '[') return false;
  chunks->clear();
  size_t begin = 0;
  for (int k = 1; k < pieces; ++k) {
    size_t close_at = 0, open_at = 0;
    const size_t nominal = size / pieces * k;
    if (nominal <= begin ||
        !FindEventCut(p, std::min(size, nominal + kCutWindow), nominal, &close_at, &open_at)) {
      break;
    }
    TimelineChunk& c = chunks->emplace_back();
    c.head = chunks->size() == 1 ? "" : ChunkHead(first);
    c.tail = ChunkTail(first);
    c.data = p + begin;
    c.offset = begin;
    c.size = close_at - begin;
    begin = open_at;
  }
  TimelineChunk& last = chunks->emplace_back();
  last.head = chunks->size() == 1 ? "" : ChunkHead(first);
  last.data = p + begin;
  last.offset = begin;
  last.size = size - begin;
  return true;
}

bool MergeTimelineChunks(const std::string& path, int64_t bytes, std::vector<TimelineChunk>* chunks,
                         int threads, CaptureBuilder* builder, HostMapper* hosts,
                         std::vector<std::string>* notes) {
  for (const TimelineChunk& c : *chunks) {
    if (!c.ok) return false;
  }
  if (chunks->empty() || !(*chunks)[0].handler->saw_events()) return false;
  // A TF2 trace-viewer JSON is read whole by one handler (its process names sit in the first
  // chunk only; TraceHandler::tf2_xspace).
  if (chunks->size() > 1 && (*chunks)[0].handler->tf2_xspace()) return false;
  // Merge in file order into a handler on the caller's builder. The file's pids are numbered
  // first, in that order (nothing is written to the builder yet): past kMaxDevices slots (16 bits,
  // OpRow::device), the sequential reader is the reference for which ops are skipped.
  TraceHandler merged(builder);
  merged.set_hosts(hosts, notes);
  size_t slots = 0;
  for (const TimelineChunk& c : *chunks) slots = merged.AddSlotsOf(*c.handler);
  if (slots > kMaxDevices) return false;
  merged.MarkSawEvents();
  FileStats fs;
  fs.path = path;
  fs.bytes = bytes;
  fs.chunks = static_cast<int>(chunks->size());
  fs.fast_path = true;
  for (TimelineChunk& c : *chunks) {
    fs.fast_path = fs.fast_path && c.fast;
    merged.MergeChunk(std::move(*c.handler), std::move(*c.builder), threads);
    c.handler.reset();
    c.owned.reset();
    c.builder = nullptr;
  }
  merged.Finish(&fs, threads);
  builder->stats().files.push_back(std::move(fs));
  return true;
}

bool ReadTimelineParallel(const std::string& path, int threads, CaptureBuilder* builder,
                          const TimelineReadOptions& options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  MappedFile map;
  const bool mapped = map.Map(fd, path);
  ::close(fd);
  if (!mapped) return false;
  const size_t size = map.size();
  // Chunks in file order.
  std::vector<TimelineChunk> chunks;
  if (!CutTimelineChunks(map, threads, &chunks) || chunks.size() < 2) return false;

  std::atomic<int64_t> progress{0};
  std::vector<std::thread> workers;
  for (size_t k = 1; k < chunks.size(); ++k) {
    workers.emplace_back(ParseMappedChunk, std::cref(map), &chunks[k], k + 1 == chunks.size(),
                         options.fast_path, &progress, std::function<void(int64_t)>());
  }
  // Chunk 0 on this thread, reporting progress for all chunks.
  std::function<void(int64_t)> report;
  if (options.progress) {
    report = [&](int64_t total) { options.progress(total, static_cast<int64_t>(size)); };
  }
  ParseMappedChunk(map, &chunks[0], false, options.fast_path, &progress, report);
  for (std::thread& t : workers) t.join();
  if (!MergeTimelineChunks(path, static_cast<int64_t>(size), &chunks, threads, builder,
                           options.hosts, options.notes)) {
    return false;
  }
  if (options.progress) options.progress(static_cast<int64_t>(size), static_cast<int64_t>(size));
  return true;
}

}  // namespace tfdiag
