#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "models/catalog.hpp"
#include "models/gpu_catalog.hpp"

#include "io/json_reader.hpp"

namespace capsim::io {

inline constexpr const char* kGpuSchema = "capsim.gpu/v1";

// Reads a GPU's datasheet figures (name, architecture, dense tensor-core peaks, HBM, SMs,
// NVLink; format: docs/scenario.md, "Hardware capsim does not know") from an object. Checks
// keys, units and ranges; errors are InputErrors naming the file and JSON pointer.
[[nodiscard]] GpuSpec read_gpu_spec(JsonReader& reader);

// Reads the GPU at `key`: a name `catalog` knows, or an object describing new hardware, which
// it adds to `catalog` (Catalog::define_gpu). Returns the GPU. An unknown name, a bad object or
// a name defined twice with other figures is an InputError at `key`.
[[nodiscard]] GpuSpec read_gpu_name_or_definition(JsonReader& reader, const std::string& key,
                                                  Catalog& catalog);

// Reads a `capsim.gpu/v1` file (the same object with its "schema" key), adds the GPU to
// `catalog` and returns it (`capsim calibrate fit --gpu-spec`).
[[nodiscard]] GpuSpec load_gpu_definition(const std::string& path, Catalog& catalog);

// Writes a GPU as read_gpu_spec reads it; every figure round-trips exactly, so a definition
// written into a profile or plan output and read back defines the same GPU.
[[nodiscard]] nlohmann::json gpu_spec_to_json(const GpuSpec& gpu);

// The "gpu" value outputs write: the name of a built-in GPU, the whole definition otherwise.
[[nodiscard]] nlohmann::json gpu_reference_json(const GpuSpec& gpu);

}  // namespace capsim::io
