#include "collectors/k8s/k8s_reader.h"

#include <absl/strings/ascii.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "collectors/k8s/k8s_roles.h"
#include "collectors/k8s/yaml_tree.h"
#include "core/input_limits.h"
#include "core/nearest_name.h"
#include "core/tf_roles.h"

namespace tfdiag {

namespace {

// The reader's helpers (k8s_roles.h).
using k8s_detail::At;
using k8s_detail::FlagsOf;
using k8s_detail::Get;
using k8s_detail::Given;
using k8s_detail::IgnoredRules;
using k8s_detail::IsMap;
using k8s_detail::IsSeq;
using k8s_detail::N;
using k8s_detail::RoleFromName;
using k8s_detail::RoleInName;
using k8s_detail::Str;

class Reader {
 public:
  Reader(const std::string& file, K8sDeployment* out, K8sFileSummary* summary)
      : file_(file), out_(out), summary_(summary) {}

  Status Document(N d, int doc) {
    doc_ = doc;
    if (!Given(d)) return OkStatus();
    if (!d->IsMap()) {
      return Err("", fmt::format("expected a mapping (a Kubernetes object), found {} at line {}",
                                 What(d), d->line));
    }
    return Object(d, "");
  }

 private:
  K8sSource Src(const std::string& path, N at = nullptr) const {
    return {file_, doc_, path, at != nullptr ? at->line : 0};
  }
  static std::string Join(const std::string& base, const std::string& sub) {
    return base.empty() ? sub : base + "." + sub;
  }
  static std::string What(N n) {
    if (n == nullptr || n->IsNull()) return "nothing";
    if (n->IsMap()) return "a mapping";
    if (n->IsSeq()) return "a list";
    return fmt::format("'{}'", n->value.size() > 40 ? n->value.substr(0, 40) + "..." : n->value);
  }
  Status Err(const std::string& path, const std::string& what) const {
    return InvalidInput("{}: {}", Src(path).Where(), what);
  }
  // "<path>: expected <want>, found <what> (line L)".
  Status Shape(const std::string& path, N n, const char* want) const {
    return Err(path, fmt::format("expected {}, found {}{}", want, What(n),
                                 n != nullptr ? fmt::format(" (line {})", n->line) : ""));
  }
  void Note(const std::string& s) { out_->notes.push_back(Src("").Where() + ": " + s); }

