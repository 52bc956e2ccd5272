// `capsim simulate --engine analytic FILE`: the scenario reader (capsim.scenario/v1) on any
// bytes, then the analytic estimate of a scenario it accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/fuzz/targets/analytic_check.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("scenario.json", fuzz::as_text(data, size));
    const Scenario scenario = io::load_scenario(path);
    fuzz::check_estimate(scenario, io::resolve_profile(scenario));
  });
  return 0;
}
