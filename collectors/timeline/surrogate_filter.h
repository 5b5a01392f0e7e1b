// LoneSurrogateFilter: a RapidJSON input stream over another (InputStream, a chunk's span) that
// rewrites each lone UTF-16 surrogate escape inside a JSON string, a "\ud800" not followed by a
// "\udc00".."\udfff" escape or a "\udc00" on its own, to "\ufffd" (U+FFFD), and counts them.
// RapidJSON's reader rejects such a string (kParseErrorStringUnicodeSurrogateInvalid), so one
// damaged event name rejected a whole timeline; the fast tokenizer (fast_json.h) reads them as
// U+FFFD the same way. The replacement has the escape's length (6 bytes), so every offset
// (Tell(), error positions) is the underlying stream's. Escaped backslashes ("\\ud800" is text)
// and bytes outside strings are passed through untouched.
// Thread-safety: one reader per instance, as the stream it wraps.
#pragma once

#include <cstddef>
#include <string>

namespace tfdiag {

template <typename In>
class LoneSurrogateFilter {
 public:
  using Ch = char;
  explicit LoneSurrogateFilter(In& in) : in_(in) {}

  // Bytes other than a backslash inside a string come straight from the input (no copy).
  char Peek() {
    if (out_pos_ < out_.size()) return out_[out_pos_];
    if (back_.empty()) {
      const char c = in_.Peek();
      if (c != '\\' || !in_string_) return c;
    }
    return Pull() ? out_[out_pos_] : '\0';
  }
  char Take() {
    if (out_pos_ < out_.size()) return out_[out_pos_++];
    if (back_.empty()) {
      const char c = in_.Peek();
      if (c != '\\' || !in_string_) {
        if (c == '"') in_string_ = !in_string_;
        return in_.Take();
      }
    }
    return Pull() ? out_[out_pos_++] : '\0';
  }
  size_t Tell() const { return in_.Tell() - back_.size() - (out_.size() - out_pos_); }
  char* PutBegin() { return nullptr; }
  void Put(char) {}
  void Flush() {}
  size_t PutEnd(char*) { return 0; }

  // Lone surrogate escapes rewritten so far.
  size_t lone_surrogates() const { return lone_; }

 private:
  // The next byte of the input (pushed-back bytes first) without taking it; '\0' at the end (or a
  // NUL byte, which the reader then reports).
  char PeekIn() { return back_.empty() ? in_.Peek() : back_.back(); }
  char TakeIn() {
    if (back_.empty()) return in_.Take();
    const char c = back_.back();
    back_.pop_back();
    return c;
  }
  // Gives back `s` (bytes taken too far), to be read again first.
  void PushBack(const std::string& s) { back_.append(s.rbegin(), s.rend()); }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // Takes "XXXX" (4 hex digits) into *raw and their value into *v; false (bytes read so far
  // left in *raw) when one is not a hex digit.
  bool TakeHex4(std::string* raw, unsigned* v) {
    *v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = PeekIn();
      const int d = Hex(c);
      if (d < 0) return false;
      raw->push_back(TakeIn());
      *v = *v << 4 | static_cast<unsigned>(d);
    }
    return true;
  }

  // Moves the next piece of input into out_: one byte, or a whole \u escape (or pair). False at
  // the end of the input.
  bool Pull() {
    out_.clear();
    out_pos_ = 0;
    const char c = PeekIn();
    if (c == '\0') return false;
    out_.push_back(TakeIn());
    if (!in_string_) {
      in_string_ = c == '"';
      return true;
    }
    if (c == '"') {
      in_string_ = false;
      return true;
    }
    if (c != '\\') return true;
    const char e = PeekIn();
    if (e == '\0') return true;
    out_.push_back(TakeIn());
    if (e != 'u') return true;  // \" \\ \n ...: one escape, passed on whole
    std::string hex;
    unsigned v = 0;
    if (!TakeHex4(&hex, &v)) {  // malformed: the reader names it
      out_ += hex;
      return true;
    }
    if (v >= 0xDC00 && v <= 0xDFFF) return Lone();
    if (v < 0xD800 || v > 0xDBFF) {
      out_ += hex;
      return true;
    }
    // A high surrogate: a pair only if "\u" and a low surrogate follow.
    std::string next;
    if (PeekIn() == '\\') {
      next.push_back(TakeIn());
      if (PeekIn() == 'u') {
        next.push_back(TakeIn());
        unsigned lo = 0;
        if (TakeHex4(&next, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
          out_ += hex + next;
          return true;
        }
      }
    }
    PushBack(next);  // read again as what it is (another escape, perhaps another surrogate)
    return Lone();
  }
  bool Lone() {
    out_ = "\\ufffd";
    ++lone_;
    return true;
  }

  In& in_;
  std::string out_;  // bytes ready for the reader
  size_t out_pos_ = 0;
  std::string back_;  // pushed-back input, last byte first
  bool in_string_ = false;
  size_t lone_ = 0;
};

}  // namespace tfdiag
