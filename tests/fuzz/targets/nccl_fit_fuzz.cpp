// `capsim calibrate fit LOG`: the nccl-tests log reader on any text, then the collective fit of
// the curve it accepts and the fitted times.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "calibrate/collective_fit.hpp"
#include "calibrate/nccl_log.hpp"

#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const calibrate::CollectiveCurve curve =
        calibrate::parse_nccl_log(fuzz::as_text(data, size), "nccl_allreduce.txt");
    const CollectiveFit fit = calibrate::fit_collective({curve}, {});
    for (const double t : calibrate::model_times(fit, curve))
      fuzz::require(std::isfinite(t), "a non-finite fitted time");
  });
  return 0;
}
