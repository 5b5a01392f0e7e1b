#include "actions/k8s_fix.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <map>

#include "actions/yaml_edit.h"
#include "actions/yaml_match.h"
#include "collectors/k8s/k8s_reader.h"
#include "collectors/k8s/yaml_tree.h"
#include "core/tf_roles.h"

namespace tfdiag {

namespace {

std::string Str(const YamlNode* n) {
  return n != nullptr && n->IsScalar() && !n->IsNull() ? n->value : "";
}

// The node at a reader field path ("spec.tfReplicaSpecs.PS.template.spec.containers[0]"),
// nullptr when the path is not there.
YamlNode* Navigate(YamlNode* cur, const std::string& path) {
  size_t pos = 0;
  while (cur != nullptr && pos < path.size()) {
    size_t dot = path.find('.', pos);
    std::string seg = path.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
    pos = dot == std::string::npos ? path.size() : dot + 1;
    size_t br = seg.find('[');
    std::string key = seg.substr(0, br);
    if (!key.empty()) cur = cur->Find(key);
    while (cur != nullptr && br != std::string::npos) {
      size_t close = seg.find(']', br);
      size_t idx = static_cast<size_t>(std::atol(seg.substr(br + 1, close - br - 1).c_str()));
      cur = cur->IsSeq() && idx < cur->size() ? &cur->Item(idx) : nullptr;
      br = seg.find('[', close);
    }
  }
  return cur;
}

// A YAML 1.1 integer or float as sigs.k8s.io/yaml resolves plain scalars: [-+]?(0|[1-9][0-9]*)
// and [-+]?([0-9]+.[0-9]*|.[0-9]+)([eE][-+]?[0-9]+)?.
bool PlainNumber(const std::string& s) {
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  auto digits = [&](size_t* j) {
    size_t k = *j;
    while (*j < s.size() && s[*j] >= '0' && s[*j] <= '9') ++*j;
    return *j - k;
  };
  const size_t start = i;
  size_t whole = digits(&i);
  if (i == s.size()) return whole > 0 && (whole == 1 || s[start] != '0');
  if (s[i] != '.') return false;
  ++i;
  size_t frac = digits(&i);
  if (whole + frac == 0) return false;
  if (i == s.size()) return true;
  if (s[i] != 'e' && s[i] != 'E') return false;
  ++i;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  return digits(&i) > 0 && i == s.size();
}

// Appends the JSON for a node, resolving plain scalars as YAML 1.1 does (Kubernetes'
// sigs.k8s.io/yaml). Appending into one string keeps it linear in the node's size (a 16 MiB
// tree of aliases took seconds when each level returned its own copy).
void AppendJson(const YamlNode* n, std::string* o) {
  if (n == nullptr || n->IsNull()) {
    *o += "null";
    return;
  }
  if (n->IsScalar()) {
    const std::string& s = n->value;
    if (n->style == YamlNode::Style::kPlain && n->tag.empty()) {
      static const std::set<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes",
                                                  "YES",  "on",   "On",   "ON"};
      static const std::set<std::string> kFalse = {"false", "False", "FALSE", "no", "No",
                                                   "NO",    "off",   "Off",   "OFF"};
      if (PlainNumber(s)) {
        *o += s;
        return;
      }
      if (kTrue.count(s) || kFalse.count(s)) {
        *o += kTrue.count(s) ? "true" : "false";
        return;
      }
    }
    AppendDoubleQuoted(s, o);
    return;
  }
  *o += n->IsSeq() ? '[' : '{';
  for (size_t i = 0; i < n->size(); ++i) {
    if (i > 0) *o += ',';
    if (n->IsSeq()) {
      AppendJson(&n->Item(i), o);
    } else {
      AppendDoubleQuoted(n->Key(i).value, o);
      *o += ':';
      AppendJson(&n->Value(i), o);
    }
  }
  *o += n->IsSeq() ? ']' : '}';
}

std::string ToJson(const YamlNode* n) {
  std::string o;
  AppendJson(n, &o);
  return o;
}

// RFC 7386 merge patch turning `a` into `b` ("" when equal); lists are replaced whole.
std::string MergePatch(const YamlNode* a, const YamlNode* b) {
  // An unchanged subtree (most of a document) in one sequential pass, without indexing its keys.
  if (a != nullptr && b != nullptr && YamlEqual(*a, *b)) return "";
  if (a != nullptr && b != nullptr && a->IsMap() && b->IsMap()) {
    std::string o;
    const YamlKeyIndex a_keys(*a), b_keys(*b);  // linear in the keys, not quadratic
    for (size_t i = 0; i < b->size(); ++i) {
      const std::string& k = b->Key(i).value;
      const YamlNode* ca = a_keys.Find(k);
      std::string d = ca != nullptr ? MergePatch(ca, &b->Value(i)) : ToJson(&b->Value(i));
      if (d.empty()) continue;
      o += o.empty() ? "" : ",";
      AppendDoubleQuoted(k, &o);
      o += ':';
      o += d;
    }
    for (size_t i = 0; i < a->size(); ++i) {
      if (b_keys.Find(a->Key(i).value) == nullptr)
        o += (o.empty() ? "" : ",") + DoubleQuoted(a->Key(i).value) + ":null";
    }
    return o.empty() ? "" : "{" + o + "}";
  }
  std::string to = ToJson(b);
  return ToJson(a) == to ? "" : to;
}

// The tfdiag.io/job label shared by a job's PS pods: a TF job object's name; for one PS per
// Deployment/StatefulSet ("tf-ps-0", "tf-ps-1"), the name without its role and index tokens
// ("tf"), so that the anti-affinity term of each matches the others' pods.
std::string JobLabel(const K8sReplicaType& rt) {
  std::string name = rt.object_name;
  const std::string& k = rt.object_kind;
  if (k == "Deployment" || k == "StatefulSet" || k == "ReplicaSet" || k == "Job") {
    std::string kept, token;
    for (size_t i = 0; i <= name.size(); ++i) {
      if (i < name.size() && name[i] != '-' && name[i] != '_' && name[i] != '.') {
        token += name[i];
        continue;
      }
      const std::string l = absl::AsciiStrToLower(token);
      const bool index =
          !token.empty() && token.find_first_not_of("0123456789") == std::string::npos;
      if (!token.empty() && !index && TfRoleOf(l).empty() && l != "parameter" && l != "server")
        kept += (kept.empty() ? "" : "-") + token;
      token.clear();
    }
    name = kept.empty() ? "tf" : kept;
  }
  if (name.empty()) name = "job";
  name = name.substr(0, 63);  // a label value: at most 63 characters
  while (!name.empty() && !std::isalnum(static_cast<unsigned char>(name.back()))) name.pop_back();
  return name.empty() ? "job" : name;
}

class Fixer {
 public:
  Fixer(const FixOptions& o, FixResult* r) : o_(o), r_(r) {}

