// Robustness of the calibration readers (`capsim calibrate fit`): nccl-tests logs, the GEMM CSV
// and capsim.measurements/v1 files, mutated deterministically (tests/fuzz/mutation_fuzz.hpp). A
// mutant either loads and fits to finite numbers or is rejected with an InputError naming the file
// and a line number (text) or JSON pointer (JSON).
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "calibrate/collective_fit.hpp"
#include "calibrate/nccl_log.hpp"
#include "calibrate/profile_fit.hpp"

#include "io/input_error.hpp"
#include "io/profile_io.hpp"
#include "tests/fuzz/mutation_fuzz.hpp"
#include "tests/test_paths.hpp"

namespace capsim {
namespace {

using capsim::testing::kTestDataDir;
using fuzz::expect_finite;
using fuzz::join_lines;
using fuzz::join_ws;
using fuzz::Mutant;
using fuzz::mutants;
using fuzz::read_json;
using fuzz::read_text;
using fuzz::report;
using fuzz::run_mutant;
using fuzz::scaled;
using fuzz::split_lines;
using fuzz::split_ws;
using fuzz::Tally;

TEST(CalibrationFuzzTest, NcclLogs) {
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
  report("nccl logs", tally);
}

// A capsim.measurements/v1 file with every section (machine header, four collectives, bf16 and
// fp8 GEMMs, overlap): read and fitted (`capsim calibrate fit FILE`), profile and report.
TEST(CalibrationFuzzTest, Measurements) {
  const fuzz::ScratchDir dir;
  Tally tally;
  const std::string source = kTestDataDir + "/measurements/every-optional-key.json";
  for (const Mutant& m : mutants(read_json(source), 500, 61)) {
    const std::string path = dir.write("measurements.json", m.doc.dump(2));
    run_mutant(m.label, path, tally, [&] {
      const calibrate::CalibrationInputs inputs = calibrate::load_inputs({path});
      try {
        const auto result = calibrate::fit_profile(inputs, {});
        expect_finite(io::profile_to_json(result->profile), "fitted profile", m.label);
        (void)calibrate::render_report(*result);
      } catch (const io::InputError& e) {
        if (e.file() != "--gpu")  // a GPU name outside the catalog asks for --gpu: expected
          throw;
      }
    });
  }
  report("measurements", tally);
}

// The GEMM CSV: one field of a data row garbled, a field deleted or the row cut short, then read
// and fitted with the A100 rows (`capsim calibrate fit gemm.csv --gpu A100-SXM4-80GB`).
TEST(CalibrationFuzzTest, GemmCsv) {
  const fuzz::ScratchDir dir;
  Tally tally;
  std::mt19937 rng(71);
  const std::vector<std::string> lines = fuzz::split_lines(
      fuzz::read_text(std::string(CAPSIM_DATA_DIR) + "/gemm/gemm_measurements.csv"));
  ASSERT_GT(lines.size(), 40U);
  const std::vector<std::string> a100_rows(lines.begin(), lines.begin() + 40);
  calibrate::ProfileFitOptions options;
  options.gpu = "A100-SXM4-80GB";
  for (size_t k = 0; k < fuzz::scaled(300); ++k) {
    const fuzz::CsvMutant m = fuzz::mutate_csv_line(a100_rows, 1, rng);
    const std::string path = dir.write("gemm.csv", fuzz::join_lines(m.lines));
    run_mutant(
        m.label, path, tally,
        [&] {
          const auto result = calibrate::fit_profile(calibrate::load_inputs({path}), options);
          expect_finite(io::profile_to_json(result->profile), "fitted profile", m.label);
        },
        true);
  }
  report("gemm csv", tally);
}

}  // namespace
}  // namespace capsim
