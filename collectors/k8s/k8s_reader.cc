#include "collectors/k8s/k8s_reader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tfdiag {

namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Str(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : ""; }

// n[k0][k1]... without throwing on a missing level: an undefined node when any is absent.
YAML::Node Get(const YAML::Node& n, std::initializer_list<const char*> keys) {
  YAML::Node cur = n;
  for (const char* k : keys) {
    if (!cur.IsDefined() || !cur.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node c = cur;
    const YAML::Node next = c[k];
    if (!next.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
    cur.reset(next);
  }
  return cur;
}

// A replica-type or label value naming a TF role: "PS", "ps", "Worker", "MASTER", ...
std::string RoleFromName(const std::string& name) {
  const std::string n = Lower(name);
  if (n == "ps" || n == "parameter_server" || n == "parameter-server") return "ps";
  if (n == "worker" || n == "chief" || n == "master" || n == "evaluator") return n;
  return "";
}

// A role named by one dash/underscore/dot-separated token of an object or pod name
// ("tf-ps-0" -> ps): the weakest inference, used last.
std::string RoleInName(const std::string& name) {
  std::string token;
  for (size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '-' || name[i] == '_' || name[i] == '.') {
      std::string r = RoleFromName(token);
      if (!r.empty()) return r;
      token.clear();
    } else {
      token += name[i];
    }
  }
  return "";
}

// --name=value and --name value pairs in every whitespace-separated token of argv (so flags
// inside `sh -c "python train.py --job_name=ps ..."` count too). Keys without dashes.
std::map<std::string, std::string> FlagsOf(const std::vector<std::string>& argv) {
  std::vector<std::string> tokens;
  for (const std::string& a : argv) {
    std::istringstream is(a);
    std::string t;
    while (is >> t) {
      while (!t.empty() && (t.back() == ';' || t.back() == '\\' || t.back() == '"')) t.pop_back();
      if (!t.empty()) tokens.push_back(t);
    }
  }
  std::map<std::string, std::string> flags;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t.size() < 3 || t[0] != '-') continue;
    std::string body = t.substr(t[1] == '-' ? 2 : 1);
    size_t eq = body.find('=');
    if (eq != std::string::npos) {
      flags[body.substr(0, eq)] = body.substr(eq + 1);
    } else if (i + 1 < tokens.size() && tokens[i + 1][0] != '-') {
      flags[body] = tokens[i + 1];
    } else {
      flags[body] = "";
    }
  }
  return flags;
}

class Reader {
 public:
  Reader(const std::string& file, K8sDeployment* out) : file_(file), out_(out) {}

  Status Document(const YAML::Node& d, int doc) {
    doc_ = doc;
    if (!d || d.IsNull()) return OkStatus();
    if (!d.IsMap()) return Err("", "expected a mapping (a Kubernetes object)");
    return Object(d, "");
  }
  int objects() const { return objects_; }

 private:
  K8sSource Src(const std::string& path) const { return {file_, doc_, path}; }
  static std::string Join(const std::string& base, const std::string& sub) {
    return base.empty() ? sub : base + "." + sub;
  }
  Status Err(const std::string& path, const std::string& what) const {
    return InvalidInput("{}: {}", Src(path).Where(), what);
  }
  void Note(const std::string& s) { out_->notes.push_back(Src("").Where() + ": " + s); }

