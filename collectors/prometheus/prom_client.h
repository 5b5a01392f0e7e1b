// A small client for the Prometheus HTTP API (instant and range queries), on libcurl (loaded by
// the first Create(), curl_api.h).
//
// API: https://prometheus.io/docs/prometheus/latest/querying/api/ ; queries are POSTed as
// application/x-www-form-urlencoded (the API accepts POST for /api/v1/query and
// /api/v1/query_range, which keeps long pod regexes out of URL length limits). Responses are
// {"status":"success","data":{"resultType":"vector"|"matrix","result":[...]}} read with RapidJSON.
//
// Errors (all exit 2 in the CLI): kIo for a server that cannot be reached, a timeout (per request,
// or the client's whole-run deadline), HTTP 401/403 (says which auth flag to check) or another
// HTTP error; kInvalidInput for a reply that is not the Prometheus API (names the URL and what
// was expected), a PromQL error (with the query), a reply past max_bytes or max_series (names
// the cap), nesting deeper than kMaxJsonDepth (core/json_dom.h) or a sample time that is no Unix
// time (names the series). Thread-safety: one client per thread (the curl handle is not shared).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tfdiag {

struct CurlApi;

// How to reach the server, as Prometheus clients (promtool, Grafana) name it.
struct PromClientOptions {
  std::string url;                // "http://127.0.0.1:9090" (a path prefix is kept)
  std::string bearer_token_file;  // "Authorization: Bearer <file contents, trimmed>"
  std::string basic_auth;         // "USER:PASSFILE": user name and a file holding the password
  std::string ca_file;            // PEM bundle for https
  bool insecure_skip_verify = false;
  double timeout_s = 30;  // per request, connect included
  // The whole run (every request of one client, from Create()) ends after this; 0: 4 x timeout_s.
  double deadline_s = 0;
  // Caps per reply: body bytes (--prometheus-max-bytes; the DOM and series built from a reply
  // take a few times its size) and series (a job's pods, or pods x resources).
  int64_t max_bytes = int64_t{128} << 20;
  int64_t max_series = 100'000;
};

// One series of a reply: its labels and its points (Unix seconds, value).
struct PromSeries {
  std::map<std::string, std::string> labels;
  std::vector<std::pair<double, double>> points;  // one point for an instant vector
  std::string Label(const std::string& k) const {
    auto it = labels.find(k);
    return it == labels.end() ? std::string() : it->second;
  }
};

// What was sent, for `-f json` and the bundle.
struct PromQueryLog {
  std::string kind;   // "query" or "query_range"
  std::string query;  // PromQL as sent
  double time_s = 0;  // evaluation time (instant) or start (range), Unix seconds
  double end_s = 0, step_s = 0;
  int64_t bytes = 0;  // bytes of the reply body
  int series = 0;     // series returned
  double wall_s = 0;  // time the request took
};

// What BuildVersion returns for a server whose buildinfo names no version.
inline constexpr const char* kUnknownServerVersion = "version unknown";

class PromClient {
 public:
  // Errors: kUsage for a URL that is not http(s) or unreadable auth files; kInternal when
  // libcurl cannot be loaded (LoadCurl()).
  static StatusOr<std::unique_ptr<PromClient>> Create(const PromClientOptions& o);
  ~PromClient();
  PromClient(const PromClient&) = delete;
  PromClient& operator=(const PromClient&) = delete;

  // An instant query evaluated at `time_s` (Unix seconds).
  StatusOr<std::vector<PromSeries>> Query(const std::string& promql, double time_s);
  // A range query over [start_s, end_s] every step_s seconds.
  StatusOr<std::vector<PromSeries>> QueryRange(const std::string& promql, double start_s,
                                               double end_s, double step_s);
  // GET /api/v1/status/buildinfo: the server's version, proving it speaks the Prometheus HTTP
  // API ({"status":"success","data":{...}}); kUnknownServerVersion when data has no version (a
  // PromQL-compatible store such as VictoriaMetrics 1.79). Errors as above.
  StatusOr<std::string> BuildVersion();

  const std::vector<PromQueryLog>& log() const { return log_; }
  int64_t bytes_received() const;

 private:
  PromClient() = default;
  // Percent-encodes `s` for a form body. Errors: kInvalidInput when libcurl refuses it (past
  // its 8 MB input limit, CURL_MAX_INPUT_LENGTH).
  StatusOr<std::string> Escape(const std::string& s, const std::string& what);
  // POSTs `form` to `path` (or GETs when form is empty); returns the body of a 2xx/4xx reply
  // that carries the API's JSON (Prometheus answers bad queries with 400 and a JSON error).
  StatusOr<std::string> Request(const std::string& path, const std::string& form,
                                const std::string& what);
  StatusOr<std::vector<PromSeries>> Run(PromQueryLog entry, const std::string& path,
                                        const std::string& form);

  PromClientOptions o_;
  double deadline_at_ = 0;  // steady-clock seconds when the run's deadline passes
  std::string auth_header_, user_, password_;
  const CurlApi* curl_api_ = nullptr;  // set by Create()
  void* curl_ = nullptr;
  std::vector<PromQueryLog> log_;
};

// Escapes a label value for a PromQL string literal ("a\"b").
std::string PromQuote(const std::string& s);
// Escapes RE2 metacharacters so `s` matches itself inside a regex matcher.
std::string PromRegexEscape(const std::string& s);

}  // namespace tfdiag
