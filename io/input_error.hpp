#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace capsim::io {

// One problem of an input: the file, the JSON pointer (or "line N") and what is wrong.
struct InputProblem {
  std::string file;
  std::string pointer;
  std::string message;
};

// Returns "file:/json/pointer: message" (the parts that are empty left out).
[[nodiscard]] std::string describe_problem(const InputProblem& problem);

// Bad user input: names the file and the JSON pointer of the offending value, for one problem or
// for several found in one pass (every unknown and missing key of a file). what() reads
// "file:/json/pointer: message", one line per problem. Thread-compatible value type.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string pointer, std::string message);
  // REQUIRES: !problems.empty()
  explicit InputError(std::vector<InputProblem> problems);

  // The first problem's parts.
  [[nodiscard]] const std::string& file() const { return problems_.front().file; }
  [[nodiscard]] const std::string& pointer() const { return problems_.front().pointer; }
  [[nodiscard]] const std::string& message() const { return problems_.front().message; }
  [[nodiscard]] const std::vector<InputProblem>& problems() const { return problems_; }

 private:
  std::vector<InputProblem> problems_;
};

}  // namespace capsim::io
