#include "tests/fuzz/mutation_fuzz.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

#include <gtest/gtest.h>

#include "io/input_error.hpp"
#include <unistd.h>

namespace capsim::fuzz {

namespace fs = std::filesystem;

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ScratchDir::ScratchDir()
    : path_(fs::temp_directory_path() /
            ("capsim_input_fuzz_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string ScratchDir::write(const std::string& name, const std::string& text) const {
  const std::string path = (path_ / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

namespace {

// Replaces the first number in a unit string ("200Gbps", "$32.77/h") by `number`.
std::string replace_number(const std::string& s, const std::string& number) {
  static const std::regex kNumber(R"([0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
  return std::regex_replace(s, kNumber, number, std::regex_constants::format_first_only);
}

// The values a leaf is replaced by: every JSON type, extreme numbers, odd strings, and for
// strings with a number inside (quantities with units) the same unit with extreme numbers.
std::vector<json> replacements(const json& leaf) {
  std::vector<json> out = {json("fuzz-nonsense"),
                           json(""),
                           json(0),
                           json(-1),
                           json(1),
                           json(0.5),
                           json(1e308),
                           json(-1e308),
                           json(1e-308),
                           json(std::numeric_limits<std::int64_t>::max()),
                           json(std::numeric_limits<std::int64_t>::min()),
                           json(std::numeric_limits<std::uint64_t>::max()),
                           json(true),
                           json(nullptr),
                           json::array(),
                           json::object()};
  if (leaf.is_string()) {
    const std::string s = leaf.get<std::string>();
    if (std::regex_search(s, std::regex("[0-9]"))) {
      for (const char* number : {"0", "-1", "1e308", "1e-308", "1e999", "nan", "inf", "0.000001",
                                 "99999999999999999999"}) {
        out.emplace_back(replace_number(s, number));
      }
    }
  }
  if (leaf.is_number()) {
    out.emplace_back(leaf.get<double>() * 1e6);
    out.emplace_back(leaf.get<double>() + 0.5);
  }
  return out;
}

void collect(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& leaves,
             std::vector<json::json_pointer>& objects, std::vector<json::json_pointer>& arrays) {
  if (j.is_object()) {
    objects.push_back(at);
    for (const auto& item : j.items())
      collect(item.value(), at / item.key(), leaves, objects, arrays);
  } else if (j.is_array()) {
    arrays.push_back(at);
    for (size_t i = 0; i < j.size(); ++i)
      collect(j[i], at / i, leaves, objects, arrays);
  }
  if (!j.is_object() && !j.is_array())
    leaves.push_back(at);
}

// One change to a document; applying it to a document without the pointer throws json errors.
struct Mutation {
  std::string label;
  std::function<void(json&)> apply;
};

// Every single mutation of `doc`.
std::vector<Mutation> single_mutations(const json& doc) {
  std::vector<json::json_pointer> leaves;
  std::vector<json::json_pointer> objects;
  std::vector<json::json_pointer> arrays;
  collect(doc, json::json_pointer(), leaves, objects, arrays);
  std::vector<Mutation> out;
  const auto set = [&](const json::json_pointer& p, const json& v) {
    out.push_back({p.to_string() + " = " + v.dump(), [p, v](json& d) { d.at(p) = v; }});
  };
  for (const auto& p : leaves) {
    for (const json& v : replacements(doc.at(p)))
      set(p, v);
  }
  for (const auto& p : objects) {
    for (const auto& item : doc.at(p).items()) {
      const std::string key = item.key();
      out.push_back({"delete " + (p / key).to_string(), [p, key](json& d) {
                       if (d.at(p).erase(key) == 0)
                         throw std::out_of_range("gone");
                     }});
    }
    out.push_back({"add " + p.to_string() + "/fuzz_unknown_key",
                   [p](json& d) { d.at(p)["fuzz_unknown_key"] = 1; }});
    if (!p.empty()) {
      for (const json& v : {json::array(), json("x"), json(3)})
        set(p, v);
    }
  }
  for (const auto& p : arrays) {
    set(p, json::array());
    if (!doc.at(p).empty()) {
      set(p, json::object());
      out.push_back({"drop " + p.to_string() + "/0", [p](json& d) { d.at(p).erase(0); }});
      out.push_back({"duplicate " + p.to_string() + "/0",
                     [p](json& d) { d.at(p).push_back(d.at(p).at(0)); }});
    }
  }
  return out;
}

// Returns the JSON pointers of non-finite numbers in `j` ("" entries for none).
void find_non_finite(const json& j, const json::json_pointer& at, std::vector<std::string>& bad) {
  if (j.is_number_float() && !std::isfinite(j.get<double>()))
    bad.push_back(at.to_string());
  if (j.is_object()) {
    for (const auto& item : j.items())
      find_non_finite(item.value(), at / item.key(), bad);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      find_non_finite(j[i], at / i, bad);
  }
}

// Whether an InputError's pointer is a JSON pointer ("/a/0/b") or, with `line_ok`, a line number
// ("12", or "line 12" as the job-trace readers say).
bool is_pointer(const std::string& pointer, bool line_ok) {
  if (!pointer.empty() && pointer.front() == '/')
    return true;
  const std::string digits = pointer.rfind("line ", 0) == 0 ? pointer.substr(5) : pointer;
  return line_ok && !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

// Budgets scale with CAPSIM_FUZZ_SCALE (default 1) for longer exploratory runs.
size_t scaled(size_t budget) {
  const char* env = std::getenv("CAPSIM_FUZZ_SCALE");
  const double scale = env != nullptr ? std::atof(env) : 1.0;
  return static_cast<size_t>(static_cast<double>(budget) * std::max(scale, 0.0));
}

// A fixed-seed sample of `budget` single mutations of `doc`, then `budget / 4` mutants with two
// or three mutations each (cross-field rules only show with several changes at once).
std::vector<Mutant> mutants(const json& doc, size_t budget, std::uint32_t seed) {
  budget = scaled(budget);
  std::vector<Mutation> singles = single_mutations(doc);
  std::mt19937 rng(seed);
  std::vector<Mutant> out;
  std::vector<size_t> order(singles.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (size_t i = 0; i < order.size() && i < budget; ++i) {
    Mutant m{singles[order[i]].label, doc};
    singles[order[i]].apply(m.doc);
    out.push_back(std::move(m));
  }
  for (size_t i = 0; i < budget / 4; ++i) {
    Mutant m{"", doc};
    const size_t count = 2 + rng() % 2;
    for (size_t k = 0; k < count; ++k) {
      const Mutation& mutation = singles[rng() % singles.size()];
      try {
        json next = m.doc;
        mutation.apply(next);
        m.doc = std::move(next);
        m.label += (m.label.empty() ? "" : "; ") + mutation.label;
      } catch (const std::exception&) {
        // The pointer went with an earlier mutation: skip this one.
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

void expect_finite(const json& j, const std::string& what, const std::string& label) {
  std::vector<std::string> bad;
  find_non_finite(j, json::json_pointer(), bad);
  EXPECT_TRUE(bad.empty()) << label << ": " << what << " has non-finite numbers at "
                           << (bad.empty() ? "" : bad.front()) << " (" << bad.size() << " in all)";
}

void expect_finite(double v, const std::string& what, const std::string& label) {
  EXPECT_TRUE(std::isfinite(v)) << label << ": " << what << " = " << v;
}

// Runs `body` on one mutant: it must return normally or throw an InputError naming `file` (or
// a file it references, `other_files`) and a pointer.
void run_mutant(const std::string& label, const std::string& file, Tally& tally,
                const std::function<void()>& body, bool line_ok,
                const std::vector<std::string>& other_files) {
  if (std::getenv("CAPSIM_FUZZ_VERBOSE") != nullptr)
    std::fprintf(stderr, "fuzz: %s: %s\n", file.c_str(), label.c_str());
  try {
    body();
    ++tally.accepted;
  } catch (const io::InputError& e) {
    ++tally.rejected;
    const bool named = e.file() == file || std::find(other_files.begin(), other_files.end(),
                                                     e.file()) != other_files.end();
    EXPECT_TRUE(named) << label << ": the error names \"" << e.file() << "\", not \"" << file
                       << "\": " << e.what();
    EXPECT_TRUE(is_pointer(e.pointer(), line_ok))
        << label << ": the error has no JSON pointer: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << label << ": " << file << ": threw " << typeid(e).name() << " (not an "
                  << "InputError): " << e.what();
  } catch (...) {
    ADD_FAILURE() << label << ": " << file << ": threw a non-std exception";
  }
}

void report(const char* what, const Tally& t) {
  const double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t.start).count();
  std::printf("%s: %d mutants, %d accepted, %d rejected with InputError, %.2f s\n", what,
              t.accepted + t.rejected, t.accepted, t.rejected, s);
  EXPECT_GT(t.accepted, 0) << what;
  EXPECT_GT(t.rejected, 0) << what;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

std::vector<std::string> split_ws(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string w;
  while (in >> w)
    out.push_back(w);
  return out;
}

std::string join_ws(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i)
    out += (i > 0 ? "  " : "") + words[i];
  return out;
}

CsvMutant mutate_csv_line(const std::vector<std::string>& lines, size_t first_data_line,
                          std::mt19937& rng) {
  static const std::vector<std::string> kGarbage = {"nan",
                                                    "inf",
                                                    "-1",
                                                    "0",
                                                    "1e400",
                                                    "1e-300",
                                                    "abc",
                                                    "",
                                                    "\"",
                                                    "1,2",
                                                    "99999999999999999999999"};
  CsvMutant m{lines, ""};
  const size_t li = first_data_line + rng() % (lines.size() - first_data_line);
  std::string& line = m.lines[li];
  const std::string where = "line " + std::to_string(li + 1);
  if (rng() % 3 == 0 || line.empty()) {
    const size_t cut = line.empty() ? 0 : rng() % line.size();
    line.resize(cut);
    m.label = "truncate " + where + " at " + std::to_string(cut);
    return m;
  }
  std::vector<std::string> fields;
  std::stringstream row(line);
  for (std::string f; std::getline(row, f, ',');)
    fields.push_back(f);
  const size_t f = rng() % fields.size();
  if (rng() % 2 == 0) {
    fields[f] = kGarbage[rng() % kGarbage.size()];
    m.label = where + " field " + std::to_string(f) + " = " + fields[f];
  } else {
    fields.erase(fields.begin() + static_cast<std::ptrdiff_t>(f));
    m.label = where + " field " + std::to_string(f) + " deleted";
  }
  line.clear();
  for (size_t i = 0; i < fields.size(); ++i)
    line += (i > 0 ? "," : "") + fields[i];
  return m;
}

}  // namespace capsim::fuzz
