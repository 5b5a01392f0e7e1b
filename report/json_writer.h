// Pieces shared by tfdiag's JSON documents (report/json_report.cc "tfdiag.analysis/1",
// report/scaling_report.cc "tfdiag.scaling/1"): a checked RapidJSON writer that writes null for
// non-finite numbers and valid UTF-8 for every string (core/json_utf8_writer.h), a keyed writer
// over it, and the findings[] entry both documents write with the same keys and order.
// Thread-safety: plain functions over the caller's writer.
#pragma once

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/finding.h"
#include "core/json_utf8_writer.h"
#include "core/status.h"
#include "core/utf8.h"

namespace tfdiag::json {

// A RapidJSON Writer or PrettyWriter (`Base`) whose every call's result is kept. RapidJSON's
// Writer::Double returns false and writes nothing for NaN and +-Inf (rapidjson/writer.h
// WriteDouble; kWriteNanAndInfFlag would write "NaN"/"Infinity", which are not JSON, RFC 8259
// section 6), leaving `"key": ,`: here a non-finite number is written as null, the one JSON value
// for "no number". ok() is false when any call failed or the document is not complete; the
// renderers then return an error instead of the text.
template <typename Base>
class CheckedWriter : public Base {
 public:
  using Base::Base;
  using Ch = typename Base::Ch;
  using SizeType = rapidjson::SizeType;
  bool Null() { return Keep(Base::Null()); }
  bool Bool(bool b) { return Keep(Base::Bool(b)); }
  bool Int(int i) { return Keep(Base::Int(i)); }
  bool Uint(unsigned u) { return Keep(Base::Uint(u)); }
  bool Int64(int64_t i) { return Keep(Base::Int64(i)); }
  bool Uint64(uint64_t u) { return Keep(Base::Uint64(u)); }
  bool Double(double d) { return Keep(std::isfinite(d) ? Base::Double(d) : Base::Null()); }
  bool String(const Ch* s, SizeType n, bool copy = false) { return Keep(Base::String(s, n, copy)); }
  bool String(const Ch* s) { return Keep(Base::String(s)); }
  bool Key(const Ch* s, SizeType n, bool copy = false) { return Keep(Base::Key(s, n, copy)); }
  bool Key(const Ch* s) { return Keep(Base::Key(s)); }
  bool StartObject() { return Keep(Base::StartObject()); }
  bool EndObject(SizeType n = 0) { return Keep(Base::EndObject(n)); }
  bool StartArray() { return Keep(Base::StartArray()); }
  bool EndArray(SizeType n = 0) { return Keep(Base::EndArray(n)); }
  // A value already written as JSON by another writer (the caller vouches for it).
  bool RawValue(const Ch* s, size_t n, rapidjson::Type t) { return Keep(Base::RawValue(s, n, t)); }
  // True when every call succeeded and the root value is complete.
  bool ok() const { return ok_ && Base::IsComplete(); }

