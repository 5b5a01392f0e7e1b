#include "collectors/k8s/yaml_tree.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace tfdiag {

YamlNode::Style YamlStyleOf(yaml_scalar_style_t style) {
  switch (style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
      return YamlNode::Style::kSingleQuoted;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
      return YamlNode::Style::kDoubleQuoted;
    case YAML_LITERAL_SCALAR_STYLE:
      return YamlNode::Style::kLiteral;
    case YAML_FOLDED_SCALAR_STYLE:
      return YamlNode::Style::kFolded;
    default:
      return YamlNode::Style::kPlain;
  }
}

bool YamlNode::IsNull() const {
  if (!IsScalar() || style != Style::kPlain) return false;
  if (!tag.empty()) return tag == "tag:yaml.org,2002:null";
  return value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL";
}

bool YamlNode::IsInt() const {
  if (!IsScalar()) return false;
  if (!tag.empty()) return tag == "tag:yaml.org,2002:int";
  if (style != Style::kPlain || value.empty()) return false;
  size_t i = (value[0] == '+' || value[0] == '-') ? 1 : 0;
  if (i == value.size()) return false;
  for (; i < value.size(); ++i)
    if (value[i] < '0' || value[i] > '9') return false;
  return true;
}

const YamlNode* YamlNode::Find(std::string_view key) const {
  if (!IsMap()) return nullptr;
  for (size_t i = children.size(); i >= 2; i -= 2) {
    const YamlNode& k = *children[i - 2];
    if (k.IsScalar() && k.value == key) return children[i - 1].get();
  }
  return nullptr;
}

YamlNode* YamlNode::Find(std::string_view key) {
  return const_cast<YamlNode*>(static_cast<const YamlNode*>(this)->Find(key));
}

bool YamlEqual(const YamlNode& a, const YamlNode& b) {
  if (a.kind != b.kind || a.value != b.value || a.tag != b.tag) return false;
  if (a.IsScalar() && a.style != b.style) return false;
  if (a.children.size() != b.children.size()) return false;
  for (size_t i = 0; i < a.children.size(); ++i) {
    if (!YamlEqual(*a.children[i], *b.children[i])) return false;
  }
  return true;
}

YamlKeyIndex::YamlKeyIndex(const YamlNode& map) : map_(map) {
  constexpr size_t kScanUpTo = 16;  // keys: below, a scan is cheaper than a hash table
  if (!map.IsMap() || map.size() <= kScanUpTo) return;
  values_.reserve(map.size());
  for (size_t i = 0; i < map.size(); ++i) {
    if (map.Key(i).IsScalar()) values_[map.Key(i).value] = &map.Value(i);
  }
}

const YamlNode* YamlKeyIndex::Find(std::string_view key) const {
  if (values_.empty()) return map_.Find(key);
  auto it = values_.find(key);
  return it != values_.end() ? it->second : nullptr;
}

YamlNode& YamlNode::Child(std::string_view key) {
  YamlNode* v = Find(key);
  if (v == nullptr) {
    children.push_back(Scalar(std::string(key), true));
    children.push_back(Map());
    return *children.back();
  }
  if (!v->IsMap()) *v = std::move(*Map());
  return *v;
}

void YamlNode::Set(std::string_view key, const std::string& value, bool plain) {
  YamlNode* v = Find(key);
  if (v == nullptr) {
    children.push_back(Scalar(std::string(key), true));
    children.push_back(Scalar(value, plain));
  } else {
    *v = std::move(*Scalar(value, plain));
  }
}

bool YamlNode::Remove(std::string_view key) {
  for (size_t i = 0; i + 1 < children.size(); i += 2) {
    if (children[i]->IsScalar() && children[i]->value == key) {
      children.erase(children.begin() + static_cast<std::ptrdiff_t>(i),
                     children.begin() + static_cast<std::ptrdiff_t>(i) + 2);
      return true;
    }
  }
  return false;
}

YamlNode& YamlNode::Append(std::unique_ptr<YamlNode> item) {
  children.push_back(std::move(item));
  return *children.back();
}

