#pragma once

// printf-style formatting into a std::string: one checked place instead of a fixed char array
// per call site.

#include <string>

namespace capsim::io {

// Returns `format` filled in as std::snprintf would, at any length (no truncation). The
// compiler checks the arguments against a literal format (-Wformat), so callers pass the
// format here directly rather than through a helper's parameter.
[[nodiscard]] [[gnu::format(printf, 1, 2)]] std::string printf_string(const char* format, ...);

}  // namespace capsim::io
