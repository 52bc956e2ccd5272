// `capsim simulate --set PATH=VALUE ...`: each input line is one --set argument, parsed as the
// CLI parses it and applied to a valid scenario, which is then read and estimated.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_util.hpp"
#include "io/profile_io.hpp"
#include "io/scenario_io.hpp"
#include "tests/fuzz/targets/analytic_check.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  static const std::string kScenario =
      fuzz::source_dir() + "/tests/data/scenarios/every-optional-key.json";
  fuzz::run_one([&] {
    std::vector<io::ScenarioOverride> overrides;
    std::string_view text = fuzz::as_text(data, size);
    while (!text.empty()) {
      const size_t end = text.find('\n');
      overrides.push_back(cli::parse_override(std::string(text.substr(0, end))));
      text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    }
    const Scenario scenario = io::load_scenario(kScenario, overrides);
    fuzz::check_estimate(scenario, io::resolve_profile(scenario));
  });
  return 0;
}