  void Replica(YamlNode* doc, const K8sReplicaType& rt) {
    if (!rt.has_template) return;
    mem_before_ = mem_after_ = cpu_before_ = cpu_after_ = 0;
    YamlNode* spec = Navigate(doc, rt.pod_spec.path);
    YamlNode* containers = spec != nullptr ? spec->Find("containers") : nullptr;
    role_ = rt.role;
    for (size_t i = 0; containers != nullptr && i < rt.containers.size() && i < containers->size();
         ++i) {
      Container(&containers->Item(i), rt.containers[i], rt.role == "ps");
    }
    if (Raised("ps-colocation", rt.pod_spec.Where() + ".affinity") && spec != nullptr)
      AntiAffinity(doc, spec, rt);
    // Requests of the whole job object, summed over its replica types (one job per object).
    const std::string job =
        fmt::format("{} '{}' ({})", rt.object_kind, rt.object_name, rt.source.file);
    JobTotals& t = totals_[job];
    t.mem_before += mem_before_ * rt.replicas;
    t.mem_after += mem_after_ * rt.replicas;
    t.cpu_before += cpu_before_ * rt.replicas;
    t.cpu_after += cpu_after_ * rt.replicas;
  }

  // One warning per job object whose requests rise.
  void Warnings() const {
    for (const auto& [job, t] : totals_) {
      if (t.mem_after <= t.mem_before && t.cpu_after <= t.cpu_before) continue;
      // Only what rises, in a unit that shows the change ("memory 0.6 GiB -> 0.6 GiB" hid a
      // 600 MiB -> 640 MiB rise).
      auto mem = [](double bytes) {
        return bytes < 10 * 1073741824.0 ? fmt::format("{:.0f} MiB", bytes / 1048576.0)
                                         : fmt::format("{:.1f} GiB", bytes / 1073741824.0);
      };
      std::string what;
      if (t.mem_after > t.mem_before)
        what = fmt::format("memory {} -> {}", mem(t.mem_before), mem(t.mem_after));
      if (t.cpu_after > t.cpu_before) {
        what += fmt::format("{}CPU {:.1f} -> {:.1f} cores", what.empty() ? "" : ", ",
                            t.cpu_before / 1e3, t.cpu_after / 1e3);
      }
      r_->warnings.push_back(fmt::format(
          "{}: requests rise (requests = limits, over all replicas): {}; the job may no longer "
          "schedule on its nodes or fit its namespace's ResourceQuota: check free capacity "
          "(kubectl describe nodes) first",
          job, what));
    }
  }

