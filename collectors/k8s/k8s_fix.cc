#include "collectors/k8s/k8s_fix.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <regex>

#include "collectors/k8s/k8s_reader.h"

namespace tfdiag {

namespace {

std::string Str(const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : ""; }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool Has(const YAML::Node& n, const std::string& key) {
  const YAML::Node c = n;  // const access: no zombie entries
  return n.IsMap() && c[key].IsDefined() && !c[key].IsNull();
}

YAML::Node Quoted(const std::string& s) {
  YAML::Node n(s);
  n.SetTag("!");  // emitted double-quoted, as a string
  return n;
}

// The node at a reader field path ("spec.tfReplicaSpecs.PS.template.spec.containers[0]").
YAML::Node Navigate(const YAML::Node& root, const std::string& path) {
  YAML::Node cur;
  cur.reset(root);
  size_t pos = 0;
  while (pos < path.size()) {
    size_t dot = path.find('.', pos);
    std::string seg = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    pos = dot == std::string::npos ? path.size() : dot + 1;
    size_t br = seg.find('[');
    std::string key = seg.substr(0, br);
    if (!key.empty()) {
      YAML::Node next = cur[key];
      cur.reset(next);
    }
    while (br != std::string::npos) {
      size_t close = seg.find(']', br);
      int idx = std::stoi(seg.substr(br + 1, close - br - 1));
      YAML::Node next = cur[idx];
      cur.reset(next);
      br = seg.find('[', close);
    }
  }
  return cur;
}

// Emits `n` keeping quoting (a scalar quoted in the input has tag "!"), flow style and literal
// blocks; yaml-cpp's own `out << node` would unquote "2" into the integer 2.
void Emit(YAML::Emitter& out, const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      out << YAML::Null;
      return;
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      const std::string& tag = n.Tag();
      if (tag == "!") {
        const bool literal = s.find('\n') != std::string::npos && s.size() >= 2 &&
                             s.back() == '\n' && s[s.size() - 2] != '\n' && s[0] != ' ' &&
                             !std::regex_search(s, std::regex("[ \t]\n|\t"));
        out << (literal ? YAML::Literal : YAML::DoubleQuoted) << s;
      } else if (tag.empty() || tag == "?") {
        out << s;
      } else {
        out << YAML::VerbatimTag(tag) << s;
      }
      return;
    }
    case YAML::NodeType::Sequence:
      if (n.Style() == YAML::EmitterStyle::Flow) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const YAML::Node& e : n) Emit(out, e);
      out << YAML::EndSeq;
      return;
    case YAML::NodeType::Map:
      if (n.Style() == YAML::EmitterStyle::Flow) out << YAML::Flow;
      out << YAML::BeginMap;
      for (auto it = n.begin(); it != n.end(); ++it) {
        out << YAML::Key;
        Emit(out, it->first);
        out << YAML::Value;
        Emit(out, it->second);
      }
      out << YAML::EndMap;
      return;
  }
}

std::string JsonString(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c == '\n') {
      o += "\\n";
    } else if (c == '\t') {
      o += "\\t";
    } else if (c < 0x20) {
      o += fmt::format("\\u{:04x}", c);
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

// JSON for a node, resolving plain scalars as YAML 1.1 does (Kubernetes' sigs.k8s.io/yaml).
std::string ToJson(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return "null";
    case YAML::NodeType::Scalar: {
      const std::string& s = n.Scalar();
      if (n.Tag() == "?") {
        static const std::regex kInt("[-+]?(0|[1-9][0-9]*)");
        static const std::regex kFloat("[-+]?([0-9]+\\.[0-9]*|\\.[0-9]+)([eE][-+]?[0-9]+)?");
        static const std::regex kTrue("true|True|TRUE|yes|Yes|YES|on|On|ON");
        static const std::regex kFalse("false|False|FALSE|no|No|NO|off|Off|OFF");
        if (std::regex_match(s, kInt) || std::regex_match(s, kFloat)) return s;
        if (std::regex_match(s, kTrue)) return "true";
        if (std::regex_match(s, kFalse)) return "false";
        if (s == "~" || s == "null" || s == "Null" || s == "NULL") return "null";
      }
      return JsonString(s);
    }
    case YAML::NodeType::Sequence: {
      std::string o = "[";
      for (const YAML::Node& e : n) o += (o.size() > 1 ? "," : "") + ToJson(e);
      return o + "]";
    }
    case YAML::NodeType::Map: {
      std::string o = "{";
      for (auto it = n.begin(); it != n.end(); ++it)
        o += (o.size() > 1 ? "," : "") + JsonString(it->first.Scalar()) + ":" + ToJson(it->second);
      return o + "}";
    }
  }
  return "null";
}

