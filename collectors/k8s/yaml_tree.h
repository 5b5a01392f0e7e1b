// A small YAML document tree on libyaml (Debian libyaml-0-2, the parser under PyYAML, fuzzed in
// OSS-Fuzz): reading manifests for the k8s reader and `tfdiag fix`, and writing them back.
//
// Bounds, so that hostile input cannot hang or exhaust memory (each is an error naming the line):
//   - aliases: expanding `*name` copies the anchored node; all copies in one document together
//     may create at most kMaxAliasNodes nodes ("billion laughs" documents stop there), and all
//     copies in the stream at most kMaxAliasBytes bytes (one large scalar aliased many times);
//   - nesting: at most kMaxDepth levels of mappings/sequences;
//   - parsing is one pass over libyaml events and each event makes at most one node, so time and
//     memory are linear in the document's size; YamlStream holds one document at a time.
// CR, LF and CRLF line breaks are all accepted (YAML 1.1 b-break); a UTF-8/16 BOM is honoured.
// Comments are not kept (libyaml reports none). Thread-safety: one YamlStream per thread.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <yaml.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace tfdiag {

// Copies made by alias expansion, per document. go-yaml (kubectl's parser) bounds aliases too.
inline constexpr size_t kMaxAliasNodes = 100000;
// Bytes that alias expansion may copy in one stream (all documents together): each copied node
// counts sizeof(YamlNode) plus its scalar text and tag, so that both many small nodes and one
// large scalar aliased many times are bounded, and what `fix` writes back and `analyze` holds
// stays within the input's size plus this. 16 MiB is ten Kubernetes objects at etcd's default
// request limit of 1.5 MiB (https://etcd.io/docs/v3.4/dev-guide/limit/), which the API server
// cannot store anyway; go-yaml v3 (decode.go, allowedAliasRatio; CVE-2019-11254) bounds
// alias-driven decoding the same way.
inline constexpr size_t kMaxAliasBytes = size_t{16} << 20;
// Mapping/sequence nesting depth per document.
inline constexpr int kMaxDepth = 256;

struct YamlNode {
  enum class Kind { kScalar, kSequence, kMapping };
  enum class Style { kPlain, kSingleQuoted, kDoubleQuoted, kLiteral, kFolded };
  Kind kind = Kind::kScalar;
  Style style = Style::kPlain;  // scalars
  bool flow = false;            // mappings and sequences written as {..} / [..]
  std::string value;            // scalar text
  std::string tag;              // explicit tag ("!!str", "tag:yaml.org,2002:int"), "" when none
  int line = 0, column = 0;     // 1-based start in the file
  // 1-based end in the file (just past the node: libyaml's end mark), for scalars and
  // mappings/sequences; 0 for copies made by alias expansion. Block collections end where the
  // next token starts (after trailing blank lines and comments), so editors use their last child.
  int end_line = 0, end_column = 0;
  // Sequence items; for mappings keys and values alternate (key 0, value 0, key 1, ...).
  std::vector<std::unique_ptr<YamlNode>> children;

  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsMap() const { return kind == Kind::kMapping; }
  bool IsSeq() const { return kind == Kind::kSequence; }
  // A plain empty/~/null/Null/NULL scalar (YAML 1.1 null) without a tag.
  bool IsNull() const;
  // A plain, untagged scalar that YAML 1.1 resolves to an integer ("3", "-5", "+7"), or a
  // scalar tagged !!int.
  bool IsInt() const;
  // Entries in a mapping, items in a sequence; 0 for scalars.
  size_t size() const { return IsMap() ? children.size() / 2 : IsSeq() ? children.size() : 0; }
  // The value under a scalar key in a mapping (the last one when repeated); nullptr if absent
  // or not a mapping.
  const YamlNode* Find(std::string_view key) const;
  YamlNode* Find(std::string_view key);
  // Mapping i-th key / value, sequence i-th item.
  const YamlNode& Key(size_t i) const { return *children[2 * i]; }
  const YamlNode& Value(size_t i) const { return *children[2 * i + 1]; }
  YamlNode& Value(size_t i) { return *children[2 * i + 1]; }
  const YamlNode& Item(size_t i) const { return *children[i]; }
  YamlNode& Item(size_t i) { return *children[i]; }

