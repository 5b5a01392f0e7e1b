#include "actions/yaml_match.h"

#include <yaml.h>

#include <utility>

namespace tfdiag {

namespace {

// libyaml's parser and its current event, released on every path.
class Events {
 public:
  explicit Events(std::string_view text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~Events() {
    Drop();
    yaml_parser_delete(&parser_);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;

  // The next event; nullptr on a parse error.
  const yaml_event_t* Next() {
    Drop();
    if (!yaml_parser_parse(&parser_, &event_)) return nullptr;
    live_ = true;
    return &event_;
  }

 private:
  void Drop() {
    if (live_) yaml_event_delete(&event_);
    live_ = false;
  }
  yaml_parser_t parser_;
  yaml_event_t event_;
  bool live_ = false;
};

std::string_view View(const yaml_char_t* s) {
  return s != nullptr ? std::string_view(reinterpret_cast<const char*>(s)) : std::string_view();
}

}  // namespace

YamlMatch MatchDocuments(std::string_view text, const std::vector<std::unique_ptr<YamlNode>>& docs,
                         const std::function<bool(const YamlNode&, const YamlNode&)>& same_scalar) {
  Events events(text);
  size_t doc = 0;
  // Open collections of the expected document and how many of their children were seen.
  std::vector<std::pair<const YamlNode*, size_t>> open;
  bool in_document = false, root_seen = false;
  for (;;) {
    const yaml_event_t* e = events.Next();
    if (e == nullptr) return YamlMatch::kDifferent;
    // The expected node this event opens or is: the next child of the innermost open
    // collection, or the document's root.
    auto expected = [&]() -> const YamlNode* {
      if (open.empty()) {
        if (root_seen || doc >= docs.size()) return nullptr;
        root_seen = true;
        return docs[doc].get();
      }
      auto& [node, seen] = open.back();
      return seen < node->children.size() ? node->children[seen++].get() : nullptr;
    };
    switch (e->type) {
      case YAML_NO_EVENT:
      case YAML_STREAM_START_EVENT:
        continue;
      case YAML_STREAM_END_EVENT:
        return doc == docs.size() ? YamlMatch::kSame : YamlMatch::kDifferent;
      case YAML_DOCUMENT_START_EVENT:
        if (doc >= docs.size()) return YamlMatch::kDifferent;
        in_document = true;
        root_seen = false;
        continue;
      case YAML_DOCUMENT_END_EVENT:
        // An empty document has no root event; its expected tree is nullptr.
        if (!in_document || (!root_seen && docs[doc] != nullptr)) return YamlMatch::kDifferent;
        in_document = false;
        ++doc;
        continue;
      case YAML_ALIAS_EVENT:
        return YamlMatch::kUnknown;
      case YAML_SCALAR_EVENT: {
        if (e->data.scalar.anchor != nullptr) return YamlMatch::kUnknown;
        const YamlNode* want = expected();
        if (want == nullptr || !want->IsScalar()) return YamlMatch::kDifferent;
        const std::string_view value(reinterpret_cast<const char*>(e->data.scalar.value),
                                     e->data.scalar.length);
        const YamlNode::Style style = YamlStyleOf(e->data.scalar.style);
        const std::string_view tag = View(e->data.scalar.tag);
        if (value == want->value && style == want->style && tag == want->tag) continue;
        YamlNode got;
        got.value.assign(value);
        got.style = style;
        got.tag.assign(tag);
        if (!same_scalar(got, *want)) return YamlMatch::kDifferent;
        continue;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        const bool seq = e->type == YAML_SEQUENCE_START_EVENT;
        if ((seq ? e->data.sequence_start.anchor : e->data.mapping_start.anchor) != nullptr)
          return YamlMatch::kUnknown;
        const YamlNode* want = expected();
        if (want == nullptr || (seq ? !want->IsSeq() : !want->IsMap()))
          return YamlMatch::kDifferent;
        open.emplace_back(want, 0);
        continue;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        if (open.empty() || open.back().second != open.back().first->children.size())
          return YamlMatch::kDifferent;
        open.pop_back();
        continue;
    }
  }
}

}  // namespace tfdiag