// RFC 7386 merge patch turning `a` into `b` ("" when equal); lists are replaced whole.
std::string MergePatch(const YAML::Node& a, const YAML::Node& b) {
  if (a.IsMap() && b.IsMap()) {
    std::string o;
    for (auto it = b.begin(); it != b.end(); ++it) {
      const std::string k = it->first.Scalar();
      const YAML::Node ca = a;
      std::string d = ca[k].IsDefined() ? MergePatch(ca[k], it->second) : ToJson(it->second);
      if (!d.empty()) o += (o.empty() ? "" : ",") + JsonString(k) + ":" + d;
    }
    return o.empty() ? "" : "{" + o + "}";
  }
  return ToJson(a) == ToJson(b) ? "" : ToJson(b);
}

class Fixer {
 public:
  Fixer(const FixOptions& o, FixResult* r) : o_(o), r_(r) {}

  void Replica(YAML::Node doc, const K8sReplicaType& rt) {
    YAML::Node spec = Navigate(doc, rt.pod_spec.path);
    YAML::Node containers = spec["containers"];
    for (size_t i = 0; i < containers.size(); ++i) {
      Container(containers[i], rt.pod_spec.At(fmt::format("containers[{}]", i)), rt.role == "ps");
    }
    if (rt.role == "ps" && !rt.anti_affinity_hostname) AntiAffinity(doc, spec, rt);
  }

 private:
  void Container(YAML::Node c, const K8sSource& src, bool ps) {
    const std::string where = src.Where();
    // PS work is memory-bound: no GPU on PS containers (ps-on-gpu).
    for (const char* which : {"requests", "limits"}) {
      if (!ps || !Has(c, "resources") || !Has(c["resources"], which)) continue;
      YAML::Node w = c["resources"][which];
      if (Has(w, "nvidia.com/gpu")) {
        w.remove("nvidia.com/gpu");
        r_->changes.push_back(fmt::format("{}.resources.{}: - nvidia.com/gpu", where, which));
      }
    }
    YAML::Node res = Has(c, "resources") ? YAML::Node(c["resources"]) : YAML::Node();
    auto text = [&](const char* which, const char* what) -> std::string {
      return res.IsMap() && Has(res, which) ? Str(YAML::Node(res[which])[what]) : "";
    };
    std::string cpu = text("limits", "cpu");
    if (cpu.empty()) cpu = text("requests", "cpu");
    int64_t m = cpu.empty() ? -1 : ParseCpuMillis(cpu);
    if (m < 0 && o_.default_cpus > 0) m = o_.default_cpus * 1000LL;
    std::string mem = text("limits", "memory");
    if (mem.empty()) mem = text("requests", "memory");
    if (mem.empty()) mem = o_.default_memory;
    if (m < 0) {
      r_->notes.push_back(where + ": no CPU request or limit: pass --cpus N to set one");
      return;
    }
    // Whole cores, rounded up (at least 1): the static CPU Manager pins integer CPUs only.
    const int64_t cpus = std::max<int64_t>(1, (m + 999) / 1000);
    const std::string n = std::to_string(cpus);
    for (const char* which : {"requests", "limits"}) {
      std::string before = text(which, "cpu");
      c["resources"][which]["cpu"] = Quoted(n);
      if (before != n) {
        r_->changes.push_back(fmt::format("{}.resources.{}.cpu: {} -> \"{}\"", where, which,
                                          before.empty() ? "(none)" : before, n));
      }
      if (mem.empty()) continue;
      if (text(which, "memory") != mem) {
        r_->changes.push_back(
            fmt::format("{}.resources.{}.memory: {} -> {}", where, which,
                        text(which, "memory").empty() ? "(none)" : text(which, "memory"), mem));
        c["resources"][which]["memory"] = Quoted(mem);
      }
    }
    if (mem.empty()) {
      r_->notes.push_back(where +
                          ": no memory request or limit: pass --memory Q for Guaranteed QoS");
    }
    if (!Has(c, "env") || !YAML::Node(c["env"]).IsSequence()) {
      c["env"] = YAML::Node(YAML::NodeType::Sequence);
    }
    YAML::Node env = c["env"];
    for (const char* name :
         {"TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"}) {
      bool found = false;
      for (size_t i = 0; i < env.size(); ++i) {
        YAML::Node e = env[i];
        if (Str(e["name"]) != name) continue;
        found = true;
        if (Str(e["value"]) == n && !Has(e, "valueFrom")) continue;
        if (Has(e, "valueFrom")) e.remove("valueFrom");
        e["value"] = Quoted(n);
        r_->changes.push_back(fmt::format("{}.env[{}]: {} = \"{}\"", where, i, name, n));
      }
      if (found) continue;
      YAML::Node e(YAML::NodeType::Map);
      e["name"] = name;
      e["value"] = Quoted(n);
      env.push_back(e);
      r_->changes.push_back(fmt::format("{}.env: + {} = \"{}\"", where, name, n));
    }
    // Thread flags in the command line win over the env; tfdiag does not rewrite scripts.
    static const std::regex kFlag(
        "--(intra_op_parallelism_threads|inter_op_parallelism_threads|num_intra_threads|"
        "num_inter_threads)[= ]([0-9]+)");
    for (const char* key : {"command", "args"}) {
      if (!Has(c, key)) continue;
      for (const YAML::Node& a : YAML::Node(c[key])) {
        std::smatch mt;
        std::string s = Str(a);
        if (std::regex_search(s, mt, kFlag) && mt[2].str() != n) {
          r_->notes.push_back(fmt::format("{}.{}: --{}={} overrides the env; set it to {} by hand",
                                          where, key, mt[1].str(), mt[2].str(), n));
        }
      }
    }
  }

