// SpooledInputs: inputs that cannot be read twice, such as a pipe (`tfdiag analyze <(kubectl exec
// ... cat timeline.json)`), /dev/stdin or "-", copied into temporary regular files first. tfdiag
// reads an input more than once (probing whether it is a bundle or a manifest, the fast parse and,
// when that gives up, RapidJSON for the exact error), and plain files are mapped into memory,
// which needs a regular file.
//
// The copies go to $TMPDIR (else /tmp) as tfdiag-input-XXXXXX, are unlinked as soon as they are
// created, and are read through /proc/self/fd/N while their descriptor stays open: nothing is
// left behind however the run ends (an error, Ctrl-C, a kill or a crash). The destructor closes
// them. Linux only (/proc), as is tfdiag.
// Thread-safety: none; one instance per command run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tfdiag {

class SpooledInputs {
 public:
  SpooledInputs() = default;
  ~SpooledInputs();
  SpooledInputs(const SpooledInputs&) = delete;
  SpooledInputs& operator=(const SpooledInputs&) = delete;

  // Replaces every path in *paths that is not a regular file or a directory ("-" meaning standard
  // input) by a temporary copy of its bytes ("/proc/self/fd/N"); "-" on a regular file becomes
  // /dev/stdin. Errors: kInvalidInput if one pipe or standard input is given twice; kIo, naming the
  // input (read or write failure, e.g. a full disk); the copies made so far are closed by the
  // destructor.
  Status Spool(std::vector<std::string>* paths);
  // The name the user gave for `path` (`path` itself if it is not a copy).
  const std::string& NameOf(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, std::string>> copies_;   // (/proc/self/fd/N, given name)
  std::vector<int> fds_;                                      // the copies' descriptors
  std::vector<std::pair<std::string, std::string>> renamed_;  // ("/dev/stdin", "-"): not copies
};

}  // namespace tfdiag