 private:
  bool Raised(const char* rule, const std::string& subject) const {
    return o_.raised == nullptr || o_.raised->count(std::string(rule) + " " + subject) > 0;
  }

  void Container(YamlNode* c, const K8sContainer& model, bool ps) {
    const std::string where = model.source.Where();
    const K8sResources& res = model.res;
    // PS work is memory-bound: no GPU on PS containers (ps-on-gpu).
    if (ps && Raised("ps-on-gpu", where + ".resources.limits")) {
      YamlNode* resources = c->Find("resources");
      for (const char* which : {"requests", "limits"}) {
        YamlNode* w = resources != nullptr ? resources->Find(which) : nullptr;
        if (w == nullptr || !w->Remove("nvidia.com/gpu")) continue;
        r_->changes.push_back(fmt::format("{}.resources.{}: - nvidia.com/gpu", where, which));
        // No `limits: {}` left behind.
        if (w->IsMap() && w->size() == 0) resources->Remove(which);
      }
      if (resources != nullptr && resources->IsMap() && resources->size() == 0)
        c->Remove("resources");
    }
    // The CPU limit after the fix, in millicores (-1: none).
    int64_t limit_m = res.cpu_limit_m;
    if (Raised("cpu-qos", where + ".resources")) limit_m = Qos(c, model);
    if (!Raised("thread-config", where + ".env")) return;
    if (limit_m <= 0) {
      r_->notes.push_back(where + ": thread counts need a CPU limit: pass --cpus N to set one");
      ++r_->needs["--cpus N"]["thread-config"];
      return;
    }
    // Whole cores of the limit (floor, at least 1): 2 threads for a 2.5-CPU limit, 1 for 0.5.
    const int64_t cpus = std::max<int64_t>(1, limit_m / 1000);
    YamlNode* env = c->Find("env");
    if (env == nullptr || !env->IsSeq()) {
      c->Set("env", "");
      env = c->Find("env");
      *env = std::move(*YamlNode::Seq());
    }
    for (const char* name :
         {"TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"}) {
      // One inter-op thread can deadlock TF1 queue runners: at least 2.
      const std::string n = std::to_string(
          std::string_view(name) == "TF_NUM_INTEROP_THREADS" ? std::max<int64_t>(2, cpus) : cpus);
      bool found = false;
      for (size_t i = 0; i < env->size(); ++i) {
        YamlNode& e = env->Item(i);
        if (Str(e.Find("name")) != name) continue;
        found = true;
        if (Str(e.Find("value")) == n && e.Find("valueFrom") == nullptr) continue;
        e.Remove("valueFrom");
        e.Set("value", n);
        r_->changes.push_back(fmt::format("{}.env[{}]: {} = \"{}\"", where, i, name, n));
      }
      if (found) continue;
      YamlNode& e = env->Append(YamlNode::Map());
      e.Set("name", name, true);
      e.Set("value", n);
      r_->changes.push_back(fmt::format("{}.env: + {} = \"{}\"", where, name, n));
    }
    // Thread flags in the command line win over the env; tfdiag does not rewrite scripts.
    for (const auto& [flag, value] : model.flags) {
      if (flag == "intra_op_parallelism_threads" || flag == "inter_op_parallelism_threads" ||
          flag == "num_intra_threads" || flag == "num_inter_threads") {
        if (value != std::to_string(cpus)) {
          r_->notes.push_back(fmt::format("{}: --{}={} overrides the env; set it to {} by hand",
                                          where, flag, value, cpus));
        }
      }
    }
  }