  void AntiAffinity(YAML::Node doc, YAML::Node spec, const K8sReplicaType& rt) {
    std::string tpath = rt.pod_spec.path.substr(0, rt.pod_spec.path.size() - 5);  // "...template"
    YAML::Node tmpl = Navigate(doc, tpath);
    std::string job = rt.object_name.empty() ? "job" : rt.object_name.substr(0, 63);
    tmpl["metadata"]["labels"]["tfdiag.io/role"] = "ps";
    tmpl["metadata"]["labels"]["tfdiag.io/job"] = job;
    YAML::Node term(YAML::NodeType::Map);
    term["labelSelector"]["matchLabels"]["tfdiag.io/role"] = "ps";
    term["labelSelector"]["matchLabels"]["tfdiag.io/job"] = job;
    term["topologyKey"] = "kubernetes.io/hostname";
    YAML::Node paa = spec["affinity"]["podAntiAffinity"];
    if (Has(paa, "requiredDuringSchedulingIgnoredDuringExecution") &&
        YAML::Node(paa["requiredDuringSchedulingIgnoredDuringExecution"]).IsSequence()) {
      paa["requiredDuringSchedulingIgnoredDuringExecution"].push_back(term);
    } else {
      YAML::Node seq(YAML::NodeType::Sequence);
      seq.push_back(term);
      paa["requiredDuringSchedulingIgnoredDuringExecution"] = seq;
    }
    r_->changes.push_back(rt.pod_spec.Where() +
                          ".affinity.podAntiAffinity: + required, topologyKey "
                          "kubernetes.io/hostname, on labels tfdiag.io/role=ps, tfdiag.io/job=" +
                          job);
  }

  const FixOptions& o_;
  FixResult* r_;
};

// The file's leading comment block (yaml-cpp drops comments; this one is carried over).
std::string LeadingComments(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] != '#') break;
    out += std::string(line) + "\n";
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

}  // namespace

StatusOr<FixResult> FixManifest(std::string_view text, const std::string& file,
                                const FixOptions& options) {
  K8sDeployment model;
  TFDIAG_RETURN_IF_ERROR(ParseK8sText(text, file, &model));
  FixResult result;
  std::vector<YAML::Node> docs = YAML::LoadAll(std::string(text));
  std::vector<YAML::Node> originals;
  for (const YAML::Node& d : docs) originals.push_back(YAML::Clone(d));
  Fixer fixer(options, &result);
  try {
    for (const K8sReplicaType& rt : model.replicas) {
      if (rt.role.empty()) continue;
      fixer.Replica(docs[static_cast<size_t>(rt.source.doc)], rt);
    }
  } catch (const YAML::Exception& e) {
    return InvalidInput("{}: fix: {}", file, e.what());
  }
  std::string body;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (!docs[i] || docs[i].IsNull()) continue;
    YAML::Emitter out;
    out.SetIndent(2);
    Emit(out, docs[i]);
    if (!body.empty()) body += "---\n";
    body += std::string(out.c_str()) + "\n";
    std::string patch = MergePatch(originals[i], docs[i]);
    if (patch.empty()) continue;
    // The patch names its object: apiVersion, kind and metadata name/namespace are unchanged.
    const YAML::Node& d = docs[i];
    std::string id =
        "{\"apiVersion\":" + ToJson(d["apiVersion"]) + ",\"kind\":" + ToJson(d["kind"]) + ",";
    result.patches.push_back(id + patch.substr(1));
    result.patch_targets.push_back(
        Lower(Str(d["kind"])) + "/" +
        Str(d["metadata"].IsDefined() ? d["metadata"]["name"] : d["metadata"]));
  }
  result.yaml = LeadingComments(text) + body;
  if (text.find('#', LeadingComments(text).size()) != std::string_view::npos) {
    result.notes.push_back(file +
                           ": comments after the first document are dropped (yaml-cpp does not "
                           "keep them); the leading comment block is kept");
  }
  return result;
}

}  // namespace tfdiag
