#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace capsim::sim {

// Builds the bytes a forked child hands back (ChildReport::bytes): numbers as their exact bit
// patterns (a double arrives bit for bit, unlike through decimal text), strings with their
// length. Parent and child are the same binary, so native byte order is the format.
class ReportWriter {
 public:
  void put_double(double value);
  void put_int(std::int64_t value);
  void put_string(std::string_view text);

  // Returns the bytes written so far.
  [[nodiscard]] const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

// Reads what a ReportWriter wrote, in the same order. Every read throws std::runtime_error
// when the bytes end early (a child that wrote less than its parent expects).
class ReportReader {
 public:
  explicit ReportReader(std::string_view bytes) : bytes_(bytes) {}

  [[nodiscard]] double get_double();
  [[nodiscard]] std::int64_t get_int();
  [[nodiscard]] std::string get_string();

  // Throws std::runtime_error unless every byte was read.
  void finish() const;

 private:
  void take(void* into, std::size_t size);

  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace capsim::sim