  // requests = limits, whole CPUs never below the current limit or request; returns the CPU
  // limit in millicores (-1 when there is none and no --cpus).
  int64_t Qos(YamlNode* c, const K8sContainer& model) {
    const std::string where = model.source.Where();
    const K8sResources& res = model.res;
    int64_t m = res.cpu_limit_m;
    const auto role = o_.role_cpus.find(role_);
    const int given = role != o_.role_cpus.end() ? role->second : o_.default_cpus;
    if (m < 0 && given > 0) m = std::max<int64_t>(given * 1000LL, res.cpu_request_m);
    if (m < 0) {
      ++r_->needs["--cpus N"]["cpu-qos"];
      if (res.mem_limit < 0 && res.mem_request < 0 && o_.default_memory.empty())
        ++r_->needs["--memory Q"]["cpu-qos"];
      r_->notes.push_back(where +
                          ": no CPU limit: pass --cpus N to choose one (tfdiag does not "
                          "cap a container on its own)");
      return -1;
    }
    m = std::max(m, res.cpu_request_m);
    // Whole cores, rounded up (at least 1): the static CPU Manager pins integer CPUs only.
    const int64_t cpus = std::max<int64_t>(1, (m + 999) / 1000);
    const std::string n = std::to_string(cpus);
    YamlNode& r = c->Child("resources");
    std::string mem = Str(r.Find("limits") ? r.Find("limits")->Find("memory") : nullptr);
    if (mem.empty()) mem = Str(r.Find("requests") ? r.Find("requests")->Find("memory") : nullptr);
    if (mem.empty()) mem = o_.default_memory;
    for (const char* which : {"requests", "limits"}) {
      YamlNode& w = r.Child(which);
      const std::string before = Str(w.Find("cpu"));
      std::string unused;
      if (before != n && ParseCpuMillis(before, &unused) != cpus * 1000) {  // "2000m" is 2
        w.Set("cpu", n);
        r_->changes.push_back(fmt::format("{}.resources.{}.cpu: {} -> \"{}\"", where, which,
                                          before.empty() ? "(none)" : before, n));
      }
      if (mem.empty()) continue;
      const std::string mb = Str(w.Find("memory"));
      if (mb != mem) {
        r_->changes.push_back(fmt::format("{}.resources.{}.memory: {} -> {}", where, which,
                                          mb.empty() ? "(none)" : mb, mem));
        w.Set("memory", mem);
      }
    }
    // What the scheduler reserves before and after: a missing request defaults to the limit.
    std::string unused;
    cpu_before_ += std::max<int64_t>(0, res.CpuRequestM());
    cpu_after_ += cpus * 1000;
    const int64_t mem_req = res.MemRequest();
    mem_before_ += std::max<int64_t>(0, mem_req);
    mem_after_ += mem.empty() ? std::max<int64_t>(0, mem_req) : ParseMemoryBytes(mem, &unused);
    if (mem.empty()) {
      ++r_->needs["--memory Q"]["cpu-qos"];
      r_->notes.push_back(where +
                          ": no memory request or limit: pass --memory Q for Guaranteed QoS");
    }
    return cpus * 1000;
  }

  void AntiAffinity(YamlNode* doc, YamlNode* spec, const K8sReplicaType& rt) {
    const std::string tpath = rt.pod_spec.path.substr(0, rt.pod_spec.path.size() - 5);
    YamlNode* tmpl = Navigate(doc, tpath);  // "...template"
    if (tmpl == nullptr || !tmpl->IsMap()) return;
    const std::string job = JobLabel(rt);
    YamlNode& labels = tmpl->Child("metadata").Child("labels");
    labels.Set("tfdiag.io/role", "ps", true);
    labels.Set("tfdiag.io/job", job, true);
    auto term = YamlNode::Map();
    YamlNode& ml = term->Child("labelSelector").Child("matchLabels");
    ml.Set("tfdiag.io/role", "ps", true);
    ml.Set("tfdiag.io/job", job, true);
    term->Set("topologyKey", "kubernetes.io/hostname", true);
    YamlNode& paa = spec->Child("affinity").Child("podAntiAffinity");
    YamlNode* req = paa.Find("requiredDuringSchedulingIgnoredDuringExecution");
    if (req == nullptr || !req->IsSeq()) {
      paa.Set("requiredDuringSchedulingIgnoredDuringExecution", "");
      req = paa.Find("requiredDuringSchedulingIgnoredDuringExecution");
      *req = std::move(*YamlNode::Seq());
    }
    req->Append(std::move(term));
    r_->changes.push_back(rt.pod_spec.Where() +
                          ".affinity.podAntiAffinity: + required, topologyKey "
                          "kubernetes.io/hostname, on labels tfdiag.io/role=ps, tfdiag.io/job=" +
                          job);
  }

