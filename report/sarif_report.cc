#include "report/sarif_report.h"

#include <fmt/format.h>

#include <filesystem>

#include "analyzers/grouping.h"
#include "core/utf8.h"
#include "report/json_writer.h"

namespace tfdiag {

namespace {

const char* Level(Severity s) {
  if (s >= Severity::kHigh) return "error";
  if (s == Severity::kMedium) return "warning";
  return "note";
}

// A relative or absolute path as a URI reference (RFC 3986): unreserved characters and '/' kept,
// everything else percent-encoded.
std::string Uri(const std::string& path) {
  std::string o;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      o += static_cast<char>(c);
    } else {
      o += fmt::format("%{:02X}", c);
    }
  }
  return o;
}

// True for the names of standard input analyze accepts ("-", /dev/stdin, /dev/fd/0,
// /proc/self/fd/0).
bool IsStandardInput(const std::string& path) {
  return path == "-" || path == "/dev/stdin" || path == "/dev/fd/0" || path == "/proc/self/fd/0";
}

// An input path as SARIF's artifactLocation: a relative URI against %SRCROOT% (the working
// directory) where the path is relative or lies under it, else an absolute file: URI; standard
// input (IsStandardInput) the placeholder "stdin".
struct ArtifactUri {
  std::string uri;
  bool relative = true;
};
ArtifactUri ToUri(const std::string& path, const std::string& cwd) {
  // Standard input has no file: the placeholder path "stdin" (docs/manifests.md), as a
  // Prometheus job has "prometheus/<job>"; "-" would name a file called "-".
  if (IsStandardInput(path)) return {"stdin", true};
  if (path.empty() || path[0] != '/') {
    std::string p = path;
    while (p.rfind("./", 0) == 0) p = p.substr(2);
    return {Uri(p), true};
  }
  if (!cwd.empty() && path.size() > cwd.size() + 1 && path.compare(0, cwd.size(), cwd) == 0 &&
      (path[cwd.size()] == '/' || cwd == "/")) {
    return {Uri(path.substr(cwd == "/" ? 1 : cwd.size() + 1)), true};
  }
  return {"file://" + Uri(path), false};
}

std::string WorkingDirectory() {
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  return ec ? std::string() : cwd;
}

template <typename W>
void ArtifactLocation(json::Json<W>& j, W* w, const ArtifactUri& a) {
  j.Key("artifactLocation");
  w->StartObject();
  j.Str("uri", a.uri);
  if (a.relative) j.Str("uriBaseId", "%SRCROOT%");
  w->EndObject();
}

// The manifest item a finding's subject names: the longest K8sSource whose Where() starts the
// subject (a container before its replica spec), a pod by name, or for a node (ps-colocation on a
// pod list) the first PS pod listed on it; nullptr when none does.
const K8sSource* SourceOf(const K8sDeployment* k8s, const std::string& subject) {
  if (k8s == nullptr) return nullptr;
  const K8sSource* best = nullptr;
  size_t best_len = 0;
  auto consider = [&](const K8sSource& s) {
    if (s.line <= 0) return;
    const std::string w = s.Where();
    if (w.size() <= best_len || subject.compare(0, w.size(), w) != 0) return;
    if (subject.size() > w.size() && subject[w.size()] != '.' && subject[w.size()] != ':') return;
    best = &s;
    best_len = w.size();
  };
  for (const K8sReplicaType& r : k8s->replicas) {
    consider(r.source);
    consider(r.pod_spec);
    for (const K8sContainer& c : r.containers) consider(c.source);
  }
  for (const K8sPod& p : k8s->pods) {
    if (p.name == subject) return p.source.line > 0 && p.SpecKnown() ? &p.source : nullptr;
  }
  if (best == nullptr) {
    for (const K8sPod& p : k8s->pods) {
      if (p.node == subject && p.role == "ps" && p.source.line > 0 && p.SpecKnown())
        return &p.source;
    }
  }
  return best;
}

template <typename W>
void Region(json::Json<W>& j, W* w, int start_line, int end_line) {
  j.Key("deletedRegion");
  w->StartObject();
  j.Int("startLine", start_line);
  j.Int("startColumn", 1);
  j.Int("endLine", end_line);
  j.Int("endColumn", 1);
  w->EndObject();
}

// fixes[0]: one change of the file, its lines replaced.
template <typename W>
void WriteFix(json::Json<W>& j, W* w, const ArtifactUri& uri, const SarifFix& fix,
              const std::string& what) {
  j.Key("fixes");
  w->StartArray();
  w->StartObject();
  j.Key("description");
  w->StartObject();
  j.Str("text", EscapeBidiControls(what));
  w->EndObject();
  j.Key("artifactChanges");
  w->StartArray();
  w->StartObject();
  ArtifactLocation(j, w, uri);
  j.Key("replacements");
  w->StartArray();
  w->StartObject();
  Region(j, w, fix.start_line, fix.start_line + fix.deleted_lines);
  j.Key("insertedContent");
  w->StartObject();
  j.Str("text", fix.inserted);
  w->EndObject();
  w->EndObject();
  w->EndArray();
  w->EndObject();
  w->EndArray();
  w->EndObject();
  w->EndArray();
}

