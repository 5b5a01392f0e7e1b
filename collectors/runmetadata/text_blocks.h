// A small scanner of protobuf text format (what `str(run_metadata)` and
// google.protobuf.text_format.MessageToString write) that hands over the blocks of one nested
// field one at a time, so that a large text RunMetadata is parsed one DeviceStepStats at a time
// by libprotobuf's TextFormat and never whole. It knows only the text format's lexical rules
// (https://protobuf.dev/reference/protobuf/textformat-spec/): field names, `:` before scalars,
// messages in `{...}` or `<...>`, strings in '...' or "..." with backslash escapes, `#`
// comments, `,`/`;` separators, `[...]` lists and extension names. Fields off the path are
// skipped by their brackets (their contents are not validated).
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// Deepest nesting of messages accepted (a DeviceStepStats nests 4 levels; TensorFlow's own
// parsers stop at 100, protobuf's binary default).
constexpr size_t kMaxTextDepth = 64;

// Reads `path` in chunks and calls `on_block(body, line)` for every block of the field at
// `nesting` ({"step_stats", "dev_stats"}: the dev_stats inside a top-level step_stats), where
// `body` is the text between the block's brackets and `line` the 1-based line of its opening
// bracket. Memory: the largest such block, plus a read buffer. `*bytes` receives the file's
// size. Errors: kIo when the file cannot be read; kInvalidInput "<path>: line L column C: <what
// was expected> (expected a <what_message> in protobuf text format)" for unbalanced brackets,
// an unterminated string, a missing field name or `:`, "nesting deeper than 64 messages";
// `on_block`'s own errors as they are.
Status ScanTextBlocks(const std::string& path, const std::vector<std::string>& nesting,
                      const std::string& what_message,
                      const std::function<Status(std::string_view body, int line)>& on_block,
                      int64_t* bytes);

}  // namespace tfdiag
