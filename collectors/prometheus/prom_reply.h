// The body of a Prometheus HTTP API query reply, read by a RapidJSON SAX handler straight into
// series: no DOM (which took 5-6 times the reply's size: a 112 MB matrix reply peaked at 690 MB),
// nesting past kMaxJsonDepth refused, and the series counted as they come so that a reply past
// the cap stops there. Shape (https://prometheus.io/docs/prometheus/latest/querying/api/):
//   {"status":"success"|"error", "error":"...", "data":{"resultType":"matrix"|"vector"|"scalar"|
//    "string", "result":[{"metric":{...}, "values":[[t,"v"],...]} | {"metric":{...},
//    "value":[t,"v"]}, ...] | [t,"v"]}}
// Members in any order; unknown members are skipped. Thread-safety: reentrant.
#pragma once

#include <string>
#include <vector>

#include "collectors/prometheus/prom_client.h"
#include "core/status.h"

namespace tfdiag {

// Sample times a reply may carry: Unix seconds in [0, 4e9] (to 2096), so that seconds x 1e9
// fits int64 nanoseconds.
constexpr double kMaxPromUnixSeconds = 4e9;

struct PromReply {
  std::string status;              // "success", "error"; "" when absent
  std::string error;               // the error message of a failed query
  std::string result_type;         // "matrix", "vector", "scalar", "string"
  bool has_result = false;         // data.result was an array
  std::vector<PromSeries> series;  // a scalar or string result: one unlabelled point
};

// Parses `text` (`size` bytes, NUL-terminated, modified in place) from `where` (the URL).
// Errors (kInvalidInput, each starting with `where`): "byte N: <JSON syntax error>" or "a NUL
// byte", "byte N:
// nesting deeper than 64 arrays and objects", "more than <max_series> series", a series without
// a "metric" object, a point that is not [time (Unix s, 0..4e9), value] (naming the series
// index).
StatusOr<PromReply> ParsePromReply(char* text, size_t size, const std::string& where,
                                   int64_t max_series);

}  // namespace tfdiag
