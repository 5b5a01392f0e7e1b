#include "collectors/k8s/k8s_roles.h"

#include <absl/strings/ascii.h>

#include <algorithm>
#include <sstream>

#include "core/tf_roles.h"

namespace tfdiag::k8s_detail {

std::string RoleFromName(const std::string& name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "parameter_server" || n == "parameter-server") return "ps";
  return TfRoleOf(n);
}

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

void IgnoredRules(N metadata, std::vector<std::string>* out) {
  const std::string v = Str(Get(metadata, {"annotations", "tfdiag.io/ignore"}));
  std::string id;
  for (size_t i = 0; i <= v.size(); ++i) {
    if (i == v.size() || v[i] == ',') {
      while (!id.empty() && id.back() == ' ') id.pop_back();
      if (!id.empty() && std::find(out->begin(), out->end(), id) == out->end()) out->push_back(id);
      id.clear();
    } else if (v[i] != ' ' || !id.empty()) {
      id += v[i];
    }
  }
}

}  // namespace tfdiag::k8s_detail
