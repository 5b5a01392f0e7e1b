#include "collectors/timeline/timeline_pool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "collectors/timeline/parallel_import.h"

namespace tfdiag {

struct TimelinePool::File {
  std::string path;
  int64_t size = 0;  // bytes, from stat at construction (0 if not a regular file)
  size_t items = 0;  // in the queue: 1, or threads for a file of kMinParallelBytes or more
  size_t done = 0;   // items parsed (or found to be no work)
  bool planned = false, readable = false;
  int64_t claimed = 0;  // bytes claimed while the file was ahead of the one taken
  std::unique_ptr<MappedFile> map;
  std::vector<TimelineChunk> chunks;
  std::atomic<int64_t> progress{0};
};

TimelinePool::TimelinePool(std::vector<std::string> paths, int threads, bool fast_path)
    : threads_(std::max(threads, 1)), fast_path_(fast_path) {
  for (size_t k = 0; k < paths.size(); ++k) {
    auto f = std::make_unique<File>();
    f->path = std::move(paths[k]);
    struct stat st;
    if (::stat(f->path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) f->size = st.st_size;
    f->items = f->size >= kMinParallelBytes ? static_cast<size_t>(threads_) : 1;
    for (size_t j = 0; j < f->items; ++j) queue_.push_back({k, j});
    files_.push_back(std::move(f));
  }
  for (int t = 1; t < threads_; ++t) workers_.emplace_back(&TimelinePool::Work, this);
}

TimelinePool::~TimelinePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool TimelinePool::ClaimLocked(Item* item) {
  while (next_ < queue_.size()) {
    const Item it = queue_[next_];
    File& f = *files_[it.file];
    const int64_t bytes = f.size / static_cast<int64_t>(f.items);
    const bool ahead = it.file > taking_;
    if (ahead && ahead_ > 0 && ahead_ + bytes > kAheadBytes) return false;
    ++next_;
    if (!f.planned) {
      // Mapped and cut when its first item is claimed (so only files in flight are mapped).
      f.planned = true;
      const int fd = ::open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        f.map = std::make_unique<MappedFile>();
        f.readable = f.map->Map(fd, f.path) &&
                     CutTimelineChunks(*f.map, static_cast<int>(f.items), &f.chunks);
        ::close(fd);
      }
      if (!f.readable) {
        f.map.reset();
        f.chunks.clear();
      }
    }
    if (it.chunk >= f.chunks.size()) {  // fewer cuts than planned, or not readable: no work
      ++f.done;
      cv_.notify_all();
      continue;
    }
    if (ahead) {
      ahead_ += bytes;
      f.claimed += bytes;
    }
    ++parsing_;
    *item = it;
    return true;
  }
  return false;
}

void TimelinePool::Parse(const Item& item, const std::function<void(int64_t)>& report) {
  File& f = *files_[item.file];
  ParseMappedChunk(*f.map, &f.chunks[item.chunk], item.chunk + 1 == f.chunks.size(), fast_path_,
                   &f.progress, report);
  std::lock_guard<std::mutex> lock(mu_);
  ++f.done;
  --parsing_;
  cv_.notify_all();
}

void TimelinePool::Work() {
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || ClaimLocked(&item); });
      if (stop_) return;
    }
    Parse(item, nullptr);
  }
}

bool TimelinePool::Take(size_t k, CaptureBuilder* builder,
                        const std::function<void(int64_t, int64_t)>& progress, HostMapper* hosts,
                        std::vector<std::string>* notes) {
  File& f = *files_[k];
  std::function<void(int64_t)> report;
  if (progress) report = [&](int64_t done) { progress(done, f.size); };
  // Nothing left to parse, nor being parsed: the merge may use every thread (while a worker
  // still parses, a merge on two threads would take its core, and OpenMP's waiting thread spins
  // on it after each parallel loop).
  bool rest_idle = false;
  for (;;) {
    std::unique_lock<std::mutex> lock(mu_);
    if (f.done == f.items) {
      rest_idle = next_ == queue_.size() && parsing_ == 0;
      break;
    }
    Item item;
    if (ClaimLocked(&item)) {
      lock.unlock();
      Parse(item, item.file == k ? report : nullptr);
      continue;
    }
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    lock.unlock();
    if (report) report(f.progress.load(std::memory_order_relaxed));
  }
  const bool merged =
      f.readable && MergeTimelineChunks(f.path, static_cast<int64_t>(f.map->size()), &f.chunks,
                                        rest_idle ? threads_ : 1, builder, hosts, notes);
  if (merged && progress) progress(f.size, f.size);
  f.chunks.clear();
  f.map.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    taking_ = k + 1;
    if (taking_ < files_.size()) {
      ahead_ -= files_[taking_]->claimed;
      files_[taking_]->claimed = 0;
    }
  }
  cv_.notify_all();
  return merged;
}

}  // namespace tfdiag