 private:
  bool Keep(bool r) {
    ok_ = ok_ && r;
    return r;
  }
  bool ok_ = true;
};

// `doc` (valid UTF-8 JSON) with every bidirectional control (IsBidiControl, core/utf8.h:
// U+202A-U+202E, U+2066-U+2069, LRM, RLM, ALM) written as the JSON escape \uXXXX: every string
// value reads the same once parsed, but no raw control is left to reorder how a terminal, an
// editor or a code-scanning UI shows the file (CVE-2021-42574; issue 48). JSON holds such
// characters only inside strings, where \uXXXX is their exact equivalent.
inline std::string EscapeBidiInJson(std::string_view doc) {
  std::string out;
  size_t copied = 0;
  for (size_t i = 0; i < doc.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(doc[i]);
    if (c != 0xE2 && c != 0xD8) continue;  // the lead bytes of every bidi control
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(doc, i, &cp);
    if (n == 0 || !IsBidiControl(cp)) continue;
    if (out.empty()) out.reserve(doc.size() + 16);
    out.append(doc.substr(copied, i - copied));
    out += fmt::format("\\u{:04x}", cp);
    i += n - 1;
    copied = i + 1;
  }
  if (copied == 0) return std::string(doc);
  out.append(doc.substr(copied));
  return out;
}

// A document written by `write(w)` (a generic callable taking a CheckedWriter pointer), indented by
// two spaces when `pretty`, with a final newline. Errors: kInternal naming `schema` when the
// writer refused a call or the document is incomplete (never a half-written document).
template <typename F>
StatusOr<std::string> RenderDocument(bool pretty, std::string_view schema, F write) {
  rapidjson::StringBuffer buf;
  bool ok = false;
  if (pretty) {
    CheckedWriter<ValidUtf8Writer<rapidjson::PrettyWriter<rapidjson::StringBuffer>>> w(buf);
    w.SetIndent(' ', 2);
    write(&w);
    ok = w.ok();
  } else {
    CheckedWriter<ValidUtf8Writer<rapidjson::Writer<rapidjson::StringBuffer>>> w(buf);
    write(&w);
    ok = w.ok();
  }
  if (!ok)
    return Internal("the {} document could not be written: the JSON writer refused a value",
                    schema);
  return EscapeBidiInJson(std::string_view(buf.GetString(), buf.GetSize())) + "\n";
}

// Key/value helpers over a RapidJSON writer `W`.
template <typename W>
class Json {
 public:
  explicit Json(W* w) : w_(w) {}
  void Key(std::string_view k) { w_->Key(k.data(), static_cast<unsigned>(k.size())); }
  void Str(std::string_view k, std::string_view v) {
    Key(k);
    w_->String(v.data(), static_cast<unsigned>(v.size()));
  }
  void Int(std::string_view k, int64_t v) {
    Key(k);
    w_->Int64(v);
  }
  void Num(std::string_view k, double v) {
    Key(k);
    w_->Double(v);
  }
  // A figure that cannot be negative and may be unknown (< 0, or not a number): -1 when unknown,
  // the documents' one convention for unknown figures (docs/json.md).
  void NumOrUnknown(std::string_view k, double v) {
    Key(k);
    w_->Double(std::isfinite(v) && v >= 0 ? v : -1);
  }
  // The same for a count or duration written as an integer (rounded): -1 when unknown.
  void IntOrUnknown(std::string_view k, double v) {
    Key(k);
    w_->Int64(v >= 0 && v < 9.2e18 ? std::llround(v) : -1);
  }
  void Strings(std::string_view k, const std::vector<std::string>& v) {
    Key(k);
    w_->StartArray();
    for (const std::string& s : v) w_->String(s.data(), static_cast<unsigned>(s.size()));
    w_->EndArray();
  }
  W* w_;
};

// "evidence": [{label, value, unit}]. Durations are written in ns whatever unit the analyzer
// used ("us", "s" -> "ns"), so every time in a document has one unit.
template <typename W>
void WriteEvidence(Json<W>& j, const std::vector<Figure>& evidence) {
  j.Key("evidence");
  j.w_->StartArray();
  for (const Figure& fig : evidence) {
    double v = fig.value;
    std::string_view unit = fig.unit;
    if (unit == "us" && v >= 0) v *= 1e3, unit = "ns";
    if (unit == "s" && v >= 0) v *= 1e9, unit = "ns";
    j.w_->StartObject();
    j.Str("label", fig.label);
    j.Num("value", v);
    j.Str("unit", unit);
    j.w_->EndObject();
  }
  j.w_->EndArray();
}

// "waits": [{task, tensor, from, ambiguous, candidates, step_tail, wait_ns_per_step,
// input_ns_per_step, sent_offset_ns, waits, text}] (analyzers/step_graph.h), durations in whole
// ns; [] when there are none.
template <typename W>
void WriteWaits(Json<W>& j, const std::vector<WaitFor>& waits) {
  j.Key("waits");
  j.w_->StartArray();
  for (const WaitFor& x : waits) {
    j.w_->StartObject();
    j.Str("task", x.task);
    j.Str("tensor", x.tensor);
    j.Str("from", x.from);
    j.Key("ambiguous");
    j.w_->Bool(x.ambiguous);
    j.Int("candidates", x.candidates);
    j.Key("step_tail");
    j.w_->Bool(x.step_tail);
    j.IntOrUnknown("wait_ns_per_step", x.wait_ns);
    j.IntOrUnknown("input_ns_per_step", x.input_ns);
    j.IntOrUnknown("sync_ns_per_step", x.sync_ns);
    j.Int("sent_offset_ns", std::isfinite(x.sent_offset_ns) ? std::llround(x.sent_offset_ns) : 0);
    j.Int("waits", x.waits);
    j.Str("text", x.text);
    j.w_->EndObject();
  }
  j.w_->EndArray();
}

// One findings[] entry: rule, severity, subject_kind, subject, cause, task, pod, node, summary,
// evidence, ops, range_start_ns, range_end_ns, fix, references, waits, impact, and objects[]
// (every object the finding covers, with its own figures; one entry when it covers one). Every
// key is always there: "" for a text that is not known, [] for an empty list, -1 for an unknown
// figure; impact: predicted, withheld (null figures) or not modelled (-1, confidence "none").
template <typename W>
void WriteFinding(Json<W>& j, const Finding& f) {
  W* w = j.w_;
  w->StartObject();
  j.Str("rule", f.rule_id);
  j.Str("severity", SeverityName(f.severity));
  j.Str("subject_kind", f.subject_kind);
  j.Str("subject", f.subject);
  j.Str("cause", f.cause);  // what the finding's objects share ("" for a single object)
  j.Str("task", f.task);
  j.Str("pod", f.pod);
  j.Str("node", f.node);
  j.Str("summary", f.summary);
  WriteEvidence(j, f.evidence);
  j.Strings("ops", f.ops);
  j.Int("range_start_ns", f.range_start);
  j.Int("range_end_ns", f.range_end);
  j.Str("fix", f.fix);
  j.Strings("references", f.references);
  WriteWaits(j, f.waits);
  // "impact" (issues 29, 35, 48; docs/json.md): one shape, three states a script tells apart
  // by its figures alone:
  //   - predicted (method "replay"): every figure set, confidence high/medium/low;
  //   - withheld (a fix is modelled but the replay could not back it; "withheld" says why):
  //     step_ns_after_fix, saving_pct, low_ns and high_ns null, never a copy of step_ns;
  //   - nothing modelled: those figures -1, confidence "none".
  // step_ns is the workers' measured median step whenever it is known (-1 otherwise), and
  // baseline_miss_pct null when no replay of the capture ran.
  j.Key("impact");
  w->StartObject();
  const Impact& im = f.impact;
  const bool predicted = im.set && im.method == "replay" && im.withheld.empty();
  const bool withheld = im.set && !im.withheld.empty();
  auto figure = [&](std::string_view k, double v, bool integer) {
    j.Key(k);
    if (withheld) {
      w->Null();
    } else if (!predicted || !std::isfinite(v)) {
      integer ? w->Int64(-1) : w->Double(-1);
    } else {
      integer ? w->Int64(std::llround(v)) : w->Double(v);
    }
  };
  j.IntOrUnknown("step_ns", im.set && im.step_ns > 0 ? im.step_ns : -1);
  figure("step_ns_after_fix", im.step_ns_after_fix, true);
  figure("saving_pct", im.saving_pct, false);
  j.Str("method", predicted ? "replay" : "none");
  j.Str("confidence", predicted && !im.confidence.empty() ? im.confidence : "none");
  j.Str("why", im.set ? im.why : "no fix of this rule is modelled on these inputs");
  j.Key("trusted");
  w->Bool(predicted && im.trusted());
  j.Str("withheld", withheld ? im.withheld : "");
  j.Key("baseline_miss_pct");
  if (predicted || withheld) {
    w->Double(im.baseline_miss_pct);
  } else {
    w->Null();
  }
  figure("low_ns", im.high_ns > 0 ? im.low_ns : -1, true);
  figure("high_ns", im.high_ns > 0 ? im.high_ns : -1, true);
  w->EndObject();
  j.Key("objects");
  w->StartArray();
  for (const FindingObject& o : f.objects) {
    w->StartObject();
    j.Str("subject", o.subject);
    j.Str("task", o.task);
    j.Str("pod", o.pod);
    j.Str("node", o.node);
    j.Str("summary", o.summary);
    WriteEvidence(j, o.evidence);
    j.Strings("ops", o.ops);
    j.Int("range_start_ns", o.range_start);
    j.Int("range_end_ns", o.range_end);
    WriteWaits(j, o.waits);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

}  // namespace tfdiag::json
