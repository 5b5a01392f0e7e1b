#include "actions/yaml_edit.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace tfdiag {

namespace {

// A value YAML 1.1 reads as something other than a string when plain (a number, a boolean, a
// null), as sigs.k8s.io/yaml does.
bool ReadsAsNonString(const std::string& s) {
  static const char* kWords[] = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"};
  std::string l;
  for (char c : s) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* w : kWords) {
    if (l == w) return true;
  }
  if (s.empty()) return true;
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  bool digit = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '-' && c != '+' && c != '_') {
      return false;
    }
  }
  return digit;
}

// Letters, digits and ._/- not at the start: plain in block and flow context alike.
bool PlainSafe(const std::string& s) {
  if (s.empty() || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '/' &&
        c != '-')
      return false;
  }
  return !ReadsAsNonString(s);
}

}  // namespace

void AppendDoubleQuoted(const std::string& s, std::string* o) {
  *o += '"';
  size_t run = 0;  // start of the pending run of characters that need no escape
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    o->append(s, run, i - run);
    run = i + 1;
    if (c == '"' || c == '\\') {
      *o += '\\';
      *o += static_cast<char>(c);
    } else if (c == '\n') {
      *o += "\\n";
    } else if (c == '\t') {
      *o += "\\t";
    } else {
      *o += fmt::format("\\u{:04x}", c);
    }
  }
  o->append(s, run, s.size() - run);
  *o += '"';
}

std::string DoubleQuoted(const std::string& s) {
  std::string o;
  AppendDoubleQuoted(s, &o);
  return o;
}

YamlSourceEditor::YamlSourceEditor(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n')))
      line_starts_.push_back(i + 1);
  }
  nl_ = text.find("\r\n") != std::string_view::npos ? "\r\n" : "\n";
  const size_t first = text.find_first_not_of(" \t\r\n");
  json_ = first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

size_t YamlSourceEditor::LineStart(int line) const {
  if (line < 1) return std::string_view::npos;
  return static_cast<size_t>(line) <= line_starts_.size() ? line_starts_[line - 1] : text_.size();
}

size_t YamlSourceEditor::TextOffset(int line, int column) const {
  if (line < 1 || column < 1 || static_cast<size_t>(line) > line_starts_.size())
    return std::string_view::npos;
  size_t at = line_starts_[line - 1];
  for (int c = 1; c < column; ++c) {  // one character: a UTF-8 lead byte and its continuations
    if (at >= text_.size()) return std::string_view::npos;
    ++at;
    while (at < text_.size() && (static_cast<unsigned char>(text_[at]) & 0xC0) == 0x80) ++at;
  }
  return at;
}

int YamlSourceEditor::LastLine(const YamlNode& n) const {
  if (n.line == 0) return -1;
  if (n.IsScalar()) {
    if (n.end_line == 0) return -1;
    const bool block = n.style == YamlNode::Style::kLiteral || n.style == YamlNode::Style::kFolded;
    // A block scalar's end mark is past its last line break; an empty plain scalar may end at
    // the next token.
    if (block && n.end_column == 1) return std::max(n.line, n.end_line - 1);
    if (n.value.empty() && n.style == YamlNode::Style::kPlain) return n.line;
    return n.end_line;
  }
  if (n.flow || n.children.empty()) return n.end_line > 0 ? n.end_line : -1;
  int last = n.line;
  for (const auto& c : n.children) {
    const int l = LastLine(*c);
    if (l < 0) return -1;
    last = std::max(last, l);
  }
  return last;
}

bool YamlSourceEditor::FirstOnLine(const YamlNode& n) const {
  const size_t at = TextOffset(n.line, n.column), start = LineStart(n.line);
  if (at == std::string_view::npos) return false;
  for (size_t i = start; i < at; ++i) {
    if (text_[i] != ' ') return false;
  }
  return true;
}

std::string YamlSourceEditor::Source(const YamlNode& n) const {
  if (n.line == 0 || n.end_line == 0) return "";
  const size_t a = TextOffset(n.line, n.column), b = TextOffset(n.end_line, n.end_column);
  if (a == std::string_view::npos || b == std::string_view::npos || b < a) return "";
  return std::string(text_.substr(a, b - a));
}

