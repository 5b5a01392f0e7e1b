#include "analyzers/k8s_ignore.h"

#include <algorithm>

namespace tfdiag {

namespace {

bool Has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// `subject` is `where` or lies under it ("<file> (doc 1): spec.tfReplicaSpecs.PS" covers
// "...PS.template..." but not "...PSX").
bool Under(const std::string& subject, const std::string& where) {
  if (subject.compare(0, where.size(), where) != 0) return false;
  return subject.size() == where.size() || subject[where.size()] == '.' ||
         subject[where.size()] == ':';
}

bool Ignored(const K8sDeployment& k8s, const Finding& f) {
  if (f.subject_kind == "pod") {
    for (const K8sPod& p : k8s.pods) {
      if (p.name == f.subject && Has(p.ignore, f.rule_id)) return true;
    }
    return false;
  }
  for (const K8sReplicaType& r : k8s.replicas) {
    if (Has(r.ignore, f.rule_id) && Under(f.subject, r.source.Where())) return true;
  }
  return false;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> DropIgnoredFindings(
    const K8sDeployment& k8s, std::vector<Finding>* findings) {
  std::vector<std::pair<std::string, std::string>> dropped;
  auto keep = std::stable_partition(findings->begin(), findings->end(), [&](const Finding& f) {
    if (!Ignored(k8s, f)) return true;
    dropped.emplace_back(f.rule_id, f.subject);
    return false;
  });
  findings->erase(keep, findings->end());
  return dropped;
}

}  // namespace tfdiag
