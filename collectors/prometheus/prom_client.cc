#include "collectors/prometheus/prom_client.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collectors/prometheus/curl_api.h"
#include "collectors/prometheus/prom_reply.h"
#include "core/json_dom.h"

namespace tfdiag {

namespace {

// A reply's body, bounded by PromClientOptions::max_bytes (after gzip decoding).
struct Body {
  std::string text;
  size_t max = 0;
  bool over = false;  // the reply went past `max`: the transfer was stopped
};

size_t Append(char* data, size_t size, size_t n, void* out) {
  auto* b = static_cast<Body*>(out);
  if (b->text.size() + size * n > b->max) {
    b->over = true;
    return 0;  // CURLE_WRITE_ERROR
  }
  b->text.append(data, size * n);
  return size * n;
}

// The headers of a reply, bounded: a Prometheus API reply has a few hundred bytes of them.
constexpr size_t kMaxHeaderBytes = 256 * 1024;
// libcurl's own bound on a reply's headers (curl 7.88's CURL_MAX_HTTP_HEADER, 100 KiB, for one
// line; 300 KiB in all), past which the transfer fails with "Too large response headers" (or
// CURLE_OUT_OF_MEMORY in older releases, CURLE_TOO_LARGE from curl 8.6).
constexpr size_t kCurlMaxHeaderBytes = 300 * 1024;
struct Headers {
  size_t bytes = 0;
  bool over = false;  // past kMaxHeaderBytes: the transfer was stopped
};
size_t CountHeader(char* /*data*/, size_t size, size_t n, void* out) {
  auto* h = static_cast<Headers*>(out);
  h->bytes += size * n;
  if (h->bytes > kMaxHeaderBytes) {
    h->over = true;
    return 0;  // CURLE_WRITE_ERROR
  }
  return size * n;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

StatusOr<std::string> ReadSecret(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return UsageError("{} {}: cannot read the file", flag, path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  if (s.empty()) return UsageError("{} {}: the file is empty", flag, path);
  return s;
}

std::string Num(double v) { return fmt::format("{:.3f}", v); }

}  // namespace

std::string PromQuote(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\' || ch == '"') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out;
}

std::string PromRegexEscape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (std::string_view(".+*?()|[]{}^$\\").find(ch) != std::string_view::npos) out += '\\';
    out += ch;
  }
  return out;
}

StatusOr<std::unique_ptr<PromClient>> PromClient::Create(const PromClientOptions& o) {
  if (o.url.rfind("http://", 0) != 0 && o.url.rfind("https://", 0) != 0) {
    return UsageError("--prometheus {}: expected an http:// or https:// URL", o.url);
  }
  if (!(o.timeout_s > 0) || o.timeout_s > 3600) {
    return UsageError("--prometheus-timeout {}: expected seconds in (0, 3600]", o.timeout_s);
  }
  if (o.max_bytes < 1024 || o.max_bytes > (int64_t{64} << 30)) {
    return UsageError("--prometheus-max-bytes {}: expected bytes in [1024, 64 GiB]", o.max_bytes);
  }
  StatusOr<const CurlApi*> api = LoadCurl();
  if (!api.ok()) return api.status();
  std::unique_ptr<PromClient> c(new PromClient());
  c->curl_api_ = *api;
  c->o_ = o;
  while (!c->o_.url.empty() && c->o_.url.back() == '/') c->o_.url.pop_back();
  if (!o.bearer_token_file.empty()) {
    StatusOr<std::string> t = ReadSecret(o.bearer_token_file, "--bearer-token-file");
    if (!t.ok()) return t.status();
    c->auth_header_ = "Authorization: Bearer " + *t;
  }
  if (!o.basic_auth.empty()) {
    const size_t colon = o.basic_auth.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == o.basic_auth.size()) {
      return UsageError("--basic-auth {}: expected USER:PASSFILE", o.basic_auth);
    }
    c->user_ = o.basic_auth.substr(0, colon);
    StatusOr<std::string> p = ReadSecret(o.basic_auth.substr(colon + 1), "--basic-auth");
    if (!p.ok()) return p.status();
    c->password_ = *p;
  }
  c->curl_ = c->curl_api_->easy_init();
  if (c->curl_ == nullptr) return Internal("curl_easy_init failed");
  if (!(c->o_.deadline_s > 0)) c->o_.deadline_s = 4 * o.timeout_s;
  c->deadline_at_ = Now() + c->o_.deadline_s;
  return c;
}

PromClient::~PromClient() {
  if (curl_ != nullptr) curl_api_->easy_cleanup(static_cast<CURL*>(curl_));
}

int64_t PromClient::bytes_received() const {
  int64_t n = 0;
  for (const PromQueryLog& q : log_) n += q.bytes;
  return n;
}

