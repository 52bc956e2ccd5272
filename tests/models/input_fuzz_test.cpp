// Robustness of every input reader: deterministic mutations of the shipped valid inputs (each JSON
// leaf replaced by a value of another type, zero, +-1, +-1e308, 1e-308, huge integers, empty and
// nonsense strings, empty arrays and objects, garbled unit strings; each key deleted; an unknown
// key added to each object; nccl-tests log lines truncated, garbled and cut short of columns).
// Every mutant must either load -- and then give finite numbers on the path the CLI runs it
// through -- or be rejected with an InputError naming the file and a JSON pointer (a line number
// for logs). Any other exception, a crash or a NaN/inf is a failure. Mutants are sampled with a
// fixed-seed std::mt19937, so every run tries the same ones (about 9,000 in about 5 s).
// Exploring: CAPSIM_FUZZ_SCALE=25 multiplies every budget (clean at 25 when written);
// CAPSIM_FUZZ_VERBOSE=1 prints each mutant before it runs, to find the one that crashes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/collective_fit.hpp"
#include "calibrate/nccl_log.hpp"
#include "calibrate/step_fit.hpp"
#include "models/analytic_estimator.hpp"
#include "models/io/input_error.hpp"
#include "models/io/json_reader.hpp"
#include "models/io/profile_io.hpp"
#include "models/io/result_io.hpp"
#include "models/io/scenario_io.hpp"
#include "models/io/validation_io.hpp"
#include "planner/plan_io.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "sim/whatif/results.hpp"
#include "sim/whatif/runner.hpp"
#include "sim/whatif/whatif_io.hpp"

#include <unistd.h>

namespace capsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kSource = CAPSIM_SOURCE_DIR;
const std::string kTestData = CAPSIM_TEST_DATA_DIR;

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

