#include "models/io/input_error.hpp"

#include <utility>

namespace capsim {
namespace {

std::string compose(const std::string& file, const std::string& pointer,
                    const std::string& message) {
  std::string where = file;
  if (!pointer.empty())
    where += ":" + pointer;
  return where.empty() ? message : where + ": " + message;
}

}  // namespace

InputError::InputError(std::string file, std::string pointer, std::string message)
    : std::runtime_error(compose(file, pointer, message)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(std::move(message)) {}

}  // namespace capsim