StatusOr<std::string> PromClient::Request(const std::string& path, const std::string& form,
                                          const std::string& what) {
  const CurlApi& api = *curl_api_;
  CURL* h = static_cast<CURL*>(curl_);
  api.easy_reset(h);
  const std::string url = o_.url + path;
  // One deadline for the run: a server slow on each of 14-27 queries must not take 27 timeouts.
  const double left = deadline_at_ - Now();
  auto deadline_passed = [&] {
    return IoError(
        "Prometheus at {}: the run's deadline of {:g} s (4 x --prometheus-timeout) passed before "
        "{} completed ({} queries answered)",
        o_.url, o_.deadline_s, what, log_.size());
  };
  if (left <= 0) return deadline_passed();
  const double timeout = std::min(o_.timeout_s, left);
  Body body;
  body.max = static_cast<size_t>(o_.max_bytes);
  char err[CURL_ERROR_SIZE] = {0};
  api.easy_setopt(h, CURLOPT_URL, url.c_str());
  api.easy_setopt(h, CURLOPT_ERRORBUFFER, err);
  api.easy_setopt(h, CURLOPT_WRITEFUNCTION, Append);
  api.easy_setopt(h, CURLOPT_WRITEDATA, &body);
  Headers reply_headers;
  api.easy_setopt(h, CURLOPT_HEADERFUNCTION, CountHeader);
  api.easy_setopt(h, CURLOPT_HEADERDATA, &reply_headers);
  api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api.easy_setopt(h, CURLOPT_TIMEOUT_MS, std::max(1L, static_cast<long>(timeout * 1000)));
  api.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // gzip when the server offers it
  api.easy_setopt(h, CURLOPT_USERAGENT, "tfdiag/" TFDIAG_VERSION);
  api.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!o_.ca_file.empty()) api.easy_setopt(h, CURLOPT_CAINFO, o_.ca_file.c_str());
  if (o_.insecure_skip_verify) {
    api.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    api.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!user_.empty()) {
    api.easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    api.easy_setopt(h, CURLOPT_USERNAME, user_.c_str());
    api.easy_setopt(h, CURLOPT_PASSWORD, password_.c_str());
  }
  struct curl_slist* headers = nullptr;
  if (!auth_header_.empty()) headers = api.slist_append(headers, auth_header_.c_str());
  headers = api.slist_append(headers, "Accept: application/json");
  api.easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  if (!form.empty()) {
    api.easy_setopt(h, CURLOPT_POSTFIELDS, form.c_str());
    api.easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(form.size()));
  }
  const CURLcode rc = api.easy_perform(h);
  api.slist_free_all(headers);
  if (body.over) {
    return InvalidInput(
        "Prometheus at {}: the reply to {} is larger than {} bytes (--prometheus-max-bytes): "
        "narrow the window or raise the cap",
        o_.url, what, o_.max_bytes);
  }
  // A hostile or broken server's giant headers: their size and the limit, not "Out of memory".
  if (reply_headers.over) {
    return InvalidInput(
        "Prometheus at {}: the reply to {} has more than {} bytes of HTTP headers (the limit is "
        "{} KiB; a Prometheus API reply has a few hundred bytes): not a Prometheus reply",
        o_.url, what, reply_headers.bytes, kMaxHeaderBytes >> 10);
  }
  if (rc == CURLE_OUT_OF_MEMORY || static_cast<int>(rc) == 100 /* CURLE_TOO_LARGE */ ||
      std::strstr(err, "Too large response headers") != nullptr) {
    return InvalidInput(
        "Prometheus at {}: the reply to {} has more HTTP header bytes than libcurl accepts "
        "(at most {} KiB; {}): not a Prometheus reply",
        o_.url, what, kCurlMaxHeaderBytes >> 10,
        std::strstr(err, "Too large response headers") != nullptr
            ? std::string(err)
            : "a header line longer than its 100 KiB for one line");
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    if (timeout < o_.timeout_s) return deadline_passed();
    return IoError("Prometheus at {}: no reply to {} within {:g} s (--prometheus-timeout)", o_.url,
                   what, o_.timeout_s);
  }
  if (rc != CURLE_OK) {
    return IoError("Prometheus at {} cannot be reached ({}): {}", o_.url, api.easy_strerror(rc),
                   err[0] ? err : "no detail");
  }
  long code = 0;
  api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  if (code == 401 || code == 403) {
    return IoError(
        "Prometheus at {} refused {} with HTTP {} ({}): check --bearer-token-file or "
        "--basic-auth",
        o_.url, what, code, code == 401 ? "unauthorized" : "forbidden");
  }
  // The API answers bad queries with 400/422 and a JSON error body; anything else is not it.
  if (code != 200 && code != 400 && code != 422 && code != 503) {
    return IoError("Prometheus at {}: HTTP {} for {} ({}): is this the Prometheus server's URL?",
                   o_.url, code, what, url);
  }
  return std::move(body.text);
}

