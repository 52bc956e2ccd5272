#include "io/json_reader.hpp"

#include <string>

#include <gtest/gtest.h>

namespace capsim {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonReaderTest, UnknownKeysListAllowedOnes) {
  const auto j = nlohmann::json::parse(R"({"a": 1, "b": "x", "zz": 3})");
  io::JsonReader r(j, "f.json", "/root");
  (void)r.required_int("a", 0, 10);
  (void)r.optional_string("b", "");
  (void)r.optional_bool("c", false);
  EXPECT_EQ(message_of([&] { r.finish(); }),
            "f.json:/root/zz: unknown key \"zz\"; allowed keys: a, b, c");
}

TEST(JsonReaderTest, TypesAndRanges) {
  const auto j = nlohmann::json::parse(R"({"i": 1.5, "n": "x", "r": 11, "b": 1})");
  io::JsonReader r(j, "f.json");
  EXPECT_EQ(message_of([&] { (void)r.required_int("i", 0, 10); }),
            "f.json:/i: expected an integer, got 1.5");
  EXPECT_EQ(message_of([&] { (void)r.required_number("n", 0, 10); }),
            "f.json:/n: expected a number, got \"x\"");
  EXPECT_EQ(message_of([&] { (void)r.required_int("r", 0, 10); }),
            "f.json:/r: expected an integer in [0, 10], got 11");
  EXPECT_EQ(message_of([&] { (void)r.optional_bool("b", false); }),
            "f.json:/b: expected true or false, got 1");
}

// A missing required key yields a stand-in within range so that reading goes on; finish()
// reports it with every other key problem of the document.
TEST(JsonReaderTest, MissingKeysAreReportedByFinish) {
  const auto j = nlohmann::json::parse(R"({"a": 1})");
  io::JsonReader r(j, "f.json");
  EXPECT_EQ(r.required_int("n", 3, 10), 3);
  EXPECT_EQ(r.required_string("s"), "");
  EXPECT_EQ(r.required_enum("e", {"x", "y"}), "x");
  EXPECT_GE(r.required_duration("d"), 1.0);
  (void)r.required_int("a", 0, 10);
  EXPECT_EQ(message_of([&] { r.finish(); }),
            "f.json:/n: missing required key\nf.json:/s: missing required key\n"
            "f.json:/e: missing required key\nf.json:/d: missing required key");
}

// Integers beyond int64 are out of range with their own digits, not wrapped to negatives.
TEST(JsonReaderTest, HugeIntegersKeepTheirDigits) {
  const auto j = nlohmann::json::parse(
      R"({"u": 18446744073709551615, "v": 9223372036854775808, "f": 1e300, "a": [18446744073709551615]})");
  io::JsonReader r(j, "f.json");
  EXPECT_EQ(message_of([&] { (void)r.required_int("u", 0, 10); }),
            "f.json:/u: expected an integer in [0, 10], got 18446744073709551615");
  EXPECT_EQ(message_of([&] { (void)r.optional_int("v", 0, 0, 10); }),
            "f.json:/v: expected an integer in [0, 10], got 9223372036854775808");
  EXPECT_EQ(message_of([&] { (void)r.required_int("f", 0, 10); }),
            "f.json:/f: expected an integer, got 1e+300");
  EXPECT_EQ(message_of([&] { (void)r.int_array("a", 0, 10); }),
            "f.json:/a/0: expected an integer in [0, 10], got 18446744073709551615");
}

