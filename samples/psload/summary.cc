#include "samples/psload/summary.h"

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

namespace psload {

void AddPeer(const Conn& c, Summary* s) {
  PeerSummary* p = nullptr;
  for (PeerSummary& e : s->peers) {
    if (e.remote == c.remote()) p = &e;
  }
  if (p == nullptr) {
    s->peers.emplace_back();
    p = &s->peers.back();
    p->remote = c.remote();
    p->local = c.local();
  }
  if (p->task.empty()) p->task = c.peer_task;
  p->bytes_sent += c.bytes_sent;
  p->bytes_received += c.bytes_received;
  p->frames_sent += c.frames_sent;
  p->frames_received += c.frames_received;
  p->rows_pulled += c.rows_pulled;
  p->rows_pushed += c.rows_pushed;
  p->hdfs_bytes += c.data_bytes;
}

namespace {
std::mutex threads_mu;
std::map<std::string, int>* threads_started = new std::map<std::string, int>;  // never freed
}  // namespace

void CountThread(const std::string& name) {
  std::lock_guard<std::mutex> lock(threads_mu);
  ++(*threads_started)[name];
}

std::map<std::string, int> ThreadsStarted() {
  std::ifstream f("/proc/self/comm");
  std::string main_name;
  if (!std::getline(f, main_name)) main_name = "psload";
  std::lock_guard<std::mutex> lock(threads_mu);
  std::map<std::string, int> out = *threads_started;
  ++out[main_name];
  return out;
}

std::string SummaryJson(const Options& o, const Summary& s) {
  rapidjson::StringBuffer buf;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
  w.SetFormatOptions(rapidjson::kFormatSingleLineArray);  // step_us: one line, not one a step
  auto str = [&](const char* k, const std::string& v) {
    w.Key(k);
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  };
  auto u64 = [&](const char* k, uint64_t v) {
    w.Key(k);
    w.Uint64(v);
  };
  auto dbl = [&](const char* k, double v) {
    w.Key(k);
    w.Double(v);
  };
  uint64_t sent = 0, received = 0;
  for (const PeerSummary& p : s.peers) {
    sent += p.bytes_sent;
    received += p.bytes_received;
  }
  const char* host = std::getenv("HOSTNAME");
  w.StartObject();
  str("schema", "psload.summary.v1");
  w.Key("task");
  w.StartObject();
  str("job", o.job);
  w.Key("index");
  w.Int(o.index);
  str("name", o.TaskName());
  w.EndObject();
  str("role_source", o.role_source);
  str("hostname", host ? host : "");
  u64("pid", static_cast<uint64_t>(getpid()));
  str("address", s.address);
  str("placement", PlacementName(o.placement));
  str("exit_reason", s.exit_reason);
  str("error", s.error);
  w.Key("steps");
  w.Int64(s.steps);
  dbl("wall_time_s", s.wall_time_s);
  dbl("steps_per_s", s.wall_time_s > 0 ? static_cast<double>(s.steps) / s.wall_time_s : 0.0);
  w.Key("step_us");
  w.StartArray();
  for (int64_t us : s.step_us) w.Int64(us);
  w.EndArray();
  u64("bytes_sent", sent);
  u64("bytes_received", received);
  u64("hdfs_bytes_read", s.hdfs_bytes_read);
  u64("hdfs_bytes_served", s.hdfs_bytes_served);
  u64("rows_pulled", s.rows_pulled);
  u64("rows_pushed", s.rows_pushed);

  w.Key("peers");
  w.StartObject();
  for (const PeerSummary& p : s.peers) {
    w.Key(p.remote.c_str());
    w.StartObject();
    str("task", p.task);
    str("local", p.local);
    u64("bytes_sent", p.bytes_sent);
    u64("bytes_received", p.bytes_received);
    u64("frames_sent", p.frames_sent);
    u64("frames_received", p.frames_received);
    u64("rows_pulled", p.rows_pulled);
    u64("rows_pushed", p.rows_pushed);
    u64("hdfs_bytes", p.hdfs_bytes);
    w.EndObject();
  }
  w.EndObject();

  // Worker view per PS, keyed by task; PS and hdfs tasks write an empty object.
  w.Key("per_ps");
  w.StartObject();
  for (const PeerSummary& p : s.peers) {
    if (!o.IsWorker() || p.task.rfind("ps:", 0) != 0) continue;
    w.Key(p.task.c_str());
    w.StartObject();
    str("address", p.remote);
    u64("bytes_sent", p.bytes_sent);
    u64("bytes_received", p.bytes_received);
    u64("rows_pulled", p.rows_pulled);
    u64("rows_pushed", p.rows_pushed);
    w.EndObject();
  }
  w.EndObject();

  w.Key("threads");
  w.StartObject();
  int num_threads = 0;
  for (const auto& [name, n] : ThreadsStarted()) {
    w.Key(name.c_str());
    w.Int(n);
    num_threads += n;
  }
  w.EndObject();
  w.Key("num_threads");
  w.Int(num_threads);

  w.Key("config");
  w.StartObject();
  w.Key("ps_threads");
  w.Int(o.ps_threads);
  w.Key("worker_threads");
  w.Int(o.worker_threads);
  w.Key("compute_us");
  w.Int64(o.compute_us);
  w.Key("compute_sleep_us");
  w.Int64(o.compute_sleep_us);
  w.Key("rows_per_step");
  w.Int(o.rows_per_step);
  w.Key("dim");
  w.Int(o.dim);
  w.Key("rows");
  w.Int64(o.rows);
  w.Key("dense_floats");
  w.Int(o.dense_floats);
  dbl("duration_s", o.duration_set || o.IsWorker() ? o.duration_s : 0.0);
  w.Key("max_steps");
  w.Int64(o.max_steps);
  str("hdfs", o.hdfs);
  w.Key("input_bytes_per_step");
  w.Int64(o.input_bytes_per_step);
  dbl("hdfs_rate_mbps", o.hdfs_rate_mbps);
  w.Key("prefetch");
  w.Int(o.prefetch);
  w.Key("num_ps");
  w.Int(static_cast<int>(o.ps_hosts.size()));
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

bool WriteSummary(const Options& o, const Summary& s, const std::string& path, std::string* error) {
  std::string json = SummaryJson(o, s);
  std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    *error = fmt::format("cannot write {}: {}", tmp, std::strerror(errno));
    return false;
  }
  bool ok = std::fwrite(json.data(), 1, json.size(), f) == json.size();
  ok = (std::fflush(f) == 0) && ok;
  ok = (fsync(fileno(f)) == 0) && ok;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace psload
