// A RapidJSON DOM parse that refuses deep nesting: RapidJSON's recursive parser takes a stack
// frame per nested array or object, so 300,000 '[' overflow the stack (SIGSEGV). The parse is
// iterative (kParseIterativeFlag: no recursion at all) and a handler between the reader and the
// document stops it at `max_depth` levels, so the DOM a caller walks is shallow too.
// RapidJSON's reader and GenericDocument::Populate: https://rapidjson.org/md_doc_sax.html
// Thread-safety: reentrant.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "core/input_limits.h"
#include "core/status.h"

namespace tfdiag {

// Deepest nesting of arrays and objects accepted by ParseJsonDom: tfdiag's JSON inputs (bundles,
// Prometheus API replies) nest at most 5 levels.
constexpr int kMaxJsonDepth = 64;

// RapidJSON's CrtAllocator, throwing std::bad_alloc where it returns NULL: RapidJSON does not check
// and writes through it (SIGSEGV when a large input meets a memory limit); thrown, it is main's
// exit code 3 "out of memory".
class ThrowingCrtAllocator {
 public:
  static const bool kNeedFree = true;
  void* Malloc(size_t size) {
    if (size == 0) return nullptr;
    void* p = std::malloc(size);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void* Realloc(void* old, size_t, size_t size) {
    if (size == 0) {
      std::free(old);
      return nullptr;
    }
    void* p = std::realloc(old, size);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  static void Free(void* p) { std::free(p); }
};

// The DOM and reader types every tfdiag JSON input uses (allocation failures throw).
using JsonDocument = rapidjson::GenericDocument<
    rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<ThrowingCrtAllocator>, ThrowingCrtAllocator>;
using JsonValue = JsonDocument::ValueType;
using JsonReader =
    rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, ThrowingCrtAllocator>;

// The SAX reader of the trace readers: its stack holds the string being read and stops growing
// at CappedStackAllocator::kCap (JsonStringTooLong, thrown out of Parse: catch it there).
using CappedJsonReader =
    rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, CappedStackAllocator>;

namespace json_dom_internal {

// Forwards SAX events to the document, counting open arrays and objects.
template <typename Doc>
struct DepthLimiter {
  Doc& d;
  int max_depth;
  int depth = 0;
  bool too_deep = false;
  using Ch = char;
  bool Null() { return d.Null(); }
  bool Bool(bool b) { return d.Bool(b); }
  bool Int(int i) { return d.Int(i); }
  bool Uint(unsigned i) { return d.Uint(i); }
  bool Int64(int64_t i) { return d.Int64(i); }
  bool Uint64(uint64_t i) { return d.Uint64(i); }
  bool Double(double x) { return d.Double(x); }
  bool RawNumber(const Ch* s, rapidjson::SizeType n, bool copy) { return d.RawNumber(s, n, copy); }
  bool String(const Ch* s, rapidjson::SizeType n, bool copy) { return d.String(s, n, copy); }
  bool Key(const Ch* s, rapidjson::SizeType n, bool copy) { return d.Key(s, n, copy); }
  bool Open() {
    too_deep = ++depth > max_depth;
    return !too_deep;
  }
  bool StartObject() { return Open() && d.StartObject(); }
  bool StartArray() { return Open() && d.StartArray(); }
  bool EndObject(rapidjson::SizeType n) {
    --depth;
    return d.EndObject(n);
  }
  bool EndArray(rapidjson::SizeType n) {
    --depth;
    return d.EndArray(n);
  }
};

}  // namespace json_dom_internal

// The outcome of a RapidJSON parse that ended with `r`: kInvalidInput "<where>: byte <N>: nesting
// deeper than <max_depth> arrays and objects" when a depth-counting handler stopped it
// (`too_deep`), "<where>: byte <N>: <RapidJSON's message>" for another error, else OK.
inline Status JsonParseStatus(std::string_view where, const rapidjson::ParseResult& r,
                              bool too_deep, int max_depth = kMaxJsonDepth) {
  if (too_deep) {
    return InvalidInput("{}: byte {}: nesting deeper than {} arrays and objects", where, r.Offset(),
                        max_depth);
  }
  if (r.IsError()) {
    return InvalidInput("{}: byte {}: {}", where, r.Offset(),
                        rapidjson::GetParseError_En(r.Code()));
  }
  return OkStatus();
}

// In-place parsing reads up to the first NUL: one inside `size` bytes would end the text early
// (and what follows it would go unread). kInvalidInput "<where>: byte <N>: a NUL byte; expected
// JSON text".
inline Status NoNulInJson(std::string_view where, const char* text, size_t size) {
  if (const void* nul = std::memchr(text, 0, size)) {
    return InvalidInput("{}: byte {}: a NUL byte; expected JSON text", where,
                        static_cast<const char*>(nul) - text);
  }
  return OkStatus();
}

// Parses `text` (`size` bytes, NUL-terminated, writable) into `d` in place: strings in `d` point
// into `text`. Errors: NoNulInJson's, kInvalidInput "<where>: byte <N>: <RapidJSON's message>",
// or "<where>: byte <N>: nesting deeper than <max_depth> arrays and objects".
inline Status ParseJsonDom(std::string_view where, char* text, size_t size, JsonDocument* d,
                           int max_depth = kMaxJsonDepth) {
  TFDIAG_RETURN_IF_ERROR(NoNulInJson(where, text, size));
  json_dom_internal::DepthLimiter<JsonDocument> h{*d, max_depth};
  rapidjson::ParseResult r;
  auto run = [&](JsonDocument&) {
    JsonReader reader;
    rapidjson::InsituStringStream s(text);
    r = reader.Parse<rapidjson::kParseInsituFlag | rapidjson::kParseIterativeFlag>(s, h);
    return !r.IsError();
  };
  d->Populate(run);
  return JsonParseStatus(where, r, h.too_deep, max_depth);
}

// Parses `json` (not modified, need not be NUL-terminated) into `d`, copying strings, with the
// same iterative, depth-limited parse as ParseJsonDom: for text held in a string_view (TF_CONFIG,
// rules files). `Doc` is any rapidjson::GenericDocument with UTF-8 encoding. Errors: as
// ParseJsonDom's (NUL byte, RapidJSON's message, or nesting deeper than `max_depth`), each
// naming `where` and the byte offset.
template <typename Doc>
Status ParseJsonText(std::string_view where, std::string_view json, Doc* d,
                     int max_depth = kMaxJsonDepth) {
  TFDIAG_RETURN_IF_ERROR(NoNulInJson(where, json.data(), json.size()));
  json_dom_internal::DepthLimiter<Doc> h{*d, max_depth};
  rapidjson::ParseResult r;
  auto run = [&](Doc&) {
    JsonReader reader;
    rapidjson::MemoryStream ms(json.data(), json.size());
    r = reader.Parse<rapidjson::kParseIterativeFlag>(ms, h);
    return !r.IsError();
  };
  d->Populate(run);
  return JsonParseStatus(where, r, h.too_deep, max_depth);
}

}  // namespace tfdiag
