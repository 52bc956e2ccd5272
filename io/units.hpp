#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace capsim::io::units {

// Parsers from human strings to SI base units. Each returns nullopt when the text is not a
// well-formed quantity of its kind; callers turn that into an InputError naming the field.
// SI prefixes are decimal (k=1e3, M=1e6, G=1e9, T=1e12, P=1e15); binary prefixes (Ki, Mi, Gi,
// Ti) are 1024-based. Bandwidth: "b"/"bit" means bits, "B" means bytes ("200Gbps", "25GBps",
// "1.6Tb/s", "12.5GiB/s").

// Largest quantities an input may give (docs/scenario.md, "Units"): far beyond any real run, and
// small enough that sums, products and conversions to days or microseconds stay finite and fit
// 64-bit integers.
inline constexpr double kMaxDurationS = 1e12;  // about 31,700 years
inline constexpr double kMaxCount = 1e18;      // 10,000 times the largest published run's tokens
inline constexpr double kMaxSizeBytes = 1e18;  // an exabyte

[[nodiscard]] std::optional<double> parse_bandwidth_bytes_per_s(std::string_view text);
// Durations: "1.5us", "20ms", "3s", "90min", "2h", "30d", "1w".
[[nodiscard]] std::optional<double> parse_duration_s(std::string_view text);
// Sizes: "25MB", "64MiB", "1.5GiB", "512B".
[[nodiscard]] std::optional<double> parse_size_bytes(std::string_view text);
// Counts with an optional decimal suffix: "1T", "300B" (billion), "50M", "2k", "1e12".
[[nodiscard]] std::optional<double> parse_count(std::string_view text);
// Compute rates: "312TFLOPS", "2.25PFLOPS", "989 TFLOP/s" (decimal prefixes k..P only).
[[nodiscard]] std::optional<double> parse_flop_per_s(std::string_view text);
// Hourly prices: "$32.77/h", "$0.5/hr", "32.77 USD/h".
[[nodiscard]] std::optional<double> parse_price_usd_per_hour(std::string_view text);

// Returns `text` without its leading and trailing whitespace.
[[nodiscard]] std::string_view trim(std::string_view text);

// Formats seconds compactly for tables ("812 ms", "3.21 s", "4.2 d").
[[nodiscard]] std::string format_duration(double seconds);

}  // namespace capsim::io::units