std::unique_ptr<YamlNode> YamlNode::Clone() const {
  auto n = std::make_unique<YamlNode>();
  n->kind = kind;
  n->style = style;
  n->flow = flow;
  n->value = value;
  n->tag = tag;
  n->line = line;
  n->column = column;
  n->end_line = end_line;
  n->end_column = end_column;
  n->children.reserve(children.size());
  for (const auto& c : children) n->children.push_back(c->Clone());
  return n;
}

std::unique_ptr<YamlNode> YamlNode::Scalar(const std::string& value, bool plain) {
  auto n = std::make_unique<YamlNode>();
  n->value = value;
  n->style = plain ? Style::kPlain : Style::kDoubleQuoted;
  return n;
}
std::unique_ptr<YamlNode> YamlNode::Map() {
  auto n = std::make_unique<YamlNode>();
  n->kind = Kind::kMapping;
  return n;
}
std::unique_ptr<YamlNode> YamlNode::Seq() {
  auto n = std::make_unique<YamlNode>();
  n->kind = Kind::kSequence;
  return n;
}

// ---------------------------------------------------------------------------------------------

namespace {

// Frees an event on every path out of a scope.
struct EventGuard {
  yaml_event_t e;
  bool live = false;
  ~EventGuard() {
    if (live) yaml_event_delete(&e);
  }
};

std::string CStr(const yaml_char_t* s) { return s ? reinterpret_cast<const char*>(s) : ""; }

// What alias expansion may still copy: nodes in this document, bytes in this stream.
struct AliasBudget {
  size_t nodes;
  size_t* bytes;
};
enum class CopyResult { kOk, kTooManyNodes, kTooManyBytes };

// Copies `src` under `*budget`, charging each node before anything of it is allocated; stops at
// the first bound reached.
CopyResult CopyBounded(const YamlNode& src, AliasBudget* budget, std::unique_ptr<YamlNode>* out) {
  if (budget->nodes == 0) return CopyResult::kTooManyNodes;
  const size_t cost = sizeof(YamlNode) + src.value.size() + src.tag.size();
  if (*budget->bytes < cost) return CopyResult::kTooManyBytes;
  --budget->nodes;
  *budget->bytes -= cost;
  auto n = std::make_unique<YamlNode>();
  n->kind = src.kind;
  n->style = src.style;
  n->flow = src.flow;
  n->value = src.value;
  n->tag = src.tag;
  n->line = src.line;
  n->column = src.column;
  n->children.reserve(src.children.size());
  for (const auto& c : src.children) {
    n->children.emplace_back();
    const CopyResult r = CopyBounded(*c, budget, &n->children.back());
    if (r != CopyResult::kOk) return r;
  }
  *out = std::move(n);
  return CopyResult::kOk;
}

}  // namespace

YamlStream::YamlStream(std::string_view text, std::string file)
    : text_(text), file_(std::move(file)) {
  yaml_parser_initialize(&parser_);
  yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                               text.size());
}

YamlStream::~YamlStream() { yaml_parser_delete(&parser_); }

int YamlStream::line() const { return static_cast<int>(parser_.mark.line) + 1; }

yaml_mark_t YamlStream::MarkAt(size_t offset) const {
  offset = std::min(offset, text_.size());
  yaml_mark_t m{};
  m.index = offset;
  const std::string_view before = text_.substr(0, offset);
  m.line = static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t nl = before.rfind('\n');
  m.column = nl == std::string_view::npos ? offset : offset - nl - 1;
  return m;
}

Status YamlStream::Error(const std::string& what, const yaml_mark_t& mark) const {
  return InvalidInput("{}: line {}, column {}: {}", file_, mark.line + 1, mark.column + 1, what);
}

