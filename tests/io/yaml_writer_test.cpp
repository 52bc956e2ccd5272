// YAML written by capsim reads back as the same JSON, strings that look like numbers included.
#include "io/yaml_writer.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "io/yaml_document.hpp"

namespace capsim::io {
namespace {

TEST(YamlWriterTest, RoundTripsThroughTheReader) {
  const nlohmann::json doc = {
      {"apiVersion", "karpenter.sh/v1"},
      {"numbers", {1, -2, 0.5, 1e300, 3.0}},
      {"strings", {"8", "10%", "true", "null", "", "0x1F", "1e3", ".inf", "~", "plain"}},
      {"nested", {{"a", {{"b", nlohmann::json::array()}}}, {"empty", nlohmann::json::object()}}},
      {"flag", false},
      {"8", "a key like a number"}};
  const std::string text = write_yaml(doc, false, "a comment\nsecond line");
  EXPECT_EQ(text.rfind("# a comment\n# second line\n", 0), 0u) << text;
  EXPECT_EQ(parse_yaml_text(text, "t.yaml"), doc) << text;
}

TEST(YamlWriterTest, WritesAStreamOfDocuments) {
  const nlohmann::json docs = {{{"kind", "NodePool"}}, {{"kind", "EC2NodeClass"}}};
  EXPECT_EQ(parse_yaml_text(write_yaml(docs, true, ""), "t.yaml"), docs);
}

// Keys keep an ordered document's order; only strings the core schema would retype are quoted.
TEST(YamlWriterTest, TextReadsBackAsTheDocument) {
  const nlohmann::ordered_json doc = {
      {"model", {{"num_layers", 2}, {"name", "true"}, {"dropout", 0.1}, {"ratio", 2.0}}},
      {"list", {1, 2, 3}},
      {"flag", false},
      {"none", nullptr},
      {"text", "12"}};
  const std::string text = write_yaml(doc, false, "two\nlines");
  EXPECT_EQ(text.rfind("# two\n# lines\nmodel:\n", 0), 0U) << text;
  EXPECT_EQ(parse_yaml_text(text, "w.yaml"), nlohmann::json::parse(doc.dump()));
}

}  // namespace
}  // namespace capsim::io