// Durations, sizes and counts have a ceiling (units.hpp), so that day counts and sums stay
// finite: 1e308s would overflow into a negative day count.
TEST(JsonReaderTest, QuantitiesBeyondTheirLimitsAreErrors) {
  const auto j = nlohmann::json::parse(
      R"({"d": "1e308s", "w": "2e11w", "ok": "1e12s", "z": "2EB", "zz": "1e19B", "c": "1e19", "t": "2000000T"})");
  io::JsonReader r(j, "f.json");
  EXPECT_EQ(message_of([&] { (void)r.required_duration("d"); }),
            "f.json:/d: expected a duration of at most \"1e12s\" (about 31,700 years), got "
            "\"1e308s\"");
  EXPECT_EQ(message_of([&] { (void)r.optional_duration("w"); }),
            "f.json:/w: expected a duration of at most \"1e12s\" (about 31,700 years), got "
            "\"2e11w\"");
  EXPECT_DOUBLE_EQ(r.required_duration("ok"), 1e12);
  EXPECT_EQ(message_of([&] { (void)r.required_size("zz"); }),
            "f.json:/zz: expected a size of at most \"1e18B\", got \"1e19B\"");
  EXPECT_EQ(message_of([&] { (void)r.required_count("c"); }),
            "f.json:/c: expected a count of at most \"1e18\", got \"1e19\"");
  EXPECT_EQ(message_of([&] { (void)r.optional_count("t"); }),
            "f.json:/t: expected a count of at most \"1e18\", got \"2000000T\"");
}

// Every unknown and missing key of a document at once, each on its own line; a misspelt
// required key is named as the misspelling, with the key it most likely means.
TEST(JsonReaderTest, KeyProblemsOfADocumentComeTogether) {
  const auto doc = nlohmann::json::parse(R"({
    "model": {"num_layers": 2, "num_atention_heads": 4, "colour": "red"},
    "cluster": {"nodes": 2, "gpus_per_nod": 8},
    "extra": 1})");
  const std::string message = message_of([&] {
    io::JsonReader::read_document(doc, "f.json", [](io::JsonReader& root) {
      {
        io::JsonReader model = root.object("model");
        (void)model.required_int("num_layers", 1, 100);
        (void)model.required_int("num_attention_heads", 1, 100);
        (void)model.required_int("hidden_size", 1, 100);
        model.finish();
      }
      {
        io::JsonReader cluster = root.object("cluster");
        (void)cluster.required_int("num_nodes", 1, 100);
        (void)cluster.optional_int("gpus_per_node", 8, 1, 100);
        cluster.finish();
      }
      (void)root.required_string("name");
      root.finish();
    });
  });
  EXPECT_EQ(message,
            "f.json:/model/num_atention_heads: unknown key \"num_atention_heads\"; did you mean "
            "\"num_attention_heads\"?\n"
            "f.json:/model/hidden_size: missing required key\n"
            "f.json:/model/colour: unknown key \"colour\"; allowed keys: hidden_size, "
            "num_attention_heads, num_layers\n"
            "f.json:/cluster/num_nodes: missing required key\n"
            "f.json:/cluster/gpus_per_nod: unknown key \"gpus_per_nod\"; did you mean "
            "\"gpus_per_node\"?\n"
            "f.json:/cluster/nodes: unknown key \"nodes\"; allowed keys: gpus_per_node, num_nodes\n"
            "f.json:/name: missing required key\n"
            "f.json:/extra: unknown key \"extra\"; allowed keys: cluster, model, name");
}

// A check that fails on a stand-in for a missing key is not reported: the key is.
TEST(JsonReaderTest, ErrorsAfterAStandInGiveWayToTheKeyProblems) {
  const auto doc = nlohmann::json::parse(R"({"hiden_size": 64, "heads": 3})");
  const std::string message = message_of([&] {
    io::JsonReader::read_document(doc, "f.json", [](io::JsonReader& r) {
      const auto hidden = r.required_int("hidden_size", 1, 1 << 20);
      const auto heads = r.required_int("heads", 1, 64);
      if (hidden % heads != 0)
        throw r.error("heads", "hidden_size is not divisible by heads");
      r.finish();
    });
  });
  EXPECT_EQ(message,
            "f.json:/hiden_size: unknown key \"hiden_size\"; did you mean \"hidden_size\"?");
}

