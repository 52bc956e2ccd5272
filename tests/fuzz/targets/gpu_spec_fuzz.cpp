// `capsim calibrate fit --gpu-spec FILE`: a capsim.gpu/v1 file on any bytes. The figures an
// accepted file gives must round-trip through gpu_spec_to_json exactly, and the GPU it defines
// joins a fresh catalog, one per input.
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"

#include "io/gpu_spec_io.hpp"
#include "io/json_reader.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const std::string path = fuzz::write_scratch("gpu.json", fuzz::as_text(data, size));
    const nlohmann::json doc = io::JsonReader::parse_file(path);
    io::JsonReader reader(doc, path);
    reader.expect_schema(io::kGpuSchema);
    const GpuSpec gpu = io::read_gpu_spec(reader);
    const nlohmann::json written = io::gpu_spec_to_json(gpu);
    io::JsonReader again(written, "gpu_spec_to_json");
    fuzz::require(io::read_gpu_spec(again) == gpu,
                  "gpu_spec_to_json does not round-trip " + written.dump());
    Catalog catalog;
    const GpuSpec defined = io::load_gpu_definition(path, catalog);
    fuzz::require(defined == gpu, "the definition differs from the figures read");
    fuzz::require(catalog.find_gpu(gpu.name) != nullptr && *catalog.find_gpu(gpu.name) == gpu,
                  "a defined GPU is not in the catalog");
  });
  return 0;
}
