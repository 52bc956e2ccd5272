// `capsim calibrate fit gemm.csv`: the GEMM CSV reader on any text and the rows it accepts. The
// profile fit of those rows is gemm_fit_fuzz.cpp (a fit per input runs about a thousand times
// slower).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/measurements.hpp"

#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("gemm.csv", fuzz::as_text(data, size));
    for (const auto& row : calibrate::read_gemm_csv(path)) {
      fuzz::require(std::isfinite(row.m) && std::isfinite(row.n) && std::isfinite(row.k) &&
                        std::isfinite(row.batch) && std::isfinite(row.flop_per_s),
                    "a GEMM row with a non-finite figure");
      fuzz::require(row.m > 0 && row.n > 0 && row.k > 0 && row.batch > 0 && row.flop_per_s > 0,
                    "a GEMM row with a non-positive figure");
    }
  });
  return 0;
}
