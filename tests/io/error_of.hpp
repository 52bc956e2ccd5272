// The message of the InputError `f` throws, or "no error": lets a test compare a rejection's
// text with one EXPECT.
#pragma once

#include <functional>
#include <string>

#include "io/input_error.hpp"

namespace capsim::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const io::InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace capsim::testing
