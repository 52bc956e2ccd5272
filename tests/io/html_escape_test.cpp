#include "io/html_escape.hpp"

#include <gtest/gtest.h>

namespace capsim::io {
namespace {

TEST(HtmlEscapeTest, ReplacesMarkupAndQuotes) {
  EXPECT_EQ(html_escape("a < b && c > \"d\""), "a &lt; b &amp;&amp; c &gt; &quot;d&quot;");
  EXPECT_EQ(html_escape("<script>"), "&lt;script&gt;");
}

// Attributes are double-quoted, so an apostrophe stays (sources quote column names with it).
TEST(HtmlEscapeTest, KeepsApostrophesAndPlainText) {
  EXPECT_EQ(html_escape("tutorial 03, '3.3cuBLAS' column"), "tutorial 03, '3.3cuBLAS' column");
  EXPECT_EQ(html_escape(""), "");
  EXPECT_EQ(html_escape("A100 \xC3\x97 8"), "A100 \xC3\x97 8");  // UTF-8 passes through
}

// An already escaped text is escaped again: & of a reference is text like any other.
TEST(HtmlEscapeTest, EscapesAmpersandsOfReferences) {
  EXPECT_EQ(html_escape("&lt;"), "&amp;lt;");
}

TEST(HtmlEscapeTextTest, KeepsQuotesLiteral) {
  EXPECT_EQ(html_escape_text("what-if \"a<b\" & c"), "what-if \"a&lt;b\" &amp; c");
}

}  // namespace
}  // namespace capsim::io