  Status Object(const YAML::Node& o, const std::string& base) {
    const std::string kind = Str(o["kind"]), api = Str(o["apiVersion"]);
    const std::string name = Str(Get(o, {"metadata", "name"}));
    if (kind.empty() && api.empty()) return OkStatus();
    ++objects_;
    if (kind == "List" || (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0)) {
      const YAML::Node items = o["items"];
      if (!items || items.IsNull()) return OkStatus();
      if (!items.IsSequence()) return Err(Join(base, "items"), "expected a list");
      for (size_t i = 0; i < items.size(); ++i) {
        if (!items[i].IsMap())
          return Err(Join(base, fmt::format("items[{}]", i)), "expected a map");
        const std::string ip = Join(base, fmt::format("items[{}]", i));
        // The kubelet's /pods leaves kind/apiVersion out of PodList items.
        if (Str(items[i]["kind"]).empty() && kind == "PodList") {
          TFDIAG_RETURN_IF_ERROR(Pod(items[i], ip));
        } else {
          TFDIAG_RETURN_IF_ERROR(Object(items[i], ip));
        }
      }
      return OkStatus();
    }
    if (kind == "Pod") return Pod(o, base);
    const YAML::Node spec = Get(o, {"spec"});
    const std::string sp = Join(base, "spec");
    if (kind == "TFJob") {
      if (spec["tfReplicaSpecs"]) {  // kubeflow.org/v1
        return Replicas(spec["tfReplicaSpecs"], Join(sp, "tfReplicaSpecs"), kind, name, "");
      }
      const YAML::Node list = spec["replicaSpecs"];  // kubeflow.org/v1alpha1
      if (!list || !list.IsSequence()) return Err(sp, "TFJob without tfReplicaSpecs/replicaSpecs");
      for (size_t i = 0; i < list.size(); ++i) {
        TFDIAG_RETURN_IF_ERROR(Replica(list[i], Join(sp, fmt::format("replicaSpecs[{}]", i)), kind,
                                       name, Str(list[i]["tfReplicaType"])));
      }
      return OkStatus();
    }
    if (kind == "ElasticJob") {  // DLRover elastic.iml.github.io
      return Replicas(spec["replicaSpecs"], Join(sp, "replicaSpecs"), kind, name, "");
    }
    if (kind == "Job" && api.rfind("batch.volcano.sh", 0) == 0) {
      const YAML::Node tasks = spec["tasks"];
      if (!tasks || !tasks.IsSequence()) return Err(Join(sp, "tasks"), "expected a list");
      for (size_t i = 0; i < tasks.size(); ++i) {
        TFDIAG_RETURN_IF_ERROR(Replica(tasks[i], Join(sp, fmt::format("tasks[{}]", i)),
                                       "Volcano Job", name, Str(tasks[i]["name"])));
      }
      return OkStatus();
    }
    if (kind == "Job" || kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet") {
      return Replica(o, base, kind, name, "", true);
    }
    Note(fmt::format("{} '{}' skipped (not a TF job or pod)", kind, name));
    return OkStatus();
  }

  Status Replicas(const YAML::Node& m, const std::string& path, const std::string& kind,
                  const std::string& name, const std::string&) {
    if (!m || !m.IsMap()) return Err(path, "expected a map of replica types");
    for (auto it = m.begin(); it != m.end(); ++it) {
      const std::string type = it->first.as<std::string>();
      TFDIAG_RETURN_IF_ERROR(Replica(it->second, Join(path, type), kind, name, type));
    }
    return OkStatus();
  }

  // One replica spec: {replicas, template}; `workload` for Job/Deployment/StatefulSet, whose
  // object is the spec holder and whose role must be inferred.
  Status Replica(const YAML::Node& r, const std::string& path, const std::string& kind,
                 const std::string& name, const std::string& type, bool workload = false) {
    if (!r.IsMap()) return Err(path, "expected a map");
    K8sReplicaType rt;
    rt.object_kind = kind;
    rt.object_name = name;
    rt.name = type;
    rt.source = Src(path);
    const YAML::Node holder = workload ? Get(r, {"spec"}) : r;
    const std::string hp = workload ? Join(path, "spec") : path;
    YAML::Node count = Get(holder, {kind == "Job" && workload ? "parallelism" : "replicas"});
    if (count && count.IsScalar()) {
      rt.replicas = std::atoi(count.Scalar().c_str());
      rt.replicas_given = true;
    }
    const YAML::Node tmpl = Get(holder, {"template"});
    if (!tmpl || !tmpl.IsMap()) return Err(Join(hp, "template"), "missing pod template");
    rt.pod_spec = Src(Join(hp, "template.spec"));
    TFDIAG_RETURN_IF_ERROR(PodSpec(Get(tmpl, {"spec"}), rt.pod_spec.path, &rt.containers,
                                   &rt.anti_affinity_hostname, &rt.anti_affinity_required));
    rt.role = RoleFromName(type);
    if (!rt.role.empty()) {
      rt.role_source = "replica type";
    } else {
      InferRole(Get(tmpl, {"metadata", "labels"}), rt.containers, workload ? name : type, &rt.role,
                &rt.role_source);
      if (!rt.role.empty()) {
        Note(fmt::format("{}: role {} inferred from {}", path.empty() ? kind : path, rt.role,
                         rt.role_source));
      }
    }
    out_->replicas.push_back(std::move(rt));
    return OkStatus();
  }

