#include "io/text_format.hpp"

#include <cstdarg>
#include <cstdio>

namespace capsim::io {

std::string printf_string(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::va_list again;
  va_copy(again, args);
  const int length = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out;
  if (length > 0) {
    // vsnprintf writes the terminating NUL too: into the string's own terminator slot.
    out.resize(static_cast<size_t>(length));
    std::vsnprintf(out.data(), out.size() + 1, format, again);
  }
  va_end(again);
  return out;
}

}  // namespace capsim::io