// Without a stand-in every value read is the file's own: an error after an unknown key is
// reported beside it.
TEST(JsonReaderTest, ErrorsAfterUnknownKeysAreReportedToo) {
  const auto doc = nlohmann::json::parse(R"({"a": {"x": 1, "y": 2}, "b": "fast"})");
  const std::string message = message_of([&] {
    io::JsonReader::read_document(doc, "f.json", [](io::JsonReader& r) {
      io::JsonReader a = r.object("a");
      (void)a.required_int("x", 0, 10);
      a.finish();
      (void)r.required_bandwidth("b");
      r.finish();
    });
  });
  EXPECT_EQ(message,
            "f.json:/a/y: unknown key \"y\"; allowed keys: x\n"
            "f.json:/b: expected a bandwidth like \"200Gbps\", got \"fast\"");
}

// Keys of features capsim does not model yet say so instead of "unknown key".
TEST(JsonReaderTest, UnsupportedFeatureKeysSaySo) {
  const auto j = nlohmann::json::parse(R"({"a": 1, "moe": {"num_experts": 8}})");
  io::JsonReader r(j, "f.json", "/model");
  (void)r.required_int("a", 0, 10);
  r.note_unsupported({{"moe", "mixture-of-experts layers"}});
  EXPECT_EQ(message_of([&] { r.finish(); }),
            "f.json:/model/moe: capsim does not model mixture-of-experts layers yet (\"moe\" is "
            "reserved for it)");
}

// "min" is two edits from "max": short names only suggest one-edit neighbours.
TEST(JsonReaderTest, NearMissesAreClose) {
  const auto j = nlohmann::json::parse(R"({"max": 4})");
  io::JsonReader r(j, "f.json");
  (void)r.required_int("min", 0, 10);
  EXPECT_EQ(message_of([&] { r.finish(); }),
            "f.json:/min: missing required key\nf.json:/max: unknown key \"max\"; allowed keys: "
            "min");
}

// A missing object is one problem, not one per key it would have held.
TEST(JsonReaderTest, AMissingObjectIsOneProblem) {
  const auto j = nlohmann::json::parse(R"({})");
  io::JsonReader r(j, "f.json");
  io::JsonReader model = r.object("model");
  (void)model.required_int("num_layers", 1, 100);
  model.finish();
  EXPECT_EQ(message_of([&] { r.finish(); }), "f.json:/model: missing required key");
}

// A NUL byte ended the document for the parser, which then ignored what followed it.
TEST(JsonReaderTest, TextAfterANulByteIsAnError) {
  const std::string text("{\"a\": 1}\n\0 garbage", 18);
  EXPECT_EQ(message_of([&] { (void)io::JsonReader::parse_text(text, "x.json"); }),
            "x.json: a NUL byte at line 2, column 1; inputs are UTF-8 text without NUL bytes");
  EXPECT_EQ(message_of([] {
              (void)io::JsonReader::parse_text(std::string("{\"a\": [1, 2,\0]}", 15), "x.json");
            }),
            "x.json:/a/2: a NUL byte at line 1, column 13; inputs are UTF-8 text without NUL "
            "bytes");
}

// Invalid UTF-8 is named with the JSON pointer of the string that holds it.
TEST(JsonReaderTest, InvalidUtf8IsNamedWithItsPointer) {
  EXPECT_EQ(message_of([] {
              (void)io::JsonReader::parse_text("{\"model\": {\"name\": \"gpt\xFF\"}}", "x.json");
            }),
            "x.json:/model/name: invalid UTF-8 (byte 0xFF) at line 1, column 24; inputs are UTF-8 "
            "text without NUL bytes");
  EXPECT_EQ(message_of([] {
              (void)io::JsonReader::parse_text("{\"cases\": [{}, \"\xC0\xAF\"]}", "x.json");
            }),
            "x.json:/cases/1: invalid UTF-8 (byte 0xC0) at line 1, column 17; inputs are UTF-8 "
            "text without NUL bytes");
}