  Status Object(N o, const std::string& base) {
    N kind_node = At(o, "kind");
    if (Given(kind_node) && !kind_node->IsScalar())
      return Shape(Join(base, "kind"), kind_node, "a string");
    const std::string kind = Str(kind_node), api = Str(At(o, "apiVersion"));
    N md = At(o, "metadata");
    if (Given(md) && !md->IsMap()) return Shape(Join(base, "metadata"), md, "a mapping");
    // A Katib trial template has no name of its own: its Experiment's.
    const std::string name = Str(At(md, "name")).empty() ? experiment_ : Str(At(md, "name"));
    if (kind.empty() && api.empty()) return OkStatus();
    object_ignore_.clear();
    IgnoredRules(md, &object_ignore_);
    ++summary_->objects;
    if (kind.empty()) {
      Note(fmt::format("{}object with apiVersion {} but no kind skipped",
                       base.empty() ? "" : base + ": ", api));
      return OkStatus();
    }
    if (kind == "List" || (kind.size() > 4 && kind.compare(kind.size() - 4, 4, "List") == 0)) {
      --summary_->objects;  // the items are counted, not the list
      N items = At(o, "items");
      if (!Given(items)) return OkStatus();
      if (!items->IsSeq()) return Shape(Join(base, "items"), items, "a list");
      for (size_t i = 0; i < items->size(); ++i) {
        const std::string ip = Join(base, fmt::format("items[{}]", i));
        N item = &items->Item(i);
        if (!item->IsMap()) return Shape(ip, item, "a mapping");
        // The kubelet's /pods leaves kind/apiVersion out of PodList items.
        if (Str(At(item, "kind")).empty() && kind == "PodList") {
          ++summary_->objects;
          TFDIAG_RETURN_IF_ERROR(Pod(item, ip));
        } else {
          TFDIAG_RETURN_IF_ERROR(Object(item, ip));
        }
      }
      return OkStatus();
    }
    if (kind == "Pod") return Pod(o, base);
    N spec = At(o, "spec");
    const std::string sp = Join(base, "spec");
    if (Given(spec) && !spec->IsMap()) return Shape(sp, spec, "a mapping");
    // TfJob: tensorflow.org/v1alpha1 (tensorflow/k8s, 2017), the TFJob v1alpha1 shape.
    if (kind == "TFJob" || kind == "TfJob") {
      if (kind == "TfJob") Note(fmt::format("TfJob '{}' ({}) read as a TFJob v1alpha1", name, api));
      if (Given(At(spec, "tfReplicaSpecs"))) {  // kubeflow.org/v1
        return Replicas(At(spec, "tfReplicaSpecs"), Join(sp, "tfReplicaSpecs"), kind, name);
      }
      N list = At(spec, "replicaSpecs");  // kubeflow.org/v1alpha1, tensorflow.org/v1alpha1
      if (!IsSeq(list)) {
        return Err(sp, fmt::format("{} without tfReplicaSpecs (v1) or a replicaSpecs list "
                                   "(v1alpha1)",
                                   kind));
      }
      for (size_t i = 0; i < list->size(); ++i) {
        N r = &list->Item(i);
        const std::string rp = Join(sp, fmt::format("replicaSpecs[{}]", i));
        std::string type = Str(At(r, "tfReplicaType"));
        if (type.empty() && IsMap(r)) {
          // tf-operator v1alpha1 defaults a missing type to MASTER and replicas to 1
          // (kubeflow/tf-operator v0.3, pkg/apis/tensorflow/v1alpha1/defaults.go).
          type = "MASTER";
          Note(fmt::format("{}: no tfReplicaType: read as MASTER, the operator's default", rp));
        }
        TFDIAG_RETURN_IF_ERROR(Replica(r, rp, kind, name, type));
      }
      return OkStatus();
    }
    // A Katib Experiment (kubeflow.org/v1beta1): every trial runs its trial template's object,
    // spec.trialTemplate.trialSpec (a TFJob, Job, ...), with ${trialParameters.*} substituted
    // (https://www.kubeflow.org/docs/components/katib/user-guides/trial-template/); that object
    // is what the rules judge and `fix` edits.
    if (kind == "Experiment" && api.rfind("kubeflow.org/", 0) == 0) {
      N tt = At(spec, "trialTemplate");
      N trial = At(tt, "trialSpec");
      if (!Given(trial)) {
        Note(
            fmt::format("Katib Experiment '{}': no trialTemplate.trialSpec (a trial template "
                        "from a ConfigMap is not read): nothing to judge in it",
                        name));
        return OkStatus();
      }
      if (!trial->IsMap()) return Shape(Join(sp, "trialTemplate.trialSpec"), trial, "a mapping");
      Note(
          fmt::format("Katib Experiment '{}': its trial template's {} read (each trial runs it; "
                      "${{trialParameters...}} placeholders as written)",
                      name, Str(At(trial, "kind"))));
      experiment_ = name;
      const Status read = Object(trial, Join(sp, "trialTemplate.trialSpec"));
      experiment_.clear();
      return read;
    }
    if (kind == "ElasticJob") {  // DLRover elastic.iml.github.io
      return Replicas(At(spec, "replicaSpecs"), Join(sp, "replicaSpecs"), kind, name);
    }
    if (kind == "Job" && api.rfind("batch.volcano.sh", 0) == 0) {
      N tasks = At(spec, "tasks");
      if (!IsSeq(tasks)) return Shape(Join(sp, "tasks"), tasks, "a list of tasks");
      for (size_t i = 0; i < tasks->size(); ++i) {
        N t = &tasks->Item(i);
        TFDIAG_RETURN_IF_ERROR(Replica(t, Join(sp, fmt::format("tasks[{}]", i)), "Volcano Job",
                                       name, Str(At(t, "name"))));
      }
      return OkStatus();
    }
    if (kind == "Job" || kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet") {
      return Replica(o, base, kind, name, "", true);
    }
    ++skipped_[kind];
    return OkStatus();
  }

