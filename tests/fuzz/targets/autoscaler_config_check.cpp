#include "tests/fuzz/targets/autoscaler_config_check.hpp"

#include "models/catalog.hpp"

#include "tests/fuzz/targets/fuzz_support.hpp"
#include "whatif/policy_source.hpp"

namespace capsim::fuzz {

void check_autoscaler_config(whatif::ConfigFormat format, const std::string& name,
                             const std::uint8_t* data, std::size_t size) {
  run_one([&] {
    const whatif::ConfigReading r =
        whatif::read_config_text(format, std::string(as_text(data, size)), name, builtin_catalog());
    const auto [file, text] = whatif::write_config(r.policy);
    const whatif::ConfigReading back =
        whatif::read_config_text(format, text, file, builtin_catalog());
    require(back.policy == r.policy, "the policy written back reads back unchanged");
  });
}

}  // namespace capsim::fuzz