TEST(JsonReaderTest, UnitsNeedStrings) {
  const auto j = nlohmann::json::parse(R"({"bw": 200, "d": "3 parsecs", "p": "$3/h", "c": "1T"})");
  io::JsonReader r(j, "f.json");
  EXPECT_EQ(message_of([&] { (void)r.required_bandwidth("bw"); }),
            "f.json:/bw: expected a bandwidth like \"200Gbps\", got 200");
  EXPECT_EQ(message_of([&] { (void)r.required_duration("d"); }),
            "f.json:/d: expected a duration like \"30d\", got \"3 parsecs\"");
  EXPECT_DOUBLE_EQ(r.required_price("p"), 3.0);
  EXPECT_DOUBLE_EQ(r.required_count("c"), 1e12);
}

TEST(JsonReaderTest, PointerEscapesSlashAndTilde) {
  const auto j = nlohmann::json::parse(R"({"a/b~c": {}})");
  io::JsonReader r(j, "f.json");
  EXPECT_EQ(r.pointer_to("a/b~c"), "/a~1b~0c");
}

// A key given twice is an error at its pointer (array elements counted, tokens escaped), and a
// number beyond a double is bad input, not an internal error.
TEST(JsonReaderTest, DuplicateKeysAndHugeNumbersAreErrors) {
  EXPECT_EQ(message_of([] {
              (void)io::JsonReader::parse_text(
                  R"({"cases": [{"id": 1, "a/b": [0]}, 7, {"id": 2, "s": {"k": 1, "k": 2}}]})",
                  "x.json");
            }),
            "x.json:/cases/2/s/k: duplicate key (each key may appear once)");
  EXPECT_EQ(
      message_of([] { (void)io::JsonReader::parse_text(R"({"a~b": 1, "a~b": 2})", "x.json"); }),
      "x.json:/a~0b: duplicate key (each key may appear once)");
  EXPECT_NE(message_of([] {
              (void)io::JsonReader::parse_text(R"({"t": 1e400})", "x.json");
            }).find("x.json: invalid JSON: "),
            std::string::npos);
  EXPECT_NO_THROW((void)io::JsonReader::parse_text(R"({"a": {"k": 1}, "b": {"k": 2}})", "x.json"));
}

TEST(JsonReaderTest, SyntaxErrorsNameLineAndColumn) {
  EXPECT_EQ(message_of([] { (void)io::JsonReader::parse_text("{\n  \"a\": ,\n}", "x.json"); }),
            "x.json: invalid JSON at line 2, column 8");
}

// A document nested deeper than any input needs is rejected while it is parsed (copying or
// destroying 300,000 nested arrays recursively overflowed the stack: exit 139).
TEST(JsonReaderTest, DeepNestingIsAnError) {
  const std::string ok =
      std::string(io::kMaxJsonDepth - 1, '[') + std::string(io::kMaxJsonDepth - 1, ']');
  EXPECT_NO_THROW((void)io::JsonReader::parse_text(ok, "ok.json"));
  const std::string deep =
      R"({"cases":[)" + std::string(300000, '[') + std::string(300000, ']') + "]}";
  EXPECT_EQ(message_of([&] { (void)io::JsonReader::parse_text(deep, "deep.json"); }),
            "deep.json: invalid JSON: nested deeper than 64 levels");
}

TEST(JsonReaderTest, FolderIsNotAFile) {
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(message_of([&] { (void)io::JsonReader::parse_file(dir); }),
            dir + ": is a folder, not a file");
}

TEST(JsonReaderTest, NonObjectRoot) {
  const auto j = nlohmann::json::parse("[1]");
  EXPECT_EQ(message_of([&] { io::JsonReader r(j, "f.json"); }),
            "f.json:/: expected an object, got an array");
}

}  // namespace
}  // namespace capsim
