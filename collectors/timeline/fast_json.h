// FastJsonParse: a SAX tokenizer for the common case of trace files, several times faster than
// RapidJSON's Reader over a byte stream: it scans a large contiguous buffer with SSE2, hands
// strings without escapes to the handler in place (no copy), and runs no per-byte stream checks.
//
// It drives a RapidJSON-style handler (StartObject, Key, String, RawNumber, Bool, Null,
// EndObject, StartArray, EndArray; numbers as raw text, as with kParseNumbersAsStringsFlag) with
// exactly the calls RapidJSON's Reader would make for the same document, and it accepts a subset
// of what that Reader accepts with tfdiag's flags: RFC 8259 JSON plus trailing commas. Anything
// else (a syntax error, NaN/Infinity, a NUL or control byte, a handler that returns false, a
// read error) returns false; the caller then parses the input again with RapidJSON, which yields
// the same result or the exact error and byte offset. So this is a fast path, never a second
// definition of the format.
//
// Input, either:
//  - a Source: `size_t Read(char* dst, size_t cap)` fills up to cap bytes, 0 at the end (or on
//    error); the parser copies through a window that it refills; or
//  - spans of memory read in place, in order, as one stream (no copy: a mapped file, an inflated
//    segment, a synthetic head and tail around them). A token must lie within one span: one that
//    runs into the next span makes the parse give up (false), so cut spans between tokens.
// Thread-safety: none; one call per source.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "collectors/timeline/fast_json_scan.h"
#include "core/input_limits.h"

namespace tfdiag {

namespace fast_json_internal {

// A piece of the input read in place (see the top of this file).
struct Span {
  const char* data;
  size_t size;
};

// The Source of a parser that reads spans only.
struct NoSource {
  size_t Read(char*, size_t) { return 0; }
};

// The parser over one source. Tokens never straddle the window: when one might, the unread tail
// is moved to the front and the window refilled (grown if a single token is larger).
template <typename Source, typename Handler>
class FastParser {
 public:
  FastParser(Source* src, Handler* h, size_t window = size_t{1} << 20)
      : src_(src), h_(h), buf_(window + 64), d_(buf_.data()) {}
  // Over `spans` in place (the list is copied; the bytes must outlive Run()).
  FastParser(std::vector<Span> spans, Handler* h) : src_(nullptr), h_(h), spans_(std::move(spans)) {
    span_ = 0;
    NextSpan();
  }
  // Calls `fn(offset)` (stream offset: every byte before it is consumed and never read again)
  // about every `every` bytes, between values; for releasing mapped pages behind the parser.
  void set_release(size_t every, std::function<void(size_t)> fn) {
    release_every_ = every;
    release_at_ = Tell() + every;
    release_ = std::move(fn);
  }

  bool Run() { return ParseDocument(); }
  // After Run() returned false: the input ended inside the root array, right after '[', an
  // element or a comma (a bare array left open, as Horovod writes it). Everything before was
  // handed to the handler.
  bool ended_in_root_array() const { return ended_in_root_array_; }
  // Lone UTF-16 surrogate escapes (\ud800 alone) read as U+FFFD so far.
  size_t lone_surrogates() const { return lone_surrogates_; }
  // Offset just past the last byte consumed, in the source's byte stream.
  size_t Tell() const { return base_ + static_cast<size_t>(pos_); }

