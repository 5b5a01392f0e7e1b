// Parallel import of one gzip timeline. The calling thread inflates the file with ISA-L
// (igzip_reader.h) into segments of about TimelineReadOptions::chunk_bytes of JSON, each cut at
// an event boundary (chunk_parse.h); the segments are parsed on `threads` threads (the inflating
// one takes a segment too when enough are waiting) and merged in order as they complete. Memory
// stays bounded: at most about 2 x threads segments exist at a time, whatever the inflated size.
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
constexpr size_t kDefaultGzipChunkBytes = 4 << 20;

}  // namespace tfdiag
