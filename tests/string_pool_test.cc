// StringPool: interning, lookups, and Truncate (used to undo a fast parse that gave up), which
// must forget the dropped strings, free their bytes and leave the kept ones intact.
#include "core/string_pool.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace tfdiag::test {
namespace {

TEST(StringPool, InternIsIdempotentAndIdsAreDense) {
  StringPool p;
  EXPECT_EQ(p.Intern(""), 0u);
  const StrId a = p.Intern("MatMul"), b = p.Intern("w/read_S12");
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(p.Intern("MatMul"), a);
  EXPECT_EQ(p.Get(b), "w/read_S12");
  EXPECT_EQ(p.Find("nope"), StringPool::kNotFound);
}

TEST(StringPool, TruncateForgetsFreesAndReusesWhatCameAfter) {
  StringPool p;
  std::vector<std::string> kept;
  for (int i = 0; i < 30000; ++i)
    kept.push_back("kept/op_" + std::to_string(i) + std::string(40, 'k'));
  for (const std::string& s : kept) p.Intern(s);
  const size_t n = p.size();
  const size_t bytes = p.ArenaBytes();
  // More than a chunk of new strings, one larger than a chunk.
  for (int i = 0; i < 30000; ++i) p.Intern("dropped/" + std::to_string(i) + std::string(40, 'd'));
  p.Intern(std::string(3 << 20, 'x'));
  ASSERT_GE(p.ArenaBytes(), bytes + (3 << 20));
  p.Truncate(n);
  EXPECT_EQ(p.size(), n);
  EXPECT_EQ(p.Find("dropped/7" + std::string(40, 'd')), StringPool::kNotFound);
  EXPECT_EQ(p.Find(std::string(3 << 20, 'x')), StringPool::kNotFound);
  EXPECT_EQ(p.ArenaBytes(), bytes) << "the dropped strings' chunks are freed";
  for (size_t i = 0; i < kept.size(); i += 997) {
    EXPECT_EQ(p.Get(p.Find(kept[i])), kept[i]);
  }
  // New strings get the freed ids, and the kept ones still read back.
  EXPECT_EQ(p.Intern("again"), n);
  EXPECT_EQ(p.Get(static_cast<StrId>(n)), "again");
  EXPECT_EQ(p.Get(p.Find(kept.back())), kept.back());
  // Back to the empty pool: no arena left, and it works as new.
  p.Truncate(1);
  EXPECT_EQ(p.size(), 1u);
  EXPECT_EQ(p.ArenaBytes(), 0u);
  EXPECT_EQ(p.Find(kept[0]), StringPool::kNotFound);
  EXPECT_EQ(p.Intern("fresh"), 1u);
  EXPECT_EQ(p.Get(1), "fresh");
}

}  // namespace
}  // namespace tfdiag::test

namespace tfdiag {
namespace {

// The cache in front of the index looks only at the length and the ends of a string: strings
// that agree there but differ inside (or are one byte apart) still get ids of their own, and every
// id reads back its string, after a Truncate too.
TEST(StringPool, LookalikesGetTheirOwnIds) {
  std::vector<std::string> words;
  for (size_t n : {1, 2, 3, 4, 7, 8, 9, 16, 17, 24, 40}) {
    std::string base(n, 'a');
    words.push_back(base);
    for (size_t i = 0; i < n; ++i) {
      std::string w = base;
      w[i] = 'b';
      words.push_back(w);
    }
  }
  StringPool pool;
  std::vector<StrId> ids;
  for (int round = 0; round < 3; ++round) {
    for (size_t k = 0; k < words.size(); ++k) {
      const StrId id = pool.Intern(words[k]);
      if (round == 0) ids.push_back(id);
      EXPECT_EQ(id, ids[k]) << words[k];
      EXPECT_EQ(pool.Get(id), words[k]);
    }
  }
  std::set<StrId> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), words.size());
  pool.Truncate(ids[5]);
  for (size_t k = 5; k < words.size(); ++k) {
    EXPECT_EQ(pool.Get(pool.Intern(words[k])), words[k]) << words[k];
  }
  EXPECT_EQ(pool.Intern(words[2]), ids[2]);
}

}  // namespace
}  // namespace tfdiag

namespace tfdiag {
namespace {

// A moved-from pool is empty and usable: its ids start again at 1, and the pool moved into keeps
// every string and id.
TEST(StringPool, MovedFromPoolIsEmptyAndUsable) {
  StringPool a;
  const StrId x = a.Intern("worker/MatMul");
  const StrId y = a.Intern("ps/read");
  StringPool b(std::move(a));
  EXPECT_EQ(b.Get(x), "worker/MatMul");
  EXPECT_EQ(b.Intern("ps/read"), y);
  EXPECT_EQ(a.size(), 1u);  // NOLINT(bugprone-use-after-move): the state after a move is the point
  EXPECT_EQ(a.Intern("ps/read"), 1u);
  EXPECT_EQ(a.Get(1), "ps/read");
  StringPool c;
  c = std::move(b);
  EXPECT_EQ(c.Intern("worker/MatMul"), x);
  EXPECT_EQ(b.Intern("worker/MatMul"), 1u);  // NOLINT(bugprone-use-after-move)
}

}  // namespace
}  // namespace tfdiag