// A scratch folder for the mutated files, removed at the end of each test.
class ScratchDir {
 public:
  ScratchDir()
      : path_(fs::temp_directory_path() /
              ("capsim_input_fuzz_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `text` to `name` in the folder and returns its path.
  [[nodiscard]] std::string write(const std::string& name, const std::string& text) const {
    const std::string path = (path_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

 private:
  fs::path path_;
};

struct Mutant {
  std::string label;  // what was changed, for failure messages
  json doc;
};

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

void expect_finite(const json& j, const std::string& what, const std::string& label) {
  std::vector<std::string> bad;
  find_non_finite(j, json::json_pointer(), bad);
  EXPECT_TRUE(bad.empty()) << label << ": " << what << " has non-finite numbers at "
                           << (bad.empty() ? "" : bad.front()) << " (" << bad.size() << " in all)";
}

void expect_finite(double v, const std::string& what, const std::string& label) {
  EXPECT_TRUE(std::isfinite(v)) << label << ": " << what << " = " << v;
}

struct Tally {
  int accepted = 0;
  int rejected = 0;
};

// Whether an InputError's pointer is a JSON pointer ("/a/0/b") or, with `line_ok`, a line number.
bool is_pointer(const std::string& pointer, bool line_ok) {
  if (!pointer.empty() && pointer.front() == '/')
    return true;
  return line_ok && !pointer.empty() &&
         std::all_of(pointer.begin(), pointer.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Runs `body` on one mutant: it must return normally or throw an InputError naming `file` (or
// a file it references, `other_files`) and a pointer.
void run_mutant(const std::string& label, const std::string& file, Tally& tally,
                const std::function<void()>& body, bool line_ok = false,
                const std::vector<std::string>& other_files = {}) {
  if (std::getenv("CAPSIM_FUZZ_VERBOSE") != nullptr)
    std::fprintf(stderr, "fuzz: %s: %s\n", file.c_str(), label.c_str());
  try {
    body();
    ++tally.accepted;
  } catch (const InputError& e) {
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

void report(const char* what, const Tally& t, std::chrono::steady_clock::time_point start) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %d mutants, %d accepted, %d rejected with InputError, %.2f s\n", what,
              t.accepted + t.rejected, t.accepted, t.rejected, s);
}

// The analytic path of `capsim simulate --engine analytic`: finite, positive times.
void check_scenario_outputs(const Scenario& scenario, const HardwareProfile& profile,
                            const std::string& label) {
  const SimulationResult r = estimate_iteration(scenario, profile);
  expect_finite(result_to_json(r), "estimate_iteration", label);
  expect_finite(r.memory.peak_bytes, "peak memory", label);
  EXPECT_GT(r.iteration_time_s, 0.0) << label;
}

TEST(InputFuzzTest, Scenarios) {
  const auto start = std::chrono::steady_clock::now();
  const ScratchDir dir;
  Tally tally;
  std::vector<std::string> sources = {kTestData + "/scenarios/valid.json",
                                      kTestData + "/scenarios/every-optional-key.json"};
  for (const char* name : {"gpt3-175b-selene-1024", "gpt-30b-p4d", "llama3-70b-p5"})
    sources.push_back(kSource + "/scenarios/" + name + "/scenario.json");
  std::uint32_t seed = 1;
  for (const auto& source : sources) {
    for (const Mutant& m : mutants(read_json(source), 700, seed++)) {
      const std::string path = dir.write("scenario.json", m.doc.dump(2));
      run_mutant(m.label, path, tally, [&] {
        const Scenario s = load_scenario(path);
        check_scenario_outputs(s, resolve_profile(s), source + ": " + m.label);
      });
    }
  }
  report("scenarios", tally, start);
  EXPECT_GT(tally.accepted, 0);
  EXPECT_GT(tally.rejected, 0);
}

TEST(InputFuzzTest, Profiles) {
  const auto start = std::chrono::steady_clock::now();
  const ScratchDir dir;
  Tally tally;
  const Scenario a100 = load_scenario(kTestData + "/scenarios/valid.json");
  const Scenario h100 = load_scenario(kSource + "/scenarios/llama3-70b-p5/scenario.json");
  std::uint32_t seed = 11;
  for (const char* name : {"a100-ib.json", "h100-efa.json"}) {
    const std::string source = kSource + "/scenarios/profiles/" + name;
    const Scenario& scenario = name[0] == 'a' ? a100 : h100;
    for (const Mutant& m : mutants(read_json(source), 1200, seed++)) {
      const std::string path = dir.write(name, m.doc.dump(2));
      run_mutant(m.label, path, tally, [&] {
        // `capsim simulate --profile P.json --engine analytic`.
        const HardwareProfile p = load_profile(path);
        check_scenario_outputs(scenario, p, source + ": " + m.label);
      });
    }
  }
  report("profiles", tally, start);
  EXPECT_GT(tally.accepted, 0);
}

// A validation file with the first `n` cases of data/validation/dev.json.
json validation_subset(size_t n) {
  json doc = read_json(kSource + "/data/validation/dev.json");
  json cases = json::array();
  for (size_t i = 0; i < n && i < doc.at("cases").size(); ++i)
    cases.push_back(doc.at("cases").at(i));
  doc["cases"] = cases;
  return doc;
}

TEST(InputFuzzTest, ValidationCasesAndStepRuns) {
  const auto start = std::chrono::steady_clock::now();
  const ScratchDir dir;
  Tally tally;
  // `capsim validate --engine analytic` on every mutant; `capsim calibrate step` (the same file
  // format) on a sample of them.
  const std::vector<Mutant> all = mutants(validation_subset(2), 700, 21);
  for (size_t i = 0; i < all.size(); ++i) {
    const Mutant& m = all[i];
    const std::string path = dir.write("runs.json", m.doc.dump(2));
    run_mutant(m.label, path, tally, [&] {
      const std::vector<ValidationCase> cases = load_validation_cases(path);
      for (const auto& c : cases)
        check_scenario_outputs(c.scenario, resolve_profile(c.scenario), m.label);
      if (i % 4 == 0) {
        const calibrate::StepFit fit = calibrate::fit_software_efficiency(
            cases, resolve_profile(cases.front().scenario), path);
        expect_finite(fit.software_efficiency, "software_efficiency", m.label);
        for (const double t : fit.predicted_after_s)
          expect_finite(t, "predicted_after_s", m.label);
      }
    });
  }
  report("validation/step runs", tally, start);
  EXPECT_GT(tally.accepted, 0);
}

TEST(InputFuzzTest, Plans) {
  const auto start = std::chrono::steady_clock::now();
  const ScratchDir dir;
  Tally tally;
  // The default plan: read only (its search takes about a second).
  for (const Mutant& m : mutants(read_json(kSource + "/scenarios/plans/default.json"), 600, 31)) {
    const std::string path = dir.write("plan.json", m.doc.dump(2));
    run_mutant(m.label, path, tally, [&] { (void)planner::load_plan(path); });
  }
  // Small plans, one with every optional key: read and searched (`capsim plan --engine analytic`).
  std::uint32_t seed = 32;
  for (const char* name : {"small.json", "every-optional-key.json"}) {
    for (const Mutant& m : mutants(read_json(kTestData + "/plans/" + name), 120, seed++)) {
      const std::string path = dir.write(name, m.doc.dump(2));
      run_mutant(m.label, path, tally, [&] {
        const planner::PlanSpec plan = planner::load_plan(path);
        planner::PlanOptions options;
        options.jobs = 1;
        const planner::PlanResult result = planner::run_plan(plan, options);
        expect_finite(planner::plan_to_json(plan, result, 0, false), "plan JSON", m.label);
        (void)planner::plan_table(plan, result, 0);
      });
    }
  }
  report("plans", tally, start);
  EXPECT_GT(tally.accepted, 0);
}

TEST(InputFuzzTest, WhatIfs) {
  const auto start = std::chrono::steady_clock::now();
  Tally tally;
  const std::string whatif_dir = kSource + "/scenarios/whatif";
  const std::string default_file = whatif_dir + "/default.json";
  const std::string trace_file = whatif_dir + "/philly_day.csv";
  for (const Mutant& m : mutants(read_json(default_file), 600, 41)) {
    run_mutant(m.label, default_file, tally,
               [&] {
                 const whatif::WhatIf w = whatif::read_whatif(m.doc, default_file, whatif_dir);
                 (void)whatif::expand_policies(w);
               },
               false, {trace_file});
  }
  // Small what-ifs, one with every optional key: read and run (`capsim whatif`, one replica).
  const std::string tiny_dir = kTestData + "/whatif";
  std::uint32_t seed = 42;
  for (const char* name : {"tiny.json", "every-optional-key.json"}) {
    const std::string file = tiny_dir + "/" + name;
    for (const Mutant& m : mutants(read_json(file), 80, seed++)) {
      run_mutant(m.label, file, tally,
                 [&] {
                   const whatif::WhatIf w = whatif::read_whatif(m.doc, file, tiny_dir);
                   const auto policies = whatif::expand_policies(w);
                   const auto runs = whatif::run_all(w, policies, 1, 1);
                   expect_finite(whatif::summary_json(w, runs), "whatif summary", m.label);
                 },
                 false, {tiny_dir + "/jobs.csv"});
    }
  }
  report("whatifs", tally, start);
  EXPECT_GT(tally.accepted, 0);
}

// nccl-tests logs: one data line changed at a time.
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

TEST(InputFuzzTest, NcclLogs) {
  const auto start = std::chrono::steady_clock::now();
  Tally tally;
  std::mt19937 rng(51);
  const std::vector<std::string> garbage = {"nan",
                                            "inf",
                                            "-inf",
                                            "-1",
                                            "0",
                                            "1e400",
                                            "1e-400",
                                            "abc",
                                            "1.2.3",
                                            "-0",
                                            "99999999999999999999999",
                                            "N/A"};
  for (const char* name :
       {"a100_ibhdr_4node32gpu_allreduce_coreweave2023jan.txt", "a100_1node_sendrecv_liplus.txt",
        "h100_p5_2node_allreduce_awsome.txt", "a100_p4d_2node_allreduce_awsdlami2020ring.txt"}) {
    const std::string file = std::string(CAPSIM_DATA_DIR) + "/nccl/" + name;
    const std::vector<std::string> lines = split_lines(read_text(file));
    std::vector<size_t> data_lines;
    for (size_t i = 0; i < lines.size(); ++i) {
      const auto words = split_ws(lines[i]);
      if (words.size() >= 5 && !lines[i].empty() && lines[i].find('#') == std::string::npos)
        data_lines.push_back(i);
    }
    ASSERT_FALSE(data_lines.empty()) << name;
    for (size_t k = 0; k < scaled(150); ++k) {
      std::vector<std::string> mutated = lines;
      const size_t li = data_lines[rng() % data_lines.size()];
      std::vector<std::string> words = split_ws(lines[li]);
      std::string label;
      switch (rng() % 5) {
        case 0: {  // truncate
          const size_t cut = rng() % lines[li].size();
          mutated[li] = lines[li].substr(0, cut);
          label = "truncate line " + std::to_string(li + 1) + " at " + std::to_string(cut);
          break;
        }
        case 1:
        case 2: {  // a number replaced by garbage
          const size_t w = rng() % words.size();
          words[w] = garbage[rng() % garbage.size()];
          mutated[li] = join_ws(words);
          label =
              "line " + std::to_string(li + 1) + " column " + std::to_string(w) + " = " + words[w];
          break;
        }
        case 3: {  // a column deleted
          const size_t w = rng() % words.size();
          words.erase(words.begin() + static_cast<std::ptrdiff_t>(w));
          mutated[li] = join_ws(words);
          label = "line " + std::to_string(li + 1) + " column " + std::to_string(w) + " deleted";
          break;
        }
        default: {  // two lines swapped (sizes out of order)
          const size_t other = data_lines[rng() % data_lines.size()];
          std::swap(mutated[li], mutated[other]);
          label =
              "lines " + std::to_string(li + 1) + " and " + std::to_string(other + 1) + " swapped";
          break;
        }
      }
      run_mutant(
          label, name, tally,
          [&] {
            const calibrate::CollectiveCurve c =
                calibrate::parse_nccl_log(join_lines(mutated), name);
            ASSERT_FALSE(c.samples.empty()) << label;
            for (const auto& s : c.samples) {
              expect_finite(s.bytes, "bytes", label);
              expect_finite(s.time_s, "time", label);
              expect_finite(s.time_in_place_s, "in-place time", label);
              EXPECT_GT(s.best_time_s(), 0.0) << label;
            }
            // `capsim calibrate fit`: the curve's fit gives finite times.
            const CollectiveFit fit = calibrate::fit_collective({c}, {});
            for (const double t : calibrate::model_times(fit, c))
              expect_finite(t, "fitted time", label);
          },
          true);
    }
  }
  report("nccl logs", tally, start);
  EXPECT_GT(tally.accepted, 0);
  EXPECT_GT(tally.rejected, 0);
}

}  // namespace
}  // namespace capsim