std::string YamlSourceEditor::Scalar(const YamlNode* old, const YamlNode& f, bool in_flow) const {
  if (json_) {  // numbers, booleans and null as they are; everything else a JSON string
    return f.style == YamlNode::Style::kPlain && f.tag.empty() && ReadsAsNonString(f.value) &&
                   !f.value.empty()
               ? f.value
               : DoubleQuoted(f.value);
  }
  YamlNode::Style style = f.style;
  if (old != nullptr && old->IsScalar()) {
    // Quoted stays quoted; plain stays plain while the new value still reads as a string.
    if (old->style == YamlNode::Style::kSingleQuoted ||
        old->style == YamlNode::Style::kDoubleQuoted) {
      style = old->style;
    } else if (old->style == YamlNode::Style::kPlain && !ReadsAsNonString(old->value) &&
               PlainSafe(f.value)) {
      style = YamlNode::Style::kPlain;
    }
  }
  if (style == YamlNode::Style::kPlain && !f.tag.empty()) style = YamlNode::Style::kDoubleQuoted;
  switch (style) {
    case YamlNode::Style::kPlain:
      // The fixer writes plain only what is safe; anything else, or in a flow, quoted.
      if (PlainSafe(f.value) ||
          (!in_flow && !f.value.empty() &&
           f.value.find_first_of(":#{}[],&*!|>'\"%@`\n") == std::string::npos &&
           f.value[0] != '-' && f.value[0] != ' ' && f.value.back() != ' '))
        return f.value;
      return DoubleQuoted(f.value);
    case YamlNode::Style::kSingleQuoted: {
      if (f.value.find_first_of("\n\r") != std::string::npos) return DoubleQuoted(f.value);
      std::string o = "'";
      for (char c : f.value) o += c == '\'' ? std::string("''") : std::string(1, c);
      return o + "'";
    }
    default:
      return DoubleQuoted(f.value);
  }
}

std::string YamlSourceEditor::Flow(const YamlNode& f, const YamlNode* ref) const {
  if (ref != nullptr && YamlEqual(*ref, f)) {
    std::string s = Source(*ref);
    if (!s.empty() && s.find_first_of("\r\n") == std::string::npos) return s;
  }
  if (f.IsScalar()) return Scalar(ref, f, true);
  const bool quote_keys = json_ || (ref != nullptr && ref->IsMap() && ref->size() > 0 &&
                                    ref->Key(0).style == YamlNode::Style::kDoubleQuoted);
  std::string o = f.IsMap() ? "{" : "[";
  std::optional<YamlKeyIndex> ref_index;
  const YamlKeyIndex* ref_keys = nullptr;
  if (f.IsMap() && ref != nullptr) ref_keys = &ref_index.emplace(*ref);
  for (size_t i = 0; i < f.size(); ++i) {
    if (i > 0) o += ", ";
    if (f.IsSeq()) {
      const YamlNode* r =
          ref != nullptr && ref->IsSeq() && i < ref->size() ? &ref->Item(i) : nullptr;
      o += Flow(f.Item(i), r);
      continue;
    }
    const YamlNode* r = ref_keys != nullptr ? ref_keys->Find(f.Key(i).value) : nullptr;
    o += quote_keys ? DoubleQuoted(f.Key(i).value) : Scalar(nullptr, f.Key(i), true);
    o += ": " + Flow(f.Value(i), r);
  }
  return o + (f.IsMap() ? "}" : "]");
}

std::string YamlSourceEditor::BlockEntry(const YamlNode& key, const YamlNode& value,
                                         int indent) const {
  const std::string pad(static_cast<size_t>(indent), ' ');
  std::string o = pad + Scalar(nullptr, key, false) + ":";
  if (value.IsScalar()) return o + " " + Scalar(nullptr, value, false) + nl_;
  if (value.flow || value.size() == 0) return o + " " + Flow(value, nullptr) + nl_;
  o += nl_;
  if (value.IsMap()) {
    for (size_t i = 0; i < value.size(); ++i)
      o += BlockEntry(value.Key(i), value.Value(i), indent + 2);
  } else {
    for (size_t i = 0; i < value.size(); ++i) o += BlockItem(value.Item(i), indent);
  }
  return o;
}

std::string YamlSourceEditor::BlockItem(const YamlNode& item, int indent) const {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (!item.IsMap() || item.flow || item.size() == 0) {
    return pad + "- " + (item.IsScalar() ? Scalar(nullptr, item, false) : Flow(item, nullptr)) +
           nl_;
  }
  std::string body;
  for (size_t i = 0; i < item.size(); ++i)
    body += BlockEntry(item.Key(i), item.Value(i), indent + 2);
  return pad + "- " + body.substr(static_cast<size_t>(indent) + 2);
}

void YamlSourceEditor::Insert(size_t at, std::string text) {
  // Past the end of a text without a final line break: start a line first.
  if (at == text_.size() && !text_.empty() && text_.back() != '\n' && text_.back() != '\r')
    text = nl_ + text;
  edits_.push_back({at, at, std::move(text)});
}

bool YamlSourceEditor::RemoveEntry(const YamlNode& key, const YamlNode& value) {
  const int last = LastLine(value);
  if (last < 0 || !FirstOnLine(key)) return false;
  edits_.push_back({LineStart(key.line), LineStart(last + 1), ""});
  return true;
}

