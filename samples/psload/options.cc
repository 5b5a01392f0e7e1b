#include "samples/psload/options.h"

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>

namespace psload {
namespace {

std::vector<std::string> SplitHosts(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

bool ParseInt(const std::string& name, const std::string& v, int64_t lo, int64_t hi, int64_t* out,
              std::string* error) {
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi) {
    *error = fmt::format("--{}: '{}' is not an integer in [{}, {}]", name, v, lo, hi);
    return false;
  }
  *out = x;
  return true;
}

bool ParseDouble(const std::string& name, const std::string& v, double* out, std::string* error) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(x >= 0)) {
    *error = fmt::format("--{}: '{}' is not a non-negative number", name, v);
    return false;
  }
  *out = x;
  return true;
}

bool ReadHostList(const rapidjson::Value& cluster, const char* job, std::vector<std::string>* out,
                  std::string* error) {
  auto it = cluster.FindMember(job);
  if (it == cluster.MemberEnd()) return true;
  if (!it->value.IsArray()) {
    *error = fmt::format("TF_CONFIG: cluster.{} is not an array", job);
    return false;
  }
  for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
    const rapidjson::Value& h = it->value[i];
    if (!h.IsString() || std::string(h.GetString()).find(':') == std::string::npos) {
      *error = fmt::format("TF_CONFIG: cluster.{}[{}] is not a \"host:port\" string", job, i);
      return false;
    }
    out->push_back(h.GetString());
  }
  return true;
}

// Checks the role against the cluster spec; shared by TF_CONFIG and flags. `type_field`,
// `index_field` and `ps_field` name where each value came from, for the error message.
struct RoleFields {
  const char* type_field;
  const char* index_field;
  const char* ps_field;
};
bool CheckRole(const Options& o, const RoleFields& f, std::string* error) {
  if (o.job != "ps" && o.job != "worker" && o.job != "chief" && o.job != "hdfs") {
    *error = fmt::format("{}: '{}' is not one of ps, worker, chief, hdfs", f.type_field, o.job);
    return false;
  }
  const std::vector<std::string>* list = o.job == "ps"       ? &o.ps_hosts
                                         : o.job == "worker" ? &o.worker_hosts
                                         : o.job == "hdfs"   ? &o.hdfs_hosts
                                                             : nullptr;
  if (o.index < 0 || (list && !list->empty() && o.index >= static_cast<int>(list->size()))) {
    *error = fmt::format("{}: {} is out of range ({} {} entries)", f.index_field, o.index,
                         list ? list->size() : 0, o.job);
    return false;
  }
  if (o.job == "ps" && o.ps_hosts.empty()) {
    *error = fmt::format("{}: empty, a PS needs its own address", f.ps_field);
    return false;
  }
  if (o.IsWorker() && o.ps_hosts.empty()) {
    *error = fmt::format("{}: empty, a worker needs at least one PS", f.ps_field);
    return false;
  }
  return true;
}

}  // namespace

const char* PlacementName(Placement p) { return p == Placement::kHot ? "hot" : "balanced"; }

bool ParseTfConfig(const std::string& json, Options* out, std::string* error) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseIterativeFlag>(json.c_str());  // no stack frame per level
  if (d.HasParseError()) {
    *error = fmt::format("TF_CONFIG: not JSON at offset {}: {}", d.GetErrorOffset(),
                         rapidjson::GetParseError_En(d.GetParseError()));
    return false;
  }
  if (!d.IsObject()) {
    *error = "TF_CONFIG: not a JSON object";
    return false;
  }
  auto cluster = d.FindMember("cluster");
  if (cluster == d.MemberEnd() || !cluster->value.IsObject()) {
    *error = "TF_CONFIG: cluster is missing or not an object";
    return false;
  }
  std::vector<std::string> chief_hosts;  // checked, not used: a chief runs like a worker
  if (!ReadHostList(cluster->value, "ps", &out->ps_hosts, error) ||
      !ReadHostList(cluster->value, "worker", &out->worker_hosts, error) ||
      !ReadHostList(cluster->value, "chief", &chief_hosts, error) ||
      !ReadHostList(cluster->value, "hdfs", &out->hdfs_hosts, error)) {
    return false;
  }
  auto task = d.FindMember("task");
  if (task == d.MemberEnd() || !task->value.IsObject()) {
    *error = "TF_CONFIG: task is missing or not an object";
    return false;
  }
  auto type = task->value.FindMember("type");
  if (type == task->value.MemberEnd() || !type->value.IsString()) {
    *error = "TF_CONFIG: task.type is missing or not a string";
    return false;
  }
  auto index = task->value.FindMember("index");
  if (index == task->value.MemberEnd() || !index->value.IsInt()) {
    *error = "TF_CONFIG: task.index is missing or not an integer";
    return false;
  }
  out->job = type->value.GetString();
  out->index = index->value.GetInt();
  out->role_source = "TF_CONFIG";
  return CheckRole(*out, {"TF_CONFIG: task.type", "TF_CONFIG: task.index", "TF_CONFIG: cluster.ps"},
                   error);
}

