// `capsim validate --engine analytic FILE` and `capsim calibrate step FILE` (the same format,
// capsim.validation/v1): the reader on any bytes, an estimate of the first four cases it accepts
// and the software-efficiency fit over them when there are at most two.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "calibrate/step_fit.hpp"

#include "io/profile_io.hpp"
#include "io/validation_io.hpp"
#include "tests/fuzz/targets/analytic_check.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

namespace {
constexpr std::size_t kMaxEstimatedCases = 4;
constexpr std::size_t kMaxFitCases = 2;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("validation.json", fuzz::as_text(data, size));
    const io::ValidationFile file = io::load_validation_file(path);
    // Estimates and the fit are the scenario target's and the fit's own work repeated per case:
    // past the first few they would take most of the run's time from the reader.
    for (size_t i = 0; i < file.cases.size() && i < kMaxEstimatedCases; ++i)
      fuzz::check_estimate(file.cases[i].scenario, io::resolve_profile(file.cases[i].scenario));
    // The fit re-estimates every case some hundred times.
    if (!file.rejected.empty() || file.cases.empty() || file.cases.size() > kMaxFitCases)
      return;
    // `capsim calibrate step` fits only runs that share one profile; the attention fit too on
    // every other input, so both searches run.
    const HardwareProfile base = io::resolve_profile(file.cases.front().scenario);
    for (const io::ValidationCase& c : file.cases) {
      if (io::resolve_profile(c.scenario).name != base.name)
        return;
    }
    const bool fit_attention = file.cases.size() % 2 == 0;
    const calibrate::StepFit fit =
        calibrate::fit_software_efficiency(file.cases, base, path, fit_attention);
    fuzz::require(std::isfinite(fit.software_efficiency) && std::isfinite(fit.attention_scale),
                  "step fit: a non-finite factor");
    for (const double t : fit.predicted_after_s)
      fuzz::require(std::isfinite(t) && t > 0.0, "step fit: predicted_after_s");
  });
  return 0;
}
