// A bundle (core/bundle.h) read as a stream, in two passes over the file through a 64 KiB
// buffer (RapidJSON's iterative SAX reader, https://rapidjson.org/md_doc_sax.html): the head
// (schema, meta, tasks, processes, the *_columns lists: everything but the sample rows) as a
// DOM, then the sample rows one at a time. Memory is the head's DOM plus one row, whatever the
// number of rows (issue 48: a 2 GiB bundle read whole took 2 GB); the rows' values go straight
// into the CaptureBuilder. Errors name the file and the byte offset (RapidJSON's) or the field.
// Thread-safety: reentrant.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

#include "core/json_dom.h"
#include "core/status.h"

namespace tfdiag {

// The top-level keys whose arrays hold the sample rows, streamed by ReadBundleRows.
bool IsBundleRowKey(std::string_view key);

// Values the head may hold outside the rows (a cluster bundle's thousands of processes hold
// tens of thousands): past this the file is refused, so the head's DOM stays bounded.
constexpr size_t kMaxBundleHeadValues = size_t{1} << 22;

// Pass 1: reads `file` (open, at its start; `size` bytes) into `head`, each row key's array left
// empty. Errors: kInvalidInput "<path>: byte <N>: <RapidJSON's message>", "... nesting deeper
// than 64 arrays and objects", "<path>: byte <N>: more than 4194304 values outside the sample
// rows", "<path>: byte <N>: a NUL byte; expected JSON text" (the stream ends at a NUL: nothing
// after one is left unread silently).
Status ReadBundleHead(const std::string& path, std::FILE* file, int64_t size, JsonDocument* head);

// Pass 2: reads `file` (open, at its start) again and calls `each(key, index, row)` for every
// element of every row key's top-level array, in file order (`row` is valid during the call
// only). The first error `each` returns stops the read and is returned; else the parse's own.
Status ReadBundleRows(
    const std::string& path, std::FILE* file,
    const std::function<Status(std::string_view key, size_t index, const JsonValue& row)>& each);

}  // namespace tfdiag