  std::string experiment_;  // the Katib Experiment whose trial template is being read

  Status Replicas(N m, const std::string& path, const std::string& kind, const std::string& name) {
    if (!IsMap(m)) return Shape(path, m, "a mapping of replica types");
    for (size_t i = 0; i < m->size(); ++i) {
      if (!m->Key(i).IsScalar()) return Shape(path, &m->Key(i), "a replica type name");
      const std::string type = m->Key(i).value;
      TFDIAG_RETURN_IF_ERROR(Replica(&m->Value(i), Join(path, type), kind, name, type));
    }
    return OkStatus();
  }

 public:
  // Notes for skipped kinds and unknown keys not noted one by one, one line per file.
  void Finish() {
    if (unknown_keys_unsaid_ > 0) {
      out_->notes.push_back(
          fmt::format("{}: {} more unknown container key(s) ignored", file_, unknown_keys_unsaid_));
    }
    if (skipped_.empty()) return;
    std::string s;
    int n = 0;
    for (const auto& [kind, count] : skipped_) {
      s += (s.empty() ? "" : ", ") + (count > 1 ? fmt::format("{} x{}", kind, count) : kind);
      s += DidYouMean(kind, {"TFJob", "Job", "Deployment", "StatefulSet", "ReplicaSet",
                             "ElasticJob", "Experiment", "Pod", "PodList", "List"});
      n += count;
    }
    summary_->skipped =
        fmt::format("{} object{} skipped (not a TF job or pod): {}", n, n == 1 ? "" : "s", s);
    out_->notes.push_back(file_ + ": " + summary_->skipped);
  }

 private:
  // replicas (or a Job's parallelism): an int32 >= 0 written as a number, as the API server
  // requires (Go's encoding/json rejects "3" and 3.5 for an int32 field).
  Status Count(N n, const std::string& path, int* out) {
    if (!n->IsInt()) {
      if (n->IsScalar() && n->style != YamlNode::Style::kPlain)
        return Err(path, fmt::format("expected an integer, found the string \"{}\" (line {}): "
                                     "write it without quotes",
                                     n->value.substr(0, 40), n->line));
      return Shape(path, n, "an integer from 0 to 2147483647 (int32)");
    }
    const std::string& v = n->value;
    const bool neg = v[0] == '-';
    std::string digits = v.substr(v[0] == '+' || neg ? 1 : 0);
    digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
    if (!neg || digits.empty()) {
      if (digits.size() < 10 || (digits.size() == 10 && digits <= "2147483647")) {
        *out = digits.empty() ? 0 : std::atoi(digits.c_str());
        return OkStatus();
      }
    }
    return Err(path, fmt::format("{} is outside 0 to 2147483647 (an int32 >= 0) (line {})",
                                 v.substr(0, 40), n->line));
  }