bool ParseOptions(int argc, char** argv, const char* tf_config, Options* out, std::string* error) {
  Options& o = *out;
  std::string job_name, ps_hosts, worker_hosts, hdfs_hosts, placement;
  int64_t task_index = 0;
  bool have_job = false;
  using Setter = std::function<bool(const std::string& name, const std::string& v)>;
  auto int_flag = [&](int64_t* dst, int64_t lo, int64_t hi) -> Setter {
    return [=](const std::string& n, const std::string& v) {
      return ParseInt(n, v, lo, hi, dst, error);
    };
  };
  auto str_flag = [&](std::string* dst) -> Setter {
    return [=](const std::string&, const std::string& v) {
      *dst = v;
      return true;
    };
  };
  auto bool_flag = [&](bool* dst) -> Setter {
    return [=](const std::string& n, const std::string& v) {
      if (v != "true" && v != "false" && v != "1" && v != "0") {
        *error = fmt::format("--{}: expected true or false, got '{}'", n, v);
        return false;
      }
      *dst = v == "true" || v == "1";
      return true;
    };
  };
  int64_t ps_threads = o.ps_threads, worker_threads = o.worker_threads, rps = o.rows_per_step,
          dim = o.dim, dense = o.dense_floats, prefetch = o.prefetch, seed = 0;
  std::map<std::string, Setter> flags = {
      {"job-name",
       [&](const std::string&, const std::string& v) {
         job_name = v;
         have_job = true;
         return true;
       }},
      {"task-index", int_flag(&task_index, 0, 1 << 20)},
      {"ps-hosts", str_flag(&ps_hosts)},
      {"worker-hosts", str_flag(&worker_hosts)},
      {"hdfs-hosts", str_flag(&hdfs_hosts)},
      {"placement", str_flag(&placement)},
      {"ps-threads", int_flag(&ps_threads, 1, 256)},
      {"worker-threads", int_flag(&worker_threads, 1, 256)},
      {"compute-us", int_flag(&o.compute_us, 0, 60'000'000)},
      {"compute-sleep-us", int_flag(&o.compute_sleep_us, 0, 60'000'000)},
      {"rows-per-step", int_flag(&rps, 0, 1 << 22)},
      {"dim", int_flag(&dim, 1, 4096)},
      {"rows", int_flag(&o.rows, 1, int64_t{1} << 32)},
      {"dense-floats", int_flag(&dense, 0, 1 << 24)},
      {"duration",
       [&](const std::string& n, const std::string& v) {
         o.duration_set = true;
         return ParseDouble(n, v, &o.duration_s, error);
       }},
      {"steps", int_flag(&o.max_steps, 0, int64_t{1} << 40)},
      {"connect-timeout",
       [&](const std::string& n, const std::string& v) {
         return ParseDouble(n, v, &o.connect_timeout_s, error);
       }},
      {"hdfs", str_flag(&o.hdfs)},
      {"input-bytes-per-step", int_flag(&o.input_bytes_per_step, 0, 0xffffffffLL)},
      {"hdfs-rate-mbps",
       [&](const std::string& n, const std::string& v) {
         return ParseDouble(n, v, &o.hdfs_rate_mbps, error);
       }},
      {"prefetch", int_flag(&prefetch, 0, 64)},
      {"listen", str_flag(&o.listen)},
      {"summary", str_flag(&o.summary)},
      {"step-file", str_flag(&o.step_file)},
      {"timeline", str_flag(&o.timeline)},
      {"ps-cpu-ns-per-row", int_flag(&o.ps_cpu_ns_per_row, 0, 1'000'000)},
      {"parallel-rpcs", bool_flag(&o.parallel_rpcs)},
      {"show-memory", bool_flag(&o.show_memory)},
      {"seed", int_flag(&seed, 0, INT64_MAX)},
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      *error = "help";
      return false;
    }
    if (arg.rfind("--", 0) != 0) {
      *error = fmt::format("unexpected argument '{}'", arg);
      return false;
    }
    std::string name = arg.substr(2), value;
    size_t eq = name.find('=');
    bool has_value = eq != std::string::npos;
    if (has_value) {
      value = name.substr(eq + 1);
      name.resize(eq);
    }
    std::replace(name.begin(), name.end(), '_', '-');
    auto f = flags.find(name);
    if (f == flags.end()) {
      *error = fmt::format("unknown flag --{}", name);
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *error = fmt::format("--{} needs a value", name);
        return false;
      }
      value = argv[++i];
    }
    if (!f->second(name, value)) return false;
  }
  o.ps_threads = static_cast<int>(ps_threads);
  o.worker_threads = static_cast<int>(worker_threads);
  o.rows_per_step = static_cast<int>(rps);
  o.dim = static_cast<int>(dim);
  o.dense_floats = static_cast<int>(dense);
  o.prefetch = static_cast<int>(prefetch);
  o.seed = static_cast<uint64_t>(seed);
  if (placement == "hot") {
    o.placement = Placement::kHot;
  } else if (placement.empty() || placement == "balanced") {
    o.placement = Placement::kBalanced;
  } else {
    *error = fmt::format("--placement: '{}' is not balanced or hot", placement);
    return false;
  }

  if (have_job) {  // TF1 flags win over TF_CONFIG, as in a hand-written manifest.
    o.job = job_name;
    o.index = static_cast<int>(task_index);
    o.ps_hosts = SplitHosts(ps_hosts);
    o.worker_hosts = SplitHosts(worker_hosts);
    o.hdfs_hosts = SplitHosts(hdfs_hosts);
    o.role_source = "flags";
    if (!CheckRole(o, {"--job_name", "--task_index", "--ps_hosts"}, error)) return false;
  } else if (tf_config != nullptr && *tf_config != '\0') {
    if (!ParseTfConfig(tf_config, &o, error)) return false;
  } else {
    *error = "no role: set TF_CONFIG or --job_name/--task_index";
    return false;
  }
  if (o.job == "hdfs" && o.listen.empty()) {
    o.listen = o.hdfs_hosts.empty() ? "0.0.0.0:9866" : o.hdfs_hosts[o.index];
  }
  return true;
}

