// `capsim whatif FILE`: the what-if reader (capsim.whatif/v1, with the job trace and scenarios
// it names) on any bytes, then the policy expansion. The run itself forks one SimGrid process
// per policy, too slow per input; tests/whatif runs it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/targets/fuzz_support.hpp"
#include "whatif/whatif_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("whatif.json", fuzz::as_text(data, size));
    const whatif::WhatIf w = whatif::load_whatif(path);
    fuzz::require(!whatif::expand_policies(w).empty(), "expand_policies: no policy");
  });
  return 0;
}