  // One replica spec: {replicas, template}; `workload` for Job/Deployment/StatefulSet, whose
  // object is the spec holder and whose role must be inferred.
  Status Replica(N r, const std::string& path, const std::string& kind, const std::string& name,
                 const std::string& type, bool workload = false) {
    if (!IsMap(r)) return Shape(path, r, "a mapping (a replica spec)");
    K8sReplicaType rt;
    rt.object_kind = kind;
    rt.object_name = name;
    rt.name = type;
    rt.source = Src(path, r);
    rt.ignore = object_ignore_;
    N holder = workload ? At(r, "spec") : r;
    const std::string hp = workload ? Join(path, "spec") : path;
    if (kind == "TFJob" || kind == "TfJob") {
      // A TFJob's ReplicaSpec (kubeflow/training-operator, pkg/apis/kubeflow.org/v1
      // common_types.go: replicas, template, restartPolicy; v1alpha1 lists add tfReplicaType and
      // tfPort): `replica: 16` would otherwise read as one replica, without a word.
      static const std::vector<std::string> kReplicaFields = {
          "replicas", "template", "restartPolicy", "tfReplicaType", "tfPort"};
      for (size_t i = 0; i < r->size(); ++i) {
        const YamlNode& k = r->Key(i);
        if (!k.IsScalar() || std::find(kReplicaFields.begin(), kReplicaFields.end(), k.value) !=
                                 kReplicaFields.end()) {
          continue;
        }
        NoteUnknownKey(path, k, "replica spec", "a TFJob replica spec", kReplicaFields);
      }
    }
    const char* count_key = kind == "Job" && workload ? "parallelism" : "replicas";
    N count = At(holder, count_key);
    if (Given(count)) {
      TFDIAG_RETURN_IF_ERROR(Count(count, Join(hp, count_key), &rt.replicas));
      rt.replicas_given = true;
    }
    rt.role = RoleFromName(type);
    // DLRover's job master schedules the job; it is not a TF master task.
    if (kind == "ElasticJob" && rt.role == "master") rt.role.clear();
    N tmpl = At(holder, "template");
    if (!Given(tmpl)) {
      // tf-operator v1alpha1 ran its own PS server image for a PS without a template.
      Note(fmt::format("{}: no pod template{}; replicas counted, resources unknown", path,
                       rt.role == "ps" ? " (the operator's default PS)" : ""));
      if (!rt.role.empty()) rt.role_source = "replica type";
      ++summary_->replica_types;
      out_->replicas.push_back(std::move(rt));
      return OkStatus();
    }
    if (!tmpl->IsMap()) return Shape(Join(hp, "template"), tmpl, "a pod template (a mapping)");
    rt.has_template = true;
    IgnoredRules(At(tmpl, "metadata"), &rt.ignore);
    rt.pod_spec = Src(Join(hp, "template.spec"), At(tmpl, "spec"));
    TFDIAG_RETURN_IF_ERROR(PodSpec(At(tmpl, "spec"), rt.pod_spec.path, &rt.containers,
                                   &rt.anti_affinity_hostname, &rt.anti_affinity_required));
    rt.hostname_not_pod_name = Str(Get(tmpl, {"spec", "hostNetwork"})) == "true" ||
                               !Str(Get(tmpl, {"spec", "hostname"})).empty();
    if (!rt.role.empty()) {
      rt.role_source = "replica type";
    } else if (!(kind == "ElasticJob" && absl::AsciiStrToLower(type) == "master")) {
      InferRole(Get(tmpl, {"metadata", "labels"}), rt.containers, workload ? name : type, &rt.role,
                &rt.role_source);
      if (!rt.role.empty()) {
        Note(fmt::format("{}: role {} inferred from {}", path.empty() ? kind : path, rt.role,
                         rt.role_source));
      }
    }
    if (!rt.role.empty()) {
      ++summary_->replica_types;
    } else if (!workload && !(kind == "ElasticJob" && absl::AsciiStrToLower(type) == "master")) {
      // PAI's AIMaster, a scheduler's sidecar type, a typo: said, not dropped silently.
      Note(
          fmt::format("{}: replica type '{}' ({} replica{}) is not a TF role tfdiag knows (PS, "
                      "Worker, Chief, Master, Evaluator) and nothing in its template names one; "
                      "not judged",
                      path, type, rt.replicas, rt.replicas == 1 ? "" : "s"));
    }
    out_->replicas.push_back(std::move(rt));
    return OkStatus();
  }

