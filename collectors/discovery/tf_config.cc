#include "collectors/discovery/tf_config.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <charconv>
#include <climits>

#include "core/json_dom.h"

namespace tfdiag {
namespace {

using rapidjson::Value;

Status Err(std::string_view field, std::string_view what) {
  return InvalidInput("TF_CONFIG: {}: {}", field, what);
}

bool ParseInt(std::string_view s, int* out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The last member of object `v` named `name`, else v.MemberEnd(). TensorFlow reads TF_CONFIG
// with Python's json.loads (_load_tf_config: `json.loads(os.environ.get('TF_CONFIG', '{}'))`,
// https://github.com/tensorflow/tensorflow/blob/master/tensorflow/python/distribute/
// cluster_resolver/tfconfig_cluster_resolver.py), which keeps the last
// of repeated names ("ignores all but the last name-value pair for a given name",
// https://docs.python.org/3/library/json.html#repeated-names-within-an-object); RapidJSON's
// FindMember returns the first, so a TF_CONFIG with two "task" keys named another task.
Value::ConstMemberIterator LastMember(const Value& v, const char* name) {
  Value::ConstMemberIterator last = v.MemberEnd();
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    if (it->name == name) last = it;
  }
  return last;
}

// Parses one job into *out; `budget` is what kMaxClusterTasks leaves, `dropped` counts the rest.
Status ParseJob(const std::string& job, const Value& v, JobTasks* out, int* budget, int* dropped) {
  std::string field = "cluster." + job;
  auto address = [&](const Value& a, const std::string& where) -> Status {
    if (!a.IsString() || a.GetStringLength() == 0)
      return Err(where, "expected a 'host:port' string");
    return OkStatus();
  };
  if (v.IsArray()) {
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      TFDIAG_RETURN_IF_ERROR(address(v[i], fmt::format("{}[{}]", field, i)));
      if (*budget <= 0) {
        ++*dropped;
        continue;
      }
      --*budget;
      out->Append(std::string(v[i].GetString(), v[i].GetStringLength()));
    }
    return OkStatus();
  }
  if (v.IsObject()) {  // sparse: {"0": "h:2222", "3": "h:2223"}
    std::vector<TaskAddress> tasks;
    for (auto& m : v.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      int idx = 0;
      if (!ParseInt(key, &idx) || idx < 0) {
        return Err(field + "." + key, "expected a task index as key");
      }
      TFDIAG_RETURN_IF_ERROR(address(m.value, field + "." + key));
      if (*budget <= 0) {
        ++*dropped;
        continue;
      }
      --*budget;
      tasks.push_back({idx, std::string(m.value.GetString(), m.value.GetStringLength())});
    }
    *out = JobTasks::FromUnsorted(std::move(tasks));
    return OkStatus();
  }
  return Err(field, "expected a list of 'host:port' strings");
}

// Splits "--name=value" / "-name=value" / "--name" into name and value.
bool FlagName(std::string_view arg, std::string_view* name, std::string_view* value,
              bool* has_value) {
  if (arg.size() < 2 || arg[0] != '-') return false;
  arg.remove_prefix(arg[1] == '-' ? 2 : 1);
  size_t eq = arg.find('=');
  *name = arg.substr(0, eq);
  *has_value = eq != std::string_view::npos;
  *value = *has_value ? arg.substr(eq + 1) : std::string_view();
  return !name->empty();
}

bool IsTfFlag(std::string_view name) {
  return name == "job_name" || name == "task_index" ||
         (name.size() > 6 && name.substr(name.size() - 6) == "_hosts");
}

}  // namespace

JobTasks::JobTasks(std::initializer_list<std::string> dense) {
  for (const std::string& a : dense) Append(a);
}

JobTasks JobTasks::FromUnsorted(std::vector<TaskAddress> tasks) {
  std::stable_sort(tasks.begin(), tasks.end(),
                   [](const TaskAddress& a, const TaskAddress& b) { return a.index < b.index; });
  JobTasks out;
  for (TaskAddress& t : tasks) {
    if (!out.tasks_.empty() && out.tasks_.back().index == t.index) {
      out.tasks_.back() = std::move(t);  // a duplicate key: the last wins
    } else {
      out.tasks_.push_back(std::move(t));
    }
  }
  return out;
}

void JobTasks::Append(std::string address) {
  const int index = static_cast<int>(tasks_.size());
  tasks_.push_back({index, std::move(address)});
}

const std::string* JobTasks::Find(int index) const {
  auto it = std::lower_bound(tasks_.begin(), tasks_.end(), index,
                             [](const TaskAddress& t, int i) { return t.index < i; });
  return it != tasks_.end() && it->index == index ? &it->address : nullptr;
}

int ClusterSpec::NumTasks(std::string_view job) const {
  auto it = jobs.find(std::string(job));
  return it == jobs.end() ? 0 : static_cast<int>(it->second.size());
}

std::string ClusterSpec::Address(std::string_view job, int index) const {
  auto it = jobs.find(std::string(job));
  if (it == jobs.end()) return "";
  const std::string* a = it->second.Find(index);
  return a != nullptr ? *a : "";
}

