// `capsim simulate --profile FILE --engine analytic`: the profile reader (capsim.profile/v1) on
// any bytes, then an estimate of a shipped A100 scenario with the profile it accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/io/profile_io.hpp"
#include "models/io/scenario_io.hpp"

#include "tests/fuzz/targets/analytic_check.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  static const Scenario kScenario =
      load_scenario(fuzz::source_dir() + "/tests/data/scenarios/valid.json");
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("profile.json", fuzz::as_text(data, size));
    const HardwareProfile profile = load_profile(path);
    fuzz::require_finite(profile_to_json(profile), "profile_to_json");
    fuzz::check_estimate(kScenario, profile);
  });
  return 0;
}