  struct JobTotals {
    int64_t mem_before = 0, mem_after = 0, cpu_before = 0, cpu_after = 0;  // bytes, millicores
  };
  const FixOptions& o_;
  FixResult* r_;
  std::string role_;  // the TF role of the replica type being fixed (K8sReplicaType::role)
  int64_t mem_before_ = 0, mem_after_ = 0, cpu_before_ = 0, cpu_after_ = 0;  // one pod's
  std::map<std::string, JobTotals> totals_;
};

// True when `text` parses to documents whose JSON is `json`, one for one.
// Whether `a` and `b` are the same JSON value (ToJson(a) == ToJson(b)) or, conservatively, false:
// alike nodes are compared in place and only scalars that differ in style or tag are written out
// (writing two large documents out costs more than the edits).
bool SameJson(const YamlNode* a, const YamlNode* b) {
  if (a == nullptr || b == nullptr) return a == b;
  if (a->IsScalar() || b->IsScalar()) {
    if (!a->IsScalar() || !b->IsScalar()) return false;
    if (a->value == b->value && a->style == b->style && a->tag == b->tag) return true;
    return ToJson(a) == ToJson(b);
  }
  if (a->kind != b->kind || a->children.size() != b->children.size()) return false;
  for (size_t i = 0; i < a->children.size(); ++i) {
    if (!SameJson(a->children[i].get(), b->children[i].get())) return false;
  }
  return true;
}

// Whether `text` parses to the documents `fixed`, in order (see SameJson): on libyaml's events
// where it can, on trees where the text has anchors or aliases.
bool SameDocuments(std::string_view text, const std::string& file,
                   const std::vector<std::unique_ptr<YamlNode>>& fixed) {
  const YamlMatch match = MatchDocuments(
      text, fixed, [](const YamlNode& a, const YamlNode& b) { return ToJson(&a) == ToJson(&b); });
  if (match != YamlMatch::kUnknown) return match == YamlMatch::kSame;
  YamlStream stream(text, file);
  for (size_t i = 0;; ++i) {
    std::unique_ptr<YamlNode> doc;
    StatusOr<bool> more = stream.Next(&doc);
    if (!more.ok()) return false;
    if (!*more) return i == fixed.size();
    if (i >= fixed.size() || !SameJson(doc.get(), fixed[i].get())) return false;
  }
}

// The file's leading comment block (libyaml reports no comments; this one is carried over).
std::string LeadingComments(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find_first_of("\r\n", pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] != '#') break;
    out += std::string(line) + "\n";
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    if (text[nl] == '\r' && pos < text.size() && text[pos] == '\n') ++pos;
  }
  return out;
}

}  // namespace

Status ParseCpusFlag(std::string_view flag, FixOptions* options) {
  auto cores = [&](std::string_view v, std::string_view part, int* out) -> Status {
    int n = 0;
    const bool digits =
        !v.empty() && v.size() <= 4 && v.find_first_not_of("0123456789") == std::string_view::npos;
    if (digits) n = std::stoi(std::string(v));
    if (!digits || n < 1 || n > 1024)
      return UsageError(
          "--cpus: '{}' is not a whole number of cores from 1 to 1024 (--cpus 4 for every role, "
          "or per role: --cpus ps=1,worker=4)",
          part);
    *out = n;
    return OkStatus();
  };
  size_t pos = 0;
  while (pos <= flag.size()) {
    size_t comma = flag.find(',', pos);
    if (comma == std::string_view::npos) comma = flag.size();
    const std::string_view part = flag.substr(pos, comma - pos);
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      TFDIAG_RETURN_IF_ERROR(cores(part, part, &options->default_cpus));
    } else {
      const std::string role = absl::AsciiStrToLower(std::string(part.substr(0, eq)));
      if (role != "ps" && role != "worker" && role != "chief" && role != "master" &&
          role != "evaluator")
        return UsageError("--cpus: '{}' names no TF role (ps, worker, chief, master, evaluator)",
                          part);
      TFDIAG_RETURN_IF_ERROR(cores(part.substr(eq + 1), part, &options->role_cpus[role]));
    }
    pos = comma + 1;
  }
  return OkStatus();
}

