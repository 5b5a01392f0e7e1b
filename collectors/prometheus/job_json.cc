// PromJobJson and the time/duration parsers of job_reader.h.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstdlib>
#include <ctime>

#include "collectors/prometheus/job_reader.h"
#include "core/json_utf8_writer.h"

namespace tfdiag {

std::string PromJobJson(const PromJob& job, const PromClient& client) {
  rapidjson::StringBuffer sb;
  ValidUtf8Writer<rapidjson::Writer<rapidjson::StringBuffer>> w(sb);  // UTF-8 always
  auto str = [&](const char* k, const std::string& v) {
    w.Key(k);
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  };
  auto num = [&](const char* k, double v) {
    w.Key(k);
    w.Double(std::isfinite(v) ? v : -1);
  };
  w.StartObject();
  str("server_version", job.server_version);
  str("namespace", job.namespace_);
  num("window_start_s", job.start_s);
  num("window_end_s", job.end_s);
  num("step_s", job.step_s);
  str("discovery", job.discovery);
  w.Key("selectors_tried");
  w.StartArray();
  for (const std::string& t : job.tried) w.String(t.c_str());
  w.EndArray();
  w.Key("queries");
  w.StartArray();
  for (const PromQueryLog& q : client.log()) {
    w.StartObject();
    str("kind", q.kind);
    str("query", q.query);
    if (q.kind == "query") {
      num("time_s", q.time_s);
    } else {
      num("start_s", q.time_s);
      num("end_s", q.end_s);
      num("step_s", q.step_s);
    }
    w.Key("bytes");
    w.Int64(q.bytes);
    w.Key("series");
    w.Int(q.series);
    num("wall_s", q.wall_s);
    w.EndObject();
  }
  w.EndArray();
  w.Key("bytes_received");
  w.Int64(client.bytes_received());
  w.Key("pods");
  w.StartArray();
  for (const PromPodFigures& p : job.pods) {
    w.StartObject();
    str("pod", p.pod);
    str("node", p.node);
    str("pod_ip", p.pod_ip);
    str("task", p.task);
    num("cpu_cores", p.cpu_cores);
    num("cpu_limit_cores", p.cpu_limit > 0 ? p.cpu_limit : -1);  // -1: none known
    num("cpu_request_cores", p.cpu_request > 0 ? p.cpu_request : -1);
    num("throttled_pct", p.throttled_pct);
    num("threads", p.threads);
    num("rx_bytes_per_s", p.rx_bytes_per_s);
    num("tx_bytes_per_s", p.tx_bytes_per_s);
    w.Key("restarts");
    w.Int(p.restarts);
    num("first_s", p.first_s);
    num("last_s", p.last_s);
    w.EndObject();
  }
  w.EndArray();
  w.Key("notes");
  w.StartArray();
  for (const std::string& n : job.notes) w.String(n.c_str());
  w.EndArray();
  w.EndObject();
  return sb.GetString();
}

StatusOr<double> ParsePromTime(const std::string& s) {
  if (s.empty()) return UsageError("time '': expected RFC 3339 or Unix seconds");
  char* end = nullptr;
  const double unix_s = std::strtod(s.c_str(), &end);
  if (end != nullptr && *end == '\0' && std::isfinite(unix_s)) {
    // Up to 4e9 s (2096): seconds x 1e9 must fit int64 nanoseconds.
    if (unix_s < 0 || unix_s > 4e9)
      return UsageError("time '{}': Unix seconds out of range (expected 0..4e9)", s);
    return unix_s;
  }
  // RFC 3339: YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM).
  std::tm tm{};
  const char* p = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (p == nullptr) {
    return UsageError("time '{}': expected RFC 3339 (2026-11-23T18:00:00Z) or Unix seconds", s);
  }
  double frac = 0;
  if (*p == '.') {
    char* e = nullptr;
    frac = std::strtod(p, &e);
    p = e;
  }
  int offset_s = 0;
  if (*p == 'Z' || *p == 'z') {
    ++p;
  } else if (*p == '+' || *p == '-') {
    int hh = 0, mm = 0;
    if (std::sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2 || hh > 23 || mm > 59)
      return UsageError("time '{}': bad UTC offset (expected +HH:MM)", s);
    offset_s = (*p == '+' ? 1 : -1) * (hh * 3600 + mm * 60);
    p += 6;
  } else {
    return UsageError("time '{}': RFC 3339 needs a zone (Z or +HH:MM)", s);
  }
  if (*p != '\0') return UsageError("time '{}': unexpected text after the time", s);
  const double t = static_cast<double>(timegm(&tm)) + frac - offset_s;
  if (!(t >= 0 && t <= 4e9)) return UsageError("time '{}': out of range (1970 to 2096)", s);
  return t;
}

StatusOr<double> ParsePromDuration(const std::string& s) {
  double total = 0;
  size_t i = 0;
  if (s.empty()) return UsageError("duration '': expected e.g. 30m, 1h, 90s");
  while (i < s.size()) {
    size_t j = i;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j == i || j - i > 9) return UsageError("duration '{}': expected e.g. 30m, 1h30m, 90s", s);
    const double n = std::stod(s.substr(i, j - i));
    double unit = 0;
    if (s.compare(j, 2, "ms") == 0) {
      unit = 0.001;
      j += 2;
    } else if (j < s.size()) {
      switch (s[j]) {
        case 's':
          unit = 1;
          break;
        case 'm':
          unit = 60;
          break;
        case 'h':
          unit = 3600;
          break;
        case 'd':
          unit = 86400;
          break;
        case 'w':
          unit = 604800;
          break;
        default:
          break;
      }
      ++j;
    }
    if (unit == 0) return UsageError("duration '{}': units are ms, s, m, h, d, w", s);
    total += n * unit;
    i = j;
  }
  if (total <= 0) return UsageError("duration '{}': must be > 0", s);
  return total;
}

}  // namespace tfdiag
