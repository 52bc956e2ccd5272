#include "models/io/json_reader.hpp"

#include <gtest/gtest.h>

namespace capsim {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonReaderTest, UnknownKeysListAllowedOnes) {
  const auto j = nlohmann::json::parse(R"({"a": 1, "b": "x", "zz": 3})");
  JsonReader r(j, "f.json", "/root");
  (void)r.required_int("a", 0, 10);
  (void)r.optional_string("b", "");
  (void)r.optional_bool("c", false);
  EXPECT_EQ(message_of([&] { r.finish(); }),
            "f.json:/root/zz: unknown key \"zz\"; allowed keys: a, b, c");
}

TEST(JsonReaderTest, TypesAndRanges) {
  const auto j = nlohmann::json::parse(R"({"i": 1.5, "n": "x", "r": 11, "b": 1})");
  JsonReader r(j, "f.json");
  EXPECT_EQ(message_of([&] { (void)r.required_int("i", 0, 10); }),
            "f.json:/i: expected an integer, got 1.5");
  EXPECT_EQ(message_of([&] { (void)r.required_number("n", 0, 10); }),
            "f.json:/n: expected a number, got \"x\"");
  EXPECT_EQ(message_of([&] { (void)r.required_int("r", 0, 10); }),
            "f.json:/r: expected an integer in [0, 10], got 11");
  EXPECT_EQ(message_of([&] { (void)r.optional_bool("b", false); }),
            "f.json:/b: expected true or false, got 1");
  EXPECT_EQ(message_of([&] { (void)r.required_string("missing"); }),
            "f.json:/missing: missing required key");
}

TEST(JsonReaderTest, UnitsNeedStrings) {
  const auto j = nlohmann::json::parse(R"({"bw": 200, "d": "3 parsecs", "p": "$3/h", "c": "1T"})");
  JsonReader r(j, "f.json");
  EXPECT_EQ(message_of([&] { (void)r.required_bandwidth("bw"); }),
            "f.json:/bw: expected a bandwidth like \"200Gbps\", got 200");
  EXPECT_EQ(message_of([&] { (void)r.required_duration("d"); }),
            "f.json:/d: expected a duration like \"30d\", got \"3 parsecs\"");
  EXPECT_DOUBLE_EQ(r.required_price("p"), 3.0);
  EXPECT_DOUBLE_EQ(r.required_count("c"), 1e12);
}

TEST(JsonReaderTest, PointerEscapesSlashAndTilde) {
  const auto j = nlohmann::json::parse(R"({"a/b~c": {}})");
  JsonReader r(j, "f.json");
  EXPECT_EQ(r.pointer_to("a/b~c"), "/a~1b~0c");
}

// A key given twice is an error at its pointer (array elements counted, tokens escaped), and a
// number beyond a double is bad input, not an internal error.
TEST(JsonReaderTest, DuplicateKeysAndHugeNumbersAreErrors) {
  EXPECT_EQ(message_of([] {
              (void)JsonReader::parse_text(
                  R"({"cases": [{"id": 1, "a/b": [0]}, 7, {"id": 2, "s": {"k": 1, "k": 2}}]})",
                  "x.json");
            }),
            "x.json:/cases/2/s/k: duplicate key (each key may appear once)");
  EXPECT_EQ(message_of([] { (void)JsonReader::parse_text(R"({"a~b": 1, "a~b": 2})", "x.json"); }),
            "x.json:/a~0b: duplicate key (each key may appear once)");
  EXPECT_NE(message_of([] {
              (void)JsonReader::parse_text(R"({"t": 1e400})", "x.json");
            }).find("x.json: invalid JSON: "),
            std::string::npos);
  EXPECT_NO_THROW((void)JsonReader::parse_text(R"({"a": {"k": 1}, "b": {"k": 2}})", "x.json"));
}

TEST(JsonReaderTest, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(message_of([] { (void)JsonReader::parse_text("{\n  \"a\": ,\n}", "x.json"); }),
            "x.json: invalid JSON at line 2, column 8");
}

// A document nested deeper than any input needs is rejected while it is parsed (copying or
// destroying 300,000 nested arrays recursively overflowed the stack: exit 139).
TEST(JsonReaderTest, DeepNestingIsAnError) {
  const std::string ok = std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']');
  EXPECT_NO_THROW((void)JsonReader::parse_text(ok, "ok.json"));
  const std::string deep =
      R"({"cases":[)" + std::string(300000, '[') + std::string(300000, ']') + "]}";
  EXPECT_EQ(message_of([&] { (void)JsonReader::parse_text(deep, "deep.json"); }),
            "deep.json: invalid JSON: nested deeper than 64 levels");
}

TEST(JsonReaderTest, FolderIsNotAFile) {
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(message_of([&] { (void)JsonReader::parse_file(dir); }),
            dir + ": is a folder, not a file");
}

TEST(JsonReaderTest, NonObjectRoot) {
  const auto j = nlohmann::json::parse("[1]");
  EXPECT_EQ(message_of([&] { JsonReader r(j, "f.json"); }),
            "f.json:/: expected an object, got an array");
}

}  // namespace
}  // namespace capsim