  // Role from labels, then --job_name flags, then TF_CONFIG's task.type, then the name.
  static void InferRole(const YAML::Node& labels, const std::vector<K8sContainer>& cs,
                        const std::string& name, std::string* role, std::string* source) {
    static const char* kLabels[] = {"training.kubeflow.org/replica-type",
                                    "tf-replica-type",
                                    "replica-type",
                                    "volcano.sh/task-spec",
                                    "role",
                                    "app.kubernetes.io/component",
                                    "job"};
    if (labels && labels.IsMap()) {
      for (const char* k : kLabels) {
        std::string r = RoleFromName(Str(labels[k]));
        if (!r.empty()) {
          *role = r;
          *source = std::string("label ") + k;
          return;
        }
      }
    }
    for (const K8sContainer& c : cs) {
      auto f = c.flags.find("job_name");
      if (f != c.flags.end() && !RoleFromName(f->second).empty()) {
        *role = RoleFromName(f->second);
        *source = "flags (--job_name)";
        return;
      }
      if (const K8sEnvVar* e = c.Env("TF_CONFIG"); e != nullptr && !e->value.empty()) {
        try {
          std::string r = RoleFromName(Str(Get(YAML::Load(e->value), {"task", "type"})));
          if (!r.empty()) {
            *role = r;
            *source = "TF_CONFIG";
            return;
          }
        } catch (const YAML::Exception&) {
        }
      }
    }
    std::string r = RoleInName(name);
    if (!r.empty()) {
      *role = r;
      *source = "name";
    }
  }

  Status PodSpec(const YAML::Node& spec, const std::string& path, std::vector<K8sContainer>* cs,
                 bool* anti, bool* anti_required) {
    if (!spec || !spec.IsMap()) return Err(path, "missing pod spec");
    const YAML::Node list = spec["containers"];
    if (!list || !list.IsSequence()) return Err(Join(path, "containers"), "expected a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string cp = Join(path, fmt::format("containers[{}]", i));
      if (!list[i].IsMap()) return Err(cp, "expected a map");
      K8sContainer c;
      TFDIAG_RETURN_IF_ERROR(Container(list[i], cp, &c));
      cs->push_back(std::move(c));
    }
    const YAML::Node paa = Get(spec, {"affinity", "podAntiAffinity"});
    if (paa && paa.IsMap()) {
      const YAML::Node req = paa["requiredDuringSchedulingIgnoredDuringExecution"];
      const YAML::Node pref = paa["preferredDuringSchedulingIgnoredDuringExecution"];
      for (size_t i = 0; req && req.IsSequence() && i < req.size(); ++i) {
        if (Str(req[i]["topologyKey"]) == "kubernetes.io/hostname") *anti = *anti_required = true;
      }
      for (size_t i = 0; pref && pref.IsSequence() && i < pref.size(); ++i) {
        if (Str(Get(pref[i], {"podAffinityTerm", "topologyKey"})) == "kubernetes.io/hostname")
          *anti = true;
      }
    }
    return OkStatus();
  }

