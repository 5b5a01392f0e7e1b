// TimelinePool: many plain (not gzip) timelines read on one pool of threads, files and chunks of
// files alike, as when every worker of a job saved its own timeline (issue 19).
//
// The files are mapped and planned at construction: a file of kMinParallelBytes (16 MiB) or more
// is cut into `threads` chunks at event boundaries (parallel_import.h), a smaller one is one chunk.
// The chunks, in file order, form one queue of work: threads - 1 workers and the caller, while it
// waits in Take(), parse the next chunk in the queue into a chunk builder of its own. Take(k), on
// the caller's thread and for k = 0, 1, 2... in order, merges file k's chunks into the caller's
// builder; the result is then the same whatever the thread count or the order the chunks were
// parsed in (merges happen in file order, on one thread).
//
// Memory: workers parse at most kAheadBytes of input beyond the file the caller waits for, so
// parsed chunks waiting to be merged stay bounded whatever the number of files; mapped pages are
// released behind the parser and a file is unmapped once merged.
// Progress: Take(k) reports file k's bytes parsed so far, on the caller's thread, rising to the
// file's size; the files are reported one after another, in order.
// Thread-safety: the pool's methods are for one (the creating) thread; the workers are internal.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collectors/xplane/host_tasks.h"
#include "core/capture_builder.h"

namespace tfdiag {

class TimelinePool {
 public:
  // `paths`: the plain timelines to read, in the order they will be taken; `threads` >= 2.
  TimelinePool(std::vector<std::string> paths, int threads, bool fast_path);
  ~TimelinePool();  // stops the workers (after the chunk each is parsing) and joins them
  TimelinePool(const TimelinePool&) = delete;
  TimelinePool& operator=(const TimelinePool&) = delete;

  // Merges file `k` (paths[k]) into `builder` and appends its FileStats; call for k = 0, 1, ...
  // in order. False, with `builder` untouched, when the pool could not read the file (it could not
  // be mapped, a chunk did not parse, more than kMaxDevices pids...): the caller then reads it
  // with ReadTimeline, the reference for errors. `progress` (may be empty): (bytes, file size).
  // `hosts`, `notes`: TimelineReadOptions::hosts, notes (a TF2 trace-viewer JSON's host).
  bool Take(size_t k, CaptureBuilder* builder,
            const std::function<void(int64_t, int64_t)>& progress, HostMapper* hosts = nullptr,
            std::vector<std::string>* notes = nullptr);

  // Input parsed ahead of the file being taken, at most.
  static constexpr int64_t kAheadBytes = 48ll << 20;

 private:
  struct File;
  struct Item {
    size_t file, chunk;
  };
  // Claims the next item of the queue if the memory bound allows it (always for the file being
  // taken or an earlier one; for a later one while less than kAheadBytes are claimed ahead),
  // mapping and cutting its file on its first item. False if none. Needs mu_.
  bool ClaimLocked(Item* item);
  // Parses `item` without mu_; `report` (may be empty) gets its file's bytes parsed so far.
  void Parse(const Item& item, const std::function<void(int64_t)>& report);
  void Work();

  std::vector<std::unique_ptr<File>> files_;
  std::vector<Item> queue_;
  int threads_;
  bool fast_path_;
  std::mutex mu_;
  std::condition_variable cv_;
  size_t next_ = 0;     // queue_[next_] is the next item to parse
  size_t taking_ = 0;   // the file the caller takes next
  int64_t ahead_ = 0;   // bytes of claimed items of files after taking_
  size_t parsing_ = 0;  // items claimed and not yet parsed
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace tfdiag
