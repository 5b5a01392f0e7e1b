// Parallel import of one plain (not gzip) timeline, mapped into memory (mapped_file.h) and read
// in place: the events array is cut into chunks at event boundaries, each chunk is parsed on its
// own thread into its own CaptureBuilder, and the chunks are merged in file order (rows, pid
// names, B/E pairs and flows that straddle chunks).
//
// The cuts are speculative (chunk_parse.h): a cut is a "}" "," "{" sequence found near the
// chunk's nominal start, and it is proven to be an event boundary of traceEvents only if the
// previous chunk, closed with a synthetic "]}" (or "]"), parses completely with its events array
// ending exactly there. Any failure (also a file that cannot be mapped) returns false and leaves
// `builder` untouched, and the caller reads the file sequentially (which also produces the
// precise error for a bad file).
// Thread-safety: reentrant; starts threads - 1 threads and joins them before returning.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "collectors/timeline/chunk_parse.h"
#include "collectors/timeline/mapped_file.h"
#include "collectors/timeline/timeline_reader.h"
#include "core/capture_builder.h"

namespace tfdiag {

// Returns true when the file was imported into `builder` (and its FileStats appended).
bool ReadTimelineParallel(const std::string& path, int threads, CaptureBuilder* builder,
                          const TimelineReadOptions& options);

// Files smaller than this are read on one thread (as one chunk: see timeline_pool.h for many).
constexpr int64_t kMinParallelBytes = 16ll << 20;

// The parts of the import, shared with the pool of many files (timeline_pool.h):
// Cuts the mapped timeline into at most `pieces` chunks (fewer where no event boundary is found
// near a nominal cut; one, the whole file, for pieces = 1). False if the file does not start with
// '{' or '[' (not a timeline the chunked import reads).
bool CutTimelineChunks(const MappedFile& map, int pieces, std::vector<TimelineChunk>* chunks);
// Parses chunk `c` of `map` (ParseTimelineChunk), releasing the mapped pages behind it as it goes
// and adding the bytes consumed to `progress`; `report` (may be empty) then gets the total so far.
void ParseMappedChunk(const MappedFile& map, TimelineChunk* c, bool last, bool fast_path,
                      std::atomic<int64_t>* progress, const std::function<void(int64_t)>& report);
// Merges a file's parsed chunks, in order, into `builder` and appends the file's FileStats
// (`path`, `bytes`). False, with `builder` untouched, if a chunk did not stand, the file held no
// events array or more than kMaxDevices pids (then the sequential reader is the reference).
// `threads` > 1 copies rows and remaps devices on that many threads.
// `hosts`, `notes`: TimelineReadOptions::hosts, notes.
bool MergeTimelineChunks(const std::string& path, int64_t bytes, std::vector<TimelineChunk>* chunks,
                         int threads, CaptureBuilder* builder, HostMapper* hosts = nullptr,
                         std::vector<std::string>* notes = nullptr);

}  // namespace tfdiag
