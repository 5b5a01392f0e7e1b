// core/utf8.h: validation against the Unicode standard's table 3-7 and replacement by maximal
// subparts (the examples of Unicode 15, section 3.9, "U+FFFD Substitution of Maximal Subparts").
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace tfdiag {
namespace {

const std::string R(kUtf8Replacement);

TEST(Utf8, ValidatesTable3_7) {
  EXPECT_TRUE(IsValidUtf8("ps-0 \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xFF"));
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // U+D800, a surrogate
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));          // truncated
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));
}

TEST(Utf8, ReplacesMaximalSubparts) {
  size_t n = 0;
  EXPECT_EQ(ToValidUtf8("worker\xFF", &n), "worker" + R);
  EXPECT_EQ(n, 1u);
  // Unicode 15 table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a, FFFD x2, b, FFFD, c,
  // FFFD x2, d: six replacements.
  n = 0;
  EXPECT_EQ(ToValidUtf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64", &n),
            "a" + R + R + R + "b" + R + "c" + R + R + "d");
  EXPECT_EQ(n, 6u);
  EXPECT_EQ(ToValidUtf8("\xED\xA0\x80"), R + R + R);  // a surrogate: each byte
  EXPECT_EQ(ToValidUtf8("ok \xE2\x82\xAC"), "ok \xE2\x82\xAC");
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xE2\x82")));
}

TEST(Utf8, EscapesBidiControls) {
  size_t n = 0;
  // U+202E RIGHT-TO-LEFT OVERRIDE and U+2066 LEFT-TO-RIGHT ISOLATE.
  EXPECT_EQ(EscapeBidiControls("ps\xE2\x80\xAEgpj.exe \xE2\x81\xA6x", &n),
            "ps\\u202egpj.exe \\u2066x");
  EXPECT_EQ(n, 2u);
  EXPECT_EQ(EscapeBidiControls("plain \xE2\x80\x94 dash"), "plain \xE2\x80\x94 dash");
  EXPECT_EQ(EscapeBidiControls("\xFF"), R);
}

}  // namespace
}  // namespace tfdiag
