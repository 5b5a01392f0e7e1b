// Helpers of the manifest and pod-list reader (k8s_reader.cc): YAML node accessors that read a
// missing key as absent, and how a manifest names a TF role (replica-type and label values,
// tokens of object names, --job_name style flags in a container's command) and the rules a
// tfdiag.io/ignore annotation opts out of. Internal to collectors/k8s.
// Thread-safety: pure functions.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/k8s/yaml_tree.h"

namespace tfdiag::k8s_detail {

using N = const YamlNode*;

// The text of a scalar; "" for a missing node, a null, a mapping or a sequence.
inline std::string Str(N n) {
  return n != nullptr && n->IsScalar() && !n->IsNull() ? n->value : "";
}
inline bool IsMap(N n) { return n != nullptr && n->IsMap(); }
inline bool IsSeq(N n) { return n != nullptr && n->IsSeq(); }
// Present and not null.
inline bool Given(N n) { return n != nullptr && !n->IsNull(); }
inline N At(N n, std::string_view key) { return n != nullptr ? n->Find(key) : nullptr; }

// n[k0][k1]...: nullptr when any level is absent or not a mapping.
inline N Get(N n, std::initializer_list<const char*> keys) {
  for (const char* k : keys) n = At(n, k);
  return n;
}

// A replica-type or label value naming a TF role: "PS", "ps", "Worker", "MASTER", ... -> "ps",
// "worker", "master"; "" when it names none.
std::string RoleFromName(const std::string& name);

// A role named by one dash/underscore/dot-separated token of an object or pod name
// ("tf-ps-0" -> ps): the weakest inference, used last. "" when none.
std::string RoleInName(const std::string& name);

// --name=value and --name value pairs in every whitespace-separated token of argv (so flags
// inside `sh -c "python train.py --job_name=ps ..."` count too). Keys without dashes.
std::map<std::string, std::string> FlagsOf(const std::vector<std::string>& argv);

// The rule ids of a tfdiag.io/ignore annotation under `metadata` ("hot-ps, cpu-qos"), appended
// to *out without repeats.
void IgnoredRules(N metadata, std::vector<std::string>* out);

}  // namespace tfdiag::k8s_detail