StatusOr<TfTaskConfig> ParseTfConfig(std::string_view json) {
  rapidjson::Document doc;
  // Iterative and depth-limited: a tenant's TF_CONFIG of 131,000 '[' would overflow the stack of
  // RapidJSON's recursive parser (SIGSEGV in attach and the agent).
  TFDIAG_RETURN_IF_ERROR(ParseJsonText("TF_CONFIG", json, &doc));
  if (!doc.IsObject()) return InvalidInput("TF_CONFIG: expected a JSON object");
  TfTaskConfig cfg;
  cfg.source = "TF_CONFIG";
  auto cluster = LastMember(doc, "cluster");
  if (cluster != doc.MemberEnd() && !cluster->value.IsNull()) {
    if (!cluster->value.IsObject()) return Err("cluster", "expected an object {job: [host:port]}");
    int budget = kMaxClusterTasks;
    for (auto& m : cluster->value.GetObject()) {
      std::string job(m.name.GetString(), m.name.GetStringLength());
      cfg.cluster.jobs[job] = JobTasks();  // a repeated job name: the last one counts
      TFDIAG_RETURN_IF_ERROR(
          ParseJob(job, m.value, &cfg.cluster.jobs[job], &budget, &cfg.tasks_dropped));
    }
  }
  auto task = LastMember(doc, "task");
  if (task != doc.MemberEnd() && !task->value.IsNull()) {
    if (!task->value.IsObject()) return Err("task", "expected an object {type, index}");
    auto type = LastMember(task->value, "type");
    if (type != task->value.MemberEnd()) {
      if (!type->value.IsString()) return Err("task.type", "expected a string");
      cfg.job.assign(type->value.GetString(), type->value.GetStringLength());
    }
    auto index = LastMember(task->value, "index");
    if (index != task->value.MemberEnd()) {
      if (!index->value.IsInt() || index->value.GetInt() < 0) {
        return Err("task.index", "expected an integer");
      }
      cfg.index = index->value.GetInt();
    } else if (!cfg.job.empty()) {
      cfg.index = 0;  // TFConfigClusterResolver defaults the index to 0
    }
    auto job = cfg.cluster.jobs.find(cfg.job);
    if (!cfg.job.empty() && job != cfg.cluster.jobs.end() && !job->second.empty() &&
        job->second.Find(cfg.index) == nullptr && cfg.tasks_dropped == 0) {
      return Err("task.index", fmt::format("{} out of range for job '{}' with {} tasks", cfg.index,
                                           cfg.job, job->second.size()));
    }
  }
  return cfg;
}

std::string FlagValue(const std::vector<std::string>& argv, std::string_view flag) {
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view name, value;
    bool has_value = false;
    if (!FlagName(argv[i], &name, &value, &has_value) || name != flag) continue;
    if (has_value) return std::string(value);
    if (i + 1 < argv.size() && (argv[i + 1].empty() || argv[i + 1][0] != '-')) return argv[i + 1];
    return "";
  }
  return "";
}

bool HasTfFlags(const std::vector<std::string>& argv) {
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view name, value;
    bool has_value = false;
    if (FlagName(argv[i], &name, &value, &has_value) &&
        (name == "job_name" || name == "task_index")) {
      return true;
    }
  }
  return false;
}

StatusOr<TfTaskConfig> ParseTfFlags(const std::vector<std::string>& argv) {
  if (!HasTfFlags(argv)) return NotFound("argv has neither --job_name nor --task_index");
  TfTaskConfig cfg;
  cfg.source = "flags";
  int budget = kMaxClusterTasks;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string_view name, value;
    bool has_value = false;
    if (!FlagName(argv[i], &name, &value, &has_value) || !IsTfFlag(name)) continue;
    if (!has_value) {  // "--flag value"
      if (i + 1 >= argv.size() || (!argv[i + 1].empty() && argv[i + 1][0] == '-')) {
        return InvalidInput("--{}: missing value", name);
      }
      value = argv[++i];
    }
    if (name == "job_name") {
      if (value.empty()) return InvalidInput("--job_name: missing value");
      cfg.job = std::string(value);
    } else if (name == "task_index") {
      if (!ParseInt(value, &cfg.index) || cfg.index < 0) {
        return InvalidInput("--task_index: expected an integer, got '{}'", value);
      }
    } else {  // --<job>_hosts=a:1,b:2
      std::string job(name.substr(0, name.size() - 6));
      JobTasks& hosts = cfg.cluster.jobs[job];
      hosts = JobTasks();
      while (!value.empty()) {
        size_t comma = value.find(',');
        std::string_view h = value.substr(0, comma);
        if (!h.empty()) {
          if (budget > 0) {
            --budget;
            hosts.Append(std::string(h));
          } else {
            ++cfg.tasks_dropped;
          }
        }
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
      }
      if (hosts.empty()) cfg.cluster.jobs.erase(job);
    }
  }
  if (!cfg.job.empty() && cfg.index < 0) cfg.index = 0;  // TF1 flag default
  int n = cfg.cluster.NumTasks(cfg.job);
  if (n > 0 && cfg.index >= n && cfg.tasks_dropped == 0) {
    return InvalidInput("--task_index: {} out of range for --{}_hosts with {} hosts", cfg.index,
                        cfg.job, n);
  }
  return cfg;
}

}  // namespace tfdiag
