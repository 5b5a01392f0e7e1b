// Parallel import of one gzip timeline. Every thread in turn takes the inflater (ISA-L,
// igzip_reader.h), inflates the next segment of about TimelineReadOptions::chunk_bytes of JSON
// into its own buffer, cut at an event boundary (chunk_parse.h), and parses it at once, while the
// bytes are still in its core's cache, into a chunk builder reused from segment to segment. The
// parsed segments are merged in file order by whichever thread completes the next one. Memory
// stays bounded: one buffer per thread, and parsed segments wait for their turn to merge at most
// 4 x threads segments ahead, whatever the inflated size.
//
// Any failure (an inflate error, a cut that does not stand, no event boundary within 64 MiB)
// returns false with `builder` as it was, and the caller reads the file sequentially with zlib,
// which also gives the exact error. The result equals the sequential reading's.
// Thread-safety: reentrant; starts threads - 1 threads and joins them before returning.
#pragma once

#include <cstdint>
#include <string>

#include "collectors/timeline/timeline_reader.h"
#include "core/capture_builder.h"

namespace tfdiag {

// Returns true when the gzip file was imported into `builder` (and its FileStats appended).
bool ReadGzipParallel(const std::string& path, int threads, CaptureBuilder* builder,
                      const TimelineReadOptions& options);

// Compressed files smaller than this are read sequentially (unless options.chunk_bytes is set).
constexpr int64_t kMinParallelGzipBytes = 2ll << 20;
// Inflated bytes per segment by default.
constexpr size_t kDefaultGzipChunkBytes = 2 << 20;

}  // namespace tfdiag
