#include "collectors/runmetadata/text_blocks.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace tfdiag {

namespace {

// Characters off a FILE* with one character of look-ahead, counting lines and columns.
class Reader {
 public:
  explicit Reader(std::FILE* f) : f_(f), buf_(1 << 20) {}
  int Peek() {
    if (pos_ == len_) Fill();
    return pos_ < len_ ? static_cast<unsigned char>(buf_[pos_]) : EOF;
  }
  int Get() {
    const int c = Peek();
    if (c == EOF) return c;
    ++pos_;
    ++bytes_;
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    return c;
  }
  int line() const { return line_; }
  int col() const { return col_; }
  int64_t bytes() const { return bytes_; }
  bool error() const { return std::ferror(f_) != 0; }

 private:
  void Fill() {
    pos_ = 0;
    len_ = std::fread(buf_.data(), 1, buf_.size(), f_);
  }
  std::FILE* f_;
  std::vector<char> buf_;
  size_t pos_ = 0, len_ = 0;
  int line_ = 1, col_ = 1;
  int64_t bytes_ = 0;
};

class Scanner {
 public:
  Scanner(Reader* r, const std::string& path, const std::vector<std::string>& nesting,
          const std::string& what, const std::function<Status(std::string_view, int)>& on_block)
      : r_(*r), path_(path), nesting_(nesting), what_(what), on_block_(on_block) {}

  // The fields of a message until `close` (0: the end of the file) at nesting level `level`.
  Status Fields(size_t level, int close, int open_line) {
    while (true) {
      SkipSpace(true);
      const int c = r_.Peek();
      if (c == EOF) {
        if (close == 0) return OkStatus();
        return Error(
            fmt::format("expected '{}' closing the block opened at line {}, found the "
                        "end of the file (truncated)",
                        static_cast<char>(close), open_line));
      }
      if (c == close) {
        r_.Get();
        return OkStatus();
      }
      std::string name;
      TFDIAG_RETURN_IF_ERROR(Name(&name));
      SkipSpace(false);
      bool colon = false;
      if (r_.Peek() == ':') {
        colon = true;
        r_.Get();
        SkipSpace(false);
      }
      const int v = r_.Peek();
      if (v == '{' || v == '<') {
        const int line = r_.line();
        r_.Get();
        const int end = v == '{' ? '}' : '>';
        const bool on_path = level < nesting_.size() && name == nesting_[level];
        depth_ = level + 1;
        if (on_path && level + 1 < nesting_.size()) {
          TFDIAG_RETURN_IF_ERROR(Fields(level + 1, end, line));
        } else if (on_path) {
          body_.clear();
          TFDIAG_RETURN_IF_ERROR(Block(end, line, &body_));
          TFDIAG_RETURN_IF_ERROR(on_block_(body_, line));
        } else {
          TFDIAG_RETURN_IF_ERROR(Block(end, line, nullptr));
        }
      } else if (!colon) {
        return Error(fmt::format("expected ':' or a '{{' block after field '{}'", name));
      } else {
        TFDIAG_RETURN_IF_ERROR(Scalar(name));
      }
    }
  }

 private:
  Status Error(const std::string& what) const {
    if (r_.error()) return IoError("{}: read error: {}", path_, std::strerror(errno));
    return InvalidInput("{}: line {} column {}: {} (expected a {} in protobuf text format)", path_,
                        r_.line(), r_.col(), what, what_);
  }

  // Whitespace and comments; with `separators`, also the optional ',' or ';' between fields.
  void SkipSpace(bool separators) {
    while (true) {
      const int c = r_.Peek();
      if (c == '#') {
        while (r_.Peek() != EOF && r_.Peek() != '\n') r_.Get();
      } else if (c != EOF && (std::isspace(c) || (separators && (c == ',' || c == ';')))) {
        r_.Get();
      } else {
        return;
      }
    }
  }

  // A field name: an identifier, or an extension / Any type name in [...].
  Status Name(std::string* name) {
    const int c = r_.Peek();
    if (c == '[') {
      while (r_.Peek() != EOF && r_.Peek() != ']') name->push_back(static_cast<char>(r_.Get()));
      if (r_.Get() != ']') return Error("expected ']' closing an extension name");
      name->push_back(']');
      return OkStatus();
    }
    while (r_.Peek() != EOF && (std::isalnum(r_.Peek()) || r_.Peek() == '_')) {
      name->push_back(static_cast<char>(r_.Get()));
    }
    if (name->empty()) {
      return Error(c == EOF ? std::string("expected a field name, found the end of the file")
                            : fmt::format("expected a field name, found '{}'",
                                          std::isprint(c) ? static_cast<char>(c) : '?'));
    }
    return OkStatus();
  }

