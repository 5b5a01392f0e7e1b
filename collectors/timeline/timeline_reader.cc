#include "collectors/timeline/timeline_reader.h"

#include <fcntl.h>
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "collectors/timeline/fast_json.h"
#include "collectors/timeline/gzip_import.h"
#include "collectors/timeline/input_hints.h"
#include "collectors/timeline/input_stream.h"
#include "collectors/timeline/mapped_file.h"
#include "collectors/timeline/parallel_import.h"
#include "collectors/timeline/surrogate_filter.h"
#include "collectors/timeline/trace_handler.h"
#include "collectors/xplane/host_tasks.h"
#include "collectors/xplane/log_dir.h"
#include "core/json_dom.h"

namespace tfdiag {

namespace {

// The value of 8 ASCII digits at p, or -1 if any byte is not a digit (SWAR, as in simdjson's
// parse_eight_digits_unrolled).
int64_t EightDigits(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  const uint64_t high = v & 0xF0F0F0F0F0F0F0F0ull;
  const uint64_t carry = (v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull;
  if (high != 0x3030303030303030ull || carry != 0x3030303030303030ull) return -1;
  v -= 0x3030303030303030ull;
  v = (v * 10) + (v >> 8);  // pairs of digits in every other byte
  v = (((v & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
       (((v >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
      32;
  return static_cast<int64_t>(v);
}

}  // namespace

bool ParseMicrosAsNanos(std::string_view s, int64_t* ns) {
  if (s.empty()) return false;
  size_t i = 0;
  bool neg = false;
  if (s[0] == '-') neg = true, ++i;
  int64_t whole = 0;
  size_t digits = 0;
  // Eight digits at a time while they fit in the text and the value cannot overflow (the loop
  // below checks the rest digit by digit).
  while (digits + 8 <= 16 && i + 8 <= s.size()) {
    const int64_t eight = EightDigits(s.data() + i);
    if (eight < 0) break;
    whole = whole * 100000000 + eight;
    i += 8;
    digits += 8;
  }
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++digits) {
    if (whole > (INT64_MAX / 10 - 9) / 1000) return false;  // overflow after * 1000
    whole = whole * 10 + (s[i] - '0');
  }
  int64_t frac = 0;
  int frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (frac_digits < 3) frac = frac * 10 + (s[i] - '0'), ++frac_digits;
    }
  }
  if (digits == 0) return false;
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') return false;
    // Exponent form: rare in traces; go through double.
    std::string tmp(s);
    char* end = nullptr;
    double v = std::strtod(tmp.c_str(), &end);
    if (end != tmp.c_str() + tmp.size() || !(v > -9.2e15 && v < 9.2e15)) return false;
    *ns = static_cast<int64_t>(v * 1000.0);
    return true;
  }
  while (frac_digits < 3) frac *= 10, ++frac_digits;
  if (whole > (INT64_MAX - frac) / 1000) return false;  // whole * 1000 + frac overflows
  int64_t v = whole * 1000 + frac;
  *ns = neg ? -v : v;
  return true;
}

int64_t RequestedBytesFromDescription(std::string_view d) {
  static constexpr std::string_view kKey = "requested_bytes:";
  size_t p = d.find(kKey);
  if (p == std::string_view::npos) return -1;
  p += kKey.size();
  while (p < d.size() && d[p] == ' ') ++p;
  int64_t v = -1;
  auto [end, ec] = std::from_chars(d.data() + p, d.data() + d.size(), v);
  if (ec != std::errc() || v < 0) return -1;
  return v;
}

namespace {

// Mapped pages are released behind the parser (and progress reported) every this many bytes.
constexpr size_t kReleaseBytes = 512 << 10;

// What the parser expected, in words, for the error line.
std::string Expected(rapidjson::ParseErrorCode code) {
  using namespace rapidjson;
  switch (code) {
    case kParseErrorValueInvalid:
      return "expected a JSON value";
    case kParseErrorObjectMissName:
      return "expected a member name in double quotes";
    case kParseErrorObjectMissColon:
      return "expected ':' after a member name";
    case kParseErrorObjectMissCommaOrCurlyBracket:
      return "expected ',' or '}' after an object member";
    case kParseErrorArrayMissCommaOrSquareBracket:
      return "expected ',' or ']' after an array element";
    case kParseErrorStringMissQuotationMark:
      return "expected the closing '\"' of a string";
    case kParseErrorStringEscapeInvalid:
      return "expected a valid escape in a string";
    case kParseErrorStringUnicodeEscapeInvalidHex:
      return "expected 4 hex digits after \\u";
    case kParseErrorStringInvalidEncoding:
      return "expected UTF-8 text in a string";
    case kParseErrorNumberMissFraction:
      return "expected digits after the decimal point";
    case kParseErrorNumberMissExponent:
      return "expected digits in the exponent";
    case kParseErrorDocumentRootNotSingular:
      return "expected the end of the file after the top-level value";
    default: {
      std::string what = GetParseError_En(code);
      if (!what.empty() && what.back() == '.') what.pop_back();
      return what;
    }
  }
}

// The parser stopped at a NUL byte that is not the end of the file.
Status UnexpectedNul(const std::string& path, InputStream& in) {
  return InvalidInput("{}: byte {}{}: unexpected NUL byte, expected JSON text{}", path, in.Tell(),
                      in.gzip() ? " (decompressed)" : "", in.gzip() ? "" : NotJsonHint(path));
}

// After a whole file was parsed: maps its pids to devices and records its FileStats.
void FinishFile(const std::string& path, InputStream& in, TraceHandler* handler,
                CaptureBuilder* builder, bool fast_path) {
  FileStats fs;
  fs.fast_path = fast_path;
  fs.path = path;
  fs.gzip = in.gzip();
  fs.bytes = in.file_size();
  handler->Finish(&fs);
  builder->stats().files.push_back(std::move(fs));
}

// Maps a plain file for reading in place; false if it cannot be (then it is read through `in`).
bool MapPlain(const std::string& path, const InputStream& in, MappedFile* map) {
  if (in.gzip()) return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool mapped = map->Map(fd, path);
  ::close(fd);
  return mapped;
}

// Runs `reader` over the whole file with `handler`; false (the builder to be rolled back) if it
// gave up.
template <typename Reader>
bool RunFast(const std::string& path, InputStream& in, Reader* reader, TraceHandler* handler,
             CaptureBuilder* builder) {
  const bool ok = reader->Run();
  // As the RapidJSON path below: a bare array may end without its ']' (Horovod).
  const bool open_bare = !ok && reader->ended_in_root_array() && handler->BetweenBareArrayEvents();
  if ((ok || open_bare) && in.status().ok() && handler->saw_events()) {
    if (open_bare) ++builder->stats().ignored["bare array without closing bracket"];
    CountLoneSurrogates(reader->lone_surrogates(), builder);
    FinishFile(path, in, handler, builder, true);
    return true;
  }
  return false;
}

// The fast tokenizer over the whole of `in` (opened, nothing consumed), in place if the file can
// be mapped; false (with the builder as it was) if it gave up.
bool ReadTimelineFast(const std::string& path, InputStream& in, CaptureBuilder* builder,
                      const TimelineReadOptions& options) {
  const CaptureBuilder::Checkpoint cp = builder->MakeCheckpoint();
  MappedFile map;
  if (MapPlain(path, in, &map)) {
    TraceHandler handler(builder);
    handler.set_hosts(options.hosts, options.notes, options.session_wall_ns);
    handler.set_stable_strings(true);  // the mapping outlives the parse
    FastSpanReader<TraceHandler> reader({{map.data(), map.size()}}, &handler);
    size_t released = 0;
    reader.set_release(kReleaseBytes, [&](size_t offset) {
      map.Release(released, offset);
      released = offset;
      if (options.progress) options.progress(static_cast<int64_t>(offset), in.file_size());
    });
    const bool ok = RunFast(path, in, &reader, &handler, builder);
    map.Release(released, map.size());
    if (ok && options.progress) options.progress(in.file_size(), in.file_size());
    if (ok) return true;
    builder->Rollback(cp);
    return false;
  }
  {
    TraceHandler handler(builder);
    handler.set_hosts(options.hosts, options.notes, options.session_wall_ns);
    FastJsonReader<InputStream, TraceHandler> reader(&in, &handler);
    if (RunFast(path, in, &reader, &handler, builder)) return true;
  }
  builder->Rollback(cp);
  return false;
}

}  // namespace

Status CheckTraceJsonHostName(const std::string& path) {
  // The trace JSON host files (ranks 2 and 3 of log_dir.h's suffix table).
  const size_t slash = path.find_last_of('/');
  const std::optional<HostFileName> h =
      ParseHostFileName(slash == std::string::npos ? path : path.substr(slash + 1));
  if (!h || h->rank < 2 || h->host.empty()) return OkStatus();
  const HostTask t = HostMapper().Map(h->host);
  return t.error.ok() ? OkStatus() : t.error.WithPrefix(path);
}

Status ReadTimeline(const std::string& path, CaptureBuilder* builder,
                    const TimelineReadOptions& given) {
  TFDIAG_RETURN_IF_ERROR(CheckTraceJsonHostName(path));
  // A file read a second time (the fast path gave up) does not move the progress back.
  TimelineReadOptions options = given;
  if (given.progress) {
    auto high = std::make_shared<std::atomic<int64_t>>(0);
    options.progress = [high, report = given.progress](int64_t done, int64_t total) {
      int64_t seen = high->load();
      while (done > seen && !high->compare_exchange_weak(seen, done)) {
      }
      const int64_t shown = std::max(done, seen);
      report(total > 0 ? std::min(shown, total) : shown, total);
    };
  }
  std::optional<InputStream> stream;
  auto open = [&]() -> Status {
    stream.emplace();
    if (options.progress) stream->set_progress(options.progress);
    return stream->Open(path);
  };
  TFDIAG_RETURN_IF_ERROR(open());
  if (options.threads > 1 && !stream->gzip() && stream->file_size() >= kMinParallelBytes &&
      ReadTimelineParallel(path, options.threads, builder, options)) {
    return OkStatus();
  }
  if (options.threads > 1 && stream->gzip() &&
      (stream->file_size() >= kMinParallelGzipBytes || options.chunk_bytes > 0) &&
      ReadGzipParallel(path, options.threads, builder, options)) {
    return OkStatus();
  }
  if (options.threads > 1) stream->StartReadAhead();  // gzip: inflate beside the parse
  if (options.fast_path) {
    if (ReadTimelineFast(path, *stream, builder, options)) return OkStatus();
    // The reference path reads the file again from its start.
    TFDIAG_RETURN_IF_ERROR(open());
    if (options.threads > 1) stream->StartReadAhead();
  }
  // The reference path: RapidJSON, for the exact error or the lenient cases.
  InputStream& in = *stream;

  TraceHandler handler(builder);
  handler.set_hosts(options.hosts, options.notes, options.session_wall_ns);
  CappedJsonReader reader;
  constexpr unsigned kFlags = rapidjson::kParseNumbersAsStringsFlag |
                              rapidjson::kParseTrailingCommasFlag | rapidjson::kParseNanAndInfFlag;
  rapidjson::ParseResult r;
  LoneSurrogateFilter<InputStream> filtered(in);  // \ud800 alone: U+FFFD, counted
  try {
    r = reader.Parse<kFlags>(filtered, handler);
  } catch (const JsonStringTooLong&) {
    // Stopped while the string streamed in (a 1 GiB string in a 1 MB .gz used to take 6 GB).
    return InvalidInput("{}: byte {}{}: a string longer than {} MiB, the limit for one JSON string",
                        path, in.Tell(), in.gzip() ? " (decompressed)" : "",
                        kMaxJsonStringBytes >> 20);
  }
  if (!in.status().ok()) return in.status();
  if (r.IsError()) {
    size_t offset = r.Offset();
    bool at_end = in.AtEnd();
    if (at_end && handler.BetweenBareArrayEvents() &&
        (r.Code() == rapidjson::kParseErrorArrayMissCommaOrSquareBracket ||
         r.Code() == rapidjson::kParseErrorValueInvalid)) {
      ++builder->stats().ignored["bare array without closing bracket"];
    } else if (!at_end && in.Peek() == '\0') {
      // The parser reads a NUL byte as the end of the input; here it is data.
      return UnexpectedNul(path, in);
    } else if (r.Code() == rapidjson::kParseErrorDocumentEmpty) {
      return InvalidInput(
          "{}: byte {}: the file is empty{}; expected a JSON object with "
          "traceEvents or an array of trace events",
          path, offset, in.gzip() ? " after decompression" : "");
    } else if (r.Code() == rapidjson::kParseErrorTermination && !handler.abort_reason().empty()) {
      // A file of one number parses as a JSON scalar: a cgroup file, perhaps.
      return InvalidInput("{}: byte {}: {}{}", path, offset, handler.abort_reason(),
                          in.gzip() ? "" : KernelTextHint(FileHead(path, 4096)));
    } else {
      std::string what = Expected(r.Code());
      if (at_end) what += " (the file ends early: truncated?)";
      return InvalidInput("{}: byte {}{}: {}{}", path, offset, in.gzip() ? " (decompressed)" : "",
                          what, in.gzip() ? "" : NotJsonHint(path));
    }
  }
  if (!r.IsError() && !in.AtEnd()) return UnexpectedNul(path, in);
  if (!handler.saw_events()) {
    return InvalidInput(
        "{}: byte {}: no traceEvents array; expected {{\"traceEvents\": [...]}} "
        "or a bare array of trace events{}",
        path, in.Tell(), in.gzip() ? "" : NotTraceHint(path));
  }
  CountLoneSurrogates(filtered.lone_surrogates(), builder);
  FinishFile(path, in, &handler, builder, false);
  return OkStatus();
}

namespace {

// FirstCompleteEventNs's SAX handler: per open object, whether it is an X event and its ts;
// stops the parse (returns false) at the end of the first complete event or past max_bytes.
struct FirstEventHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, FirstEventHandler> {
  struct Obj {
    std::string key;
    bool x = false;
    std::optional<int64_t> ts;
  };
  std::vector<Obj> stack;
  std::optional<int64_t> found;
  const InputStream* in = nullptr;
  size_t max_bytes = 0;

  bool Default() { return in->Tell() < max_bytes; }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    if (!stack.empty() && stack.back().key == "ph") stack.back().x = std::string_view(s, n) == "X";
    return Default();
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    int64_t ns = 0;
    if (!stack.empty() && stack.back().key == "ts" && ParseMicrosAsNanos({s, n}, &ns)) {
      stack.back().ts = ns;
    }
    return Default();
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    stack.back().key.assign(s, n);
    return Default();
  }
  // RapidJSON's Reader recurses per level, and a hostile file may nest deep: trace events nest a
  // few levels, so more than kMaxDepth stops the probe (nothing found), as the reader's
  // handler stops at its own limit.
  static constexpr int kMaxDepth = 64;
  int depth = 0;
  bool StartObject() {
    if (++depth > kMaxDepth) return false;
    stack.emplace_back();
    return Default();
  }
  bool StartArray() { return ++depth <= kMaxDepth && Default(); }
  bool EndObject(rapidjson::SizeType) {
    if (stack.back().x && stack.back().ts) {
      found = stack.back().ts;
      return false;
    }
    stack.pop_back();
    --depth;
    if (!stack.empty()) stack.back().key.clear();
    return Default();
  }
  bool EndArray(rapidjson::SizeType) {
    --depth;
    if (!stack.empty()) stack.back().key.clear();
    return Default();
  }
};

}  // namespace

StatusOr<std::optional<int64_t>> FirstCompleteEventNs(const std::string& path, size_t max_bytes) {
  InputStream in;
  TFDIAG_RETURN_IF_ERROR(in.Open(path));
  FirstEventHandler h;
  h.in = &in;
  h.max_bytes = max_bytes;
  CappedJsonReader reader;
  try {
    reader.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseStopWhenDoneFlag>(in, h);
  } catch (const JsonStringTooLong&) {
    return std::optional<int64_t>();  // the import proper reports it
  }
  return h.found;
}

}  // namespace tfdiag