std::string Usage() {
  return R"(psload: a miniature TensorFlow PS/worker job (one process = one task).
Role (like TF): env TF_CONFIG={"cluster":{"ps":[...],"worker":[...]},"task":{"type":"ps","index":0}}
  or --job_name=ps|worker|chief|hdfs --task_index=N --ps_hosts=h:p,.. --worker_hosts=h:p,..
Knobs (defaults):
  --placement=balanced|hot  --ps-threads=2  --worker-threads=1  --compute-us=1000
  --compute-sleep-us=0 (worker: compute wall time that uses no CPU here, as on a device)
  --rows-per-step=512  --dim=16  --rows=65536 (per PS)  --dense-floats=256
  --duration=10 (s; PS/hdfs: until SIGTERM unless given)  --steps=N (cap)
  --hdfs=host:port  --input-bytes-per-step=262144  --hdfs-rate-mbps=0 (megabits/s, 0 = no cap)
  --prefetch=0 (worker: input batches read ahead of the step on a tf_data_iter thread)
  --listen=0.0.0.0:9866 (hdfs)  --summary=FILE (JSON)  --connect-timeout=30  --seed=N
  --step-file=FILE.tfdiag-steps (worker: completed steps, rewritten after each step)
  --timeline=FILE.json (worker, PS: a TF1 timeline of the task's ops, written at exit)
  --parallel-rpcs=false (worker: every PS's request sent before any reply is read, as TF does)
  --ps-cpu-ns-per-row=0 (PS: CPU time per row gathered or updated, as a real optimizer spends)
  --show-memory=false (PS timeline: each variable's size, as TF's show_memory=True gives it)
)";
}

}  // namespace psload
