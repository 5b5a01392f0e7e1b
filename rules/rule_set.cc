#include "rules/rule_set.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <set>

#include "core/json_dom.h"

namespace tfdiag {

extern const std::string_view kDefaultRulesJson;

namespace {

using rapidjson::Value;

constexpr std::string_view kSchema = "tfdiag.rules/1";

struct Ctx {
  std::string_view source;
  std::string rule;  // id, once known
  Status Err(std::string_view field, std::string_view what) const {
    if (rule.empty()) return InvalidInput("{}: {}: {}", source, field, what);
    return InvalidInput("{}: rule '{}': {}: {}", source, rule, field, what);
  }
};

Status GetString(const Value& obj, const char* key, const Ctx& ctx, std::string* out,
                 bool required) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd())
    return required ? ctx.Err(key, "missing (expected a string)") : OkStatus();
  if (!it->value.IsString()) return ctx.Err(key, "expected a string");
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return OkStatus();
}

Status ParseParams(const Value& v, const Ctx& ctx, Rule* rule, bool override_only) {
  if (!v.IsObject()) return ctx.Err("params", "expected an object of {name: {value, unit, doc}}");
  for (auto& m : v.GetObject()) {
    std::string name(m.name.GetString(), m.name.GetStringLength());
    std::string field = "params." + name;
    const Value& p = m.value;
    RuleParam* existing = const_cast<RuleParam*>(rule->FindParam(name));
    if (override_only && existing == nullptr) {
      return ctx.Err(field, "the rule has no such parameter");
    }
    RuleParam param = existing != nullptr ? *existing : RuleParam{name, 0, "", ""};
    if (p.IsNumber()) {  // shorthand {"name": 3.0} in overrides
      if (existing == nullptr) return ctx.Err(field, "a new parameter needs {value, unit, doc}");
      param.value = p.GetDouble();
    } else if (p.IsObject()) {
      for (auto& f : p.GetObject()) {
        std::string_view k(f.name.GetString(), f.name.GetStringLength());
        if (k == "value") {
          if (!f.value.IsNumber()) return ctx.Err(field + ".value", "expected a number");
          param.value = f.value.GetDouble();
        } else if (k == "unit" || k == "doc") {
          if (!f.value.IsString())
            return ctx.Err(field + "." + std::string(k), "expected a string");
          (k == "unit" ? param.unit : param.doc) = f.value.GetString();
        } else {
          return ctx.Err(field + "." + std::string(k), "unknown key (expected value, unit, doc)");
        }
      }
      if (existing == nullptr && (!p.HasMember("value") || !p.HasMember("unit"))) {
        return ctx.Err(field, "a parameter needs value and unit");
      }
    } else {
      return ctx.Err(field, "expected an object {value, unit, doc} or a number");
    }
    if (param.value < 0) return ctx.Err(field + ".value", "must be >= 0");
    if (param.unit == "ratio01" && param.value > 1)
      return ctx.Err(field + ".value", "must be <= 1");
    if (existing != nullptr) {
      *existing = param;
    } else {
      rule->params.push_back(param);
    }
  }
  return OkStatus();
}

// Fills `rule` from `v`. With `partial`, fields not given keep their values.
Status ParseRule(const Value& v, std::string_view source, Rule* rule, bool partial) {
  Ctx ctx{source, rule->id};
  static const std::set<std::string_view> kKeys = {"id",    "analyzer", "severity",  "enabled",
                                                   "title", "checks",   "evidence",  "rationale",
                                                   "fix",   "params",   "references"};
  for (auto& m : v.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    if (kKeys.count(k) == 0) {
      return ctx.Err(k,
                     "unknown key (expected one of id, analyzer, severity, enabled, title, "
                     "checks, evidence, rationale, fix, params, references)");
    }
  }
  TFDIAG_RETURN_IF_ERROR(GetString(v, "analyzer", ctx, &rule->analyzer, !partial));
  std::string sev;
  TFDIAG_RETURN_IF_ERROR(GetString(v, "severity", ctx, &sev, !partial));
  if (!sev.empty()) {
    StatusOr<Severity> s = ParseSeverity(sev);
    if (!s.ok()) return ctx.Err("severity", s.status().message());
    rule->severity = *s;
  }
  if (auto it = v.FindMember("enabled"); it != v.MemberEnd()) {
    if (!it->value.IsBool()) return ctx.Err("enabled", "expected true or false");
    rule->enabled = it->value.GetBool();
  }
  TFDIAG_RETURN_IF_ERROR(GetString(v, "title", ctx, &rule->title, !partial));
  TFDIAG_RETURN_IF_ERROR(GetString(v, "checks", ctx, &rule->checks, !partial));
  TFDIAG_RETURN_IF_ERROR(GetString(v, "evidence", ctx, &rule->evidence, !partial));
  TFDIAG_RETURN_IF_ERROR(GetString(v, "rationale", ctx, &rule->rationale, !partial));
  TFDIAG_RETURN_IF_ERROR(GetString(v, "fix", ctx, &rule->fix, !partial));
  if (auto it = v.FindMember("references"); it != v.MemberEnd()) {
    if (!it->value.IsArray()) return ctx.Err("references", "expected an array of strings");
    rule->references.clear();
    for (auto& r : it->value.GetArray()) {
      if (!r.IsString()) return ctx.Err("references", "expected an array of strings");
      rule->references.emplace_back(r.GetString());
    }
  } else if (!partial) {
    return ctx.Err("references", "missing (expected an array of strings)");
  }
  if (auto it = v.FindMember("params"); it != v.MemberEnd()) {
    TFDIAG_RETURN_IF_ERROR(ParseParams(it->value, ctx, rule, partial));
  }
  return OkStatus();
}