  // Role from labels, then --job_name flags, then TF_CONFIG's task.type, then the name.
  static void InferRole(N labels, const std::vector<K8sContainer>& cs, const std::string& name,
                        std::string* role, std::string* source) {
    static const char* kLabels[] = {"training.kubeflow.org/replica-type",
                                    "tf-replica-type",
                                    "replica-type",
                                    "volcano.sh/task-spec",
                                    "role",
                                    "app.kubernetes.io/component",
                                    "job"};
    for (const char* k : kLabels) {
      std::string r = RoleFromName(Str(At(labels, k)));
      if (!r.empty()) {
        *role = r;
        *source = std::string("label ") + k;
        return;
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
        // TF_CONFIG is JSON, a YAML flow mapping; a malformed one is ignored here.
        YamlStream s(e->value, "TF_CONFIG");
        std::unique_ptr<YamlNode> d;
        StatusOr<bool> got = s.Next(&d);
        if (got.ok() && *got && d != nullptr) {
          std::string r = RoleFromName(Str(Get(d.get(), {"task", "type"})));
          if (!r.empty()) {
            *role = r;
            *source = "TF_CONFIG";
            return;
          }
        }
      }
    }
    // DLRover names its job master "<job>-dlrover-master": not a TF master task.
    if (name.find("dlrover-master") != std::string::npos) return;
    std::string r = RoleInName(name);
    if (!r.empty()) {
      *role = r;
      *source = "name";
    }
  }

  Status PodSpec(N spec, const std::string& path, std::vector<K8sContainer>* cs, bool* anti,
                 bool* anti_required) {
    if (!IsMap(spec)) return Shape(path, spec, "a pod spec (a mapping)");
    N list = At(spec, "containers");
    if (!IsSeq(list)) return Shape(Join(path, "containers"), list, "a list of containers");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string cp = Join(path, fmt::format("containers[{}]", i));
      N c = &list->Item(i);
      if (!c->IsMap()) return Shape(cp, c, "a mapping (a container)");
      K8sContainer k;
      TFDIAG_RETURN_IF_ERROR(Container(c, cp, &k));
      cs->push_back(std::move(k));
    }
    N paa = Get(spec, {"affinity", "podAntiAffinity"});
    N req = At(paa, "requiredDuringSchedulingIgnoredDuringExecution");
    N pref = At(paa, "preferredDuringSchedulingIgnoredDuringExecution");
    for (size_t i = 0; IsSeq(req) && i < req->size(); ++i) {
      if (Str(At(&req->Item(i), "topologyKey")) == "kubernetes.io/hostname")
        *anti = *anti_required = true;
    }
    for (size_t i = 0; IsSeq(pref) && i < pref->size(); ++i) {
      if (Str(Get(&pref->Item(i), {"podAffinityTerm", "topologyKey"})) == "kubernetes.io/hostname")
        *anti = true;
    }
    return OkStatus();
  }

  // A resource quantity at `path`: its text and value (millicores, bytes or a count).
  Status Quantity(N q, const std::string& path, const char* what, std::string* text,
                  int64_t* value) {
    if (!Given(q)) return OkStatus();
    if (!q->IsScalar()) return Shape(path, q, "a quantity (e.g. 500m, 2, 4Gi)");
    *text = q->value;
    std::string error;
    if (std::string_view(what) == "cpu") {
      *value = ParseCpuMillis(q->value, &error);
    } else if (std::string_view(what) == "memory") {
      *value = ParseMemoryBytes(q->value, &error);
    } else if (ParseQuantity(q->value, 0, "devices", value, &error)) {
      int64_t milli = 0;
      ParseQuantity(q->value, 3, "", &milli, nullptr);
      if (milli % 1000 != 0) {
        error = fmt::format("'{}' is not a whole number of devices", q->value);
        *value = -1;
      }
    } else {
      *value = -1;
    }
    if (*value < 0) return Err(path, fmt::format("bad {} quantity: {}", what, error));
    return OkStatus();
  }

  // Says an unknown key of a `what` with its line and the nearest of `known`; at most
  // kMaxUnknownKeyNotes a file (a hostile file's thousands are counted, not listed).
  void NoteUnknownKey(const std::string& path, const YamlNode& k, const char* what,
                      const char* field_of, const std::vector<std::string>& known) {
    if (summary_->unknown_keys.size() >= kMaxUnknownKeyNotes) {
      ++unknown_keys_unsaid_;
      return;
    }
    const std::string shown = k.value.size() > 40 ? k.value.substr(0, 40) + "..." : k.value;
    out_->notes.push_back(
        fmt::format("{}: unknown {} key '{}' (line {}){}: ignored (not a field "
                    "of {})",
                    Src(path).Where(), what, shown, k.line, DidYouMean(k.value, known), field_of));
    summary_->unknown_keys.push_back(out_->notes.back());
  }