  Status Container(const YAML::Node& c, const std::string& path, K8sContainer* out) {
    out->name = Str(c["name"]);
    out->source = Src(path);
    const YAML::Node res = c["resources"];
    if (res && res.IsMap()) {
      K8sResources& r = out->res;
      auto cpu = [&](const char* which, int64_t* m, std::string* text) -> Status {
        const YAML::Node q = Get(res, {which, "cpu"});
        if (!q) return OkStatus();
        *text = Str(q);
        *m = ParseCpuMillis(*text);
        if (*m < 0)
          return Err(Join(path, std::string("resources.") + which + ".cpu"),
                     fmt::format("bad CPU quantity '{}'", *text));
        return OkStatus();
      };
      TFDIAG_RETURN_IF_ERROR(cpu("requests", &r.cpu_request_m, &r.cpu_request_text));
      TFDIAG_RETURN_IF_ERROR(cpu("limits", &r.cpu_limit_m, &r.cpu_limit_text));
      if (Get(res, {"requests", "memory"}))
        r.mem_request = ParseMemoryBytes(Str(Get(res, {"requests", "memory"})));
      if (Get(res, {"limits", "memory"}))
        r.mem_limit = ParseMemoryBytes(Str(Get(res, {"limits", "memory"})));
      if (Get(res, {"limits", "nvidia.com/gpu"})) {
        r.gpu_limit = std::atoll(Str(Get(res, {"limits", "nvidia.com/gpu"})).c_str());
      }
    }
    const YAML::Node env = c["env"];
    for (size_t i = 0; env && env.IsSequence() && i < env.size(); ++i) {
      K8sEnvVar e{Str(env[i]["name"]), Str(env[i]["value"]), ""};
      const YAML::Node from = env[i]["valueFrom"];
      if (from && from.IsMap()) {
        if (from["resourceFieldRef"]) {
          e.value_from = "resourceFieldRef:" + Str(Get(from, {"resourceFieldRef", "resource"}));
        } else if (from["fieldRef"]) {
          e.value_from = "fieldRef:" + Str(Get(from, {"fieldRef", "fieldPath"}));
        } else {
          e.value_from = from.begin()->first.as<std::string>();
        }
      }
      out->env.push_back(std::move(e));
    }
    for (const char* key : {"command", "args"}) {
      const YAML::Node l = c[key];
      for (size_t i = 0; l && l.IsSequence() && i < l.size(); ++i) out->argv.push_back(Str(l[i]));
    }
    out->flags = FlagsOf(out->argv);
    return OkStatus();
  }

  Status Pod(const YAML::Node& o, const std::string& base) {
    K8sPod p;
    const YAML::Node md = Get(o, {"metadata"});
    p.name = Str(Get(md, {"name"}));
    p.namespace_ = Str(Get(md, {"namespace"}));
    p.source = Src(base);
    const YAML::Node labels = Get(md, {"labels"});
    if (labels && labels.IsMap()) {
      for (auto it = labels.begin(); it != labels.end(); ++it)
        p.labels[it->first.as<std::string>()] = Str(it->second);
    }
    const YAML::Node owners = Get(md, {"ownerReferences"});
    if (owners && owners.IsSequence() && owners.size() > 0) {
      p.owner_kind = Str(owners[0]["kind"]);
      p.owner_name = Str(owners[0]["name"]);
    }
    p.node = Str(Get(o, {"spec", "nodeName"}));
    p.pod_ip = Str(Get(o, {"status", "podIP"}));
    p.qos = Str(Get(o, {"status", "qosClass"}));
    bool anti = false, req = false;
    TFDIAG_RETURN_IF_ERROR(
        PodSpec(Get(o, {"spec"}), Join(base, "spec"), &p.containers, &anti, &req));
    InferRole(labels, p.containers, p.name, &p.role, &p.role_source);
    for (const char* k : {"training.kubeflow.org/replica-index", "tf-replica-index",
                          "volcano.sh/task-index", "replica-index"}) {
      auto it = p.labels.find(k);
      if (it != p.labels.end()) p.index = std::atoi(it->second.c_str());
    }
    if (p.index < 0 && !p.role.empty()) {  // "<job>-<type>-<i>"
      size_t dash = p.name.rfind('-');
      if (dash != std::string::npos && dash + 1 < p.name.size() &&
          std::all_of(p.name.begin() + dash + 1, p.name.end(), ::isdigit))
        p.index = std::atoi(p.name.c_str() + dash + 1);
    }
    out_->pods.push_back(std::move(p));
    return OkStatus();
  }

  const std::string& file_;
  K8sDeployment* out_;
  int doc_ = 0;
  int objects_ = 0;
};

}  // namespace

int64_t ParseCpuMillis(std::string_view q) {
  std::string s(q);
  if (s.empty()) return -1;
  bool milli = s.back() == 'm';
  if (milli) s.pop_back();
  size_t i = 0;
  int64_t whole = 0, frac = 0, frac_digits = 0;
  bool digits = false, round_up = false;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, digits = true)
    whole = whole * 10 + (s[i] - '0');
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, digits = true) {
      if (frac_digits < (milli ? 0 : 3)) {
        frac = frac * 10 + (s[i] - '0');
        ++frac_digits;
      } else if (s[i] != '0') {
        round_up = true;  // Kubernetes rounds sub-millicore precision up to 1m
      }
    }
  }
  if (!digits || i != s.size()) {
    char* end = nullptr;  // exponent forms ("1e3")
    double v = std::strtod(std::string(q).c_str(), &end);
    if (milli || end == nullptr || *end != '\0' || !(v >= 0)) return -1;
    return static_cast<int64_t>(std::ceil(v * 1000));
  }
  if (milli) return whole + (round_up ? 1 : 0);
  while (frac_digits < 3) frac *= 10, ++frac_digits;
  return whole * 1000 + frac + (round_up ? 1 : 0);
}

