#include "report/sarif_report.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <vector>

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

// An input path as SARIF's artifactLocation: always a relative URI against a base
// (`originalUriBaseIds`), so that code scanning shows it wherever the log is uploaded from, and
// the same however the path was typed ("job.yaml", "./job.yaml", "/repo/job.yaml",
// "../repo/job.yaml" from /repo): the path is made absolute against the working directory and
// normalized, then written relative to %SRCROOT% (the working directory) when it lies under it,
// else relative to its own directory, a base "INPUT<n>" per directory (issue 48); standard input
// (IsStandardInput) the placeholder "stdin"; a Prometheus job the query that found its pods,
// described by the server and the query that found the job's pods.
struct ArtifactUri {
  std::string uri;
  std::string base = "%SRCROOT%";
};

class Artifacts {
 public:
  explicit Artifacts(std::string cwd) : cwd_(std::move(cwd)) {}
  ArtifactUri Of(const std::string& path) {
    // Standard input has no file: the placeholder path "stdin" (docs/manifests.md); "-" would
    // name a file called "-".
    if (IsStandardInput(path)) return {"stdin"};
    namespace fs = std::filesystem;
    fs::path p(path);
    if (p.is_relative() && !cwd_.empty()) p = fs::path(cwd_) / p;
    p = p.lexically_normal();
    if (!cwd_.empty()) {
      const fs::path rel = p.lexically_relative(fs::path(cwd_));
      const std::string r = rel.generic_string();
      if (!rel.empty() && r != "." && r.rfind("..", 0) != 0) return {Uri(r)};
    }
    if (p.is_relative()) return {Uri(p.generic_string())};  // no working directory known
    const std::string dir = p.parent_path().generic_string();
    auto it = bases_.find(dir);
    if (it == bases_.end()) {
      it = bases_.emplace(dir, "INPUT" + std::to_string(bases_.size() + 1)).first;
      order_.push_back(dir);
    }
    return {Uri(p.filename().generic_string()), it->second};
  }
  // The Prometheus server the job was read from (named in its results' descriptions).
  // Credentials in the URL (http://user:secret@prom:9090) are left out of the log.
  void SetPrometheus(const std::string& url) {
    prometheus_ = url;
    const size_t scheme = prometheus_.find("://");
    if (scheme == std::string::npos) return;
    const size_t host = scheme + 3, end = prometheus_.find('/', host);
    const size_t at = prometheus_.rfind('@', end == std::string::npos ? std::string::npos : end);
    if (at != std::string::npos && at >= host) prometheus_.erase(host, at + 1 - host);
  }
  // The query a Prometheus job's findings are located on: "api/v1/query?query=<PromQL>" (the
  // Prometheus HTTP API's instant query,
  // https://prometheus.io/docs/prometheus/latest/querying/api/) against the base PROMETHEUS, the
  // server's URL (no credentials) ending in '/'.
  ArtifactUri Query(const std::string& promql) {
    std::string q;
    for (unsigned char c : promql) {
      if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
        q += static_cast<char>(c);
      } else {
        q += fmt::format("%{:02X}", c);
      }
    }
    return {"api/v1/query?query=" + q, "PROMETHEUS"};
  }
  // originalUriBaseIds: %SRCROOT% and each INPUT<n>, as absolute file: URIs ending in '/', and
  // PROMETHEUS (the server) when a job was read from one.
  template <typename W>
  void WriteBases(json::Json<W>& j, W* w) const {
    j.Key("originalUriBaseIds");
    w->StartObject();
    auto base = [&](const std::string& id, const std::string& uri) {
      j.Key(id);
      w->StartObject();
      j.Str("uri", uri);
      w->EndObject();
    };
    base("%SRCROOT%", "file://" + Uri(cwd_.empty() ? "/" : cwd_.back() == '/' ? cwd_ : cwd_ + "/"));
    for (const std::string& dir : order_)
      base(bases_.at(dir), "file://" + Uri(dir.empty() || dir.back() == '/' ? dir : dir + "/"));
    if (!prometheus_.empty()) {
      // The server's URL up to its path, ending in '/' (SARIF 3.14.14); query and fragment cut.
      std::string url = prometheus_.substr(0, prometheus_.find_first_of("?#"));
      if (url.back() != '/') url += '/';
      base("PROMETHEUS", url);
    }
    w->EndObject();
  }
  const std::string& prometheus() const { return prometheus_; }

 private:
  std::string cwd_;
  std::map<std::string, std::string> bases_;  // directory -> INPUT<n>
  std::vector<std::string> order_;            // directories in the order their ids were given
  std::string prometheus_;
};

std::string WorkingDirectory() {
  std::error_code ec;
  const std::string cwd = std::filesystem::current_path(ec).string();
  return ec ? std::string() : cwd;
}

// artifactLocation {uri, uriBaseId, description.text when `description` is not empty}.
template <typename W>
void ArtifactLocation(json::Json<W>& j, W* w, const ArtifactUri& a,
                      const std::string& description = {}) {
  j.Key("artifactLocation");
  w->StartObject();
  j.Str("uri", a.uri);
  j.Str("uriBaseId", a.base);
  if (!description.empty()) {
    j.Key("description");
    w->StartObject();
    j.Str("text", EscapeBidiControls(description));
    w->EndObject();
  }
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
  Artifacts artifacts(WorkingDirectory());
  // Where a finding without a manifest line points: the first trace, else the Prometheus query
  // that found the job's pods, else the placeholder.
  const bool prometheus = inputs != nullptr && inputs->traces.empty() &&
                          !inputs->prometheus_url.empty() && !inputs->prometheus_query.empty();
  const std::string fallback = inputs != nullptr && !inputs->traces.empty() ? inputs->traces[0]
                               : inputs != nullptr && !inputs->placeholder.empty()
                                   ? inputs->placeholder
                                   : std::string("tfdiag-analysis");
  // A Prometheus job has no file: its findings are located on the query that found its pods,
  // relative to the server (issue 48), and described by both.
  ArtifactUri fallback_uri = artifacts.Of(fallback);
  if (prometheus) {
    artifacts.SetPrometheus(inputs->prometheus_url);
    fallback_uri = artifacts.Query(inputs->prometheus_query);
  }
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
    const ArtifactUri where = s != nullptr ? artifacts.Of(s->file) : fallback_uri;
    ArtifactLocation(j, w, where,
                     s == nullptr && prometheus
                         ? "the job's pods as Prometheus at " + artifacts.prometheus() +
                               " found them: " + inputs->prometheus_query
                         : std::string());
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
        WriteFix(j, w, where, fix->second, "tfdiag fix for " + f.rule_id);
      }
    }
    j.Key("partialFingerprints");
    w->StartObject();
    // The same however the input's path was typed: a subject that starts with the file as
    // given ("job.yaml (doc 1): spec...") has it replaced by the artifact's base and URI.
    std::string subject = f.subject;
    if (s != nullptr && !s->file.empty() && subject.rfind(s->file, 0) == 0)
      subject = where.base + "/" + where.uri + subject.substr(s->file.size());
    j.Str("tfdiagSubject/v1", f.rule_id + " " + subject);
    w->EndObject();
    w->EndObject();
  }
  w->EndArray();
  artifacts.WriteBases(j, w);
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
