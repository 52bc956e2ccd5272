// `capsim import hf CONFIG.json`: the Hugging Face config reader on any bytes; a model it
// accepts must be one a scenario's model reader accepts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/hf_config_import.hpp"
#include "io/json_reader.hpp"
#include "io/scenario_io.hpp"
#include "tests/fuzz/targets/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace capsim;
  fuzz::run_one([&] {
    const nlohmann::json config =
        io::JsonReader::parse_text(fuzz::as_text(data, size), "fuzz.json");
    io::HfImportOptions options;
    options.seq_length = 4096;
    const nlohmann::json model = io::import_hf_config(config, "fuzz.json", options).model;
    (void)io::JsonReader::read_document(model, "model",
                                        [](io::JsonReader& r) { return io::read_model(r); });
  });
  return 0;
}
