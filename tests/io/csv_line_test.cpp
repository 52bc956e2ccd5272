#include "io/csv_line.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace capsim {
namespace {

using Fields = std::vector<std::string>;

TEST(CsvLineTest, QuotesProtectCommasAndDoubledQuotes) {
  const io::CsvFields r = io::split_csv_line(R"(a, "b,c" ,"say ""hi""",)");
  EXPECT_EQ(r.fields, (Fields{"a", " b,c ", "say \"hi\"", ""}));
  EXPECT_FALSE(r.quote_open);
}

TEST(CsvLineTest, DropsCarriageReturnsOutsideQuotesOnly) {
  EXPECT_EQ(io::split_csv_line("x,y\r").fields, (Fields{"x", "y"}));
  EXPECT_EQ(io::split_csv_line("\"x\r\",y").fields, (Fields{"x\r", "y"}));
}

TEST(CsvLineTest, ReportsAnUnterminatedQuote) {
  const io::CsvFields r = io::split_csv_line("a,\"b,c");
  EXPECT_TRUE(r.quote_open);
  EXPECT_EQ(r.fields, (Fields{"a", "b,c"}));
}

}  // namespace
}  // namespace capsim
