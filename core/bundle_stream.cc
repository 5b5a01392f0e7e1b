// ReadBundleHead and ReadBundleRows (core/bundle_stream.h).
#include "core/bundle_stream.h"

#include <rapidjson/filereadstream.h>

#include <utility>
#include <vector>

namespace tfdiag {

namespace {

constexpr size_t kBufferBytes = 64 << 10;

// The nesting of the top-level object: 1 inside it, 2 inside a value of one of its keys.
constexpr int kTop = 1, kRows = 2;

// Pass 1: forwards SAX events to the head document, except the elements of the row keys'
// arrays (the array itself is kept, empty).
struct HeadFilter {
  explicit HeadFilter(JsonDocument& doc) : d(doc) {}
  JsonDocument& d;
  int depth = 0;
  bool too_deep = false, too_many = false, rows = false;
  size_t values = 0;
  std::string key;  // the top-level key being read
  using Ch = char;

  bool Count() {
    too_many = ++values > kMaxBundleHeadValues;
    return !too_many;
  }
  bool Open() {
    too_deep = ++depth > kMaxJsonDepth;
    return !too_deep;
  }
  bool Null() { return rows || (Count() && d.Null()); }
  bool Bool(bool b) { return rows || (Count() && d.Bool(b)); }
  bool Int(int i) { return rows || (Count() && d.Int(i)); }
  bool Uint(unsigned i) { return rows || (Count() && d.Uint(i)); }
  bool Int64(int64_t i) { return rows || (Count() && d.Int64(i)); }
  bool Uint64(uint64_t i) { return rows || (Count() && d.Uint64(i)); }
  bool Double(double x) { return rows || (Count() && d.Double(x)); }
  bool RawNumber(const Ch* s, rapidjson::SizeType n, bool copy) {
    return rows || (Count() && d.RawNumber(s, n, copy));
  }
  bool String(const Ch* s, rapidjson::SizeType n, bool copy) {
    return rows || (Count() && d.String(s, n, copy));
  }
  bool Key(const Ch* s, rapidjson::SizeType n, bool copy) {
    if (rows) return true;
    if (depth == kTop) key.assign(s, n);
    return Count() && d.Key(s, n, copy);
  }
  bool StartObject() { return Open() && (rows || (Count() && d.StartObject())); }
  bool StartArray() {
    if (!Open()) return false;
    if (rows) return true;
    if (depth == kRows && IsBundleRowKey(key)) rows = true;
    return Count() && d.StartArray();
  }
  bool EndObject(rapidjson::SizeType n) {
    --depth;
    return rows || d.EndObject(n);
  }
  bool EndArray(rapidjson::SizeType n) {
    if (rows && depth == kRows) {
      rows = false;
      --depth;
      return d.EndArray(0);
    }
    --depth;
    return rows || d.EndArray(n);
  }
};

// Pass 2: builds each element of a row key's array (a row: an array of scalars, a sched row's
// histogram an array in it) and hands it over; objects inside a row are kept empty.
struct RowReader {
  explicit RowReader(const std::function<Status(std::string_view, size_t, const JsonValue&)>& e)
      : each(e) {}
  const std::function<Status(std::string_view, size_t, const JsonValue&)>& each;
  rapidjson::MemoryPoolAllocator<ThrowingCrtAllocator> alloc{kBufferBytes};
  std::vector<JsonValue> stack;  // the open arrays and objects of the row being read
  std::string key;
  int depth = 0;
  bool rows = false, too_deep = false;
  size_t index = 0;
  Status error;
  using Ch = char;

  bool Put(JsonValue&& v) {
    if (!stack.empty()) {
      if (stack.back().IsArray()) stack.back().PushBack(v, alloc);
      return true;
    }
    error = each(key, index++, v);
    alloc.Clear();
    return error.ok();
  }
  bool Value(JsonValue&& v) { return !rows || Put(std::move(v)); }
  bool Open() {
    too_deep = ++depth > kMaxJsonDepth;
    return !too_deep;
  }
  bool Null() { return Value(JsonValue()); }
  bool Bool(bool b) { return Value(JsonValue(b)); }
  bool Int(int i) { return Value(JsonValue(i)); }
  bool Uint(unsigned i) { return Value(JsonValue(i)); }
  bool Int64(int64_t i) { return Value(JsonValue(i)); }
  bool Uint64(uint64_t i) { return Value(JsonValue(i)); }
  bool Double(double x) { return Value(JsonValue(x)); }
  bool RawNumber(const Ch* s, rapidjson::SizeType n, bool) {
    return !rows || Put(JsonValue(s, n, alloc));
  }
  bool String(const Ch* s, rapidjson::SizeType n, bool) {
    return !rows || Put(JsonValue(s, n, alloc));
  }
  bool Key(const Ch* s, rapidjson::SizeType n, bool) {
    if (depth == kTop) key.assign(s, n);
    return true;
  }
  bool Start(rapidjson::Type type) {
    if (!Open()) return false;
    if (rows) {
      stack.emplace_back(type);
    } else if (depth == kRows && type == rapidjson::kArrayType && IsBundleRowKey(key)) {
      rows = true;
      index = 0;
    }
    return true;
  }
  bool StartObject() { return Start(rapidjson::kObjectType); }
  bool StartArray() { return Start(rapidjson::kArrayType); }
  bool End() {
    if (rows && depth == kRows) {
      rows = false;
    } else if (rows) {
      JsonValue v(std::move(stack.back()));
      stack.pop_back();
      --depth;
      return Put(std::move(v));
    }
    --depth;
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool EndArray(rapidjson::SizeType) { return End(); }
};

}  // namespace

bool IsBundleRowKey(std::string_view key) {
  return key == "process_samples" || key == "thread_samples" || key == "traffic" ||
         key == "sched" || key == "step_counts";
}

Status ReadBundleHead(const std::string& path, std::FILE* file, int64_t size, JsonDocument* head) {
  std::vector<char> buffer(kBufferBytes);
  rapidjson::FileReadStream in(file, buffer.data(), buffer.size());
  HeadFilter h(*head);
  rapidjson::ParseResult r;
  auto run = [&](JsonDocument&) {
    JsonReader reader;
    r = reader.Parse<rapidjson::kParseIterativeFlag>(in, h);
    return !r.IsError();
  };
  head->Populate(run);
  if (h.too_many) {
    return InvalidInput("{}: byte {}: more than {} values outside the sample rows", path,
                        r.Offset(), kMaxBundleHeadValues);
  }
  TFDIAG_RETURN_IF_ERROR(JsonParseStatus(path, r, h.too_deep));
  // FileReadStream reads a NUL as the end of the text: one before the file's end is an error.
  if (static_cast<int64_t>(in.Tell()) < size) {
    return InvalidInput("{}: byte {}: a NUL byte; expected JSON text", path, in.Tell());
  }
  return OkStatus();
}

Status ReadBundleRows(
    const std::string& path, std::FILE* file,
    const std::function<Status(std::string_view key, size_t index, const JsonValue& row)>& each) {
  std::vector<char> buffer(kBufferBytes);
  rapidjson::FileReadStream in(file, buffer.data(), buffer.size());
  RowReader h(each);
  JsonReader reader;
  const rapidjson::ParseResult r = reader.Parse<rapidjson::kParseIterativeFlag>(in, h);
  if (!h.error.ok()) return h.error;
  return JsonParseStatus(path, r, h.too_deep);
}

}  // namespace tfdiag
