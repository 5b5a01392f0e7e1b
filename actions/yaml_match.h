// Whether a YAML text parses to given documents, checked on libyaml's event stream without
// building a tree: `tfdiag fix` checks the text it edited in place this way (a tree of a large
// manifest costs as much to build as the parse itself).

#ifndef TFDIAG_ACTIONS_YAML_MATCH_H_
#define TFDIAG_ACTIONS_YAML_MATCH_H_

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "collectors/k8s/yaml_tree.h"

namespace tfdiag {

// What MatchDocuments found.
enum class YamlMatch {
  kSame,       // the text's documents are `docs`, in order
  kDifferent,  // they differ, or the text is not valid YAML
  kUnknown,    // the text has anchors or aliases: compare trees instead (YamlStream)
};

// Compares the documents of `text` with `docs` (nullptr for an empty document), in order. Kinds,
// children in order and scalars are compared; collection tags, flow style and positions are not.
// Two scalars whose value, quoting style and tag are equal are the same; otherwise
// `same_scalar(from_text, expected)` decides (e.g. by their JSON). Stops at the first difference.
// Linear in the text; memory bounded by the nesting depth.
YamlMatch MatchDocuments(std::string_view text, const std::vector<std::unique_ptr<YamlNode>>& docs,
                         const std::function<bool(const YamlNode&, const YamlNode&)>& same_scalar);

}  // namespace tfdiag

#endif  // TFDIAG_ACTIONS_YAML_MATCH_H_