 private:
  // Makes at least `need` bytes available from pos_ if the source has them.
  bool Ensure(size_t need) {
    if (end_ - pos_ >= need) return true;
    if (eof_) return false;
    Fill(need);
    return end_ - pos_ >= need;
  }
  // Moves the unread [pos_, end_) to the front of the buffer and reads until at least `need`
  // bytes are available from pos_, or the source ends. Over spans: moves to the next non-empty
  // span once the current one is consumed, else nothing (tokens never straddle spans).
  void Fill(size_t need) {
    if (src_ == nullptr) {
      if (pos_ == end_) NextSpan();
      return;
    }
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      base_ += pos_;
      end_ -= pos_;
      pos_ = 0;
    }
    if (buf_.size() < need + kMinRead) {
      buf_.resize(std::max(buf_.size() * 2, need + kMinRead));
      d_ = buf_.data();
    }
    while (!eof_ && end_ < need) {
      size_t n = src_->Read(buf_.data() + end_, buf_.size() - end_);
      if (n == 0) {
        eof_ = true;
        break;
      }
      end_ += n;
    }
  }
  // Span mode: makes the next non-empty span (from span_) current; eof_ on the last one.
  void NextSpan() {
    base_ += end_;
    pos_ = end_ = 0;
    while (span_ < spans_.size() && spans_[span_].size == 0) ++span_;
    if (span_ < spans_.size()) {
      d_ = spans_[span_].data;
      end_ = spans_[span_].size;
      ++span_;
    }
    size_t rest = span_;
    while (rest < spans_.size() && spans_[rest].size == 0) ++rest;
    eof_ = rest == spans_.size();
  }
  void MaybeRelease() {
    if (Tell() < release_at_) return;
    release_(Tell());
    release_at_ = Tell() + release_every_;
  }
  // ParseDocument's skip_ws when the window or span ended inside blanks: refills (the next span)
  // and skips on; false at the end of the input.
  bool SkipWsAcrossRefills() {
    while (true) {
      pos_ += SkipBlanks(d_ + pos_, d_ + end_);
      if (pos_ < end_) return true;
      if (eof_) return false;
      Fill(1);
      if (pos_ == end_) return false;
    }
  }

  bool ParseDocument();
  bool ParseString(bool key);
  bool ParseLiteral();

  static constexpr size_t kMinRead = 1 << 16;
  static constexpr size_t kMaxDepth = 4096;  // beyond it, RapidJSON's answer is the reference

