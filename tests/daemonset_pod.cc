#include "tests/daemonset_pod.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "collectors/k8s/yaml_tree.h"
#include "tests/test_util.h"

namespace tfdiag::test {
namespace {

std::string Scalar(const YamlNode* n) { return n != nullptr && n->IsScalar() ? n->value : ""; }

const YamlNode* Path(const YamlNode* n, std::initializer_list<const char*> keys) {
  for (const char* k : keys) n = n != nullptr ? n->Find(k) : nullptr;
  return n;
}

// Kubernetes' $(VAR_NAME) expansion in command, args and env values: a variable defined earlier
// in env is replaced, "$$" is a literal "$", an unknown reference is left as written
// (https://kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables/).
std::string Expand(const std::string& s,
                   const std::vector<std::pair<std::string, std::string>>& env) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '$' && i + 1 < s.size() && s[i + 1] == '$') {
      out += '$', ++i;
      continue;
    }
    size_t close = s.find(')', i);
    if (s.compare(i, 2, "$(") == 0 && close != std::string::npos) {
      const std::string name = s.substr(i + 2, close - i - 2);
      auto it = std::find_if(env.rbegin(), env.rend(), [&](auto& e) { return e.first == name; });
      if (it != env.rend()) {
        out += it->second, i = close;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

}  // namespace

// Reads the DaemonSet's first container; `fields` stands in for the downward API (fieldPath ->
// value). Errors name what the test cannot stand in for (a fieldRef without a test value, a
// volume that is not a hostPath).
StatusOr<AgentPod> ReadDaemonSet(const std::string& file,
                                 const std::map<std::string, std::string>& fields) {
  const std::string text = ReadFile(file);
  YamlStream stream(text, file);
  std::unique_ptr<YamlNode> doc;
  for (;;) {
    StatusOr<bool> more = stream.Next(&doc);
    if (!more.ok()) return more.status();
    if (!*more) return Status(StatusCode::kNotFound, file + ": no DaemonSet document");
    if (doc != nullptr && Scalar(doc->Find("kind")) == "DaemonSet") break;
  }
  const YamlNode* pod = Path(doc.get(), {"spec", "template", "spec"});
  const YamlNode* containers = Path(pod, {"containers"});
  if (containers == nullptr || !containers->IsSeq() || containers->size() == 0)
    return Status(StatusCode::kInvalidInput, file + ": no spec.template.spec.containers");
  const YamlNode& c = containers->Item(0);
  AgentPod p;
  p.image = Scalar(c.Find("image"));
  p.host_pid = Scalar(pod->Find("hostPID")) == "true";
  p.privileged = Scalar(Path(&c, {"securityContext", "privileged"})) == "true";
  p.read_only_root = Scalar(Path(&c, {"securityContext", "readOnlyRootFilesystem"})) == "true";
  p.host_network = Scalar(pod->Find("hostNetwork")) == "true";
  p.liveness_path = Scalar(Path(&c, {"livenessProbe", "httpGet", "path"}));
  if (const YamlNode* add = Path(&c, {"securityContext", "capabilities", "add"});
      add != nullptr && add->IsSeq()) {
    for (size_t i = 0; i < add->size(); ++i) p.cap_add.push_back(Scalar(&add->Item(i)));
  }
  if (const YamlNode* env = c.Find("env"); env != nullptr && env->IsSeq()) {
    for (size_t i = 0; i < env->size(); ++i) {
      const YamlNode& e = env->Item(i);
      std::string value = Expand(Scalar(e.Find("value")), p.env);
      if (const YamlNode* f = Path(&e, {"valueFrom", "fieldRef", "fieldPath"})) {
        auto it = fields.find(Scalar(f));
        if (it == fields.end())
          return Status(StatusCode::kInvalidInput,
                        fmt::format("{}: line {}: no test value for fieldRef '{}'", file, f->line,
                                    Scalar(f)));
        value = it->second;
      }
      p.env.emplace_back(Scalar(e.Find("name")), value);
    }
  }
  for (const char* key : {"command", "args"}) {
    if (const YamlNode* s = c.Find(key); s != nullptr && s->IsSeq()) {
      for (size_t i = 0; i < s->size(); ++i) p.argv.push_back(Expand(Scalar(&s->Item(i)), p.env));
    }
  }
  std::map<std::string, std::string> host_paths;
  std::map<std::string, int> other_volumes;  // name -> line (the proxy's projected token)
  if (const YamlNode* vols = pod->Find("volumes"); vols != nullptr && vols->IsSeq()) {
    for (size_t i = 0; i < vols->size(); ++i) {
      const YamlNode& v = vols->Item(i);
      const YamlNode* hp = Path(&v, {"hostPath", "path"});
      if (hp == nullptr) {
        other_volumes[Scalar(v.Find("name"))] = v.line;
      } else {
        host_paths[Scalar(v.Find("name"))] = Scalar(hp);
      }
    }
  }
  if (const YamlNode* vm = c.Find("volumeMounts"); vm != nullptr && vm->IsSeq()) {
    for (size_t i = 0; i < vm->size(); ++i) {
      const YamlNode& m = vm->Item(i);
      auto it = host_paths.find(Scalar(m.Find("name")));
      if (auto o = other_volumes.find(Scalar(m.Find("name"))); o != other_volumes.end())
        return Status(
            StatusCode::kInvalidInput,
            fmt::format("{}: line {}: volume '{}' is not a hostPath", file, o->second, o->first));
      if (it == host_paths.end())
        return Status(
            StatusCode::kInvalidInput,
            fmt::format("{}: line {}: volumeMount of an undeclared volume", file, m.line));
      p.mounts.push_back(
          {it->second, Scalar(m.Find("mountPath")), Scalar(m.Find("readOnly")) == "true"});
    }
  }
  if (p.argv.empty())
    return Status(StatusCode::kInvalidInput, file + ": the container has no command");
  return p;
}

}  // namespace tfdiag::test
