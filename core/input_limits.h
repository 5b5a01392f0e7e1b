// Budgets for what a file or a workload controls, enforced where the bytes enter (issue 37): one
// JSON string's length, the decompressed size of a gzip stream against its compressed size, the
// size of a manifest or pod list. docs/hostile-inputs.md lists them and how their errors read.
// Thread-safety: constants and stateless types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <new>

namespace tfdiag {

// Longest JSON string (a key or a value, after unescaping) any trace reader accepts. TF event
// names and args are at most a few KB (an XLA fusion's long_name reaches ~100 KB); a 1 GiB string
// in a 1 MB .trace.json.gz took 6 GB and 51 s to import.
constexpr size_t kMaxJsonStringBytes = size_t{16} << 20;

// A gzip stream may inflate to kMaxInflateRatio times the compressed bytes read so far once it
// has produced kInflateRatioFreeBytes: TF trace JSON compresses 5-30x (timestamps and ids differ
// from event to event); deflate's ceiling is ~1032x, reached only by repeated bytes (a bomb).
constexpr int64_t kMaxInflateRatio = 200;
constexpr int64_t kInflateRatioFreeBytes = int64_t{256} << 20;

// True when `produced` decompressed bytes from `compressed` compressed ones exceed the ratio
// budget above.
constexpr bool InflateRatioExceeded(int64_t produced, int64_t compressed) {
  return produced > kInflateRatioFreeBytes && produced > kMaxInflateRatio * compressed;
}

// Largest Kubernetes manifest or pod list (`kubectl get pods -o json`) read, in bytes: a pod
// list of 5,000 pods is ~75 MB. Checked on the file's size before reading it.
constexpr int64_t kMaxK8sFileBytes = int64_t{256} << 20;

// Thrown by CappedStackAllocator when RapidJSON's reader stack (which holds the string being
// read) would pass kMaxJsonStringBytes; the caller catches it and reports the offset.
struct JsonStringTooLong : std::exception {
  const char* what() const noexcept override { return "a JSON string longer than the limit"; }
};

// A RapidJSON stack allocator (the reader's StackAllocator parameter) that refuses to grow past
// twice kMaxJsonStringBytes, throwing JsonStringTooLong; allocation failures throw
// std::bad_alloc. In a SAX parse without kParseIterativeFlag the stack holds only the string
// (or raw number) being read, so this stops one string while the bytes stream in, at most
// 32 MiB into it. The stack grows 1.5x at a time, so a string within kMaxJsonStringBytes never
// reaches the cap; the handler checks the exact length of the strings that stay under it.
class CappedStackAllocator {
 public:
  static const bool kNeedFree = true;
  static constexpr size_t kCap = 2 * kMaxJsonStringBytes;
  void* Malloc(size_t size) {
    if (size == 0) return nullptr;
    if (size > kCap) throw JsonStringTooLong();
    void* p = std::malloc(size);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void* Realloc(void* old, size_t, size_t size) {
    if (size == 0) {
      std::free(old);
      return nullptr;
    }
    if (size > kCap) throw JsonStringTooLong();
    void* p = std::realloc(old, size);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  static void Free(void* p) { std::free(p); }
};

}  // namespace tfdiag
