#include "io/text_check.hpp"

#include <string>

#include <gtest/gtest.h>

namespace capsim {
namespace {

TEST(TextCheckTest, AcceptsUtf8Text) {
  EXPECT_FALSE(
      io::find_text_fault("plain ascii\nand \xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\n"));
  EXPECT_FALSE(io::find_text_fault(""));
}

TEST(TextCheckTest, FindsTheFirstNulByte) {
  const std::string text("{\"a\": 1}\n\0 garbage", 18);
  const auto fault = io::find_text_fault(text);
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->offset, 9u);
  EXPECT_EQ(fault->problem, "a NUL byte");
  const io::TextPosition at = io::text_position(text, fault->offset);
  EXPECT_EQ(at.line, 2u);
  EXPECT_EQ(at.column, 1u);
}

// RFC 3629 §4: stray continuation bytes, overlong forms, surrogates, code points above
// U+10FFFF and cut sequences are all malformed.
TEST(TextCheckTest, FindsMalformedUtf8) {
  for (const std::string& bad : {std::string("ab\xFF"), std::string("ab\x80"),
                                 std::string("ab\xC0\xAF"), std::string("ab\xED\xA0\x80"),
                                 std::string("ab\xF4\x90\x80\x80"), std::string("ab\xE2\x82")}) {
    const auto fault = io::find_text_fault(bad);
    ASSERT_TRUE(fault) << bad;
    EXPECT_EQ(fault->offset, 2u);
    EXPECT_EQ(io::find_invalid_utf8(bad), 2u);
  }
  EXPECT_EQ(io::find_text_fault("x\xFF")->problem, "invalid UTF-8 (byte 0xFF)");
}

TEST(TextCheckTest, ReportsWhicheverFaultComesFirst) {
  EXPECT_EQ(io::find_text_fault(std::string("\xFF\0", 2))->problem, "invalid UTF-8 (byte 0xFF)");
  EXPECT_EQ(io::find_text_fault(std::string("\0\xFF", 2))->problem, "a NUL byte");
}

}  // namespace
}  // namespace capsim
