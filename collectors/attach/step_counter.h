// A TF task's own step counter, read by `tfdiag attach` when the task exports one: a regular file
// whose name ends in ".tfdiag-steps", held open by the task, holding the steps it has completed
// as ASCII decimal (leading spaces allowed, a newline after), rewritten in place at offset 0
// (samples/psload --step-file writes one). attach finds it among the task's open files
// (/proc/PID/fd, readable with the same rights as /proc/PID/environ, which discovery needs
// anyway) and reads it through /proc/PID/fd/N, so the file's path need not be visible from
// attach's mount namespace. Nothing else of the process is read (no environment, no memory).
// Thread-safety: reentrant.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "core/status.h"

namespace tfdiag {

constexpr char kStepFileSuffix[] = ".tfdiag-steps";

// The task's step counter file: its fd number and its path as the task sees it.
struct StepFile {
  int fd = -1;
  std::string path;
};

// Looks through /proc/PID/fd (under `root`, "/" normally) for an open file whose path ends in
// kStepFileSuffix. Returns fd -1 when there is none or the fd table cannot be read.
StepFile FindStepFile(const std::string& root, pid_t pid);

// Reads the count from /proc/PID/fd/FD: only when it is a regular file (a FIFO, device or socket
// is never opened, so it cannot block), opened O_NONBLOCK, at most 64 bytes per read, and the
// reads run on a helper thread given 200 ms (BoundedRead: a file on a FUSE mount the task
// serves cannot stall the caller). Errors: kIo when it cannot be opened or read (the task
// exited or closed it), kInvalidInput when the text is not a count ("<path>: byte N: ..."),
// kUnavailable when it is not a regular file or the read did not return in time (do not try
// this task's file again).
StatusOr<int64_t> ReadStepCount(const std::string& root, pid_t pid, const StepFile& file);

// Parses a step counter file's text: optional spaces, decimal digits, optional whitespace.
// Errors: kInvalidInput naming the byte offset of the first unexpected byte, or an empty count.
StatusOr<int64_t> ParseStepCount(const std::string& text, const std::string& where);

}  // namespace tfdiag