  Status Container(N c, const std::string& path, K8sContainer* out) {
    out->name = Str(At(c, "name"));
    out->source = Src(path, c);
    // A misspelt key (`resource:`) leaves the container without what it holds: said, with its
    // line (the API server's strict field validation refuses it).
    for (size_t i = 0; i < c->size(); ++i) {
      const YamlNode& k = c->Key(i);
      if (!k.IsScalar() || IsContainerField(k.value)) continue;
      NoteUnknownKey(path, k, "container", "a Kubernetes container",
                     {"resources", "env", "command", "args", "image", "name"});
    }
    N res = At(c, "resources");
    if (Given(res) && !res->IsMap()) return Shape(Join(path, "resources"), res, "a mapping");
    K8sResources& r = out->res;
    std::string ignored;
    for (const char* which : {"requests", "limits"}) {
      const std::string wp = Join(path, std::string("resources.") + which);
      N w = At(res, which);
      if (Given(w) && !w->IsMap()) return Shape(wp, w, "a mapping of resource quantities");
      const bool lim = which[0] == 'l';
      TFDIAG_RETURN_IF_ERROR(Quantity(At(w, "cpu"), wp + ".cpu", "cpu",
                                      lim ? &r.cpu_limit_text : &r.cpu_request_text,
                                      lim ? &r.cpu_limit_m : &r.cpu_request_m));
      TFDIAG_RETURN_IF_ERROR(Quantity(At(w, "memory"), wp + ".memory", "memory", &ignored,
                                      lim ? &r.mem_limit : &r.mem_request));
      int64_t gpus = -1;
      TFDIAG_RETURN_IF_ERROR(
          Quantity(At(w, "nvidia.com/gpu"), wp + ".nvidia.com/gpu", "GPU", &ignored, &gpus));
      if (lim && gpus >= 0) r.gpu_limit = gpus;
    }
    N env = At(c, "env");
    if (Given(env) && !env->IsSeq()) return Shape(Join(path, "env"), env, "a list");
    for (size_t i = 0; IsSeq(env) && i < env->size(); ++i) {
      N ei = &env->Item(i);
      K8sEnvVar e{Str(At(ei, "name")), Str(At(ei, "value")), ""};
      N from = At(ei, "valueFrom");
      if (IsMap(from)) {
        if (Given(At(from, "resourceFieldRef"))) {
          e.value_from = "resourceFieldRef:" + Str(Get(from, {"resourceFieldRef", "resource"}));
        } else if (Given(At(from, "fieldRef"))) {
          e.value_from = "fieldRef:" + Str(Get(from, {"fieldRef", "fieldPath"}));
        } else if (from->size() > 0) {
          e.value_from = Str(&from->Key(0));
        }
      }
      out->env.push_back(std::move(e));
    }
    for (const char* key : {"command", "args"}) {
      N l = At(c, key);
      for (size_t i = 0; IsSeq(l) && i < l->size(); ++i) out->argv.push_back(Str(&l->Item(i)));
    }
    out->flags = FlagsOf(out->argv);
    return OkStatus();
  }

