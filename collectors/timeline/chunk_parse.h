// One chunk of a timeline's events array, parsed on its own into its own CaptureBuilder: the
// unit of the parallel imports (plain files: parallel_import.h; gzip: gzip_import.h).
//
// A chunk is `head` + bytes + `tail`, where the bytes run from an event's '{' to the '}' that
// ends an event (or to the end of the input), the head is the synthetic {"traceEvents":[ or [
// (empty for the first chunk, which starts at the top of the file) and the tail ]} or ] (empty
// for the last). The cuts are speculative (FindEventCut): a chunk stands only if it parses
// completely with its events array ending exactly at the tail's ']' (ChunkStands); otherwise the
// caller reads the input sequentially, which also yields the exact error of a bad file.
// Thread-safety: different chunks may be parsed concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "collectors/timeline/trace_handler.h"
#include "core/capture_builder.h"

namespace tfdiag {

struct TimelineChunk {
  std::string head, tail;
  const char* data = nullptr;  // the chunk's bytes, read in place (owned by the caller)
  size_t size = 0;
  size_t offset = 0;  // of data in its file (mapped imports: where to release pages)
  // Where the chunk's rows go: set by the caller to a builder it reuses across chunks (strings
  // and row storage kept), or left null for a fresh one (owned).
  CaptureBuilder* builder = nullptr;
  std::unique_ptr<CaptureBuilder> owned;
  std::unique_ptr<TraceHandler> handler;  // holds what may pair with other chunks
  bool ok = false;                        // the parse stands
  bool fast = false;  // parsed by the fast tokenizer (fast_json.h) rather than RapidJSON
};

// Called as a chunk's bytes are consumed with [begin, end) offsets into TimelineChunk::data, in
// order, covering the whole chunk once the parse ends (for progress and releasing mapped pages).
using ChunkConsumedFn = std::function<void(size_t begin, size_t end)>;

// Parses `c` (the fast tokenizer first if `fast_path`, RapidJSON if it gives up) and sets c->ok
// and c->fast. `last`: the chunk ends the input, so it may leave a bare array open (Horovod).
// `consumed` may be empty.
void ParseTimelineChunk(TimelineChunk* c, bool last, bool fast_path,
                        const ChunkConsumedFn& consumed);

// Finds a '}' blank* ',' blank* '{' in [from, size) of `p`: *close is set just after the '}',
// *open to the '{'. False if there is none.
bool FindEventCut(const char* p, size_t size, size_t from, size_t* close, size_t* open);

// The first byte of `p` that is not JSON whitespace ('{' or '[' for a timeline), or 0.
char FirstNonBlank(const char* p, size_t size);

// The synthetic head and tail of middle chunks for a document starting with `first` ('{' or
// '['): {"traceEvents":[ and ]}, or [ and ].
std::string ChunkHead(char first);
std::string ChunkTail(char first);

}  // namespace tfdiag