template <typename W>
void Write(const AnalysisResult& r, const RuleSet& rules, const SarifFixes* fixes,
           const SarifInputs* inputs, W* w) {
  json::Json<W> j(w);
  const std::string cwd = WorkingDirectory();
  // Where a finding without a manifest line points: the first trace, else the placeholder.
  const std::string fallback = inputs != nullptr && !inputs->traces.empty() ? inputs->traces[0]
                               : inputs != nullptr && !inputs->placeholder.empty()
                                   ? inputs->placeholder
                                   : std::string("tfdiag-analysis");
  std::vector<const Rule*> listed;
  for (const std::string& id : r.rules_run) {
    if (const Rule* rule = rules.Find(id)) listed.push_back(rule);
  }
  w->StartObject();
  j.Str("$schema", "https://json.schemastore.org/sarif-2.1.0.json");
  j.Str("version", "2.1.0");
  j.Key("runs");
  w->StartArray();
  w->StartObject();
  j.Key("tool");
  w->StartObject();
  j.Key("driver");
  w->StartObject();
  j.Str("name", "tfdiag");
  j.Str("version", TFDIAG_VERSION);
  j.Str("semanticVersion", TFDIAG_VERSION);
  j.Str("informationUri", TFDIAG_INFORMATION_URI);
  j.Key("rules");
  w->StartArray();
  for (const Rule* rule : listed) {
    w->StartObject();
    j.Str("id", rule->id);
    j.Key("shortDescription");
    w->StartObject();
    j.Str("text", rule->title.empty() ? rule->id : rule->title);
    w->EndObject();
    j.Key("fullDescription");
    w->StartObject();
    j.Str("text", rule->checks.empty() ? rule->title : rule->checks);
    w->EndObject();
    j.Key("help");
    w->StartObject();
    j.Str("text", rule->fix);
    w->EndObject();
    j.Key("defaultConfiguration");
    w->StartObject();
    j.Str("level", Level(rule->severity));
    w->EndObject();
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();  // driver
  w->EndObject();  // tool
  j.Key("results");
  w->StartArray();
  for (const Finding& f : UngroupFindings(r.findings)) {
    w->StartObject();
    j.Str("ruleId", f.rule_id);
    for (size_t i = 0; i < listed.size(); ++i) {
      if (listed[i]->id == f.rule_id) j.Int("ruleIndex", static_cast<int64_t>(i));
    }
    j.Str("level", Level(f.severity));
    j.Key("message");
    w->StartObject();
    // Bidirectional controls from workload names escaped: a code-scanning UI shows this text.
    j.Str("text", EscapeBidiControls(f.fix.empty() ? f.summary : f.summary + "\nFix: " + f.fix));
    w->EndObject();
    j.Key("locations");
    w->StartArray();
    const K8sSource* s = SourceOf(r.k8s, f.subject);
    w->StartObject();
    j.Key("physicalLocation");
    w->StartObject();
    ArtifactLocation(j, w, ToUri(s != nullptr ? s->file : fallback, cwd));
    j.Key("region");
    w->StartObject();
    j.Int("startLine", s != nullptr ? s->line : 1);
    w->EndObject();
    w->EndObject();
    if (s == nullptr) {
      // Not a line of a file (a task of a trace, a live process, a pod seen by Prometheus): the
      // input as the physical location, the object as the logical one.
      j.Key("logicalLocations");
      w->StartArray();
      w->StartObject();
      j.Str("name", f.subject);
      j.Str("kind", f.subject_kind);
      w->EndObject();
      w->EndArray();
    }
    w->EndObject();
    w->EndArray();
    if (fixes != nullptr) {
      const auto fix = fixes->find(f.rule_id + " " + f.subject);
      // A manifest read from standard input has no file a fix could edit: no fix.
      if (fix != fixes->end() && s != nullptr && !IsStandardInput(s->file)) {
        WriteFix(j, w, ToUri(s->file, cwd), fix->second, "tfdiag fix for " + f.rule_id);
      }
    }
    j.Key("partialFingerprints");
    w->StartObject();
    j.Str("tfdiagSubject/v1", f.rule_id + " " + f.subject);
    w->EndObject();
    w->EndObject();
  }
  w->EndArray();
  j.Key("originalUriBaseIds");
  w->StartObject();
  j.Key("%SRCROOT%");
  w->StartObject();
  j.Str("uri", "file://" + Uri(cwd.empty() ? "/" : cwd.back() == '/' ? cwd : cwd + "/"));
  w->EndObject();
  w->EndObject();
  w->EndObject();  // run
  w->EndArray();
  w->EndObject();
}

}  // namespace

StatusOr<std::string> RenderSarif(const AnalysisResult& r, const RuleSet& rules, bool pretty,
                                  const SarifFixes* fixes, const SarifInputs* inputs) {
  return json::RenderDocument(pretty, "SARIF 2.1.0",
                              [&](auto* w) { Write(r, rules, fixes, inputs, w); });
}

}  // namespace tfdiag
