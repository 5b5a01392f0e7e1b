// Editing YAML source text where a parsed tree changed, so that `diff` shows only the change
// (tfdiag fix). Positions come from the parser's marks (YamlNode line/column and
// end_line/end_column, collections/yaml_tree.h); everything between the changed nodes (comments,
// quoting, indentation, document markers, blank lines) is left as it was.
//
// What it places: a scalar's new value (in the old quoting style when that still reads as the
// same type; a plain scalar becomes double-quoted when the new value would read as a number or a
// boolean), new entries at the end of a block mapping (at its keys' indentation), new items at
// the end of a block sequence, removed entries of a block mapping (their whole lines), and a flow
// collection ({..}, [..]) with a changed key set rewritten in flow style in place (in a JSON
// file with JSON's quoting, so JSON stays JSON). Anything else
// (an alias copy, a removed sequence item, an entry sharing its line with another) is refused:
// Diff returns false and the caller re-emits the document instead.
// Thread-safety: one editor per thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collectors/k8s/yaml_tree.h"

namespace tfdiag {

// `s` as a JSON string ("..." with \" \\ \n \t \uXXXX escapes), which is also a YAML
// double-quoted scalar of the same value.
std::string DoubleQuoted(const std::string& s);
// DoubleQuoted(s) appended to *o (also a JSON string: the same escapes).
void AppendDoubleQuoted(const std::string& s, std::string* o);

class YamlSourceEditor {
 public:
  // `text` must outlive the editor and be the text the nodes given to Diff were parsed from.
  explicit YamlSourceEditor(std::string_view text);

  // Records the edits that turn `original` (a document parsed from the text, positions intact)
  // into `fixed` (the same document changed in memory). False when a difference has no place in
  // the text (see above); edits recorded before stay recorded.
  bool Diff(const YamlNode& original, const YamlNode& fixed);

  // The text with every recorded edit; false (and `out` untouched) when two edits overlap.
  bool Apply(std::string* out) const;

  // Edits recorded so far.
  size_t edits() const { return edits_.size(); }

 private:
  struct Edit {
    size_t begin, end;  // byte offsets into the text, [begin, end)
    std::string text;   // the replacement
  };
  bool Node(const YamlNode& o, const YamlNode& f, bool in_flow);
  bool Map(const YamlNode& o, const YamlNode& f);
  bool Seq(const YamlNode& o, const YamlNode& f);
  bool ReplaceEntry(const YamlNode& key, const YamlNode& old_value, const YamlNode& value);
  bool RemoveEntry(const YamlNode& key, const YamlNode& value);
  // Byte offset of a 1-based line and column (columns count characters); npos when outside.
  size_t TextOffset(int line, int column) const;
  size_t LineStart(int line) const;  // offset of line `line` (1-based), text size past the end
  // Last line a node's text occupies (1-based); -1 when unknown (an alias copy).
  int LastLine(const YamlNode& n) const;
  bool FirstOnLine(const YamlNode& n) const;    // only blanks before it on its line
  std::string Source(const YamlNode& n) const;  // the node's own text, "" when unknown
  std::string Scalar(const YamlNode* old, const YamlNode& f, bool in_flow) const;
  std::string Flow(const YamlNode& f, const YamlNode* ref) const;
  std::string BlockEntry(const YamlNode& key, const YamlNode& value, int indent) const;
  std::string BlockItem(const YamlNode& item, int indent) const;
  void Insert(size_t at, std::string text);

  std::string_view text_;
  std::vector<size_t> line_starts_;
  std::string nl_;     // the file's line break ("\r\n" when it uses CRLF)
  bool json_ = false;  // the text is JSON: new keys and strings are written double-quoted
  std::vector<Edit> edits_;
};

}  // namespace tfdiag