  // A quoted string, its quote next; appended to `out` (quotes and escapes kept) if set.
  Status String(std::string* out) {
    const int quote = r_.Get();
    if (out) out->push_back(static_cast<char>(quote));
    while (true) {
      const int c = r_.Peek();
      if (c == EOF || c == '\n') return Error("expected the end of a quoted string");
      r_.Get();
      if (out) out->push_back(static_cast<char>(c));
      if (c == quote) return OkStatus();
      if (c == '\\') {
        const int e = r_.Get();
        if (e == EOF) return Error("expected the end of a quoted string");
        if (out) out->push_back(static_cast<char>(e));
      }
    }
  }

  // A scalar value: strings (adjacent ones concatenate), a [list], or a token.
  Status Scalar(const std::string& name) {
    int c = r_.Peek();
    if (c == '"' || c == '\'') {
      while (r_.Peek() == '"' || r_.Peek() == '\'') {
        TFDIAG_RETURN_IF_ERROR(String(nullptr));
        SkipSpace(false);
      }
      return OkStatus();
    }
    if (c == '[') {
      r_.Get();
      while ((c = r_.Peek()) != ']') {
        if (c == EOF) return Error("expected ']' closing the list of '" + name + "'");
        if (c == '"' || c == '\'') {
          TFDIAG_RETURN_IF_ERROR(String(nullptr));
        } else {
          r_.Get();
        }
      }
      r_.Get();
      return OkStatus();
    }
    int n = 0;
    while ((c = r_.Peek()) != EOF &&
           (std::isalnum(c) || c == '-' || c == '+' || c == '.' || c == '_')) {
      r_.Get();
      ++n;
    }
    if (n == 0) return Error("expected a value for field '" + name + "'");
    return OkStatus();
  }

  // A block's contents up to its `close` (the opening bracket read); into `out` if set.
  Status Block(int close, int open_line, std::string* out) {
    std::vector<char> closers{static_cast<char>(close)};
    while (true) {
      const int c = r_.Peek();
      if (c == EOF) {
        return Error(
            fmt::format("expected '{}' closing the block opened at line {}, found the "
                        "end of the file (truncated)",
                        closers.back(), open_line));
      }
      if (c == '"' || c == '\'') {
        TFDIAG_RETURN_IF_ERROR(String(out));
        continue;
      }
      if (c == '#') {  // a comment may hold brackets and quotes
        while (r_.Peek() != EOF && r_.Peek() != '\n') r_.Get();
        continue;
      }
      r_.Get();
      if (c == '{' || c == '<') {
        // Bounded: libprotobuf's text parser recurses per nested message (and per nested
        // unknown field it skips), so 20,000 levels overflow the stack.
        if (closers.size() + depth_ >= kMaxTextDepth) {
          return Error(fmt::format("nesting deeper than {} messages", kMaxTextDepth));
        }
        closers.push_back(c == '{' ? '}' : '>');
      } else if (c == '}' || c == '>') {
        if (c != closers.back()) {
          return Error(
              fmt::format("expected '{}', found '{}'", closers.back(), static_cast<char>(c)));
        }
        closers.pop_back();
        if (closers.empty()) return OkStatus();
      }
      if (out) out->push_back(static_cast<char>(c));
    }
  }

  Reader& r_;
  const std::string& path_;
  const std::vector<std::string>& nesting_;
  const std::string& what_;
  const std::function<Status(std::string_view, int)>& on_block_;
  std::string body_;
  size_t depth_ = 0;  // blocks open around the one Block() reads
};

}  // namespace

Status ScanTextBlocks(const std::string& path, const std::vector<std::string>& nesting,
                      const std::string& what_message,
                      const std::function<Status(std::string_view body, int line)>& on_block,
                      int64_t* bytes) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return IoError("{}: cannot open: {}", path, std::strerror(errno));
  Reader r(f.get());
  Scanner s(&r, path, nesting, what_message, on_block);
  TFDIAG_RETURN_IF_ERROR(s.Fields(0, 0, 0));
  if (r.error()) return IoError("{}: read error", path);
  if (bytes != nullptr) *bytes = r.bytes();
  return OkStatus();
}

}  // namespace tfdiag