StatusOr<std::string> PromClient::Escape(const std::string& s, const std::string& what) {
  char* q = nullptr;
  if (s.size() < static_cast<size_t>(INT_MAX)) {
    q = curl_api_->easy_escape(static_cast<CURL*>(curl_), s.c_str(), static_cast<int>(s.size()));
  }
  if (q == nullptr) {
    return InvalidInput(
        "Prometheus at {}: {} is {} bytes of PromQL, more than libcurl encodes (8 MB): too many "
        "pods in one selector",
        o_.url, what, s.size());
  }
  std::string out(q);
  curl_api_->free(q);
  return out;
}

StatusOr<std::vector<PromSeries>> PromClient::Run(PromQueryLog entry, const std::string& path,
                                                  const std::string& form) {
  const auto t0 = std::chrono::steady_clock::now();
  StatusOr<std::string> body = Request(path, form, "the query " + entry.query);
  if (!body.ok()) return body.status();
  entry.bytes = static_cast<int64_t>(body->size());
  const std::string where = o_.url + path;
  StatusOr<PromReply> reply = ParsePromReply(body->data(), body->size(), where, o_.max_series);
  if (!reply.ok()) {
    const std::string& m = reply.status().message();
    if (m.rfind(where + ": byte ", 0) != 0) {  // a series or point at fault
      return InvalidInput("{} (the query {})", m, entry.query);
    }
    return InvalidInput("{}: the reply is not the Prometheus HTTP API: is {} a Prometheus server?",
                        m, o_.url);
  }
  if (reply->status.empty()) {
    return InvalidInput(
        "{}: the reply is not the Prometheus HTTP API (expected a JSON object with \"status\"): "
        "is {} a Prometheus server?",
        where, o_.url);
  }
  if (reply->status != "success") {
    return InvalidInput("{}: Prometheus rejected the query {}: {}", where, entry.query,
                        reply->error);
  }
  if (!reply->has_result) return InvalidInput("{}: data.result: expected an array", where);
  std::vector<PromSeries> out = std::move(reply->series);
  entry.series = static_cast<int>(out.size());
  entry.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_.push_back(std::move(entry));
  return out;
}

StatusOr<std::vector<PromSeries>> PromClient::Query(const std::string& promql, double time_s) {
  StatusOr<std::string> q = Escape(promql, "the query");
  if (!q.ok()) return q.status();
  std::string form = "query=" + *q + "&time=" + Num(time_s);
  PromQueryLog e;
  e.kind = "query";
  e.query = promql;
  e.time_s = time_s;
  return Run(std::move(e), "/api/v1/query", form);
}

StatusOr<std::vector<PromSeries>> PromClient::QueryRange(const std::string& promql, double start_s,
                                                         double end_s, double step_s) {
  StatusOr<std::string> q = Escape(promql, "the query");
  if (!q.ok()) return q.status();
  std::string form =
      "query=" + *q + "&start=" + Num(start_s) + "&end=" + Num(end_s) + "&step=" + Num(step_s);
  PromQueryLog e;
  e.kind = "query_range";
  e.query = promql;
  e.time_s = start_s;
  e.end_s = end_s;
  e.step_s = step_s;
  return Run(std::move(e), "/api/v1/query_range", form);
}

StatusOr<std::string> PromClient::BuildVersion() {
  StatusOr<std::string> body = Request("/api/v1/status/buildinfo", "", "/api/v1/status/buildinfo");
  if (!body.ok()) return body.status();
  JsonDocument d;
  const Status parsed =
      ParseJsonDom(o_.url + "/api/v1/status/buildinfo", body->data(), body->size(), &d);
  if (!parsed.ok()) {
    return InvalidInput("{}: the reply is not the Prometheus HTTP API: is {} a Prometheus server?",
                        parsed.message(), o_.url);
  }
  if (!d.IsObject() || !d.HasMember("status") || !d["status"].IsString() ||
      std::string_view(d["status"].GetString()) != "success" || !d.HasMember("data") ||
      !d["data"].IsObject()) {
    return InvalidInput(
        "{}/api/v1/status/buildinfo: the reply is not the Prometheus HTTP API (expected "
        "{{\"status\":\"success\",\"data\":{{...}}}}): is {} a Prometheus server?",
        o_.url, o_.url);
  }
  // PromQL-compatible stores answer the API without a version (VictoriaMetrics 1.79 replies
  // {"status":"success","data":{}}): the queries decide whether they serve, not the version.
  if (!d["data"].HasMember("version") || !d["data"]["version"].IsString()) {
    return std::string(kUnknownServerVersion);
  }
  return std::string(d["data"]["version"].GetString());
}

}  // namespace tfdiag