StatusOr<FixResult> FixManifest(std::string_view text, const std::string& file,
                                const FixOptions& options) {
  K8sDeployment model;
  std::vector<std::unique_ptr<YamlNode>> docs;
  TFDIAG_RETURN_IF_ERROR(ParseK8sText(text, file, &model, &docs));
  return FixParsedManifest(text, file, model, std::move(docs), options);
}

StatusOr<FixResult> FixParsedManifest(std::string_view text, const std::string& file,
                                      const K8sDeployment& model,
                                      std::vector<std::unique_ptr<YamlNode>> docs,
                                      const FixOptions& options) {
  FixResult result;
  std::map<int, std::vector<const K8sReplicaType*>> by_doc;
  for (const K8sReplicaType& rt : model.replicas) {
    if (rt.role.empty()) continue;
    ++result.tf_replicas;
    by_doc[rt.source.doc].push_back(&rt);
  }
  Fixer fixer(options, &result);
  YamlSourceEditor editor(text);
  bool edited = true;  // every change placed in the text
  for (int i = 0; i < static_cast<int>(docs.size()); ++i) {
    std::unique_ptr<YamlNode>& doc = docs[static_cast<size_t>(i)];
    auto it = by_doc.find(i);
    if (doc != nullptr && it != by_doc.end()) {
      const size_t before = result.changes.size();
      std::unique_ptr<YamlNode> original = doc->Clone();
      for (const K8sReplicaType* rt : it->second) fixer.Replica(doc.get(), *rt);
      if (result.changes.size() > before) {
        if (edited) edited = editor.Diff(*original, *doc);
        std::string patch = MergePatch(original.get(), doc.get());
        if (!patch.empty()) {
          // The patch names its object: apiVersion, kind and metadata name are unchanged.
          result.patches.push_back("{\"apiVersion\":" + ToJson(doc->Find("apiVersion")) +
                                   ",\"kind\":" + ToJson(doc->Find("kind")) + "," +
                                   patch.substr(1));
          const YamlNode* md = doc->Find("metadata");
          result.patch_targets.push_back(absl::AsciiStrToLower(Str(doc->Find("kind"))) + "/" +
                                         Str(md != nullptr ? md->Find("name") : nullptr));
        }
      }
    }
  }
  fixer.Warnings();
  result.changed = !result.changes.empty();
  if (!result.changed) {
    result.yaml = std::string(text);
    return result;
  }
  // The changes edited into the text where they are, so that `diff` shows only them; checked by
  // parsing the result again. Otherwise the documents are re-emitted whole.
  std::string in_place;
  if (edited && editor.Apply(&in_place) && SameDocuments(in_place, file, docs)) {
    result.yaml = std::move(in_place);
    return result;
  }
  result.notes.push_back(file +
                         ": a change could not be placed in the text as it is (an alias, or an "
                         "entry sharing its line); the whole file is written anew");
  // Emitted only here, where it is needed (it cost as much as the edits in place).
  YamlWriter writer;
  for (const std::unique_ptr<YamlNode>& doc : docs)
    TFDIAG_RETURN_IF_ERROR(writer.Document(doc.get()));
  StatusOr<std::string> body = writer.Finish();
  if (!body.ok()) return body.status();
  const std::string lead = LeadingComments(text);
  result.yaml = lead + *body;
  if (text.find('#', lead.size()) != std::string_view::npos) {
    result.notes.push_back(file +
                           ": comments after the leading block are dropped (libyaml does not "
                           "report them); the leading comment block is kept");
  }
  return result;
}

}  // namespace tfdiag
