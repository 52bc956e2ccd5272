#pragma once

#include <stdexcept>
#include <string>

namespace capsim {

// Bad user input: names the file and the JSON pointer of the offending value.
// what() reads "file:/json/pointer: message". Thread-compatible value type.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string pointer, std::string message);

  [[nodiscard]] const std::string& file() const { return file_; }
  [[nodiscard]] const std::string& pointer() const { return pointer_; }
  [[nodiscard]] const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::string pointer_;
  std::string message_;
};

}  // namespace capsim
