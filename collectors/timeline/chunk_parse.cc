#include "collectors/timeline/chunk_parse.h"

#include <rapidjson/reader.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "collectors/timeline/fast_json.h"
#include "collectors/timeline/surrogate_filter.h"
#include "core/json_dom.h"

namespace tfdiag {

namespace {

constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                            rapidjson::kParseTrailingCommasFlag | rapidjson::kParseNanAndInfFlag;

// Consumed bytes are reported about this often; the caller releases mapped pages from there, in
// steps of its own (parallel_import.cc).
constexpr size_t kReportBytes = 256 << 10;

bool IsBlank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// A RapidJSON input stream over head + bytes + tail, in place. Peek() is '\0' at the end.
class SpanStream {
 public:
  using Ch = char;
  explicit SpanStream(const TimelineChunk& c)
      : spans_{{c.head.data(), c.head.size()}, {c.data, c.size}, {c.tail.data(), c.tail.size()}} {
    Next();
  }
  char Peek() const { return cur_ == end_ ? '\0' : *cur_; }
  char Take() {
    if (cur_ == end_) return '\0';
    const char ch = *cur_++;
    if (cur_ == end_) Next();
    return ch;
  }
  size_t Tell() const { return base_ + static_cast<size_t>(cur_ - begin_); }
  bool AtEnd() const { return cur_ == end_; }
  char* PutBegin() { return nullptr; }
  void Put(char) {}
  void Flush() {}
  size_t PutEnd(char*) { return 0; }

 private:
  void Next() {
    base_ += static_cast<size_t>(end_ - begin_);
    while (next_ < 3 && spans_[next_].size == 0) ++next_;
    if (next_ == 3) {
      begin_ = cur_ = end_;
      return;
    }
    begin_ = cur_ = spans_[next_].data;
    end_ = begin_ + spans_[next_].size;
    ++next_;
  }
  fast_json_internal::Span spans_[3];
  int next_ = 0;
  const char* begin_ = nullptr;
  const char* cur_ = nullptr;
  const char* end_ = nullptr;
  size_t base_ = 0;
};

// A fresh handler on the chunk's builder, deferring what may pair with an earlier chunk.
void StartChunk(TimelineChunk* c) {
  if (c->builder == nullptr) {
    c->owned = std::make_unique<CaptureBuilder>();
    c->builder = c->owned.get();
  }
  c->handler = std::make_unique<TraceHandler>(c->builder);
  c->handler->set_deferred(true);
}

// Whether a parse of `c` stands. `parsed`: the whole chunk parsed; `open_bare`: it ended inside a
// bare root array that the handler stands between two events of. The last chunk may leave such
// an array open (Horovod), as the sequential reader allows; any other chunk must close its events
// array exactly at the synthetic tail's ']'.
bool ChunkStands(TimelineChunk* c, bool last, bool parsed, bool open_bare) {
  if (last) {
    if (!parsed && open_bare) ++c->builder->stats().ignored["bare array without closing bracket"];
    return parsed || open_bare;
  }
  const int64_t tail_close = static_cast<int64_t>(c->head.size() + c->size) + 1;
  return parsed && c->handler->events_end() == tail_close;
}

// The chunk's bytes consumed by a stream offset (head + bytes + tail).
size_t BytesBefore(const TimelineChunk& c, size_t offset) {
  return std::min(c.size, offset - std::min(offset, c.head.size()));
}

bool ParseFast(TimelineChunk* c, bool last, const ChunkConsumedFn& consumed) {
  StartChunk(c);
  c->handler->set_stable_strings(true);  // the spans outlive the parse
  FastSpanReader<TraceHandler> reader(
      {{c->head.data(), c->head.size()}, {c->data, c->size}, {c->tail.data(), c->tail.size()}},
      c->handler.get());
  size_t reported = 0;
  if (consumed) {
    reader.set_release(kReportBytes, [&](size_t offset) {
      const size_t at = BytesBefore(*c, offset);
      consumed(reported, at);
      reported = at;
    });
  }
  c->handler->set_tell([&reader] { return reader.Tell(); });
  const bool ok = reader.Run();
  c->handler->set_tell(nullptr);
  if (consumed) consumed(reported, c->size);
  CountLoneSurrogates(reader.lone_surrogates(), c->builder);
  return ChunkStands(c, last, ok,
                     !ok && reader.ended_in_root_array() && c->handler->BetweenBareArrayEvents());
}

void ParseReference(TimelineChunk* c, bool last, const ChunkConsumedFn& consumed) {
  StartChunk(c);
  SpanStream in(*c);
  LoneSurrogateFilter<SpanStream> filtered(in);  // \ud800 alone: U+FFFD, counted
  c->handler->set_tell([&filtered] { return filtered.Tell(); });
  CappedJsonReader reader;
  rapidjson::ParseResult r;
  try {
    r = reader.Parse<kFlags>(filtered, *c->handler);
  } catch (const JsonStringTooLong&) {
    // The sequential reader, run on the file after a chunk fails, names the offset.
    c->handler->set_tell(nullptr);
    c->ok = false;
    return;
  }
  c->handler->set_tell(nullptr);
  if (consumed) consumed(0, c->size);
  CountLoneSurrogates(filtered.lone_surrogates(), c->builder);
  const bool at_end = in.AtEnd();
  const bool open_bare = r.IsError() && at_end && c->handler->BetweenBareArrayEvents() &&
                         (r.Code() == rapidjson::kParseErrorArrayMissCommaOrSquareBracket ||
                          r.Code() == rapidjson::kParseErrorValueInvalid);
  c->ok = ChunkStands(c, last, !r.IsError() && at_end, open_bare);
}

}  // namespace

void ParseTimelineChunk(TimelineChunk* c, bool last, bool fast_path,
                        const ChunkConsumedFn& consumed) {
  if (c->builder == nullptr) StartChunk(c);
  const CaptureBuilder::Checkpoint start = c->builder->MakeCheckpoint();
  if (fast_path && ParseFast(c, last, consumed)) {
    c->ok = c->fast = true;
    return;
  }
  c->builder->Rollback(start);
  // The bytes already reported stay reported; the reference parse reports none again.
  ParseReference(c, last, fast_path ? ChunkConsumedFn() : consumed);
}

bool FindEventCut(const char* p, size_t size, size_t from, size_t* close, size_t* open) {
  for (size_t i = from; i < size; ++i) {
    const void* hit = std::memchr(p + i, '}', size - i);
    if (hit == nullptr) return false;
    i = static_cast<size_t>(static_cast<const char*>(hit) - p);
    size_t j = i + 1;
    while (j < size && IsBlank(p[j])) ++j;
    if (j >= size || p[j] != ',') continue;
    ++j;
    while (j < size && IsBlank(p[j])) ++j;
    if (j >= size || p[j] != '{') continue;
    *close = i + 1;
    *open = j;
    return true;
  }
  return false;
}

char FirstNonBlank(const char* p, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    if (!IsBlank(p[i])) return p[i];
  }
  return 0;
}

std::string ChunkHead(char first) { return first == '{' ? "{\"traceEvents\":[" : "["; }
std::string ChunkTail(char first) { return first == '{' ? "]}" : "]"; }

}  // namespace tfdiag
