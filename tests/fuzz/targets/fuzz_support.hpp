// What every libFuzzer target of capsim's readers shares: the bytes written where a path-only
// reader can open them, and the rule that an input is either read or rejected with an InputError.
// Any other exception, a non-finite result or a crash is a finding (docs/performance.md,
// "Fuzzing").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace capsim::fuzz {

// Returns the repository root the targets were built from (for shipped inputs they reference).
[[nodiscard]] std::string source_dir();

// Writes `bytes` to `name` in this process's scratch folder (created on first use, removed at
// exit) and returns the file's path.
[[nodiscard]] std::string write_scratch(const std::string& name, std::string_view bytes);

// Returns the scratch folder's path, e.g. to link shipped files beside a scratch input.
[[nodiscard]] std::string scratch_dir();

// Runs `body` on one input: returning or throwing InputError (the reader's rejection) is
// expected; any other exception prints its type and message and aborts, so libFuzzer keeps the
// input as a crash.
void run_one(const std::function<void()>& body);

// Aborts with `what` unless `ok`: an invariant of a read input's results does not hold.
void require(bool ok, const std::string& what);

// Aborts unless every number in `j` is finite (results written for an accepted input).
void require_finite(const nlohmann::json& j, const std::string& what);

// Returns the input as text.
[[nodiscard]] inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace capsim::fuzz

// The libFuzzer entry point each target defines.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
