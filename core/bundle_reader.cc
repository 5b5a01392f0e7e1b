// ReadBundle and LooksLikeBundle (core/bundle.h): a bundle read back into a CaptureBuilder,
// every field checked (bad input: the file, the field and what was expected).
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/bundle.h"
#include "core/bundle_columns.h"
#include "core/bundle_stream.h"
#include "core/json_dom.h"

namespace tfdiag {

namespace {

using Value = JsonValue;

// Times (ns since the epoch) a bundle may hold: up to 2^62 ns (year 2116), so that a time plus a
// duration or interval read with it cannot overflow int64 downstream.
constexpr int64_t kMaxBundleTime = int64_t{1} << 62;
// The largest bundle read (core/bundle.h).
constexpr off_t kMaxBundleBytes = off_t{256} << 20;

struct Reader {
  std::string path;
  Status Err(const std::string& field, std::string_view what) const {
    return InvalidInput("{}: {}: {}", path, field, what);
  }
  // An integer member in [min, max] (bundle times, counts and ids are never below -1; ids,
  // CPU counts and pids are stored as int32).
  Status GetInt(const Value& o, const char* k, const std::string& where, int64_t* out,
                int64_t min = INT64_MIN, int64_t max = INT64_MAX) const {
    auto it = o.FindMember(k);
    if (it == o.MemberEnd() || !it->value.IsInt64())
      return Err(where + "." + k, "expected an integer");
    *out = it->value.GetInt64();
    if (*out < min) {
      return Err(where + "." + k, fmt::format("{} is negative; expected {}", *out,
                                              min == 0 ? "a value >= 0" : "-1 (unknown) or more"));
    }
    if (*out > max) {
      return Err(where + "." + k,
                 fmt::format("{} is out of range; expected at most {}", *out, max));
    }
    return OkStatus();
  }
  Status GetStr(const Value& o, const char* k, const std::string& where, std::string* out) const {
    auto it = o.FindMember(k);
    if (it == o.MemberEnd() || !it->value.IsString())
      return Err(where + "." + k, "expected a string");
    *out = it->value.GetString();
    return OkStatus();
  }
};

}  // namespace

bool LooksLikeBundle(std::string_view head) {
  size_t p = head.find("\"schema\"");
  return p != std::string_view::npos && p < 64 &&
         head.find("\"tfdiag.bundle/", p) != std::string_view::npos;
}

Status ReadBundle(const std::string& path, CaptureBuilder* b) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
  if (file == nullptr) return IoError("{}: cannot open", path);
  std::FILE* f = file.get();
  const off_t size = fseeko(f, 0, SEEK_END) == 0 ? ftello(f) : -1;
  if (size < 0 || fseeko(f, 0, SEEK_SET) != 0) {
    return InvalidInput("{}: not a regular file; a bundle is read twice (head, then rows)", path);
  }
  // Refused by its size before a byte is read: the rows are streamed (bundle_stream.h), but the
  // Capture keeps each sample (about 50 bytes a row), so the cap still bounds the memory a bundle
  // takes (issue 48).
  if (size > kMaxBundleBytes) {
    return InvalidInput(
        "{}: {} bytes; the limit for a bundle is {} MiB: record a shorter window (attach "
        "--duration) or fewer processes (--pid)",
        path, static_cast<int64_t>(size), kMaxBundleBytes >> 20);
  }
  const size_t file_bytes = static_cast<size_t>(size);
  // Pass 1: everything but the sample rows, as a DOM; the rows follow in pass 2, one at a time.
  JsonDocument d;
  TFDIAG_RETURN_IF_ERROR(ReadBundleHead(path, f, static_cast<int64_t>(size), &d));
  Reader r{path};
  if (!d.IsObject()) return r.Err("(top level)", "expected an object");
  auto schema = d.FindMember("schema");
  if (schema == d.MemberEnd() || !schema->value.IsString() ||
      std::string_view(schema->value.GetString()) != kBundleSchema) {
    return r.Err("schema", fmt::format("expected \"{}\"", kBundleSchema));
  }
  CaptureMeta& m = b->meta();
  if (auto it = d.FindMember("meta"); it != d.MemberEnd() && it->value.IsObject()) {
    const Value& mv = it->value;
    TFDIAG_RETURN_IF_ERROR(r.GetStr(mv, "host", "meta", &m.host));
    TFDIAG_RETURN_IF_ERROR(r.GetStr(mv, "kernel", "meta", &m.kernel));
    TFDIAG_RETURN_IF_ERROR(
        r.GetInt(mv, "window_start_ns", "meta", &m.window_start, 0, kMaxBundleTime));
    TFDIAG_RETURN_IF_ERROR(
        r.GetInt(mv, "window_end_ns", "meta", &m.window_end, INT64_MIN, kMaxBundleTime));
    // At most a day between samples.
    TFDIAG_RETURN_IF_ERROR(
        r.GetInt(mv, "interval_ms", "meta", &m.interval_ms, INT64_MIN, 86'400'000));
    if (m.interval_ms <= 0)
      return r.Err("meta.interval_ms",
                   fmt::format("{} ms; expected a sampling interval > 0", m.interval_ms));
    if (m.window_start < 0 || m.window_end < m.window_start) {
      return r.Err("meta.window_end_ns", fmt::format("window {} .. {} ns; expected 0 <= start <= "
                                                     "end",
                                                     m.window_start, m.window_end));
    }
    if (auto p = mv.FindMember("probes"); p != mv.MemberEnd() && p->value.IsString()) {
      m.probes = p->value.GetString();
    }
    if (auto p = mv.FindMember("steal_pct"); p != mv.MemberEnd()) {
      if (!p->value.IsNumber() || !(p->value.GetDouble() >= 0 && p->value.GetDouble() <= 100)) {
        return r.Err("meta.steal_pct", "expected a percentage from 0 to 100");
      }
      // Several bundles in one capture: the node that lost the most (cpu_used_pct beside it
      // is the busiest node's too).
      m.steal_pct = std::max(m.steal_pct, p->value.GetDouble());
    }
    if (auto w = mv.FindMember("warnings"); w != mv.MemberEnd() && w->value.IsArray()) {
      for (const Value& s : w->value.GetArray()) {
        if (s.IsString()) m.warnings.emplace_back(s.GetString());
      }
    }
  } else {
    return r.Err("meta", "expected an object");
  }
  auto tasks = d.FindMember("tasks");
  if (tasks == d.MemberEnd() || !tasks->value.IsArray()) return r.Err("tasks", "expected an array");
  std::vector<uint32_t> task_ids;
  std::unordered_map<std::string, uint32_t> by_label;
  for (rapidjson::SizeType i = 0; i < tasks->value.Size(); ++i) {
    const Value& t = tasks->value[i];
    const std::string where = fmt::format("tasks[{}]", i);
    if (!t.IsObject()) return r.Err(where, "expected an object");
    std::string job;
    int64_t replica = 0, index = 0;
    TFDIAG_RETURN_IF_ERROR(r.GetStr(t, "job", where, &job));
    TFDIAG_RETURN_IF_ERROR(r.GetInt(t, "replica", where, &replica, 0, INT32_MAX));
    TFDIAG_RETURN_IF_ERROR(r.GetInt(t, "index", where, &index, 0, INT32_MAX));
    uint32_t id = b->AddTask(job, static_cast<int>(replica), static_cast<int>(index));
    by_label[TaskLabel(job, static_cast<int>(replica), static_cast<int>(index))] = id;
  }
  auto procs = d.FindMember("processes");
  if (procs == d.MemberEnd() || !procs->value.IsArray()) {
    return r.Err("processes", "expected an array");
  }
  const uint32_t nproc = procs->value.Size();
  std::vector<uint32_t> proc_ids;
  for (rapidjson::SizeType i = 0; i < nproc; ++i) {
    const Value& p = procs->value[i];
    const std::string where = fmt::format("processes[{}]", i);
    if (!p.IsObject()) return r.Err(where, "expected an object");
    ProcessRow row;
    std::string task, pod, uid, container, qos, cgroup, cpuset;
    TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "task", where, &task));
    auto t = by_label.find(task);
    if (t == by_label.end()) return r.Err(where + ".task", "names no task in \"tasks\"");
    row.task = t->second;
    int64_t pid = 0, cpuset_cpus = 0, host_cpus = 0;
    TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "pid", where, &pid, 0, INT32_MAX));
    TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "pod", where, &pod));
    TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "pod_uid", where, &uid));
    TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "container", where, &container));
    TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "qos", where, &qos));
    TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "cgroup", where, &cgroup));
    TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "cpuset", where, &cpuset));
    auto lim = p.FindMember("cpu_limit");
    if (lim == p.MemberEnd() || !lim->value.IsNumber())
      return r.Err(where + ".cpu_limit", "expected a number");
    row.cpu_limit = lim->value.GetDouble();
    if (row.cpu_limit == -1) row.cpu_limit = 0;  // no limit, as written since -1 (0 before)
    if (!(row.cpu_limit >= 0) || row.cpu_limit > 1e6)
      return r.Err(where + ".cpu_limit", "expected CPUs >= 0, or -1 for no limit");
    // CFS quota and period: the kernel's limits, 1 ms .. 1 s period and quota <= 2^44 us
    // (kernel/sched/core.c max_cfs_quota_period and max_cfs_runtime).
    TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "quota_us", where, &row.quota_us, -1, int64_t{1} << 44));
    TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "period_us", where, &row.period_us, 0, 1'000'000));
    TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "cpuset_cpus", where, &cpuset_cpus, 0, INT32_MAX));
    // -1 (0 in older bundles): unknown.
    TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "host_cpus", where, &host_cpus, -1, INT32_MAX));
    host_cpus = std::max<int64_t>(host_cpus, 0);
    TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "first_ns", where, &row.first_ns, 0, kMaxBundleTime));
    TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "last_ns", where, &row.last_ns, 0, kMaxBundleTime));
    auto ex = p.FindMember("exited");
    if (ex == p.MemberEnd() || !ex->value.IsBool())
      return r.Err(where + ".exited", "expected true or false");
    row.exited = ex->value.GetBool();
    // Optional (cluster bundles): node, pod_ip, cpu_request, restarts.
    std::string node, pod_ip;
    if (p.HasMember("node")) TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "node", where, &node));
    if (p.HasMember("pod_ip")) TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "pod_ip", where, &pod_ip));
    if (!node.empty()) row.node = b->Intern(node);
    if (!pod_ip.empty()) row.pod_ip = b->Intern(pod_ip);
    if (auto rq = p.FindMember("cpu_request"); rq != p.MemberEnd()) {
      if (!rq->value.IsNumber() || rq->value.GetDouble() < 0)
        return r.Err(where + ".cpu_request", "expected a number of CPUs >= 0");
      row.cpu_request = rq->value.GetDouble();
    }
    if (p.HasMember("restarts")) {
      int64_t restarts = 0;
      TFDIAG_RETURN_IF_ERROR(r.GetInt(p, "restarts", where, &restarts, 0, INT32_MAX));
      row.restarts = static_cast<int32_t>(restarts);
    }
    if (p.HasMember("step_source")) {
      std::string src;
      TFDIAG_RETURN_IF_ERROR(r.GetStr(p, "step_source", where, &src));
      if (!src.empty()) row.step_source = b->Intern(src);
    }
    row.pid = static_cast<int32_t>(pid);
    row.cpuset_cpus = static_cast<int32_t>(cpuset_cpus);
    row.host_cpus = static_cast<int32_t>(host_cpus);
    row.pod = b->Intern(pod);
    row.pod_uid = b->Intern(uid);
    row.container = b->Intern(container);
    row.qos = b->Intern(qos);
    row.cgroup = b->Intern(cgroup);
    row.cpuset = b->Intern(cpuset);
    proc_ids.push_back(b->AddProcess(row));
  }
  // "<key>_columns" names each row's values; rows are read by column name, so a reordered or
  // widened bundle reads right. Absent: the order this version writes.
  auto columns_of = [&](const char* key, const char* const* names, size_t n,
                        std::vector<rapidjson::SizeType>* at, size_t* width) -> Status {
    at->assign(n, 0);
    const std::string ckey = std::string(key) + "_columns";
    auto it = d.FindMember(ckey.c_str());
    if (it == d.MemberEnd()) {
      for (size_t k = 0; k < n; ++k) (*at)[k] = static_cast<rapidjson::SizeType>(k);
      *width = n;
      return OkStatus();
    }
    if (!it->value.IsArray()) return r.Err(ckey, "expected an array of column names");
    const Value& cols = it->value;
    *width = cols.Size();
    for (size_t k = 0; k < n; ++k) {
      int found = -1;
      for (rapidjson::SizeType c = 0; c < cols.Size(); ++c) {
        if (!cols[c].IsString()) return r.Err(fmt::format("{}[{}]", ckey, c), "expected a string");
        if (std::string_view(cols[c].GetString()) != names[k]) continue;
        if (found >= 0) return r.Err(ckey, fmt::format("column \"{}\" appears twice", names[k]));
        found = static_cast<int>(c);
      }
      if (found < 0) return r.Err(ckey, fmt::format("no column \"{}\"", names[k]));
      (*at)[k] = static_cast<rapidjson::SizeType>(found);
    }
    return OkStatus();
  };
  std::vector<rapidjson::SizeType> col;  // the columns of the row key being registered
  size_t width = 0;
  // Each row key's reader, run on its rows in pass 2 (ReadBundleRows): the row width and columns
  // its "<key>_columns" gave, and what a row adds.
  using RowFn = std::function<Status(const Value&, const std::string&,
                                     const std::vector<rapidjson::SizeType>&)>;
  struct RowKind {
    size_t width = 0;
    std::vector<rapidjson::SizeType> col;
    RowFn each;
  };
  std::map<std::string, RowKind, std::less<>> kinds;
  auto rows = [&](const char* key, size_t columns, RowFn each) -> Status {
    auto it = d.FindMember(key);
    if (it == d.MemberEnd() || !it->value.IsArray()) return r.Err(key, "expected an array of rows");
    kinds[key] = RowKind{columns, col, std::move(each)};
    return OkStatus();
  };
  // An integer at column `k` (an index into row), named `name` in errors; `min` is the least
  // value allowed: 0 for times and gauges, -1 for counters (-1: unknown). Times ("ts_ns") are
  // at most kMaxBundleTime.
  auto int_at = [&](const Value& row, rapidjson::SizeType k, const std::string& where,
                    const char* name, int64_t min, int64_t* out) -> Status {
    const std::string field = fmt::format("{}[{}] ({})", where, k, name);
    if (!row[k].IsInt64()) return r.Err(field, "expected an integer");
    *out = row[k].GetInt64();
    if (*out < min) {
      return r.Err(field, fmt::format("{} is negative; expected {}", *out,
                                      min == 0 ? "a value >= 0" : "a count >= 0, or -1 (unknown)"));
    }
    if (*out > kMaxBundleTime && std::string_view(name) == "ts_ns") {
      return r.Err(field, fmt::format("{} ns is out of range; expected at most 2^62", *out));
    }
    return OkStatus();
  };
  auto proc_at = [&](const Value& row, rapidjson::SizeType k, const std::string& where,
                     uint32_t* out) -> Status {
    int64_t p = 0;
    TFDIAG_RETURN_IF_ERROR(int_at(row, k, where, "process", 0, &p));
    if (p >= static_cast<int64_t>(proc_ids.size())) {
      return r.Err(fmt::format("{}[{}]", where, k), "names no process");
    }
    *out = proc_ids[static_cast<size_t>(p)];
    return OkStatus();
  };
  TFDIAG_RETURN_IF_ERROR(columns_of("process_sample", kProcessColumns, 10, &col, &width));
  // CPU time is cumulative: a sample below its process's previous one is corrupt.
  // Samples are written in time order per process; one out of order is corrupt (and would break
  // the cumulative checks once the capture orders them by time).
  auto in_time_order = [&r](int64_t* last, int64_t ts, int64_t p, const std::string& w,
                            rapidjson::SizeType c) {
    if (ts < *last) {
      return r.Err(fmt::format("{}[{}] (ts_ns)", w, c),
                   fmt::format("{} is before the previous sample's {} for process {} (samples are "
                               "in time order)",
                               ts, *last, p));
    }
    *last = ts;
    return OkStatus();
  };
  std::vector<int64_t> last_cpu(proc_ids.size(), -1), last_ts(proc_ids.size(), INT64_MIN);
  TFDIAG_RETURN_IF_ERROR(rows(
      "process_samples", width,
      [&](const Value& row, const std::string& w, const std::vector<rapidjson::SizeType>& col) {
        ProcessSampleRow s;
        int64_t v[10];
        for (size_t k = 0; k < 10; ++k) {
          if (k == 1) continue;
          TFDIAG_RETURN_IF_ERROR(
              int_at(row, col[k], w, kProcessColumns[k], k <= 4 && k != 3 ? 0 : -1, &v[k]));
        }
        TFDIAG_RETURN_IF_ERROR(proc_at(row, col[1], w, &s.process));
        const int64_t p = row[col[1]].GetInt64();
        TFDIAG_RETURN_IF_ERROR(in_time_order(&last_ts[static_cast<size_t>(p)], v[0], p, w, col[0]));
        if (v[4] < last_cpu[static_cast<size_t>(p)]) {
          return r.Err(
              fmt::format("{}[{}] (cpu_ns)", w, col[4]),
              fmt::format("{} is below the previous sample's {} for process {} (CPU time is "
                          "cumulative)",
                          v[4], last_cpu[static_cast<size_t>(p)], p));
        }
        last_cpu[static_cast<size_t>(p)] = v[4];
        s.ts = v[0];
        s.threads = static_cast<int32_t>(std::min<int64_t>(v[2], INT32_MAX));
        s.runnable = static_cast<int32_t>(std::min<int64_t>(v[3], INT32_MAX));
        s.cpu_ns = v[4];
        s.voluntary = v[5];
        s.involuntary = v[6];
        s.nr_periods = v[7];
        s.nr_throttled = v[8];
        s.throttled_ns = v[9];
        b->AddProcessSample(s);
        return OkStatus();
      }));
  TFDIAG_RETURN_IF_ERROR(columns_of("thread_sample", kThreadColumns, 8, &col, &width));
  TFDIAG_RETURN_IF_ERROR(rows(
      "thread_samples", width,
      [&](const Value& row, const std::string& w, const std::vector<rapidjson::SizeType>& col) {
        ThreadSampleRow s;
        int64_t ts = 0, tid = 0;
        TFDIAG_RETURN_IF_ERROR(int_at(row, col[0], w, "ts_ns", 0, &ts));
        TFDIAG_RETURN_IF_ERROR(proc_at(row, col[1], w, &s.process));
        TFDIAG_RETURN_IF_ERROR(int_at(row, col[2], w, "tid", 0, &tid));
        if (!row[col[3]].IsString()) return r.Err(w + ".name", "expected a thread name string");
        // One printable ASCII character ("R", "S", "D", ...; '?' unknown), as the writer writes it.
        if (!row[col[4]].IsString() || row[col[4]].GetStringLength() != 1 ||
            row[col[4]].GetString()[0] <= ' ' || row[col[4]].GetString()[0] >= 0x7f) {
          return r.Err(w + ".state", "expected a one-letter thread state (printable ASCII)");
        }
        TFDIAG_RETURN_IF_ERROR(int_at(row, col[5], w, "cpu_ns", 0, &s.cpu_ns));
        TFDIAG_RETURN_IF_ERROR(int_at(row, col[6], w, "voluntary", -1, &s.voluntary));
        TFDIAG_RETURN_IF_ERROR(int_at(row, col[7], w, "involuntary", -1, &s.involuntary));
        s.ts = ts;
        s.tid = static_cast<int32_t>(std::min<int64_t>(tid, INT32_MAX));
        s.name = b->Intern(row[col[3]].GetString());
        s.state = row[col[4]].GetString()[0];
        b->AddThreadSample(s);
        return OkStatus();
      }));
  // eBPF rows: optional (bundles written before issue 6 have none).
  if (d.HasMember("traffic")) {
    TFDIAG_RETURN_IF_ERROR(columns_of("traffic", kTrafficColumns, 8, &col, &width));
    TFDIAG_RETURN_IF_ERROR(rows(
        "traffic", width,
        [&](const Value& row, const std::string& w, const std::vector<rapidjson::SizeType>& col) {
          TrafficRow t;
          int64_t hdfs = 0;
          TFDIAG_RETURN_IF_ERROR(int_at(row, col[0], w, "ts_ns", 0, &t.ts));
          TFDIAG_RETURN_IF_ERROR(proc_at(row, col[1], w, &t.process));
          for (size_t k = 2; k <= 4; ++k) {
            if (!row[col[k]].IsString())
              return r.Err(fmt::format("{}[{}] ({})", w, col[k], kTrafficColumns[k]),
                           "expected a string");
          }
          TFDIAG_RETURN_IF_ERROR(int_at(row, col[5], w, "hdfs", 0, &hdfs));
          TFDIAG_RETURN_IF_ERROR(int_at(row, col[6], w, "bytes_sent", 0, &t.bytes_sent));
          TFDIAG_RETURN_IF_ERROR(int_at(row, col[7], w, "bytes_received", 0, &t.bytes_received));
          t.local = b->Intern(row[col[2]].GetString());
          t.peer = b->Intern(row[col[3]].GetString());
          const std::string peer_task = row[col[4]].GetString();
          if (!peer_task.empty()) {
            auto it = by_label.find(peer_task);
            if (it == by_label.end())
              return r.Err(fmt::format("{}[{}] (peer_task)", w, col[4]),
                           "names no task in \"tasks\"");
            t.peer_task = it->second;
          }
          t.hdfs = hdfs != 0;
          b->AddTraffic(t);
          return OkStatus();
        }));
  }
  if (d.HasMember("sched")) {
    TFDIAG_RETURN_IF_ERROR(columns_of("sched", kSchedColumns, 8, &col, &width));
    TFDIAG_RETURN_IF_ERROR(rows(
        "sched", width,
        [&](const Value& row, const std::string& w, const std::vector<rapidjson::SizeType>& col) {
          SchedRow s;
          int64_t* fields[] = {&s.ts,       nullptr,         &s.voluntary, &s.involuntary,
                               &s.oncpu_ns, &s.runq_wait_ns, &s.runq_waits};
          for (size_t k = 0; k < 7; ++k) {
            if (k != 1)
              TFDIAG_RETURN_IF_ERROR(int_at(row, col[k], w, kSchedColumns[k], 0, fields[k]));
          }
          TFDIAG_RETURN_IF_ERROR(proc_at(row, col[1], w, &s.process));
          const Value& h = row[col[7]];
          if (!h.IsArray() || h.Size() != kRunqHistSlots) {
            return r.Err(fmt::format("{}[{}] (runq_hist)", w, col[7]),
                         fmt::format("expected an array of {} counts", kRunqHistSlots));
          }
          for (rapidjson::SizeType k = 0; k < h.Size(); ++k) {
            if (!h[k].IsInt64() || h[k].GetInt64() < 0)
              return r.Err(fmt::format("{}[{}][{}] (runq_hist)", w, col[7], k),
                           "expected a count >= 0");
            s.runq_hist[k] = h[k].GetInt64();
          }
          b->AddSched(s);
          return OkStatus();
        }));
  }
  // Steps are cumulative: a count below its process's previous one is corrupt.
  std::vector<int64_t> last_steps(proc_ids.size(), -1), last_step_ts(proc_ids.size(), INT64_MIN);
  if (d.HasMember("step_counts")) {
    TFDIAG_RETURN_IF_ERROR(columns_of("step_count", kStepCountColumns, 3, &col, &width));
    TFDIAG_RETURN_IF_ERROR(rows(
        "step_counts", width,
        [&](const Value& row, const std::string& w, const std::vector<rapidjson::SizeType>& col) {
          StepCountRow s;
          TFDIAG_RETURN_IF_ERROR(int_at(row, col[0], w, "ts_ns", 0, &s.ts));
          TFDIAG_RETURN_IF_ERROR(proc_at(row, col[1], w, &s.process));
          TFDIAG_RETURN_IF_ERROR(int_at(row, col[2], w, "steps", 0, &s.steps));
          const int64_t p = row[col[1]].GetInt64();
          TFDIAG_RETURN_IF_ERROR(
              in_time_order(&last_step_ts[static_cast<size_t>(p)], s.ts, p, w, col[0]));
          int64_t& last = last_steps[static_cast<size_t>(p)];
          if (s.steps < last) {
            return r.Err(fmt::format("{}[{}] (steps)", w, col[2]),
                         fmt::format("{} is below the previous count {} (steps are cumulative)",
                                     s.steps, last));
          }
          last = s.steps;
          b->AddStepCount(s);
          return OkStatus();
        }));
  }
  // Pass 2: the rows, in file order, each checked and added as it is read.
  if (fseeko(f, 0, SEEK_SET) != 0) return IoError("{}: cannot read it again", path);
  TFDIAG_RETURN_IF_ERROR(
      ReadBundleRows(path, f, [&](std::string_view key, size_t i, const Value& row) -> Status {
        auto it = kinds.find(key);
        if (it == kinds.end()) return OkStatus();  // a key the head did not take (a duplicate)
        const std::string where = fmt::format("{}[{}]", key, i);
        if (!row.IsArray() || row.Size() != it->second.width) {
          return r.Err(where, fmt::format("expected an array of {} values", it->second.width));
        }
        return it->second.each(row, where, it->second.col);
      }));
  FileStats fs;
  fs.path = path;
  fs.format = "tfdiag-bundle";
  fs.bytes = static_cast<int64_t>(file_bytes);
  fs.events = static_cast<int64_t>(nproc);
  b->stats().files.push_back(fs);
  return OkStatus();
}

}  // namespace tfdiag
