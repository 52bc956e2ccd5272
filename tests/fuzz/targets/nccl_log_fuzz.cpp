// `capsim calibrate fit LOG`: the nccl-tests log reader on any text. The collective fit of what
// it accepts is nccl_fit_fuzz.cpp (a fit per input runs about a thousand times slower).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "calibrate/nccl_log.hpp"

#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    // The name says all-reduce when the text does not (the reader's fallback, like the shipped
    // logs' names).
    const calibrate::CollectiveCurve curve =
        calibrate::parse_nccl_log(fuzz::as_text(data, size), "nccl_allreduce.txt");
    fuzz::require(!curve.samples.empty(), "an accepted log without samples");
    for (const auto& s : curve.samples) {
      fuzz::require(std::isfinite(s.bytes) && std::isfinite(s.time_s) &&
                        std::isfinite(s.time_in_place_s) && s.best_time_s() > 0.0,
                    "a sample with a non-finite or non-positive figure");
    }
  });
  return 0;
}
