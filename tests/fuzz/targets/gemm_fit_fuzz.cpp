// `capsim calibrate fit gemm.csv --gpu A100-SXM4-80GB`: the GEMM CSV reader on any text, then
// the profile fit of the rows it accepts and its report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/measurements.hpp"
#include "calibrate/profile_fit.hpp"

#include "io/profile_io.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("gemm.csv", fuzz::as_text(data, size));
    calibrate::ProfileFitOptions options;
    options.gpu = "A100-SXM4-80GB";
    const auto result = calibrate::fit_profile(calibrate::load_inputs({path}), options);
    fuzz::require_finite(io::profile_to_json(result->profile), "fitted profile");
    (void)calibrate::render_report(*result);
  });
  return 0;
}