StatusOr<bool> YamlStream::Next(std::unique_ptr<YamlNode>* doc) {
  doc->reset();
  if (done_) return false;
  std::unique_ptr<YamlNode> root;
  std::vector<YamlNode*> stack;  // open mappings/sequences; children have stable addresses
  std::unordered_map<std::string, const YamlNode*> anchors;
  std::vector<std::pair<std::string, YamlNode*>> open_anchors;  // registered when closed
  AliasBudget alias_budget{kMaxAliasNodes, &alias_bytes_left_};
  bool in_document = false;
  for (;;) {
    EventGuard ev;
    if (!yaml_parser_parse(&parser_, &ev.e)) {
      done_ = true;
      std::string what = parser_.problem ? parser_.problem : "malformed YAML";
      if (parser_.context) what += std::string(" (") + parser_.context + ")";
      // libyaml reports "invalid leading UTF-8 octet" and the like at the offending byte; a
      // reader error has that byte in problem_offset only (its mark stays at line 1, column 1).
      if (parser_.error == YAML_READER_ERROR) return Error(what, MarkAt(parser_.problem_offset));
      return Error(what, parser_.problem_mark);
    }
    ev.live = true;
    const yaml_event_t& e = ev.e;
    const yaml_mark_t& at = e.start_mark;
    std::unique_ptr<YamlNode> node;
    std::string anchor;
    switch (e.type) {
      case YAML_STREAM_START_EVENT:
      case YAML_NO_EVENT:
        continue;
      case YAML_STREAM_END_EVENT:
        done_ = true;
        return false;
      case YAML_DOCUMENT_START_EVENT:
        in_document = true;
        continue;
      case YAML_DOCUMENT_END_EVENT:
        *doc = std::move(root);
        return in_document;
      case YAML_ALIAS_EVENT: {
        const std::string name = CStr(e.data.alias.anchor);
        auto it = anchors.find(name);
        if (it == anchors.end()) return Error("alias *" + name + " names no anchor before it", at);
        switch (CopyBounded(*it->second, &alias_budget, &node)) {
          case CopyResult::kOk:
            break;
          case CopyResult::kTooManyNodes:
            return Error(fmt::format("aliases expand to more than {} nodes in one document (a "
                                     "'billion laughs' document?); tfdiag stops there",
                                     kMaxAliasNodes),
                         at);
          case CopyResult::kTooManyBytes:
            return Error(fmt::format("alias *{} would expand the stream's aliases past {} bytes "
                                     "({} MiB, the cap on alias expansion); tfdiag stops there",
                                     name, kMaxAliasBytes, kMaxAliasBytes >> 20),
                         at);
        }
        break;
      }
      case YAML_SCALAR_EVENT: {
        node = std::make_unique<YamlNode>();
        node->value.assign(reinterpret_cast<const char*>(e.data.scalar.value),
                           e.data.scalar.length);
        node->style = YamlStyleOf(e.data.scalar.style);
        node->tag = CStr(e.data.scalar.tag);
        anchor = CStr(e.data.scalar.anchor);
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        if (static_cast<int>(stack.size()) >= kMaxDepth)
          return Error(fmt::format("nesting deeper than {} levels", kMaxDepth), at);
        node = std::make_unique<YamlNode>();
        const bool seq = e.type == YAML_SEQUENCE_START_EVENT;
        node->kind = seq ? YamlNode::Kind::kSequence : YamlNode::Kind::kMapping;
        node->flow = seq ? e.data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
                         : e.data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
        node->tag = CStr(seq ? e.data.sequence_start.tag : e.data.mapping_start.tag);
        anchor = CStr(seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor);
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT: {
        YamlNode* closed = stack.back();
        stack.pop_back();
        closed->end_line = static_cast<int>(e.end_mark.line) + 1;
        closed->end_column = static_cast<int>(e.end_mark.column) + 1;
        for (auto& [name, n] : open_anchors) {
          if (n == closed) {
            anchors[name] = n;
            n = nullptr;
          }
        }
        continue;
      }
    }
    node->line = static_cast<int>(at.line) + 1;
    node->column = static_cast<int>(at.column) + 1;
    if (e.type == YAML_SCALAR_EVENT) {
      node->end_line = static_cast<int>(e.end_mark.line) + 1;
      node->end_column = static_cast<int>(e.end_mark.column) + 1;
    }
    YamlNode* placed = node.get();
    if (stack.empty()) {
      root = std::move(node);
    } else {
      stack.back()->children.push_back(std::move(node));
    }
    if (e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT) {
      stack.push_back(placed);  // open until its END event (an alias's copy is complete)
      if (!anchor.empty()) open_anchors.emplace_back(anchor, placed);
    } else if (!anchor.empty()) {  // a scalar
      anchors[anchor] = placed;
    }
  }
}

// ---------------------------------------------------------------------------------------------

namespace {

int Append(void* data, unsigned char* buffer, size_t size) {
  static_cast<std::string*>(data)->append(reinterpret_cast<const char*>(buffer), size);
  return 1;
}

yaml_char_t* U(const std::string& s) {
  return reinterpret_cast<yaml_char_t*>(const_cast<char*>(s.c_str()));
}

}  // namespace

YamlWriter::YamlWriter() { std::memset(&emitter_, 0, sizeof emitter_); }
YamlWriter::~YamlWriter() = default;

Status YamlWriter::Event(yaml_event_t* e) {
  if (!yaml_emitter_emit(&emitter_, e)) {
    return Internal("YAML writer: {}", emitter_.problem ? emitter_.problem : "emitter error");
  }
  return OkStatus();
}

Status YamlWriter::Emit(const YamlNode& n, bool in_flow) {
  yaml_event_t e;
  yaml_char_t* tag = n.tag.empty() ? nullptr : U(n.tag);
  if (n.IsScalar()) {
    // An empty plain scalar (null) cannot be written plain inside [..] or {..} (an alias may put
    // one there): libyaml would write ! '' (a string). "~" is the same null.
    static const std::string kNull = "~";
    const bool empty_null =
        in_flow && n.style == YamlNode::Style::kPlain && tag == nullptr && n.value.empty();
    const std::string& value = empty_null ? kNull : n.value;
    yaml_scalar_style_t style = YAML_PLAIN_SCALAR_STYLE;
    switch (n.style) {
      case YamlNode::Style::kSingleQuoted:
        style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
        break;
      case YamlNode::Style::kDoubleQuoted:
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
        break;
      case YamlNode::Style::kLiteral:
        style = YAML_LITERAL_SCALAR_STYLE;
        break;
      case YamlNode::Style::kFolded:
        style = YAML_FOLDED_SCALAR_STYLE;
        break;
      default:
        break;
    }
    // Implicit when untagged: plain stays plain (resolved by type), quoted stays a string.
    const bool plain = n.style == YamlNode::Style::kPlain;
    yaml_scalar_event_initialize(&e, nullptr, tag, U(value), static_cast<int>(value.size()),
                                 tag == nullptr && plain, tag == nullptr && !plain, style);
    return Event(&e);
  }
  if (n.IsSeq()) {
    yaml_sequence_start_event_initialize(
        &e, nullptr, tag, tag == nullptr,
        n.flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE);
  } else {
    yaml_mapping_start_event_initialize(
        &e, nullptr, tag, tag == nullptr,
        n.flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE);
  }
  TFDIAG_RETURN_IF_ERROR(Event(&e));
  for (const auto& c : n.children) TFDIAG_RETURN_IF_ERROR(Emit(*c, in_flow || n.flow));
  if (n.IsSeq()) {
    yaml_sequence_end_event_initialize(&e);
  } else {
    yaml_mapping_end_event_initialize(&e);
  }
  return Event(&e);
}

Status YamlWriter::Document(const YamlNode* doc) {
  if (doc == nullptr) return OkStatus();
  std::string text;
  yaml_emitter_initialize(&emitter_);
  yaml_emitter_set_output(&emitter_, Append, &text);
  yaml_emitter_set_indent(&emitter_, 2);
  yaml_emitter_set_width(&emitter_, -1);
  yaml_emitter_set_unicode(&emitter_, 1);
  yaml_event_t e;
  Status s;
  yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
  s = Event(&e);
  if (s.ok()) {
    yaml_document_start_event_initialize(&e, nullptr, nullptr, nullptr, 1);
    s = Event(&e);
  }
  if (s.ok()) s = Emit(*doc, false);
  if (s.ok()) {
    yaml_document_end_event_initialize(&e, 1);
    s = Event(&e);
  }
  if (s.ok()) {
    yaml_stream_end_event_initialize(&e);
    s = Event(&e);
  }
  yaml_emitter_delete(&emitter_);
  std::memset(&emitter_, 0, sizeof emitter_);
  TFDIAG_RETURN_IF_ERROR(s);
  if (started_) out_ += "---\n";
  started_ = true;
  out_ += text;
  return OkStatus();
}

StatusOr<std::string> YamlWriter::Finish() { return std::move(out_); }

}  // namespace tfdiag
