// YAML inputs read as JSON: core-schema scalars, multi-document streams, and every way a file is
// rejected (syntax, duplicate keys, alias bombs, deep nesting) with the file and the pointer.
#include "io/yaml_document.hpp"

#include <string>

#include <gtest/gtest.h>

#include "tests/io/error_of.hpp"

namespace capsim::io {
namespace {

using testing::error_of;

TEST(YamlDocumentTest, PlainScalarsResolveByTheCoreSchema) {
  const nlohmann::json doc = parse_yaml_text(
      "a: 1\nb: -2.5e3\nc: true\nd: ~\ne:\nf: 0x1F\ng: 0o17\nh: 1.0.0\ni: 30s\nj: .inf\n"
      "k: yes\nl: 99999999999999999999\n",
      "x.yaml");
  EXPECT_EQ(doc["a"], 1);
  EXPECT_EQ(doc["b"], -2500.0);
  EXPECT_EQ(doc["c"], true);
  EXPECT_TRUE(doc["d"].is_null());
  EXPECT_TRUE(doc["e"].is_null());
  EXPECT_EQ(doc["f"], 31);
  EXPECT_EQ(doc["g"], 15);
  EXPECT_EQ(doc["h"], "1.0.0");
  EXPECT_EQ(doc["i"], "30s");
  EXPECT_EQ(doc["j"], ".inf");  // JSON has no infinity
  EXPECT_EQ(doc["k"], "yes");   // YAML 1.1's booleans are strings in 1.2
  EXPECT_TRUE(doc["l"].is_number_float());
}

TEST(YamlDocumentTest, QuotedAndTaggedScalarsStayStrings) {
  const nlohmann::json doc = parse_yaml_text("a: '1'\nb: \"true\"\nc: !!str 5\n", "x.yaml");
  EXPECT_EQ(doc["a"], "1");
  EXPECT_EQ(doc["b"], "true");
  EXPECT_EQ(doc["c"], "5");
}

TEST(YamlDocumentTest, SequencesMapsAndStreams) {
  const nlohmann::json one = parse_yaml_text("spec:\n  pools: [{name: a, max: 3}, b]\n", "x.yaml");
  EXPECT_EQ(one["spec"]["pools"][0]["max"], 3);
  EXPECT_EQ(one["spec"]["pools"][1], "b");
  const nlohmann::json stream = parse_yaml_text("kind: A\n---\nkind: B\n", "x.yaml");
  ASSERT_TRUE(stream.is_array());
  EXPECT_EQ(stream[1]["kind"], "B");
}

TEST(YamlDocumentTest, AliasesAreCopiedOut) {
  const nlohmann::json doc = parse_yaml_text("base: &b {x: 1}\nuse: *b\n", "x.yaml");
  EXPECT_EQ(doc["use"]["x"], 1);
}

TEST(YamlDocumentTest, SyntaxErrorsNameTheFileLineAndColumn) {
  EXPECT_EQ(error_of([] { (void)parse_yaml_text("a: [1,\n", "x.yaml"); }),
            "x.yaml: invalid YAML at line 2, column 1: end of sequence flow not found");
}

// Documents no node can start: yaml-cpp 0.7's LoadAll would loop on them, allocating without
// end; they are errors at the offending token.
TEST(YamlDocumentTest, DocumentsNoNodeStartsAreErrorsNotEndlessLoops) {
  EXPECT_EQ(error_of([] { (void)parse_yaml_text(",~", "x.yaml"); }),
            "x.yaml: invalid YAML at line 1, column 1: no node starts with ','");
  EXPECT_EQ(error_of([] { (void)parse_yaml_text("--- ,", "x.yaml"); }),
            "x.yaml: invalid YAML at line 1, column 5: no node starts with ','");
  EXPECT_EQ(error_of([] { (void)parse_yaml_text("a: 1\n---\n,,\n", "x.yaml"); }),
            "x.yaml: invalid YAML at line 3, column 1: no node starts with ','");
  // Empty and repeated documents still read.
  EXPECT_EQ(parse_yaml_text("---\n---\na: 1\n", "x.yaml").size(), 2U);
}

TEST(YamlDocumentTest, DuplicateKeysNameTheirPointer) {
  EXPECT_EQ(error_of([] { (void)parse_yaml_text("spec:\n  a: 1\n  a: 2\n", "x.yaml"); }),
            "x.yaml:/spec/a: duplicate key (each key may appear once)");
}

TEST(YamlDocumentTest, NonScalarKeysAreRejected) {
  EXPECT_EQ(error_of([] { (void)parse_yaml_text("? [a]\n: 1\n", "x.yaml"); }),
            "x.yaml: a key at line 1, column 3 is not a scalar");
}

TEST(YamlDocumentTest, AliasBombsStopAtTheValueCap) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev + ", " + prev +
            ", " + prev + ", " + prev + ", " + prev + ", " + prev + ", " + prev + ", " + prev +
            ", " + prev + ", " + prev + "]\n";
  }
  EXPECT_NE(error_of([&] {
              (void)parse_yaml_text(text, "x.yaml");
            }).find("values once aliases are expanded"),
            std::string::npos);
}

TEST(YamlDocumentTest, DeepNestingIsRejected) {
  const std::string text = std::string(100, '[') + std::string(100, ']');
  EXPECT_NE(error_of([&] { (void)parse_yaml_text(text, "x.yaml"); }).find("nested deeper than"),
            std::string::npos);
}

TEST(YamlDocumentTest, NulBytesAndInvalidUtf8AreRejected) {
  EXPECT_NE(error_of([] {
              (void)parse_yaml_text(std::string("a: 1\n\0b", 7), "x.yaml");
            }).find("a NUL byte at line 2"),
            std::string::npos);
  EXPECT_NE(error_of([] { (void)parse_yaml_text("a: \xff\n", "x.yaml"); }).find("invalid UTF-8"),
            std::string::npos);
}

}  // namespace
}  // namespace capsim::io
