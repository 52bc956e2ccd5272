// `capsim simulate --profile FILE --engine analytic`: the profile reader (capsim.profile/v1) on
// any bytes, with the command's steps (the GPU a profile defines, the profile's fit to the
// scenario), then an estimate of a test A100 scenario with the profile it accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "models/catalog.hpp"

#include "io/profile_io.hpp"
#include "io/profile_reference.hpp"
#include "io/scenario_io.hpp"
#include "tests/fuzz/targets/analytic_check.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  static const Scenario kScenario =
      io::load_scenario(fuzz::source_dir() + "/tests/data/scenarios/valid.json");
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("profile.json", fuzz::as_text(data, size));
    Catalog catalog;
    io::define_gpu_of_profile(path, "", "", catalog);
    Scenario scenario = kScenario;
    scenario.profile_path = path;
    const HardwareProfile profile = io::resolve_profile(scenario);
    fuzz::require_finite(io::profile_to_json(profile), "profile_to_json");
    fuzz::check_estimate(scenario, profile);
  });
  return 0;
}
