// YAML inputs (Kubernetes manifests, autoscaler configurations, training recipes): the YAML
// reader on any bytes; what it accepts must serialise as JSON again.
#include <cstddef>
#include <cstdint>

#include "io/yaml_document.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const nlohmann::json doc = io::parse_yaml_text(fuzz::as_text(data, size), "fuzz.yaml");
    (void)doc.dump();
  });
  return 0;
}
