#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace capsim::io {

// Parses a Go time.Duration string as Kubernetes controllers and cluster-autoscaler flags write
// it ("90s", "10m", "1h30m", "1.5h", "300ms"; units ns, us, µs, ms, s, m, h; Go's
// time.ParseDuration). Returns seconds, or nullopt for anything else (a bare number other than
// "0", a negative duration, an unknown unit, more than Go's int64 nanoseconds hold).
[[nodiscard]] std::optional<double> parse_go_duration(std::string_view text);

// Writes seconds as the shortest Go duration that reads back exactly: "720h", "10m", "1m30s",
// "0s", "1.5s". REQUIRES: seconds >= 0 and finite.
[[nodiscard]] std::string format_go_duration(double seconds);

}  // namespace capsim::io
