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

// Parses chunk `c`, which starts at byte `offset` of `map`, releasing its pages as it goes and
// adding the bytes consumed to `progress`; `report` (may be empty) then gets the total so far.
void ParseMappedChunk(const MappedFile& map, size_t offset, TimelineChunk* c, bool last,
                      bool fast_path, std::atomic<int64_t>* progress,
                      const std::function<void(int64_t)>& report) {
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

}  // namespace

bool ReadTimelineParallel(const std::string& path, int threads, CaptureBuilder* builder,
                          const TimelineReadOptions& options) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  MappedFile map;
  const bool mapped = map.Map(fd, path);
  ::close(fd);
  if (!mapped) return false;
  const char* p = map.data();
  const size_t size = map.size();
  const char first = FirstNonBlank(p, std::min(size, size_t{4096}));
  if (first != '{' && first != '[') return false;

  // Chunks in file order, each starting at offsets[k].
  std::vector<std::unique_ptr<TimelineChunk>> chunks;
  std::vector<size_t> offsets;
  size_t begin = 0;
  for (int k = 1; k < threads; ++k) {
    size_t close_at = 0, open_at = 0;
    const size_t nominal = size / threads * k;
    if (nominal <= begin ||
        !FindEventCut(p, std::min(size, nominal + kCutWindow), nominal, &close_at, &open_at)) {
      break;
    }
    auto c = std::make_unique<TimelineChunk>();
    c->head = chunks.empty() ? "" : ChunkHead(first);
    c->tail = ChunkTail(first);
    c->data = p + begin;
    c->size = close_at - begin;
    chunks.push_back(std::move(c));
    offsets.push_back(begin);
    begin = open_at;
  }
  if (chunks.empty()) return false;
  auto last = std::make_unique<TimelineChunk>();
  last->head = ChunkHead(first);
  last->data = p + begin;
  last->size = size - begin;
  chunks.push_back(std::move(last));
  offsets.push_back(begin);

  std::atomic<int64_t> progress{0};
  std::vector<std::thread> workers;
  for (size_t k = 1; k < chunks.size(); ++k) {
    workers.emplace_back(ParseMappedChunk, std::cref(map), offsets[k], chunks[k].get(),
                         k + 1 == chunks.size(), options.fast_path, &progress,
                         std::function<void(int64_t)>());
  }
  // Chunk 0 on this thread, reporting progress for all chunks.
  std::function<void(int64_t)> report;
  if (options.progress) {
    report = [&](int64_t total) { options.progress(total, static_cast<int64_t>(size)); };
  }
  ParseMappedChunk(map, 0, chunks[0].get(), false, options.fast_path, &progress, report);
  for (std::thread& t : workers) t.join();
  for (const auto& c : chunks) {
    if (!c->ok) return false;
  }
  if (!chunks[0]->handler->saw_events()) return false;
  // Merge in file order into a handler on the caller's builder. The file's pids are numbered
  // first, in that order (nothing is written to the builder yet): past kMaxDevices slots (16 bits,
  // OpRow::device), the sequential reader is the reference for which ops are skipped.
  TraceHandler merged(builder);
  size_t slots = 0;
  for (const auto& c : chunks) slots = merged.AddSlotsOf(*c->handler);
  if (slots > kMaxDevices) return false;
  merged.MarkSawEvents();
  FileStats fs;
  fs.path = path;
  fs.bytes = static_cast<int64_t>(size);
  fs.chunks = static_cast<int>(chunks.size());
  fs.fast_path = true;
  for (auto& c : chunks) {
    fs.fast_path = fs.fast_path && c->fast;
    merged.MergeChunk(std::move(*c->handler), std::move(*c->builder), threads);
  }
  merged.Finish(&fs, threads);
  builder->stats().files.push_back(std::move(fs));
  if (options.progress) options.progress(static_cast<int64_t>(size), static_cast<int64_t>(size));
  return true;
}

}  // namespace tfdiag
