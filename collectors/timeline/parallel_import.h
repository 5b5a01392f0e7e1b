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

#include <cstdint>
#include <string>

#include "collectors/timeline/timeline_reader.h"
#include "core/capture_builder.h"

namespace tfdiag {

// Returns true when the file was imported into `builder` (and its FileStats appended).
bool ReadTimelineParallel(const std::string& path, int threads, CaptureBuilder* builder,
                          const TimelineReadOptions& options);

// Files smaller than this are read on one thread.
constexpr int64_t kMinParallelBytes = 16ll << 20;

}  // namespace tfdiag
