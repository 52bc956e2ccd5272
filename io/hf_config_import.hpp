#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/input_error.hpp"

namespace capsim::io {

// What a config.json does not say: the model's name and its training sequence length.
struct HfImportOptions {
  std::string name;    // "": the config's first architecture
  int seq_length = 0;  // the training sequence length; 0: left out of the model
};

// A scenario's `model` object read from a Hugging Face config.json, and notes on what the
// reading assumed or left out (each naming the file and key).
struct HfImport {
  nlohmann::json model;
  std::vector<InputProblem> notes;
};

// Reads a Hugging Face transformers config (`config`, read from `file`) of a supported
// architecture (LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM,
// Qwen3ForCausalLM, Qwen3MoeForCausalLM, DeepseekV2ForCausalLM, DeepseekV3ForCausalLM,
// GptOssForCausalLM) into a `model` object that read_model accepts; docs/import.md lists each
// key's mapping. Throws InputError naming the file and key for an unknown architecture, a
// missing or bad value, or a layer pattern capsim does not model.
[[nodiscard]] HfImport import_hf_config(const nlohmann::json& config, const std::string& file,
                                        const HfImportOptions& options);

}  // namespace capsim::io