  // Editing (tfdiag fix). The value under `key`, made an empty mapping first when it is absent
  // or not a mapping (this node must be a mapping).
  YamlNode& Child(std::string_view key);
  // Sets `key` to a scalar (double-quoted unless `plain`); adds the key at the end when absent.
  void Set(std::string_view key, const std::string& value, bool plain = false);
  // Removes `key` from a mapping; false when absent.
  bool Remove(std::string_view key);
  // Appends a sequence item (this node must be a sequence) and returns it.
  YamlNode& Append(std::unique_ptr<YamlNode> item);
  std::unique_ptr<YamlNode> Clone() const;
  static std::unique_ptr<YamlNode> Scalar(const std::string& value, bool plain = false);
  static std::unique_ptr<YamlNode> Map();
  static std::unique_ptr<YamlNode> Seq();
};

// The YamlNode style of a libyaml scalar event's style (any or plain: kPlain). Pure.
YamlNode::Style YamlStyleOf(yaml_scalar_style_t style);

// Same kinds, values, tags, scalar styles and children in order (so the same JSON); positions
// and flow style are not compared. Linear in the nodes, one sequential pass.
bool YamlEqual(const YamlNode& a, const YamlNode& b);

// The values of a mapping's scalar keys, looked up in O(1) where YamlNode::Find scans the
// mapping: comparing two mappings key by key (tfdiag fix's edits and merge patches) stays linear
// in their keys (it took minutes for 200,000 keys). Built once, in O(keys); the last value wins
// when a key repeats, as Find; nullptr when absent or `map` is not a mapping. Holds pointers into
// `map`, valid while `map` lives unchanged.
class YamlKeyIndex {
 public:
  explicit YamlKeyIndex(const YamlNode& map);
  const YamlNode* Find(std::string_view key) const;

 private:
  const YamlNode& map_;
  absl::flat_hash_map<std::string_view, const YamlNode*> values_;  // empty: small, map_.Find
};

// The documents of a YAML stream, one at a time.
class YamlStream {
 public:
  // `text` must outlive the stream; `file` names the input in errors.
  YamlStream(std::string_view text, std::string file);
  ~YamlStream();
  YamlStream(const YamlStream&) = delete;
  YamlStream& operator=(const YamlStream&) = delete;

  // The next document into `*doc` (nullptr for an empty document); false at the end of the
  // stream. Errors: kInvalidInput "<file>: line L, column C: <what> (<context>)" for malformed
  // YAML, an undefined alias, or a bound above exceeded (the alias that crossed it; the message
  // names the bound).
  StatusOr<bool> Next(std::unique_ptr<YamlNode>* doc);
  int line() const;  // 1-based line the parser has reached

 private:
  Status Error(const std::string& what, const yaml_mark_t& mark) const;
  // The line and column (0-based, lines by '\n') of byte `offset` of the text.
  yaml_mark_t MarkAt(size_t offset) const;
  yaml_parser_t parser_;
  std::string_view text_;
  std::string file_;
  bool done_ = false;
  size_t alias_bytes_left_ = kMaxAliasBytes;  // over the whole stream
};

// Writes documents as block YAML (2-space indent, unlimited width), keeping each scalar's
// quoting style and each collection's flow style; "---" between documents.
class YamlWriter {
 public:
  YamlWriter();
  ~YamlWriter();
  YamlWriter(const YamlWriter&) = delete;
  YamlWriter& operator=(const YamlWriter&) = delete;
  // Appends one document (nullptr: an empty document is skipped). Errors: kInternal from the
  // libyaml emitter (text it cannot write).
  Status Document(const YamlNode* doc);
  // Ends the stream and returns the text.
  StatusOr<std::string> Finish();

 private:
  Status Emit(const YamlNode& n, bool in_flow);  // in_flow: inside a [..] or {..}
  Status Event(yaml_event_t* e);
  yaml_emitter_t emitter_;
  std::string out_;
  bool started_ = false;
};

}  // namespace tfdiag
