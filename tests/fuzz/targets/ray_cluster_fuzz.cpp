// The ray cluster reader of what-if policies (whatif/policy_source.hpp) on any bytes; what it
// accepts must write back and read back unchanged.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/targets/autoscaler_config_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  capsim::fuzz::check_autoscaler_config(capsim::whatif::ConfigFormat::kRay, "ray-cluster.yaml",
                                        data, size);
  return 0;
}
