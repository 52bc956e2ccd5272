#include "io/text_format.hpp"

#include <string>

#include <gtest/gtest.h>

namespace capsim {
namespace {

TEST(TextFormatTest, FormatsAsSnprintfDoes) {
  EXPECT_EQ(io::printf_string("%d/%d%s", 8, 16, "*"), "8/16*");
  EXPECT_EQ(io::printf_string("%.1f GiB", 79.96), "80.0 GiB");
  EXPECT_EQ(io::printf_string("%-6s|", "ab"), "ab    |");
  EXPECT_EQ(io::printf_string("%.*g", 3, 1234.5), "1.23e+03");
}

TEST(TextFormatTest, NothingIsCutAtAnyLength) {
  const std::string long_name(5000, 'x');
  const std::string out = io::printf_string("[%s] %.3f", long_name.c_str(), 1.0);
  EXPECT_EQ(out.size(), long_name.size() + 8);
  EXPECT_EQ(out.substr(out.size() - 7), "] 1.000");
}

TEST(TextFormatTest, AnEmptyResultIsAnEmptyString) {
  EXPECT_EQ(io::printf_string("%s", ""), "");
  EXPECT_TRUE(io::printf_string("%s", "").empty());
}

}  // namespace
}  // namespace capsim