StatusOr<rapidjson::Document> ParseDoc(std::string_view json, std::string_view source) {
  rapidjson::Document doc;
  // Iterative and depth-limited (a rules file of 131,000 '[' overflowed the recursive parser).
  TFDIAG_RETURN_IF_ERROR(ParseJsonText(source, json, &doc));
  if (!doc.IsObject()) return InvalidInput("{}: expected a JSON object with \"rules\"", source);
  Ctx ctx{source, ""};
  for (auto& m : doc.GetObject()) {
    std::string_view k(m.name.GetString(), m.name.GetStringLength());
    if (k != "schema" && k != "version" && k != "rules" && k != "replace") {
      return ctx.Err(k, "unknown key (expected schema, version, rules, replace)");
    }
  }
  auto schema = doc.FindMember("schema");
  if (schema == doc.MemberEnd() || !schema->value.IsString() ||
      schema->value.GetString() != kSchema) {
    return ctx.Err("schema", fmt::format("expected \"{}\"", kSchema));
  }
  auto rules = doc.FindMember("rules");
  if (rules == doc.MemberEnd() || !rules->value.IsArray()) {
    return ctx.Err("rules", "expected an array of rules");
  }
  return doc;
}

Status RuleId(const Value& v, std::string_view source, size_t i, std::string* id) {
  if (!v.IsObject()) return InvalidInput("{}: rules[{}]: expected an object", source, i);
  auto it = v.FindMember("id");
  if (it == v.MemberEnd() || !it->value.IsString() || it->value.GetStringLength() == 0) {
    return InvalidInput("{}: rules[{}]: id: missing (expected a non-empty string)", source, i);
  }
  *id = it->value.GetString();
  return OkStatus();
}

}  // namespace

std::string_view SeverityName(Severity s) {
  switch (s) {
    case Severity::kInfo:
      return "info";
    case Severity::kLow:
      return "low";
    case Severity::kMedium:
      return "medium";
    case Severity::kHigh:
      return "high";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

StatusOr<Severity> ParseSeverity(std::string_view name) {
  for (Severity s :
       {Severity::kInfo, Severity::kLow, Severity::kMedium, Severity::kHigh, Severity::kCritical}) {
    if (SeverityName(s) == name) return s;
  }
  return UsageError("unknown severity '{}' (expected info, low, medium, high or critical)", name);
}

const RuleParam* Rule::FindParam(std::string_view name) const {
  for (const RuleParam& p : params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

double Rule::Param(std::string_view name, double fallback) const {
  const RuleParam* p = FindParam(name);
  return p != nullptr ? p->value : fallback;
}

const Rule* RuleSet::Find(std::string_view id) const {
  for (const Rule& r : rules) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Rule* RuleSet::Find(std::string_view id) {
  return const_cast<Rule*>(static_cast<const RuleSet*>(this)->Find(id));
}

StatusOr<RuleSet> ParseRuleSet(std::string_view json, std::string_view source) {
  StatusOr<rapidjson::Document> doc = ParseDoc(json, source);
  if (!doc.ok()) return doc.status();
  RuleSet set;
  if (auto v = doc->FindMember("version"); v != doc->MemberEnd() && v->value.IsString()) {
    set.version = v->value.GetString();
  }
  const Value& rules = (*doc)["rules"];
  for (rapidjson::SizeType i = 0; i < rules.Size(); ++i) {
    Rule rule;
    TFDIAG_RETURN_IF_ERROR(RuleId(rules[i], source, i, &rule.id));
    if (set.Find(rule.id) != nullptr) {
      return InvalidInput("{}: rule '{}': id: defined twice", source, rule.id);
    }
    TFDIAG_RETURN_IF_ERROR(ParseRule(rules[i], source, &rule, /*partial=*/false));
    set.rules.push_back(std::move(rule));
  }
  return set;
}

StatusOr<RuleSet> DefaultRuleSet() {
  return ParseRuleSet(kDefaultRulesJson, "rules/default.rules.json (built in)");
}

Status ApplyRulesFile(RuleSet* set, std::string_view json, std::string_view source) {
  StatusOr<rapidjson::Document> doc = ParseDoc(json, source);
  if (!doc.ok()) return doc.status();
  if (auto r = doc->FindMember("replace"); r != doc->MemberEnd()) {
    if (!r->value.IsBool()) return InvalidInput("{}: replace: expected true or false", source);
    if (r->value.GetBool()) {
      StatusOr<RuleSet> fresh = ParseRuleSet(json, source);
      if (!fresh.ok()) return fresh.status();
      *set = std::move(*fresh);
      return OkStatus();
    }
  }
  const Value& rules = (*doc)["rules"];
  for (rapidjson::SizeType i = 0; i < rules.Size(); ++i) {
    std::string id;
    TFDIAG_RETURN_IF_ERROR(RuleId(rules[i], source, i, &id));
    if (Rule* existing = set->Find(id)) {
      TFDIAG_RETURN_IF_ERROR(ParseRule(rules[i], source, existing, /*partial=*/true));
    } else {
      Rule rule;
      rule.id = id;
      TFDIAG_RETURN_IF_ERROR(ParseRule(rules[i], source, &rule, /*partial=*/false));
      set->rules.push_back(std::move(rule));
    }
  }
  return OkStatus();
}

Status DisableRule(RuleSet* set, std::string_view id) {
  Rule* r = set->Find(id);
  if (r == nullptr) return UsageError("--disable {}: no such rule (see 'tfdiag rules list')", id);
  r->enabled = false;
  return OkStatus();
}

}  // namespace tfdiag
