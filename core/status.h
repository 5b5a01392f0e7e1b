// Status and StatusOr: the error type of every fallible tfdiag call.
//
// A Status is either OK or carries a code and a one-line message that already names the file,
// byte offset or field at fault (e.g. "trace.json: byte 1832: expected ',' or ']'"). Only
// cli/main.cc maps codes to process exit codes (kInvalidInput and kUsage -> 2).
// Thread-safety: plain values; safe to copy between threads.
#pragma once

#include <fmt/format.h>

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace tfdiag {

enum class StatusCode {
  kOk = 0,
  kInvalidInput,  // malformed or unsupported input file (exit code 2)
  kUsage,         // bad command-line usage (exit code 2)
  kIo,            // file could not be opened, read or written (exit code 2)
  kNotFound,      // a named entity (rule, file, process) does not exist
  kUnavailable,   // a capability the machine lacks (BPF rights, BTF, ...)
  kInternal,      // a bug in tfdiag
};

// An OK status or an error code plus a human-readable, single-line message.
class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "prefix: message" (e.g. to add a file name).
  Status WithPrefix(const std::string& prefix) const {
    if (ok()) return *this;
    return Status(code_, prefix + ": " + message_);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status OkStatus() { return Status(); }

template <typename... Args>
Status InvalidInput(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInvalidInput, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status UsageError(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kUsage, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status IoError(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kIo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status NotFound(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
Status Internal(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
}

// Either a value of T or a non-OK Status. Accessing value() of an error is a bug (asserts).
template <typename T>
class StatusOr {
 public:
  StatusOr(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  StatusOr(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    assert(!status_.ok() && "StatusOr built from an OK status");
  }

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace tfdiag

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define TFDIAG_RETURN_IF_ERROR(expr) \
  do {                               \
    ::tfdiag::Status _st = (expr);   \
    if (!_st.ok()) return _st;       \
  } while (0)