  Source* src_;
  Handler* h_;
  std::vector<char> buf_;
  std::vector<Span> spans_;
  size_t span_ = 0;          // next span to read
  const char* d_ = nullptr;  // the window's bytes: buf_ or the current span
  size_t pos_ = 0, end_ = 0, base_ = 0;
  size_t release_every_ = 0, release_at_ = SIZE_MAX;
  std::function<void(size_t)> release_;
  bool eof_ = false;
  bool ended_in_root_array_ = false;
  std::string scratch_;  // unescaped strings
  size_t lone_surrogates_ = 0;
};

template <typename Source, typename Handler>
bool FastParser<Source, Handler>::ParseString(bool key) {
  ++pos_;            // the opening quote
  size_t plain = 0;  // bytes after pos_ known to hold no quote, backslash or control byte
  while (true) {
    plain += ScanString(d_ + pos_ + plain, d_ + end_);
    if (pos_ + plain < end_) break;
    // The window ends inside the string: read on, keeping it whole. Past the limit for one string
    // the reference parser (RapidJSON) takes over and names it.
    if (eof_ || plain > kMaxJsonStringBytes) return false;
    const size_t had = end_ - pos_;
    Fill(had + kMinRead);
    if (end_ - pos_ == had) return false;  // the input ends inside the string
  }
  if (d_[pos_ + plain] == '"') {
    const char* s = d_ + pos_;
    pos_ += plain + 1;
    auto len = static_cast<unsigned>(plain);
    return key ? h_->Key(s, len, false) : h_->String(s, len, false);
  }
  // Escapes: decode into scratch_.
  scratch_.assign(d_ + pos_, plain);
  pos_ += plain;
  while (true) {
    if (!Ensure(1)) return false;
    size_t n = ScanString(d_ + pos_, d_ + end_);
    if (scratch_.size() + n > kMaxJsonStringBytes) return false;
    scratch_.append(d_ + pos_, n);
    pos_ += n;
    if (pos_ == end_) continue;
    char c = d_[pos_];
    if (c == '"') {
      ++pos_;
      auto len = static_cast<unsigned>(scratch_.size());
      return key ? h_->Key(scratch_.data(), len, true) : h_->String(scratch_.data(), len, true);
    }
    if (c != '\\') return false;  // a control byte
    if (!Ensure(2)) return false;
    char e = d_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        scratch_.push_back(e);
        break;
      case 'b':
        scratch_.push_back('\b');
        break;
      case 'f':
        scratch_.push_back('\f');
        break;
      case 'n':
        scratch_.push_back('\n');
        break;
      case 'r':
        scratch_.push_back('\r');
        break;
      case 't':
        scratch_.push_back('\t');
        break;
      case 'u': {
        auto hex4 = [&](uint32_t* out) {
          if (!Ensure(4)) return false;
          uint32_t v = 0;
          for (int i = 0; i < 4; ++i) {
            int d = HexValue(d_[pos_ + i]);
            if (d < 0) return false;
            v = v << 4 | static_cast<uint32_t>(d);
          }
          pos_ += 4;
          *out = v;
          return true;
        };
        uint32_t cp;
        if (!hex4(&cp)) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate followed by \u and a low one is a pair; else it stands alone.
          uint32_t lo = 0;
          const bool pair = Ensure(6) && d_[pos_] == '\\' && d_[pos_ + 1] == 'u' &&
                            LowSurrogateAt(d_ + pos_ + 2, &lo);
          if (pair) {
            pos_ += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else {
            cp = kReplacementChar;
            ++lone_surrogates_;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = kReplacementChar;  // a lone low surrogate
          ++lone_surrogates_;
        }
        AppendUtf8(cp, &scratch_);
        break;
      }
      default:
        return false;
    }
  }
}

template <typename Source, typename Handler>
bool FastParser<Source, Handler>::ParseLiteral() {
  if (!Ensure(4)) return false;
  const char* p = d_ + pos_;
  if (std::memcmp(p, "true", 4) == 0) {
    pos_ += 4;
    return h_->Bool(true);
  }
  if (std::memcmp(p, "null", 4) == 0) {
    pos_ += 4;
    return h_->Null();
  }
  if (!Ensure(5) || std::memcmp(d_ + pos_, "false", 5) != 0) return false;
  pos_ += 5;
  return h_->Bool(false);
}

template <typename Source, typename Handler>
bool FastParser<Source, Handler>::ParseDocument() {
  // Iterative: a stack of open containers with their element counts, sized once: a push is two
  // plain stores (a push_back of a temporary read back whole what was written in two parts,
  // which stalled store forwarding on every object).
  struct Open {
    unsigned count;
    bool object;
  };
  std::vector<Open> stack(kMaxDepth);
  size_t depth = 0;
  // The cursor lives in registers: p = d_ + pos_ and e = d_ + end_. Kept in members, it would be
  // reloaded after every handler call (the compiler cannot know the handler leaves the parser
  // alone), on the critical path of every token. save() writes pos_ before anything that reads
  // it (the handler's Tell(), the out-of-line paths); load() follows those that move the window.
  const char* p = d_ + pos_;
  const char* e = d_ + end_;
  auto save = [&] { pos_ = static_cast<size_t>(p - d_); };
  auto load = [&] {
    p = d_ + pos_;
    e = d_ + end_;
  };
  // Skips blanks; false at the end of the input.
  auto skip_ws = [&]() __attribute__((always_inline)) {
    if (p < e && !IsWs(*p)) return true;  // compact JSON: no blanks
    // One space, as after ':' in pretty-printed JSON, without the vector scan.
    if (e - p > 1 && *p == ' ' && !IsWs(p[1])) return ++p, true;
    p += SkipBlanks(p, e);
    if (p < e) return true;
    save();
    const bool more = SkipWsAcrossRefills();
    load();
    return more;
  };
  // A string at p (its opening quote): in place when it has no escape and ends in the window.
  auto string = [&](bool key) __attribute__((always_inline)) {
    const char* s = p + 1;
    const size_t n = ScanString(s, e);
    if (n < static_cast<size_t>(e - s) && s[n] == '"') {
      p = s + n + 1;
      save();
      const auto len = static_cast<unsigned>(n);
      return key ? h_->Key(s, len, false) : h_->String(s, len, false);
    }
    save();
    const bool ok = ParseString(key);
    load();
    return ok;
  };
  // A number at p (its first byte); the whole token must be in the window (64 bytes of slack).
  auto number = [&]() __attribute__((always_inline)) {
    if (e - p < 64 && !eof_) {
      save();
      Ensure(64);
      load();
    }
    const size_t n = NumberLength(p, e, eof_);
    if (n == 0) return false;
    const char* b = p;
    p += n;
    save();
    return h_->RawNumber(b, static_cast<unsigned>(n), false);
  };
  auto literal = [&] {
    save();
    const bool ok = ParseLiteral();
    load();
    return ok;
  };

  if (!skip_ws()) return false;
  // States: expecting a value (after '[', ',' in an array, ':' or at the root).
  while (true) {
    // --- a value ---
    if (!skip_ws()) return false;
    if (base_ + static_cast<size_t>(p - d_) >= release_at_) {
      save();
      MaybeRelease();
    }
    const char c = *p;
    bool scalar = true;
    switch (c) {
      case '{':
        ++p;
        save();
        if (!h_->StartObject()) return false;
        if (depth >= kMaxDepth) return false;
        stack[depth].count = 0;
        stack[depth++].object = true;
        scalar = false;
        break;
      case '[':
        ++p;
        save();
        if (!h_->StartArray()) return false;
        if (depth >= kMaxDepth) return false;
        stack[depth].count = 0;
        stack[depth++].object = false;
        scalar = false;
        break;
      case '"':
        if (!string(false)) return false;
        break;
      case 't':
      case 'f':
      case 'n':
        if (!literal()) return false;
        break;
      default:
        if (c != '-' && (c < '0' || c > '9')) return false;
        if (!number()) return false;
        break;
    }
    // --- after a value, or just inside a container ---
    bool just_opened = !scalar;
    while (true) {
      if (depth == 0) {
        // The root is done: only whitespace may follow.
        if (skip_ws()) return save(), false;
        return save(), true;
      }
      Open& top = stack[depth - 1];
      // The input ending inside the root array, after '[', an element or a comma: what RapidJSON
      // reports as kParseErrorValueInvalid or kParseErrorArrayMissCommaOrSquareBracket at the end.
      const bool in_root_array = depth == 1 && !top.object;
      if (!skip_ws()) return ended_in_root_array_ = in_root_array, false;
      char d = *p;
      if (!just_opened) {
        ++top.count;
        if (d == ',') {
          ++p;
          if (!skip_ws()) return ended_in_root_array_ = in_root_array, false;
          d = *p;
          // Trailing comma (kParseTrailingCommasFlag): the container closes here.
          if (d != (top.object ? '}' : ']')) {
            if (top.object) {
              if (d != '"') return false;
              if (!string(true)) return false;
              if (!skip_ws() || *p != ':') return false;
              ++p;
            }
            break;  // parse the next value
          }
        }
      } else if (top.object && d == '"') {
        if (!string(true)) return false;
        if (!skip_ws() || *p != ':') return false;
        ++p;
        break;
      } else if (!top.object && d != ']') {
        break;  // the first element of an array
      }
      // Here d must close the container.
      if (d != (top.object ? '}' : ']')) return false;
      ++p;
      save();
      const unsigned n = top.count;
      const bool object = top.object;
      --depth;
      if (!(object ? h_->EndObject(n) : h_->EndArray(n))) return false;
      just_opened = false;
    }
  }
}

}  // namespace fast_json_internal

// FastJsonReader<Source, Handler> r(&src, &handler, window_bytes); r.Run() parses the whole of
// `src` (see the top of this file); r.Tell() is the stream offset just past the last byte
// consumed, which the handler may ask for during Run(): during a callback, just past that call's
// token (the closing quote, the last digit, the bracket). RapidJSON's stream agrees, except that
// after a trailing comma it calls EndObject/EndArray before taking the bracket (one byte less);
// TraceHandler's events_end() never meets that case (chunk tails follow an event's '}').
template <typename Source, typename Handler>
using FastJsonReader = fast_json_internal::FastParser<Source, Handler>;

// FastSpanReader<Handler> r({{p, n}, ...}, &handler): the same over spans of memory, in place.
template <typename Handler>
using FastSpanReader = fast_json_internal::FastParser<fast_json_internal::NoSource, Handler>;

}  // namespace tfdiag
