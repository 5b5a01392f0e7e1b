// actions/yaml_match.h: the event-stream check `tfdiag fix` runs on the text it edited in place.
// The expected documents are parsed by YamlStream (its own tree builder), so each case also holds
// the matcher against the reader it replaces.
#include "actions/yaml_match.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tfdiag::test {
namespace {

std::vector<std::unique_ptr<YamlNode>> Parse(const std::string& text) {
  std::vector<std::unique_ptr<YamlNode>> docs;
  YamlStream stream(text, "t.yaml");
  for (;;) {
    std::unique_ptr<YamlNode> doc;
    StatusOr<bool> more = stream.Next(&doc);
    EXPECT_TRUE(more.ok()) << more.status().message();
    if (!more.ok() || !*more) break;
    docs.push_back(std::move(doc));
  }
  return docs;
}

// Scalars the same when their text is, whatever the quoting (a stand-in for fix's JSON test).
bool SameText(const YamlNode& a, const YamlNode& b) { return a.value == b.value; }
bool Never(const YamlNode&, const YamlNode&) { return false; }

YamlMatch Match(const std::string& text, const std::string& expected,
                bool (*same)(const YamlNode&, const YamlNode&) = Never) {
  return MatchDocuments(text, Parse(expected), same);
}

TEST(YamlMatch, ATextMatchesItsOwnDocumentsWhateverItsLayout) {
  const std::string a = "a: 1\nb: [x, y]\nc:\n  d: {e: f}\n---\n- 1\n- two\n";
  EXPECT_EQ(Match(a, a), YamlMatch::kSame);
  // Flow and block layouts, comments, document markers: the same documents.
  EXPECT_EQ(Match("# c\na: 1\nb:\n- x\n- y   # y\nc: {d: {e: f}}\n---\n[1, two]\n", a),
            YamlMatch::kSame);
}

TEST(YamlMatch, EveryKindOfDifferenceIsFound) {
  const std::string a = "a: 1\nb: [x, y]\n---\nk: v\n";
  EXPECT_EQ(Match("a: 2\nb: [x, y]\n---\nk: v\n", a), YamlMatch::kDifferent);     // value
  EXPECT_EQ(Match("a: 1\nb: [x]\n---\nk: v\n", a), YamlMatch::kDifferent);        // item lost
  EXPECT_EQ(Match("a: 1\nb: [x, y, z]\n---\nk: v\n", a), YamlMatch::kDifferent);  // item added
  EXPECT_EQ(Match("a: 1\nb: {x: y}\n---\nk: v\n", a), YamlMatch::kDifferent);     // kind
  EXPECT_EQ(Match("a: 1\nb: [x, y]\n", a), YamlMatch::kDifferent);                // doc lost
  EXPECT_EQ(Match("a: 1\nb: [x, y]\n---\nk: v\n---\nz: 1\n", a), YamlMatch::kDifferent);
  EXPECT_EQ(Match("a: 1\nc: [x, y]\n---\nk: v\n", a), YamlMatch::kDifferent);  // key
  EXPECT_EQ(Match("a: 1\nb: [x, y\n", a), YamlMatch::kDifferent);              // not YAML
}

TEST(YamlMatch, AScalarOfAnotherStyleIsJudgedByTheCallerAndTagsCount) {
  EXPECT_EQ(Match("a: \"1\"\n", "a: 1\n"), YamlMatch::kDifferent);
  EXPECT_EQ(Match("a: \"1\"\n", "a: 1\n", SameText), YamlMatch::kSame);
  EXPECT_EQ(Match("a: !!str 1\n", "a: 1\n"), YamlMatch::kDifferent);
}

TEST(YamlMatch, EmptyDocumentsMatchOnlyEmptyOnes) {
  EXPECT_EQ(Match("---\n---\na: 1\n", "---\n---\na: 1\n"), YamlMatch::kSame);
  EXPECT_EQ(Match("---\na: 1\n---\na: 1\n", "---\n---\na: 1\n"), YamlMatch::kDifferent);
}

TEST(YamlMatch, AnchorsAndAliasesAreLeftToTheTreeReader) {
  EXPECT_EQ(Match("a: &x {b: 1}\nc: *x\n", "a: {b: 1}\nc: {b: 1}\n"), YamlMatch::kUnknown);
}

}  // namespace
}  // namespace tfdiag::test