int64_t ParseMemoryBytes(std::string_view q) {
  static const std::pair<const char*, long double> kSuffixes[] = {{"Ki", 1024.0L},
                                                                  {"Mi", 1048576.0L},
                                                                  {"Gi", 1073741824.0L},
                                                                  {"Ti", 1099511627776.0L},
                                                                  {"Pi", 1125899906842624.0L},
                                                                  {"Ei", 1152921504606846976.0L},
                                                                  {"k", 1e3L},
                                                                  {"K", 1e3L},
                                                                  {"M", 1e6L},
                                                                  {"G", 1e9L},
                                                                  {"T", 1e12L},
                                                                  {"P", 1e15L},
                                                                  {"E", 1e18L},
                                                                  {"m", 1e-3L}};
  std::string s(q);
  long double mult = 1;
  for (const auto& [suf, m] : kSuffixes) {
    size_t n = std::char_traits<char>::length(suf);
    if (s.size() > n && s.compare(s.size() - n, n, suf) == 0) {
      s.resize(s.size() - n);
      mult = m;
      break;
    }
  }
  char* end = nullptr;
  long double v = std::strtold(s.c_str(), &end);
  if (s.empty() || end == nullptr || *end != '\0' || !(v >= 0)) return -1;
  return static_cast<int64_t>(std::ceil(v * mult));
}

bool LooksLikeK8s(std::string_view head) {
  if (head.find("traceEvents") != std::string_view::npos) return false;
  if (head.find("\"apiVersion\"") != std::string_view::npos &&
      head.find("\"kind\"") != std::string_view::npos)
    return true;
  size_t pos = 0;
  while (pos < head.size()) {
    size_t nl = head.find('\n', pos);
    std::string_view line = head.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    if (line.rfind("apiVersion:", 0) == 0 || line.rfind("kind:", 0) == 0) return true;
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return false;
}

bool IsK8sFile(const std::string& path) {
  auto ends = [&](const char* s) {
    size_t n = std::char_traits<char>::length(s);
    return path.size() >= n && path.compare(path.size() - n, n, s) == 0;
  };
  if (ends(".yaml") || ends(".yml")) return true;
  std::ifstream in(path, std::ios::binary);
  std::string head(16384, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b)
    return false;  // gzip: a timeline
  return LooksLikeK8s(head);
}

Status ParseK8sText(std::string_view text, const std::string& file, K8sDeployment* out) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    std::string hint = text.find("{{") != std::string_view::npos
                           ? " (a Helm template? render it with `helm template` first)"
                           : "";
    return InvalidInput("{}: line {}, column {}: {}{}", file, e.mark.line + 1, e.mark.column + 1,
                        e.msg, hint);
  }
  Reader reader(file, out);
  try {
    for (size_t i = 0; i < docs.size(); ++i) {
      TFDIAG_RETURN_IF_ERROR(reader.Document(docs[i], static_cast<int>(i)));
    }
  } catch (const YAML::Exception& e) {
    return InvalidInput("{}: line {}, column {}: {}", file, e.mark.line + 1, e.mark.column + 1,
                        e.msg);
  }
  if (reader.objects() == 0) {
    std::string hint = text.find("{{") != std::string_view::npos
                           ? " (a Helm template? render it with `helm template` first)"
                           : "";
    return InvalidInput("{}: no Kubernetes objects (apiVersion/kind){}", file, hint);
  }
  out->files.push_back(file);
  return OkStatus();
}

Status ReadK8sFile(const std::string& path, K8sDeployment* out, const std::string& name) {
  const std::string& shown = name.empty() ? path : name;
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("{}: cannot open", shown);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseK8sText(ss.str(), shown, out);
}

}  // namespace tfdiag