bool YamlSourceEditor::ReplaceEntry(const YamlNode& key, const YamlNode& old_value,
                                    const YamlNode& value) {
  const int last = LastLine(old_value);
  if (last < 0 || !FirstOnLine(key)) return false;
  edits_.push_back(
      {LineStart(key.line), LineStart(last + 1), BlockEntry(key, value, key.column - 1)});
  if (LineStart(last + 1) == text_.size() && !text_.empty() && text_.back() != '\n')
    edits_.back().text.resize(edits_.back().text.size() - nl_.size());
  return true;
}

bool YamlSourceEditor::Diff(const YamlNode& original, const YamlNode& fixed) {
  return Node(original, fixed, false);
}

bool YamlSourceEditor::Node(const YamlNode& o, const YamlNode& f, bool in_flow) {
  if (YamlEqual(o, f)) return true;
  if (o.line == 0) return false;  // an alias copy: no text of its own
  if (o.kind == f.kind && o.IsMap()) return Map(o, f);
  if (o.kind == f.kind && o.IsSeq()) return Seq(o, f);
  // A scalar, or a collection turned into something else: in place when it has a span and the
  // new node fits where it was (a scalar or a flow collection).
  const bool inline_new = f.IsScalar() || f.flow || f.size() == 0 || in_flow;
  if (!inline_new || (!o.IsScalar() && !o.flow) || o.end_line == 0) return false;
  const size_t a = TextOffset(o.line, o.column), b = TextOffset(o.end_line, o.end_column);
  if (a == std::string_view::npos || b == std::string_view::npos || b < a) return false;
  if (o.IsScalar() && o.value.empty() && o.style == YamlNode::Style::kPlain) return false;
  edits_.push_back({a, b, f.IsScalar() ? Scalar(&o, f, in_flow) : Flow(f, nullptr)});
  return true;
}

bool YamlSourceEditor::Map(const YamlNode& o, const YamlNode& f) {
  bool same_keys = o.size() == f.size();
  for (size_t i = 0; same_keys && i < o.size(); ++i) same_keys = o.Key(i).value == f.Key(i).value;
  if (o.flow) {
    if (same_keys) {
      bool ok = true;
      for (size_t i = 0; ok && i < o.size(); ++i) ok = Node(o.Value(i), f.Value(i), true);
      if (ok) return true;
    }
    if (o.end_line == 0) return false;
    const size_t a = TextOffset(o.line, o.column), b = TextOffset(o.end_line, o.end_column);
    if (a == std::string_view::npos || b == std::string_view::npos || b < a) return false;
    edits_.push_back({a, b, Flow(f, &o)});
    return true;
  }
  const YamlKeyIndex o_keys(o), f_keys(f);  // lookups in O(1): linear in the keys
  for (size_t i = 0; i < o.size(); ++i) {
    const YamlNode* fv = f_keys.Find(o.Key(i).value);
    if (fv == nullptr) {
      if (!RemoveEntry(o.Key(i), o.Value(i))) return false;
    } else if (!Node(o.Value(i), *fv, false)) {
      if (!ReplaceEntry(o.Key(i), o.Value(i), *fv)) return false;
    }
  }
  std::string added;
  for (size_t i = 0; i < f.size(); ++i) {
    if (o_keys.Find(f.Key(i).value) == nullptr)
      added += BlockEntry(f.Key(i), f.Value(i), o.column - 1);
  }
  if (!added.empty()) {
    const int last = LastLine(o);
    if (last < 0) return false;
    Insert(LineStart(last + 1), std::move(added));
  }
  return true;
}

bool YamlSourceEditor::Seq(const YamlNode& o, const YamlNode& f) {
  if (f.size() < o.size()) return false;
  bool ok = true;
  for (size_t i = 0; ok && i < o.size(); ++i) ok = Node(o.Item(i), f.Item(i), o.flow);
  if (ok && f.size() == o.size()) return true;
  if (o.flow || !ok) {
    if (!o.flow || o.end_line == 0) return false;
    const size_t a = TextOffset(o.line, o.column), b = TextOffset(o.end_line, o.end_column);
    if (a == std::string_view::npos || b == std::string_view::npos || b < a) return false;
    edits_.push_back({a, b, Flow(f, &o)});
    return true;
  }
  std::string added;
  for (size_t i = o.size(); i < f.size(); ++i) added += BlockItem(f.Item(i), o.column - 1);
  const int last = LastLine(o);
  if (last < 0) return false;
  Insert(LineStart(last + 1), std::move(added));
  return true;
}

bool YamlSourceEditor::Apply(std::string* out) const {
  std::vector<const Edit*> order;
  for (const Edit& e : edits_) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(),
                   [](const Edit* a, const Edit* b) { return a->begin < b->begin; });
  std::string s;
  size_t at = 0;
  for (const Edit* e : order) {
    if (e->begin < at || e->end < e->begin || e->end > text_.size()) return false;
    s.append(text_.substr(at, e->begin - at));
    s += e->text;
    at = e->end;
  }
  s.append(text_.substr(at));
  *out = std::move(s);
  return true;
}

}  // namespace tfdiag
