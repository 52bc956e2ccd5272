#include "io/gpu_spec_io.hpp"

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "models/byte_units.hpp"

#include "io/input_error.hpp"
#include "io/text_format.hpp"
#include "io/units.hpp"

namespace capsim::io {
namespace {

constexpr size_t kMaxNameLength = 64;

bool is_architecture_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

std::string read_name(JsonReader& r) {
  std::string name = r.required_string("name");
  const bool printable = std::all_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) > ' ' && static_cast<unsigned char>(c) < 0x7f;
  });
  if (name.empty() || name.size() > kMaxNameLength || !printable) {
    throw r.error(
        "name",
        "expected a GPU name of 1-64 printable characters without spaces, got \"" + name + "\"");
  }
  return name;
}

std::string read_architecture(JsonReader& r) {
  std::string arch = r.required_string("architecture");
  if (arch.empty() || arch.size() > 32 ||
      !std::all_of(arch.begin(), arch.end(), is_architecture_char)) {
    throw r.error(
        "architecture",
        "expected a lower-case architecture name like \"hopper\" or \"blackwell\", got \"" + arch +
            "\"");
  }
  return arch;
}

struct Scale {
  double factor;
  const char* prefix;
};

// Formats `value` in `unit` under the scale (decimal or binary prefix) that needs the fewest
// significant digits to parse back to exactly `value`; in the bare unit at full precision if
// none does.
std::string exact_text(double value, std::initializer_list<Scale> scales, const char* unit,
                       std::optional<double> (*parse)(std::string_view)) {
  for (int digits = 6; digits <= 17; ++digits) {
    for (const Scale& scale : scales) {
      std::string text =
          printf_string("%.*g%s%s", digits, value / scale.factor, scale.prefix, unit);
      if (parse(text) == value)
        return text;
    }
  }
  return printf_string("%.17g%s", value, unit);
}

std::string flop_rate_text(double flop_per_s) {
  return exact_text(flop_per_s, {{1e12, "T"}}, "FLOPS", units::parse_flop_per_s);
}

std::string bandwidth_text(double bytes_per_s) {
  return exact_text(bytes_per_s, {{1e9, "G"}}, "Bps", units::parse_bandwidth_bytes_per_s);
}

}  // namespace

GpuSpec read_gpu_spec(JsonReader& r) {
  GpuSpec g{};
  g.name = read_name(r);
  g.architecture = read_architecture(r);
  g.peak_bf16_flop_per_s = r.required_flop_rate("peak_bf16");
  g.peak_fp16_flop_per_s = r.optional_flop_rate("peak_fp16").value_or(g.peak_bf16_flop_per_s);
  g.peak_fp8_flop_per_s = r.optional_flop_rate("peak_fp8").value_or(0.0);
  g.peak_fp4_flop_per_s = r.optional_flop_rate("peak_fp4").value_or(0.0);
  // Datasheets give TF32 at half the 16-bit rate (A100, H100, B200); it only costs fp32 GEMMs.
  g.peak_tf32_flop_per_s = r.optional_flop_rate("peak_tf32").value_or(g.peak_bf16_flop_per_s / 2.0);
  g.hbm_capacity_bytes = r.required_size("hbm_capacity");
  if (g.hbm_capacity_bytes < kGiB || g.hbm_capacity_bytes > 65536 * kGiB) {
    throw r.error("hbm_capacity",
                  "expected between 1GiB and 64TiB, got " + r.describe("hbm_capacity"));
  }
  g.hbm_bandwidth_bytes_per_s = r.required_bandwidth("hbm_bandwidth");
  g.num_sms = static_cast<int>(r.required_int("sms", 1, 4096));
  g.nvlink_generation = 0;  // not used by any model; the bandwidth below is what counts
  g.nvlink_bandwidth_bytes_per_s = r.required_bandwidth("nvlink_bandwidth");
  g.has_nvls = r.optional_bool("nvls", false);
  r.finish();
  return g;
}

GpuSpec read_gpu_name_or_definition(JsonReader& r, const std::string& key, Catalog& catalog) {
  if (r.has(key) && r.json().at(key).is_object()) {
    JsonReader object = r.object(key);
    GpuSpec gpu = read_gpu_spec(object);
    object.throw_key_problems();  // the catalog keeps a definition: never one with stand-ins
    const std::string problem = catalog.define_gpu(gpu);
    if (!problem.empty())
      throw object.error("name", problem);
    return gpu;
  }
  if (r.has(key) && !r.json().at(key).is_string()) {
    throw r.error(key, "expected a GPU name or an object describing one, got " +
                           describe_json(r.json().at(key)));
  }
  const std::string name = r.required_string(key);
  const GpuSpec* gpu = catalog.find_gpu(name);
  if (gpu == nullptr) {
    throw r.error(key, "unknown GPU \"" + name +
                           "\"; known GPUs: " + join_names(catalog.gpu_names()) +
                           " (or describe new hardware with an object, docs/scenario.md)");
  }
  return *gpu;
}

GpuSpec load_gpu_definition(const std::string& path, Catalog& catalog) {
  const nlohmann::json doc = JsonReader::parse_file(path);
  return JsonReader::read_document(doc, path, [&catalog](JsonReader& reader) {
    reader.expect_schema(kGpuSchema);
    GpuSpec gpu = read_gpu_spec(reader);
    const std::string problem = catalog.define_gpu(gpu);
    if (!problem.empty())
      throw reader.error("name", problem);
    return gpu;
  });
}

nlohmann::json gpu_spec_to_json(const GpuSpec& g) {
  nlohmann::json j = {{"name", g.name},
                      {"architecture", g.architecture},
                      {"peak_bf16", flop_rate_text(g.peak_bf16_flop_per_s)},
                      {"peak_fp16", flop_rate_text(g.peak_fp16_flop_per_s)},
                      {"peak_tf32", flop_rate_text(g.peak_tf32_flop_per_s)},
                      {"hbm_capacity", exact_text(g.hbm_capacity_bytes, {{1e9, "G"}, {kGiB, "Gi"}},
                                                  "B", units::parse_size_bytes)},
                      {"hbm_bandwidth", bandwidth_text(g.hbm_bandwidth_bytes_per_s)},
                      {"sms", g.num_sms},
                      {"nvlink_bandwidth", bandwidth_text(g.nvlink_bandwidth_bytes_per_s)},
                      {"nvls", g.has_nvls}};
  if (g.peak_fp8_flop_per_s > 0.0)
    j["peak_fp8"] = flop_rate_text(g.peak_fp8_flop_per_s);
  if (g.peak_fp4_flop_per_s > 0.0)
    j["peak_fp4"] = flop_rate_text(g.peak_fp4_flop_per_s);
  return j;
}

nlohmann::json gpu_reference_json(const GpuSpec& gpu) {
  if (is_builtin_gpu(gpu.name))
    return gpu.name;
  return gpu_spec_to_json(gpu);
}

}  // namespace capsim::io