  Status Pod(N o, const std::string& base) {
    K8sPod p;
    N md = At(o, "metadata");
    if (Given(md) && !md->IsMap()) return Shape(Join(base, "metadata"), md, "a mapping");
    p.name = Str(At(md, "name"));
    p.namespace_ = Str(At(md, "namespace"));
    p.source = Src(base, o);
    IgnoredRules(md, &p.ignore);
    N labels = At(md, "labels");
    for (size_t i = 0; IsMap(labels) && i < labels->size(); ++i)
      p.labels[Str(&labels->Key(i))] = Str(&labels->Value(i));
    N owners = At(md, "ownerReferences");
    if (IsSeq(owners) && owners->size() > 0) {
      p.owner_kind = Str(At(&owners->Item(0), "kind"));
      p.owner_name = Str(At(&owners->Item(0), "name"));
    }
    p.node = Str(Get(o, {"spec", "nodeName"}));
    p.pod_ip = Str(Get(o, {"status", "podIP"}));
    p.hostname = Str(Get(o, {"spec", "hostname"}));
    p.host_network = Str(Get(o, {"spec", "hostNetwork"})) == "true";
    p.qos = Str(Get(o, {"status", "qosClass"}));
    bool anti = false, req = false;
    TFDIAG_RETURN_IF_ERROR(PodSpec(At(o, "spec"), Join(base, "spec"), &p.containers, &anti, &req));
    InferRole(labels, p.containers, p.name, &p.role, &p.role_source);
    for (const char* k : {"training.kubeflow.org/replica-index", "tf-replica-index",
                          "volcano.sh/task-index", "replica-index"}) {
      auto it = p.labels.find(k);
      if (it != p.labels.end()) p.index = std::atoi(it->second.c_str());
    }
    // "<job>-<type>-<i>" (a StatefulSet's "<name>-<i>" too), unless the type names another role.
    if (p.index < 0 && !p.role.empty()) {
      const std::optional<TfPodName> named = ParseTfPodName(p.name);
      if (named.has_value() && (named->role.empty() || named->role == p.role)) {
        p.index = named->index;
      }
    }
    ++summary_->pods;
    if (!p.role.empty()) ++summary_->tf_pods;
    out_->pods.push_back(std::move(p));
    return OkStatus();
  }

  const std::string& file_;
  K8sDeployment* out_;
  K8sFileSummary* summary_;
  int doc_ = 0;
  std::map<std::string, int> skipped_;
  static constexpr size_t kMaxUnknownKeyNotes = 20;  // per file
  int64_t unknown_keys_unsaid_ = 0;
  std::vector<std::string> object_ignore_;  // the current object's tfdiag.io/ignore rule ids
};

}  // namespace

Status ParseK8sText(std::string_view text, const std::string& file, K8sDeployment* out,
                    std::vector<std::unique_ptr<YamlNode>>* docs) {
  const std::string hint = text.find("{{") != std::string_view::npos
                               ? " (a Helm template? render it with `helm template` first)"
                               : "";
  K8sFileSummary summary;
  summary.file = file;
  const size_t first = text.find_first_not_of(" \t\r\n");
  summary.format = first != std::string_view::npos && (text[first] == '{' || text[first] == '[')
                       ? "JSON"
                       : "YAML";
  const size_t replicas_before = out->replicas.size();
  Reader reader(file, out, &summary);
  YamlStream stream(text, file);
  for (int doc = 0;; ++doc) {
    std::unique_ptr<YamlNode> d;
    StatusOr<bool> more = stream.Next(&d);
    if (!more.ok()) return Status(more.status().code(), more.status().message() + hint);
    if (!*more) break;
    ++summary.documents;
    TFDIAG_RETURN_IF_ERROR(reader.Document(d.get(), doc));
    if (docs != nullptr) docs->push_back(std::move(d));
  }
  if (summary.objects == 0) {
    return InvalidInput("{}: no Kubernetes objects (apiVersion/kind){}", file, hint);
  }
  reader.Finish();
  if (summary.pods > 0 && summary.tf_pods == 0 && out->replicas.size() == replicas_before) {
    out->notes.push_back(fmt::format(
        "{}: {} pod{}, none of them a TF PS/worker/chief/evaluator (no role label, --job_name "
        "flag, TF_CONFIG or role in the name)",
        file, summary.pods, summary.pods == 1 ? "" : "s"));
  }
  out->files.push_back(file);
  out->summaries.push_back(std::move(summary));
  return OkStatus();
}

}  // namespace tfdiag
