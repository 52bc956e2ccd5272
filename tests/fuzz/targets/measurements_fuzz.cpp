// `capsim calibrate fit FILE.json`: the capsim.measurements/v1 reader on any bytes, then the
// profile fit and the HTML report. A file naming a GPU outside the catalog asks for --gpu, an
// InputError like any other rejection.
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/profile_fit.hpp"

#include "io/profile_io.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("measurements.json", fuzz::as_text(data, size));
    const auto result = calibrate::fit_profile(calibrate::load_inputs({path}), {});
    fuzz::require_finite(io::profile_to_json(result->profile), "fitted profile");
    (void)calibrate::render_report(*result);
  });
  return 0;
}
