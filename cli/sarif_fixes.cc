#include "cli/sarif_fixes.h"

#include <fstream>
#include <set>
#include <sstream>

#include "actions/k8s_fix.h"

namespace tfdiag {

namespace {

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    nl = nl == std::string::npos ? s.size() : nl + 1;
    out.push_back(s.substr(pos, nl - pos));
    pos = nl;
  }
  return out;
}

// The lines between the common head and tail of `a` and `b`, as one replacement.
SarifFix Hunk(const std::string& a, const std::string& b) {
  const std::vector<std::string> la = Lines(a), lb = Lines(b);
  size_t head = 0;
  while (head < la.size() && head < lb.size() && la[head] == lb[head]) ++head;
  size_t tail = 0;
  while (tail < la.size() - head && tail < lb.size() - head &&
         la[la.size() - 1 - tail] == lb[lb.size() - 1 - tail])
    ++tail;
  SarifFix f;
  f.start_line = static_cast<int>(head) + 1;
  f.deleted_lines = static_cast<int>(la.size() - head - tail);
  for (size_t i = head; i < lb.size() - tail; ++i) f.inserted += lb[i];
  return f;
}

}  // namespace

SarifFixes ManifestSarifFixes(const std::vector<Finding>& findings,
                              const std::map<std::string, std::string>& files) {
  SarifFixes out;
  std::map<std::string, std::string> texts;
  size_t computed = 0;
  for (const Finding& f : findings) {
    if (f.subject_kind != "manifest" || computed >= kMaxSarifFixes) continue;
    const size_t doc = f.subject.find(" (doc ");
    if (doc == std::string::npos) continue;
    const auto file = files.find(f.subject.substr(0, doc));
    if (file == files.end()) continue;
    auto [text, added] = texts.try_emplace(file->first);
    if (added) {
      std::ifstream in(file->second, std::ios::binary);
      std::ostringstream ss;
      ss << in.rdbuf();
      text->second = ss.str();
    }
    ++computed;
    const std::set<std::string> raised = {f.rule_id + " " + f.subject};
    FixOptions o;
    o.raised = &raised;
    StatusOr<FixResult> r = FixManifest(text->second, file->first, o);
    if (!r.ok() || !r->changed) continue;
    out[f.rule_id + " " + f.subject] = Hunk(text->second, r->yaml);
  }
  return out;
}

}  // namespace tfdiag
