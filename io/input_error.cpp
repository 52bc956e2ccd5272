#include "io/input_error.hpp"

#include <utility>

namespace capsim::io {
namespace {

std::string describe_all(const std::vector<InputProblem>& problems) {
  std::string out;
  for (const InputProblem& p : problems)
    out += (out.empty() ? "" : "\n") + describe_problem(p);
  return out;
}

}  // namespace

std::string describe_problem(const InputProblem& problem) {
  std::string where = problem.file;
  if (!problem.pointer.empty())
    where += ":" + problem.pointer;
  return where.empty() ? problem.message : where + ": " + problem.message;
}

InputError::InputError(std::string file, std::string pointer, std::string message)
    : InputError(
          std::vector<InputProblem>{{std::move(file), std::move(pointer), std::move(message)}}) {}

InputError::InputError(std::vector<InputProblem> problems)
    : std::runtime_error(describe_all(problems)), problems_(std::move(problems)) {
  if (problems_.empty())
    problems_.push_back({"", "", "bad input"});
}

}  // namespace capsim::io
